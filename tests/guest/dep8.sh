#!/bin/sh
# The DEP-8 tests (debian/tests) as Debian's CI and an admin run them, inside the booted
# Debian 12 guest (tests/guest/run.sh ... tests/guest/dep8.sh): the two .debs installed with
# dpkg, then autopkgtest on the tree's debian/ (the share's src/) with the null virt server,
# which runs the tests on this host, needs-root as they are.  Exits with autopkgtest's status
# (0: every test passed).
set -u
IN=${SLOTS_GUEST_IN:-/mnt/in}
export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin LANG=C.UTF-8
if ! dpkg -i "$IN/debs/slots.deb" "$IN/debs/libpam-slots.deb" >/tmp/install.log 2>&1; then
	sed 's/^/# /' /tmp/install.log
	echo "not ok - dpkg -i slots libpam-slots"
	exit 1
fi
echo "ok - dpkg -i slots libpam-slots"
# autopkgtest wants a writable source tree: the share is read-only.
rm -rf /tmp/src && mkdir -p /tmp/src && cp -r "$IN/src/debian" /tmp/src/
# The guest boots from a snapshot disk that is thrown away after the run: it is the reverted
# testbed that breaks-testbed asks for, which the null server cannot say of itself.
autopkgtest --no-built-binaries --ignore-restrictions=breaks-testbed --output-dir /tmp/dep8 /tmp/src -- null
rc=$?
[ -f /tmp/dep8/summary ] && sed 's/^/# summary: /' /tmp/dep8/summary
if [ "$rc" = 0 ]; then echo "ok - autopkgtest: every DEP-8 test passed"; else echo "not ok - autopkgtest exited $rc"; fi
exit "$rc"
