# shellcheck shell=sh
# Shared by assign-tree*.sh and release-*.sh (source it after setting RELEASE_POOL if needed).
# Runs the calling script as root in private mount, PID and IPC namespaces: kill(-1) as a slot
# and IPC removal can reach only what the test made, and everything goes when the script ends.
# Makes the service account "svc" and the slot accounts (with slots-provision when it is built,
# else useradd/groupadd) on the namespace's copy of /etc, and a config with docs_root.
. "$top_srcdir/tests/integration/lib.sh"
slots_need_root
for tool in runuser setpriv getent find jq; do
	command -v "$tool" >/dev/null || { echo "SKIP: $tool is not installed"; exit 77; }
done
if [ -z "${SLOTS_RELEASE_NS:-}" ]; then
	if ! unshare --pid --ipc --fork --mount-proc true 2>/dev/null; then
		echo "SKIP: cannot create PID and IPC namespaces"
		exit 77
	fi
	SLOTS_RELEASE_NS=1 exec unshare --pid --ipc --fork --mount-proc sh "$0" "$@"
fi
slots_enter_namespace "$@"

S=$SLOTS_SCRATCH
DOCS=$S/docs
SROOT=/var/lib/slots/svc
CONF=$S/slots.conf
TABLE=/etc/slots/slots.json
# shellcheck disable=SC2034 # for the scripts that source this file
IPC_HELPER=$top_builddir/tests/integration/release-ipc

# The first id from $1 up that is neither a uid nor a gid.
free_id() {
	i=$1
	while getent passwd "$i" >/dev/null || getent group "$i" >/dev/null; do i=$((i + 1)); done
	echo "$i"
}

SVC_UID=$(free_id 2990)
echo "svc:x:$SVC_UID:$SVC_UID:the service:/nonexistent:/usr/sbin/nologin" >>/etc/passwd
echo "svc:x:$SVC_UID:" >>/etc/group
echo 'svc:!:20000::::::' >>/etc/shadow
echo 'svc:!::' >>/etc/gshadow
mkdir -p /etc/slots "$DOCS"
chown svc:svc "$DOCS"
chmod 0751 "$DOCS"
# RELEASE_UID_MIN: a uid range of the test's own (keyrings and RLIMIT_NPROC are per uid, not per
# namespace); RELEASE_SHARED: a shared folder under docs_root.
release_extra=
[ -n "${RELEASE_UID_MIN:-}" ] &&
	release_extra="$release_extra \"uid_min\": $RELEASE_UID_MIN, \"uid_max\": $((RELEASE_UID_MIN + 99)),"
[ -n "${RELEASE_SHARED:-}" ] && release_extra="$release_extra \"shared_dirs\": [\"$RELEASE_SHARED\"],"
cat >"$CONF" <<CONF
{
  "service": "svc",
  "slots": ${RELEASE_POOL:-3},$release_extra
  "docs_root": "$DOCS",
  "table": "$TABLE",
  "slotctl_config": "/etc/slots/slotctl.json"
}
CONF

if [ -x "$SLOTS_PROVISION" ]; then
	RELEASE_ACCOUNTS=slots-provision
	if ! "$SLOTS_PROVISION" --config "$CONF" >"$S/provision.out" 2>&1; then
		cat "$S/provision.out"
		echo "Bail out! slots-provision failed"
		exit 99
	fi
else
	# Until slots-provision is built: the same accounts by hand (-l: no lastlog/faillog entry).
	RELEASE_ACCOUNTS=useradd
	groupadd -r slotshared
	n=1
	while [ $n -le "${RELEASE_POOL:-3}" ]; do
		slot=$(printf 'slot%02d' $n)
		groupadd -r "$slot"
		useradd -r -l -M -g "$slot" -G slotshared -d "$SROOT/home/$slot" -s /usr/sbin/nologin "$slot"
		for kind in home state run; do
			install -d -o root -g root -m 0755 "$SROOT/$kind"
			install -d -o "$slot" -g "$slot" -m 0700 "$SROOT/$kind/$slot"
		done
		n=$((n + 1))
	done
fi
echo "# slot accounts made by $RELEASE_ACCOUNTS"

admin() {
	"$SLOTS_ADMIN" --config "$CONF" "$@"
}

uid_of() {
	id -u "$1"
}

gid_of() {
	getent group "$1" | cut -d: -f3
}

# Live (not zombie) processes whose real or effective uid is $1.
procs_of() {
	# One awk for all of /proc (a fork per process is slow when a fork bomb holds the CPUs).
	# cat, not awk, opens the files: mawk stops at a file that vanished between the glob and
	# the open, which a fork bomb makes likely; cat goes on.  Each status file starts "Name:".
	cat /proc/[0-9]*/status 2>/dev/null | awk -v u="$1" '/^Name:/ { s = "" } /^State:/ { s = $2 }
		/^Uid:/ { if (($2 == u || $3 == u) && s != "Z" && s != "X") n++ } END { print n + 0 }'
}

# The table entry of slot $1 as compact JSON, or "null".
table_entry() {
	jq -c --arg s "$1" '.slots[$s]' "$TABLE"
}

# slot_is_free SLOT: the table itself has no entry for SLOT (neither held nor pending), and
# status --json agrees.
slot_is_free() {
	test "$(table_entry "$1")" = null &&
		admin status --json "$1" | jq -e '.slots[0].user == null and .slots[0].cleanup == null' >/dev/null
}

# "owner:group mode" of each path, one line, never following a symlink.
stat_all() {
	for p in "$@"; do stat -c '%u:%g %a' -- "$p"; done | tr '\n' ' '
}

# admin_run ARGS...: runs slots-admin; its stdout in $S/out, stderr in $S/err, exit status in $st.
admin_run() {
	"$SLOTS_ADMIN" --config "$CONF" "$@" >"$S/out" 2>"$S/err"
	# shellcheck disable=SC2034 # for the caller
	st=$?
}

# json_ok FILTER FILE: FILE is not empty and FILTER is true on it (never jq -e on empty input).
json_ok() {
	[ -s "$2" ] && jq -e "$1" "$2" >/dev/null
}

# sysv_has KIND ID: /proc/sysvipc/KIND lists id ID (an empty ID is an error, never "absent").
sysv_has() {
	[ -n "$2" ] || { echo "# no $1 id given" >&2; return 2; }
	awk -v id="$2" '$2 == id { f = 1 } END { exit !f }' "/proc/sysvipc/$1"
}

# sysv_gone KIND ID: the id was given and /proc/sysvipc/KIND no longer lists it.
sysv_gone() {
	sysv_has "$1" "$2"
	[ $? = 1 ]
}
