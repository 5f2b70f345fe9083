#!/bin/sh
# Issue 7.1: slots-admin assign and release killed with SIGKILL at every file-changing call
# they make (tests/fault/faultshim.so counts the calls of a complete run, then each run is
# killed at one of them).  After each kill: the table is exactly the old or exactly the new
# content (byte comparison with candidates computed by table-oracle.py, not by slots-admin),
# with its owner, group, mode and ACL; every other file is its old or its new self; the next
# command is not blocked (status answers, the same command again finishes, a release left
# pending is finished by "release --slot"); the temp a kill left is gone after that; and the
# whole world then equals the one a run without a kill leaves.
. "$top_srcdir/tests/integration/lib.sh"
. "$top_srcdir/tests/reliability/rel-lib.sh"
slots_need_root
rel_need_shim
slots_enter_namespace "$@"

W=$SLOTS_WORLD/w
P=$SLOTS_WORLD/p
mkdir -p "$W" "$P"
rel_snap_serve "$P" || slots_ns_fail "cannot start snap.py"
POOL=4
rel_admin_world "$W" $POOL
NOW_TEXT=$(date -u -d "@$FAULT_NOW" +%Y-%m-%dT%H:%M:%SZ)
ORACLE="$REL_PY $top_srcdir/tests/reliability/table-oracle.py"
TABLE=$W/s/etc/slots.json
REL_TABLE=etc/slots.json

total_points=0
total_temps=0

# Puts the world back to the scenario's starting state.
restore() {
	rm -rf "$W/s"
	cp -a "$P/s" "$W/s"
}

# scenario NAME "ARGS" ORACLE-NEW [PENDING-FILE SLOT]: the table's candidates are $P/old (or
# none) and ORACLE-NEW; a release also has PENDING-FILE ("cleanup": "pending", which
# "release --slot SLOT" finishes).
scenario() {
	name=$1
	args=$2
	new=$3
	pending=${4:-}
	pslot=${5:-}
	rm -rf "$P/s"
	cp -a "$W/s" "$P/s"
	$SNAP save "$W/s" "$P/before.snap"

	# The reference: a complete run through the shim, counting its calls.
	rm -f "$P/ref.log"
	# shellcheck disable=SC2086
	FAULT_LOG=$P/ref.log shim_admin_in "$W" $args >"$P/out" 2>"$P/err"
	st=$?
	check "$name: the complete run succeeds" [ "$st" = 0 ]
	[ "$st" = 0 ] || { cat "$P/err"; return; }
	check "$name: the new table is what the operation implies" cmp -s "$TABLE" "$new"
	$SNAP save "$W/s" "$P/after.snap"
	rel_snap "$W/s" "$P/after.qsnap"
	k=$(wc -l <"$P/ref.log")
	echo "# $name: $k kill points: $(cut -d' ' -f2 "$P/ref.log" | sort | uniq -c | tr -s ' \n' ' ')"

	bad=0
	temps=0
	also=
	[ -n "$pending" ] && also="--also $REL_TABLE=$pending"
	for n in $(rel_points "$k"); do
		restore
		# shellcheck disable=SC2086
		FAULT_AT=$n FAULT_ACTION=kill timeout 60 env LD_PRELOAD="$SHIM $NSSW" \
			NSS_WRAPPER_PASSWD="$W/passwd" NSS_WRAPPER_GROUP="$W/group" FAULT_PROG=slots-admin \
			"$SLOTS_ADMIN" --config "$W/slots.conf" $args >/dev/null 2>"$P/err"
		st=$?
		what="$name, killed at call $n ($(sed -n "${n}p" "$P/ref.log" | cut -d' ' -f2-))"
		if [ "$st" != 137 ]; then
			not_ok "$what: exit $st, not killed"
			bad=$((bad + 1))
			continue
		fi
		# status answers (read-only, so it may run before the state is looked at).
		if ! timeout 20 env LD_PRELOAD="$SHIM $NSSW" NSS_WRAPPER_PASSWD="$W/passwd" NSS_WRAPPER_GROUP="$W/group" \
			"$SLOTS_ADMIN" --config "$W/slots.conf" status --json >"$P/status" 2>"$P/err"; then
			not_ok "$what: status after the kill fails: $(head -c 300 "$P/err")"
			bad=$((bad + 1))
			continue
		fi
		# shellcheck disable=SC2086
		if ! $SNAP between "$W/s" "$P/before.snap" "$P/after.snap" --atomic "$REL_TABLE" $also \
			--json "$P/status" >"$P/between"; then
			not_ok "$what: a file is torn, mis-owned or lost"
			sed 's/^/#   /' "$P/between" | head -n 10
			bad=$((bad + 1))
			continue
		fi
		t=$(sed -n 's/^temps //p' "$P/between")
		temps=$((temps + t))
		# The next command: finish a pending release, else the same command again.
		if [ -n "$pending" ] && cmp -s "$TABLE" "$pending"; then
			next="release --slot $pslot"
		else
			next=$args
		fi
		# shellcheck disable=SC2086
		if ! timeout 20 env LD_PRELOAD="$SHIM $NSSW" NSS_WRAPPER_PASSWD="$W/passwd" \
			NSS_WRAPPER_GROUP="$W/group" FAULT_PROG=slots-admin \
			"$SLOTS_ADMIN" --config "$W/slots.conf" $next >/dev/null 2>"$P/err"; then
			not_ok "$what: the next command ($next) fails: $(head -c 300 "$P/err")"
			bad=$((bad + 1))
			continue
		fi
		if [ -n "$(rel_temps "$W/s/etc")" ]; then
			not_ok "$what: a temp is still there after the next command: $(rel_temps "$W/s/etc")"
			bad=$((bad + 1))
			continue
		fi
		rel_snap "$W/s" "$P/now.qsnap"
		if ! cmp -s "$P/now.qsnap" "$P/after.qsnap"; then
			not_ok "$what: after '$next' the world differs from a run without a kill"
			diff "$P/after.qsnap" "$P/now.qsnap" | sed 's/^/#   /' | head -n 10
			bad=$((bad + 1))
			continue
		fi
	done
	points=$(rel_points "$k" | wc -l)
	total_points=$((total_points + points))
	total_temps=$((total_temps + temps))
	check "$name: $points kill points, each left the old or the new table and was finished by the next command ($temps left a temp, each removed by it)" [ "$bad" = 0 ]
	restore
}

