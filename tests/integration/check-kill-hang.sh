#!/bin/sh
# A chain or sudo-env probe that hangs past --timeout: sudo is killed at the deadline, and so is
# everything the run started as the slot, even a process in a session of its own; as the test
# slot (the rows that prove the host) the rows FAIL saying the probe did not finish, as an
# assigned slot (whose holder could have stopped it) the chain WARNs naming the slot, the other
# slots still pass, and nothing of a slot is left, as root and as the service.
. "$top_srcdir/tests/integration/lib.sh"
slots_need_root
slots_enter_namespace "$@"
. "$top_srcdir/tests/integration/check-lib.sh"

check_fixture
chmod 0755 "$OUT"
cp -p "$LAUNCHER" "$OUT/launcher.good"



# case_hang NAME WHO LAUNCHER-BODY: with the launcher's body (after #!/bin/sh), check as WHO
# (root or svc, --timeout 3) says the test slot's (slot08) chain and sudo-env probes did not
# finish within 3 s, slot01's chain in its tree WARNs, slot03's chain passes, and no process of
# a slot is left.
case_hang() {
	hname=$1 hwho=$2
	printf '#!/bin/sh\n%s\n' "$3" >"$LAUNCHER"
	if [ "$hwho" = root ]; then run_check "$hname" --timeout 3; else run_svc "$hname" --timeout 3; fi
	for c in chain sudo-env; do
		check "$hname: $c slot08 is FAIL, the probe did not finish within 3000 ms" sh -c \
			'grep -E "^FAIL  *$1  *slot08 " "$2" | grep -q "did not finish within 3000 ms"' - $c "$OUT/$hname.out"
	done
	check "$hname: slot01's chain WARNs: its holder could have stopped it" sh -c \
		'grep -E "^WARN  *chain  *slot01 " "$1" | grep -q "as slot01, in <docs>/_users/<user> the probe did not finish in time.*processes of slot01 now: none.*release the slot"' - "$OUT/$hname.out"
	check "$hname: slot03's chain still passes" test "$(row_status "$hname" chain slot03)" = PASS
	left=$(slot_procs)
	check "$hname: nothing of the runs is left" test -z "$left"
	[ -z "$left" ] || echo "$left" | sed 's/^/# left: /'
	cat "$OUT/launcher.good" >"$LAUNCHER"
	echo "$left" | awk '{ print $2 }' | xargs -r kill -KILL 2>/dev/null
}

# Only the probes of slot08 (the test slot) and slot01 (the chain's prints its folder, sudo-env's
# reads its status), never the kill's run.
HANG='case "$(id -un) $*" in slot0[18]" "*pwd* | slot0[18]" "*/proc/self/status*)'
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
