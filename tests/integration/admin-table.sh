#!/bin/sh
# slots-admin and the table file: owner, group, mode and ACL kept; bad tables and refusals
# leave the file byte-for-byte unchanged; status --json has the documented shape.
# Accounts come from nss_wrapper files, so the host's /etc is never read or touched.
. "$top_srcdir/tests/integration/lib.sh"
slots_need_root
slots_enter_namespace "$@"

NSSW=$(pkg-config --variable=libdir nss_wrapper 2>/dev/null)/libnss_wrapper.so
[ -f "$NSSW" ] || NSSW=libnss_wrapper.so
slots_tmpdir
T=$slots_tmp
mkdir -m 0755 "$T/etc"
POOL=4

# The service "svc" (uid 4242, group svc 4242) and slot01..slot03; slot04 has no account.
{
	echo "root:x:0:0:root:/root:/bin/sh"
	echo "svc:x:4242:4242:svc:/nonexistent:/usr/sbin/nologin"
	for n in 01 02 03; do echo "slot$n:x:90$n:90$n::/var/lib/slots/svc/home/slot$n:/usr/sbin/nologin"; done
} >"$T/passwd"
# Each slot has a group of its own, as provision makes it (assign refuses a slot without one);
# slot03's is added below, each way it may be wrong.
printf 'root:x:0:\nsvc:x:4242:\nother:x:4243:\nslot01:x:9001:\nslot02:x:9002:\n' >"$T/group"
# Each slot's home, state and run folders as a release leaves them: assign checks them.
for n in 01 02 03; do
	for d in home state run; do install -d -o "90$n" -g "90$n" -m 0700 "/var/lib/slots/svc/$d/slot$n"; done
done
cat >"$T/slots.conf" <<EOF
{
  "service": "svc",
  "slots": $POOL,
  "table": "$T/etc/slots.json"
}
EOF
TABLE=$T/etc/slots.json

admin() {
	LD_PRELOAD=$NSSW NSS_WRAPPER_PASSWD=$T/passwd NSS_WRAPPER_GROUP=$T/group \
		"$SLOTS_ADMIN" --config "$T/slots.conf" "$@"
}

# --- 1. owner, group, mode and ACL are kept; a missing table is created root:svc 0640 ---
rm -f "$TABLE"
check "assign creates a missing table" prints slot01 admin assign alice slot01
check "a new table is root:<service group> 0640" [ "$(stat -c '%u:%g %a' "$TABLE")" = "0:4242 640" ]

