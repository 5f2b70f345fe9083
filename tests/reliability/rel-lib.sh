# shellcheck shell=sh
# top_srcdir and top_builddir come from make check's environment (lib.sh).
# shellcheck disable=SC2154
# Shared by tests/reliability/*.sh: the fault shim, a slots-admin world whose accounts come
# from nss_wrapper files, snapshots, and the short (CI) or long (SLOTS_RELIABILITY_FULL=1) form.
# Source it after tests/integration/lib.sh.

SHIM=$top_builddir/tests/fault/.libs/faultshim.so
# The interpreter itself, found once: a version manager's shim first in PATH (pyenv's) runs
# several shell scripts before each start, and the fault tests start snap.py hundreds of times.
REL_PY=$(python3 -c 'import sys; print(sys.executable)' 2>/dev/null)
[ -n "$REL_PY" ] && [ -x "$REL_PY" ] || REL_PY=python3
REL_SNAP_PY=$top_srcdir/tests/reliability/snap.py
# $SNAP ARGS...: snap.py ARGS..., asked of the one snap.py rel_snap_serve started (else run).
# shellcheck disable=SC2034 # for the scripts that source this file
SNAP=rel_snap_ask
REL_SNAP_PID=
REL_INDEX=slots.json.index
NSSW=$(pkg-config --variable=libdir nss_wrapper 2>/dev/null)/libnss_wrapper.so
[ -f "$NSSW" ] || NSSW=libnss_wrapper.so
FULL=${SLOTS_RELIABILITY_FULL:-0}
# A fixed clock (2026-09-21T...Z) for every command run through the shim: the timestamps
# a command writes are then the same in the reference run and in every crashed run.
FAULT_NOW=1790000000
export FAULT_NOW
# Sanitizer builds: the shim and nss_wrapper are preloaded ahead of the ASan runtime.
export ASAN_OPTIONS="${ASAN_OPTIONS:-verify_asan_link_order=0}"
# Account uids of the test worlds, far from anything a real host uses.
SLOT_UID_BASE=39000
SVC_UID=38999

rel_need_shim() {
	if [ ! -f "$SHIM" ]; then
		echo "SKIP: $SHIM is not built (make check builds it)"
		exit 77
	fi
}

rel_have_provision() {
	[ -x "$SLOTS_PROVISION" ] && return 0
	# make check builds it: its absence is a broken build, never a part quietly left out.
	not_ok "$SLOTS_PROVISION is not built: the slots-provision part cannot run"
	return 1
}

# rel_admin_world DIR POOL: the service svc and slot01..slotPOOL as nss_wrapper files in DIR,
# a config DIR/slots.conf, and the state every command changes under DIR/s (the table folder
# DIR/s/etc, slots_root DIR/s/slots with a home, state and run folder per slot, docs_root DIR/s/docs).
rel_admin_world() {
	w=$1
	pool=$2
	mkdir -p "$w/s/etc" "$w/s/slots/home" "$w/s/slots/state" "$w/s/slots/run" "$w/s/docs/_users"
	chmod 0755 "$w" "$w/s" "$w/s/etc" "$w/s/slots" "$w/s/slots/home" "$w/s/slots/state" "$w/s/slots/run"
	chown "$SVC_UID:$SVC_UID" "$w/s/docs" "$w/s/docs/_users"
	chmod 0750 "$w/s/docs" "$w/s/docs/_users"
	{
		echo "root:x:0:0:root:/root:/bin/sh"
		echo "svc:x:$SVC_UID:$SVC_UID:svc:/nonexistent:/usr/sbin/nologin"
		n=1
		while [ "$n" -le "$pool" ]; do
			printf 'slot%02d:x:%d:%d::%s/s/slots/home/slot%02d:/usr/sbin/nologin\n' \
				"$n" $((SLOT_UID_BASE + n)) $((SLOT_UID_BASE + n)) "$w" "$n"
			n=$((n + 1))
		done
	} >"$w/passwd"
	{
		echo "root:x:0:"
		echo "svc:x:$SVC_UID:"
		members=
		n=1
		while [ "$n" -le "$pool" ]; do
			printf 'slot%02d:x:%d:\n' "$n" $((SLOT_UID_BASE + n))
			members="$members${members:+,}$(printf 'slot%02d' "$n")"
			n=$((n + 1))
		done
		echo "slotshared:x:$((SLOT_UID_BASE + 9999)):$members"
	} >"$w/group"
	n=1
	while [ "$n" -le "$pool" ]; do
		s=$(printf 'slot%02d' "$n")
		u=$((SLOT_UID_BASE + n))
		for d in home state run; do
			mkdir -p "$w/s/slots/$d/$s"
			chown "$u:$u" "$w/s/slots/$d/$s"
			chmod 0700 "$w/s/slots/$d/$s"
		done
		n=$((n + 1))
	done
	# The lock file, as any host that ran slots-admin once has it: "nothing changed" is then exact.
	: >"$w/s/etc/slots.json.lock"
	chmod 0600 "$w/s/etc/slots.json.lock"
	cat >"$w/slots.conf" <<EOF
{
  "service": "svc",
  "slots": $pool,
  "table": "$w/s/etc/slots.json",
  "slots_root": "$w/s/slots",
  "docs_root": "$w/s/docs"
}
EOF
}

