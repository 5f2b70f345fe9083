#!/bin/sh
# slots-admin check under a slotctl that enforces allowed_cwd as the platform's does (126
# "outside the allowed folders"): a good host passes as root and as the service on 8 runs in a
# row each, and each of the three production layers (the table root:root, releases/ 0700, a
# private path reachable) is still a FAIL with its precise fix (releases/ as the service too).
. "$top_srcdir/tests/integration/lib.sh"
slots_need_root
slots_enter_namespace "$@"
. "$top_srcdir/tests/integration/check-lib.sh"

check_fixture
chmod 0755 "$OUT"

# 8 runs in a row, as root and as the service: each exits 0, no FAIL row.
for who in root svc; do
	bad=
	for i in 1 2 3 4 5 6 7 8; do
		if [ $who = root ]; then run_check "$who$i"; else run_svc "$who$i"; fi
		if [ "$(rc_of "$who$i")" != 0 ] || grep -q '^FAIL ' "$OUT/$who$i.out"; then
			bad="$bad $i"
			show "$who$i"
		fi
	done
	check "as $who: check passes on 8 runs in a row (failed runs:${bad:- none})" test -z "$bad"
done
check "as root: the test slot's probe passes in the docs root" \
	grep -q "^PASS  *chain  *slot08  *in $DOCS: sudo -> slotctl -> launcher exits 0" "$OUT/root1.out"
check "as root: sudo-env passes for the test slot, the only one" \
	test "$(grep -c '^PASS  *sudo-env  *slot08 ' "$OUT/root1.out")" = 1
check "as the service: sudo-kill passes for the test slot, the only one" \
	test "$(grep -c '^PASS  *sudo-kill  *slot08 ' "$OUT/svc1.out")" = 1
check "as the service: the test slot's probe, naming {cwd}, passes" \
	grep -q '^PASS  *chain  *slot08 ' "$OUT/svc1.out"
check "no user id in any run" no_user_ids "$OUT"/root*.out "$OUT"/svc*.out

# A host without pam_slots in sudo's session stack: the slot's command runs without no_new_privs,
# and sudo-env FAILs (as the test slot) with the PAM line as the fix; back in the stack, it passes.
nnp_fix="put pam_slots in sudo's session stack: pam-auth-update --enable slots, or the line 'session required pam_slots.so' in /etc/pam.d/sudo (pam_slots(8))"
cp /etc/pam.d/sudo "$OUT/pam.sudo"
grep -vxF "$PAM_SUDO_LINE" "$OUT/pam.sudo" >/etc/pam.d/sudo
run_check no-pam
check_rc "no pam_slots for sudo: check exits 1" 1 no-pam
check "no pam_slots for sudo: sudo-env FAILs" test "$(grep -c '^FAIL  *sudo-env  *slot08  *the command runs without no_new_privs (NoNewPrivs: 0)' "$OUT/no-pam.out")" = 1
got=$(fix_of no-pam sudo-env slot08)
check "no pam_slots for sudo: the fix is the PAM line (got \"$got\")" test "$got" = "$nnp_fix"
run_svc no-pam-svc
check "no pam_slots for sudo: as the service too" grep -q '^FAIL  *sudo-env  *slot08  *the command runs without no_new_privs' "$OUT/no-pam-svc.out"
cp "$OUT/pam.sudo" /etc/pam.d/sudo
run_check pam-back
check "pam_slots back: sudo-env passes with no_new_privs" \
	grep -q '^PASS  *sudo-env  *slot08  *sudo accepts --preserve-env for the [0-9]* names of sudo_env; the command has no_new_privs' "$OUT/pam-back.out"

# layer NAME CHECK SLOT FIX: the run NAME (as root) fails the row CHECK SLOT with exactly FIX.
layer() {
	check_rc "$1: check exits 1" 1 "$1"
	check "$1: the row $2 ${3:--} is FAIL" test "$(row_status "$1" "$2" "$3")" = FAIL
	got=$(fix_of "$1" "$2" "$3")
	check "$1: the fix is \"$4\" (got \"$got\")" test "$got" = "$4"
}

# The first layer: the table root:root, which the service can no longer read.
chgrp root "$TABLE"
run_check table-root
layer table-root table "" "chgrp $SERVICE $TABLE"
run_svc table-root-svc
check_rc "table-root: as the service, check exits 1" 1 table-root-svc
chgrp "$SERVICE" "$TABLE"

# The second: releases/ 0700, so no slot reaches the launcher.
chmod 0700 "$APP/releases"
run_check releases
layer releases runner-reachable slot01 "chmod o+x $APP/releases"
# As the service (the deploy self-test): answered from the modes, with the same precise fix.
run_svc releases-svc
layer releases-svc runner-reachable slot01 "chmod o+x $APP/releases"
chmod 0711 "$APP/releases"
run_svc releases-svc-back
check "as the service, releases/ 0711: runner-reachable passes from the modes" \
	grep -q '^PASS  *runner-reachable  *slot01  *reaches .* by the modes and ACLs vstudio reads' \
	"$OUT/releases-svc-back.out"

# The third: a private path others can reach.
chmod 0755 "$APP/state"
run_check private
layer private private-unreachable slot01 "chmod o-rwx $APP/state"
chmod 0700 "$APP/state"

# The kill and the preflight are tried with a terminal of check's own too: under Debian's
# "Defaults use_pty", a drop-in without !use_pty lets the run leave the group the kill ends.
grep -q '^Defaults[[:space:]]*use_pty' /etc/sudoers || echo 'Defaults use_pty' >>/etc/sudoers
cp -p "$SUDOERS" "$OUT/dropin.good"
sed 's/, !use_pty//' "$OUT/dropin.good" >"$SUDOERS"
run_check use-pty
check_rc "use_pty: check exits 1" 1 use-pty
check "use_pty: sudo-kill FAILs with a controlling terminal and says why" grep -q \
	'^FAIL sudo-kill slot08: as vstudio with a controlling terminal, the run.s command is not in the process group' \
	"$OUT/use-pty.out"
check "use_pty: the fix is slots-provision's drop-in with !use_pty" \
	sh -c 'grep "^FAIL sudo-kill slot08: " "$1" | grep -q "fix: slots-provision (its drop-in .* with !use_pty"' - \
	"$OUT/use-pty.out"
cat "$OUT/dropin.good" >"$SUDOERS"

# 70 names in sudo_env (the run's environment has no cap): every one is passed and accepted.
cp -p "$CONF" "$OUT/conf.good"
edit_config 'c["sudo_env"] = ["LANG", "HOME"] + ["SLOTS_T%02d" % i for i in range(70)]'
"$SLOTS_PROVISION" --config "$CONF" >"$OUT/prov70.out" 2>&1 || cat "$OUT/prov70.out"
run_check env70
check "72 names in sudo_env: sudo-env passes" \
	grep -q '^PASS  *sudo-env  *slot08  *sudo accepts --preserve-env for the 72 names of sudo_env' "$OUT/env70.out"
rm -f "$CONF" && cp -p "$OUT/conf.good" "$CONF"
"$SLOTS_PROVISION" --config "$CONF" >"$OUT/prov-back.out" 2>&1 || cat "$OUT/prov-back.out"

run_check back
check_rc "put back, check exits 0" 0 back
slots_done
