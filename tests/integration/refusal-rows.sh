#!/bin/sh
# The refusals of the commands that no other test provokes by their own words, each with what
# must not change: assign of a free slot whose account is gone, the table's folder root-owned
# and sticky but group-writable (the owner chain lets it pass), a FIFO at the table's lock file (assign and release never open it: the
# table's lock refuses it before the slot lock is tried), and for slots-provision --root on an
# image of the example host, a FIFO at the account files lock, a masked slice unit (a symlink
# to /dev/null) where the pool's unit belongs, and a FIFO at the table path (a conflict of the
# plan, before any step).  Each row: the command, exit 1, the refusal's words, nothing changed
# (the masked unit too: the run's first pass looks at the units before its first change).
# Runs as root in a private mount namespace (the check fixture; images under the scratch).
. "$top_srcdir/tests/integration/lib.sh"
slots_need_root
slots_enter_namespace "$@"
. "$top_srcdir/tests/integration/check-lib.sh"

check_fixture
# --- the table's lock file is a FIFO: never opened, whatever the command ---
mv "$TABLE.lock" "$OUT/lock.away" 2>/dev/null
mkfifo -m 0600 "$TABLE.lock"
cp -p "$TABLE" "$OUT/table.before"
for cmd in "assign fifo.user" "release $USER_A"; do
	# shellcheck disable=SC2086
	timeout 10 "$SLOTS_ADMIN" $cmd >"$OUT/lock.out" 2>"$OUT/lock.err"
	rc=$?
	sed 's/^/#   /' "$OUT/lock.err"
	check "$cmd with a FIFO at the lock file: exit 1 (exit $rc)" test "$rc" = 1
	check "$cmd: refused, the lock file named" \
		grep -q "the lock file slots.json.lock is not a regular file; remove it" "$OUT/lock.err"
	check "$cmd: the table is unchanged" cmp -s "$TABLE" "$OUT/table.before"
done
rm -f "$TABLE.lock"
[ -e "$OUT/lock.away" ] && mv "$OUT/lock.away" "$TABLE.lock"

# --- assign of a free slot whose account is gone: refused, the table unchanged ---
cp -p /etc/passwd "$OUT/passwd.good"
sed -i '/^slot08:/d' /etc/passwd
cp -p "$TABLE" "$OUT/table.before"
"$SLOTS_ADMIN" assign gone.acct slot08 >"$OUT/gone.out" 2>"$OUT/gone.err"
rc=$?
cat "$OUT/passwd.good" >/etc/passwd
sed 's/^/#   /' "$OUT/gone.err"
check "assign of slot08 without its account: exit 1 (exit $rc)" test "$rc" = 1
check "assign of slot08 without its account: refused, with the fix" \
	sh -c 'grep -q "slot08: the slot account does not exist" "$1" && grep -q "fix: create it: slots-provision" "$1"' _ \
	"$OUT/gone.err"
check "assign of slot08 without its account: no slot printed" test ! -s "$OUT/gone.out"
check "assign of slot08 without its account: the table is unchanged" cmp -s "$TABLE" "$OUT/table.before"

# --- the table's folder root's and sticky, but writable by a group: the owner chain lets a
# root-owned sticky folder pass, the store's own check of the folder refuses the writer ---
TDIR=$(dirname "$TABLE")
cp -p "$TABLE" "$OUT/table.before"
was=$(stat -c '%g %a' "$TDIR")
chgrp 7 "$TDIR" && chmod 1775 "$TDIR"
"$SLOTS_ADMIN" assign sticky.group >"$OUT/sticky.out" 2>"$OUT/sticky.err"
rc=$?
chgrp "${was% *}" "$TDIR" && chmod "${was#* }" "$TDIR"
sed 's/^/#   /' "$OUT/sticky.err"
check "assign with the table's folder root:7 1775: exit 1 (exit $rc)" test "$rc" = 1
check "assign with the table's folder root:7 1775: refused, the folder's group named" \
	grep -q "its directory is writable by group 7 (mode 1775)" "$OUT/sticky.err"
check "assign with the table's folder root:7 1775: the table is unchanged" cmp -s "$TABLE" "$OUT/table.before"

# --- slots-provision --root on an image of the example host ---
P=$SLOTS_SCRATCH/p
mkdir -p "$P"
SOURCE_DATE_EPOCH=1767225600
export SOURCE_DATE_EPOCH
unset SLOTS_CONFIG
# The example config with a slice for every slot, so provisioning writes the slice units.
sed 's/^  "slots": 8,$/  "slots": 8,\n  "slice": {"default": {"TasksMax": 64}},/' \
	"$top_srcdir/data/slots.conf.example" >"$P/slots.conf"
chmod 0644 "$P/slots.conf"
grep -q '"slice"' "$P/slots.conf" || not_ok "the config with a slice key"
. "$top_srcdir/tests/provision/image-lib.sh"
# provision_refused DESCRIPTION WORDS [changed]: slots-provision --root $R refused with WORDS,
# $R unchanged (unless "changed").
provision_refused() {
	snap "$R" >"$P/before"
	timeout 60 "$SLOTS_PROVISION" --root "$R" --config "$P/slots.conf" >"$P/out" 2>"$P/err"
	rc=$?
	sed 's/^/#   /' "$P/err"
	check "$1: exit 1 (exit $rc)" test "$rc" = 1
	check "$1: the refusal says so" grep -qF "$2" "$P/err"
	snap "$R" >"$P/after"
	[ "${3:-}" = changed ] || check "$1: nothing in the image changed" cmp -s "$P/before" "$P/after"
}

# The control: the same image and config provision cleanly, slice units included.
image "$P/ok"
timeout 60 "$SLOTS_PROVISION" --root "$P/ok" --config "$P/slots.conf" >"$P/out" 2>"$P/err"
rc=$?
sed 's/^/#   /' "$P/err"
check "the control: provisioning the image exits 0 (exit $rc)" test "$rc" = 0
UNIT=etc/systemd/system/slots-video\\x2dstudio-slot01.slice
check "the control: the slice unit of slot01 is written" test -f "$P/ok/$UNIT"

image "$P/r1"
rm "$R/etc/.pwd.lock"
mkfifo -m 0600 "$R/etc/.pwd.lock"
provision_refused "a FIFO at the account files lock" ".pwd.lock: the lock is not a regular file"

image "$P/r2"
mkdir -p "$R/etc/systemd/system"
ln -s /dev/null "$R/$UNIT"
provision_refused "a masked slice unit" "is a symlink (a masked unit?), not a unit file this pool wrote"
check "the masked unit is still a link to /dev/null" test "$(readlink "$R/$UNIT")" = /dev/null

image "$P/r3"
mkdir -p "$R/etc/slots"
mkfifo -m 0640 "$R/etc/slots/slots.json"
provision_refused "a FIFO at the table path" "conflict: /etc/slots/slots.json: is not a regular file"

# assign and release (a dry run too) are root's: refused to anyone else before anything is read.
for cmd in "assign someone" "release $USER_A" "assign --dry-run someone"; do
	# shellcheck disable=SC2086
	setpriv --reuid=nobody --regid=nogroup --clear-groups "$SLOTS_ADMIN" $cmd >"$OUT/root.out" 2>"$OUT/root.err"
	rc=$?
	sed 's/^/#   /' "$OUT/root.err"
	check "$cmd as nobody: exit 1 (exit $rc)" test "$rc" = 1
	check "$cmd as nobody: refused, root named as the fix" \
		grep -q "permission denied: only root changes the slot table" "$OUT/root.err"
done
slots_done
