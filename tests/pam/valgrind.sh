#!/bin/sh
# 1,000 PAM sessions through pam_slots.so in one process under valgrind: no
# error and no leak (definite, indirect or possible) of the module's.  Not as
# root, pam-cycles leaves out the require_assigned sessions and says so.
set -eu
: "${top_builddir:?run through make check}"
bin="$top_builddir/tests/pam/pam-cycles"
mod="$top_builddir/pam/.libs/pam_slots.so"
cycles=${SLOTS_PAM_CYCLES:-1000}

command -v valgrind >/dev/null 2>&1 || { echo "SKIP: valgrind not installed"; exit 77; }
# valgrind and AddressSanitizer cannot share a process; the sanitizer run checks leaks itself.
[ -z "${SLOTS_SANITIZER:-}" ] || { echo "SKIP: sanitizer build (scripts/test.sh runs valgrind on the plain one)"; exit 77; }
test -f "$mod" || { echo "FAIL: $mod not built"; exit 1; }

work=$(mktemp -d "$top_builddir/tests/pam/valgrind.XXXXXX")
trap 'test -n "${KEEP:-}" || rm -rf "$work"' EXIT
mkdir "$work/pam.d"

# No nofile here: valgrind keeps the hard RLIMIT_NOFILE for itself and refuses
# any change of it (EPERM).  Values are at or below the current hard limits,
# so the test needs no privilege; every session of the one process asks for
# the same hard limits, since without CAP_SYS_RESOURCE they only go down.
nproc=$(awk '/^Max processes/ { print $4 }' /proc/self/limits)
test "$nproc" = unlimited && nproc=100000
cat > "$work/slots.conf" <<EOC
{
  "service": "svc",
  "slots": 4,
  "table": "$work/slots.json",
  "limits": {
    "default": {"nproc": {"soft": $((nproc / 2)), "hard": $nproc}, "core": 0, "fsize": "1G",
                "cpu": {"soft": 3600, "hard": 7200}},
    "slot02": {"fsize": {"soft": "512M", "hard": "1G"}, "nice": 1}
  }
}
EOC
cat > "$work/slots.json" <<EOC
{"version": 1, "slots": {"slot02": {"user": "u-1", "since": "2026-10-01T09:12:00Z"}}}
EOC
printf '{"service": "svc", "slots": 4, "limits": {"default": {"nofile": "lots"}}}\n' > "$work/bad.conf"
chmod 0644 "$work/slots.conf" "$work/bad.conf"

# As tests/pam/test-pam-slots.c: PAM_IGNORE shows as PAM_NO_MODULE_DATA.
service() {
	name=$1; shift
	{
		echo "session [success=1 ignore=ignore default=die] $mod $*"
		echo "session [default=die] pam_debug.so open_session=no_module_data close_session=no_module_data"
		echo "session required pam_permit.so"
	} > "$work/pam.d/$name"
}
service cycle "config=$work/slots.conf"
service cycle_req "config=$work/slots.conf" require_assigned
service cycle_bad "config=$work/bad.conf"

valgrind -q --error-exitcode=1 --keep-debuginfo=yes --leak-check=full --show-leak-kinds=definite,indirect,possible \
	--errors-for-leak-kinds=definite,indirect,possible --track-fds=no \
	"$bin" "$work/pam.d" "$cycles"
