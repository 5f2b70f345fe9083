#!/bin/sh
# slots-provision on a live host and NSS, in a private mount namespace with a copy of /etc:
#  - an account that exists only in NSS (here nss_wrapper's files stand in for LDAP) is kept,
#    never duplicated in /etc/passwd, and its id is never handed out again;
#  - one that exists only in NSS but differs is a conflict, and nothing changes;
#  - a lookup that fails (not "not found") refuses the run, and nothing changes.  nss_wrapper can
#    only answer "found" or "not found", so the failure comes from libnssfail.so, an LD_PRELOAD
#    shim whose getpwnam_r/getgrnam_r/getpwuid_r/getgrgid_r return EIO for the names and ids
#    in SLOTS_TEST_NSS_FAIL (tests/provision/nssfail.c).
. "$top_srcdir/tests/integration/lib.sh"
slots_need_root
# Debian's nss_wrapper.pc names the library itself in Libs.
NSS_WRAPPER_SO=$(pkg-config --libs nss_wrapper 2>/dev/null | tr ' ' '\n' | grep 'libnss_wrapper\.so$')
[ -f "$NSS_WRAPPER_SO" ] || NSS_WRAPPER_SO=$(ls /usr/lib/*/libnss_wrapper.so /usr/lib*/libnss_wrapper.so 2>/dev/null | head -1)
if [ ! -f "$NSS_WRAPPER_SO" ]; then
	echo "SKIP: nss_wrapper is not installed (apt-get install libnss-wrapper)"
	exit 77
fi
NSSFAIL_SO="$top_builddir/tests/provision/.libs/libnssfail.so"
[ -f "$NSSFAIL_SO" ] || { echo "missing $NSSFAIL_SO (make check builds it)"; exit 99; }
slots_enter_namespace "$@"

S=$SLOTS_SCRATCH
# lckpwdf creates it on first use; have it there so "nothing changed" can compare ls /etc.
[ -e /etc/.pwd.lock ] || install -m 0600 /dev/null /etc/.pwd.lock
echo 'svc:x:1990:1990:the service:/nonexistent:/usr/sbin/nologin' >>/etc/passwd
echo 'svc:x:1990:' >>/etc/group
cat >"$S/slots.conf" <<'CONF'
{
  "service": "svc",
  "slots": 3,
  "uid_min": 950,
  "uid_max": 959,
  "table": "/etc/slots/slots.json",
  "slotctl_config": "/etc/slots/slotctl.json"
}
CONF
etc_sums() {
	md5sum /etc/passwd /etc/group /etc/shadow /etc/gshadow
	ls -A /etc /etc/sudoers.d
}
etc_sums >"$S/etc0"

# 1. Failing lookups refuse the run before anything changes.
for fail in slot02 uid:959 gid:958 slotshared svc; do
	SLOTS_TEST_NSS_FAIL=$fail LD_PRELOAD=$NSSFAIL_SO "$SLOTS_PROVISION" --config "$S/slots.conf" \
		>"$S/out" 2>"$S/err"
	check "a failing lookup of $fail refuses the run (exit 1)" test $? = 1
	check "the refusal names the lookup that failed ($fail)" grep -q "${fail#*:}.*lookup through NSS failed" "$S/err"
	check "the refusal says nothing was changed" grep -q "nothing was changed" "$S/err"
	check "nothing on standard output after a failed lookup of $fail" test ! -s "$S/out"
	etc_sums >"$S/etc1"
	check "no account file changed after a failed lookup of $fail" cmp -s "$S/etc0" "$S/etc1"
	check "no folder was made after a failed lookup of $fail" test ! -e /var/lib/slots/svc
done
# The same run without the failure goes through in dry-run: the shim only fails what it is told to.
SLOTS_TEST_NSS_FAIL=nobody-at-all LD_PRELOAD=$NSSFAIL_SO "$SLOTS_PROVISION" --config "$S/slots.conf" --dry-run \
	>"$S/out" 2>"$S/err"
check "with nothing failing the same run plans fine" test $? = 0

# 2. NSS knows slot02 (uid 958) and an LDAP account with uid 959 that /etc does not have.
cp /etc/passwd "$S/nss-passwd"
cp /etc/group "$S/nss-group"
echo 'slot02:x:958:958::/var/lib/slots/svc/home/slot02:/usr/sbin/nologin' >>"$S/nss-passwd"
echo 'ldapuser:x:959:959::/home/ldapuser:/bin/sh' >>"$S/nss-passwd"
echo 'slot02:x:958:' >>"$S/nss-group"
echo 'ldapgroup:x:959:' >>"$S/nss-group"
run_wrapped() {
	LD_PRELOAD=$NSS_WRAPPER_SO NSS_WRAPPER_PASSWD="$S/nss-passwd" NSS_WRAPPER_GROUP="$S/nss-group" \
		"$SLOTS_PROVISION" --config "$S/slots.conf" "$@"
}

# 2a. First a version of slot02 that differs (another home): a conflict, nothing changes.
sed 's|^slot02:.*|slot02:x:958:958::/home/slot02:/usr/sbin/nologin|' "$S/nss-passwd" >"$S/nss-passwd.bad"
LD_PRELOAD=$NSS_WRAPPER_SO NSS_WRAPPER_PASSWD="$S/nss-passwd.bad" NSS_WRAPPER_GROUP="$S/nss-group" \
	"$SLOTS_PROVISION" --config "$S/slots.conf" >"$S/out" 2>"$S/err"
check "an NSS-only slot02 with another home is refused (exit 1)" test $? = 1
check "the conflict names slot02, its home and the fix" \
	grep -q "slot02 has home /home/slot02, planned /var/lib/slots/svc/home/slot02" "$S/err"
check "the fix applies where the account is kept, not usermod" \
	grep -q "fix: set homeDirectory /var/lib/slots/svc/home/slot02 on the account slot02 where it is kept (the directory service)" "$S/err"
etc_sums >"$S/etc1"
check "the conflict changed no account file" cmp -s "$S/etc0" "$S/etc1"

# 2b. The matching NSS-only slot02 is kept.
run_wrapped >"$S/out" 2>"$S/err"
check "provisioning with an NSS-only slot02 exits 0" test $? = 0
cat "$S/err"
check "slot02 is not duplicated into /etc/passwd" sh -c '! grep -q "^slot02:" /etc/passwd'
check "slot02's group is not duplicated into /etc/group" sh -c '! grep -q "^slot02:" /etc/group'
check "no create line for slot02" sh -c "grep -Eq '^[0-9]+ changes\$' '$S/out' && ! grep -q 'create .* slot02 ' '$S/out'"
check "the ids NSS holds (959, 958) are not reused" sh -c '! grep -Eq "^[^:]*:[^:]*:95[89]:" /etc/passwd /etc/group'
check "slot01 and slot03 are created with free ids" \
	sh -c 'grep -q "^slot01:x:956:956:" /etc/passwd && grep -q "^slot03:x:955:955:" /etc/passwd'
check "the shared group takes the highest free id and lists all three slots" \
	grep -qx 'slotshared:x:957:slot01,slot02,slot03' /etc/group
check "slot02's home belongs to its NSS uid" test "$(stat -c %u:%g:%a /var/lib/slots/svc/home/slot02)" = 958:958:700
check "/etc/shadow has no line for slot02 (the account lives elsewhere)" sh -c '! grep -q "^slot02:" /etc/shadow'

run_wrapped >"$S/out2" 2>"$S/err2"
check "second run exits 0" test $? = 0
check "second run prints 0 changes" test "$(cat "$S/out2")" = "0 changes"
slots_done
