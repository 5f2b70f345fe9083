#!/bin/sh
# Release against a hostile holder (issue 12): every attack is made as the slot
# (runuser -u slot01), shown to exist before the release, and shown gone after it, as the next
# holder of slot01 sees things.  Processes are tested in release-hostile-procs.sh.
RELEASE_UID_MIN=47500
RELEASE_SHARED=Workflow
. "$top_srcdir/tests/integration/release-lib.sh"

U1=$(uid_of slot01)
G1=$(gid_of slot01)
HOME1=$SROOT/home/slot01
STATE1=$SROOT/state/slot01
RUN1=$SROOT/run/slot01
WF=$DOCS/Workflow
as1() {
	runuser -u slot01 -- "$@"
}
as2() {
	runuser -u slot02 -- "$@"
}
# The extended attribute names of $1 but LSM labels (security.*), one a line.
xattrs() {
	python3 -c 'import os, sys
print("\n".join(a for a in os.listxattr(sys.argv[1], follow_symlinks=False) if not a.startswith("security.")))' "$1"
}
# exact PATH: "owner:group mode", no ACL entry beyond the mode, no extended attribute, empty
exact() {
	[ "$(stat -c '%U:%G %a' "$1")" = "slot01:slot01 700" ] &&
		[ -z "$(getfacl -cs -- "$1" 2>/dev/null)" ] &&
		[ -z "$(xattrs "$1")" ] &&
		[ -z "$(ls -A "$1")" ]
}
# A private view of this IPC namespace's POSIX message queues (/dev/mqueue stays unmounted).
mq_list() {
	unshare --mount sh -c 'mount -t mqueue mqueue "$1" && ls -n "$1"' _ "$S/mq"
}
mkdir -p "$S/mq"
check "/dev/mqueue is not mounted in the test (the case release used to miss)" \
	sh -c '! grep -q " /dev/mqueue " /proc/self/mountinfo'

check "assign alice slot01" prints slot01 admin assign alice slot01
check "assign bob slot02" prints slot02 admin assign bob slot02
for d in "$HOME1" "$STATE1" "$RUN1"; do
	check "$d is slot01:slot01 0700 and empty before alice" exact "$d"
done

# --- 1. folder modes, group, ACL and xattr the holder sets on its own folders ---
as1 chmod 0777 "$HOME1"
as1 chgrp slotshared "$RUN1"
as1 chmod 2770 "$RUN1"
# The slot folders are on the namespace's tmpfs, which takes POSIX ACLs: a failure is a failure.
check "as slot01, setfacl gives slot02 rwx on state (access and default ACL)" \
	as1 setfacl -m u:slot02:rwx -d -m u:slot02:rwx "$STATE1"
# user.* attributes on tmpfs need Linux 6.6; before that the case cannot be made here.
HAVE_XATTR=
if xattr_err=$(as1 python3 -c 'import os, sys; os.setxattr(sys.argv[1], "user.planted", b"yes")' "$HOME1" 2>&1); then
	HAVE_XATTR=1
else
	echo "# user.* extended attribute on the home not run (tmpfs takes them from Linux 6.6): $xattr_err"
fi
check "home is 0777 before the release" test "$(stat -c %a "$HOME1")" = 777
check "run is slot01:slotshared 2770 before the release" test "$(stat -c '%G %a' "$RUN1")" = "slotshared 2770"
check "state has an ACL for slot02 before the release" \
	sh -c "getfacl -c '$STATE1' | grep -q 'user:slot02:rwx'"
[ -n "$HAVE_XATTR" ] && check "home has user.planted before the release" test "$(xattrs "$HOME1")" = user.planted

# --- 2. kernel keyrings: user, user-session, persistent ---
as1 keyctl add user k-user secret-u @u >/dev/null
as1 keyctl add user k-session secret-s @us >/dev/null
HAVE_PERSISTENT=
if key_err=$(as1 sh -c 'p=$(keyctl get_persistent @s) && keyctl add user k-persistent secret-p "$p"' 2>&1); then
	HAVE_PERSISTENT=1
else
	echo "# persistent keyring case not run (a kernel without CONFIG_PERSISTENT_KEYRINGS): $key_err"
fi
check "the user keyring holds k-user before the release" sh -c "runuser -u slot01 -- keyctl search @u user k-user >/dev/null"
check "the user-session keyring holds k-session before the release" \
	sh -c "runuser -u slot01 -- keyctl search @us user k-session >/dev/null"
