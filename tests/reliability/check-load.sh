#!/bin/sh
# check as the deploy gate, never a false FAIL: a good host checked N times as root and N times
# as the service (SLOTS_CHECK_LOAD_RUNS, default 100), beside two busy processes per CPU and a
# loop of fsync'd writes, all started here and ended by their pids.  Counts the runs that exit
# non-zero or print a FAIL row; the test passes only when that count is 0.  Not in the default
# make check (100 runs take about an hour on 2 CPUs): sudo make check
# TESTS=tests/reliability/check-load.sh (docs/testing.md).
. "$top_srcdir/tests/integration/lib.sh"
slots_need_root
slots_enter_namespace "$@"
. "$top_srcdir/tests/integration/check-lib.sh"

RUNS=${SLOTS_CHECK_LOAD_RUNS:-100}
check_fixture
chmod 0755 "$OUT"

LOAD=
stop_load() {
	[ -n "$LOAD" ] && kill $LOAD 2>/dev/null
	for p in $LOAD; do wait "$p" 2>/dev/null; done
	LOAD=
}
trap stop_load EXIT
n=0
while [ $n -lt $((2 * $(nproc))) ]; do
	sh -c 'while :; do :; done' &
	LOAD="$LOAD $!"
	n=$((n + 1))
done
sh -c 'while :; do dd if=/dev/zero of="$1" bs=64k count=16 conv=fsync 2>/dev/null; done' - "$OUT/fsync.dat" &
LOAD="$LOAD $!"
echo "# $n busy loops on $(nproc) CPUs and a loop of fsync'd writes:$LOAD; $RUNS runs each as root and as the service"

for who in root svc; do
	bad=0
	i=1
	while [ $i -le "$RUNS" ]; do
		if [ $who = root ]; then run_check "$who$i"; else run_svc "$who$i"; fi
		if [ "$(rc_of "$who$i")" != 0 ] || grep -q '^FAIL ' "$OUT/$who$i.out"; then
			bad=$((bad + 1))
			echo "# $who run $i: exit $(rc_of "$who$i"), load $(cut -d' ' -f1 /proc/loadavg)"
			grep '^FAIL ' "$OUT/$who$i.out" | sed 's/^/#   /'
		fi
		rm -f "$OUT/$who$i.out" "$OUT/$who$i.err"
		i=$((i + 1))
	done
	check "as $who, beside the load: 0 of $RUNS runs FAIL (failed: $bad)" test "$bad" = 0
done
LOOPS=$LOAD
stop_load
check "the load is gone (by its pids)" sh -c 'for p; do ! kill -0 "$p" 2>/dev/null || exit 1; done' - $LOOPS
slots_done
