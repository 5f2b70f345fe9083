#!/bin/sh
# A chain or sudo-env probe that hangs past --timeout: sudo is killed at the deadline, and so is
# everything the run started as the slot, even a process in a session of its own; the rows say
# the probe did not finish, the other slots still pass, and nothing of a slot is left, as root
# and as the service.
. "$top_srcdir/tests/integration/lib.sh"
slots_need_root
slots_enter_namespace "$@"
. "$top_srcdir/tests/integration/check-lib.sh"

check_fixture
chmod 0755 "$OUT"
cp -p "$LAUNCHER" "$OUT/launcher.good"



# case_hang NAME WHO LAUNCHER-BODY: with the launcher's body (after #!/bin/sh), check as WHO
# (root or svc, --timeout 3) says slot01's chain and sudo-env probes did not finish within
# 3 s, slot03's chain passes, and no process of a slot is left.
case_hang() {
	hname=$1 hwho=$2
	printf '#!/bin/sh\n%s\n' "$3" >"$LAUNCHER"
	if [ "$hwho" = root ]; then run_check "$hname" --timeout 3; else run_svc "$hname" --timeout 3; fi
	for c in chain sudo-env; do
		check "$hname: $c slot01 is FAIL, the probe did not finish within 3000 ms" sh -c \
			'grep -E "^FAIL  *$1  *slot01 " "$2" | grep -q "did not finish within 3000 ms"' - $c "$OUT/$hname.out"
	done
	check "$hname: slot03's chain still passes" test "$(row_status "$hname" chain slot03)" = PASS
	left=$(slot_procs)
	check "$hname: nothing of the runs is left" test -z "$left"
	[ -z "$left" ] || echo "$left" | sed 's/^/# left: /'
	cat "$OUT/launcher.good" >"$LAUNCHER"
	echo "$left" | awk '{ print $2 }' | xargs -r kill -KILL 2>/dev/null
}

# Only slot01's probes (the chain's prints its folder, sudo-env's reads its status), never the kill's run.
HANG='case "$(id -un) $*" in "slot01 "*pwd* | "slot01 "*/proc/self/status*)'
# name            who   launcher
case_hang hang      root "$HANG exec /bin/sleep 300 ;; esac
exec \"\$@\""
# A process of its own session, out of the run's group: found all the same (the run's helper reaps orphans).
case_hang away      root "$HANG setsid /bin/sleep 301 </dev/null >/dev/null 2>&1 & exec /bin/sleep 300 ;; esac
exec \"\$@\""
case_hang away-svc  svc  "$HANG setsid /bin/sleep 301 </dev/null >/dev/null 2>&1 & exec /bin/sleep 300 ;; esac
exec \"\$@\""

run_check back
check_rc "put back, check exits 0" 0 back
check "put back: nothing of a slot is left" test -z "$(slot_procs)"
slots_done
