#!/bin/sh
# slots-provision refusing what it must refuse, on an image of the example host (--root), each
# shown to change nothing (issue 19; never produced by a test before):
#   - visudo rejects the sudoers drop-in: refused (exit 1) naming the drop-in, with visudo's words, no
#     drop-in, nothing written;
#   - another program holds the account files lock (etc/.pwd.lock, lckpwdf's POSIX lock): after
#     its wait, exit 1 naming the lock and the fix, nothing written.
# The control: with a visudo that accepts and no lock held, the same run succeeds, and leaves
# a hard link inside a shared folder alone (it could be any file of the file system).
. "$top_srcdir/tests/integration/lib.sh"
slots_need_root
command -v python3 >/dev/null || { echo "SKIP: python3 is not installed (it holds the POSIX lock)"; exit 77; }
slots_enter_namespace "$@"

CONF=$top_srcdir/data/slots.conf.example
P=$SLOTS_SCRATCH/p
mkdir -p "$P"
SOURCE_DATE_EPOCH=1767225600
export SOURCE_DATE_EPOCH
unset SLOTS_CONFIG

. "$top_srcdir/tests/provision/image-lib.sh"
prov() {
	R=$1
	shift
	timeout 120 "$SLOTS_PROVISION" --root "$R" --config "$CONF" "$@"
}

# --- visudo rejects the drop-in (a visudo of our own, bind-mounted over the host's) ---
[ -x /usr/sbin/visudo ] || { echo "Bail out! no /usr/sbin/visudo: sudo is a test dependency (scripts/deps.sh)"; exit 99; }
printf '#!/bin/sh\ncat >/dev/null\necho ">>> stdin: syntax error near line 3 <<<"\nexit 1\n' >"$P/visudo-no"
chmod 0755 "$P/visudo-no"
mount --bind "$P/visudo-no" /usr/sbin/visudo || { echo "Bail out! cannot bind a visudo over /usr/sbin/visudo"; exit 99; }
image "$P/r1"
snap "$P/r1" >"$P/before"
prov "$P/r1" >"$P/out" 2>"$P/err"
st=$?
umount /usr/sbin/visudo
sed 's/^/# /' "$P/err"
check "visudo says no: refused, exit 1 (not an invalid config)" test "$st" = 1
check "the message says visudo rejects the drop-in" grep -q "visudo rejects the drop-in, not installed" "$P/err"
check "it is a refusal naming the drop-in" grep -q "^slots-provision: refused: /etc/sudoers.d/slots-" "$P/err"
check "with visudo's own words" grep -q "syntax error near line 3" "$P/err"
check "no drop-in in sudoers.d" test -z "$(ls -A "$P/r1/etc/sudoers.d")"
snap "$P/r1" >"$P/after"
check "nothing in the image changed" cmp -s "$P/before" "$P/after"

# --- the account files lock held by another program ---
image "$P/r2"
python3 - "$P/r2/etc/.pwd.lock" "$P/locked" <<'PY' &
import fcntl, os, sys, time
f = open(sys.argv[1], "r+")
fcntl.lockf(f, fcntl.LOCK_EX)          # a POSIX write lock, as lckpwdf takes it
open(sys.argv[2], "w").close()
time.sleep(60)
PY
holder=$!
n=0
while [ ! -e "$P/locked" ] && [ $n -lt 100 ]; do sleep 0.1; n=$((n + 1)); done
check "another program holds etc/.pwd.lock" test -e "$P/locked"
snap "$P/r2" >"$P/before"
t0=$(date +%s)
prov "$P/r2" >"$P/out" 2>"$P/err"
st=$?
t1=$(date +%s)
kill "$holder" 2>/dev/null
wait "$holder" 2>/dev/null
sed 's/^/# /' "$P/err"
check "the lock is held: exit 1" test "$st" = 1
check "the message names the lock and who holds it" grep -Eq "the account files lock is held by process [0-9]+ \(python3\); gave up after waiting" "$P/err"
check "the fix says to wait for the other tool" grep -q "wait for the other account tool" "$P/err"
check "it waited before giving up (about 15 s, took $((t1 - t0)) s)" test $((t1 - t0)) -ge 10
snap "$P/r2" >"$P/after"
check "nothing in the image changed" cmp -s "$P/before" "$P/after"

# --- the control: the same image, the real visudo, no lock held ---
# A hard link inside a shared folder could be any file of the file system (here a root-only
# file of the image): its group and mode are left alone, with a warning.
printf 'secret\n' >"$P/r2/etc/victim"
chmod 0600 "$P/r2/etc/victim"
ln "$P/r2/etc/victim" "$P/r2/srv/video-studio/docs/assets/victim-link"
prov "$P/r2" >"$P/out" 2>"$P/err"
st=$?
check "with the lock free and the real visudo, the run succeeds" test "$st" = 0
check "and installs the drop-in" test -s "$P/r2/etc/sudoers.d/slots-video-studio"
check "a plain file of the shared folder got the group and no bit (group slotshared, 0644)" \
	test "$(stat -c '%g %a' "$P/r2/srv/video-studio/docs/assets/logo.png")" = \
	"$(awk -F: '$1 == "slotshared" { print $3 }' "$P/r2/etc/group") 644"
check "a hard-linked file in a shared folder keeps owner, group and mode" \
	test "$(stat -c '%u:%g %a' "$P/r2/etc/victim")" = "0:0 600"
check "with a warning that names it" grep -q "victim-link: has 2 hard links" "$P/err"
slots_done
