#!/bin/sh
# check as the deploy gate on a busy host: a good host with 4 busy processes per CPU beside it
# (plain busy loops, started here and ended by pid) passes 5 runs of 5 as root and 5 of 5 as the
# service, the kill row of the test slot included: the kill ends the running command, not sudo's
# start, and each stage waits on events with a deadline a busy host meets.
. "$top_srcdir/tests/integration/lib.sh"
slots_need_root
slots_enter_namespace "$@"
. "$top_srcdir/tests/integration/check-lib.sh"

check_fixture
chmod 0755 "$OUT"

BUSY=
stop_busy() {
	[ -n "$BUSY" ] && kill $BUSY 2>/dev/null
	BUSY=
}
trap stop_busy EXIT
n=0
while [ $n -lt $((4 * $(nproc))) ]; do
	sh -c 'while :; do :; done' &
	BUSY="$BUSY $!"
	n=$((n + 1))
done
echo "# $n busy loops on $(nproc) CPUs:$BUSY"

for who in root svc; do
	bad=
	for i in 1 2 3 4 5; do
		t0=$(date +%s.%N)
		if [ $who = root ]; then run_check "$who$i"; else run_svc "$who$i"; fi
		echo "# $who run $i: exit $(rc_of "$who$i") in $(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }') s, load $(cut -d' ' -f1 /proc/loadavg)"
		kills=$(grep -c '^PASS  *sudo-kill ' "$OUT/$who$i.out")
		if [ "$(rc_of "$who$i")" != 0 ] || [ "$kills" != 1 ]; then
			bad="$bad $i"
			grep '^FAIL ' "$OUT/$who$i.out" | sed 's/^/# /'
		fi
	done
	check "as $who, under load: check passes, sudo-kill for the test slot, in 5 of 5 runs (failed:${bad:- none})" \
		test -z "$bad"
done
LOOPS=$BUSY
stop_busy
# By their pids, not by a pattern over the machine's processes (a second copy of this test runs its own).
for p in $LOOPS; do wait "$p" 2>/dev/null; done
check "the busy loops are gone" sh -c 'for p; do ! kill -0 "$p" 2>/dev/null || exit 1; done' - $LOOPS
slots_done
