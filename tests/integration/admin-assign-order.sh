#!/bin/sh
# assign's order (slots_assign): the assignment is saved and the table lock dropped before the
# user's tree is walked (under the slot's own lock), and the slot is printed only once the tree is
# ready.  The first assign is held inside its tree walk without any timing: its tree has a file
# with a second name, the walk's note about it goes to standard error, and standard error is a
# pipe filled to the brim beforehand, so the note's write blocks inside the walk.  While it is
# held there: the table already names the user, the table lock is free, a second assign of
# another user finishes and prints its slot, a status answers, and the first has printed nothing.
# Then the pipe is drained and the first prints its slot.
. "$top_srcdir/tests/integration/lib.sh"
slots_need_root
command -v python3 >/dev/null || { echo "SKIP: python3 is not installed"; exit 77; }
slots_enter_namespace "$@"
. "$top_srcdir/tests/integration/check-lib.sh"

check_fixture
U=held.in.walk
install -d -m 2770 -o "$SERVICE" -g "$SERVICE" "$DOCS/_users/$U"
echo "some work" >"$DOCS/_users/$U/a.txt"
# (the second name on the tree's file system, root's: a hard link cannot cross file systems)
mkdir -p "$SLOTS_SCRATCH/originals"
echo "linked" >"$SLOTS_SCRATCH/originals/linked"
ln "$SLOTS_SCRATCH/originals/linked" "$DOCS/_users/$U/linked" || not_ok "linking a file into the tree"

python3 - "$SLOTS_ADMIN" "$TABLE" "$U" other.user >"$OUT/order.tap" 2>"$OUT/order.err" <<'PY'
import fcntl, json, os, select, subprocess, sys, time

admin, table, user, other = sys.argv[1:5]
n = 0
def ok(cond, desc):
    global n
    n += 1
    print(("ok - " if cond else "not ok - ") + desc, flush=True)

r, w = os.pipe()
os.set_blocking(w, False)
try:
    while True:
        os.write(w, b"x" * 4096)
except BlockingIOError:
    pass
os.set_blocking(w, True)
first = subprocess.Popen([admin, "assign", user], stdout=subprocess.PIPE, stderr=w)
os.close(w)

# Held: the first blocks writing to fd 2 (syscall 1, write, on fd 0x2), or it has ended.
held = False
for _ in range(600):
    try:
        with open("/proc/%d/syscall" % first.pid) as f:
            words = f.read().split()
    except OSError:
        words = []
    if first.poll() is not None:
        break
    if len(words) > 1 and words[0] == "1" and words[1] == "0x2":
        held = True
        break
    time.sleep(0.05)
ok(held, "the first assign is held in its tree walk, writing a note to a full stderr")

if held:
    with open(table) as f:
        d = json.load(f)
    ok(any(e.get("user") == user for e in d["slots"].values()),
       "while the walk runs, the table already holds the assignment")
    fd = os.open(table + ".lock", os.O_RDONLY)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        free = True
        fcntl.flock(fd, fcntl.LOCK_UN)
    except BlockingIOError:
        free = False
    os.close(fd)
    ok(free, "while the walk runs, the table lock is free")
    try:
        second = subprocess.run([admin, "assign", other], capture_output=True, timeout=60)
        ok(second.returncode == 0 and second.stdout.decode().strip().startswith("slot"),
           "a second assign of another user finishes while the first walks (exit %d, %r)"
           % (second.returncode, second.stdout.decode().strip()))
    except subprocess.TimeoutExpired:
        ok(False, "a second assign of another user finishes while the first walks (it waited 60 s)")
    try:
        st = subprocess.run([admin, "status", user], capture_output=True, timeout=60)
        ok(st.returncode == 0, "status of the first user answers while its walk runs")
    except subprocess.TimeoutExpired:
        ok(False, "status of the first user answers while its walk runs (it waited 60 s)")
    readable, _, _ = select.select([first.stdout], [], [], 0)
    ok(first.poll() is None and not readable, "the first assign has printed no slot while its tree is not ready")

# Drain the pipe; the first finishes and prints its slot.
os.set_blocking(r, False)
deadline = time.time() + 120
while first.poll() is None and time.time() < deadline:
    try:
        os.read(r, 65536)
    except BlockingIOError:
        time.sleep(0.05)
if first.poll() is None:
    first.kill()
out = first.communicate()[0].decode().strip()
ok(first.returncode == 0 and out.startswith("slot"), "then the first prints its slot (exit %s, %r)"
   % (first.returncode, out))
PY
rc=$?
[ -s "$OUT/order.err" ] && sed 's/^/# /' "$OUT/order.err"
while IFS= read -r line; do
	case $line in
	"ok - "*) ok "${line#ok - }" ;;
	"not ok - "*) not_ok "${line#not ok - }" ;;
	esac
done <"$OUT/order.tap"
check "the order script ran to its end (exit $rc)" test "$rc" = 0
check "it ran every case" test "$(grep -c -e '^ok - ' -e '^not ok - ' "$OUT/order.tap")" = 7
slots_done
