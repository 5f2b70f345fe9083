#!/bin/sh
# slots-admin check on a correct host: every row passes, nothing changes, no user id is shown,
# --json says the same; then the time it takes for 8 slots.
. "$top_srcdir/tests/integration/lib.sh"
slots_need_root
slots_enter_namespace "$@"
. "$top_srcdir/tests/integration/check-lib.sh"

check_fixture

# 1. The fixed layout passes every row, exit 0.
fixture_snapshot >"$OUT/before"
lock_before=$(ls "$TABLE.lock" 2>/dev/null)
run_check good
check_rc "check exits 0 on the fixed layout" 0 good
check "no row fails or skips" sh -c "! grep -E '^(FAIL|SKIP) ' '$OUT/good.out'"
# Per-slot rows for the assigned slots and the test slot (slot08), none for the others
# (their accounts make one "account" row).
for c in account password-locked runner-reachable private-unreachable user-tree chain; do
	for s in slot01 slot03 slot05 slot08; do
		check "row $c $s passes" test "$(row_status good $c $s)" = PASS
	done
	check "no row $c for the free slot02" test -z "$(row_status good $c slot02)"
done
# The rows that prove the host run as the test slot only, which nobody holds; it is idle before and after.
for c in sudo-preflight sudo-env sudo-kill test-slot-idle; do
	check "row $c slot08 passes" test "$(row_status good $c slot08)" = PASS
	check "no row $c for the assigned slot01" test -z "$(row_status good $c slot01)"
done
check "the test slot runs the chain in the docs root and the shared folder" \
	test "$(grep -c '^PASS  *chain  *slot08 ' "$OUT/good.out")" = 2
check "an assigned slot runs the chain in its user's tree only" \
	sh -c "test \"\$(grep -c '^PASS  *chain  *slot01 ' '$OUT/good.out')\" = 1 && grep -q '^PASS  *chain  *slot01  *in <docs>/_users/<user>:' '$OUT/good.out'"
for c in config table roots slotctl-config pending-cleanup hard-links app-private sudoers-dropin sudo-grants; do
	check "row $c passes" test "$(row_status good $c)" = PASS
done
check "closing line: 45 passed, 0 failed, 0 warned, 0 skipped" \
	test "$(tail -n 1 "$OUT/good.out")" = "slot self-check: 45 passed, 0 failed, 0 warned, 0 skipped"
check "header names the columns" sh -c "head -n 1 '$OUT/good.out' | grep -Eq '^STATUS +CHECK +SLOT +DETAIL$'"
check "the model of modes and ACLs agrees with the probes" sh -c "! grep -q 'probe wins' '$OUT/good.out'"
check "nothing on stderr" test ! -s "$OUT/good.err"
check "the user's tree shows as <docs>/_users/<user>" grep -q '<docs>/_users/<user>' "$OUT/good.out"

# --json: the same rows, parsed.
run_check json --json
check_rc "check --json exits 0" 0 json
check "--json parses and matches the text run" python3 - "$OUT/json.out" "$OUT/good.out" <<'EOF'
import json, sys
d = json.load(open(sys.argv[1]))
text = [l.split()[:3] for l in open(sys.argv[2]) if l.split()[:1] in (["PASS"], ["FAIL"], ["SKIP"])]
rows = d["checks"]
assert set(d) == {"version", "checks", "passed", "failed", "warned", "skipped", "ok"} and d["version"] == 1, d.keys()
assert d["ok"] is True and d["failed"] == 0 and d["warned"] == 0 and d["skipped"] == 0 and d["passed"] == len(rows) == 45, d
for r, t in zip(rows, text):
    assert set(r) == {"status", "check", "slot", "detail", "fix"}, r
    assert [r["status"], r["check"], r["slot"] or "-"] == t, (r, t)
    assert r["status"] == "PASS" and r["fix"] is None and r["detail"], r
assert len(rows) == len(text)
EOF

# 3. Read-only: the whole fixture is as it was.
fixture_snapshot >"$OUT/after"
check "owners, modes, ACLs, times and contents unchanged by check" cmp -s "$OUT/before" "$OUT/after"
cmp -s "$OUT/before" "$OUT/after" || diff "$OUT/before" "$OUT/after" | head -n 20 | sed 's/^/# /'
check "the table's lock file was not made" test "$(ls "$TABLE.lock" 2>/dev/null)" = "$lock_before"

# It takes no lock: with the table's write lock held by someone else it still answers at once.
check "check runs while another admin holds the table's lock" \
	flock -x "$TABLE.lock" timeout 10 "$SLOTS_ADMIN" check >/dev/null

# 4. No application user id anywhere in the output.
check "no user id in the text output" no_user_ids "$OUT/good.out" "$OUT/good.err"
check "no user id in the JSON output" no_user_ids "$OUT/json.out" "$OUT/json.err"

check_exit "check with an argument is a usage error" 2 sh -c "'$SLOTS_ADMIN' check extra >/dev/null 2>&1"

