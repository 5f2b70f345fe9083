#!/bin/sh
# slots-admin's answers at the edges (issue 19), on the check fixture in a private namespace:
# status of a user without a slot and of a slot outside the pool (refused, exit 1), status
# with no table yet (the WARN line and its fix), status when the name service fails for a
# slot (a warning; the slot shows as MISSING); assign into a tree holding 25 files with a
# second name (20 warnings, then how many more); assign, release and status when the service
# account cannot be looked up (exit 1, nothing changed).
. "$top_srcdir/tests/integration/lib.sh"
slots_need_root
slots_enter_namespace "$@"
. "$top_srcdir/tests/integration/check-lib.sh"

check_fixture
NSSFAIL_SO=$top_builddir/tests/provision/.libs/libnssfail.so
[ -f "$NSSFAIL_SO" ] || { echo "Bail out! missing $NSSFAIL_SO (make check builds it)"; exit 99; }

# --- status ---
"$SLOTS_ADMIN" status nobody-holds-this >"$OUT/st-user.out" 2>"$OUT/st-user.err"
rc=$?
check "status of a user without a slot: exit 1 (exit $rc)" test "$rc" = 1
check "status of a user without a slot: says so" grep -q "cannot show status: nobody-holds-this: the user holds no slot" "$OUT/st-user.err"
"$SLOTS_ADMIN" status slot09 >"$OUT/st-slot.out" 2>"$OUT/st-slot.err"
rc=$?
check "status of slot09 in a pool of 8: exit 1 (exit $rc)" test "$rc" = 1
check "status of slot09: the slot is outside the pool" grep -q "slot09: the slot is outside the pool" "$OUT/st-slot.err"
check "status of a slot: nothing on stdout when refused" test ! -s "$OUT/st-slot.out"

mv "$TABLE" "$OUT/table.away"
"$SLOTS_ADMIN" status >"$OUT/st-none.out" 2>"$OUT/st-none.err"
rc=$?
check "status without a table: exit 0 (exit $rc)" test "$rc" = 0
check "status without a table: every slot free" grep -qx "0 assigned, 0 pending, 8 free" "$OUT/st-none.out"
check "status without a table: the WARN line with the fix" \
	grep -qx "WARN table $TABLE does not exist -- fix: slots-provision creates it root:$SERVICE 0640" "$OUT/st-none.out"
mv "$OUT/table.away" "$TABLE"

# (not in /etc/passwd, so the enumeration does not list it; its lookup by name then fails)
cp -p /etc/passwd "$OUT/passwd.good"
sed -i '/^slot03:/d' /etc/passwd
SLOTS_TEST_NSS_FAIL=slot03 LD_PRELOAD=$NSSFAIL_SO "$SLOTS_ADMIN" status >"$OUT/st-nss.out" 2>"$OUT/st-nss.err"
rc=$?
cat "$OUT/passwd.good" >/etc/passwd
check "status while the lookup of slot03 fails: exit 0 (exit $rc)" test "$rc" = 0
check "status while a lookup fails: the warning" \
	grep -qx "slots-admin: warning: some slot account lookups failed; they show as missing" "$OUT/st-nss.err"
check "status while a lookup fails: slot03 shows as MISSING, slot02 not" \
	sh -c 'grep -Eq "^slot03 +- +MISSING " "$1" && grep -Eq "^slot02 +[0-9]+ +yes " "$1"' _ "$OUT/st-nss.out"

# --- assign: a tree with more files of a second name than the warnings show ---
U=many.links
install -d -m 2770 -o "$SERVICE" -g "$SERVICE" "$DOCS/_users/$U"
# (the other names on the tree's file system, the service's, as what the service puts in a
# user's tree is: a hard link cannot cross file systems; another account's would be copied)
mkdir -p "$SLOTS_SCRATCH/originals"
i=1
while [ $i -le 25 ]; do
	echo "file $i" >"$SLOTS_SCRATCH/originals/f$i"
	chown "$SERVICE" "$SLOTS_SCRATCH/originals/f$i"
	ln "$SLOTS_SCRATCH/originals/f$i" "$DOCS/_users/$U/f$i" || not_ok "linking f$i into the tree"
	i=$((i + 1))
done
check "the tree holds 25 files with a second name" test "$(find "$DOCS/_users/$U" -type f -links 2 | wc -l)" = 25
cp -p "$TABLE" "$OUT/table.before-assign"
"$SLOTS_ADMIN" assign "$U" >"$OUT/assign.out" 2>"$OUT/assign.err"
rc=$?
check "assign into a tree of 25 linked files: exit 0 (exit $rc)" test "$rc" = 0
check "assign prints the slot" grep -Eqx 'slot[0-9]+' "$OUT/assign.out"
check "assign warns about 20 of them" test "$(grep -c 'has 2 hard links: left alone' "$OUT/assign.err")" = 20
check "assign says how many more it left alone" grep -qx "slots-admin: warning: and 5 more entries left alone" "$OUT/assign.err"
check "the linked files were not changed" sh -c 'test "$(stat -c %G:%a "$1/f25")" = root:644' _ "$SLOTS_SCRATCH/originals"
"$SLOTS_ADMIN" release "$U" >"$OUT/release.out" 2>"$OUT/release.err"
rc=$?
check "release of that user: exit 0 (exit $rc)" test "$rc" = 0
check "release of that user: the warnings again, capped" grep -qx "slots-admin: warning: and 5 more entries left alone" "$OUT/release.err"

