#!/bin/sh
# Issue 7.2: ENOSPC, EIO, EPERM and EDQUOT injected at each file-changing call of slots-admin
# assign and release, and of slots-provision --root (tests/fault/faultshim.so makes the Nth
# call fail).  Each run must exit 1 with a message "<command>: <what failed>: <file>: ...
# <reason>" (strerror's words), and leave no temp behind.  A fault up to and including the
# first call that changes something visible (the commit: mostly the first rename) must leave
# every file byte-identical, owner and mode too.
# A fault after a commit (the directory fsync after the rename, the steps of a release after
# the user left the table, the folders after the account files) leaves every file its old or
# new self, and the next command finishes the job: the world then equals an undisturbed run.
# Short form: all four errnos at every call of slots-admin; for slots-provision one errno per
# call in turn (SLOTS_RELIABILITY_FULL=1: all four at every call).
. "$top_srcdir/tests/integration/lib.sh"
. "$top_srcdir/tests/reliability/rel-lib.sh"
slots_need_root
rel_need_shim
slots_enter_namespace "$@"

ERRNOS="ENOSPC EIO EPERM EDQUOT"
W=$SLOTS_WORLD/w
P=$SLOTS_WORLD/p
mkdir -p "$W" "$P"
rel_snap_serve "$P" || slots_ns_fail "cannot start snap.py"
POOL=4
rel_admin_world "$W" $POOL
TABLE=$W/s/etc/slots.json
NOW_TEXT=$(date -u -d "@$FAULT_NOW" +%Y-%m-%dT%H:%M:%SZ)
ORACLE="$REL_PY $top_srcdir/tests/reliability/table-oracle.py"
total_faults=0
total_after_commit=0

# fault_loop NAME ROOT RUN-FN NEXT-FN ERRNO-CHOOSER SNAP-ARGS...: the reference run of RUN-FN
# (counted), then every point with the errnos ERRNO-CHOOSER N prints.  ROOT is the folder
# compared; $P/R is its starting copy.  NEXT-FN finishes the job after a fault past the commit.
fault_loop() {
	name=$1
	root=$2
	run=$3
	next=$4
	chooser=$5
	shift 5
	rm -rf "$P/R"
	cp -a "$root" "$P/R"
	$SNAP save "$root" "$P/before.snap"
	rel_snap "$root" "$P/before.qsnap"
	rm -f "$P/ref.log"
	FAULT_LOG=$P/ref.log $run >"$P/out" 2>"$P/err"
	st=$?
	check "$name: the undisturbed run succeeds" [ "$st" = 0 ]
	[ "$st" = 0 ] || { head -n 20 "$P/err"; return; }
	$SNAP save "$root" "$P/after.snap"
	rel_snap "$root" "$P/after.qsnap"
	k=$(wc -l <"$P/ref.log")
	# The commit: the first call that changes something visible, i.e. not an fsync and not a
	# call on a temp (".name.XXXXXXXXXXXX") or an anonymous memfd.  Up to it, a fault must
	# leave everything as it was.
	commit=$(grep -n -v -E '^[0-9]+ f(data)?sync |(/| )\.[^/ ]+\.[0-9a-f]{12}$| /memfd:' "$P/ref.log" |
		head -n 1 | cut -d: -f1)
	[ -n "$commit" ] || commit=$k
	# A failed rename changes nothing; a failed unlink in a cleanup that tries every step
	# does not stop the others: then only the calls before it are "before the commit".
	last_unchanged=$commit
	sed -n "${commit}p" "$P/ref.log" | grep -q -E '^[0-9]+ rename' || last_unchanged=$((commit - 1))
	bad=0
	faults=0
	after=0
	# Each point with its call as the reference made it ("N call target", the root left out).
	rel_points "$k" | awk -v root="$root" 'NR == FNR { p[$1] = 1; next }
		p[FNR] { l = $0; sub(/^[^ ]+ /, "", l); i = index(l, root)
			if (i) l = substr(l, 1, i - 1) substr(l, i + length(root))
			print FNR, l }' - "$P/ref.log" >"$P/points"
	while read -r n call; do
		for e in $($chooser "$n"); do
			rm -rf "$root"
			cp -a "$P/R" "$root"
			FAULT_AT=$n FAULT_ACTION=$e $run >/dev/null 2>"$P/err" </dev/null
			st=$?
			faults=$((faults + 1))
			what="$name, $e at call $n ($call)"
			reason=$(rel_strerror "$e")
			# The table's index comes after the table's commit and only spares readers a
			# parse (slots.json(5)): a fault there fails nothing, leaves no temp, and the
			# world is the undisturbed run's (rel_snap leaves the index out).
			case $call in
			*slots.json.index*)
				temps=$(find "$root" -regextype posix-extended -regex '.*/\.[^/]+\.[0-9a-f]{12}' | head -n 3)
				rel_snap "$root" "$P/now.qsnap"
				if [ "$st" != 0 ] || [ -n "$temps" ] || ! cmp -s "$P/now.qsnap" "$P/after.qsnap"; then
					not_ok "$what: a fault in the index write: exit $st, want 0; temps: ${temps:-none}"
					bad=$((bad + 1))
				fi
				continue
				;;
			esac
			if [ "$st" != 1 ]; then
				not_ok "$what: exit $st, want 1: $(head -c 300 "$P/err")"
				bad=$((bad + 1))
				continue
			fi
			# "<command>: <what failed>: <file or object>[: ...]: <reason>"
			if ! grep -q -E "^slots-(admin|provision): [^:]+: [^:]+: .*$reason" "$P/err"; then
				not_ok "$what: the message does not name the file and the reason: $(head -c 300 "$P/err")"
				bad=$((bad + 1))
				continue
			fi
			temps=$(find "$root" -regextype posix-extended -regex '.*/\.[^/]+\.[0-9a-f]{12}' | head -n 3)
			if [ -n "$temps" ]; then
				not_ok "$what: temps left: $temps"
				bad=$((bad + 1))
				continue
			fi
			rel_snap "$root" "$P/now.qsnap"
			if [ "$n" -le "$last_unchanged" ]; then
				if ! cmp -s "$P/now.qsnap" "$P/before.qsnap"; then
					not_ok "$what: before the commit, yet something changed"
					diff "$P/before.qsnap" "$P/now.qsnap" | sed "s|$root||; s/^/#   /" | head -n 10
					bad=$((bad + 1))
				fi
				continue
			fi
			after=$((after + 1))
			# shellcheck disable=SC2068
			if ! $SNAP between "$root" "$P/before.snap" "$P/after.snap" $@ >"$P/between"; then
				not_ok "$what: a file is torn, mis-owned or lost"
				sed 's/^/#   /' "$P/between" | head -n 10
				bad=$((bad + 1))
				continue
			fi
			if ! $next >/dev/null 2>"$P/err" </dev/null; then
				not_ok "$what: the next command fails: $(head -c 300 "$P/err")"
				bad=$((bad + 1))
				continue
			fi
			rel_snap "$root" "$P/now.qsnap"
			if ! cmp -s "$P/now.qsnap" "$P/after.qsnap"; then
				not_ok "$what: after the next command the world differs from an undisturbed run"
				diff "$P/after.qsnap" "$P/now.qsnap" | sed "s|$root||; s/^/#   /" | head -n 10
				bad=$((bad + 1))
			fi
		done
	done <"$P/points"
	total_faults=$((total_faults + faults))
	total_after_commit=$((total_after_commit + after))
	check "$name: $faults faults at $k calls (commit at call $commit): exit 1, file and reason named, no temp, nothing changed before the commit, finished by the next command after it" [ "$bad" = 0 ]
	rm -rf "$root"
	cp -a "$P/R" "$root"
}

