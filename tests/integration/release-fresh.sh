#!/bin/sh
# Fresh folders at release: a process of slot03 hands a descriptor of its home, an inotify watch
# on it and a descriptor of its mailbox to a process of the service's (SCM_RIGHTS; one of another
# slot's release ends: release-neighbours.sh), which keeps them across release of slot03's user
# and the next assign of slot03 to another user.  Through them it sees no name the next user
# makes, no event, and none of her mail: home, state and run are new inodes and the mailbox a
# new file.  The parts release runs are safe to repeat: leftovers
# under release's own names (a killed run) go; a default ACL of the parents is not inherited;
# a parent of another owner is refused.
RELEASE_POOL=4
RELEASE_UID_MIN=47800
. "$top_srcdir/tests/integration/release-lib.sh"
command -v python3 >/dev/null || { echo "SKIP: python3 is not installed"; exit 77; }

HOME3=$SROOT/home/slot03
as3() {
	runuser -u slot03 -- "$@"
}
# The mail spool is the host's: the test gets one of its own.
mount -t tmpfs -o mode=2775 tmpfs /var/mail || { echo "Bail out! cannot mount a tmpfs on /var/mail"; exit 99; }
chgrp mail /var/mail
BOX=$S/box
mkdir -p "$BOX"
chmod 0777 "$BOX"
cat >"$S/keep.py" <<'PY'
import array, ctypes, os, socket, struct, sys, time
libc = ctypes.CDLL(None, use_errno=True)
box, role = sys.argv[1], sys.argv[2]
sock = os.path.join(box, "sock")
if role == "give":
    home, mail = sys.argv[3], sys.argv[4]
    hfd = os.open(home, os.O_RDONLY | os.O_DIRECTORY)
    ifd = libc.inotify_init1(os.O_NONBLOCK)
    if ifd < 0 or libc.inotify_add_watch(ifd, home.encode(), 0xfff) < 0:
        sys.exit("inotify: %s" % os.strerror(ctypes.get_errno()))
    mfd = os.open(mail, os.O_RDONLY)
    s = socket.socket(socket.AF_UNIX)
    s.connect(sock)
    socket.send_fds(s, [b"x"], [hfd, ifd, mfd])
    sys.exit(0)
# keep: wait for the fds, then for "mark" (drain the events) and "report" (what they show now).
srv = socket.socket(socket.AF_UNIX)
srv.bind(sock)
os.chmod(sock, 0o777)
srv.listen(1)
open(os.path.join(box, "ready"), "w").close()
c, _ = srv.accept()
_, (hfd, ifd, mfd), _, _ = socket.recv_fds(c, 1, 3)
def events():
    n = 0
    while True:
        try:
            buf = os.read(ifd, 65536)
        except BlockingIOError:
            return n
        off = 0
        while off < len(buf):
            wd, mask, cookie, ln = struct.unpack_from("iIII", buf, off)
            name = buf[off + 16:off + 16 + ln].rstrip(b"\0").decode()
            if not mask & 0x8000:           # IN_IGNORED: the watch ended
                n += 1
                print("event %#x %s" % (mask, name), file=sys.stderr)
            off += 16 + ln
open(os.path.join(box, "held"), "w").close()
for step in ("mark", "report"):
    while not os.path.exists(os.path.join(box, step)):
        time.sleep(0.02)
    n = events()
    if step == "mark":
        open(os.path.join(box, "marked"), "w").close()
with open(os.path.join(box, "out"), "w") as out:
    print("names %d" % len(os.listdir(hfd)), file=out)
    print("events %d" % n, file=out)
    print("mail %s" % os.pread(mfd, 4096, 0).decode().replace("\n", " "), file=out)
PY
check "assign alice slot03" prints slot03 admin assign alice slot03
check "assign bob slot04" prints slot04 admin assign bob slot04
install -o slot03 -g mail -m 0660 /dev/null /var/mail/slot03
echo "mail for alice" >>/var/mail/slot03
as3 sh -c "echo alice >$HOME3/alice-file"
inode_before=$(stat -c %i "$HOME3")
mail_inode_before=$(stat -c %i /var/mail/slot03)

runuser -u svc -- python3 "$S/keep.py" "$BOX" keep 2>"$S/keep.err" &
keeper=$!
check "the service's keeper listens" wait_for test -e "$BOX/ready"
check "slot03 hands its home, a watch on it and its mailbox to the service's process" \
	as3 python3 "$S/keep.py" "$BOX" give "$HOME3" /var/mail/slot03
