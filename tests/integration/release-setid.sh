#!/bin/sh
# Set-id files of a slot where release used not to walk: slot04 opens a folder of its own (home,
# state, run, a temp folder), slot03 drops set-uid and set-gid copies of a
# program there, slot04 closes the folder again.  check FAILs them while they are there (with the
# fix), release of slot03's user clears their set-id bits (and counts them), check PASSes after,
# and the files of other accounts keep their bits.  Every drop is made as the slot (runuser).
# The holder's own set-id files in its own home, state and run are a WARN naming the slot (release
# clears them); one that carries another slot, is another account's or is a free slot's stays a FAIL.
RELEASE_POOL=4
RELEASE_UID_MIN=47700
RELEASE_SHARED=Workflow
. "$top_srcdir/tests/integration/release-lib.sh"

G3=$(gid_of slot03)
HOME3=$SROOT/home/slot03
STATE3=$SROOT/state/slot03
HOME4=$SROOT/home/slot04
STATE4=$SROOT/state/slot04
RUN4=$SROOT/run/slot04
TREE4=$DOCS/_users/bob
as3() {
	runuser -u slot03 -- "$@"
}
as4() {
	runuser -u slot04 -- "$@"
}
# The set-id bits of a file, in octal (0 when none).
setid_of() {
	echo $(($(stat -c '0%a' "$1") & 06000))
}
# The row "STATUS setid -" of a plain check run (stdout in $S/check.out).
setid_row() {
	admin check >"$S/check.out" 2>"$S/check.err"
	awk '$2 == "setid" { print $1; exit }' "$S/check.out"
}

check "assign alice slot03" prints slot03 admin assign alice slot03
check "assign bob slot04" prints slot04 admin assign bob slot04
check "no setid row fails before any drop" test "$(setid_row)" = PASS

# --- the holder's own: slot03's set-id copies in its own home and state folder ---
as3 cp /usr/bin/id "$HOME3/own-uid"
as3 chmod 4755 "$HOME3/own-uid"
as3 cp /usr/bin/id "$STATE3/own-gid"
as3 chmod 2755 "$STATE3/own-gid"
check "the holder's own set-id files: the setid row PASSes" test "$(setid_row)" = PASS
grep "setid" "$S/check.out"
check "the holder's own set-id files: a WARN row names slot03" grep -q "^WARN  *setid  *slot03 " "$S/check.out"
check "the WARN row names both files" sh -c 'grep "^WARN  *setid  *slot03 " "$1" | grep -F "$2/own-uid" | grep -qF "$3/own-gid"' \
	_ "$S/check.out" "$HOME3" "$STATE3"
check "the WARN row says release clears them" sh -c 'grep "^WARN  *setid  *slot03 " "$1" | grep -q "release clears"' _ \
	"$S/check.out"
check "no FAIL line for them" sh -c '! grep -q "^FAIL setid" "$1"' _ "$S/check.out"
# Not the holder's own: another account's set-gid file of slot03, a set-gid file of slot04's group.
cp /usr/bin/id "$HOME3/root-gid"
chown root:slot03 "$HOME3/root-gid"
chmod 2755 "$HOME3/root-gid"
check "a set-gid file of slot03's group owned by root in its home: FAIL" test "$(setid_row)" = FAIL
check "the FAIL names it" grep -q "^FAIL  *setid  *- .*$HOME3/root-gid" "$S/check.out"
rm "$HOME3/root-gid"
cp /usr/bin/id "$HOME3/other-gid"
chown slot03:slot04 "$HOME3/other-gid"
chmod 6755 "$HOME3/other-gid"
check "slot03's set-uid file set-gid to slot04 in slot03's home: FAIL" test "$(setid_row)" = FAIL
check "the FAIL names it" grep -q "^FAIL  *setid  *- .*$HOME3/other-gid" "$S/check.out"
rm "$HOME3/other-gid"
# slot03's own set-uid copy in slot04's home (root puts it there): not its own folder.
cp -p "$HOME3/own-uid" "$HOME4/slot03-uid"
check "slot03's set-uid file in slot04's home: FAIL" test "$(setid_row)" = FAIL
check "the FAIL names it, not the holder's own" sh -c 'grep "^FAIL  *setid  *- " "$1" | grep -F "$2/slot03-uid" | grep -vqF "$3/own-uid"' \
	_ "$S/check.out" "$HOME4" "$HOME3"
rm "$HOME4/slot03-uid"
check "the holder's own alone: PASS again" test "$(setid_row)" = PASS

# --- slot04 opens a folder in each place; slot03 drops a set-uid and a set-gid copy there ---
DROPS="$HOME4/drop $STATE4/drop $RUN4/drop /var/tmp/s4/drop"
as4 mkdir -p /var/tmp/s4
for d in $DROPS; do
	as4 mkdir -p "$d"
	as4 chmod 0777 "$d"
done
for p in "$HOME4" "$STATE4" "$RUN4" /var/tmp/s4; do as4 chmod 0711 "$p"; done
n=0
for d in $DROPS; do
	n=$((n + 1))
	as3 cp /usr/bin/id "$d/uid-copy"
	as3 chmod 4755 "$d/uid-copy"
	as3 cp /usr/bin/id "$d/gid-copy"
	as3 chmod 2755 "$d/gid-copy"
	check "as slot03, a set-uid copy in $d" test "$(setid_of "$d/uid-copy")" = $((04000))
	check "as slot03, a set-gid copy (group slot03) in $d" \
		test "$(setid_of "$d/gid-copy")" = $((02000)) -a "$(stat -c %g "$d/gid-copy")" = "$G3"
