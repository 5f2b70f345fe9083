#!/bin/sh
# A neighbour at release (issue 44): another slot's process that took something of the holder's.
#   C the holder chooses its mailbox's mode and group before release: the next one is
#     slotNN:mail 0660 all the same
#   A slot03 passes a descriptor of a file of alice's tree to a process of slot04 (an abstract
#     unix socket, SCM_RIGHTS): release ends that process and names it; it reads nothing alice
#     writes after her next assign
#   B through a folder descriptor slot04 makes a file of its own in alice's tree and links one
#     of its files there: release hands the file to the service and puts a copy of the
#     service's in place of the linked name; assign does the same before it grants the next
#     slot, which gives slot04 nothing
#   D a 0777 folder in slot03's home where a process of slot04 keeps making names: release
#     finishes all the same and the slot is free
RELEASE_POOL=5
RELEASE_UID_MIN=48300
. "$top_srcdir/tests/integration/release-lib.sh"
command -v python3 >/dev/null || { echo "SKIP: python3 is not installed"; exit 77; }

TREE=$DOCS/_users/alice
HOME3=$SROOT/home/slot03
# setpriv, not runuser: it execs the command itself, so $! is the neighbour's own pid.
as() {
	as_who=$1
	shift
	setpriv --reuid="$as_who" --regid="$as_who" --init-groups "$@"
}
mount -t tmpfs -o mode=2775 tmpfs /var/mail || { echo "Bail out! cannot mount a tmpfs on /var/mail"; exit 99; }
chgrp mail /var/mail
BOX=$S/box
mkdir -p "$BOX"
chmod 0777 "$BOX"
# give TAG PATH: hands an fd of PATH to the keeper TAG.  keep TAG MODE: waits for it, then
# read (what the file holds, again and again, into TAG.out), plant (a file of its own and a
# link to one in the folder) or churn (names made in the folder, without end).
cat >"$S/nb.py" <<'PY'
import os, socket, sys, time
box, role, tag = sys.argv[1], sys.argv[2], sys.argv[3]
addr = "\0slots-neighbours-%d-%s" % (os.stat(box).st_ino, tag)
def mark(what):
    open(os.path.join(box, tag + "." + what), "w").close()
if role == "give":
    path = sys.argv[4]
    fd = os.open(path, os.O_RDONLY | (os.O_DIRECTORY if os.path.isdir(path) else 0))
    s = socket.socket(socket.AF_UNIX)
    s.connect(addr)
    socket.send_fds(s, [b"x"], [fd])
    sys.exit(0)
mode = sys.argv[4]
srv = socket.socket(socket.AF_UNIX)
srv.bind(addr)
srv.listen(1)
mark("ready")
c, _ = srv.accept()
_, (fd,), _, _ = socket.recv_fds(c, 1, 1)
mark("held")
if mode == "read":
    while True:
        got = os.pread(fd, 4096, 0)
        with open(os.path.join(box, tag + ".out"), "ab") as out:
            out.write(got)
        time.sleep(0.05)
elif mode == "plant":
    f = os.open("planted", os.O_CREAT | os.O_WRONLY, 0o644, dir_fd=fd)
    os.write(f, b"slot04's\n")
    os.close(f)
    own = os.path.join(box, tag + ".own")
    with open(own, "w") as f:
        f.write("slot04's own\n")
    os.link(own, "linked", dst_dir_fd=fd)
    mark("planted")
    while True:
        time.sleep(1)
elif mode == "churn":
    os.fchdir(fd)
    i = 0
    while True:
        i += 1
        try:
            os.mkdir("d%d" % i)
            os.close(os.open("f%d" % i, os.O_CREAT | os.O_WRONLY, 0o666))
            if i == 50:
                mark("churning")
        except OSError:
            pass
PY
# keeper TAG MODE: starts slot04's keeper (its pid in $keeper) and waits until it listens.
keeper() {
	setpriv --reuid=slot04 --regid=slot04 --init-groups python3 "$S/nb.py" "$BOX" keep "$1" "$2" 2>"$S/$1.err" &
	keeper=$!
	wait_for test -e "$BOX/$1.ready"
}

check "assign bob slot04 (the neighbour)" prints slot04 admin assign bob slot04

# ---- C: the mailbox is slot03:mail 0660, whatever the holder made of the old one ----
check "assign alice slot03" prints slot03 admin assign alice slot03
install -o slot03 -g mail -m 0660 /dev/null /var/mail/slot03
check "as slot03: the mailbox is opened to all (chmod 0666)" as slot03 chmod 0666 /var/mail/slot03
check "as slot03: the mailbox gets the shared group" as slot03 chgrp slotshared /var/mail/slot03
admin_run release alice
cat "$S/err"
check "release alice exits 0" test "$st" = 0
check "the new mailbox is slot03:mail 0660, not the old one's group and mode" \
	test "$(stat -c '%U:%G %a' /var/mail/slot03)" = "slot03:mail 660"
install -o root -g root -m 0644 /dev/null /var/mail/slot03
check "assign alice slot03 (a mailbox of root's 0644 is there)" prints slot03 admin assign alice slot03
admin_run release alice
check "release alice exits 0" test "$st" = 0
check "the new mailbox is slot03:mail 0660, not root's 0644" \
	test "$(stat -c '%U:%G %a' /var/mail/slot03)" = "slot03:mail 660"

