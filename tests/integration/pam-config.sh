#!/bin/sh
# pam_slots refuses a config someone other than root could have written, or one it cannot
# trust to be the file meant (issue 19): each row is a config and the result the module must
# give a slot's session.  The module sets limits inside setuid programs (sudo, su), so a
# config owned by another user, writable by others, not absolute, not a regular file or
# missing ends the session with PAM_PERM_DENIED (fatal under sudo too); the same config
# owned by root passes.
# Runs as root (the configs get other owners) in a private mount namespace.
. "$top_srcdir/tests/integration/lib.sh"
slots_need_root
slots_enter_namespace "$@"
MOD=$top_builddir/pam/.libs/pam_slots.so
DRV=$top_builddir/tests/integration/pam-open
[ -f "$MOD" ] || { echo "Bail out! $MOD is not built"; exit 99; }
[ -x "$DRV" ] || { echo "Bail out! $DRV is not built"; exit 99; }

C=$SLOTS_SCRATCH/c
S_ERR=$SLOTS_SCRATCH/driver.err
mkdir -p "$C/pam.d"
chmod 0755 "$C"
printf 'session required pam_permit.so\n' >"$C/pam.d/slots-open"
printf '{\n  "service": "svc",\n  "slots": 4\n}\n' >"$C/good.conf"
chmod 0644 "$C/good.conf"

# conf NAME OWNER MODE: a copy of the good config with that owner and mode.
conf() {
	cp "$C/good.conf" "$C/$1"
	chown "$2" "$C/$1"
	chmod "$3" "$C/$1"
}
conf other-owner.conf 4321:0 0644
conf group-writable.conf 0:0 0664
conf world-writable.conf 0:0 0646
conf root-0600.conf 0:0 0600
conf root-group-readable.conf 0:4321 0640
mkdir -p "$C/dir.conf"
mkfifo "$C/fifo.conf"

# session DESC WANT USER ARG...: the hook's result for USER with these module arguments.
session() {
	desc=$1 want=$2 user=$3
	shift 3
	got=$(timeout 10 "$DRV" "$MOD" "$C/pam.d" "$user" "$@" 2>"$S_ERR")
	st=$?
	cat "$S_ERR"
	check "$desc: $want" test "$got" = "$want"
	[ -n "$got" ] || not_ok "$desc: the driver printed nothing (exit $st)"
}
session "a good config owned by root, 0644" PAM_SUCCESS slot01 "config=$C/good.conf"
session "root-owned 0600" PAM_SUCCESS slot01 "config=$C/root-0600.conf"
session "root-owned, group 4321, 0640" PAM_SUCCESS slot01 "config=$C/root-group-readable.conf"
session "a slot outside the pool" PAM_IGNORE slot05 "config=$C/good.conf"
session "not a slot account: no config is read" PAM_IGNORE alice "config=$C/other-owner.conf"
session "owned by uid 4321" PAM_PERM_DENIED slot01 "config=$C/other-owner.conf"
session "group-writable" PAM_PERM_DENIED slot01 "config=$C/group-writable.conf"
session "writable by others" PAM_PERM_DENIED slot01 "config=$C/world-writable.conf"
session "a relative path" PAM_PERM_DENIED slot01 "config=good.conf"
session "a folder" PAM_PERM_DENIED slot01 "config=$C/dir.conf"
session "a FIFO (never blocks)" PAM_PERM_DENIED slot01 "config=$C/fifo.conf"
session "missing" PAM_PERM_DENIED slot01 "config=$C/missing.conf"
# The config is reached through the owner chain (issue 13): a symlink to a root-owned config,
# a config in a folder anyone (or a slot, through an ACL) can write, or below one, is refused;
# syslog names the folder and the fix (the driver copies syslog to its stderr).
ln -s "$C/good.conf" "$C/link.conf"
mkdir -p "$C/ww/in" "$C/aclw"
chmod 0777 "$C/ww"
cp "$C/good.conf" "$C/ww/in/good.conf"
cp "$C/good.conf" "$C/aclw/good.conf"
session "a symlink to a root-owned config" PAM_PERM_DENIED slot01 "config=$C/link.conf"
check "the symlink: syslog names it and the fix" \
	grep -q "$C/link.conf: is a symbolic link.*fix: replace the link" "$S_ERR"
session "below a folder anyone can write" PAM_PERM_DENIED slot01 "config=$C/ww/in/good.conf"
check "the folder anyone can write: syslog names it and the fix" \
	grep -q "$C/ww: writable by others (mode 0777).*fix: chmod o-w $C/ww" "$S_ERR"
# The namespace's /tmp is a tmpfs with POSIX ACLs: only a missing setfacl leaves the row out.
if command -v setfacl >/dev/null; then
	check "setfacl lets uid 4321 write $C/aclw" setfacl -m u:4321:rwx "$C/aclw"
	session "in a folder whose ACL lets uid 4321 write" PAM_PERM_DENIED slot01 "config=$C/aclw/good.conf"
	check "the ACL: syslog names the folder and the fix" grep -q "fix: setfacl -x u:4321 $C/aclw" "$S_ERR"
else
	echo "# setfacl is not installed (package acl): the ACL row is not run"
fi
# A name from the file system reaches syslog escaped (ls -b style), never as raw control bytes.
EVIL=$(printf 'x\033]0;owned\007y')
mkdir "$C/$EVIL"
chmod 0777 "$C/$EVIL"
cp "$C/good.conf" "$C/$EVIL/good.conf"
session "below a folder anyone can write, named with terminal controls" PAM_PERM_DENIED slot01 \
	"config=$C/$EVIL/good.conf"
check "syslog shows the folder's name escaped" grep -qF "$C/x\\033]0;owned\\ay: writable by others" "$S_ERR"
check "no ESC or BEL byte reaches syslog" sh -c '! LC_ALL=C grep -q "$(printf "[\033\007]")" "$1"' _ "$S_ERR"
slots_done