done
# Many of them: release names the first ten and counts the rest in one line.
as4 mkdir -m 0777 "$HOME4/drop/many"
as3 sh -c 'for i in 1 2 3 4 5 6 7 8 9 10 11 12; do cp /usr/bin/id "$1/many/$i" && chmod 4755 "$1/many/$i"; done' _ \
	"$HOME4/drop"
# slot04's own set-uid file and root's set-uid file next to them: not slot03's to lose.
as4 cp /usr/bin/id "$HOME4/drop/own-copy"
as4 chmod 4755 "$HOME4/drop/own-copy"
cp /usr/bin/id "$TREE4/root-copy"
chmod 4755 "$TREE4/root-copy"
# slot04 closes its folders again.
for p in "$HOME4" "$STATE4" "$RUN4"; do as4 chmod 0700 "$p"; done
as4 chmod 0700 /var/tmp/s4

check "check FAILs the set-id files of slot03 while they are there" test "$(setid_row)" = FAIL
grep "setid" "$S/check.out"
check "the row names a file and its slot" grep -q "^FAIL  *setid .*slot03's" "$S/check.out"
check "the row gives the fix" grep -q "^FAIL setid: .* -- fix: clear the bits of each (chmod ug-s FILE)" "$S/check.out"

admin_run release alice
cat "$S/out" "$S/err"
check "release alice exits 0" test "$st" = 0
check "release says slot03 released" grep -qx "slot03 released" "$S/out"
check "release names the set-id files it cleared" grep -q "^slots-admin: warning: $HOME4/drop/.*: set-id bits cleared (mode 4755, a file of slot03)" "$S/err"
check "release names ten and counts the other eight" test "$(grep -c ": set-id bits cleared (mode" "$S/err")" = 10 -a \
	"$(grep -c "and 8 more files of slot03: set-id bits cleared" "$S/err")" = 1
check "the many copies lost their bits" test -z "$(find "$HOME4/drop/many" -perm /6000)"
check "the holder's own set-id files are gone with its home" test ! -e "$HOME3/own-uid" -a ! -e "$STATE3/own-gid"
for d in $DROPS; do
	for f in uid-copy gid-copy; do
		if [ -e "$d/$f" ]; then
			check "after release, $d/$f has no set-id bit" test "$(setid_of "$d/$f")" = 0
		else
			ok "after release, $d/$f is gone"
		fi
	done
done
check "slot04's own set-uid file keeps its bit" test "$(setid_of "$HOME4/drop/own-copy")" = $((04000))
check "root's set-uid file in bob's tree keeps its bit" test "$(setid_of "$TREE4/root-copy")" = $((04000))
chmod u-s "$TREE4/root-copy"
as4 chmod u-s "$HOME4/drop/own-copy"
check "check PASSes the setid row after the release" test "$(setid_row)" = PASS
check "and WARNs no slot" sh -c '! grep -q "^WARN  *setid" "$1"' _ "$S/check.out"
# A free slot has no holder: a set-id file of slot03 in its home is a FAIL (its next holder gets it).
as3 cp /usr/bin/id "$HOME3/free-uid"
as3 chmod 4755 "$HOME3/free-uid"
check "a free slot's set-id file in its own home: FAIL" test "$(setid_row)" = FAIL
rm "$HOME3/free-uid"

# --- the next holder of slot03 cannot be reached through them ---
check "assign carol slot03" prints slot03 admin assign carol slot03
as4 chmod 0711 "$HOME4"
got=$(as4 "$HOME4/drop/uid-copy" -u 2>/dev/null)
check "slot04 running the old copy stays slot04 (euid $got)" test "$got" = "$(uid_of slot04)"
# --- mounts below a temp folder: a tmpfs is walked, a file system a process serves is named ---
mkdir -m 1777 /var/tmp/m /var/tmp/p
mount -t tmpfs -o mode=1777 slots-test /var/tmp/m
mkdir -m 1777 /var/tmp/m/deeper
mount -t tmpfs -o mode=1777 slots-test /var/tmp/m/deeper
mount -t proc proc /var/tmp/p
as3 cp /usr/bin/id /var/tmp/m/uid-copy
as3 chmod 4755 /var/tmp/m/uid-copy
as3 cp /usr/bin/id /var/tmp/m/deeper/gid-copy
as3 chmod 2755 /var/tmp/m/deeper/gid-copy
check "as slot03, a set-uid copy in a tmpfs below /var/tmp" test "$(setid_of /var/tmp/m/uid-copy)" = $((04000))
check "check FAILs the set-id files in the mounts" test "$(setid_row)" = FAIL
check "the row names the file in the mount below the mount" grep -q "^FAIL  *setid .*/var/tmp/m/deeper/gid-copy" "$S/check.out"
check "the row names the mount it did not walk, with its type" grep -q "mounts not walked.*/var/tmp/p (proc)" "$S/check.out"
admin_run release carol
check "release carol exits 0" test "$st" = 0
check "release cleared the set-uid copy in the tmpfs" test "$(setid_of /var/tmp/m/uid-copy)" = 0
check "and the set-gid copy in the tmpfs below it" test "$(setid_of /var/tmp/m/deeper/gid-copy)" = 0
check "release names the mount it did not enter" \
	grep -q "^slots-admin: warning: /var/tmp/p: a mount (proc) the set-id sweep did not enter" "$S/err"
umount /var/tmp/p
check "check PASSes the setid row with the mounts swept" test "$(setid_row)" = PASS
umount /var/tmp/m/deeper /var/tmp/m
slots_done
