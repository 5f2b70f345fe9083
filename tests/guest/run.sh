#!/bin/sh
# Boots a Debian 12 guest (qemu, TCG) and runs a test script inside it: the image comes from
# tests/guest/image.sh (built once into WORKDIR, reused while its package list is the same),
# the script and the .debs in DEBDIR (and DEBDIR/next, the upgrade's) reach the guest through
# a read-only 9p share, and its output and exit status come back through a second one.  One
# boot per call.
#   sh tests/guest/run.sh WORKDIR DEBDIR [SCRIPT]     (SCRIPT: default tests/guest/e2e.sh)
# Exit: the script's status; 77 where qemu (or mmdebstrap) cannot be installed or run.
# SLOTS_GUEST_TIMEOUT: seconds the guest may run before qemu is killed (default 1200).
set -u
here=$(cd "$(dirname "$0")" && pwd)
[ $# -ge 2 ] || { echo "usage: sh tests/guest/run.sh WORKDIR DEBDIR [SCRIPT]" >&2; exit 2; }
work=$1 debs=$2 script=${3:-$here/e2e.sh}
timeout=${SLOTS_GUEST_TIMEOUT:-1200}

skip() { echo "SKIP: $*"; exit 77; }
[ "$(id -u)" = 0 ] || skip "needs root (mmdebstrap --mode=root builds the guest's root file system)"
for t in qemu-system-x86_64 mmdebstrap mkfs.ext4; do
	command -v $t >/dev/null || skip "$t is not installed (scripts/deps.sh installs it)"
done
# Can qemu start a TCG machine here at all?  (A real boot is the test itself.)
mkdir -p "$work" || exit 1
work=$(cd "$work" && pwd)
probe=$work/probe.pid
rm -f "$probe"
if ! qemu-system-x86_64 -machine none -accel tcg -display none -nodefaults -S -daemonize \
	-pidfile "$probe" >"$work/probe.log" 2>&1 </dev/null; then
	cat "$work/probe.log"
	skip "qemu-system-x86_64 cannot start a TCG machine here"
fi
[ -s "$probe" ] && kill "$(cat "$probe")" 2>/dev/null
rm -f "$probe"

deb_slots=$(ls "$debs"/slots_*.deb 2>/dev/null | head -n 1)
deb_pam=$(ls "$debs"/libpam-slots_*.deb 2>/dev/null | head -n 1)
[ -n "$deb_slots" ] && [ -n "$deb_pam" ] || { echo "not ok - no slots_*.deb and libpam-slots_*.deb in $debs"; exit 1; }

# The image gets the packages' runtime dependencies (names only: the suites carry the versions).
deps=$(for d in "$deb_slots" "$deb_pam"; do dpkg-deb -f "$d" Depends; echo; dpkg-deb -f "$d" Pre-Depends; echo; done |
	tr ',' '\n' | sed 's/|.*//; s/(.*)//; s/:any//; s/[[:space:]]//g' |
	grep -Ev '^$|^slots$|^libpam-slots$' | LC_ALL=C sort -u)
t0=$(date +%s)
img=$(sh "$here/image.sh" "$work" $deps | tee "$work/image.out" | tail -n 1)
if [ ! -f "$img/done" ]; then
	cat "$work/image.out"
	echo "not ok - the guest image could not be built"
	exit 1
fi
t1=$(date +%s)
echo "# guest image: $img ($((t1 - t0)) s)"

run=$work/run
rm -rf "$run"
mkdir -p "$run/in/debs" "$run/out"
cp "$script" "$run/in/test.sh" || exit 1
cp "$deb_slots" "$run/in/debs/slots.deb" && cp "$deb_pam" "$run/in/debs/libpam-slots.deb" || exit 1
# The next build, for the upgrade case (tests/package/package.sh makes it in DEBDIR/next).
if ls "$debs"/next/slots_*.deb "$debs"/next/libpam-slots_*.deb >/dev/null 2>&1; then
	mkdir -p "$run/in/debs/next"
	cp "$(ls "$debs"/next/slots_*.deb | head -n 1)" "$run/in/debs/next/slots.deb" &&
		cp "$(ls "$debs"/next/libpam-slots_*.deb | head -n 1)" "$run/in/debs/next/libpam-slots.deb" || exit 1
fi
# The tree's debian/ (its DEP-8 tests), for tests/guest/dep8.sh.
mkdir -p "$run/in/src" && cp -r "$here/../../debian" "$run/in/src/" || exit 1
chmod -R a+rX "$run/in"

qemu-system-x86_64 -accel tcg,thread=multi -cpu max,la57=off -machine q35 -smp 2 -m 2048 \
	-nodefaults -display none -no-reboot -nic none \
	-kernel "$img/vmlinuz" -initrd "$img/initrd.img" \
	-append "console=ttyS0 root=/dev/vda rw systemd.unified_cgroup_hierarchy=1 panic=-1 no_timer_check slots.guest=1" \
	-drive "file=$img/root.img,if=virtio,format=raw,snapshot=on" \
	-virtfs "local,path=$run/in,mount_tag=slots_in,security_model=none,readonly=on" \
	-virtfs "local,path=$run/out,mount_tag=slots_out,security_model=none" \
	-serial "file:$run/console.log" >"$run/qemu.log" 2>&1 </dev/null &
qpid=$!
echo "# qemu started (pid $qpid), timeout $timeout s"
waited=0
while kill -0 "$qpid" 2>/dev/null; do
	if [ "$waited" -ge "$timeout" ]; then
		kill "$qpid" 2>/dev/null
		sleep 2
		kill -9 "$qpid" 2>/dev/null
		echo "not ok - the guest did not power off within $timeout s (qemu pid $qpid killed)"
		tail -n 40 "$run/console.log" | sed 's/^/# console: /'
		[ -f "$run/out/output" ] && sed 's/^/# /' "$run/out/output" | tail -n 40
		exit 1
	fi
	sleep 1
	waited=$((waited + 1))
done
wait "$qpid"
qrc=$?
t2=$(date +%s)
echo "# the guest ran $((t2 - t1)) s (qemu exit $qrc); its state after boot: $(cat "$run/out/system-state" 2>/dev/null)"
if [ ! -f "$run/out/status" ]; then
	sed 's/^/# qemu: /' "$run/qemu.log"
	tail -n 60 "$run/console.log" | sed 's/^/# console: /'
	echo "not ok - the guest wrote no exit status (console: $run/console.log)"
	exit 1
fi
cat "$run/out/output"
rc=$(cat "$run/out/status")
[ "$rc" = 0 ] || echo "# the guest's test exited $rc (journal: $run/out/journal, console: $run/console.log)"
[ "$rc" = 0 ]
