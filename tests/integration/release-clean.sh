#!/bin/sh
# release leaves nothing of one user to the slot's next one (slots-admin(8), release; issue 4):
# processes, home/state/run contents, SysV IPC, files in /tmp /var/tmp /dev/shm, crontab and at
# jobs and the lingering flag all go; the user's tree goes back to the service group and the slot
# can no longer read it; symlinks planted in the home or the tree are never followed.  What
# belongs to others stays.  The temp walk enters others' folders at any depth.
. "$top_srcdir/tests/integration/release-lib.sh"

U1=$(uid_of slot01)
G1=$(gid_of slot01)
U2=$(uid_of slot02)
TREE=$DOCS/_users/alice
HOME1=$SROOT/home/slot01
as1() {
	setpriv --reuid=slot01 --regid=slot01 --init-groups "$@"
}
as2() {
	setpriv --reuid=slot02 --regid=slot02 --init-groups "$@"
}

# A private /var/spool for the crontab and at-job checks (the host's is never touched).
mount -t tmpfs -o mode=0755 tmpfs /var/spool
mkdir -p /var/spool/cron/crontabs /var/spool/cron/atjobs
chmod 1730 /var/spool/cron/crontabs
chmod 1770 /var/spool/cron/atjobs
# /dev/mqueue, when the system has the folder, shows the namespace's POSIX message queues.
MQ= MQ_WHY=
if [ ! -d /dev/mqueue ]; then
	MQ_WHY="no /dev/mqueue folder on this system"
elif mq_err=$(mount -t mqueue mqueue /dev/mqueue 2>&1); then
	MQ=/dev/mqueue
else
	MQ_WHY="cannot mount mqueue on /dev/mqueue: $mq_err"
fi
# systemd-logind's lingering flags, in the namespace's private /var/lib layer.
mkdir -p /var/lib/systemd/linger

check "assign alice slot01" prints slot01 admin assign alice slot01
check "assign bob slot02" prints slot02 admin assign bob slot02
home_before=$(stat -c '%U:%G %a' "$HOME1")

# --- what alice leaves behind as slot01 ---
as1 sleep 1000 &
as1 sh -c 'trap "" TERM HUP INT; exec sleep 1001' &
as1 setsid sh -c 'sleep 1002 & sleep 1003' &
# a process that changed its effective uid back to root is still the slot's (real uid)
setpriv --ruid=slot01 --euid=0 --regid=slot01 --clear-groups sleep 1004 &
as2 sleep 1005 &
for n in 1000 1001 1002 1003 1004 1005; do wait_for pgrep -x -f "sleep $n" >/dev/null; done
check "slot01 runs processes before the release" test "$(procs_of "$U1")" -ge 4
as1 sh -c "echo secret >$HOME1/.history; mkdir -p $HOME1/deep/er; echo x >$HOME1/deep/er/file"
as1 ln -s /etc/passwd "$HOME1/link-to-passwd"
as1 ln -s "$DOCS" "$HOME1/link-to-docs"
as1 sh -c 'echo s >/dev/shm/alice-shm; echo t >/tmp/alice-tmp; echo v >/var/tmp/alice-vartmp'
as1 sh -c 'mkdir -p /tmp/alice-dir/sub; echo y >/tmp/alice-dir/sub/f; ln -s /etc/passwd /tmp/alice-link'
as1 sh -c "echo state >$SROOT/state/slot01/s; echo run >$SROOT/run/slot01/r"
as1 sh -c "echo made >$TREE/by-slot; mkdir $TREE/dir-by-slot; echo made >$TREE/dir-by-slot/f"
as1 chmod 0777 "$TREE/by-slot"
# as crontab(1) and at(1) leave them: files owned by the user in root's spool folders
echo '* * * * * true' >/var/spool/cron/crontabs/slot01
echo job >/var/spool/cron/atjobs/a0001
chown slot01 /var/spool/cron/crontabs/slot01 /var/spool/cron/atjobs/a0001
echo job >/var/spool/cron/atjobs/a0002
chown slot02 /var/spool/cron/atjobs/a0002
: >/var/lib/systemd/linger/slot01
: >/var/lib/systemd/linger/slot02
# The namespace's /tmp is a tmpfs with POSIX ACLs: a setfacl that fails is a failure, not a skip.
check "setfacl names slot01 in the tree and slot02 in the home's default ACL" \
	sh -c 'setfacl -m "u:slot01:rwx" "$1" && setfacl -d -m "u:slot02:rwx" "$2"' _ "$TREE/dir-by-slot/f" "$HOME1"
# The slot hands a folder it made in the tree to an outsider group (gid 4999), default ACL too.
check "slot01 grants gid 4999 r-x on its folder in the tree" \
	as1 setfacl -m g:4999:r-x -m d:g:4999:r-x "$TREE/dir-by-slot"
