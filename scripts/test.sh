#!/bin/sh
# The whole test suite, as CI runs it: dependencies, a -Werror build with "make check",
# then the unit, integration and PAM tests again under AddressSanitizer + UBSan, then
# valgrind over the unit and PAM tests, then the libFuzzer targets (SLOTS_FUZZ_SECONDS
# each, default 60), the Debian package, a booted Debian 12 guest with those packages (qemu),
# and the demo started the way a newcomer's shell may
# start it (umask 077, few open files, a bare environment).  Run as root on Debian 12, or with sudo (root tests run in private
# mount namespaces and change nothing on the host).  docs/testing.md says what it needs.
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
out=${SLOTS_BUILD:-$top/build-test}
jobs=$(nproc 2>/dev/null || echo 2)
# Slot accounts run programs of the build (as the tests' attackers): whatever the caller's
# umask, what the build makes must be readable and executable by them.
umask 022

# Under sudo, what the run makes in the checkout goes back to the user who cloned it.
. "$top/scripts/sudo-give-back.sh"
give_back() { slots_give_back "$top" "$out"; }
trap give_back EXIT

sh "$top/scripts/deps.sh"
(cd "$top" && ./autogen.sh >/dev/null)

step() { printf '\n=== %s\n' "$*"; }

run_check() {
	# make check prints each test's result; on failure show the logs of the failed ones.
	if ! make -C "$1" -j"$jobs" check; then
		find "$1" -name '*.log' ! -name config.log ! -name test-suite.log | while IFS= read -r log; do
			grep -qE '^:test-result: (FAIL|ERROR)' "${log%.log}.trs" 2>/dev/null && { echo "--- $log"; tail -n 60 "$log"; }
		done
		return 1
	fi
	sh "$top/tests/skips.sh" "$1"
}

step "build with -Werror and run make check"
rm -rf "$out/plain" && mkdir -p "$out/plain"
(cd "$out/plain" && "$top/configure" -q --enable-werror)
make -C "$out/plain" -j"$jobs" >/dev/null
run_check "$out/plain"

step "AddressSanitizer + UndefinedBehaviorSanitizer: make check again"
rm -rf "$out/asan" && mkdir -p "$out/asan"
san="-fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer -g -O1"
(cd "$out/asan" && "$top/configure" -q --enable-werror CFLAGS="$san" LDFLAGS="-fsanitize=address,undefined")
make -C "$out/asan" -j"$jobs" >/dev/null
# nss_wrapper and pam_wrapper are preloaded in some tests: ASan must not insist on coming first.
(
	export ASAN_OPTIONS=verify_asan_link_order=0:detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1
	export SLOTS_SANITIZER=1
	# check runs sudo with an environment of its own: sudo loads the plain build's pam_slots.
	export SLOTS_SUDO_PAM_MODULE=$out/plain/pam/.libs/pam_slots.so
	run_check "$out/asan"
)

step "valgrind over the unit and PAM tests"
SLOTS_BUILD_DIR=$out/plain sh "$top/tests/valgrind.sh"

step "libFuzzer: the config, table and limit parsers, ${SLOTS_FUZZ_SECONDS:-60} s each (tests/fuzz/run.sh)"
# A crash, a sanitizer report, a broken invariant or a leak fails; 77: clang is missing.
fuzz_rc=0
SLOTS_FUZZ_DIR=$out/fuzz sh "$top/tests/fuzz/run.sh" "${SLOTS_FUZZ_SECONDS:-60}" || fuzz_rc=$?
[ "$fuzz_rc" = 0 ] || [ "$fuzz_rc" = 77 ] || exit 1

# ---- the Debian package (issue 16): a step of its own, the build takes minutes of CPU ----
step "Debian package: dpkg-buildpackage, lintian, install into a throwaway root, the demo, purge"
# tests/package/package.sh; 77: it cannot make the namespaces it needs.
pkg_rc=0
sh "$top/tests/package/package.sh" "$out/package" || pkg_rc=$?
[ "$pkg_rc" = 0 ] || [ "$pkg_rc" = 77 ] || exit 1
# ---- end of the Debian package ----

# ---- a booted Debian 12 guest with the .debs of the step above ----
step "a booted Debian 12 guest: the .debs with dpkg, systemd slices, real sudo, the timer, an apt upgrade, purge; then autopkgtest (tests/guest/run.sh)"
# 77: qemu (or mmdebstrap) cannot be installed or run here; the reason is printed.
guest_rc=0
if [ "$pkg_rc" = 77 ]; then
	echo "SKIP: the package step was skipped, there are no .debs to boot with"
else
	sh "$top/tests/guest/run.sh" "$out/guest" "$out/package" || guest_rc=$?
	# A second boot of the same image: the DEP-8 tests (debian/tests) through autopkgtest.
	if [ "$guest_rc" = 0 ]; then
		sh "$top/tests/guest/run.sh" "$out/guest" "$out/package" "$top/tests/guest/dep8.sh" || guest_rc=$?
	fi
fi
[ "$guest_rc" = 0 ] || [ "$guest_rc" = 77 ] || exit 1
# ---- end of the booted guest ----

# ---- the README's other command: the demo, started from a shell as odd as a newcomer's ----
step "the demo (scripts/demo.sh) under umask 077, 256 open files and a bare environment"
demo_rc=0
# dash, Debian's sh, has ulimit -n.
# shellcheck disable=SC3045
(umask 077 && ulimit -n 256 && env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root SLOTS_BUILD="$out/demo" \
	sh "$top/scripts/demo.sh") >"$out/demo.log" 2>&1 || demo_rc=$?
if [ "$demo_rc" != 0 ] || ! grep -q '== Done: the host was not changed' "$out/demo.log"; then
	tail -n 40 "$out/demo.log"
	echo "scripts/demo.sh: exit $demo_rc, or no closing line (the whole log: $out/demo.log)"
	exit 1
fi
echo "ok - the demo ran to its end ($(grep -c '^\$ ' "$out/demo.log") commands shown)"

step "all test runs passed"