# --- release: a slot outside the pool, a slot whose account is gone, a lock file with two names ---
"$SLOTS_ADMIN" --slot slot09 release >"$OUT/rel9.out" 2>"$OUT/rel9.err"
rc=$?
check "release --slot slot09 in a pool of 8: exit 1 (exit $rc)" test "$rc" = 1
check "release --slot slot09: the slot is outside the pool" grep -q "the slot is outside the pool of 8 slots" "$OUT/rel9.err"
check "assign gone.account slot06" prints slot06 "$SLOTS_ADMIN" assign gone.account slot06
cp -p /etc/passwd "$OUT/passwd.good"
sed -i '/^slot06:/d' /etc/passwd
"$SLOTS_ADMIN" release gone.account >"$OUT/rel6.out" 2>"$OUT/rel6.err"
rc=$?
cat "$OUT/passwd.good" >/etc/passwd
check "release with the slot's account gone: exit 1 (exit $rc)" test "$rc" = 1
check "release with the slot's account gone: says so, with the fix" \
	sh -c 'grep -q "slot06: the slot account does not exist" "$1" && grep -q "fix: create it with slots-provision" "$1"' _ \
	"$OUT/rel6.err"
check "the slot is left pending" grep -A3 '"slot06"' "$TABLE" | grep -q pending
check "once the account is back, release --slot finishes" prints "slot06 released" "$SLOTS_ADMIN" --slot slot06 release
check "assign held.lock slot07" prints slot07 "$SLOTS_ADMIN" assign held.lock slot07
# (on the same mount as the table: a hard link cannot cross mounts)
ln "$TABLE.lock" /etc/lock.second-name || not_ok "linking the lock file"
# assign takes the slot's lock as release does, before any change: refused, the table as it was.
cp -p "$TABLE" "$OUT/table.before-lock"
"$SLOTS_ADMIN" assign held.lock slot07 >"$OUT/as7.out" 2>"$OUT/as7.err"
rc=$?
check "assign while the lock file has a second name: exit 1 (exit $rc)" test "$rc" = 1
check "assign while the lock file has a second name: refused, named" \
	grep -q "slots.json.lock: the lock file is not a plain file" "$OUT/as7.err"
check "assign while the lock file has a second name: no slot printed" test ! -s "$OUT/as7.out"
"$SLOTS_ADMIN" assign other.user >/dev/null 2>&1
check "a new assign then changes nothing in the table" cmp -s "$TABLE" "$OUT/table.before-lock"
"$SLOTS_ADMIN" release held.lock >"$OUT/rel7.out" 2>"$OUT/rel7.err"
rc=$?
check "release while the lock file has a second name: exit 1 (exit $rc)" test "$rc" = 1
check "release while the lock file has a second name: refused, named" \
	grep -q "slots.json.lock: the lock file is not a plain file" "$OUT/rel7.err"
check "slot07 still holds its user" grep -q '"held.lock"' "$TABLE"
rm /etc/lock.second-name
check "with one name again, release works" prints "slot07 released" "$SLOTS_ADMIN" release held.lock

# --- status and check to an output that cannot be written: exit 1 and said, never a silent pass ---
for form in "" --json; do
	# shellcheck disable=SC2086
	"$SLOTS_ADMIN" $form status >/dev/full 2>"$OUT/status-full.err"
	rc=$?
	check "status ${form:-(text)} to a full stdout: exit 1 (exit $rc)" test "$rc" = 1
	check "status ${form:-(text)} to a full stdout: said on stderr" \
		grep -q "cannot print the status: standard output: No space left on device" "$OUT/status-full.err"
done
for form in "" --json; do
	# shellcheck disable=SC2086
	"$SLOTS_ADMIN" $form check >/dev/full 2>"$OUT/check-full.err"
	rc=$?
	check "check ${form:-(text)} to a full stdout: exit 1 (exit $rc)" test "$rc" = 1
	check "check ${form:-(text)} to a full stdout: said on stderr" \
		grep -q "cannot print the self-check: standard output: No space left on device" "$OUT/check-full.err"
done

# --- the service account cannot be looked up: every command that needs it stops, changing nothing ---
cp -p "$TABLE" "$OUT/table.before-nss"
for cmd in "assign nss.user" "release $USER_A" "--slot slot05 release"; do
	# shellcheck disable=SC2086
	SLOTS_TEST_NSS_FAIL=$SERVICE LD_PRELOAD=$NSSFAIL_SO "$SLOTS_ADMIN" $cmd >"$OUT/nss-cmd.out" 2>"$OUT/nss-cmd.err"
	rc=$?
	check "$cmd with the service's lookup failing: exit 1 (exit $rc)" test "$rc" = 1
	check "$cmd with the service's lookup failing: says the lookup failed" \
		grep -q "$SERVICE.*Input/output error" "$OUT/nss-cmd.err"
	check "$cmd with the service's lookup failing: the table is unchanged" cmp -s "$TABLE" "$OUT/table.before-nss"
done
slots_done
