#!/bin/sh
# A release that fails after step 1 leaves the slot "cleanup": "pending" (slots-admin(8),
# release): the message names the slot, the step, the reason and the fix; assign never hands the
# slot out; once the cause is gone, release --slot finishes it.  The failures are real ones: a
# read-only bind mount over the home (step 4) and over the user's tree (step 3).
. "$top_srcdir/tests/integration/release-lib.sh"

U1=$(uid_of slot01)
G1=$(gid_of slot01)
HOME1=$SROOT/home/slot01
as1() {
	setpriv --reuid=slot01 --regid=slot01 --init-groups "$@"
}

# pending_ok SLOT: the entry has no user, "cleanup": "pending" and a "released" time.
pending_ok() {
	table_entry "$1" >"$S/entry" || return 1
	json_ok '(has("user") | not) and .cleanup == "pending" and (.released | type == "string")' "$S/entry"
}

# --- step 4 fails: the home is a read-only mount ---
check "assign bob slot01" prints slot01 admin assign bob slot01
as1 sh -c "echo secret >$HOME1/.history; echo x >$DOCS/_users/bob/by-slot"
as1 sleep 1000 &
mount --bind "$HOME1" "$HOME1"
mount -o remount,bind,ro "$HOME1"
admin release bob >"$S/out" 2>"$S/err"
st=$?
cat "$S/err"
check "release with a read-only home exits 1" test "$st" = 1
check "the message names slot01 and step 4" grep -q "cannot release slot01 (step 4 of 5" "$S/err"
check "the message gives the reason (read-only file system)" grep -qi "read-only file system" "$S/err"
check "the message gives the fix: slots-admin release --slot slot01" \
	grep -q "fix:.*slots-admin release --slot slot01" "$S/err"
check "slot01 stays \"cleanup\": \"pending\", without a user" pending_ok slot01
admin_run status --json
check "status --json exits 0" test "$st" = 0
check "status --json shows it pending" json_ok '.slots[0].cleanup == "pending" and .pending == 1' "$S/out"
check "steps 2 and 3 ran: no process of slot01 is left" test "$(procs_of "$U1")" = 0
check "steps 2 and 3 ran: bob's tree is the service's" test "$(find "$DOCS/_users/bob" -gid "$G1" | wc -l)" = 0
admin assign carol slot01 >/dev/null 2>"$S/err"
st=$?
cat "$S/err"
check "assign of another user to the pending slot is refused (exit 1)" test "$st" = 1
check "the refusal says the cleanup is pending" grep -q "pending" "$S/err"
check "the refusal changed nothing" pending_ok slot01
check "assign without a slot skips the pending slot" prints slot02 admin assign carol
admin_run release bob
check "release bob again: exit 0" test "$st" = 0
check "release bob again: he holds no slot" grep -q 'holds no slot' "$S/out"
admin_run status --json
check "status --json exits 0 again" test "$st" = 0
check "the pending slot is not the test slot" json_ok '.test_slot == "slot03"' "$S/out"
admin_run status --held
check "status --held exits 0" test "$st" = 0
check "status --held names the pending and the assigned slot, each with what frees it" test "$(cat "$S/out")" = \
	"slot01's release is pending: slots-admin release --slot slot01
slot02 is assigned to carol: slots-admin release carol"
admin release --slot slot01 >/dev/null 2>&1
check "release --slot while the cause is still there fails again (exit 1)" test $? = 1
check "and the slot is still pending" pending_ok slot01

umount "$HOME1"
admin release --slot slot01 >"$S/out" 2>"$S/err"
st=$?
cat "$S/out" "$S/err"
check "after removing the cause, release --slot slot01 exits 0" test "$st" = 0
check "slot01 is free" slot_is_free slot01
admin_run status --held
check "status --held no longer names slot01" test "$(cat "$S/out")" = "slot02 is assigned to carol: slots-admin release carol"
check "the home is empty" test -z "$(ls -A "$HOME1")"
check "the home is slot01's 0700 still" test "$(stat -c '%U:%G %a' "$HOME1")" = "slot01:slot01 700"
check "slot01 can be assigned again" prints slot01 admin assign dave slot01
check "release dave" quiet admin release dave

# --- step 3 fails: bob's tree is a read-only mount; the table no longer names bob ---
check "assign bob slot01 again" prints slot01 admin assign bob slot01
as1 sh -c "mkdir $DOCS/_users/bob/new; echo y >$DOCS/_users/bob/new/f"
check "carol's tree (slot02) is slot02's" \
	sh -c "getfacl -cn -- '$DOCS/_users/carol' 2>/dev/null | grep -q '^user:$(uid_of slot02):rwx'"
carol_before=$(getfacl -Rcnp -- "$DOCS/_users/carol" 2>/dev/null; find "$DOCS/_users/carol" -printf '%p %u:%g %m\n')
mount --bind "$DOCS/_users/bob" "$DOCS/_users/bob"
mount -o remount,bind,ro "$DOCS/_users/bob"
admin release bob >/dev/null 2>"$S/err"
st=$?
cat "$S/err"
check "release with a read-only tree exits 1" test "$st" = 1
check "the message names step 3" grep -q "cannot release slot01 (step 3 of 5" "$S/err"
check "slot01 is pending" pending_ok slot01
check "slot01's files are still in bob's tree" test "$(find "$DOCS/_users/bob" -uid "$U1" | wc -l)" -gt 0
umount "$DOCS/_users/bob"
check "release --slot slot01 finishes it" quiet admin release --slot slot01
check "no entry of any tree is owned by slot01's uid" test "$(find "$DOCS" -uid "$U1" | wc -l)" = 0
check "no entry of any tree has slot01's gid" test "$(find "$DOCS" -gid "$G1" | wc -l)" = 0
check "carol's tree, held by slot02, is untouched (owners, modes, ACLs)" \
	test "$(getfacl -Rcnp -- "$DOCS/_users/carol" 2>/dev/null; find "$DOCS/_users/carol" -printf '%p %u:%g %m\n')" = "$carol_before"
out=$(runuser -u slot01 -- ls "$DOCS/_users/bob" 2>&1)
check "as slot01, listing bob's tree fails with EACCES" sh -c 'echo "$1" | grep -q "Permission denied"' _ "$out"
check "slot01 is free" slot_is_free slot01
# --- step 2 fails: a process acting as slot01 that slot01 cannot signal (real and saved uid
# root, effective uid slot01, like a root daemon working on the slot's behalf) ---
if command -v perl >/dev/null; then
	check "assign erin slot01" prints slot01 admin assign erin slot01
	perl -e '$> = shift; sleep 1000' "$U1" &
	stuck=$!
	check "the stand-in runs as slot01" wait_for euid_is "$stuck" "$U1"
	admin release erin >/dev/null 2>"$S/err"
	st=$?
	cat "$S/err"
	check "release with a process slot01 cannot kill exits 1" test "$st" = 1
	check "the message names step 2" grep -q "cannot release slot01 (step 2 of 5" "$S/err"
	check "the message names the surviving process" grep -q "process $stuck (perl)" "$S/err"
	check "slot01 is pending" pending_ok slot01
	kill "$stuck"
	wait "$stuck" 2>/dev/null
	check "once it is gone, release --slot slot01 finishes it" quiet admin release --slot slot01
	check "slot01 is free" slot_is_free slot01
else
	echo "# no perl: the case of a process that survives step 2 is not run"
fi
slots_done
