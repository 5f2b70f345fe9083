#!/bin/sh
# Slots shipped as extrausers files (libnss-extrausers: /var/lib/extrausers/{passwd,group},
# as config management distributes them), and how the order of sources in nsswitch.conf
# decides what a failed directory looks like (glibc reports the status of the last source it
# asked).  Rows of nsswitch.conf, what is up, and what slots-provision must do.
. "$top_srcdir/tests/integration/lib.sh"
. "$top_srcdir/tests/directory/dir-lib.sh"
slots_need_root
dir_need_tools
found=
for so in /usr/lib/libnss_extrausers.so.2 /usr/lib/*/libnss_extrausers.so.2 /lib/*/libnss_extrausers.so.2; do
	[ -f "$so" ] && found=$so
done
[ -n "$found" ] || { echo "SKIP: libnss-extrausers is not installed"; exit 77; }
slots_enter_namespace "$@"
S=$SLOTS_SCRATCH
dir_service_and_config
# /var/lib is the namespace's overlay: these files never reach the host.
mkdir -p /var/lib/extrausers
"$SLOTS_PROVISION" --config /etc/slots/slots.conf --ldif "$DIR_POOL" >"$S/pool.ldif"
# The same pool as extrausers lines, from the LDIF (one source of truth for both).
awk -F': ' '
	/^uid: /{u=$2} /^uidNumber: /{un=$2} /^gidNumber: /{g=$2} /^homeDirectory: /{h=$2}
	/^loginShell: /{print u ":x:" un ":" g "::" h ":" $2}' "$S/pool.ldif" >/var/lib/extrausers/passwd
awk -F': ' '
	/^objectClass: posixGroup/{grp=1; m=""} /^cn: /{c=$2} /^gidNumber: /{g=$2}
	/^memberUid: /{m=m (m ? "," : "") $2}
	/^$/{if (grp) print c ":x:" g ":" m; grp=0} END{if (grp) print c ":x:" g ":" m}' \
	"$S/pool.ldif" >/var/lib/extrausers/group
: >/var/lib/extrausers/shadow
chmod 0644 /var/lib/extrausers/passwd /var/lib/extrausers/group
dir_nsswitch extrausers
check "extrausers serves slot02 as the LDIF says" \
	test "$(getent passwd slot02)" = "slot02:x:60002:60002::/var/lib/slots/svc/home/slot02:/usr/sbin/nologin"
check "extrausers serves slotshared with its members" \
	test "$(getent group slotshared)" = "slotshared:x:60000:slot01,slot02,slot03"

md5sum /etc/passwd /etc/group /etc/shadow /etc/gshadow >"$S/acct0"
"$SLOTS_PROVISION" --config /etc/slots/slots.conf >"$S/out" 2>"$S/err"
check "provisioning with the slots in extrausers exits 0" test $? = 0
cat "$S/err"
check "0 local accounts or groups created" \
	sh -c "grep -Eq '^[0-9]+ changes\$' '$S/out' && ! grep -Eq '^(create (account|group)|add )' '$S/out'"
check "the local account files are unchanged" sh -c "md5sum /etc/passwd /etc/group /etc/shadow /etc/gshadow | cmp -s - '$S/acct0'"
check "home/slot03 belongs to 60003:60003 0700" test "$(stat -c %u:%g:%a /var/lib/slots/svc/home/slot03)" = "60003:60003:700"
"$SLOTS_PROVISION" --config /etc/slots/slots.conf >"$S/out" 2>"$S/err"
check "a second run prints 0 changes" test "$(cat "$S/out")" = "0 changes"

# A listed source that cannot answer (extrausers without its group file) fails every lookup
# it is asked: refused, not "not found".
mv /var/lib/extrausers/group "$S/eu-group"
dir_host_state >"$S/state0"
"$SLOTS_PROVISION" --config /etc/slots/slots.conf >"$S/out" 2>"$S/err"
check "extrausers without its group file: refused (exit 1)" test $? = 1
check "the refusal is a failed lookup" grep -q "lookup through NSS failed" "$S/err"
dir_host_state >"$S/state1"
check "extrausers without its group file: nothing changed" cmp -s "$S/state0" "$S/state1"
mv "$S/eu-group" /var/lib/extrausers/group

# Now the slots live in the directory and extrausers holds nothing of them.
: >/var/lib/extrausers/passwd
: >/var/lib/extrausers/group
dir_setup || { echo "FAIL: the directory did not start"; exit 99; }
check "the pool is loaded into the directory from --ldif" dir_load_pool
kill "$DIR_NSLCD_PID"; wait "$DIR_NSLCD_PID" 2>/dev/null; DIR_NSLCD_PID=
dir_host_state >"$S/state0"
# nsswitch sources (ldap down) | exit status | what it shows | warns of the order.  Row 3 is
# glibc's limit, documented in slots-provision(8): a source after the directory answers "not
# found" for it, so the dry run plans local accounts -- and warns; "[UNAVAIL=return]" after
# ldap (rows 2 and 4) prevents that.
while IFS='|' read -r sources want what warns; do
	dir_nsswitch "$sources"
	"$SLOTS_PROVISION" --config /etc/slots/slots.conf --dry-run >"$S/out" 2>"$S/err"
	st=$?
	check "files $sources, nslcd down: exit $want (got $st)" test "$st" = "$want"
	check "files $sources, nslcd down: $what" grep -qF "$what" "$S/out" "$S/err"
	if [ "$warns" = yes ]; then
		check "files $sources: warns that extrausers hides a down ldap" grep -qF \
			'warning: /etc/nsswitch.conf: passwd: ldap is followed by extrausers: when ldap is down' "$S/err"
		check "files $sources: the fix is [UNAVAIL=return]" \
			grep -qF 'fix: write "ldap [UNAVAIL=return] extrausers" on the passwd: line' "$S/err"
	else
		check "files $sources: no warning about nsswitch.conf" sh -c "! grep -q 'warning: /etc/nsswitch.conf' '$S/err'"
	fi
done <<'TABLE'
ldap|1|lookup through NSS failed|no
ldap [UNAVAIL=return] extrausers|1|lookup through NSS failed|no
ldap extrausers|0|create account slot01|yes
ldap [ !SUCCESS=return ] extrausers|1|lookup through NSS failed|no
TABLE
dir_host_state >"$S/state1"
check "none of these dry runs changed anything" cmp -s "$S/state0" "$S/state1"
dir_stop
slots_done
