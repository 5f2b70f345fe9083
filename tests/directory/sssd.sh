#!/bin/sh
# A fleet on sssd (the LDAP provider, enumerate = false, as sssd ships): a real slapd loaded
# from slots-provision --ldif and a real sssd, both started and stopped by this test in its
# namespaces (mount, PID, network).  Rows of states the directory and sssd can be in, and
# what slots-provision must do in each under "accounts": "directory" -- above all, never
# write a local slot account or group -- and, for "local", what it does (documented in
# slots.conf(5)).
. "$top_srcdir/tests/integration/lib.sh"
. "$top_srcdir/tests/directory/dir-lib.sh"
slots_need_root
dir_need_tools
dir_need_sssd
dir_enter_netns "$@"
slots_enter_namespace "$@"
S=$SLOTS_SCRATCH
DIR_EXTRA_CONFIG=",
  \"accounts\": \"directory\""
dir_service_and_config
DIR_NO_NSLCD=1 dir_setup || { echo "FAIL: the directory did not start"; exit 99; }
dir_nsswitch sss
check "the pool is loaded from --ldif" dir_load_pool
dir_sssd_setup || { echo "FAIL: sssd did not start"; exit 99; }
check "sssd serves slot02 from the directory" \
	test "$(getent passwd slot02)" = "slot02:*:60002:60002:slot02:/var/lib/slots/svc/home/slot02:/usr/sbin/nologin"

