#!/bin/sh
# check's sudo-kill row ends the running command, the way the executor ends a run: a slotctl
# that logs each command it is given shows the kill's own command reached it (and ran) in every
# run the row passes; then a table of launchers, each doing one thing the executor's kill must
# see (setsid away, leave a process behind in a session of its own, ignore TERM, never start
# the command, hang without it) and a drop-in that refuses the kill: each is a FAIL saying
# which, with the pid, command, uid, process group and session, and nothing of the run is left
# afterwards, as root and as the service.
. "$top_srcdir/tests/integration/lib.sh"
slots_need_root
slots_enter_namespace "$@"
. "$top_srcdir/tests/integration/check-lib.sh"

check_fixture
chmod 0755 "$OUT"

# The reviewer's slotctl: appends "UID ARGS" to a log each slot may write, then is the enforcing one.
KLOG=$OUT/slotctl.log
: >"$KLOG"
chmod 0666 "$KLOG"
install -m 0755 -o root -g root "$top_srcdir/tests/integration/slotctl-enforcing.py" "$SLOTCTL_BIN.py"
printf '#!/bin/sh\nprintf "%%s slotctl %%s\\n" "$(id -un)" "$*" >>%s\nexec %s "$@"\n' "$KLOG" "$SLOTCTL_BIN.py" \
	>"$SLOTCTL_BIN"
cp -p "$LAUNCHER" "$OUT/launcher.good"



# ---- the demonstration: a row that passes has run its own command, and TERM ended it ----
# The launcher records what it runs and how that ended (it outlives the TERM only until then).
RECORDS="trap 'echo \"\$(id -un) term\" >>$KLOG' TERM
echo \"\$(id -un) ran \$*\" >>$KLOG
\"\$@\"
echo \"\$(id -un) ended \$?\" >>$KLOG"
printf '#!/bin/sh\n%s\n' "$RECORDS" >"$LAUNCHER"
for who in root svc; do
	: >"$KLOG"
	if [ $who = root ]; then run_check demo-$who; else run_svc demo-$who; fi
	check_rc "as $who: the good host passes" 0 demo-$who
	# Only the test slot runs it, which nobody holds.
	check "as $who: no sudo-kill row for an assigned slot" test -z "$(row_status demo-$who sudo-kill slot01)"
	for s in slot08; do
		check "as $who: sudo-kill $s passes" test "$(row_status demo-$who sudo-kill $s)" = PASS
		# Not the chain's probe (it prints its folder): the kill's run, with and without a terminal.
		n=$(grep -c "^$s slotctl .*sleep" "$KLOG")
		check "as $who: the kill's command reached slotctl as $s in both runs ($n)" test "$n" -ge 2
		n=$(grep -c "^$s ran .*sleep" "$KLOG")
		check "as $who: the launcher ran the kill's command as $s in both runs ($n)" test "$n" -ge 2
		n=$(grep -c "^$s ended 143\$" "$KLOG")
		check "as $who: TERM ended the command as $s in both runs ($n)" test "$n" -ge 2
	done
	check "as $who: nothing of the runs is left" test -z "$(slot_procs)"
	[ "$(grep -c ' ended 143$' "$KLOG")" -ge 2 ] || sed 's/^/# log: /' "$KLOG"
done
cat "$OUT/launcher.good" >"$LAUNCHER"

# ---- the launchers: each outcome the row must tell ----
# case_kill NAME WHO STATUS DETAIL LAUNCHER-BODY: with the launcher's body (after #!/bin/sh),
# check as WHO (root or svc, --timeout 3) gives sudo-kill slot08 STATUS with DETAIL (an ERE)
# in it, and leaves no process of a slot behind.
case_kill() {
	kname=$1 kwho=$2 kstatus=$3 kdetail=$4
	printf '#!/bin/sh\n%s\n' "$5" >"$LAUNCHER"
	if [ "$kwho" = root ]; then run_check "$kname" --timeout 3; else run_svc "$kname" --timeout 3; fi
	check "$kname: sudo-kill slot08 is $kstatus" test "$(row_status "$kname" sudo-kill slot08)" = "$kstatus"
	check "$kname: it says \"$kdetail\"" sh -c 'grep -E "^$1  *sudo-kill  *slot08 " "$2" | grep -q -E -- "$3"' - \
		"$kstatus" "$OUT/$kname.out" "$kdetail"
	left=$(slot_procs)
	if [ -n "${KILL_LEFT:-}" ]; then
		check "$kname: the kill's command is left" sh -c 'echo "$1" | grep -q slots-check-kill' - "$left"
	else
		check "$kname: nothing of the runs is left" test -z "$left"
		[ -z "$left" ] || echo "$left" | sed 's/^/# left: /'
	fi
	[ "$(row_status "$kname" sudo-kill slot08)" = "$kstatus" ] || show "$kname"
	echo "# $(grep -E '^(PASS|FAIL|SKIP)  *sudo-kill  *slot08 ' "$OUT/$kname.out")"
	cat "$OUT/launcher.good" >"$LAUNCHER"
	echo "$left" | awk '{ print $2 }' | xargs -r kill -KILL 2>/dev/null
}

