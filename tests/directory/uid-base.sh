#!/bin/sh
# uid_base: the same slot ids on every host, whatever its local accounts.  Hosts are image
# trees (--root), each with other system accounts; then the live host of this namespace.
#  - without uid_base each host allocates down from its own free ids: slot01 differs;
#  - with uid_base 60000 slotNN is 60000 + NN and slotshared 60000 on every host;
#  - an id taken by another name, or a slot that exists with another id, is a conflict:
#    exit 1, nothing changed, the fix printed;
#  - uid_base with uid_min/uid_max, past the largest id, or inside useradd's subordinate ids
#    (login.defs SUB_UID_MIN .. SUB_UID_MAX + SUB_UID_COUNT), is an invalid config (exit 2).
. "$top_srcdir/tests/integration/lib.sh"
slots_need_root
slots_enter_namespace "$@"
S=$SLOTS_SCRATCH
P=$top_srcdir/tests/provision

# host NAME PASSWD-LINES...: a tree with the base accounts and these extra ones (uid = gid).
host() {
	name=$1; shift
	mkdir -p "$S/$name/etc"
	for f in passwd group shadow gshadow; do cp "$P/initial-$f" "$S/$name/etc/$f"; done
	printf 'SYS_UID_MIN 100\nSYS_UID_MAX 999\n' >"$S/$name/etc/login.defs"
	# The lock file a run takes (made once): "nothing changed" compares the tree.
	install -m 0600 /dev/null "$S/$name/etc/.pwd.lock"
	for acct in "$@"; do
		n=${acct%%:*}; id=${acct#*:}
		echo "$n:x:$id:$id::/nonexistent:/usr/sbin/nologin" >>"$S/$name/etc/passwd"
		echo "$n:x:$id:" >>"$S/$name/etc/group"
		echo "$n:!:20000::::::" >>"$S/$name/etc/shadow"
		echo "$n:!::" >>"$S/$name/etc/gshadow"
	done
}
conf() { # FILE [EXTRA-JSON]
	printf '{"service": "svc", "slots": 3%s}\n' "${2:-}" >"$1"
}
slot_lines() { grep -E '^slot(0[1-3]|shared):' "$1/etc/passwd" "$1/etc/group" | sed 's|^.*/etc/||'; }
sums() { md5sum "$1"/etc/passwd "$1"/etc/group "$1"/etc/shadow "$1"/etc/gshadow; find "$1" | sort; }

conf "$S/range.conf"
conf "$S/base.conf" ', "uid_base": 60000'
host a systemd-network:999 messagebus:998
host b postfix:999 systemd-timesync:998 sshd:997 _chrony:996
host a2 systemd-network:999 messagebus:998
host b2 postfix:999 systemd-timesync:998 sshd:997 _chrony:996

for h in a b; do
	"$SLOTS_PROVISION" --root "$S/$h" --config "$S/range.conf" >"$S/out" 2>"$S/err"
	check "host $h without uid_base: provisioned (exit 0)" test $? = 0
done
ida=$(grep '^slot01:' "$S/a/etc/passwd" | cut -d: -f3)
idb=$(grep '^slot01:' "$S/b/etc/passwd" | cut -d: -f3)
check "without uid_base the two hosts give slot01 different uids ($ida, $idb)" test -n "$ida" -a -n "$idb" -a "$ida" != "$idb"

for h in a2 b2; do
	"$SLOTS_PROVISION" --root "$S/$h" --config "$S/base.conf" >"$S/out" 2>"$S/err"
	check "host $h with uid_base: provisioned (exit 0)" test $? = 0
	cat "$S/err"
done
slot_lines "$S/a2" >"$S/lines-a2"
slot_lines "$S/b2" >"$S/lines-b2"
check "with uid_base both hosts have the same slot accounts and groups, line for line" cmp -s "$S/lines-a2" "$S/lines-b2"
cat >"$S/want" <<'WANT'
passwd:slot01:x:60001:60001::/var/lib/slots/svc/home/slot01:/usr/sbin/nologin
passwd:slot02:x:60002:60002::/var/lib/slots/svc/home/slot02:/usr/sbin/nologin
passwd:slot03:x:60003:60003::/var/lib/slots/svc/home/slot03:/usr/sbin/nologin
group:slotshared:x:60000:slot01,slot02,slot03
group:slot01:x:60001:
group:slot02:x:60002:
group:slot03:x:60003:
WANT
check "slotNN is uid and gid 60000 + NN, slotshared 60000" cmp -s "$S/want" "$S/lines-a2"
"$SLOTS_PROVISION" --root "$S/b2" --config "$S/base.conf" >"$S/out" 2>"$S/err"
check "a second run on host b2 prints 0 changes" test "$(cat "$S/out")" = "0 changes"

# Hosts where the plan meets something else: the conflict line and the fix.
# host accounts | conflict | fix
while IFS='|' read -r accts conflict fix; do
	rm -rf "$S/c"
	# shellcheck disable=SC2086
	host c $accts
	sums "$S/c" >"$S/c0"
	"$SLOTS_PROVISION" --root "$S/c" --config "$S/base.conf" >"$S/out" 2>"$S/err"
	st=$?
	check "[$accts] refused (exit 1, got $st)" test "$st" = 1
	cat "$S/err"
	check "[$accts] conflict: $conflict" grep -qF "$conflict" "$S/err"
	check "[$accts] fix: $fix" grep -qF "fix: $fix" "$S/err"
	check "[$accts] nothing on standard output" test ! -s "$S/out"
	sums "$S/c" >"$S/c1"
	check "[$accts] nothing changed in the tree" cmp -s "$S/c0" "$S/c1"
done <<'TABLE'
backup2:60002|planned uid 60002 for slot02 (uid_base + 2) is taken by the account backup2|renumber or remove the account backup2, or change uid_base
other:60000|planned gid 60000 for the group slotshared (uid_base) is taken by the group other|renumber or remove the group other, or change uid_base
slot02:999|slot02 exists with uid 999, planned 60002 (uid_base + 2)|remove it (userdel slot02) so that it is created again, or renumber it (usermod -u 60002 slot02, groupmod -g 60002 slot02)
slotshared:999|group slotshared exists with gid 999, planned 60000 (uid_base)|groupmod -g 60000 slotshared
TABLE

# The live host of this namespace, with yet other local accounts: the same lines again.
echo 'svc:x:1990:1990::/nonexistent:/usr/sbin/nologin' >>/etc/passwd
echo 'svc:x:1990:' >>/etc/group
echo 'localthing:x:997:997::/nonexistent:/usr/sbin/nologin' >>/etc/passwd
echo 'localthing:x:997:' >>/etc/group
[ -e /etc/.pwd.lock ] || install -m 0600 /dev/null /etc/.pwd.lock
"$SLOTS_PROVISION" --config "$S/base.conf" >"$S/out" 2>"$S/err"
check "the live host with uid_base: provisioned (exit 0)" test $? = 0
cat "$S/err"
mkdir -p "$S/live"
ln -s /etc "$S/live/etc"
slot_lines "$S/live" >"$S/lines-live"
check "the live host has the same slot lines as the two trees" cmp -s "$S/want" "$S/lines-live"
check "id slot02 on the live host: 60002, groups slot02 and slotshared" \
	test "$(id slot02)" = "uid=60002(slot02) gid=60002(slot02) groups=60002(slot02),60000(slotshared)"

# Invalid configs: exit 2, the key named.
while IFS='|' read -r extra msg; do
	conf "$S/bad.conf" "$extra"
	"$SLOTS_PROVISION" --config "$S/bad.conf" --dry-run >"$S/out" 2>"$S/err"
	st=$?
	check "[$extra] invalid config (exit 2, got $st)" test "$st" = 2
	check "[$extra] says: $msg" grep -qF "$msg" "$S/err"
done <<'TABLE'
, "uid_base": 60000, "uid_min": 100, "uid_max": 999|"uid_base" fixes every id; it cannot go with "uid_min" and "uid_max"
, "uid_base": 4294967291|"uid_base" + 3 slots passes the largest id, 4294967293
, "uid_base": 0|"uid_base" must be an integer from 1
, "uid_base": "60000"|"uid_base" must be an integer from 1
TABLE
conf "$S/edge.conf" ', "uid_base": 4294967290'
"$SLOTS_PROVISION" --config "$S/edge.conf" --ldif dc=x >"$S/out" 2>"$S/err"
check "uid_base 4294967290 with 3 slots is the largest that fits (exit 0)" test $? = 0
check "its last slot is 4294967293" grep -qx 'uidNumber: 4294967293' "$S/out"
# uid_base inside the subordinate ids useradd hands out (login.defs SUB_UID_MIN 100000 ..
# SUB_UID_MAX 600100000 + SUB_UID_COUNT 65536 by default) is refused, naming the key and a safe
# range: the next useradd would give another account a range holding the slots' uids.
host sub
conf "$S/sub.conf" ', "uid_base": 100000'
"$SLOTS_PROVISION" --root "$S/sub" --config "$S/sub.conf" >"$S/out" 2>"$S/err"
st=$?
cat "$S/err"
check "uid_base 100000 is refused as invalid (exit 2, got $st)" test "$st" = 2
check "it names the key and the subordinate ids" grep -qF '"uid_base" 100000 puts the pool'"'"'s ids 100000-100003 inside the subordinate ids useradd hands out (100000-600165535' "$S/err"
check "its fix names a safe range" grep -qF 'fix: set "uid_base" to at most 99996 (above UID_MAX, below SUB_UID_MIN: 60000, say) or at least 600165536' "$S/err"
check "no slot was made" sh -c '! grep -q "^slot01:" "$1/etc/passwd"' _ "$S/sub"
for base in 99997 600165535; do
	conf "$S/sub.conf" ", \"uid_base\": $base"
	"$SLOTS_PROVISION" --root "$S/sub" --config "$S/sub.conf" >/dev/null 2>&1
	check "uid_base $base, one id into the window, is refused (exit 2)" test $? = 2
done
printf 'SUB_UID_MIN 200000\nSUB_GID_MIN 200000\n' >>"$S/sub/etc/login.defs"
conf "$S/sub.conf" ', "uid_base": 100000'
"$SLOTS_PROVISION" --root "$S/sub" --config "$S/sub.conf" >/dev/null 2>"$S/err"
check "with SUB_UID_MIN and SUB_GID_MIN 200000 in login.defs uid_base 100000 is safe (exit 0)" test $? = 0
# A fleet host fails closed: with "accounts" unset and nsswitch.conf serving passwd or group
# from a directory, provision writes no local slot account and names the key.
host fleet
printf 'passwd: files sss\ngroup: files sss\n' >"$S/fleet/etc/nsswitch.conf"
sums "$S/fleet" >"$S/fleet.before"
"$SLOTS_PROVISION" --root "$S/fleet" --config "$S/base.conf" >"$S/out" 2>"$S/err"
st=$?
cat "$S/err"
check "a directory in nsswitch.conf, \"accounts\" unset: refused (exit 2, got $st)" test "$st" = 2
check "it names the key" grep -qF 'fix: set "accounts": "directory" in' "$S/err"
check "and the explicit \"local\"" grep -qF 'or "accounts": "local"' "$S/err"
sums "$S/fleet" >"$S/fleet.after"
check "nothing was written" cmp -s "$S/fleet.before" "$S/fleet.after"
conf "$S/local.conf" ', "uid_base": 60000, "accounts": "local"'
"$SLOTS_PROVISION" --root "$S/fleet" --config "$S/local.conf" >/dev/null 2>"$S/err"
check "with \"accounts\": \"local\" the slots are made (exit 0)" test $? = 0
# A DN LDIF cannot carry as text (not ASCII) is base64 and decodes back; a home that is not
# ASCII is refused, since RFC 2307 makes homeDirectory an IA5 (ASCII) string.
conf "$S/utf.conf" ', "uid_base": 60000'
"$SLOTS_PROVISION" --config "$S/utf.conf" --ldif 'ou=slöts,dc=x' >"$S/out" 2>"$S/err"
check "--ldif with a non-ASCII base DN exits 0" test $? = 0
got=$(sed -n 's/^dn:: //p' "$S/out" | head -2 | tail -1 | base64 -d)
check "its DNs are base64 and decode back (got: $got)" test "$got" = "uid=slot01,ou=slöts,dc=x"
conf "$S/utf.conf" ', "uid_base": 60000, "slots_root": "/srv/sl\u00f6ts"'
"$SLOTS_PROVISION" --config "$S/utf.conf" --ldif 'dc=x' >"$S/out" 2>"$S/err"
check "--ldif with a non-ASCII slots_root: exit 2" test $? = 2
check "it names slots_root and why" grep -q "slots_root holds a byte that is not ASCII" "$S/err"
check "and prints no LDIF" test ! -s "$S/out"
check "--ldif made nothing under /srv" test ! -e "/srv/slöts"
slots_done
