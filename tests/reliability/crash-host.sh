#!/bin/sh
# Issue 7.1 on a real host (in a private mount namespace): the check fixture of
# tests/integration/check-lib.sh (accounts made by slots-provision, homes, sudoers drop-in,
# three users assigned), then slots-admin assign and release killed with SIGKILL at their
# file-changing calls.  After each kill "slots-admin check" either passes or fails only with
# rows that name their fix (a release left pending names "release --slot"); the next command
# finishes the job and check then passes again.  Short form: at most about 40 kill points per
# command; SLOTS_RELIABILITY_FULL=1: every one.
. "$top_srcdir/tests/integration/lib.sh"
. "$top_srcdir/tests/reliability/rel-lib.sh"
slots_need_root
rel_need_shim
slots_enter_namespace "$@"
. "$top_srcdir/tests/integration/check-lib.sh"
check_fixture >/dev/null

shim_admin() {
	timeout 60 env LD_PRELOAD="$SHIM" FAULT_PROG=slots-admin "$SLOTS_ADMIN" "$@"
}

# A check that fails on the fixture is a regression of check (or of the fixture): it fails
# this test, never turns it into a skip.
run_check base
if [ "$(rc_of base)" != 0 ]; then
	show base
	echo "Bail out! slots-admin check does not pass on the fixture host (exit $(rc_of base))"
	exit 1
fi

# After a kill: check passes, or every failing row names its fix.  Prints the failing checks.
check_after_kill() {
	run_check kill
	case $(rc_of kill) in
	0) return 0 ;;
	1)
		# Exit 1 must come with at least one FAIL row, and every FAIL row must name its fix.
		grep -q -E '^FAIL [a-z-]+( slot[0-9]+)?: ' "$OUT/kill.out" || return 1
		if grep -E '^FAIL [a-z-]+( slot[0-9]+)?: ' "$OUT/kill.out" | grep -v -q -- ' -- fix: '; then
			return 1
		fi
		grep -E '^FAIL [a-z-]+( slot[0-9]+)?: ' "$OUT/kill.out" | cut -d: -f1 | sort -u | sed 's/^FAIL //' |
			tr '\n' ',' >>"$OUT/fails"
		return 0
		;;
	*) return 1 ;;
	esac
}

# points K: the kill points to try out of K (all in the long form).
points() {
	if [ "$FULL" = 1 ] || [ "$1" -le 40 ]; then
		seq 1 "$1"
	else
		seq 1 $((($1 + 39) / 40)) "$1"
		echo "$1"
	fi | sort -n -u
}

total=0

# ---- assign: a new user each time, to the lowest free slot ----
rm -f "$OUT/ref.log"
FAULT_LOG=$OUT/ref.log shim_admin assign ref-user >/dev/null
k=$(wc -l <"$OUT/ref.log")
"$SLOTS_ADMIN" release ref-user >/dev/null
echo "# assign: $k kill points: $(cut -d' ' -f2 "$OUT/ref.log" | sort | uniq -c | tr -s ' \n' ' ')"
bad=0
: >"$OUT/fails"
for n in $(points "$k"); do
	u=crash-user-$n
	FAULT_AT=$n FAULT_ACTION=kill shim_admin assign "$u" >/dev/null 2>&1
	st=$?
	what="assign killed at call $n ($(sed -n "${n}p" "$OUT/ref.log" | cut -d' ' -f2-))"
	if [ "$st" != 137 ]; then
		not_ok "$what: exit $st, not killed"
		bad=$((bad + 1))
		continue
	fi
	if ! check_after_kill; then
		not_ok "$what: check fails without naming a fix (exit $(rc_of kill))"
		grep FAIL "$OUT/kill.out" | head -n 5 | sed 's/^/#   /'
		bad=$((bad + 1))
	fi
	if ! shim_admin assign "$u" >/dev/null 2>"$OUT/err"; then
		not_ok "$what: assigning again fails: $(head -c 300 "$OUT/err")"
		bad=$((bad + 1))
		continue
	fi
	run_check again
	if [ "$(rc_of again)" != 0 ]; then
		not_ok "$what: check still fails after the same assign again"
		grep FAIL "$OUT/again.out" | head -n 5 | sed 's/^/#   /'
		bad=$((bad + 1))
	fi
	"$SLOTS_ADMIN" release "$u" >/dev/null 2>&1 || { not_ok "$what: release afterwards fails"; bad=$((bad + 1)); }
	total=$((total + 1))
