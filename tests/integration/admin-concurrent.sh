#!/bin/sh
# Concurrent admins lose nothing: 8 processes of 200 assign/release operations each, on
# distinct users; the final table is exactly what the operations imply.
. "$top_srcdir/tests/integration/lib.sh"
slots_need_root
slots_enter_namespace "$@"

NSSW=$(pkg-config --variable=libdir nss_wrapper 2>/dev/null)/libnss_wrapper.so
[ -f "$NSSW" ] || NSSW=libnss_wrapper.so
slots_tmpdir
T=$slots_tmp
mkdir -m 0755 "$T/etc"
PROCS=${SLOTS_TEST_PROCS:-8}
OPS=${SLOTS_TEST_OPS:-200}
POOL=16

{
	echo "svc:x:4242:4242:svc:/nonexistent:/usr/sbin/nologin"
	n=1
	while [ $n -le $POOL ]; do
		printf 'slot%02d:x:%d:%d::/nonexistent:/usr/sbin/nologin\n' $n $((9000 + n)) $((9000 + n))
		n=$((n + 1))
	done
} >"$T/passwd"
{
	echo "svc:x:4242:"
	n=1
	while [ $n -le $POOL ]; do
		printf 'slot%02d:x:%d:\n' $n $((9000 + n))
		n=$((n + 1))
	done
} >"$T/group"
# Each slot's home, state and run folders as a release leaves them: assign checks them.
n=1
while [ $n -le $POOL ]; do
	for d in home state run; do
		install -d -o $((9000 + n)) -g $((9000 + n)) -m 0700 "/var/lib/slots/svc/$d/$(printf slot%02d $n)"
	done
	n=$((n + 1))
done
printf '{"service": "svc", "slots": %d, "table": "%s/etc/slots.json"}\n' $POOL "$T" >"$T/slots.conf"
export LD_PRELOAD=$NSSW NSS_WRAPPER_PASSWD=$T/passwd NSS_WRAPPER_GROUP=$T/group

# Worker i: users p<i>-u1 ... each assigned then released; its last user is assigned and
# the assignment repeated (a no-op), so each worker ends holding exactly one slot.
# Every operation must succeed (exit 0); a failure is logged with the operation.
worker() {
	i=$1
	k=1
	ops=0
	while [ $ops -lt $((OPS - 2)) ]; do
		u="p$i-u$k"
		"$SLOTS_ADMIN" --config "$T/slots.conf" assign "$u" >/dev/null || echo "assign $u failed" >>"$T/fail.$i"
		"$SLOTS_ADMIN" --config "$T/slots.conf" release "$u" >/dev/null || echo "release $u failed" >>"$T/fail.$i"
		ops=$((ops + 2))
		k=$((k + 1))
	done
	u="p$i-last"
	"$SLOTS_ADMIN" --config "$T/slots.conf" assign "$u" >/dev/null || echo "assign $u failed" >>"$T/fail.$i"
	"$SLOTS_ADMIN" --config "$T/slots.conf" assign "$u" >/dev/null || echo "assign $u again failed" >>"$T/fail.$i"
	echo "$u" >"$T/last.$i"
}

i=1
while [ $i -le "$PROCS" ]; do
	worker $i &
	i=$((i + 1))
done
wait

check "no operation failed" [ -z "$(cat "$T"/fail.* 2>/dev/null)" ]
cat "$T"/fail.* 2>/dev/null | head -5
check "the final table is exactly the last user of each worker" python3 - "$T" "$PROCS" <<'EOF'
import glob, json, sys
d, procs = sys.argv[1], int(sys.argv[2])
t = json.load(open(d + "/etc/slots.json"))
holders = sorted(e["user"] for e in t["slots"].values())
want = sorted(open(f).read().strip() for f in glob.glob(d + "/last.*"))
assert len(want) == procs, want
assert holders == want, (holders, want)
assert all("cleanup" not in e for e in t["slots"].values()), t
EOF
check "the table is still root:<service group> 0640" [ "$(stat -c '%u:%g %a' "$T/etc/slots.json")" = "0:4242 640" ]
check "no temp file is left" [ "$(ls -A "$T/etc" | grep -c '^\.')" = 0 ]

slots_done
