# shellcheck shell=sh
# Shared helpers for the shell tests.  Source it; it needs $top_builddir and $top_srcdir
# (set by "make check"; when run by hand, they default to the current and the script's folder).

: "${top_builddir:=$(pwd)}"
: "${top_srcdir:=$(cd "$(dirname "$0")/../.." && pwd)}"
SLOTS_ADMIN="$top_builddir/slots-admin"
SLOTS_PROVISION="$top_builddir/slots-provision"
export top_builddir top_srcdir SLOTS_ADMIN SLOTS_PROVISION

# Test accounting: every check counts; the script's exit status says whether all passed.
slots_passed=0
slots_failed=0

ok() {
	slots_passed=$((slots_passed + 1))
	echo "ok - $*"
}

not_ok() {
	slots_failed=$((slots_failed + 1))
	echo "not ok - $*"
}

# check "description" command...: passes when the command exits 0.
check() {
	desc=$1
	shift
	if "$@"; then ok "$desc"; else not_ok "$desc"; fi
}

# prints WANT command...: true when the command exits 0 and its standard output is exactly WANT
# (for check: a product's output compared inside "test" would drop its exit status).
prints() {
	prints_want=$1
	shift
	prints_got=$("$@") || return 1
	[ -n "$prints_want" ] && [ "$prints_got" = "$prints_want" ]
}

# quiet command...: the command with its standard output thrown away (inside check or
# check_exit, whose own ok/not ok line must still show).
quiet() {
	"$@" >/dev/null
}

# wait_for command...: runs the command every 0.05 s until it exits 0, for at most 20 s, and
# exits as it last did: a background process is up, or gone, before the step that needs it (a
# fixed sleep is too short on a loaded machine).
wait_for() {
	wait_for_n=0
	until "$@"; do
		wait_for_n=$((wait_for_n + 1))
		[ $wait_for_n -lt 400 ] || return 1
		sleep 0.05
	done
}

# slots_syslog_to LOG: /dev becomes a copy on tmpfs (inside the namespace; the host's /dev is
# untouched) whose /dev/log is a receiver appending each datagram to LOG as one line; its pid
# is $slots_syslog_pid.  Fails unless the receiver listens.
slots_syslog_to() {
	slots_dev=$SLOTS_SCRATCH/dev
	mkdir "$slots_dev" && mount -t tmpfs -o mode=0755 tmpfs "$slots_dev" || return 1
	cp -a /dev/. "$slots_dev/" 2>/dev/null
	for m in pts shm mqueue; do
		if mountpoint -q "/dev/$m"; then
			mkdir -p "$slots_dev/$m" && mount --bind "/dev/$m" "$slots_dev/$m"
		fi
	done
	rm -f "$slots_dev/log"
	python3 -c '
import os, socket, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
s.bind(sys.argv[1])
os.chmod(sys.argv[1], 0o666)
with open(sys.argv[2], "ab", buffering=0) as f:
    while True:
        f.write(s.recv(65536) + b"\n")' "$slots_dev/log" "$1" &
	# shellcheck disable=SC2034 # for the caller, which stops it
	slots_syslog_pid=$!
	wait_for test -S "$slots_dev/log" && mount --rbind "$slots_dev" /dev && test -S /dev/log
}

# euid_is PID UID: the process runs with effective uid UID.
euid_is() {
	[ "$(awk '$1 == "Uid:" { print $3 }' "/proc/$1/status" 2>/dev/null)" = "$2" ]
}

# check_fails "description" command...: passes when the command exits non-zero.
check_fails() {
	desc=$1
	shift
	if "$@"; then not_ok "$desc"; else ok "$desc"; fi
}

# check_exit "description" STATUS command...: passes when the command exits with STATUS.
check_exit() {
	desc=$1
	want=$2
	shift 2
	"$@"
	got=$?
	if [ "$got" = "$want" ]; then ok "$desc"; else not_ok "$desc (exit $got, want $want)"; fi
}