[ -n "$HAVE_PERSISTENT" ] && check "the persistent keyring holds k-persistent before the release" \
	sh -c 'runuser -u slot01 -- sh -c "keyctl search \$(keyctl get_persistent @s) user k-persistent" >/dev/null'
# the holder also takes away its own right to write the keyrings (it keeps setattr: without it,
# no one, root included, can clear a user keyring again; see RELIABILITY.md, "Issue 12")
as1 keyctl setperm @u 0x2b2b0000
as1 keyctl setperm @us 0x2b2b0000
out=$(as1 keyctl clear @u 2>&1)
check "the holder itself can no longer clear its user keyring" sh -c 'echo "$1" | grep -q "Permission denied"' _ "$out"

# --- 3. files at any depth below the temp folders, and in the shared folder ---
as2 mkdir -m 1777 /tmp/bobs /var/tmp/bobs          # folders of someone else, open to all
mkdir -p -m 1777 /var/tmp/sub/deeper /run/lock /run/user
install -d -o slot01 -g slot01 -m 0700 "/run/user/$U1"
as1 sh -c 'umask 077; echo s1 >/tmp/bobs/secret; mkdir -p /var/tmp/bobs/a/b; echo s2 >/var/tmp/bobs/a/b/secret'
as1 sh -c 'umask 077; echo s3 >/var/tmp/sub/deeper/secret; echo s4 >/run/lock/secret; echo s5 >/run/user/'"$U1"'/secret'
as1 sh -c 'umask 077; mkdir -p /dev/shm/x/y; echo s6 >/dev/shm/x/y/secret; ln -s /etc/shadow /tmp/bobs/evil'
as2 sh -c 'echo bob >/tmp/bobs/bobs-file; chmod 0666 /tmp/bobs/bobs-file'
as1 ln /tmp/bobs/bobs-file /tmp/bobs/link-to-bobs     # a hard link to another account's file
as1 sh -c "umask 077; mkdir -p $WF/sub; echo s7 >$WF/sub/private; echo tool >$WF/tool; chmod 4755 $WF/tool"
# setgid without group execute: the one set-id bit the kernel's chown keeps, so only release's own clearing removes it
as1 sh -c "echo marked >$WF/marked; chmod 2644 $WF/marked"
check "as slot01, setfacl names slot01 on its shared file" as1 setfacl -m u:slot01:rw "$WF/sub/private"
check "the shared file's ACL names slot01 before the release" \
	sh -c "getfacl -n '$WF/sub/private' | grep -q ':$U1:rw'"
shadow_before=$(stat_all /etc/shadow)
bobs_before=$(stat -c '%U:%G %a %h' /tmp/bobs/bobs-file)
for f in /tmp/bobs/secret /var/tmp/bobs/a/b/secret /var/tmp/sub/deeper/secret /run/lock/secret \
	"/run/user/$U1/secret" /dev/shm/x/y/secret "$WF/sub/private"; do
	check "$f is slot01's before the release" test "$(stat -c %u "$f" 2>/dev/null)" = "$U1"
done
check "$WF/tool is setuid slot01 before the release" test "$(stat -c '%u %a' "$WF/tool")" = "$U1 4755"
check "$WF/marked is setgid, without group execute, before the release" \
	test "$(stat -c '%u %a' "$WF/marked")" = "$U1 2644"
check "slot01's symlink /tmp/bobs/evil is there before the release" test -L /tmp/bobs/evil

# --- 4. IPC: SysV and POSIX message queues (no /dev/mqueue mount) ---
as1 "$IPC_HELPER" alice-mq >"$S/ipc1" || not_ok "release-ipc as slot01"
as2 "$IPC_HELPER" bob-mq >"$S/ipc2" || not_ok "release-ipc as slot02"
shm1=$(awk '$1 == "shm" { print $2 }' "$S/ipc1")
check "slot01's SysV segment exists before the release" test -n "$shm1" -a -n "$(awk -v id="$shm1" '$2 == id' /proc/sysvipc/shm)"
mq_list >"$S/mq.before"
check "the private mqueue view lists alice-mq owned by slot01" \
	awk -v u="$U1" '$3 == u && $NF == "alice-mq" { f = 1 } END { exit !f }' "$S/mq.before"

# --- 5. a FUSE mount the slot holds (made the way fusermount makes it: user_id=<slot>) ---
HAVE_FUSE=
if [ ! -c /dev/fuse ]; then
	echo "# FUSE mount case not run: no /dev/fuse on this system"