# A chain of slot02's folders 200 deep in /tmp, with a file of slot01's at depth 100 and at 200.
DEEP100=/tmp/deep-bob$(printf '/d%.0s' $(seq 99))
DEEP200=$DEEP100$(printf '/d%.0s' $(seq 100))
as2 sh -c 'umask 0; mkdir -p "$1"' _ "$DEEP200" || not_ok "make slot02's chain of 200 folders in /tmp"
as1 sh -c 'echo near >"$1/near"; echo far >"$2/far"' _ "$DEEP100" "$DEEP200"
as1 "$IPC_HELPER" alice-mq >"$S/ipc1" || not_ok "release-ipc as slot01"
as2 "$IPC_HELPER" bob-mq >"$S/ipc2" || not_ok "release-ipc as slot02"
shm1=$(awk '$1 == "shm" { print $2 }' "$S/ipc1")
sem1=$(awk '$1 == "sem" { print $2 }' "$S/ipc1")
msg1=$(awk '$1 == "msg" { print $2 }' "$S/ipc1")
shm2=$(awk '$1 == "shm" { print $2 }' "$S/ipc2")
# planted by someone else: a symlink in the tree to a file outside it
echo outside >"$S/outside"
chmod 0600 "$S/outside"
ln -s "$S/outside" "$TREE/planted"
# what others own stays
echo root >/tmp/root-file
as2 sh -c 'echo bob >/tmp/bob-file; echo bob >/dev/shm/bob-shm'
outside_before=$(stat_all "$S/outside" /etc/passwd "$DOCS")
check "alice's objects exist before the release" \
	test -e /dev/shm/alice-shm -a -e /tmp/alice-tmp -a -e /var/tmp/alice-vartmp -a -e "$HOME1/.history" \
	-a -e /tmp/alice-dir/sub/f -a -L /tmp/alice-link -a -e /var/spool/cron/crontabs/slot01 \
	-a -e /var/spool/cron/atjobs/a0001 \
	-a -e "$TREE/dir-by-slot/f" -a -s "$SROOT/state/slot01/s" -a -s "$SROOT/run/slot01/r"
check "the ACL entry naming slot01 is there before the release" \
	sh -c "getfacl -n '$TREE/dir-by-slot/f' 2>/dev/null | grep -q ':$U1:'"
check "the home's default ACL names slot02 before the release" \
	sh -c "getfacl -cs '$HOME1' | grep -q 'default:user:slot02:rwx'"
check "slot01's and slot02's lingering flags are there before the release" \
	test -e /var/lib/systemd/linger/slot01 -a -e /var/lib/systemd/linger/slot02
check "slot01's files at depth 100 and 200 of slot02's chain are there before the release" \
	test "$(stat -c %u "$DEEP100/near" "$DEEP200/far" 2>/dev/null | tr '\n' ' ')" = "$U1 $U1 "
check "slot01's SysV shared memory exists before the release" sysv_has shm "$shm1"
check "slot01's SysV semaphore set exists before the release" sysv_has sem "$sem1"
check "slot01's SysV message queue exists before the release" sysv_has msg "$msg1"
check "slot02's SysV shared memory exists before the release" sysv_has shm "$shm2"
if [ -n "$MQ" ]; then
	check "slot01's POSIX message queue exists before the release" test -e "$MQ/alice-mq"
	check "slot02's POSIX message queue exists before the release" test -e "$MQ/bob-mq"
fi

# --- release ---
admin release alice >"$S/out" 2>"$S/err"
st=$?
cat "$S/out" "$S/err"
check "release alice exits 0" test "$st" = 0
check "it says slot01 released" grep -q "slot01 released" "$S/out"
check "slot01 is free" slot_is_free slot01

# processes
sleep 0.2
check "no process of slot01's uid is left" test "$(procs_of "$U1")" = 0
check "slot02's process still runs" test "$(procs_of "$U2")" -ge 1

# home, state, run
check "the home is empty" test -z "$(ls -A "$HOME1")"
check "the home kept owner, group and mode ($home_before)" test "$(stat -c '%U:%G %a' "$HOME1")" = "$home_before"
check "the home is a fresh folder: no ACL of the old one" test -z "$(getfacl -cs "$HOME1")"
check "state/slot01 is empty" test -z "$(ls -A "$SROOT/state/slot01")"
check "run/slot01 is empty" test -z "$(ls -A "$SROOT/run/slot01")"
check "symlinks in the home were removed, not followed" \
	test "$(stat_all "$S/outside" /etc/passwd "$DOCS")" = "$outside_before" -a -s /etc/passwd

