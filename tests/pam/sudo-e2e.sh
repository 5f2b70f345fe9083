#!/bin/sh
# End to end with real sudo (and su), in a private mount namespace: pam_slots.so
# in /etc/pam.d/sudo's session stack gives a slot the configured limits and
# no_new_privs (a set-id file of another slot keeps the caller's ids), and
# leaves a non-slot account with the defaults.  With require_assigned (as
# "required") a slot the table gives to no one gets no session: the module
# answers PAM_PERM_DENIED, which sudo and su both treat as fatal.
set -u
. "$top_srcdir/tests/integration/lib.sh"
slots_need_root
command -v sudo >/dev/null 2>&1 || { echo "SKIP: sudo not installed"; exit 77; }
command -v useradd >/dev/null 2>&1 || { echo "SKIP: useradd not installed"; exit 77; }
mod="$top_builddir/pam/.libs/pam_slots.so"
test -f "$mod" || { echo "FAIL: $mod not built"; exit 1; }
slots_enter_namespace "$@"
# Everything below writes to /etc: only ever to the namespace's copy.
if [ -z "${SLOTS_IN_NAMESPACE:-}" ] || ! findmnt -n -o SOURCE /etc | grep -q 'slots-etc\.'; then
	echo "FAIL: /etc is not the namespace's copy; refusing to touch it"
	exit 99
fi

# The slot accounts come from this fixture.  When slots-provision is ready,
# switch it with this one line:  fixture=provision
fixture=useradd

conf=/etc/slots/slots.conf
table=/etc/slots/slots.json
mkdir -p /etc/slots

# Runs a command as ACCOUNT through sudo; prints "nofile nproc" (bash: dash has no ulimit -u).
limits_of() {
	sudo -n -u "$1" /bin/bash -c 'echo "$(ulimit -n) $(ulimit -u)"' 2>&1
}

accounts_useradd() {
	# -l: no lastlog/faillog entry (those files are not in the namespace's /etc).
	useradd -r -l -M -U -s /usr/sbin/nologin slotsvc &&
	for a in slot01 slot02; do
		useradd -r -l -M -U -s /usr/sbin/nologin "$a" || return 1
	done
}

accounts_provision() {
	useradd -r -l -M -U -s /usr/sbin/nologin slotsvc &&
	"$SLOTS_PROVISION" --config "$conf" >/dev/null
}

# A non-slot account, and its limits through sudo before the module is in the stack.
useradd -r -l -M -U -s /usr/sbin/nologin appuser || { echo "FAIL: useradd appuser"; exit 1; }
before=$(limits_of appuser)
echo "# appuser before: $before"

# Configured values: below the hard limits this test was started with (it may lack
# CAP_SYS_RESOURCE, like root in many containers, and sudo's pam_limits or the
# caller's ulimit may have lowered them), and unlike the defaults.
hard_nofile=$(ulimit -Hn)
hard_nproc=$(/bin/bash -c 'ulimit -Hu')
nf_hard=888
np_hard=444
[ "$hard_nofile" = unlimited ] || [ "$hard_nofile" -ge 900 ] || nf_hard=$((hard_nofile - 12))
[ "$hard_nproc" = unlimited ] || [ "$hard_nproc" -ge 460 ] || np_hard=$((hard_nproc - 16))
if [ "$nf_hard" -lt 400 ] || [ "$np_hard" -lt 200 ]; then
	echo "SKIP: hard limits too low to pick test values below them (nofile $hard_nofile, nproc $hard_nproc; need 412 and 216)"
	exit 77
fi
nf_soft=$((nf_hard - 111)) nf_slot02=$((nf_hard - 333)) np_soft=$((np_hard - 111))
echo "# configured: nofile $nf_soft:$nf_hard (slot02 $nf_slot02), nproc $np_soft:$np_hard"
cat > "$conf" <<EOF
{
  "service": "slotsvc",
  "slots": 2,
  "table": "$table",
  "slots_root": "/var/lib/slots/slotsvc",
  "limits": {
    "default": {"nofile": {"soft": $nf_soft, "hard": $nf_hard}, "nproc": {"soft": $np_soft, "hard": $np_hard}},
    "slot02": {"nofile": $nf_slot02}
  }
}
EOF
chmod 0644 "$conf"
"accounts_$fixture" || { echo "FAIL: fixture $fixture"; exit 1; }
check "slot01 exists" id slot01
check "before the module, slot01 has the defaults too" \
	test "$(limits_of slot01)" = "$before"