else
	mkdir -p /tmp/fusemnt
	chown slot01 /tmp/fusemnt
	if fuse_err=$( (exec 3<>/dev/fuse && mount -t fuse -o "fd=3,rootmode=40000,user_id=$U1,group_id=$G1" \
		slotfuse /tmp/fusemnt) 2>&1); then
		HAVE_FUSE=1
		check "the FUSE mount of slot01 is there before the release" grep -q " /tmp/fusemnt .*user_id=$U1" /proc/self/mountinfo
	else
		echo "# FUSE mount case not run: cannot mount a FUSE file system here: $fuse_err"
	fi
fi

# --- release ---
t0=$(date +%s%N)
admin release alice >"$S/out" 2>"$S/err"
st=$?
t1=$(date +%s%N)
cat "$S/out" "$S/err"
echo "# release took $(( (t1 - t0) / 1000000 )) ms"
check "release alice exits 0" test "$st" = 0
check "it says slot01 released" grep -q "slot01 released" "$S/out"

# --- what the next holder finds ---
for d in "$HOME1" "$STATE1" "$RUN1"; do
	check "$d is exactly slot01:slot01 0700, empty, no ACL, no xattr" exact "$d"
done
out=$(as1 sh -c 'keyctl search @u user k-user' 2>&1)
check "the next holder finds no k-user in the user keyring" sh -c 'echo "$1" | grep -q "Required key not available"' _ "$out"
out=$(as1 sh -c 'keyctl search @us user k-session' 2>&1)
check "the next holder finds no k-session in the user-session keyring" \
	sh -c 'echo "$1" | grep -q "Required key not available"' _ "$out"
if [ -n "$HAVE_PERSISTENT" ]; then
	out=$(as1 sh -c 'keyctl search $(keyctl get_persistent @s) user k-persistent' 2>&1)
	check "the next holder finds no k-persistent in the persistent keyring" \
		sh -c 'echo "$1" | grep -q "Required key not available"' _ "$out"
fi
for f in /tmp/bobs/secret /var/tmp/bobs/a /run/lock/secret "/run/user/$U1" /dev/shm/x /tmp/bobs/evil; do
	check "$f is gone" test ! -e "$f" -a ! -L "$f"
done
check "/var/tmp/sub/deeper/secret is gone, the folder of others stays" \
	test ! -e /var/tmp/sub/deeper/secret -a -d /var/tmp/sub/deeper
check "no entry owned by slot01 is left below the temp folders" \
	test "$(find /tmp /var/tmp /dev/shm /run/lock /run/user -xdev -uid "$U1" | wc -l)" = 0
check "the symlink's target /etc/shadow is unchanged" test "$(stat_all /etc/shadow)" = "$shadow_before"
check "the hard link to bob's file stays, bob's file unchanged" \
	test "$(stat -c '%U:%G %a %h' /tmp/bobs/bobs-file)" = "$bobs_before" -a -e /tmp/bobs/link-to-bobs
check "the shared file is the service's now" test "$(stat -c %U "$WF/sub/private")" = svc
check "the shared folder it made is the service's now" test "$(stat -c %U "$WF/sub")" = svc
check "the setuid bit it set is gone" test "$(stat -c '%U %a' "$WF/tool")" = "svc 750"
check "the setgid bit the kernel's chown keeps is gone too" test "$(stat -c '%U %a' "$WF/marked")" = "svc 640"
check "the ACL entry naming slot01 is gone" \
	sh -c "getfacl -n '$WF/sub/private' >'$S/acl.after' && ! grep -q ':$U1:' '$S/acl.after'"
out=$(as1 cat "$WF/sub/private" 2>&1)
check "the next holder cannot read the shared file (EACCES)" sh -c 'echo "$1" | grep -q "Permission denied"' _ "$out"
check "slot01's SysV segment is gone" test -z "$(awk -v id="$shm1" '$2 == id' /proc/sysvipc/shm)"
mq_list >"$S/mq.after"
check "the private mqueue view no longer lists alice-mq" sh -c "! grep -q ' alice-mq\$' '$S/mq.after'"
check "slot02's queue bob-mq stays" grep -q ' bob-mq$' "$S/mq.after"
[ -n "$HAVE_FUSE" ] && check "the FUSE mount of slot01 is gone" sh -c "! grep -q ' /tmp/fusemnt ' /proc/self/mountinfo"