check "the service's process holds them" wait_for test -e "$BOX/held"

admin_run release alice
cat "$S/out" "$S/err"
check "release alice exits 0" test "$st" = 0
check "the service's keeper outlived the release (the service may hold them)" kill -0 "$keeper"
check "the home is a new inode" test "$(stat -c %i "$HOME3")" != "$inode_before"
check "the home is slot03:slot03 0700 and empty" \
	test "$(stat -c '%U:%G %a' "$HOME3")" = "slot03:slot03 700" -a -z "$(ls -A "$HOME3")"
check "the mailbox is a new file" test "$(stat -c %i /var/mail/slot03)" != "$mail_inode_before"
check "the mailbox is empty and keeps owner, group and mode" \
	test "$(stat -c '%U:%G %a %s' /var/mail/slot03)" = "slot03:mail 660 0"
check "no name of release's own is left beside the folders" \
	test -z "$(ls -A "$SROOT/home" "$SROOT/state" "$SROOT/run" /var/mail | grep slots-)"

check "assign carol slot03" prints slot03 admin assign carol slot03
touch "$BOX/mark"
check "the service's process drained what release did" wait_for test -e "$BOX/marked"
as3 sh -c "echo carol >$HOME3/carol-secret; mkdir $HOME3/carol-dir"
echo "mail for carol" >>/var/mail/slot03
touch "$BOX/report"
check "the service's process reports" wait_for test -e "$BOX/out"
wait "$keeper"
cat "$BOX/out" "$S/keep.err"
check "through the old home's descriptor: no name of carol's" grep -qx "names 0" "$BOX/out"
check "through the old watch: no event of carol's" grep -qx "events 0" "$BOX/out"
check "through the old mailbox: no mail of carol's" sh -c "! grep -q carol '$BOX/out'"

# --- a killed release's leftovers under release's own names go; each part repeats ---
check "release carol" prints "slot03 released" admin release carol
for kind in home state run; do
	mkdir -m 0 "$SROOT/$kind/.slot03.slots-fresh"
	mkdir -p "$SROOT/$kind/.slot03.slots-old/deep"
	echo left >"$SROOT/$kind/.slot03.slots-old/deep/file"
done
check "release --slot of a free slot does nothing" prints "slot03 is free; nothing to release" \
	admin release --slot slot03
check "assign dave slot03" prints slot03 admin assign dave slot03
check "release dave with leftovers of a killed run" prints "slot03 released" admin release dave
check "the leftovers are gone" test -z "$(ls -A "$SROOT/home" "$SROOT/state" "$SROOT/run" | grep slots-)"
check "home, state and run are slot03:slot03 0700" test "$(stat_all "$HOME3" "$SROOT/state/slot03" \
	"$SROOT/run/slot03")" = "$(uid_of slot03):$(gid_of slot03) 700 $(uid_of slot03):$(gid_of slot03) 700 $(uid_of slot03):$(gid_of slot03) 700 "

# --- a default ACL on the parents (an admin's setfacl -d) does not reach the fresh folders ---
for kind in home state run; do
	setfacl -d -m u:slot04:rwx "$SROOT/$kind"
done
check "assign frank slot03" prints slot03 admin assign frank slot03
check "release frank under parents with a default ACL" prints "slot03 released" admin release frank
check "the fresh home, state and run carry no ACL entry" \
	test -z "$(getfacl -cs "$HOME3" "$SROOT/state/slot03" "$SROOT/run/slot03" 2>&1)"
for kind in home state run; do
	setfacl -k "$SROOT/$kind"
done

# --- a parent of another owner is refused: the slot stays pending, nothing is made there ---
check "assign erin slot03" prints slot03 admin assign erin slot03
chown svc "$SROOT/state"
admin_run release erin
cat "$S/err"
check "release with state's parent owned by svc exits 1" test "$st" = 1
check "the message names the parent" grep -q "$SROOT/state: is uid $(uid_of svc) mode 0755" "$S/err"
check "the message gives the fix" grep -q "fix: chown root:root $SROOT/state && chmod 0755" "$S/err"
check "nothing was made in that parent" test -z "$(ls -A "$SROOT/state" | grep slots-)"
check "slot03 stays pending" json_ok '.cleanup == "pending"' "$(table_entry slot03 >"$S/entry"; echo "$S/entry")"
chown root "$SROOT/state"
check "release --slot finishes once the parent is root's" prints "slot03 released" admin release --slot slot03
slots_done
