#!/bin/sh
# A mount point inside the slot's home at release (issue 19: no test made one): the emptying
# walk never enters another file system (what is mounted there is not the slot's to lose, and
# an unmount is the admin's call), so the release stops at step 4 with exit 1, names the mount
# point and the fix "unmount it", and leaves the slot pending; nothing inside the mount is
# touched.  Once it is unmounted, release --slot finishes and the home is empty.  A home that is
# a mount point itself is emptied in place and loses the slot's mode, ACL and attributes.
# A mount point in the user's tree (step 3) is walked around: the rest is given back.
. "$top_srcdir/tests/integration/release-lib.sh"

HOME1=$SROOT/home/slot01
as1() {
	setpriv --reuid=slot01 --regid=slot01 --init-groups "$@"
}

# --- a tmpfs mounted on a folder of the home ---
check "assign alice slot01" prints slot01 admin assign alice slot01
as1 sh -c "mkdir $HOME1/mnt; echo secret >$HOME1/.history"
mount -t tmpfs -o mode=0755 tmpfs "$HOME1/mnt" || { echo "Bail out! cannot mount a tmpfs in the home"; exit 99; }
echo kept >"$HOME1/mnt/inside"
check "the home holds alice's file before the release" test -s "$HOME1/.history"
check "the mount holds a file before the release" test -s "$HOME1/mnt/inside"

admin release alice >"$S/out" 2>"$S/err"
st=$?
cat "$S/out" "$S/err"
check "release with a mount point in the home exits 1" test "$st" = 1
check "it prints nothing on standard output" test ! -s "$S/out"
check "the message names slot01 and step 4" grep -q "cannot release slot01 (step 4 of 5" "$S/err"
check "the message names the mount point" grep -q "$HOME1/mnt.*mount point" "$S/err"
check "the message gives the fix: unmount it" grep -q "fix: unmount it" "$S/err"
table_entry slot01 >"$S/entry"
check "slot01 stays pending, without a user" \
	json_ok '(has("user") | not) and .cleanup == "pending"' "$S/entry"
check "what is inside the mount is untouched" test "$(cat "$HOME1/mnt/inside")" = kept
check "the mount is still there" mountpoint -q "$HOME1/mnt"
check_exit "assign never hands out the pending slot" 1 quiet admin assign bob slot01

umount "$HOME1/mnt"
check "release --slot slot01 finishes once it is unmounted" prints "slot01 released" admin release --slot slot01
check "the home is empty" test -z "$(ls -A "$HOME1")"
check "slot01 is free" slot_is_free slot01

# --- the home itself a mount point (an admin's tmpfs): emptied in place, and set back to a new
# home's owner, mode, no ACL and no attribute of the slot's (it cannot be swapped for a fresh one) ---
check "assign dave slot01" prints slot01 admin assign dave slot01
mount -t tmpfs -o mode=0700 tmpfs "$HOME1" || { echo "Bail out! cannot mount a tmpfs on the home"; exit 99; }
chown slot01:slot01 "$HOME1"
as1 sh -c "echo secret >$HOME1/.history; chmod 0777 $HOME1; setfacl -m u:slot02:rwx $HOME1"
# Whether this kernel's tmpfs holds user.* attributes at all (6.6 and later), tried as root.
xattrs=no
if python3 -c "import os, sys; os.setxattr(sys.argv[1], 'user.probe', b'1'); os.removexattr(sys.argv[1], 'user.probe')" \
	"$HOME1" 2>/dev/null; then
	xattrs=yes
	check "slot01 sets a user.* attribute on its home" \
		runuser -u slot01 -- python3 -c "import os, sys; os.setxattr(sys.argv[1], 'user.hostile', b'1')" "$HOME1"
fi
admin_run release dave
cat "$S/out" "$S/err"
check "release with the home a mount point exits 0" test "$st" = 0
check "the mount is still there" mountpoint -q "$HOME1"
check "the home is empty" test -z "$(ls -A "$HOME1")"
check "the home is slot01:slot01 0700" test "$(slots_stat "$HOME1")" = "slot01:slot01 700"
check "the slot's ACL entry on its home is gone" test -z "$(getfacl -cs "$HOME1" 2>&1)"
if [ "$xattrs" = yes ]; then
	check "the slot's user.* attribute on its home is gone" \
		test "$(python3 -c "import os, sys; print(os.listxattr(sys.argv[1]))" "$HOME1")" = "[]"
else
	echo "# this kernel's tmpfs holds no user.* attributes: their removal is not shown here"
fi
umount "$HOME1"

# --- a tmpfs mounted on a folder of the user's tree: step 3 walks around it ---
TREE=$DOCS/_users/carol
check "assign carol slot01" prints slot01 admin assign carol slot01
as1 sh -c "mkdir $TREE/mnt; echo made >$TREE/by-slot"
mount -t tmpfs -o mode=0777 tmpfs "$TREE/mnt" || { echo "Bail out! cannot mount a tmpfs in the tree"; exit 99; }
as1 sh -c "echo in >$TREE/mnt/by-slot-inside"
check "release with a mount point in the tree exits 0" prints "slot01 released" admin release carol
check "the rest of the tree is given back: by-slot is the service's" test "$(stat -c %U "$TREE/by-slot")" = svc
check "the mount is never entered: its file stays as it was" test "$(stat -c %U "$TREE/mnt/by-slot-inside")" = slot01
umount "$TREE/mnt"
echo "# after the unmount, the folder under the mount belongs to $(stat -c %U "$TREE/mnt")"

slots_done
