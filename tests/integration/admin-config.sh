#!/bin/sh
# The one rule for a slots.conf someone other than root can change (slots_config_writers):
# assign and release act as root and refuse it, exit 1 with the fix, the table untouched;
# status warns with the same fix; check FAILs its config row; the printed fix makes it pass.
# Accounts come from nss_wrapper files, so the host's /etc is never read or touched.
. "$top_srcdir/tests/integration/lib.sh"
slots_need_root
slots_enter_namespace "$@"

NSSW=$(pkg-config --variable=libdir nss_wrapper 2>/dev/null)/libnss_wrapper.so
[ -f "$NSSW" ] || NSSW=libnss_wrapper.so
slots_tmpdir
T=$slots_tmp
mkdir -m 0755 "$T/etc"
{
	echo "root:x:0:0:root:/root:/bin/sh"
	echo "svc:x:4242:4242:svc:/nonexistent:/usr/sbin/nologin"
	echo "slot01:x:9001:9001::/var/lib/slots/svc/home/slot01:/usr/sbin/nologin"
} >"$T/passwd"
printf 'root:x:0:\nsvc:x:4242:\nslot01:x:9001:\n' >"$T/group"
for d in home state run; do install -d -o 9001 -g 9001 -m 0700 "/var/lib/slots/svc/$d/slot01"; done
CONF=$T/slots.conf
cat >"$CONF" <<EOC
{
  "service": "svc",
  "slots": 2,
  "table": "$T/etc/slots.json"
}
EOC
chmod 0644 "$CONF"
TABLE=$T/etc/slots.json

admin() {
	LD_PRELOAD=$NSSW NSS_WRAPPER_PASSWD=$T/passwd NSS_WRAPPER_GROUP=$T/group \
		"$SLOTS_ADMIN" --config "$CONF" "$@"
}

check "assign alice with a root-owned 0644 config" prints slot01 admin assign alice
cp -p "$TABLE" "$T/before"

# writable: a template task's 0664, a world-writable file, a file owned by the service.
for spec in "0:0 0664 chmod go-w" "0:0 0646 chmod go-w" "4242:0 0644 chown root:root"; do
	own=${spec%% *}
	rest=${spec#* }
	mode=${rest%% *}
	fix="${rest#* } $CONF"
	chown "$own" "$CONF"
	chmod "$mode" "$CONF"
	check_exit "$own $mode: assign refuses" 1 admin assign bob 2>"$T/err"
	check "$own $mode: the refusal says who can change it" \
		grep -q "refusing the config: $CONF: $CONF is $mode owned by uid ${own%%:*}: someone other than root can change it" "$T/err"
	check "$own $mode: the refusal gives the fix" grep -qxF "slots-admin: fix: $fix" "$T/err"
	check "$own $mode: the table is unchanged" cmp -s "$TABLE" "$T/before"
	check_exit "$own $mode: release refuses" 1 admin release alice 2>"$T/err"
	check "$own $mode: release gives the fix" grep -qxF "slots-admin: fix: $fix" "$T/err"
	check "$own $mode: the table is unchanged after release" cmp -s "$TABLE" "$T/before"
	check_exit "$own $mode: status still answers" 0 admin status >/dev/null 2>"$T/err"
	check "$own $mode: status warns that pam_slots refuses it" \
		grep -q "warning: $CONF is $mode owned by uid ${own%%:*}: .*pam_slots refuses every slot session" "$T/err"
	check "$own $mode: status gives the fix" grep -qxF "slots-admin: fix: $fix" "$T/err"
	admin check >"$T/check.out" 2>/dev/null
	check "$own $mode: check FAILs the config row" grep -q "^FAIL *config .*$CONF is $mode owned by uid" "$T/check.out"
	# The printed fix is the whole repair.
	sh -c "$fix"
	check "$own $mode: after the fix release runs" prints "slot01 released" admin release alice
	check "$own $mode: and assign again" prints slot01 admin assign alice
	cp -p "$TABLE" "$T/before"
done
check_exit "a root-owned 0644 config: status without a warning" 0 admin status >/dev/null 2>"$T/err"
check "no warning then" test ! -s "$T/err"

slots_done
