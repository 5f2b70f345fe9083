#!/bin/sh
# Ansible's check mode runs assign and release: the shipped playbook (data/slots-ansible.yml)
# through ansible-playbook on the check fixture in a private namespace, with --check (each
# command a dry run: nothing written, each item reported as the real run would change it), for
# real (the same items changed, the table changed), and again (nothing left to change).
. "$top_srcdir/tests/integration/lib.sh"
slots_need_root
command -v ansible-playbook >/dev/null || { echo "SKIP: ansible-playbook is not installed (ansible-core)"; exit 77; }
slots_enter_namespace "$@"
. "$top_srcdir/tests/integration/check-lib.sh"

check_fixture
NEW=dave.new
# Ansible keeps its temp files and facts in the scratch folder, never in root's home.
export HOME=$SLOTS_SCRATCH ANSIBLE_LOCAL_TEMP=$SLOTS_SCRATCH/.ansible-tmp ANSIBLE_NOCOLOR=1 \
	ANSIBLE_PYTHON_INTERPRETER=/usr/bin/python3 ANSIBLE_RETRY_FILES_ENABLED=0
vars=$(printf '{"slots_admin": "%s", "slots_assign": ["%s", "%s"], "slots_release": ["%s", "nobody.here"]}' \
	"$SLOTS_ADMIN" "$NEW" "$USER_A" "$USER_B")

# play NAME [--check]: the playbook against this host; its output in $OUT/NAME.out, its exit in NAME.rc.
play() {
	name=$1
	shift
	ansible-playbook -i localhost, -c local "$@" -e "$vars" "$top_srcdir/data/slots-ansible.yml" \
		>"$OUT/$name.out" 2>&1
	echo $? >"$OUT/$name.rc"
	sed "s/^/# $name: /" "$OUT/$name.out" | grep -E 'changed|ok:|fatal|failed=|ERROR' | cut -c1-160
}

# items NAME: each item's verdict in the run, "changed:ITEM" or "ok:ITEM", in order, on one line.
items() {
	sed -n 's/^\(changed\|ok\): \[localhost\] => (item=\(.*\))$/\1:\2/p' "$OUT/$1.out" | tr '\n' ' '
}

table_state() {
	{ sha256sum "$TABLE"; ls -la --time-style=+%s.%N "$(dirname "$TABLE")"; } | sha256sum
}

before=$(table_state)
play check --check
check "check mode: the play passes" test "$(cat "$OUT/check.rc")" = 0
check "check mode: a new user and a holder's release would change, the rest not" \
	test "$(items check)" = "changed:$NEW ok:$USER_A changed:$USER_B ok:nobody.here "
check "check mode: the table and its folder are unchanged" test "$(table_state)" = "$before"
check "check mode: $NEW holds no slot" sh -c '! "$1" status | grep -qF "$2"' _ "$SLOTS_ADMIN" "$NEW"

play real
check "the real run passes" test "$(cat "$OUT/real.rc")" = 0
check "the real run changes what check mode said it would" \
	test "$(items real)" = "changed:$NEW ok:$USER_A changed:$USER_B ok:nobody.here "
check "$NEW holds a slot now" sh -c '"$1" status | grep -qF "$2"' _ "$SLOTS_ADMIN" "$NEW"
check "$USER_B holds none" sh -c '! "$1" status | grep -qF "$2"' _ "$SLOTS_ADMIN" "$USER_B"

after=$(table_state)
play again --check
check "check mode after it: nothing would change" \
	test "$(items again) rc $(cat "$OUT/again.rc")" = "ok:$NEW ok:$USER_A ok:$USER_B ok:nobody.here  rc 0"
check "and the table is still as the real run left it" test "$(table_state)" = "$after"
play twice
check "a second real run changes nothing" \
	test "$(items twice) rc $(cat "$OUT/twice.rc")" = "ok:$NEW ok:$USER_A ok:$USER_B ok:nobody.here  rc 0"

# A refusal fails its task in check mode as in the real run: a user id slots refuses.
vars=$(printf '{"slots_admin": "%s", "slots_assign": ["bad/name"]}' "$SLOTS_ADMIN")
before=$(table_state)
play refused-check --check
play refused
# failed_item NAME: the play's failed items, and whether slots-admin's own reason came with them.
failed_item() {
	grep '^failed: \[localhost\] (item=' "$OUT/$1.out" | sed 's/ => .*invalid user id.*/ => invalid user id/; s/ => {.*/ => other/'
}
check "a refused assign fails its item with slots-admin's reason in check mode" \
	test "$(failed_item refused-check)" = "failed: [localhost] (item=bad/name) => invalid user id"
check "and for real, the same way" test "$(failed_item refused)" = "$(failed_item refused-check)"
check "the refusal is a failure of the play (exit 2)" test "$(cat "$OUT/refused.rc")" = 2
check "the refusal changed nothing" test "$(table_state)" = "$before"
slots_done
