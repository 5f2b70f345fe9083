#!/bin/sh
# The table's lock, deterministically (issue 19): while another admin holds slots.json.lock
# (flock, as every writer takes it), an assign waits -- it neither writes nor fails -- and
# finishes as soon as the lock is free; status, a reader, does not wait.  Without the lock two
# writers could both read the old table and one assignment would be lost.
. "$top_srcdir/tests/integration/lib.sh"
slots_need_root
command -v flock >/dev/null || { echo "SKIP: flock (util-linux) is not installed"; exit 77; }
slots_enter_namespace "$@"

NSSW=$(pkg-config --variable=libdir nss_wrapper 2>/dev/null)/libnss_wrapper.so
[ -f "$NSSW" ] || NSSW=libnss_wrapper.so
T=$SLOTS_SCRATCH
mkdir -m 0755 "$T/etc"
printf 'root:x:0:0:root:/root:/bin/sh\nsvc:x:4242:4242:svc:/nonexistent:/usr/sbin/nologin\n' >"$T/passwd"
printf 'slot01:x:9001:9001::/nonexistent:/usr/sbin/nologin\nslot02:x:9002:9002::/nonexistent:/usr/sbin/nologin\n' >>"$T/passwd"
printf 'root:x:0:\nsvc:x:4242:\nslot01:x:9001:\nslot02:x:9002:\n' >"$T/group"
printf '{ "service": "svc", "slots": 2, "table": "%s/etc/slots.json" }\n' "$T" >"$T/slots.conf"
TABLE=$T/etc/slots.json
# assign hands out a slot only when its home, state and run are as a release leaves them.
for s in slot01:9001 slot02:9002; do
	for d in home state run; do
		mkdir -p "/var/lib/slots/svc/$d/${s%:*}"
		chown "${s#*:}:${s#*:}" "/var/lib/slots/svc/$d/${s%:*}"
		chmod 0700 "/var/lib/slots/svc/$d/${s%:*}"
	done
done
admin() {
	LD_PRELOAD=$NSSW NSS_WRAPPER_PASSWD=$T/passwd NSS_WRAPPER_GROUP=$T/group \
		"$SLOTS_ADMIN" --config "$T/slots.conf" "$@"
}

check "assign alice slot01 makes the table and its lock" prints slot01 admin assign alice slot01
check "the lock file is there" test -f "$TABLE.lock"
cp -p "$TABLE" "$T/before"

# Another admin takes the lock and keeps it until $T/go appears.
flock -x "$TABLE.lock" sh -c 'touch "$1/held"; while [ ! -e "$1/go" ]; do sleep 0.1; done' _ "$T" &
holder=$!
n=0
while [ ! -e "$T/held" ] && [ $n -lt 100 ]; do sleep 0.1; n=$((n + 1)); done
check "another admin holds the table's lock" test -e "$T/held"

admin assign bob >"$T/out" 2>"$T/err" &
writer=$!
sleep 1.5
check "assign waits while the lock is held (still running after 1.5 s)" kill -0 "$writer"
check "the table is unchanged while it waits" cmp -s "$TABLE" "$T/before"
admin status >"$T/status" 2>&1
check "status does not wait for the lock (exit 0)" test $? = 0
check "status shows alice's slot" grep -q '^slot01 .*alice' "$T/status"

touch "$T/go"
wait "$holder"
wait "$writer"
st=$?
check "once the lock is free, assign finishes: exit 0" test "$st" = 0
check "it prints the slot" test "$(cat "$T/out")" = slot02
admin status >"$T/status" 2>&1
check "status after both exits 0" test $? = 0
check "bob is in the table, alice too" test "$(grep -c -E '^slot0[12] .*(alice|bob)' "$T/status")" = 2
slots_done