# A slot's leftovers, so that a release has something to clean: files, a nested folder, a link.
rel_slot_leftovers() {
	w=$1
	s=$2
	u=$(awk -F: -v s="$s" '$1 == s { print $3 }' "$w/passwd")
	for d in home state; do
		mkdir -p "$w/s/slots/$d/$s/sub/deeper"
		echo "left by the last user" >"$w/s/slots/$d/$s/notes.txt"
		echo "x" >"$w/s/slots/$d/$s/sub/deeper/f"
		ln -sf /etc/passwd "$w/s/slots/$d/$s/link"
		chown -hR "$u:$u" "$w/s/slots/$d/$s"
	done
}

# rel_example_image DIR: the example host of tests/provision/golden as an image for
# slots-provision --root DIR: its initial account files, the account files lock, and the
# application, documents and folders its setup.sh makes.  SOURCE_DATE_EPOCH is fixed (the day
# written into new shadow lines, as in the golden tests) and SLOTS_CONFIG unset.
rel_example_image() {
	g=$top_srcdir/tests/provision/golden/example-host
	mkdir -p "$1/etc"
	for f in passwd group shadow gshadow; do
		src=$g/initial-$f
		[ -f "$src" ] || src=$top_srcdir/tests/provision/initial-$f
		cp "$src" "$1/etc/$f"
	done
	chown 0:0 "$1/etc/passwd" "$1/etc/group"
	chmod 0644 "$1/etc/passwd" "$1/etc/group"
	chown 0:42 "$1/etc/shadow" "$1/etc/gshadow"
	chmod 0640 "$1/etc/shadow" "$1/etc/gshadow"
	: >"$1/etc/.pwd.lock"
	chmod 0600 "$1/etc/.pwd.lock"
	(umask 022 && ROOT=$1 sh -e "$g/setup.sh")
	SOURCE_DATE_EPOCH=1767225600
	export SOURCE_DATE_EPOCH
	unset SLOTS_CONFIG
}

# rel_example_conf POOL FILE: the example config with a pool of POOL (its limits for slot08
# become limits for slot0POOL).
rel_example_conf() {
	sed -e "s/\"slots\": 8,/\"slots\": $1,/" -e "s/\"slot08\": {/\"slot0$1\": {/" \
		"$top_srcdir/data/slots.conf.example" >"$2"
}

# The starting table of most scenarios: alice in slot01, bob in slot02 (with a key this
# version does not know, which every rewrite keeps), slot03 pending.
rel_table_t0() {
	cat >"$1" <<EOF
{
  "slots": {
    "slot01": {
      "since": "2026-01-01T00:00:00Z",
      "user": "alice"
    },
    "slot02": {
      "note": "a key this version does not know",
      "since": "2026-01-02T00:00:00Z",
      "user": "bob"
    },
    "slot03": {
      "cleanup": "pending",
      "released": "2026-01-03T00:00:00Z"
    }
  },
  "version": 1
}
EOF
}

