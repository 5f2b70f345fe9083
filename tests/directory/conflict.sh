#!/bin/sh
# A directory account or group that differs from the plan (a real slapd + nslcd, started by
# this test): each difference is a conflict (exit 1) whose fix applies to the directory (never
# usermod or groupmod on this host), and nothing on the host changes.  Each row changes one
# attribute with ldapmodify, runs slots-provision, and puts the attribute back.
. "$top_srcdir/tests/integration/lib.sh"
. "$top_srcdir/tests/directory/dir-lib.sh"
slots_need_root
dir_need_tools
slots_enter_namespace "$@"
S=$SLOTS_SCRATCH
dir_service_and_config
dir_setup || { echo "FAIL: the directory did not start"; exit 99; }
dir_nsswitch ldap
check "the pool is loaded from --ldif" dir_load_pool
dir_host_state >"$S/state0"

dir_set() { # RDN ATTR VALUE
	printf 'dn: %s,%s\nchangetype: modify\nreplace: %s\n%s: %s\n' "$1" "$DIR_POOL" "$2" "$2" "$3" |
		ldapmodify -Q -Y EXTERNAL -H "$DIR_URI" >/dev/null
}

refused() { # WHAT CONFLICT-TEXT FIX-TEXT
	"$SLOTS_PROVISION" --config /etc/slots/slots.conf >"$S/out" 2>"$S/err"
	st=$?
	check "$1: refused (exit 1, got $st)" test "$st" = 1
	cat "$S/err"
	check "$1: a conflict line says: $2" sh -c 'grep -F -- "$1" "$2" | grep -q "conflict: "' - "$2" "$S/err"
	check "$1: the fix applies to the directory: $3" \
		sh -c 'grep -F -- "fix: $1" "$2" |
			grep -Eq "where it is kept \(the directory service\)|in the directory, not on this host: for l in "' \
		- "$3" "$S/err"
	check "$1: no fix says usermod or groupmod" sh -c "! grep -E 'fix:.*(usermod|groupmod)' '$S/err'"
	check "$1: says nothing was changed" grep -q "nothing was changed" "$S/err"
	check "$1: nothing on standard output" test ! -s "$S/out"
	dir_host_state >"$S/state1"
	check "$1: no account file, /etc entry or folder changed" cmp -s "$S/state0" "$S/state1"
}

apply_fix() { dir_apply_fix "$S/err"; }

# rdn | attribute | value in the directory | planned value | conflict | fix
while IFS='|' read -r rdn attr bad good conflict fix; do
	check "set $attr of $rdn to $bad in the directory" dir_set "$rdn" "$attr" "$bad"
	refused "$rdn $attr $bad" "$conflict" "$fix"
	check "$rdn $attr: the printed ldapmodify change runs" apply_fix
	check "$rdn $attr: the directory holds $good again" \
		sh -c 'ldapsearch -LLL -Q -Y EXTERNAL -H "$1" -b "$2" -s base "$3" | grep -qx "$3: $4"' - \
		"$DIR_URI" "$rdn,$DIR_POOL" "$attr" "$good"
	check "put $attr of $rdn back to $good" dir_set "$rdn" "$attr" "$good"
done <<'TABLE'
uid=slot02|homeDirectory|/home/slot02|/var/lib/slots/svc/home/slot02|slot02 has home /home/slot02, planned /var/lib/slots/svc/home/slot02|set homeDirectory /var/lib/slots/svc/home/slot02 on the account slot02
uid=slot02|uidNumber|61002|60002|slot02 exists with uid 61002, planned 60002 (uid_base + 2)|set uidNumber and gidNumber 60002 on the account slot02
uid=slot02|gidNumber|60003|60002|slot02 has primary gid 60003, planned 60002|set gidNumber 60002 on the account slot02
uid=slot03|loginShell|/bin/bash|/usr/sbin/nologin|slot03 has shell /bin/bash, configured /usr/sbin/nologin|in the directory, not on this host: for l in 'dn: uid=slot03'",$BASE" 'changetype: modify' 'replace: loginShell' 'loginShell: /usr/sbin/nologin'
cn=slot01|gidNumber|61001|60001|group slot01 exists with gid 61001, planned 60001|set gidNumber 60001 on the group slot01
cn=slotshared|gidNumber|61000|60000|group slotshared exists with gid 61000, planned 60000 (uid_base)|set gidNumber 60000 on the group slotshared
TABLE

# The shared group without one of the slots: the member is added where the group is kept.
printf 'dn: cn=slotshared,%s\nchangetype: modify\ndelete: memberUid\nmemberUid: slot03\n' "$DIR_POOL" |
	ldapmodify -Q -Y EXTERNAL -H "$DIR_URI" >/dev/null
check "slotshared in the directory no longer lists slot03" sh -c '! getent group slotshared | grep -q slot03'
"$SLOTS_PROVISION" --config /etc/slots/slots.conf >"$S/out" 2>"$S/err"
check "a shared group that lacks slot03: refused (exit 1)" test $? = 1
check "the conflict names the missing member" \
	grep -qF "does not list slot03" "$S/err"