# IPC
check "slot01's shm segment is gone" sysv_gone shm "$shm1"
check "slot01's semaphore set is gone" sysv_gone sem "$sem1"
check "slot01's message queue is gone" sysv_gone msg "$msg1"
check "slot02's shm segment stays" sysv_has shm "$shm2"
if [ -n "$MQ" ]; then
	check "slot01's POSIX message queue is gone" test ! -e "$MQ/alice-mq"
	check "slot02's POSIX message queue stays" test -e "$MQ/bob-mq"
else
	echo "# $MQ_WHY: POSIX message queue case not run"
fi

# temp files
check "/dev/shm/alice-shm is gone" test ! -e /dev/shm/alice-shm
check "/tmp/alice-tmp is gone" test ! -e /tmp/alice-tmp
check "/var/tmp/alice-vartmp is gone" test ! -e /var/tmp/alice-vartmp
check "/tmp/alice-dir is gone with its contents" test ! -e /tmp/alice-dir
check "the symlink /tmp/alice-link is gone, its target not" test ! -L /tmp/alice-link -a -s /etc/passwd
check "root's file in /tmp stays" test -e /tmp/root-file
check "slot02's files in /tmp and /dev/shm stay" test -e /tmp/bob-file -a -e /dev/shm/bob-shm
check "no file of slot01 is left at the top of /tmp /var/tmp /dev/shm" \
	test "$(find /tmp /var/tmp /dev/shm -maxdepth 1 -uid "$U1" | wc -l)" = 0
check "slot01's file at depth 100 of slot02's folders is gone" test ! -e "$DEEP100/near" -a -d "$DEEP100"
check "the walk goes to any depth (slots-admin(8)): slot01's file at depth 200 is gone" \
	test ! -e "$DEEP200/far" -a -d "$DEEP200"

# crontab and at jobs
check "slot01's crontab is gone" test ! -e /var/spool/cron/crontabs/slot01
check "slot01's at job is gone" test ! -e /var/spool/cron/atjobs/a0001
check "slot02's at job stays" test -e /var/spool/cron/atjobs/a0002
check "slot01's lingering flag is gone" test ! -e /var/lib/systemd/linger/slot01
check "slot02's lingering flag stays" test -e /var/lib/systemd/linger/slot02

# the user's tree
check "no entry of the tree is owned by slot01's uid" test "$(find "$TREE" -uid "$U1" | wc -l)" = 0
check "no entry of the tree has slot01's gid" test "$(find "$TREE" -gid "$G1" | wc -l)" = 0
check "what slot01 made now belongs to svc:svc" test "$(stat -c '%U:%G' "$TREE/by-slot")" = svc:svc
check "its 0777 file lost access for others and its group" test "$(stat -c %a "$TREE/by-slot")" = 700
check "the ACL entry naming slot01 is gone" \
	sh -c "getfacl -n '$TREE/dir-by-slot/f' >'$S/acl.after' && ! grep -q ':$U1:' '$S/acl.after'"
check "the outsider group's grant went with the folder's ACL (access and default)" \
	sh -c "getfacl -cn '$TREE/dir-by-slot' >'$S/acl.dir' && ! grep -q ':4999:' '$S/acl.dir' && ! grep -q '^mask::' '$S/acl.dir'"
check "and a later chmod g+rx brings no grant back" \
	sh -c "chmod g+rx '$TREE/dir-by-slot' && ! getfacl -cn '$TREE/dir-by-slot' | grep -q ':4999:'"
check "the planted symlink's target is unchanged" test "$(stat_all "$S/outside" /etc/passwd "$DOCS")" = "$outside_before"
out=$(runuser -u slot01 -- ls "$TREE" 2>&1)
st=$?
echo "$out"
check "as slot01, listing the previous user's tree fails" test "$st" != 0
check "with EACCES (Permission denied)" sh -c 'echo "$1" | grep -q "Permission denied"' _ "$out"
out=$(runuser -u slot01 -- cat "$TREE/by-slot" 2>&1)
check "as slot01, reading a file it made there fails with EACCES" sh -c 'echo "$1" | grep -q "Permission denied"' _ "$out"

# --- the next user of slot01 starts clean ---
check "assign carol slot01 (the slot is back in the pool)" prints slot01 admin assign carol slot01
check "carol's slot01 reaches her own tree" runuser -u slot01 -- ls "$DOCS/_users/carol"
out=$(runuser -u slot01 -- ls "$TREE" 2>&1)
check "and still not alice's (EACCES)" sh -c 'echo "$1" | grep -q "Permission denied"' _ "$out"
check "release by slot (release --slot slot01) works too" quiet admin release --slot slot01
check "carol's tree is the service's again" test "$(stat -c %G "$DOCS/_users/carol")" = svc
admin_run release alice
check "releasing a user who holds no slot: exit 0" test "$st" = 0
check "and it says so" grep -q 'holds no slot' "$S/out"
slots_done