done
check "assign: $(points "$k" | wc -l) of $k kill points; check passed or named the fix (failing: $(tr ',' '\n' <"$OUT/fails" | sort | uniq -c | tr -s ' \n' ' ')), and passed after assigning again" [ "$bad" = 0 ]

# ---- release: USER_A in slot01 with files, a running process, and back again ----
leftovers() {
	home=/var/lib/slots/$SERVICE/home/slot01
	setpriv --reuid=slot01 --regid=slot01 --clear-groups sh -c "echo left >'$home/notes'; mkdir -p '$home/d'; echo x >'$home/d/f'"
	setpriv --reuid=slot01 --regid=slot01 --clear-groups sleep 600 </dev/null >/dev/null 2>&1 &
}
leftovers
rm -f "$OUT/ref.log"
FAULT_LOG=$OUT/ref.log shim_admin release "$USER_A" >/dev/null
k=$(wc -l <"$OUT/ref.log")
"$SLOTS_ADMIN" assign "$USER_A" slot01 >/dev/null
echo "# release: $k kill points: $(cut -d' ' -f2 "$OUT/ref.log" | sort | uniq -c | tr -s ' \n' ' ')"
bad=0
pending=0
: >"$OUT/fails"
for n in $(points "$k"); do
	leftovers
	FAULT_AT=$n FAULT_ACTION=kill shim_admin release "$USER_A" >/dev/null 2>&1
	st=$?
	what="release killed at call $n ($(sed -n "${n}p" "$OUT/ref.log" | cut -d' ' -f2-))"
	if [ "$st" != 137 ]; then
		not_ok "$what: exit $st, not killed"
		bad=$((bad + 1))
		continue
	fi
	if ! check_after_kill; then
		not_ok "$what: check fails without naming a fix (exit $(rc_of kill))"
		grep FAIL "$OUT/kill.out" | head -n 5 | sed 's/^/#   /'
		bad=$((bad + 1))
	fi
	if grep -q '"pending"' "$TABLE"; then
		pending=$((pending + 1))
		if ! grep -q -- '-- fix: .*release --slot slot01' "$OUT/kill.out"; then
			not_ok "$what: slot01 is pending and check does not name \"release --slot slot01\""
			bad=$((bad + 1))
		fi
		next="release --slot slot01"
	else
		next="release $USER_A"
	fi
	# shellcheck disable=SC2086
	if ! shim_admin $next >/dev/null 2>"$OUT/err"; then
		not_ok "$what: '$next' fails: $(head -c 300 "$OUT/err")"
		bad=$((bad + 1))
		continue
	fi
	run_check again
	if [ "$(rc_of again)" != 0 ]; then
		not_ok "$what: check still fails after '$next'"
		grep FAIL "$OUT/again.out" | head -n 5 | sed 's/^/#   /'
		bad=$((bad + 1))
	fi
	if pgrep -u slot01 >/dev/null; then
		not_ok "$what: a process of slot01 survived '$next'"
		pkill -KILL -u slot01
		bad=$((bad + 1))
	fi
	"$SLOTS_ADMIN" assign "$USER_A" slot01 >/dev/null 2>&1 || { not_ok "$what: assigning slot01 again fails"; bad=$((bad + 1)); }
	total=$((total + 1))
done
check "release: $(points "$k" | wc -l) of $k kill points ($pending left slot01 pending); check passed or named the fix (failing: $(tr ',' '\n' <"$OUT/fails" | sort | uniq -c | tr -s ' \n' ' ')), and passed after the next command" [ "$bad" = 0 ]
pkill -KILL -u slot01 2>/dev/null
echo "# crash-host: $total kill points with check after each"
slots_done