# ---- A: a descriptor of a file of alice's tree, passed to a process of slot04 ----
check "assign alice slot03" prints slot03 admin assign alice slot03
as slot03 sh -c "echo before >$TREE/doc"
keeper doc read
check "slot03 hands a descriptor of $TREE/doc to slot04's process" as slot03 python3 "$S/nb.py" "$BOX" give doc "$TREE/doc"
check "slot04 reads alice's file through it" wait_for grep -q before "$BOX/doc.out"
admin_run release alice
cat "$S/err"
check "release alice exits 0" test "$st" = 0
check "slot04's process that held alice's file is gone" wait_for sh -c "! kill -0 $keeper 2>/dev/null"
check "release names it (pid, uid)" grep -q "process $keeper (uid $(uid_of slot04)" "$S/err"
check "assign alice slot05" prints slot05 admin assign alice slot05
as slot05 sh -c "echo after-secret >$TREE/doc"
sleep 0.3
check "slot04 read nothing alice wrote after her release" sh -c "! grep -q after-secret '$BOX/doc.out'"

# ---- B: a file of slot04's made in alice's tree through a folder descriptor ----
as slot05 sh -c "mkdir $TREE/open && chmod 0777 $TREE/open"
keeper open plant
check "slot05 hands a descriptor of $TREE/open to slot04's process" \
	as slot05 python3 "$S/nb.py" "$BOX" give open "$TREE/open"
check "slot04 made a file and a link in alice's tree" wait_for test -e "$BOX/open.planted"
check "the file is slot04's" test "$(stat -c %U "$TREE/open/planted")" = slot04
check "the link is slot04's, with two names" test "$(stat -c '%U %h' "$TREE/open/linked")" = "slot04 2"
# user_tree_row SLOT: the status of check's user-tree row for SLOT; check's output in $S/check.
user_tree_row() {
	admin check >"$S/check" 2>&1
	awk -v s="$1" '$2 == "user-tree" && $3 == s { print $1; exit }' "$S/check"
}
check "check's user-tree row FAILs slot04's entries in alice's tree" test "$(user_tree_row slot05)" = FAIL
check "the row names one and its owner" grep -q "to another account than the service and slot05.*open/[a-z]* (uid $(uid_of slot04))" "$S/check"
admin_run release alice
cat "$S/err"
check "release alice exits 0" test "$st" = 0
check "the file slot04 made is the service's now" test "$(stat -c %U "$TREE/open/planted")" = svc
check "the linked name is a copy of the service's now, one link" test "$(stat -c '%U %h' "$TREE/open/linked")" = "svc 1"
check "the copy keeps the content" test "$(cat "$TREE/open/linked")" = "slot04's own"
check "release names the linked file it replaced" grep -q "open/linked: has 2 hard links and is uid $(uid_of slot04)'s" "$S/err"
check "slot04's own file keeps its content" test "$(cat "$BOX/open.own")" = "slot04's own"
# what an older release left (a file of slot04's, a link of slot04's): assign does the same
install -o slot04 -g slot04 -m 0666 /dev/null "$TREE/open/left"
ln "$BOX/open.own" "$TREE/open/left-linked"
admin_run assign alice slot03
cat "$S/err"
check "assign alice slot03 exits 0" test "$st" = 0
check "assign hands slot04's file to the service" test "$(stat -c %U "$TREE/open/left")" = svc
check "assign puts a copy of the service's in place of slot04's linked name" \
	test "$(stat -c '%U %h' "$TREE/open/left-linked")" = "svc 1"
check "the grant names no account but slot03 on slot04's old files" \
	sh -c "! getfacl -cpn '$TREE/open/planted' '$TREE/open/left' '$TREE/open/left-linked' | grep -q ':$(uid_of slot04):'"
check "slot04's own file has no entry for slot03" sh -c "! getfacl -cpn '$BOX/open.own' | grep -q ':$(uid_of slot03):'"
check "check's user-tree row passes on slot03's tree" test "$(user_tree_row slot03)" = PASS
check "slot04's own file keeps its content" test "$(cat "$BOX/open.own")" = "slot04's own"

# ---- D: a 0777 folder in slot03's home where slot04 keeps making names ----
as slot03 sh -c "mkdir $HOME3/sub && chmod 0777 $HOME3/sub"
keeper sub churn
check "slot03 hands a descriptor of its sub folder to slot04's process" \
	as slot03 python3 "$S/nb.py" "$BOX" give sub "$HOME3/sub"
check "slot04 makes names there" wait_for test -e "$BOX/sub.churning"
timeout 120 "$SLOTS_ADMIN" --config "$CONF" release alice >"$S/out" 2>"$S/err"
st=$?
cat "$S/err"
check "release alice exits 0 while slot04 makes names in the old home" test "$st" = 0
check "slot03 is free" slot_is_free slot03
check "the home is slot03's, 0700 and empty" \
	test "$(stat -c '%U:%G %a' "$HOME3")" = "slot03:slot03 700" -a -z "$(ls -A "$HOME3")"
check "nothing of the old home is left beside it" test -z "$(ls -A "$SROOT/home" | grep slots-)"
slots_done
