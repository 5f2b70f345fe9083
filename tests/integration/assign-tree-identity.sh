#!/bin/sh
# A slot's identity handed on through a user's tree, each attack made as the attacker (runuser
# or setpriv with the borrowed ids), on a provisioned host in private namespaces:
#   1 a process with uid slot02 and the egid slot01 (a set-gid copy slot01 left) reads the tree
#     assign gave slot01, then plants a slot02:slot01 2755 file in /var/tmp that must not
#     outlive release
#   2 slot01 leaves a 6755 file with a second name in its user's tree
#   3 a run as slot03 that kept the service's groups (sudo -P) reads a released tree
RELEASE_POOL=3
RELEASE_SHARED=Workflow
. "$top_srcdir/tests/integration/release-lib.sh"

TREE=$DOCS/_users/alice
# borrowed UID GID CMD...: CMD as uid UID with gid GID and no other group (a set-gid program's run).
borrowed() {
	u=$1 g=$2
	shift 2
	setpriv --reuid "$u" --regid "$g" --clear-groups -- "$@"
}
# no_setid PATH: PATH has neither a set-user-ID nor a set-group-ID bit.
no_setid() {
	[ $(($(stat -c '0%a' "$1") & 06000)) -eq 0 ]
}
# kept_gone: /var/tmp/kept is gone, or no longer a set-gid file of slot01's group.
kept_gone() {
	[ ! -e /var/tmp/kept ] || no_setid /var/tmp/kept || [ "$(stat -c %G /var/tmp/kept)" != slot01 ]
}

check "assign alice slot01" prints slot01 admin assign alice slot01
runuser -u slot01 -- sh -c "echo 'alice doc' >'$TREE/doc' && chmod 0660 '$TREE/doc' && mkdir '$TREE/sub'"
check "slot01 can read and write its user's tree" runuser -u slot01 -- sh -c "cat '$TREE/doc' && echo more >>'$TREE/doc'"

# --- 1: the tree rests on slot01's uid, never on its group ---
borrowed slot02 slot01 cat "$TREE/doc" >"$S/borrowed.out" 2>&1
st=$?
check "a process with uid slot02 and egid slot01 cannot read alice's document" test "$st" != 0
borrowed slot02 slot01 sh -c "echo planted >'$TREE/planted'" 2>/dev/null
check "nor plant a file in alice's tree" test ! -e "$TREE/planted"
rm -f "$TREE/planted"
check "the tree grants slot01 by uid (an ACL entry with its default)" \
	sh -c "getfacl -cn -- '$TREE' 2>/dev/null | grep -qx 'user:$(uid_of slot01):rwx' && getfacl -cnd -- '$TREE' 2>/dev/null | grep -qx 'user:$(uid_of slot01):rwx'"
check "the tree's owning group has no access" sh -c "getfacl -cn -- '$TREE' 2>/dev/null | grep -qx 'group::---'"
# user_tree_row: the status of check's user-tree row for slot01; check's output in $S/check.
user_tree_row() {
	admin check >"$S/check" 2>&1
	awk '$2 == "user-tree" && $3 == "slot01" { print $1; exit }' "$S/check"
}
check "check's user-tree row for slot01 passes on the uid's grant" test "$(user_tree_row)" = PASS
chgrp slot01 "$TREE" && chmod 2770 "$TREE" && setfacl -b "$TREE"
check "the old grant to group slot01 (2770, no ACL) FAILs the row" test "$(user_tree_row)" = FAIL
check "the row says the uid has no entry" grep -q "does not give slot01 rwx by its uid" "$S/check"
check "the fix is the setfacl line" grep -q "setfacl -m u:slot01:rwx" "$S/check"
check "the same assign repairs it" prints slot01 admin assign alice slot01
check "the row passes again" test "$(user_tree_row)" = PASS
borrowed slot02 slot01 sh -c "cp /bin/true /var/tmp/kept && chmod 2755 /var/tmp/kept"
check "the borrowed egid made a slot02:slot01 2755 file in /var/tmp" \
	test "$(stat -c '%U:%G %a' /var/tmp/kept)" = "slot02:slot01 2755"
WF=$DOCS/Workflow
# (slot02 reaches the shared folder through slotshared; the folder's set-gid bit gives new files
# that group, so the borrowed egid hands its own over with chgrp)
setpriv --reuid slot02 --regid slot01 --groups slotshared -- \
	sh -c "cp /bin/true '$WF/kept' && chgrp slot01 '$WF/kept' && chmod 2755 '$WF/kept'"
check "and a slot02:slot01 2755 file in the shared folder" test "$(stat -c '%U:%G %a' "$WF/kept")" = "slot02:slot01 2755"
runuser -u slot01 -- sh -c "cp /bin/true '$WF/wtool' && chmod 4755 '$WF/wtool' && ln '$WF/wtool' '$WF/wtool2'"
check "slot01 left a 4755 file with two names in the shared folder" test "$(stat -c '%U %a %h' "$WF/wtool")" = "slot01 4755 2"

# --- 2: a set-id file with two names ---
runuser -u slot01 -- sh -c "cp /bin/true '$TREE/tool' && chmod 6755 '$TREE/tool' && ln '$TREE/tool' '$TREE/sub/tool2'"
check "slot01 left a 6755 file with two names" test "$(stat -c '%U %a %h' "$TREE/tool")" = "slot01 6755 2"

admin release alice >"$S/out" 2>"$S/err"
st=$?
check "release alice fails on the two-name file of slot01 in the shared folder (exit 1)" test "$st" = 1
check "it names the file and its links" grep -q "wtool.*has 2 links" "$S/err"
check "the two-name set-id file in the shared folder lost its bit all the same" no_setid "$WF/wtool2"
rm -f "$WF/wtool2"
check "once the other name is gone, release --slot slot01 finishes" quiet admin release --slot slot01
check "the two-name file keeps no set-id bit" no_setid "$TREE/tool"
check "nor its other name (the same inode)" no_setid "$TREE/sub/tool2"
check "the set-gid file of slot01's group in /var/tmp did not outlive release" kept_gone
check "the shared folder's slot02:slot01 2755 file lost the bit and the group" \
	test "$(stat -c '%U:%G %a' "$WF/kept")" = "slot02:svc 750"

# --- 3: a released tree, read with the service's groups kept (sudo -P) ---
setpriv --reuid slot03 --regid slot03 --groups svc -- cat "$TREE/doc" >"$S/p.out" 2>&1
st=$?
check "a run as slot03 with the service's group cannot read the released document" test "$st" != 0
setpriv --reuid slot03 --regid slot03 --groups svc -- sh -c "echo planted >'$TREE/planted'" 2>/dev/null
check "nor plant a file in the released tree" test ! -e "$TREE/planted"
check "the released tree is the service's with group bits closed" \
	test "$(stat -c '%U:%G %a' "$TREE" "$TREE/doc" | tr '\n' ' ')" = "svc:svc 700 svc:svc 600 "
check "no ACL entry names slot01 after release" sh -c "! getfacl -Rcnp -- '$TREE' 2>/dev/null | grep -q ':$(uid_of slot01):'"

# --- the next assign hands the two-name file on with no set-id bit ---
check "assign bob slot02" prints slot02 admin assign bob slot02
check "assign carol slot01" prints slot01 admin assign carol slot01
check "alice's tree still keeps no set-id file" no_setid "$TREE/tool"
rm -f /var/tmp/kept

slots_done