# The line of pam_slots(8), with the config named.
cp /etc/pam.d/sudo /etc/pam.d/sudo.orig
echo "session optional $mod config=$conf" >> /etc/pam.d/sudo

got=$(limits_of slot01)
check "slot01 gets the configured nofile and nproc (got: $got)" test "$got" = "$nf_soft $np_soft"
got=$(sudo -n -u slot01 /bin/bash -c 'echo "$(ulimit -Hn) $(ulimit -Hu)"' 2>&1)
check "slot01 gets the configured hard limits (got: $got)" test "$got" = "$nf_hard $np_hard"
got=$(limits_of slot02)
check "slot02's own entry wins (got: $got)" test "$got" = "$nf_slot02 $np_soft"
got=$(limits_of appuser)
check "a non-slot account keeps the defaults (got: $got, before: $before)" test "$got" = "$before"
check "the configured values are not the defaults" test "$before" != "$nf_soft $np_soft"

# No new privileges: the module sets PR_SET_NO_NEW_PRIVS in sudo's process, which forks the
# command, so a slot's command has it and a non-slot account's does not.  A set-uid and
# set-gid copy of id(1) that slot02 owns (what a colluding slot could leave where slot01 can
# reach it) runs with slot01's own ids in slot01's session; appuser shows the copy works.
nnp_of() {
	sudo -n -u "$1" /bin/grep '^NoNewPrivs:' /proc/self/status 2>&1 | tr -s '\t ' ' '
}
got=$(nnp_of slot01)
check "sudo: slot01's command has no_new_privs (got: $got)" test "$got" = "NoNewPrivs: 1"
got=$(nnp_of appuser)
check "sudo: a non-slot account's command has not (got: $got)" test "$got" = "NoNewPrivs: 0"
suid=$(mktemp -d /tmp/suid.XXXXXX)
chmod 0755 "$suid"
cp /usr/bin/id "$suid/id"
chown slot02:slot02 "$suid/id"
chmod 6755 "$suid/id"
got=$(sudo -n -u appuser "$suid/id" -u -n 2>&1):$(sudo -n -u appuser "$suid/id" -g -n 2>&1)
check "control: slot02's set-id id gives appuser slot02's ids (got: $got)" test "$got" = slot02:slot02
got=$(sudo -n -u slot01 "$suid/id" -u -n 2>&1):$(sudo -n -u slot01 "$suid/id" -g -n 2>&1)
check "sudo: slot02's set-id id keeps slot01's own ids in slot01's session (got: $got)" test "$got" = slot01:slot01

