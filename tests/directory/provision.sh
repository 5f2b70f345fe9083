#!/bin/sh
# Slot accounts served by a real directory: OpenLDAP slapd (loaded with slots-provision --ldif,
# unchanged) behind nslcd and libnss-ldapd, all started by this test in its namespace.
#  - slots-provision creates no local account or group for them (0 added), only their folders,
#    and a second run changes nothing;
#  - slots-admin assign, status and release work with them;
#  - the LDIF is what the directory then serves: uid, gid, home, shell, the shared group.
. "$top_srcdir/tests/integration/lib.sh"
. "$top_srcdir/tests/directory/dir-lib.sh"
slots_need_root
dir_need_tools
slots_enter_namespace "$@"
S=$SLOTS_SCRATCH
mkdir -p "$S/docs"
DIR_EXTRA_CONFIG=",
  \"docs_root\": \"$S/docs\""
dir_service_and_config
chown svc:svc "$S/docs"
dir_setup || { echo "FAIL: the directory did not start"; exit 99; }
dir_nsswitch ldap

check "slots-provision --ldif prints the pool, and ldapadd loads it unchanged" dir_load_pool
check "the LDIF has 3 accounts and 4 groups" \
	test "$(grep -c '^objectClass: posixAccount' "$DIR_LDAP/pool.ldif") $(grep -c '^objectClass: posixGroup' "$DIR_LDAP/pool.ldif")" = "3 4"
# Each row: what NSS must now answer, from the directory alone.
while read -r db key want; do
	got=$(getent "$db" "$key")
	check "getent $db $key from the directory: $want (got: $got)" test "$got" = "$want"
done <<'TABLE'
passwd slot01 slot01:x:60001:60001:slot01:/var/lib/slots/svc/home/slot01:/usr/sbin/nologin
passwd slot03 slot03:x:60003:60003:slot03:/var/lib/slots/svc/home/slot03:/usr/sbin/nologin
group slot02 slot02:*:60002:
group slotshared slotshared:*:60000:slot01,slot02,slot03
passwd 60002 slot02:x:60002:60002:slot02:/var/lib/slots/svc/home/slot02:/usr/sbin/nologin
TABLE
check "no slot is in the local files" sh -c '! grep -q "^slot" /etc/passwd /etc/group /etc/shadow /etc/gshadow'

md5sum /etc/passwd /etc/group /etc/shadow /etc/gshadow >"$S/acct0"
"$SLOTS_PROVISION" --config /etc/slots/slots.conf >"$S/out" 2>"$S/err"
check "provisioning a host whose slots come from the directory exits 0" test $? = 0
cat "$S/out" "$S/err"
check "it prints its changes" grep -Eq '^[1-9][0-9]* changes$' "$S/out"
check "0 accounts or groups created" sh -c "! grep -Eq '^(create (account|group)|add .* to group|add .*(shadow|gshadow))' '$S/out'"
md5sum /etc/passwd /etc/group /etc/shadow /etc/gshadow >"$S/acct1"
check "the local account files are byte for byte unchanged" cmp -s "$S/acct0" "$S/acct1"
for n in 1 2 3; do
	check "home/slot0$n belongs to the directory's uid and gid 6000$n, 0700" \
		test "$(stat -c %u:%g:%a /var/lib/slots/svc/home/slot0$n)" = "6000$n:6000$n:700"
	check "state/slot0$n and run/slot0$n are made too" test -d /var/lib/slots/svc/state/slot0$n -a -d /var/lib/slots/svc/run/slot0$n
done
check "the table is root:svc 0640" test "$(slots_stat /etc/slots/slots.json)" = "root:svc 640"

"$SLOTS_PROVISION" --config /etc/slots/slots.conf >"$S/out2" 2>"$S/err2"
check "a second run exits 0" test $? = 0
check "a second run prints 0 changes" test "$(cat "$S/out2")" = "0 changes"

# slots-admin with directory accounts: assign prepares the user's tree with the directory's
# group, status shows the directory's uids, release empties the home again.
U=aa73da63e26b40a1bb701c2b4c024870
got=$("$SLOTS_ADMIN" --config /etc/slots/slots.conf assign "$U" 2>"$S/err")
st=$?
check "assign gives the directory's slot01 (exit $st, got: $got)" test "$st" = 0 -a "$got" = slot01
cat "$S/err"
check "the user's tree is granted to the directory's slot01 by uid (u:60001:rwx, its default too)" \
	sh -c "getfacl -acn -- '$S/docs/_users/$U' 2>/dev/null | grep -qx 'user:60001:rwx' &&
		getfacl -dcn -- '$S/docs/_users/$U' 2>/dev/null | grep -qx 'user:60001:rwx'"
"$SLOTS_ADMIN" --config /etc/slots/slots.conf status --json >"$S/status.json" 2>"$S/err"
check "status --json exits 0" test $? = 0
check "status --json shows slot01 with uid 60001, present and assigned" \
	test "$(jq -r '.slots[0] | "\(.slot) \(.uid) \(.account) \(.user != null)"' <"$S/status.json")" = "slot01 60001 true true"
check "status --json shows all 3 accounts present" \
	test "$(jq '[.slots[] | select(.account)] | length' <"$S/status.json")" = 3
runuser -u slot01 -- sh -c 'echo left >/var/lib/slots/svc/home/slot01/note' 2>"$S/err"
check "the directory account slot01 can write its home (runuser)" test -f /var/lib/slots/svc/home/slot01/note
"$SLOTS_ADMIN" --config /etc/slots/slots.conf release "$U" >"$S/out" 2>"$S/err"
check "release of the directory account's user exits 0" test $? = 0
cat "$S/out" "$S/err"
check "the release emptied the home" test ! -e /var/lib/slots/svc/home/slot01/note
check "the home is back to 60001:60001 0700" test "$(stat -c %u:%g:%a /var/lib/slots/svc/home/slot01)" = "60001:60001:700"
md5sum /etc/passwd /etc/group /etc/shadow /etc/gshadow >"$S/acct2"
check "after all of it the local account files are still unchanged" cmp -s "$S/acct0" "$S/acct2"

# The self-check's rows for the directory's accounts (no app_root: those rows skip).
"$SLOTS_ADMIN" --config /etc/slots/slots.conf check >"$S/check" 2>&1
st=$?
cat "$S/check"
check "slots-admin check exits 0 with the directory's accounts (got $st)" test "$st" = 0
check "its account row passes for slot03 with uid 60003" \
	grep -Eq '^PASS +account +slot03 +uid 60003, group slot03, in slotshared' "$S/check"
check "it ends with 0 failed" grep -q '^slot self-check: [1-9][0-9]* passed, 0 failed' "$S/check"
dir_stop
check "slapd and nslcd are gone" sh -c '! pgrep -x slapd && ! pgrep -x nslcd'
slots_done