check "the fix adds it where the group is kept" \
	grep -qF "fix: add slot03 to slotshared where it is kept (the directory service), in the directory" "$S/err"
check "the printed ldapmodify change adds slot03 back" apply_fix
check "slotshared lists slot03 again" sh -c 'getent group slotshared | grep -q slot03'
dir_host_state >"$S/state1"
check "a shared group that lacks slot03: nothing changed" cmp -s "$S/state0" "$S/state1"

# Half an entry pair: no local half is made for it.  The entry is added back from the LDIF.
entry_of() { awk -v dn="dn: $1,$DIR_POOL" 'BEGIN{RS=""} $0 ~ "^" dn "\n" {print; print ""}' "$DIR_LDAP/pool.ldif"; }
while IFS='|' read -r rdn conflict fix; do
	entry_of "$rdn" >"$S/entry.ldif"
	check "$rdn is in the LDIF" test -s "$S/entry.ldif"
	check "delete $rdn from the directory" ldapdelete -Q -Y EXTERNAL -H "$DIR_URI" "$rdn,$DIR_POOL"
	refused "$rdn deleted" "$conflict" "$fix"
	check "no local $rdn was made" sh -c "! grep -q '^${rdn#*=}:' /etc/passwd /etc/group"
	check "add $rdn back from the LDIF" dir_ldapadd -f "$S/entry.ldif"
done <<'TABLE'
cn=slot02|slot02 comes from the name service, but its group slot02 exists nowhere|add the group slot02 with gidNumber 60002
uid=slot03|the group slot03 comes from the name service, but the account slot03 exists nowhere|add the account slot03 with uidNumber and gidNumber 60003
TABLE

# The service account in the directory's shared group: both commands fix it there, not with gpasswd.
printf 'dn: cn=slotshared,%s\nchangetype: modify\nadd: memberUid\nmemberUid: svc\n' "$DIR_POOL" |
	ldapmodify -Q -Y EXTERNAL -H "$DIR_URI" >/dev/null
"$SLOTS_PROVISION" --config /etc/slots/slots.conf >"$S/out" 2>"$S/err"
check "svc in the directory's slotshared: provision refuses (exit 2, got $?)" test $? = 2
check "svc in slotshared: provision's fix deletes the member in the directory" \
	grep -qF "'delete: memberUid' 'memberUid: svc'" "$S/err"
"$SLOTS_ADMIN" --config /etc/slots/slots.conf check >"$S/check" 2>&1
check "svc in slotshared: check's service-apart fix deletes it in the directory, no gpasswd" \
	sh -c "grep '^FAIL service-apart: ' '$S/check' | grep -F \"'delete: memberUid' 'memberUid: svc'\" | grep -vq gpasswd"
printf 'dn: cn=slotshared,%s\nchangetype: modify\ndelete: memberUid\nmemberUid: svc\n' "$DIR_POOL" |
	ldapmodify -Q -Y EXTERNAL -H "$DIR_URI" >/dev/null

# A usable password in the directory: check's fix locks it there, not with usermod -L.  nslcd
# serves userPassword as the shadow field only when told to (its default is "*").
echo 'map shadow userPassword userPassword' >>/etc/nslcd.conf
kill "$DIR_NSLCD_PID"; wait "$DIR_NSLCD_PID" 2>/dev/null
rm -f /run/nslcd/socket
dir_start_nslcd
hash=$(openssl passwd -6 -salt abcdefgh secret)
printf 'dn: uid=slot03,%s\nchangetype: modify\nreplace: userPassword\nuserPassword: {CRYPT}%s\n' "$DIR_POOL" "$hash" |
	ldapmodify -Q -Y EXTERNAL -H "$DIR_URI" >/dev/null
"$SLOTS_ADMIN" --config /etc/slots/slots.conf check >"$S/check" 2>&1
grep 'password' "$S/check"
check "a password in the directory: check's password fix deletes userPassword there, no usermod" \
	sh -c "grep -E '^FAIL (password-locked|account) slot03: ' '$S/check' | grep -qF \"'delete: userPassword'\" &&
		! grep -q 'usermod -L' '$S/check'"
check "a password in the directory: check's printed ldapmodify change runs" \
	dir_apply_fix "$S/check" "'delete: userPassword'"
check "a password in the directory: the entry holds no userPassword after the fix" \
	sh -c '! ldapsearch -LLL -Q -Y EXTERNAL -H "$1" -b "uid=slot03,$2" -s base userPassword | grep -q userPassword' \
	- "$DIR_URI" "$DIR_POOL"

"$SLOTS_PROVISION" --config /etc/slots/slots.conf >"$S/out" 2>"$S/err"
check "with every entry as planned again, provisioning exits 0" test $? = 0
check "and creates no local account or group" \
	sh -c "grep -Eq '^[0-9]+ changes\$' '$S/out' && ! grep -Eq '^create (account|group)' '$S/out'"
dir_stop
slots_done