# No set-id file from a slot at all: the module's seccomp filter refuses every way to give a
# file the set-uid or set-gid bit (EPERM), openat2 whole (ENOSYS); the ordinary 0755 works,
# and a folder made in a set-gid folder still inherits the bit (the kernel gives it, no mode does).
own=$(mktemp -d /tmp/own.XXXXXX)
chown slot01:slot01 "$own"
chmod 2770 "$own"
as_slot01() { sudo -n -u slot01 "$@" 2>&1; }
as_slot01 touch "$own/f" "$own/g"
check_fails "seccomp: chmod u+s of slot01's own file is refused" sudo -n -u slot01 chmod u+s "$own/f"
check_fails "seccomp: chmod g+s of slot01's own file is refused" sudo -n -u slot01 chmod g+s "$own/f"
check_fails "seccomp: chmod 4755 through fchmodat is refused" sudo -n -u slot01 chmod 4755 "$own/g"
got=$(as_slot01 python3 -c 'import os,sys
try:
    os.open(sys.argv[1], os.O_CREAT | os.O_WRONLY, 0o4755)
    print("made")
except OSError as e:
    print(e.errno)' "$own/o")
check "seccomp: open(O_CREAT, 04755) is refused with EPERM (got: $got)" test "$got" = 1
got=$(as_slot01 python3 -c 'import os,sys
try:
    os.mknod(sys.argv[1], 0o102755)
    print("made")
except OSError as e:
    print(e.errno)' "$own/n")
check "seccomp: mknod of a regular file 02755 is refused with EPERM (got: $got)" test "$got" = 1
got=$(as_slot01 python3 -c 'import ctypes,os,sys,struct
libc = ctypes.CDLL(None, use_errno=True)
how = struct.pack("QQQ", os.O_CREAT | os.O_WRONLY, 0o4755, 0)
r = libc.syscall(437, -100, sys.argv[1].encode(), how, len(how))
print("made" if r >= 0 else ctypes.get_errno())' "$own/h")
check "seccomp: openat2 is refused whole with ENOSYS (got: $got)" test "$got" = 38
check "seccomp: chmod 0755 works" sudo -n -u slot01 chmod 0755 "$own/f"
as_slot01 mkdir "$own/sub"
got=$(stat -c %a "$own/f" "$own/sub" | tr '\n' ' ')
check "seccomp: the file is 0755, the folder made in a set-gid folder 2xxx (got: $got)" \
	test "$got" = "755 2755 "
got=$(find "$own" -type f -perm /6000 | wc -l):$(ls "$own" | tr '\n' ' ')
check "seccomp: no set-id file was made, no file by open, mknod or openat2 (got: $got)" test "$got" = "0:f g sub "
check "seccomp: chmod u+s still works for a non-slot account" sudo -n -u appuser sh -c \
	'f=$(mktemp) && chmod u+s "$f" && test -u "$f" && rm -f "$f"'
got=$(sudo -n -u slot01 /bin/grep '^Seccomp:' /proc/self/status 2>&1 | tr -s '\t ' ' ')
check "seccomp: slot01's command runs under a filter (got: $got)" test "$got" = "Seccomp: 2"

# CLAUDE_CONFIG_DIR (sudo_env passes it by default, as CLAUDE_*): the slot's own home unless the
# caller's environment carries it and sudo keeps it (env_keep, as the drop-in's launcher rule has).
home1=/var/lib/slots/slotsvc/home/slot01
got=$(env -u CLAUDE_CONFIG_DIR sudo -n -u slot01 /usr/bin/printenv CLAUDE_CONFIG_DIR 2>&1)
check "CLAUDE_CONFIG_DIR: a caller without it gives slot01 its own home (got: $got)" test "$got" = "$home1"
got=$(CLAUDE_CONFIG_DIR=/root/.claude sudo -n -u slot01 /usr/bin/printenv CLAUDE_CONFIG_DIR 2>&1)
check "CLAUDE_CONFIG_DIR: a value sudo does not keep is replaced by the slot's home (got: $got)" \
	test "$got" = "$home1"
printf 'Defaults env_keep += "CLAUDE_*"\n' >/etc/sudoers.d/slots-test-env
chmod 0440 /etc/sudoers.d/slots-test-env
got=$(CLAUDE_CONFIG_DIR=/srv/agent/.claude sudo -n -u slot01 --preserve-env=CLAUDE_CONFIG_DIR \
	/usr/bin/printenv CLAUDE_CONFIG_DIR 2>&1)
check "CLAUDE_CONFIG_DIR: the caller's value, passed, arrives (got: $got)" test "$got" = /srv/agent/.claude
rm -f /etc/sudoers.d/slots-test-env
got=$(env -u CLAUDE_CONFIG_DIR sudo -n -u appuser /usr/bin/printenv CLAUDE_CONFIG_DIR 2>&1)
check "CLAUDE_CONFIG_DIR: a non-slot account gets none (got: $got)" test -z "$got"
cp "$conf" "$conf.good"
sed 's|"slots": 2,|"slots": 2, "sudo_env": ["PATH", "LANG"],|' "$conf.good" >"$conf"
got=$(env -u CLAUDE_CONFIG_DIR sudo -n -u slot01 /usr/bin/printenv CLAUDE_CONFIG_DIR 2>&1)
check "CLAUDE_CONFIG_DIR: none when sudo_env does not pass it (got: $got)" test -z "$got"
cp "$conf.good" "$conf"

# A broken config: "optional" lets the session open (the failure is logged).
cp "$conf" "$conf.good"
echo '{ "service": ' > "$conf"
got=$(limits_of slot01)
check "optional: a broken config does not block sudo (got: $got)" test "$got" = "$before"
cp "$conf.good" "$conf"

# require_assigned, "required": slot01 is assigned, slot02 is not.
cp /etc/pam.d/sudo.orig /etc/pam.d/sudo
echo "session required $mod config=$conf require_assigned" >> /etc/pam.d/sudo
cat > "$table" <<EOF
{
  "slots": {
    "slot01": {"since": "2026-10-01T09:12:00Z", "user": "aa73da63e26b40a1bb701c2b4c024870"}
  },
  "version": 1
}
EOF
chown root:slotsvc "$table"
chmod 0640 "$table"
got=$(limits_of slot01)
check "sudo, require_assigned: the assigned slot01 gets its limits (got: $got)" test "$got" = "$nf_soft $np_soft"
# sudo treats PAM_SESSION_ERR as non-fatal (its plugins/sudoers/auth/pam.c),
# so the module refuses with PAM_PERM_DENIED: the command must not run.
check_fails "sudo, require_assigned: the unassigned slot02 is refused" sudo -n -u slot02 /bin/true 2>/dev/null
got=$(sudo -n -u slot02 /bin/sh -c 'echo ran' 2>&1)
check "sudo, require_assigned: slot02's command printed nothing of its own (got: $got)" \
	sh -c '! printf "%s" "$1" | grep -q "^ran"' - "$got"
got=$(limits_of appuser)
check "sudo, require_assigned: a non-slot account is not affected (got: $got)" test "$got" = "$before"

# The same with su, which ends when pam_open_session fails.
if command -v su >/dev/null 2>&1 && test -f /etc/pam.d/su; then
	su_limits_of() {
		su -s /bin/bash -c 'echo "$(ulimit -n) $(ulimit -u)"' "$1" 2>&1
	}
	su_before=$(su_limits_of appuser)
	echo "session required $mod config=$conf require_assigned" >> /etc/pam.d/su
	got=$(su_limits_of slot01)
	check "su, require_assigned: the assigned slot01 gets its limits (got: $got)" test "$got" = "$nf_soft $np_soft"
	check_fails "su, require_assigned: the unassigned slot02 is refused" su -s /bin/sh -c true slot02 2>/dev/null
	got=$(su -s /bin/sh -c "grep '^NoNewPrivs:' /proc/self/status" slot01 2>&1 | tr -s '\t ' ' ')
	check "su: slot01's shell has no_new_privs (got: $got)" test "$got" = "NoNewPrivs: 1"
	got=$(su -s /bin/sh -c "$suid/id -u -n" slot01 2>&1)
	check "su: slot02's set-uid id keeps slot01's euid (got: $got)" test "$got" = slot01
	got=$(su_limits_of appuser)
	check "su, require_assigned: a non-slot account keeps the defaults (got: $got)" test "$got" = "$su_before"
fi

# runuser, which root's scripts (and the suite's attackers) use: the same flag.
if command -v runuser >/dev/null 2>&1 && test -f /etc/pam.d/runuser; then
	echo "session required $mod config=$conf" >> /etc/pam.d/runuser
	got=$(runuser -u slot01 -- grep '^NoNewPrivs:' /proc/self/status 2>&1 | tr -s '\t ' ' ')
	check "runuser: slot01's command has no_new_privs (got: $got)" test "$got" = "NoNewPrivs: 1"
	got=$(runuser -u appuser -- grep '^NoNewPrivs:' /proc/self/status 2>&1 | tr -s '\t ' ' ')
	check "runuser: a non-slot account's command has not (got: $got)" test "$got" = "NoNewPrivs: 0"
fi

slots_done
