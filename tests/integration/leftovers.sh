#!/bin/sh
# What a release must not leave to the slot's next user (issue 19): a process that ignores
# SIGTERM, files in the home, the user's tree owned by the slot or with ACL entries naming
# it, the mail in the slot's mailbox (the spool file stays, empty, exactly slotNN:mail 0660)
# and user.* extended attributes on the slot's home, state and run folders.  Each is
# shown to be there first.
# Also release's guard: a slot that shares its uid or group with root or the service is refused
# (exit 1, pending, nothing cleaned), since cleaning it would hit their files and processes.
RELEASE_POOL=3
. "$top_srcdir/tests/integration/release-lib.sh"
command -v python3 >/dev/null || { echo "SKIP: python3 is not installed (it sets the extended attributes)"; exit 77; }

U1=$(uid_of slot01)
HOME1=$SROOT/home/slot01
as1() {
	setpriv --reuid=slot01 --regid=slot01 --init-groups "$@"
}
# xattr PATH NAME [VALUE]: sets user.NAME (as the calling identity), or prints its value.
xattr() {
	python3 - "$@" <<'PY'
import os, sys
path, name = sys.argv[1], sys.argv[2]
if len(sys.argv) > 3:
    os.setxattr(path, name, sys.argv[3].encode(), follow_symlinks=False)
else:
    try:
        print(os.getxattr(path, name, follow_symlinks=False).decode())
    except OSError:
        sys.exit(1)
PY
}

# A private /var/mail (the host's spool is never touched), as Debian's MTAs keep it.
mount -t tmpfs -o mode=2775 tmpfs /var/mail || { echo "Bail out! cannot mount a tmpfs on /var/mail"; exit 99; }
chgrp mail /var/mail 2>/dev/null || true

check "assign alice slot01" prints slot01 admin assign alice slot01
check "assign bob slot02" prints slot02 admin assign bob slot02

# --- alice's mail and attributes ---
printf 'From x\nSubject: secret\n\nthe previous user\n' >/var/mail/slot01
chown slot01:mail /var/mail/slot01
chmod 0660 /var/mail/slot01
echo bob >/var/mail/slot02
chown slot02:mail /var/mail/slot02
mail_before=$(stat -c '%U:%G %a' /var/mail/slot01)
for kind in home state run; do
	# (as root: the attribute is the same whoever sets it; the slot's python3 may not be root's)
	xattr "$SROOT/$kind/slot01" user.secret alice || not_ok "set user.secret on $kind/slot01"
done
# A process of alice's that ignores SIGTERM: only kill(-1, SIGKILL) as the slot ends it.
as1 sh -c 'trap "" TERM HUP INT; exec sleep 1000' &
check "slot01 runs a process before the release" wait_for pgrep -u "$U1" -x sleep >/dev/null
# Files alice made as slot01: in her home, and in her tree with an ACL entry naming the slot.
TREE=$DOCS/_users/alice
as1 sh -c "echo secret >$HOME1/.history; echo made >$TREE/by-slot"
check "setfacl names slot01 on a file of the tree" setfacl -m u:slot01:rwx "$TREE/by-slot"
check "the home holds alice's file before the release" test -s "$HOME1/.history"
check "the tree holds a file of slot01's uid before the release" test "$(stat -c %u "$TREE/by-slot")" = "$U1"
check "the ACL entry naming slot01 is there before the release" \
	sh -c 'getfacl -n -p "$1" | grep -q "^user:$2:rwx"' _ "$TREE/by-slot" "$U1"
check "the mailbox holds alice's mail before the release" test -s /var/mail/slot01
for kind in home state run; do
	check "$kind/slot01 carries user.secret before the release" test "$(xattr "$SROOT/$kind/slot01" user.secret)" = alice
done

admin release alice >"$S/out" 2>"$S/err"
st=$?
cat "$S/out" "$S/err"
check "release alice exits 0" test "$st" = 0
check "it says slot01 released" grep -q "slot01 released" "$S/out"
check "no process of slot01 is left" test "$(procs_of "$U1")" = 0
check "the home is empty" test -z "$(ls -A "$HOME1")"
check "no entry of alice's tree is owned by slot01's uid" test "$(find "$TREE" -uid "$U1" | wc -l)" = 0
check "the tree is the service's group again" test "$(stat -c %G "$TREE")" = svc
check "the ACL entry naming slot01 is gone" \
	sh -c 'getfacl -n -p "$1" >"$3" && grep -q "^user::" "$3" && ! grep -q "^user:$2:" "$3"' \
	_ "$TREE/by-slot" "$U1" "$S/acl.after"
check "the file itself is still there" test -s "$TREE/by-slot"
check "the mailbox is empty" test -f /var/mail/slot01 -a ! -s /var/mail/slot01
check "the mailbox is slot01:mail 0660 (it was $mail_before)" test "$(stat -c '%U:%G %a' /var/mail/slot01)" = "slot01:mail 660"
check "slot02's mailbox keeps its mail" test "$(cat /var/mail/slot02)" = bob
for kind in home state run; do
	check_fails "$kind/slot01 has lost user.secret" xattr "$SROOT/$kind/slot01" user.secret
done
check "as slot01, reading the old mail gives nothing" test -z "$(runuser -u slot01 -- cat /var/mail/slot01)"

# --- the guard: a slot sharing a uid or group with root or the service ---
# guard_case DESC FILE VALUE: slot03's uid (FILE passwd) or its group's gid (FILE group) set to
# VALUE, then a release of its user must be refused with exit 1, leave slot03 pending and
# touch nothing.
guard_case() {
	what=$1 file=/etc/$2 value=$3
	cp "$file" "$S/orig"
	check "$what: assign carol slot03" prints slot03 admin assign carol slot03
	echo kept >"$SROOT/home/slot03/file"
	awk -F: -v OFS=: -v v="$value" '$1 == "slot03" { $3 = v } { print }' "$S/orig" >"$S/new"
	cat "$S/new" >"$file"
	admin release carol >"$S/out" 2>"$S/err"
	st=$?
	cat "$S/out" "$S/err"
	check "$what: release exits 1" test "$st" = 1
	check "$what: the message names the shared id" grep -q "shares its uid or group with root or the service" "$S/err"
	check "$what: slot03 stays pending" test "$(jq -r '.slots.slot03.cleanup // empty' "$TABLE")" = pending
	check "$what: nothing in its home was removed" test -s "$SROOT/home/slot03/file"
	cat "$S/orig" >"$file"
	check "$what: with the ids fixed, release --slot slot03 finishes" quiet admin release --slot slot03
	check "$what: slot03 is free again" slot_is_free slot03
}
guard_case "slot03 with uid 0" passwd 0
guard_case "slot03's group with gid 0" group 0
guard_case "slot03 with the service's uid" passwd "$(uid_of svc)"
guard_case "slot03's group with the service's gid" group "$(gid_of svc)"
check "the slot accounts are as before" test "$(uid_of slot01)" = "$U1"
slots_done