for spec in "0:4242 640" "0:0 600" "0:4243 644" "4242:4243 600" "0:4242 440"; do
	own=${spec% *}
	mode=${spec#* }
	chown "$own" "$TABLE"
	chmod "$mode" "$TABLE"
	check "assign bob slot02 into a table $own $mode" prints slot02 admin assign bob slot02
	check "assign keeps $own $mode" [ "$(stat -c '%u:%g %a' "$TABLE")" = "$own $mode" ]
	check "release bob from a table $own $mode" prints "slot02 released" admin release bob
	check "release keeps $own $mode" [ "$(stat -c '%u:%g %a' "$TABLE")" = "$own $mode" ]
done
chown 0:4242 "$TABLE"
chmod 0640 "$TABLE"

# The namespace's /tmp is a tmpfs, which has POSIX ACLs: a failing setfacl is a failure, not a skip.
check "setfacl gives the table an ACL entry for uid 4243" setfacl -m u:4243:r "$TABLE"
acl_before=$(getfacl -cn "$TABLE" 2>/dev/null)
check "the ACL entry is there before the writes" sh -c 'echo "$1" | grep -q "^user:4243:r--"' _ "$acl_before"
check "assign bob slot02 into a table with an ACL" prints slot02 admin assign bob slot02
check "release bob from a table with an ACL" prints "slot02 released" admin release bob
check "assign and release keep the POSIX ACL" [ "$(getfacl -cn "$TABLE" 2>/dev/null)" = "$acl_before" ]
setfacl -b "$TABLE"
check "no temp or backup file is left next to the table" \
	[ "$(ls -A "$T/etc" | grep -v -e '^slots.json$' -e '^slots.json.lock$' -e '^slots.json.index$' | wc -l)" = 0 ]

# --- 2. a malformed table: exit 2, file:line:column named, file byte-for-byte unchanged ---
bad_table() {
	desc=$1
	pos=$2
	cat >"$TABLE"
	cp -p "$TABLE" "$T/before"
	admin assign carol >/dev/null 2>"$T/err"
	st=$?
	check "$desc: exit 2" [ "$st" = 2 ]
	check "$desc: error names $TABLE:$pos" grep -q -F "$TABLE:$pos:" "$T/err"
	check "$desc: table unchanged" cmp -s "$TABLE" "$T/before"
}
printf '{\n  "slots": {\n    "slot01": {\n' | bad_table "truncated" 4
printf '{\n  "slots": {},\n  "slots": {},\n  "version": 1\n}\n' | bad_table "duplicate key" 3
printf '{\n  "slots": {},\n  "version": 2\n}\n' | bad_table "version 2" "3:14"
printf '{\n  "slots": {\n    "slot05": {"user": "x", "since": "t"}\n  },\n  "version": 1\n}\n' |
	bad_table "slot outside the pool" "3:5"
printf '{\n  "slots": {\n    "slot01": {"user": "x", "since": "t"},\n    "slot02": {"user": "x", "since": "t"}\n  },\n  "version": 1\n}\n' |
	bad_table "user in two slots" "4:24"
printf '{\n  "slots": {\n    "slot01": {"user": "../etc", "since": "t"}\n  },\n  "version": 1\n}\n' |
	bad_table "bad user id" "3:24"

# A symlink at the table path is refused; the link and its target stay as they were.
echo '{"slots": {}, "version": 1}' >"$T/target.json"
chmod 0600 "$T/target.json"
target_sum=$(sha256sum <"$T/target.json")
rm -f "$TABLE"
ln -s "$T/target.json" "$TABLE"
check_exit "a symlink at the table path is refused" 1 admin assign carol slot01 2>"$T/err"
check "the refusal says it is a symlink" grep -q symlink "$T/err"
check "the link is still a link to the same target" [ "$(readlink "$TABLE")" = "$T/target.json" ]
check "the link's target is unchanged" [ "$(sha256sum <"$T/target.json")" = "$target_sum" ]
check "the link's target keeps its mode" [ "$(stat -c %a "$T/target.json")" = 600 ]
rm -f "$TABLE"

# A FIFO at the table path is refused without blocking.
mkfifo "$TABLE"
check_exit "a FIFO at the table path is refused" 1 timeout 10 env LD_PRELOAD="$NSSW" \
	NSS_WRAPPER_PASSWD="$T/passwd" NSS_WRAPPER_GROUP="$T/group" "$SLOTS_ADMIN" --config "$T/slots.conf" status 2>/dev/null
rm -f "$TABLE"

# --- 3. refusals leave the table byte-for-byte unchanged; a repeat is exit 0 ---
check "assign alice slot01 before the refusals" prints slot01 admin assign alice slot01
check "assign bob slot02 before the refusals" prints slot02 admin assign bob slot02
refused() {
	desc=$1
	shift
	cp -p "$TABLE" "$T/before"
	check_exit "$desc: exit 1" 1 admin "$@" 2>"$T/err"
	check "$desc: table unchanged" cmp -s "$TABLE" "$T/before"
	check "$desc: the message has a fix" grep -q 'fix:' "$T/err"
}
refused "slot held by another user" assign carol slot01
refused "user already in another slot" assign alice slot03
refused "slot outside the pool" assign carol slot05
refused "slot account missing" assign carol slot04
# The service is never a slot: with svc in group slot03 (or slot03 its primary group) the service
# could reach the slot's files; provision and check call that invalid, assign refuses the slot.
cp "$T/group" "$T/group.good"
echo "slot03:x:9003:svc" >>"$T/group"
refused "service account in the slot's group" assign carol slot03
check "the refusal names the service and the group" \
	grep -q "the service account svc is a member of group slot03" "$T/err"
check "and the fix removes it" grep -q "fix: remove it: gpasswd -d svc slot03" "$T/err"
sed 's/^svc:x:4242:4242:/svc:x:4242:9003:/' "$T/passwd" >"$T/passwd.svc-slot03"
cp "$T/passwd" "$T/passwd.good"
cp "$T/passwd.svc-slot03" "$T/passwd"
echo "slot03:x:9003:" >"$T/group.slot03" && cat "$T/group.good" "$T/group.slot03" >"$T/group"
refused "service account with the slot's group as its primary group" assign carol slot03
check "the refusal says primary group" grep -q "svc has group slot03 as its primary group" "$T/err"
cp "$T/passwd.good" "$T/passwd"
check "assign carol slot03 fills the pool" prints slot03 admin assign carol slot03
refused "pool full" assign dave

cp -p "$TABLE" "$T/before"
check "the same assignment again is exit 0" prints slot01 admin assign alice slot01
check "the same assignment again prints the slot" prints slot01 admin assign alice slot01
check "assign without SLOT for a user who holds one prints that slot" prints slot01 admin assign alice
check "the same assignment again changes nothing" cmp -s "$TABLE" "$T/before"
# The slot name is the one thing a caller reads: a stdout that cannot take it is a failure.
if [ -w /dev/full ]; then
	check_exit "assign with a full stdout fails (exit 1)" 1 admin assign alice slot01 >/dev/full 2>"$T/err"
	check "and says it could not print the slot" grep -q "cannot print the slot name" "$T/err"
else
	not_ok "/dev/full is missing in the namespace: the full stdout case cannot run"
fi
# Closed at start, fds 0-2 get /dev/null first (as sudo and doas do): the lock file, opened
# later, never becomes stdout or stderr, and a slot name nobody can read is exit 1.
: >"$T/etc/slots.json.lock"
check_exit "assign with stdout closed fails (exit 1)" 1 admin assign alice slot01 >&- 2>"$T/err"
check "and says stdout was closed" grep -q "cannot print the slot name.*standard output: closed when assign started" "$T/err"
check "the lock file got no slot name" test ! -s "$T/etc/slots.json.lock"
check "release carol for a new assign" prints "slot03 released" admin release carol
check_exit "a new assign with stdout closed fails too (exit 1)" 1 admin assign dora slot03 >&- 2>"$T/err"
check "the lock file is still empty" test ! -s "$T/etc/slots.json.lock"
check "the assignment stands: the same assign prints it" prints slot03 admin assign dora slot03
check "release dora" prints "slot03 released" admin release dora
check "carol back in slot03" prints slot03 admin assign carol slot03
check_exit "a refusal with stderr closed: exit 1" 1 admin assign carol slot01 2>&-
check "the lock file got no error line" test ! -s "$T/etc/slots.json.lock"
check_exit "with stdin, stdout and stderr closed: exit 1" 1 admin assign alice slot01 <&- >&- 2>&-
check "the lock file is empty after all of them" test ! -s "$T/etc/slots.json.lock"
check_exit "status with stdout closed fails (exit 1)" 1 admin status >&- 2>"$T/err"
check "and says so" grep -q "cannot print the status: standard output: closed when status started" "$T/err"
check_exit "an invalid user id is a usage error" 2 admin assign "a/b" 2>/dev/null
check_exit "an invalid slot name is a usage error" 2 admin assign alice slot1 2>/dev/null
admin release nobody-here >"$T/out"
st=$?
check "releasing a user who holds no slot is exit 0" [ "$st" = 0 ]
check "and says so" grep -q 'holds no slot' "$T/out"

# A non-root caller cannot write, and the table is unchanged; the service group can read status.
cp -p "$TABLE" "$T/before"
if ! command -v setpriv >/dev/null; then
	not_ok "setpriv (util-linux) is missing: the non-root cases cannot run"
else
	as_svc() {
		LD_PRELOAD=$NSSW NSS_WRAPPER_PASSWD=$T/passwd NSS_WRAPPER_GROUP=$T/group \
			setpriv --reuid=4242 --regid=4242 --clear-groups "$SLOTS_ADMIN" --config "$T/slots.conf" "$@"
	}
	chmod 0644 "$T/slots.conf"
	chmod 0755 "$T"
	check_exit "a write by the service account is refused" 1 as_svc release alice 2>"$T/err"
	check "the refusal says only root writes" grep -q "only root" "$T/err"
	check "the table is unchanged after the refused write" cmp -s "$TABLE" "$T/before"
	as_svc status >"$T/out"
	check "the service account can run status" [ $? = 0 ]
	check "its status shows the holders" grep -q "^slot01 .*alice" "$T/out"
fi

# --- 6. status --json has the shape slots-admin(8) documents ---
check "release bob before the status checks" prints "slot02 released" admin release bob
admin status --json >"$T/status.json"
check "status --json exits 0" [ $? = 0 ]
check "status --json printed something" test -s "$T/status.json"
check "status --json has the shape slots-admin(8) documents" python3 - "$T/status.json" "$TABLE" <<'EOF'
import json, sys
d = json.load(open(sys.argv[1]))
t = d["table"]
assert t == {"path": sys.argv[2], "owner": "root", "group": "svc", "mode": "0640", "ok": True}, t
assert [s["slot"] for s in d["slots"]] == ["slot01", "slot02", "slot03", "slot04"]
s = {x["slot"]: x for x in d["slots"]}
assert s["slot01"]["user"] == "alice" and s["slot01"]["uid"] == 9001 and s["slot01"]["account"] is True
assert s["slot02"]["user"] is None and s["slot02"]["since"] is None
assert s["slot04"]["account"] is False and s["slot04"]["uid"] is None
assert d["assigned"] == 2 and d["free"] == 2 and d["test_slot"] == "slot04", d
for row in d["slots"]:
    assert set(row) >= {"slot", "uid", "account", "user", "since"}
EOF
chgrp 0 "$TABLE"
admin status >"$T/out"
check "status with a root:root table exits 0" [ $? = 0 ]
check "status warns when the table is not root:<service group> 0640" \
	grep -q "^WARN table $TABLE: group is root, not the service group svc; the service cannot rely on reading it" "$T/out"
check "the warning names the fix" grep -q -- "-- fix: chgrp svc $TABLE\$" "$T/out"
admin status --json >"$T/status.json"
check "status --json with a root:root table exits 0" [ $? = 0 ]
check "status --json says ok false then" python3 -c \
	'import json, sys; assert json.load(open(sys.argv[1]))["table"]["ok"] is False' "$T/status.json"

# The store's one verdict: the same words in status, check and assign's warning; an ACL and
# a write by others are named, each with its part of the one fix line.
chgrp 4242 "$TABLE"
chmod 0662 "$TABLE"
setfacl -m u:4243:r "$TABLE"
admin status >"$T/out"
check "status names what others may do" grep -q "^WARN table $TABLE: mode is 0662, not 0640 (writable by others); it has a POSIX ACL; someone but root may write it" "$T/out"
check "status gives the one fix line" grep -q -- "-- fix: chmod 0640 $TABLE && setfacl -b $TABLE\$" "$T/out"
admin assign dave slot02 >/dev/null 2>"$T/err"
check "assign warns of a table others may write" grep -q "warning: $TABLE is root:svc 0662: someone but root may write it" "$T/err"
check "assign gives the same fix" grep -qx "slots-admin: fix: chmod 0640 $TABLE && setfacl -b $TABLE" "$T/err"
sh -c "$(sed -n 's/^slots-admin: fix: //p' "$T/err")"
admin status --json >"$T/status.json"
check "after the printed fix status --json says ok true" python3 -c \
	'import json, sys; assert json.load(open(sys.argv[1]))["table"]["ok"] is True' "$T/status.json"
admin release dave >/dev/null

slots_done
