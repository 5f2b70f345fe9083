#!/bin/sh
# check as a gate no tenant can sway: the holder of an assigned slot runs a process that stops,
# or kills, every other process of its uid as soon as it sees it, while check runs on a good
# host, as root and as the service.  No verdict changes: check exits 0, no row fails, the rows
# that prove the host (run as the test slot, which nobody holds) pass, and each of the slot's
# own rows passes or WARNs naming the slot and the holder's process.  A process of the test
# slot itself is a FAIL of test-slot-idle that names it, its name escaped.
. "$top_srcdir/tests/integration/lib.sh"
slots_need_root
slots_enter_namespace "$@"
. "$top_srcdir/tests/integration/check-lib.sh"

check_fixture
chmod 0755 "$OUT"

# The holder's process: every 2 ms, SIG to each live process of its own uid but itself.  It
# prints its pid first; the test ends it by that pid.
cat >"$OUT/holder.py" <<'EOF'
import os, signal, sys, time
sig = getattr(signal, "SIG" + sys.argv[1])
me, uid = os.getpid(), os.getuid()
print(me, flush=True)
while True:
    for p in os.listdir("/proc"):
        if not p.isdigit() or int(p) == me:
            continue
        try:
            if os.stat("/proc/" + p).st_uid == uid:
                os.kill(int(p), sig)
        except OSError:
            pass
    time.sleep(0.002)
EOF
chmod 0644 "$OUT/holder.py"

HOLDER=
stop_holder() {
	[ -n "$HOLDER" ] && kill -KILL "$HOLDER" 2>/dev/null
	HOLDER=
}
trap stop_holder EXIT

# case_holder NAME WHO SIG: the holder of slot03 sends SIG; check as WHO changes no verdict.
case_holder() {
	hname=$1 hwho=$2
	rm -f "$OUT/holder.pid"
	runuser -u slot03 -- setpriv --no-new-privs python3 "$OUT/holder.py" "$3" >"$OUT/holder.pid" &
	i=0
	while [ ! -s "$OUT/holder.pid" ] && [ $i -lt 300 ]; do sleep 0.1; i=$((i + 1)); done
	HOLDER=$(cat "$OUT/holder.pid" 2>/dev/null)
	if [ -z "$HOLDER" ]; then
		not_ok "$hname: the holder started"
		return
	fi
	t0=$(date +%s)
	if [ "$hwho" = root ]; then run_check "$hname"; else run_svc "$hname"; fi
	took=$(($(date +%s) - t0))
	echo "# $hname: check took $took s beside the holder (pid $HOLDER, $3)"
	# A stopped run of sudo ends at once (sudo stops with its command): no 20 s deadline waited out per stage.
	check "$hname: check did not wait out the stages' deadlines ($took s < 30 s)" test "$took" -lt 30
	check "$hname: the holder ran through the whole check" kill -0 "$HOLDER"
	hpid=$HOLDER
	stop_holder
	check_rc "$hname: check exits 0" 0 "$hname"
	check "$hname: no row fails" sh -c "! grep -q '^FAIL' '$OUT/$hname.out'"
	grep '^FAIL' "$OUT/$hname.out" | sed 's/^/# /'
	for c in sudo-preflight sudo-env sudo-kill test-slot-idle; do
		check "$hname: $c passes as the test slot" test "$(row_status "$hname" $c slot08)" = PASS
	done
	check "$hname: the test slot's chain passes in the docs root and the shared folder" \
		test "$(grep -c '^PASS  *chain  *slot08 ' "$OUT/$hname.out")" = 2
	check "$hname: the other assigned slots' rows do not warn or fail" \
		sh -c "! grep -E '^(WARN|FAIL)  *[a-z-]+  *slot0[15] ' '$OUT/$hname.out'"
	check "$hname: each WARN is slot03's and names the holder's process" sh -c \
		"grep '^WARN ' '$OUT/$hname.out' | awk '\$3 != \"slot03\" || !/pid $hpid \\(python3\\)/ { exit 1 }'"
	grep '^WARN ' "$OUT/$hname.out" | sed 's/^/# /'
	check "$hname: no user id in the output" no_user_ids "$OUT/$hname.out" "$OUT/$hname.err"
}

case_holder stop      root STOP
case_holder kill      root KILL
case_holder stop-svc  svc  STOP
case_holder kill-svc  svc  KILL

# A process of the test slot, which nobody holds: a FAIL of its own, naming it, its name escaped.
tab=$(printf '\t')
mkdir -p "$OUT/bin"
cp /bin/sleep "$OUT/bin/zz${tab}idle"
chmod 0755 "$OUT/bin" "$OUT/bin/zz${tab}idle"
runuser -u slot08 -- "$OUT/bin/zz${tab}idle" 300 &
RUNNER=$!
i=0
while [ -z "$IDLE" ] && [ $i -lt 50 ]; do IDLE=$(pgrep -P "$RUNNER"); sleep 0.1; i=$((i + 1)); done
run_check idle --json
kill -KILL "$IDLE" 2>/dev/null
check_rc "a process of the test slot: check exits 1" 1 idle
check "test-slot-idle is FAIL and names the process, its name escaped" python3 - "$OUT/idle.out" "$IDLE" <<'EOF'
import json, sys
d = json.load(open(sys.argv[1]))
rows = [r for r in d["checks"] if r["check"] == "test-slot-idle"]
assert len(rows) == 1 and rows[0]["status"] == "FAIL" and rows[0]["slot"] == "slot08", rows
assert "pid %s (zz\\tidle)" % sys.argv[2] in rows[0]["detail"], rows[0]["detail"]
assert "ps -o pid,stat,cmd -u slot08" in rows[0]["fix"], rows[0]["fix"]
EOF
slots_done