# Memory: no error and no leak in the command itself (the probes are short-lived children).
if command -v valgrind >/dev/null 2>&1 && [ -z "${SLOTS_SANITIZER:-}" ]; then
	valgrind -q --leak-check=full --show-leak-kinds=definite,indirect --errors-for-leak-kinds=definite,indirect \
		--error-exitcode=99 "$SLOTS_ADMIN" check --json >"$OUT/vg.out" 2>"$OUT/vg.err"
	echo $? >"$OUT/vg.rc"
	check_rc "check --json under valgrind: no error, no leak" 0 vg
	# The children that fork without exec (the sudo rows' pool, the runs as the service) are
	# looked at too; their exit status is not the command's, so what they report is read here.
	# valgrind's own notes on an ioctl it does not know (TIOCSCTTY) are not the program's errors.
	grep -E '^==[0-9]+== ' "$OUT/vg.err" | grep -v -E 'unhandled ioctl|spurious value errors|README_MISSING' \
		>"$OUT/vg.children"
	check "under valgrind: no error and no leak in any child either" test ! -s "$OUT/vg.children"
	head -n 40 "$OUT/vg.children" | sed 's/^/# /'
else
	echo "# valgrind not installed, or a sanitizer build: memory check skipped"
fi

# As the service account, as the deploy self-test runs it: the rows that need root are
# SKIP with the reason, the sudo rows and the chain run exactly as they do for root.
chmod 0755 "$OUT"
runuser -u "$SERVICE" -- "$SLOTS_ADMIN" check >"$OUT/svc.out" 2>"$OUT/svc.err"
echo $? >"$OUT/svc.rc"
check_rc "as $SERVICE: check exits 0" 0 svc
check "as $SERVICE: password-locked is SKIP, needs root" \
	grep -q '^SKIP  *password-locked  *slot01  *needs root: reads /etc/shadow' "$OUT/svc.out"
check "as $SERVICE: user-tree is SKIP, needs root" grep -q '^SKIP  *user-tree  *slot01  *needs root' "$OUT/svc.out"
check "as $SERVICE: the chain passes" grep -q '^PASS  *chain  *slot01 ' "$OUT/svc.out"
check "as $SERVICE: sudo-env and sudo-kill pass as the test slot" \
	sh -c "grep -q '^PASS  *sudo-env  *slot08' '$OUT/svc.out' && grep -q '^PASS  *sudo-kill  *slot08' '$OUT/svc.out'"
check "as $SERVICE: sudoers-dropin is SKIP, needs root" \
	grep -q "^SKIP  *sudoers-dropin  *-  *needs root: /etc/sudoers.d/slots-$SERVICE is root:root 0440" "$OUT/svc.out"
check "as $SERVICE: sudo-grants lists its own rules and passes" \
	grep -q "^PASS  *sudo-grants  *-  *sudo -n -l as $SERVICE: sudo reads its rules" "$OUT/svc.out"
check "as $SERVICE: no user id in the output" no_user_ids "$OUT/svc.out" "$OUT/svc.err"
useradd -r -l -M -s /usr/sbin/nologin checkother 2>/dev/null
runuser -u checkother -- "$SLOTS_ADMIN" check >"$OUT/other.out" 2>"$OUT/other.err"
echo $? >"$OUT/other.rc"
check_rc "as another account: check is refused" 1 other
check "as another account: the message says who may run it" grep -q 'root or as the service account' "$OUT/other.err"

# Timing: 8 slots checked (7 assigned and the test slot).
# The ids are long enough that no temp folder's random name can hold one (no_user_ids greps).
U2=user2-0b5f7c3e9d U4=user4-6a1e8d2c4b U6=user6-9c3b5a7e1f U7=user7-2d8f4b6a0c
check_assign slot01 "$USER_A" slot02 "$U2" slot03 "$USER_B" slot04 "$U4" slot05 "$USER_C" slot06 "$U6" slot07 "$U7"
USERS="$USERS $U2 $U4 $U6 $U7"
t0=$(date +%s%N)
run_check eight
t1=$(date +%s%N)
ms=$(( (t1 - t0) / 1000000 ))
echo "# check of 8 slots took $ms ms"
check_rc "check of 8 slots exits 0" 0 eight
check "8 slots: 72 rows passed" test "$(tail -n 1 "$OUT/eight.out")" = "slot self-check: 72 passed, 0 failed, 0 warned, 0 skipped"
# The real chain costs about 16 sudo runs for 8 slots (the test slot's preflight, env, kill, 9 chain probes).
check "8 slots checked within 30 s" test "$ms" -lt 30000
# 7 assigned: at most the sample's size, so every assigned slot runs the chain in its tree and no sample is named.
check "7 assigned: sudo-preflight for the test slot only" test "$(grep -c '^PASS  *sudo-preflight ' "$OUT/eight.out")" = 1
check "7 assigned: the chain in each user's tree" test "$(grep -c '^PASS  *chain  *slot0[1-7]  *in <docs>/_users/<user>:' "$OUT/eight.out")" = 7
check "7 assigned: no sudo-sample row" sh -c "! grep -q ' sudo-sample ' '$OUT/eight.out'"
check "no user id with 7 users either" no_user_ids "$OUT/eight.out"

slots_done
