#!/bin/sh
# slots-admin check above the sudo sample: the rows that prove the host (sudo-preflight,
# sudo-env, sudo-kill, the chain in the docs root and the shared folders) run as the test slot
# only; with more than 8 assigned slots the chain in the users' trees runs for 8 of them (the
# lowest, the highest, evenly between) and every slot with limits of its own, the same ones
# every run; a SKIP row names them.  Every slot is still covered by sudoers-dropin (the drop-in
# byte for byte against its rendering) and sudo-grants (sudo's own listing): a drop-in edited
# for one slot outside the sample, or a rule elsewhere that takes one back, is a FAIL.
. "$top_srcdir/tests/integration/lib.sh"
slots_need_root
command -v sudo >/dev/null 2>&1 || { echo "SKIP: sudo not installed"; exit 77; }
slots_enter_namespace "$@"
CHECK_POOL=24
. "$top_srcdir/tests/integration/check-lib.sh"

check_fixture
# 20 assigned: slot01..slot20; slot24, the highest free slot, is the test slot.
pairs=
i=1
while [ $i -le 20 ]; do
	s=$(printf 'slot%02d' $i)
	pairs="$pairs $s u$i-sample"
	USERS="$USERS u$i-sample"
	i=$((i + 1))
done
# shellcheck disable=SC2086
check_assign $pairs

# The slots a run gave ROW to, one line, in order.
slots_with() {
	awk -v c="$2" '$2 == c && $3 != "-" && ($1 == "PASS" || $1 == "FAIL" || $1 == "SKIP") && !seen[$3]++ { printf "%s%s", n++ ? " " : "", $3 }
		END { print "" }' "$OUT/$1.out"
}

# failing NAME WHAT ROW: check fails (exit 1), changes nothing and shows no user id; its FAIL lines go to
# the log, and FIX is the fix printed for the host-wide row ROW.
failing() {
	fixture_snapshot >"$OUT/$1.before"
	run_check "$1"
	fixture_snapshot >"$OUT/$1.after"
	check_rc "$2: check exits 1" 1 "$1"
	grep '^FAIL ' "$OUT/$1.out" | sed 's/^/# /'
	check "$2: check changed nothing" cmp -s "$OUT/$1.before" "$OUT/$1.after"
	check "$2: no user id in the output" no_user_ids "$OUT/$1.out" "$OUT/$1.err"
	FIX=$(fix_of "$1" "$3")
	echo "# fix: $FIX"
}

# The sample of 20 assigned slots: positions i*19/7 (rounded down) for i = 0..7, and the test slot.
SAMPLE="slot01 slot03 slot06 slot09 slot11 slot14 slot17 slot20 slot24"

run_check big
check_rc "20 assigned: check exits 0" 0 big
grep -E ' (sudo-sample|sudoers-dropin|sudo-grants) ' "$OUT/big.out" | sed 's/^/# /'
check "20 assigned: the closing line counts one skip (the sample's row)" \
	sh -c "tail -n 1 '$OUT/big.out' | grep -Eq '^slot self-check: [1-9][0-9]* passed, 0 failed, 0 warned, 1 skipped$'"
got=$(slots_with big chain)
check "20 assigned: chain runs for the sample only ($got)" test "$got" = "$SAMPLE"
for c in sudo-preflight sudo-env sudo-kill test-slot-idle; do
	got=$(slots_with big $c)
	check "20 assigned: $c runs as the test slot only ($got)" test "$got" = slot24
done
for c in account password-locked runner-reachable private-unreachable user-tree; do
	check "20 assigned: $c still runs for all 21 slots" test "$(slots_with big $c | wc -w)" = 21
done
check "20 assigned: the sudo-sample row is SKIP and names the sample" \
	grep -q "^SKIP  *sudo-sample  *-  *chain runs in the users' trees of 8 of the 20 assigned slots: slot01, slot03, slot06, slot09, slot11, slot14, slot17, slot20; the lowest, the highest" \
	"$OUT/big.out"
check "20 assigned: sudoers-dropin passes, naming the pool" \
	grep -q '^PASS  *sudoers-dropin  *-  *.*every rule names slot01 to slot24' "$OUT/big.out"
check "20 assigned: sudo-grants passes for the whole pool" \
	grep -q '^PASS  *sudo-grants  *-  *.*as each of the 24 slots of the pool' "$OUT/big.out"
check "20 assigned: no user id in the output" no_user_ids "$OUT/big.out" "$OUT/big.err"

# Stable: the same rows for the same slots, run after run, in text and JSON.
run_check big2
check_rc "again: check exits 0" 0 big2
awk '{ print $1, $2, $3 }' "$OUT/big.out" >"$OUT/big.rows"
awk '{ print $1, $2, $3 }' "$OUT/big2.out" >"$OUT/big2.rows"
check "again: the same checks for the same slots" cmp -s "$OUT/big.rows" "$OUT/big2.rows"
run_check bigjson --json
check_rc "--json: check exits 0" 0 bigjson
check "--json: the chain names the same sample, the other sudo rows the test slot" python3 - "$OUT/bigjson.out" "$SAMPLE" <<'EOF'
import json, sys
d = json.load(open(sys.argv[1]))
want = sys.argv[2].split()
for c in ("sudo-preflight", "sudo-env", "sudo-kill", "chain"):
    got = []
    for r in d["checks"]:
        if r["check"] == c and r["slot"] not in got:
            got.append(r["slot"])
    assert got == (want if c == "chain" else want[-1:]), (c, got)
