#!/bin/sh
# What slots-provision logs: one line for the whole run, whatever the pool's size, reaching
# syslog as "<85>TIMESTAMP slots-provision[PID]: provisioned ...; by root (uid 0)" (LOG_AUTHPRIV,
# LOG_NOTICE, the pid of the run; the login uid's name when one is set), or "; by NAME (via
# sudo)" when SUDO_USER names who ran it: the count, the slots changed as ranges, the changes
# about no slot; nothing for a run that changes nothing.  SUDO_USER is cleared for the first run: the suite itself may run under sudo.  A receiver stands in for /dev/log: /dev becomes a
# copy on tmpfs inside the test's namespace; the host's /dev and journal are not touched.
. "$top_srcdir/tests/integration/lib.sh"
slots_need_root
command -v python3 >/dev/null || { echo "SKIP: needs python3 (Debian package python3) for the receiver"; exit 77; }
slots_enter_namespace "$@"
umask 022
check "the receiver listens at /dev/log" slots_syslog_to "$SLOTS_SCRATCH/log"

R=$SLOTS_SCRATCH/root
mkdir -p "$R/etc"
for f in passwd group shadow gshadow; do cp "$top_srcdir/tests/provision/initial-$f" "$R/etc/$f"; done
cat >"$SLOTS_SCRATCH/slots.conf" <<'CONF'
{"service": "svc", "slots": 3, "uid_min": 20000, "uid_max": 29999}
CONF
: >"$SLOTS_SCRATCH/log"
env -u SUDO_USER sh -c 'echo $$ >"$1"; exec "$2" --root "$3" --config "$4"' sh "$SLOTS_SCRATCH/pid" "$SLOTS_PROVISION" "$R" \
	"$SLOTS_SCRATCH/slots.conf" >"$SLOTS_SCRATCH/out" 2>"$SLOTS_SCRATCH/err"
check "a pool of 3: exits 0" test $? = 0
check "a pool of 3: prints its changes" grep -q '^create account slot03 ' "$SLOTS_SCRATCH/out"
pid=$(cat "$SLOTS_SCRATCH/pid")
wait_for test -s "$SLOTS_SCRATCH/log"
L=$SLOTS_SCRATCH/log
echo "# $(wc -l <"$L") lines received, the first: $(head -n 1 "$L")"
n=$(sed -n 's/^\([0-9]*\) changes$/\1/p' "$SLOTS_SCRATCH/out")
check "the run is one line (it was a line per slot and pass)" test "$(grep -c . "$L")" = 1
check "<85>, a timestamp, slots-provision[$pid], the count, the slots as a range, the admin" \
	grep -Eq "^<85>[A-Z][a-z][a-z] [ 1-3][0-9] [0-9:]{8} slots-provision\\[$pid\\]: provisioned under $R: $n changes, [0-9]+ of them to 3 slots \\(slot01-slot03\\); .*; by [^ ]+ \\((login )?uid [0-9]+\\)\$" "$L"
check "the changes about no slot are named: the shared group" grep -q "; create group slotshared (gid [0-9]*); " "$L"
: >"$L"
"$SLOTS_PROVISION" --root "$R" --config "$SLOTS_SCRATCH/slots.conf" >"$SLOTS_SCRATCH/out2" 2>"$SLOTS_SCRATCH/err2"
check "again: 0 changes" test "$(cat "$SLOTS_SCRATCH/out2")" = "0 changes"
check "and no warning but the image's missing sudo" sh -c "! grep -v 'visudo\|install sudo' '$SLOTS_SCRATCH/err2'"
sleep 0.5
check "again: nothing logged" test ! -s "$L"
cat >"$SLOTS_SCRATCH/slots4.conf" <<'CONF'
{"service": "svc", "slots": 4, "uid_min": 20000, "uid_max": 29999}
CONF
SUDO_USER=alice "$SLOTS_PROVISION" --root "$R" --config "$SLOTS_SCRATCH/slots4.conf" >"$SLOTS_SCRATCH/out3" 2>&1
check "a fourth slot, run by sudo: exits 0" test $? = 0
wait_for test -s "$L"
check "run by sudo: one line, ending in '; by alice (via sudo)'" \
	test "$(grep -c . "$L")/$(grep -c '; by alice (via sudo)$' "$L")" = 1/1
check "run by sudo: the line names slot04 alone" grep -q ' of them to 1 slot (slot04)' "$L"
kill "$slots_syslog_pid"
slots_done
