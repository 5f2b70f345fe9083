#!/bin/sh
# Release in a plain chroot, as image builds and CI run it: the chroot's root is a folder, not a
# mount point, so no mount namespace can make "/" private there.  The POSIX message queue part
# must still remove the slot's queues (or, where no mqueue can be mounted, say so in a note);
# it never leaves the slot pending.  The chroot shares /usr, /etc, /proc, /dev, /var/lib and the
# test's folders with the namespace through bind mounts below it; its own root stays a folder.
RELEASE_UID_MIN=47900
. "$top_srcdir/tests/integration/release-lib.sh"
[ -x "$IPC_HELPER" ] || { echo "SKIP: $IPC_HELPER is not built"; exit 77; }

R=$SLOTS_WORLD/chroot
mkdir -p "$R"
for d in usr etc proc dev var/lib run/slots-build "${S#/}" tmp; do mkdir -p "$R/$d"; done
chmod 1777 "$R/tmp"
for l in bin lib lib64 sbin; do [ -L "/$l" ] && ln -s "$(readlink "/$l")" "$R/$l"; done
for d in /usr /etc /proc /dev /var/lib /run/slots-build "$S"; do
	mount --rbind "$d" "$R$d" || { echo "Bail out! cannot bind $d into the chroot"; exit 99; }
done
check "the chroot's root is not a mount point" sh -c "! mountpoint -q '$R'"
in_root() {
	chroot "$R" "$@"
}

check "assign alice slot01" prints slot01 admin assign alice slot01
# A POSIX message queue of the slot, made in this IPC namespace (the chroot shares it), seen
# through a private mqueue mount of its own.
mq_list() {
	unshare --mount sh -c 'mount -t mqueue mqueue "$1" && ls -n "$1"' _ "$S/mq"
}
mkdir -p "$S/mq"
check "as slot01, SysV objects and a POSIX message queue" quiet runuser -u slot01 -- "$IPC_HELPER" chroot-q
check "the queue is there before the release" test "$(mq_list | grep -c chroot-q)" = 1

in_root "$SLOTS_ADMIN" --config "$CONF" release alice >"$S/out" 2>"$S/err"
st=$?
cat "$S/out" "$S/err"
check "release in the plain chroot exits 0" test "$st" = 0
check "it says slot01 released" grep -qx "slot01 released" "$S/out"
check "slot01 is free, not pending" slot_is_free slot01
check "the slot's queue is gone" test "$(mq_list | grep -c chroot-q)" = 0
check "the chroot's mounts are as they were (no mqueue left behind)" \
	sh -c "! grep -q ' $R[^ ]* .* mqueue ' /proc/self/mountinfo"
slots_done