s = [r for r in d["checks"] if r["check"] == "sudo-sample"]
assert len(s) == 1 and s[0]["status"] == "SKIP" and s[0]["slot"] is None and s[0]["fix"] is None, s
assert d["ok"] is True and d["skipped"] == 1, d["skipped"]
EOF

# A slot with limits of its own gets the chain too: pam_slots opens its session with them.
cp -p "$CONF" "$OUT/conf.good"
python3 - "$CONF" <<'EOF'
import json, sys
d = json.load(open(sys.argv[1]))
d["limits"] = {"slot07": {"nofile": 1024}}
open(sys.argv[1], "w").write(json.dumps(d, indent=2) + "\n")
EOF
run_check limits
check_rc "own limits: check exits 0" 0 limits
check "own limits: slot07 gets the chain" test "$(row_status limits chain slot07)" = PASS
check "own limits: but no sudo-preflight (the test slot's)" test -z "$(row_status limits sudo-preflight slot07)"
check "own limits: the sample is otherwise the same" \
	test "$(slots_with limits chain)" = "slot01 slot03 slot06 slot07 slot09 slot11 slot14 slot17 slot20 slot24"
check "own limits: the sample's row says why" grep -q 'sudo-sample .*each slot with limits of its own' "$OUT/limits.out"
cp -p "$OUT/conf.good" "$CONF"

# The drop-in edited by hand for slot07, outside the sample: no sudo row runs as slot07, yet
# the check fails, naming the file, the line and the fix.
SUDOERS_LINE=$(grep -n '^vstudio ALL = (slot01' "$SUDOERS" | head -n 1 | cut -d: -f1)
cp -p "$SUDOERS" "$OUT/sudoers.good"
sed -i '0,/ slot07,/s/ slot07,//' "$SUDOERS"
check "hand edit: slot07 is gone from the first rule" sh -c "! sed -n '${SUDOERS_LINE},$((SUDOERS_LINE + 1))p' '$SUDOERS' | grep -q slot07"
check "hand edit: visudo accepts the edited drop-in" visudo -cqf "$SUDOERS"
failing edit "hand edit" sudoers-dropin
check "hand edit: sudoers-dropin is FAIL" test "$(row_status edit sudoers-dropin)" = FAIL
check "hand edit: the FAIL names the file and the first differing line" \
	grep -q "^FAIL sudoers-dropin: $SUDOERS differs from what slots-provision writes at line $SUDOERS_LINE, column [0-9]*: it is \"" \
	"$OUT/edit.out"
check "hand edit: the fix is slots-provision" sh -c 'case "$1" in "slots-provision "*) exit 0 ;; esac; exit 1' _ "$FIX"
check "hand edit: sudo-grants names slot07" \
	grep -q "^FAIL sudo-grants: sudo does not let $SERVICE run /usr/bin/true, /usr/bin/kill as slot07 (1 of the 24 slots of the pool)" \
	"$OUT/edit.out"
check "hand edit: slot07 still gets no sudo row of its own" test -z "$(row_status edit chain slot07)"
check "hand edit: the sampled slots still pass" test "$(row_status edit chain slot06)" = PASS
"$SLOTS_PROVISION" --config "$CONF" >"$OUT/reprovision.out" 2>&1
check "hand edit: slots-provision rewrites the drop-in" grep -q "write sudoers drop-in $SUDOERS" "$OUT/reprovision.out"
check "hand edit: the drop-in is as before" cmp -s "$SUDOERS" "$OUT/sudoers.good"
run_check edit.fixed
check_rc "hand edit: after the printed fix, check exits 0" 0 edit.fixed

# A rule in another file that takes slot07 back: the drop-in is intact, sudo's listing is not.
printf '%s ALL = (slot07) NOPASSWD: !/usr/bin/true\n' "$SERVICE" >/etc/sudoers.d/zz-local
chmod 0440 /etc/sudoers.d/zz-local
check "taken back: visudo accepts the local rule" visudo -cqf /etc/sudoers.d/zz-local
failing takeback "taken back" sudo-grants
check "taken back: sudoers-dropin still passes" test "$(row_status takeback sudoers-dropin)" = PASS
check "taken back: sudo-grants names slot07" \
	grep -q "^FAIL sudo-grants: sudo does not let $SERVICE run /usr/bin/true as slot07 (1 of the 24 slots" \
	"$OUT/takeback.out"
check "taken back: the fix shows sudo's listing" sh -c 'test -n "$1" && printf "%s\n" "$1" | grep -qF "$2"' _ "$FIX" \
	"sudo -l -U $SERVICE"
rm /etc/sudoers.d/zz-local
run_check takeback.fixed
check_rc "taken back: without the rule, check exits 0" 0 takeback.fixed

# As the service: the same sample, sudo's listing of its own rules, the drop-in skipped.
chmod 0755 "$OUT"
runuser -u "$SERVICE" -- "$SLOTS_ADMIN" check >"$OUT/svc.out" 2>"$OUT/svc.err"
echo $? >"$OUT/svc.rc"
check_rc "as $SERVICE: check exits 0" 0 svc
check "as $SERVICE: the chain for the same sample" test "$(slots_with svc chain)" = "$SAMPLE"
check "as $SERVICE: sudo-kill as the test slot" test "$(slots_with svc sudo-kill)" = slot24
check "as $SERVICE: sudo-grants passes" grep -q "^PASS  *sudo-grants  *-  *sudo -n -l as $SERVICE" "$OUT/svc.out"

slots_done