accounts() { # local | directory
	sed -i -E "s/\"accounts\": \"[a-z]+\"/\"accounts\": \"$1\"/" /etc/slots/slots.conf
}
# What NSS answers for the pool, one line per name.
answers() {
	for n in slot01 slot02 slot03; do getent passwd $n; getent group $n; done
	getent group slotshared | cut -d: -f1-3
}
no_local_slot() { ! grep -Eq '^slot(0[1-9]|shared):' /etc/passwd /etc/group /etc/shadow /etc/gshadow; }
# An sssd that knows nothing: its caches emptied while it is stopped.
sssd_cold() {
	dir_stop_sssd
	rm -f /var/lib/sss/db/* /var/lib/sss/mc/*
	dir_start_sssd
}
# slots-admin check, its rows in $S/check; cst its exit status.
selfcheck() {
	"$SLOTS_ADMIN" --config /etc/slots/slots.conf check >"$S/check" 2>&1
	cst=$?
	cat "$S/check"
}
provision() {
	"$SLOTS_PROVISION" --config /etc/slots/slots.conf "$@" >"$S/out" 2>"$S/err"
	st=$?
	cat "$S/out" "$S/err"
	return 0
}

# ---- two hosts from one directory: the same ids, no local line on either ----
md5sum /etc/passwd /etc/group /etc/shadow /etc/gshadow >"$S/acct0"
provision
check "host A: provisioning exits 0 (got $st)" test "$st" = 0
check "host A: no account or group is created" sh -c "! grep -Eq '^(create (account|group)|add .* to group)' '$S/out'"
check "host A: the local account files are unchanged" sh -c "md5sum -c --quiet '$S/acct0'"
answers >"$S/answers.a"
stat -c '%n %u:%g %a' /var/lib/slots/svc/home/* >"$S/homes.a"
# Host B: other local accounts (one on a uid a range would hand out), nothing of host A kept.
echo 'alice:x:1001:1001::/home/alice:/bin/sh' >>/etc/passwd
echo 'alice:x:1001:' >>/etc/group
umount /var/lib/slots && mount -t tmpfs -o mode=0755 tmpfs /var/lib/slots
sssd_cold
md5sum /etc/passwd /etc/group /etc/shadow /etc/gshadow >"$S/acct0"
provision
check "host B: provisioning exits 0 (got $st)" test "$st" = 0
check "host B: no account or group is created" sh -c "! grep -Eq '^(create (account|group)|add .* to group)' '$S/out'"
check "host B: the local account files are unchanged" sh -c "md5sum -c --quiet '$S/acct0'"
answers >"$S/answers.b"
stat -c '%n %u:%g %a' /var/lib/slots/svc/home/* >"$S/homes.b"
check "hosts A and B see the same accounts and groups" cmp -s "$S/answers.a" "$S/answers.b"
check "hosts A and B give the homes the same owners" cmp -s "$S/homes.a" "$S/homes.b"
check "no slot is in the local files" no_local_slot

# ---- states of the directory and sssd ----
# Each row: a state (set up by the function named), the accounts mode, and what provision must
# do: "same" (exit 0, no account change), "refuse" (exit 1, names --ldif, no local line),
# "nogroups" (exit 1: the group database did not answer, which is no missing membership) or
# "local" (exit 0, local accounts made: what "local" does when sssd answers "no such user").
state_warm_down() { dir_stop_slapd; sleep 3; }           # the directory down, the cache warm
# sssd stopped, its memory cache left (as after a crash): with every answer cached, or only
# the accounts' (libnss_sss answers groups it has not cached with ECONNREFUSED).
state_stopped_mc() { answers >/dev/null; id slot01 >/dev/null; id slot02 >/dev/null; id slot03 >/dev/null; dir_stop_sssd; }
state_stopped_mc_passwd() { getent passwd slot01 slot02 slot03 >/dev/null; dir_stop_sssd; }
state_cold_offline() { dir_stop_slapd; sssd_cold; sleep 1; } # a new host: sssd offline, nothing cached
restore() {
	[ -n "${DIR_SLAPD_PID:-}" ] || dir_start_slapd
	[ -n "${DIR_SSSD_PID:-}" ] || dir_start_sssd
	accounts directory
	sed -i '/^slot\(0[1-9]\|shared\):/d' /etc/passwd /etc/group /etc/shadow /etc/gshadow
}
while read -r state mode want; do
	what="$state, accounts $mode"
	accounts "$mode"
	"state_$state"
	md5sum /etc/passwd /etc/group /etc/shadow /etc/gshadow >"$S/acct0"
	provision
	case $want in
	same)
		check "$what: exit 0 (got $st)" test "$st" = 0
		check "$what: no account or group is created" \
			sh -c "! grep -Eq '^(create (account|group)|add .* to group)' '$S/out'"
		check "$what: the local account files are unchanged" sh -c "md5sum -c --quiet '$S/acct0'"
		;;
	refuse)
		selfcheck
		check "$what: check fails (got $cst)" test "$cst" != 0
		check "$what: check's account row for slot01 fails and names --ldif" \
			grep -q '^FAIL account slot01: .* -- fix: load the pool into the directory: slots-provision --ldif' "$S/check"
		check "$what: check does not say slots-provision creates it" \
			sh -c "! grep -q 'slots-provision creates it' '$S/check'"
		check "$what: refused (exit 1, got $st)" test "$st" = 1
		check "$what: the conflict names the LDIF to load" grep -q 'fix: load the pool into the directory: slots-provision --ldif' "$S/err"
		check "$what: it says nothing was changed" grep -q "nothing was changed" "$S/err"
		check "$what: the local account files are unchanged" sh -c "md5sum -c --quiet '$S/acct0'"
		check "$what: no local slot account or group" no_local_slot
		;;
	nogroups)
		selfcheck
		check "$what: check says the group database did not answer" \
			grep -q "the group database did not answer: sssd?" "$S/check"
		check "$what: check says no usermod -a -G" sh -c "! grep -q 'usermod -a -G' '$S/check'"
		check "$what: refused (exit 1, got $st)" test "$st" = 1
		check "$what: the error says the group database did not answer" \
			grep -q "the group database did not answer: sssd?" "$S/err"
		check "$what: no conflict of a missing membership" sh -c "! grep -q 'does not list' '$S/err'"
		check "$what: the local account files are unchanged" sh -c "md5sum -c --quiet '$S/acct0'"
		check "$what: no local slot account or group" no_local_slot
		;;
	local)
		check "$what: exit 0 (got $st)" test "$st" = 0
		check "$what: local slot accounts are made" grep -q '^create account slot01 ' "$S/out"
		check "$what: slot01 is now in /etc/passwd" grep -q '^slot01:' /etc/passwd
		;;
	esac
	restore
	sssd_cold
	check "$what: afterwards sssd serves slot01 again" sh -c 'getent passwd slot01 | grep -q ":60001:"'
done <<'TABLE'
warm_down directory same
stopped_mc directory same
stopped_mc_passwd directory nogroups
cold_offline directory refuse
cold_offline local local
TABLE

# ---- a local copy of a directory slot: a conflict under "directory" ----
getent passwd slot02 | sed 's/^slot02:\*:/slot02:x:/' >>/etc/passwd
md5sum /etc/passwd /etc/group /etc/shadow /etc/gshadow >"$S/acct0"
provision
check "a local copy of slot02: refused (exit 1, got $st)" test "$st" = 1
check "a local copy of slot02: the conflict says the copy splits the fleet" \
	grep -q "slot02 is in this host's /etc/passwd, but \"accounts\" is \"directory\"" "$S/err"
check "a local copy of slot02: the local account files are unchanged" sh -c "md5sum -c --quiet '$S/acct0'"
selfcheck
check "a local copy of slot02: check's account row for slot02 fails" \
	sh -c "grep -E '^FAIL +account +slot02 ' '$S/check' | grep -q 'splits the fleet'"
sed -i '/^slot02:/d' /etc/passwd

# ---- the service account in the directory's shared group: the fix removes it there ----
printf 'dn: cn=slotshared,%s\nchangetype: modify\nadd: memberUid\nmemberUid: svc\n' "$DIR_POOL" |
	ldapmodify -Q -Y EXTERNAL -H "$DIR_URI" >/dev/null
sssd_cold
provision
check "svc in the directory's slotshared: refused as an invalid config (exit 2, got $st)" test "$st" = 2
check "svc in the directory's slotshared: the fix deletes the member in the directory" \
	grep -qF "'delete: memberUid' 'memberUid: svc'" "$S/err"
check "svc in the directory's slotshared: no gpasswd" sh -c "! grep -q gpasswd '$S/err'"
# sssd gives a local account no group of its directory (its initgroups answers for its own
# users only), so svc's processes never carry slotshared: check's service-apart row, which goes
# by the groups the service really gets, passes here; conflict.sh sees it fail with nslcd.
selfcheck
check "svc in the directory's slotshared: check's service-apart row passes under sssd" \
	grep -q "^PASS *service-apart" "$S/check"
printf 'dn: cn=slotshared,%s\nchangetype: modify\ndelete: memberUid\nmemberUid: svc\n' "$DIR_POOL" |
	ldapmodify -Q -Y EXTERNAL -H "$DIR_URI" >/dev/null

# ---- an extra group, only in the directory ----
cat >"$S/extra.ldif" <<LDIF
dn: cn=render,$DIR_POOL
objectClass: posixGroup
cn: render
gidNumber: 61500
memberUid: slot02
LDIF
check "the group render, with slot02 in it, is added to the directory" dir_ldapadd -f "$S/extra.ldif"
sssd_cold
check "sssd lists render among slot02's groups" sh -c 'id -Gn slot02 | grep -qw render'
provision
check "extra directory group: refused (exit 1, got $st)" test "$st" = 1
check "extra directory group: the conflict names slot02 and render" \
	sh -c "grep 'conflict: ' '$S/err' | grep slot02 | grep -q render"
check "extra directory group: the fix is in the directory" \
	sh -c "grep -F \"'dn: cn=render'\" '$S/err' | grep -qF \"'delete: memberUid' 'memberUid: slot02'\""
check "extra directory group: no fix says gpasswd or usermod" sh -c "! grep -E 'fix:.*(gpasswd|usermod)' '$S/err'"
check "extra directory group: no local slot account or group" no_local_slot
selfcheck
check "extra directory group: check fails (got $cst)" test "$cst" != 0
check "extra directory group: check's fix is in the directory" \
	sh -c "grep -F \"'dn: cn=render'\" '$S/check' | grep -qF \"'delete: memberUid' 'memberUid: slot02'\""
check "extra directory group: check's printed ldapmodify change runs" dir_apply_fix "$S/check" "'dn: cn=render'"
check "extra directory group: render no longer lists slot02" \
	sh -c '! ldapsearch -LLL -Q -Y EXTERNAL -H "$1" -b "cn=render,$2" -s base memberUid | grep -q "memberUid: slot02"' \
	- "$DIR_URI" "$DIR_POOL"
check "extra directory group: check says no gpasswd or usermod" sh -c "! grep -Eq 'gpasswd|usermod' '$S/check'"
ldapdelete -Q -Y EXTERNAL -H "$DIR_URI" "cn=render,$DIR_POOL"
sssd_cold
provision
check "without render, provisioning exits 0 again (got $st)" test "$st" = 0
check "no slot is in the local files at the end" no_local_slot
# ---- an image (--root) has no directory to ask: "directory" is refused there ----
R=$S/root
mkdir -p "$R/etc/slots"
for f in passwd group shadow gshadow; do cp "$top_srcdir/tests/provision/initial-$f" "$R/etc/$f"; done
echo '{"service": "svc", "slots": 2, "uid_base": 60000, "accounts": "directory"}' >"$R/etc/slots/slots.conf"
(cd "$R/etc" && md5sum passwd group shadow gshadow) >"$S/sums"
"$SLOTS_PROVISION" --root "$R" >"$S/out" 2>"$S/err"
st=$?
cat "$S/err"
check "--root with accounts directory: refused as an invalid config (exit 2, got $st)" test "$st" = 2
check "--root with accounts directory: the error says why" grep -q 'a tree (--root) has no directory' "$S/err"
check "--root with accounts directory: the image's account files are unchanged" \
	sh -c "cd '$R/etc' && md5sum -c --quiet '$S/sums'"
dir_stop
slots_done
