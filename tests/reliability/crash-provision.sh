#!/bin/sh
# Issue 7.1 for slots-provision: killed with SIGKILL at every file-changing call of a run on
# an image tree (--root), the example host of tests/provision/golden.  After each kill: every
# account file (passwd, group, shadow, gshadow and their "-" backups), the table, the slotctl
# config and the sudoers drop-in are exactly their old or exactly their new self, owner,
# group, mode and ACL included; no other file is torn or lost; the next run is not blocked
# by the lock or a temp the kill left, finishes the job (the tree then equals the one a run
# without a kill makes, with no temp left) and a run after it prints "0 changes".
# Short form: a pool of 3 and about 80 kill points per scenario; SLOTS_RELIABILITY_FULL=1:
# the example's pool of 8 and every kill point.
. "$top_srcdir/tests/integration/lib.sh"
. "$top_srcdir/tests/reliability/rel-lib.sh"
slots_need_root
rel_need_shim
if ! rel_have_provision; then
	echo "Bail out! $SLOTS_PROVISION is not built (make builds it)"
	exit 99
fi
slots_enter_namespace "$@"

R=$SLOTS_SCRATCH/root
P=$SLOTS_WORLD/p
mkdir -p "$R" "$P"
rel_snap_serve "$P" || slots_ns_fail "cannot start snap.py"
umask 022
POOL=3
[ "$FULL" = 1 ] && POOL=8
ATOMIC=
for f in passwd group shadow gshadow passwd- group- shadow- gshadow- slots/slots.json slots/slotctl.json \
	sudoers.d/slots-video-studio; do
	ATOMIC="$ATOMIC --atomic etc/$f"
done
# The table's owner and mode are repaired through the atomic replace (same bytes, owner and
# mode forced), so the table too is exactly its old or its new self after every kill.

# The image as the golden test makes it (SOURCE_DATE_EPOCH fixed, SLOTS_CONFIG unset).
populate() {
	rel_example_image "$R"
}

# The example config with a pool of $1.
conf_for() {
	rel_example_conf "$1" "$P/slots-$1.conf"
}

prov() {
	conf=$1
	shift
	env LD_PRELOAD="$SHIM" FAULT_PROG=slots-provision "$SLOTS_PROVISION" --root "$R" --config "$conf" "$@"
}

total_points=0
total_temps=0

restore() {
	rm -rf "$R"
	cp -a "$P/R" "$R"
}

# scenario NAME CONF: kills a run of slots-provision with CONF on the current tree at each point.
scenario() {
	name=$1
	conf=$2
	rm -rf "$P/R"
	cp -a "$R" "$P/R"
	$SNAP save "$R" "$P/before.snap"
	rm -f "$P/ref.log"
	FAULT_LOG=$P/ref.log prov "$conf" >"$P/out" 2>"$P/err"
	st=$?
	check "$name: the complete run succeeds" [ "$st" = 0 ]
	[ "$st" = 0 ] || { head -n 20 "$P/err"; return; }
	$SNAP save "$R" "$P/after.snap"
	rel_snap "$R" "$P/after.qsnap"
	k=$(wc -l <"$P/ref.log")
	echo "# $name: $(tail -n 1 "$P/out"); $k kill points: $(cut -d' ' -f2 "$P/ref.log" | sort | uniq -c | tr -s ' \n' ' ')"
	bad=0
	temps=0
	for n in $(rel_points "$k"); do
		restore
		FAULT_AT=$n FAULT_ACTION=kill timeout 120 env LD_PRELOAD="$SHIM" FAULT_PROG=slots-provision \
			"$SLOTS_PROVISION" --root "$R" --config "$conf" >/dev/null 2>"$P/err"
		st=$?
		what="$name, killed at call $n ($(sed -n "${n}p" "$P/ref.log" | cut -d' ' -f2- | sed "s|$R||"))"
		if [ "$st" != 137 ]; then
			not_ok "$what: exit $st, not killed"
			bad=$((bad + 1))
			continue
		fi
		# shellcheck disable=SC2086
		if ! $SNAP between "$R" "$P/before.snap" "$P/after.snap" $ATOMIC >"$P/between"; then
			not_ok "$what: a file is torn, mis-owned or lost"
			sed 's/^/#   /' "$P/between" | head -n 10
			bad=$((bad + 1))
			continue
		fi
		t=$(sed -n 's/^temps //p' "$P/between")
		temps=$((temps + t))
		if ! timeout 120 env LD_PRELOAD="$SHIM" FAULT_PROG=slots-provision \
			"$SLOTS_PROVISION" --root "$R" --config "$conf" >/dev/null 2>"$P/err"; then
			not_ok "$what: the next run fails: $(head -c 300 "$P/err")"
			bad=$((bad + 1))
			continue
		fi
		rel_snap "$R" "$P/now.qsnap"
		if ! cmp -s "$P/now.qsnap" "$P/after.qsnap"; then
			not_ok "$what: after the next run the tree differs from a run without a kill"
			diff "$P/after.qsnap" "$P/now.qsnap" | sed "s|$R||; s/^/#   /" | head -n 10
			bad=$((bad + 1))
			continue
		fi
		prov "$conf" >"$P/third" 2>&1
		if [ $? != 0 ] || [ "$(tail -n 1 "$P/third")" != "0 changes" ]; then
			not_ok "$what: a third run still changes something"
			bad=$((bad + 1))
			continue
		fi
	done
	points=$(rel_points "$k" | wc -l)
	total_points=$((total_points + points))
	total_temps=$((total_temps + temps))
	check "$name: $points of $k kill points, each left every file old or new and the next run finished the job ($temps temps left by the kills)" [ "$bad" = 0 ]
	restore
}

populate
conf_for $POOL
scenario "provision a fresh image (pool $POOL)" "$P/slots-$POOL.conf"

# A grown pool on a provisioned image whose table lost its owner and mode.
conf_for $((POOL - 1))
prov "$P/slots-$((POOL - 1)).conf" >/dev/null 2>&1
chown 0:0 "$R/etc/slots/slots.json"
chmod 0604 "$R/etc/slots/slots.json"
scenario "grow the pool to $POOL and repair the table" "$P/slots-$POOL.conf"

echo "# crash-provision: $total_points kill points in all, $total_temps left a temp; nothing lost"
slots_done