all_errnos() {
	echo "$ERRNOS"
}

# Short form for long runs: one errno per call, in turn.
one_errno() {
	if [ "$FULL" = 1 ]; then
		echo "$ERRNOS"
		return
	fi
	set -- $ERRNOS
	shift $(($1 % 4))
	echo "$1"
}

# ---- slots-admin ----
A_ARGS=
admin_run() {
	# shellcheck disable=SC2086
	shim_admin_in "$W" $A_ARGS
}
# After a fault past the commit: a release left pending is finished by release --slot, else
# the same command again.
A_PENDING=
A_SLOT=
admin_next() {
	if [ -n "$A_PENDING" ] && cmp -s "$TABLE" "$A_PENDING"; then
		shim_admin_in "$W" release --slot "$A_SLOT"
	else
		# shellcheck disable=SC2086
		shim_admin_in "$W" $A_ARGS
	fi
}
put_table() {
	cp "$1" "$TABLE"
	chown "$2" "$TABLE"
	chmod "$3" "$TABLE"
}
admin_case() {
	A_ARGS=$2
	A_PENDING=${3:-}
	A_SLOT=${4:-}
	also=
	[ -n "$A_PENDING" ] && also="--also etc/slots.json=$A_PENDING"
	# shellcheck disable=SC2086
	fault_loop "$1" "$W/s" admin_run admin_next all_errnos --atomic etc/slots.json $also
}

rel_table_t0 "$P/t0"
rel_slot_leftovers "$W" slot02
rel_slot_leftovers "$W" slot03
put_table "$P/t0" "0:$SVC_UID" 0640
admin_case "assign to the lowest free slot" "assign carol"
put_table "$P/t0" "0:$((SLOT_UID_BASE + 1))" 0600
# The namespace's /tmp is a tmpfs with POSIX ACLs: a failing setfacl fails, never switches the case off.
check "the table gets an ACL entry for the service" setfacl -m "u:$SVC_UID:r" "$TABLE"
check "the ACL entry is there" sh -c 'getfacl -cn "$1" | grep -q "^user:$2:r--"' _ "$TABLE" "$SVC_UID"
admin_case "assign a given slot (table 0:$((SLOT_UID_BASE + 1)) 0600 + ACL)" "assign dave slot04"
setfacl -b "$TABLE" 2>/dev/null
rm -f "$TABLE"
admin_case "assign creates the table" "assign erin"
put_table "$P/t0" "0:$SVC_UID" 0640
$ORACLE pending "$P/t0" slot02 "$NOW_TEXT" "$P/pend-bob"
admin_case "release a user" "release bob" "$P/pend-bob" slot02
admin_case "release --slot finishes a pending slot" "release --slot slot03"

# ---- slots-provision ----
if rel_have_provision; then
	R=$SLOTS_SCRATCH/root
	rel_example_image "$R"
	PPOOL=3
	[ "$FULL" = 1 ] && PPOOL=8
	rel_example_conf $PPOOL "$P/prov.conf"
	prov_run() {
		timeout 120 env LD_PRELOAD="$SHIM" FAULT_PROG=slots-provision "$SLOTS_PROVISION" --root "$R" \
			--config "$P/prov.conf"
	}
	atomic=
	for f in passwd group shadow gshadow passwd- group- shadow- gshadow- slots/slots.json slots/slotctl.json \
		sudoers.d/slots-video-studio; do
		atomic="$atomic --atomic etc/$f"
	done
	# shellcheck disable=SC2086
	fault_loop "provision a fresh image (pool $PPOOL)" "$R" prov_run prov_run one_errno $atomic
else
	echo "# $SLOTS_PROVISION is not built (yet): its faults are not run"
fi

echo "# faults: $total_faults injected, $total_after_commit of them after a commit; nothing lost"
slots_done