# usage_is NAME PROGRAM MESSAGE ARGS...: PROGRAM ARGS... is a usage error: exit 2, nothing on
# stdout, and on stderr the first line "<program's name>: MESSAGE" (MESSAGE "": any, as
# getopt's own).  Its output stays in $OUT/NAME.out and $OUT/NAME.err.
usage_is() {
	uname=$1 uprog=$2 umsg=$3
	shift 3
	"$uprog" "$@" >"$OUT/$uname.out" 2>"$OUT/$uname.err"
	urc=$?
	check "$uname: exit 2 (exit $urc)" test "$urc" = 2
	check "$uname: nothing on stdout" test ! -s "$OUT/$uname.out"
	check "$uname: something on stderr" test -s "$OUT/$uname.err"
	if [ -n "$umsg" ]; then
		check "$uname: says \"$umsg\"" test "$(head -n 1 "$OUT/$uname.err")" = "$(basename "$uprog"): $umsg"
	fi
}

# Closing line and exit status for the test driver.
slots_done() {
	echo "$slots_passed passed, $slots_failed failed"
	[ "$slots_failed" = 0 ]
	exit $?
}

# Skips (77) unless the script runs as root; tests that need root create what they need
# inside a private mount namespace and change nothing on the host.
slots_need_root() {
	if [ "$(id -u)" != 0 ]; then
		echo "SKIP: needs root (run make check as root, or in CI)"
		exit 77
	fi
	if ! unshare --mount --pid --ipc --fork --mount-proc true 2>/dev/null; then
		echo "SKIP: cannot create mount, PID and IPC namespaces (unshare)"
		exit 77
	fi
}

slots_ns_fail() {
	echo "ERROR: namespace setup: $*; stopping before anything touches the host" >&2
	exit 99
}