# Only in the kill's run (the chain's runs of the launcher end as they should).
KILL_ONLY='case "$*" in *slots-check-kill*)'
PROC='pid [0-9]+ \([a-z]+\), uid [0-9]+, process group [0-9]+, session [0-9]+'
# name                 who   status  detail                                                    launcher
case_kill good          root PASS 'ran .*sleep.* as slot08 and ended it, with and without a terminal' 'exec "$@"'
case_kill setsid        root FAIL "the run's command is not in the process group the executor ends \\($PROC" \
	'exec setsid "$@"'
case_kill setsid-svc    svc  FAIL "the run's command is not in the process group the executor ends" 'exec setsid "$@"'
case_kill leaves        root FAIL "left the run's process group.*\\(pid [0-9]+ \\(sleep\\), uid [0-9]+, process group" \
	"$KILL_ONLY setsid /bin/sleep 300 </dev/null >/dev/null 2>&1 & ;; esac
exec \"\$@\""
case_kill leaves-svc    svc  FAIL "left the run's process group" "$KILL_ONLY setsid /bin/sleep 300 </dev/null >/dev/null 2>&1 & ;; esac
exec \"\$@\""
case_kill ignores-term  root FAIL "outlived the TERM by 3 s \\($PROC" "trap '' TERM
exec \"\$@\""
case_kill ignores-svc   svc  FAIL "outlived the TERM" "trap '' TERM
exec \"\$@\""
case_kill child-ignores root FAIL "outlived the TERM.*\\(sleep\\)" "$KILL_ONLY (trap '' TERM; exec /bin/sleep 300) </dev/null >/dev/null 2>&1 & ;; esac
exec \"\$@\""
case_kill hangs         root FAIL 'never started: sudo -> slotctl -> launcher did not start it within 3 s' \
	"$KILL_ONLY exec /bin/sleep 300 ;; esac
exec \"\$@\""
# Its standard output elsewhere: the command never says it started, and is found running all the same.
case_kill quiet         root PASS 'ended it, with and without a terminal' 'exec "$@" >/dev/null'
case_kill never-starts  root FAIL 'never started: sudo -> slotctl -> launcher exits 3: launcher says no' \
	'echo "launcher says no" >&2
exit 3'

# The kill refused: a drop-in whose kill rule matches no kill.
cp -p "$SUDOERS" "$OUT/dropin.good"
sed 's#/kill ^-s #/kill ^-s NONE #g' "$OUT/dropin.good" >"$SUDOERS"
visudo -cqf "$SUDOERS" || not_ok "the refusing drop-in is valid"
case_kill refused       root FAIL 'kill -s TERM -- -[0-9]+ is refused: exits 1' 'exec "$@"'
# As the service, with the kill refused, nothing can end the command: the row says so.
KILL_LEFT=1 case_kill refused-svc svc FAIL 'is refused: .*; pid [0-9]+ of slot08 is left running' 'exec "$@"'
cat "$OUT/dropin.good" >"$SUDOERS"

# --timeout: a usage error when it is not a number of seconds.
for bad in 0 -1 x 3601 ''; do
	"$SLOTS_ADMIN" --timeout "$bad" check >"$OUT/to.out" 2>"$OUT/to.err"
	check "--timeout '$bad' is a usage error (exit 2)" test $? = 2
done
check "--timeout is in --help" sh -c '"$1" --help | grep -q -- "--timeout SECONDS"' - "$SLOTS_ADMIN"

run_check back
check_rc "put back, check exits 0" 0 back
slots_done