# The text strerror gives for an errno name.
rel_strerror() {
	case $1 in
	ENOSPC) echo "No space left on device" ;;
	EIO) echo "Input/output error" ;;
	EPERM) echo "Operation not permitted" ;;
	EDQUOT) echo "Disk quota exceeded" ;;
	EACCES) echo "Permission denied" ;;
	EROFS) echo "Read-only file system" ;;
	EINTR) echo "Interrupted system call" ;;
	EAGAIN) echo "Resource temporarily unavailable" ;;
	EMFILE) echo "Too many open files" ;;
	ENOMEM) echo "Cannot allocate memory" ;;
	ENOENT) echo "No such file or directory" ;;
	ELOOP) echo "Too many levels of symbolic links" ;;
	EEXIST) echo "File exists" ;;
	ENODATA) echo "No data available" ;;
	EOPNOTSUPP) echo "Operation not supported" ;;
	ERANGE) echo "Numerical result out of range" ;;
	ESRCH) echo "No such process" ;;
	ENOSYS) echo "Function not implemented" ;;
	esac
}

# admin_in WORLD ARGS...: slots-admin of that world, accounts from its nss_wrapper files.
admin_in() {
	w=$1
	shift
	env LD_PRELOAD="$NSSW" NSS_WRAPPER_PASSWD="$w/passwd" NSS_WRAPPER_GROUP="$w/group" \
		"$SLOTS_ADMIN" --config "$w/slots.conf" "$@"
}

# shim_admin_in WORLD ARGS...: the same through the fault shim (FAULT_* from the caller's
# environment), killed after a minute: a blocked command fails the test instead of hanging it.
shim_admin_in() {
	w=$1
	shift
	timeout 60 env LD_PRELOAD="$SHIM $NSSW" NSS_WRAPPER_PASSWD="$w/passwd" NSS_WRAPPER_GROUP="$w/group" \
		FAULT_PROG=slots-admin "$SLOTS_ADMIN" --config "$w/slots.conf" "$@"
}

# rel_points K: the kill points to try out of 1..K.  All of them in the long form and whenever
# K is small; otherwise about 60 spread over the run, always including the first and last ten.
rel_points() {
	k=$1
	if [ "$FULL" = 1 ] || [ "$k" -le 80 ]; then
		seq 1 "$k"
		return
	fi
	step=$(((k + 59) / 60))
	{
		seq 1 10
		seq 1 "$step" "$k"
		seq $((k - 9)) "$k"
	} | sort -n -u
}

# rel_snap DIR OUT: a quick snapshot (type, owner, mode, link target, content hash, ACLs)
# for exact comparisons with cmp; snap.py does the finer "between" comparison.  The table's
# index is left out: it names the table file's inode and change time, which no two runs
# share, and a reader believes it only when it names the table as it is (test-table-index).
rel_snap() {
	(
		cd "$1" || exit 1
		{
			find . ! -name "$REL_INDEX" -printf '%p %y %U:%G %m %l\n'
			find . -type f ! -name "$REL_INDEX" -exec sha256sum {} +
		} | LC_ALL=C sort
		getfacl -Rnps . 2>/dev/null
	) >"$2"
}

# rel_snap_serve DIR: one snap.py for the rest of the test, asked through two FIFOs in DIR:
# the fault and crash tests compare a world hundreds of times, and a python start costs
# more than the comparison.  It ends with the test's PID namespace.
rel_snap_serve() {
	REL_SNAP_IN=$1/snap.in
	REL_SNAP_OUT=$1/snap.out
	mkfifo "$REL_SNAP_IN" "$REL_SNAP_OUT" || return 1
	"$REL_PY" "$REL_SNAP_PY" serve "$REL_SNAP_IN" "$REL_SNAP_OUT" </dev/null >/dev/null &
	REL_SNAP_PID=$!
}

# rel_snap_ask ARGS...: what snap.py ARGS... prints, and its exit status.
rel_snap_ask() {
	if [ -z "$REL_SNAP_PID" ] || ! kill -0 "$REL_SNAP_PID" 2>/dev/null; then
		"$REL_PY" "$REL_SNAP_PY" "$@"
		return
	fi
	printf '%s\n' "$@" >"$REL_SNAP_IN"
	while IFS= read -r rel_snap_line; do
		case $rel_snap_line in
		"o "*) printf '%s\n' "${rel_snap_line#o }" ;;
		"rc "*) return "${rel_snap_line#rc }" ;;
		esac
	done <"$REL_SNAP_OUT"
	echo "snap.py $*: no answer"
	return 2
}

# The temps of the replace pattern in a folder.
rel_temps() {
	find "$1" -mindepth 1 -maxdepth 1 -printf '%f\n' | grep -E '^\..*\.[0-9a-f]{12}$' || true
}
