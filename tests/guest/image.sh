#!/bin/sh
# Builds the booted guest's disk image: a Debian 12 root file system made by mmdebstrap
# (minbase, the host's mirror, bookworm with its -updates and -security suites), a small
# initrd, the guest's own kernel, and an ext4 image made with mkfs.ext4 -d.  The image is
# kept in DIR/image-KEY, KEY a hash of the package list and of this script, so a second run
# with the same packages reuses it.  Prints the image folder on its last line.
#   sh tests/guest/image.sh DIR [EXTRA-PACKAGE...]
set -eu
here=$(cd "$(dirname "$0")" && pwd)
dir=$1
shift
mkdir -p "$dir"
dir=$(cd "$dir" && pwd)

# What the guest boots with, what the end-to-end script uses (autopkgtest wants dpkg-dev to
# satisfy the tests' Depends offline), and (the arguments) what the
# packages under test depend on.
base="systemd systemd-sysv udev dbus libpam-systemd sudo linux-image-amd64 initramfs-tools kmod
      procps jq uidmap util-linux bsdutils e2fsprogs passwd libpam-runtime cron at autopkgtest dpkg-dev"
pkgs=$(printf '%s\n' $base "$@" | LC_ALL=C sort -u | tr '\n' ' ')
key=$( (echo "$pkgs"; cat "$0" "$here/guest-run" "$here/slots-guest.service") | sha256sum | cut -c1-16)
img=$dir/image-$key
if [ -f "$img/done" ]; then
	echo "# the guest image for this package list is there already: $img"
	echo "$img"
	exit 0
fi

# The mirror the host's apt uses, per suite (deb822 .sources or one-line sources.list).
mirror_of() {
	suite=$1
	uri=$(cat /etc/apt/sources.list.d/*.sources 2>/dev/null | awk -v s="$suite" '
		/^$/ { if (ok && u != "") { print u; exit } ok = 0; u = "" }
		/^URIs:/ { u = $2 }
		/^Suites:/ { for (i = 2; i <= NF; i++) if ($i == s) ok = 1 }
		END { if (ok && u != "") print u }' | head -n 1)
	[ -n "$uri" ] || uri=$(cat /etc/apt/sources.list 2>/dev/null | awk -v s="$suite" \
		'$1 == "deb" && $3 == s { print $2; exit }')
	if [ -z "$uri" ]; then
		case $suite in
		*-security) uri=http://deb.debian.org/debian-security ;;
		*) uri=http://deb.debian.org/debian ;;
		esac
	fi
	echo "deb $uri $suite main"
}

tmp=$dir/image-$key.tmp
rm -rf "$tmp"
mkdir -p "$tmp"
echo "# mmdebstrap: $pkgs"
# The setup hook makes the initrd small (only what finds the root disk); the customize hook
# puts in the unit that runs a test when the kernel command line asks for it, and copies the
# kernel and initrd out.
if ! mmdebstrap --variant=minbase --mode=root --format=directory \
	--include="$(echo "$pkgs" | tr ' ' ',' | sed 's/,$//')" \
	--setup-hook='mkdir -p "$1/etc/initramfs-tools/conf.d" "$1/usr/share/initramfs-tools/modules.d"' \
	--setup-hook='echo MODULES=list >"$1/etc/initramfs-tools/conf.d/slots-guest.conf"' \
	--setup-hook='printf "virtio_pci\nvirtio_blk\next4\n" >"$1/usr/share/initramfs-tools/modules.d/slots-guest"' \
	--customize-hook="install -m 0755 '$here/guest-run' \"\$1/usr/local/sbin/slots-guest-run\"" \
	--customize-hook="install -m 0644 '$here/slots-guest.service' \"\$1/etc/systemd/system/slots-guest.service\"" \
	--customize-hook='chroot "$1" systemctl enable slots-guest.service' \
	--customize-hook='echo slots-guest >"$1/etc/hostname"; : >"$1/etc/machine-id"' \
	--customize-hook='printf "127.0.0.1\tlocalhost\n127.0.1.1\tslots-guest\n" >"$1/etc/hosts"' \
	--customize-hook="cp -L \"\$1/vmlinuz\" '$tmp/vmlinuz' && cp -L \"\$1/initrd.img\" '$tmp/initrd.img'" \
	bookworm "$tmp/root" \
	"$(mirror_of bookworm)" "$(mirror_of bookworm-updates)" "$(mirror_of bookworm-security)" \
	>"$tmp/mmdebstrap.log" 2>&1; then
	tail -n 40 "$tmp/mmdebstrap.log"
	echo "image.sh: mmdebstrap failed (log: $tmp/mmdebstrap.log)" >&2
	exit 1
fi
echo "$pkgs" >"$tmp/packages"
truncate -s 3G "$tmp/root.img"
mkfs.ext4 -q -F -L slots-guest -d "$tmp/root" "$tmp/root.img" || { echo "image.sh: mkfs.ext4 -d failed" >&2; exit 1; }
rm -rf "$tmp/root"
rm -rf "$img"
mv "$tmp" "$img"
: >"$img/done"
# Images of other package lists are not booted again.
for old in "$dir"/image-*; do
	[ "$old" = "$img" ] || rm -rf "$old"
done
echo "$img"