# --- check reports the three folders (slot03 is the free test slot) ---
chmod 0755 "$SROOT/run/slot03"
admin_run check --json
check "check exits 1 with a folder wrong" test "$st" = 1
check "check's slot-folders row for slot03 fails, naming run and 0755" \
	json_ok '[.checks[] | select(.check == "slot-folders" and .slot == "slot03")] | length == 1 and
		(.[0].status == "FAIL") and (.[0].detail | test("run/slot03: is .* 0755")) and
		(.[0].fix | test("release --slot slot03"))' "$S/out"
check "check's slot-folders row for the held slot02 passes" \
	json_ok '[.checks[] | select(.check == "slot-folders" and .slot == "slot02")][0].status == "PASS"' "$S/out"
chmod 0700 "$SROOT/run/slot03"

# --- check while slot02's holder loops kill(-1, SIGKILL): no false failure ---
# One loop: two would kill each other (kill -1 reaches every process of the uid but the caller).
# check proves the host as the test slot, never as a held slot, so the loop (at a high
# priority, to hit whatever runs as slot02 on a busy machine; no_new_privs, as a session of
# pam_slots has) can turn no row red.
nice -n -10 setpriv --no-new-privs --reuid=slot02 --regid=slot02 --init-groups sh -c 'while :; do kill -KILL -1 2>/dev/null; done' &
spin=$!
check "slot02's kill loop runs" wait_for euid_is "$spin" "$(id -u slot02)"
died=0 ran=0 red=0 runs=0
while [ $runs -lt 5 ]; do
	runs=$((runs + 1))
	admin_run check --json
	json_ok '.checks | length > 0' "$S/out" && ran=$((ran + 1))
	json_ok '[.checks[] | select(.detail | test("died from a signal"))] | length == 0' "$S/out" || died=$((died + 1))
	json_ok '[.checks[] | select(.status == "FAIL" and .slot == "slot02")] | length == 0' "$S/out" || red=$((red + 1))
done
check "the kill(-1) loop still ran after the checks" kill -0 "$spin"
kill "$spin"
wait "$spin" 2>/dev/null
check "check ran $runs times (its JSON is there each time)" test "$ran" = "$runs"
check "in $runs runs, no row says a probe died from a signal ($died did)" test "$died" = 0
check "in $runs runs, no row of slot02 is FAIL ($red had one)" test "$red" = 0
check "slot02's user-tree row passes despite the kill(-1) loop" \
	json_ok '[.checks[] | select(.check == "user-tree" and .slot == "slot02")] | length == 1 and .[0].status == "PASS"' "$S/out"

# --- assign refuses a slot whose folders are not exact: left pending, the fix printed ---
check "assign carol slot01 works on the clean slot" prints slot01 admin assign carol slot01
check "release carol" quiet admin release carol
chmod 0755 "$HOME1"
admin assign dave slot01 >"$S/out" 2>"$S/err"
st=$?
cat "$S/err"
check "assign of a slot whose home is 0755 exits 1" test "$st" = 1
check "it names the home and its mode" grep -q "home/slot01: is .* 0755, not slot01:slot01 0700" "$S/err"
check "it prints the fix: slots-admin release --slot slot01" grep -q "fix:.*slots-admin release --slot slot01" "$S/err"
check "slot01 is left pending" test "$(jq -r '.slots.slot01.cleanup // "none"' "$TABLE")" = pending
check "the table does not name dave" sh -c "! grep -q dave '$TABLE'"
touch "$STATE1/leftover"
check "release --slot slot01 repairs it" quiet admin release --slot slot01
check "home is exact again" exact "$HOME1"
check "state is exact again (the leftover is gone)" exact "$STATE1"
check "assign dave slot01 works now" prints slot01 admin assign dave slot01

# --- a file of the slot with two names in the shared folder: never changed, the slot stays pending ---
as1 sh -c "umask 077; echo twice >$WF/one; ln $WF/one $WF/two"
admin release dave >"$S/out" 2>"$S/err"
st=$?
cat "$S/err"
check "release with a hard-linked file of the slot in a shared folder exits 1" test "$st" = 1
check "it names the file and its links" grep -Eq "Workflow/(one|two): has 2 links" "$S/err"
check "the file was not changed" test "$(stat -c '%u %a' "$WF/one")" = "$U1 600"
check "slot01 is pending" test "$(jq -r '.slots.slot01.cleanup // "none"' "$TABLE")" = pending
rm "$WF/two"
check "after the extra name is gone, release --slot slot01 finishes" quiet admin release --slot slot01
check "the file is the service's" test "$(stat -c %U "$WF/one")" = svc
slots_done
