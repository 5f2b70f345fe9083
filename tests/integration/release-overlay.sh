#!/bin/sh
# Release where slots_root lies on an overlayfs (a container's root, an image provisioned with
# --root and run on an overlay), its upper layer inside /tmp.  Two ways that went wrong:
# the slots' folders came from the lower layer, where a folder cannot be renamed without
# redirect_dir (EXDEV), so the fresh folder could not be swapped in; and the walk of /tmp
# for the slot's files went down into the overlay's layers and removed the slot's folders
# beneath the mounted overlay.  Release must finish clean, the slot's file in /tmp must go,
# and the layers of the mounted overlay must be left to the overlay.
. "$top_srcdir/tests/integration/release-lib.sh"

# The provisioned folders become the lower layer; what release changes lands in /tmp.
L=/tmp/.slots-ovl
mkdir -p "$L/upper" "$L/work"
mount -t overlay overlay -o "lowerdir=/var/lib/slots,upperdir=$L/upper,workdir=$L/work" /var/lib/slots ||
	{ echo "SKIP: cannot mount an overlay on /var/lib/slots"; exit 77; }
HOME1=$SROOT/home/slot01
as1() {
	setpriv --reuid=slot01 --regid=slot01 --init-groups "$@"
}

check "assign alice slot01" prints slot01 admin assign alice slot01
as1 sh -c "echo secret >$HOME1/.history; mkdir $HOME1/sub; echo x >$HOME1/sub/f; echo t >/tmp/slot01-file"
check "the home's file landed in the overlay's upper layer" test -s "$L/upper/svc/home/slot01/.history"
admin_run release alice
cat "$S/out" "$S/err"
check "release on the overlay exits 0" test "$st" = 0
check "slot01 is free" slot_is_free slot01
for kind in home state run; do
	check "$kind/slot01 is slot01:slot01 0700" \
		test "$(stat_all "$SROOT/$kind/slot01")" = "$(uid_of slot01):$(gid_of slot01) 700 "
	check "$kind/slot01 is empty" test -z "$(ls -A "$SROOT/$kind/slot01")"
	check "$kind/slot02, another slot's, is untouched" \
		test "$(stat_all "$SROOT/$kind/slot02")" = "$(uid_of slot02):$(gid_of slot02) 700 "
done
check "the slot's file in /tmp is gone" test ! -e /tmp/slot01-file
check "no name of release's own is left" test -z "$(find "$SROOT" -name '.slot*' -print -quit)"
check "the next assign gets slot01" prints slot01 admin assign bob slot01
check "and its home is empty" test -z "$(ls -A "$HOME1")"
check "release of bob on the overlay finishes" prints "slot01 released" admin release bob
slots_done
