#!/bin/sh
# slots-provision reports a long path whole (issue 15): its messages were formatted into fixed
# buffers (the fix into 2,048 bytes, warnings into 4,096, failed steps into 1,024) and a long
# slots_root was cut short without a word.  A slots_root of about 2,900 characters with a
# symlink where slot01's home belongs: the refusal's fix must name the whole path.
. "$top_srcdir/tests/integration/lib.sh"
slots_need_root
slots_enter_namespace "$@"

P=$SLOTS_SCRATCH/long
R=$P/root
unset SLOTS_CONFIG
mkdir -p "$R/etc/slots"
printf 'root:x:0:0:root:/root:/bin/bash\nsvc:x:990:990::/nonexistent:/usr/sbin/nologin\n' >"$R/etc/passwd"
printf 'root:x:0:\nsvc:x:990:\n' >"$R/etc/group"
printf 'root:*:19000:0:99999:7:::\nsvc:!:19000::::::\n' >"$R/etc/shadow"
printf 'root:*::\nsvc:!::\n' >"$R/etc/gshadow"
chmod 0644 "$R/etc/passwd" "$R/etc/group"
chmod 0640 "$R/etc/shadow" "$R/etc/gshadow"

# Twelve components of 240 characters: 2,893 characters below /srv.
comp=$(printf '%0240d' 0 | tr 0 a)
ROOT=/srv
for i in 1 2 3 4 5 6 7 8 9 10 11 12; do ROOT=$ROOT/$comp; done
printf '{"service": "svc", "slots": 2, "uid_min": 20001, "uid_max": 20100, "slots_root": "%s"}\n' "$ROOT" \
	>"$R/etc/slots/slots.conf"
mkdir -p "$R$ROOT/home"
ln -s /etc "$R$ROOT/home/slot01"

# name EXPECTED-EXIT: runs slots-provision on the image, keeps its output in $P/name.*
run() {
	"$SLOTS_PROVISION" --root "$R" >"$P/$1.out" 2>"$P/$1.err"
	st=$?
	check "$1: exit $2 (got $st)" test "$st" = "$2"
}

run symlink 1
check "symlink: the conflict names the link" grep -q "is a symlink where a folder belongs" "$P/symlink.err"
check "symlink: the fix names the whole path (${#ROOT} + 13 characters)" \
	grep -qF "fix: remove the link (rm $ROOT/home/slot01); slots-provision then creates the folder" "$P/symlink.err"
check "symlink: nothing was made" test ! -e "$R$ROOT/state"

rm "$R$ROOT/home/slot01"
run clean 0
check "clean: the change line names the whole path" \
	grep -qxF "create folder $ROOT/home/slot01 (slot01:slot01 0700)" "$P/clean.out"
check "clean: the folder is there with its owner" \
	test "$(stat -c '%a' "$R$ROOT/home/slot01")" = 700
slots_done