rel_table_t0 "$P/t0"
put_table() {
	cp "$1" "$TABLE"
	chown "$2" "$TABLE"
	chmod "$3" "$TABLE"
}
rel_slot_leftovers "$W" slot02
rel_slot_leftovers "$W" slot03

# 1. assign to the lowest free slot (slot04: 01 and 02 are held, 03 pending).
put_table "$P/t0" "0:$SVC_UID" 0640
$ORACLE assign "$P/t0" slot04 carol "$NOW_TEXT" "$P/new1"
scenario "assign to the lowest free slot" "assign carol" "$P/new1"

# 2. assign a given slot to a table with another owner, mode and a POSIX ACL (all kept).
put_table "$P/t0" "0:$((SLOT_UID_BASE + 1))" 0600
# The namespace's /tmp is a tmpfs with POSIX ACLs: a failing setfacl fails, never switches the case off.
check "the table gets an ACL entry for the service" setfacl -m "u:$SVC_UID:r" "$TABLE"
check "the ACL entry is there" sh -c 'getfacl -cn "$1" | grep -q "^user:$2:r--"' _ "$TABLE" "$SVC_UID"
$ORACLE assign "$P/t0" slot04 dave "$NOW_TEXT" "$P/new2"
scenario "assign a given slot (table 0:$((SLOT_UID_BASE + 1)) 0600 + ACL)" "assign dave slot04" "$P/new2"
setfacl -b "$TABLE" 2>/dev/null

# 3. assign when the table does not exist yet: it appears whole, root:svc 0640, or not at all.
rm -f "$TABLE"
$ORACLE assign - slot01 erin "$NOW_TEXT" "$P/new3"
scenario "assign creates the table" "assign erin" "$P/new3"

# 4. release a user: the table goes old -> pending -> free; the slot's leftovers are cleaned.
put_table "$P/t0" "0:$SVC_UID" 0640
$ORACLE pending "$P/t0" slot02 "$NOW_TEXT" "$P/pend4"
$ORACLE remove "$P/t0" slot02 "$P/new4"
scenario "release a user" "release bob" "$P/new4" "$P/pend4" slot02

# 5. release --slot of a slot left pending.
put_table "$P/t0" "0:$SVC_UID" 0640
$ORACLE remove "$P/t0" slot03 "$P/new5"
scenario "release --slot finishes a pending slot" "release --slot slot03" "$P/new5"

# 6. release --slot of an assigned slot.
put_table "$P/t0" "0:$SVC_UID" 0640
$ORACLE pending "$P/t0" slot01 "$NOW_TEXT" "$P/pend6"
$ORACLE remove "$P/t0" slot01 "$P/new6"
scenario "release --slot of an assigned slot" "release --slot slot01" "$P/new6" "$P/pend6" slot01

echo "# crash-admin: $total_points kill points in all, $total_temps left a temp; nothing lost"
slots_done