# Re-runs the calling script inside private mount, PID and IPC namespaces, once.  In there:
# a copy of /etc is bind-mounted over /etc (never a single file: rename over a
# bind-mounted file fails with EBUSY), /tmp, /var/tmp, /dev/shm, /run and /var/lib/slots
# are private tmpfs mounts, and /var/lib is an overlay.  The build folder is bind-mounted at
# /run/slots-build (top_builddir points there), so slot accounts can run its programs
# whatever the modes of the folders above the checkout, and a checkout under /tmp stays
# visible.  Usage, at the top of a test: slots_enter_namespace "$@"
slots_enter_namespace() {
	if [ -z "${SLOTS_IN_NAMESPACE:-}" ]; then
		# Slot accounts run programs of the build: a build made under umask 077 keeps them out.
		if [ -f "$top_builddir/slots-admin" ] && [ -z "$(find "$top_builddir/slots-admin" -perm -o+x)" ]; then
			echo "SKIP: $top_builddir/slots-admin is not executable by other accounts (built under" \
				"umask $(umask)?): slot accounts run the build's programs; rebuild under umask 022"
			exit 77
		fi
		SLOTS_HOST_BUILDDIR=$(cd "$top_builddir" && pwd -P) || slots_ns_fail "no build folder $top_builddir"
		SLOTS_HOST_SRCDIR=$(cd "$top_srcdir" && pwd -P) || slots_ns_fail "no source folder $top_srcdir"
		export SLOTS_HOST_BUILDDIR SLOTS_HOST_SRCDIR
		# PID and IPC namespaces too: a release's kill(-1) as a slot uid and its IPC removal
		# reach only this test's processes, never the host's or another test's.
		SLOTS_IN_NAMESPACE=1 exec unshare --mount --propagation private --pid --ipc --fork --mount-proc \
			sh "$0" "$@"
	fi
	# Any failure here is a hard error (99): a test must never go on against the host's /etc.
	# The fixtures the tests make (folders, configs, the /var/lib layer) are meant for other
	# accounts to read: whatever umask the caller had, they are made under 022 (the commands'
	# own independence from the umask is tested in newcomer.sh).
	umask 022
	mount -t tmpfs -o mode=0755 tmpfs /run || slots_ns_fail "cannot mount a tmpfs on /run"
	mkdir -p /run/slots-build /run/.slots-hold-src /run/.slots-hold-build
	mount --bind "$SLOTS_HOST_BUILDDIR" /run/slots-build || slots_ns_fail "cannot bind the build folder"
	for d in /tmp /var/tmp /dev/shm; do
		# The checkout and build folders below $d (a clone in /tmp) are carried into the new $d.
		held=
		for p in "$SLOTS_HOST_SRCDIR" "$SLOTS_HOST_BUILDDIR"; do
			case "$p/" in "$d"/*) ;; *) continue ;; esac
			case "$p/" in "$held"/*) [ -n "$held" ] && continue ;; esac
			hold=/run/.slots-hold-src
			[ "$p" = "$SLOTS_HOST_SRCDIR" ] || hold=/run/.slots-hold-build
			mount --bind "$p" "$hold" || slots_ns_fail "cannot hold $p"
			held=$p
		done
		mount -t tmpfs -o mode=1777 tmpfs "$d" || slots_ns_fail "cannot mount a tmpfs on $d"
		for p in "$SLOTS_HOST_SRCDIR" "$SLOTS_HOST_BUILDDIR"; do
			hold=/run/.slots-hold-src
			[ "$p" = "$SLOTS_HOST_SRCDIR" ] || hold=/run/.slots-hold-build
			mountpoint -q "$hold" || continue
			mkdir -p "$p" && mount --move "$hold" "$p" || slots_ns_fail "cannot keep $p"
		done
	done
	# From here on the build folder is /run/slots-build: slot accounts can reach its programs
	# whatever the modes of the folders above the checkout.  Paths computed before still work.
	top_builddir=/run/slots-build
	SLOTS_ADMIN=$top_builddir/slots-admin
	SLOTS_PROVISION=$top_builddir/slots-provision
	export top_builddir SLOTS_ADMIN SLOTS_PROVISION
	[ -x "$SLOTS_ADMIN" ] || slots_ns_fail "$SLOTS_ADMIN is not there after the mounts"
	[ -f "$top_srcdir/tests/integration/lib.sh" ] || slots_ns_fail "$top_srcdir is not there after the mounts"
	# The copy lives in the namespace's own /tmp, so nothing of it stays on the host.
	slots_etc=$(mktemp -d /tmp/slots-etc.XXXXXX) || slots_ns_fail "mktemp"
	cp -a /etc/. "$slots_etc/" || slots_ns_fail "cannot copy /etc"
	mount --bind "$slots_etc" /etc || slots_ns_fail "cannot bind-mount the copy over /etc"
	[ "$(stat -c %d:%i /etc)" = "$(stat -c %d:%i "$slots_etc")" ] ||
		slots_ns_fail "/etc is not the namespace's copy"
	# /var/lib gets a private writable layer (overlayfs, upper half in the namespace's /tmp),
	# so /var/lib/slots and whatever sudo or cron write there never reach the host's disk.
	mkdir -p /tmp/.slots-varlib/upper /tmp/.slots-varlib/work
	mount -t overlay overlay -o lowerdir=/var/lib,upperdir=/tmp/.slots-varlib/upper,workdir=/tmp/.slots-varlib/work \
		/var/lib || slots_ns_fail "cannot mount an overlay on /var/lib"
	mkdir -p /var/lib/slots
	mount -t tmpfs -o mode=0755 tmpfs /var/lib/slots || slots_ns_fail "cannot mount a tmpfs on /var/lib/slots"
	# A scratch folder for the test's own files, inside the namespace's /tmp.
	SLOTS_SCRATCH=$(mktemp -d /tmp/slots-test.XXXXXX)
	chmod 0755 "$SLOTS_SCRATCH"
	# A folder for a test's world outside the temp folders: a release removes what a slot
	# owns anywhere below /tmp, /var/tmp, /dev/shm and /run/lock, a test's pristine copies
	# included.  /run is the namespace's own tmpfs.
	SLOTS_WORLD=$(mktemp -d /run/slots-world.XXXXXX)
	chmod 0755 "$SLOTS_WORLD"
	export SLOTS_SCRATCH SLOTS_WORLD
}

# A throwaway folder in $slots_tmp, removed when the script exits.  Call it directly
# (not as $(slots_tmpdir): the trap would fire when the subshell ends).
slots_tmpdir() {
	slots_tmp=$(mktemp -d "${TMPDIR:-/tmp}/slots-test.XXXXXX")
	trap 'rm -rf "$slots_tmp"' EXIT
}

# stat summary "owner:group mode" of a path (never follows a symlink).
slots_stat() {
	stat -c '%U:%G %a' -- "$1"
}
