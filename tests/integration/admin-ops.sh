#!/bin/sh
# Operations as admins expect, on the check fixture in a private namespace: the journal
# entries of assign, release, provision and check (a stand-in for journald's socket records
# what sd_journal_sendv sent) and their syslog lines (a receiver at /dev/log, /dev a copy on
# tmpfs as in tests/provision/syslog.sh), who is named as the admin, dry runs that exit as the real run
# and write nothing, and check's nagios and prometheus outputs and --output.
. "$top_srcdir/tests/integration/lib.sh"
slots_need_root
command -v python3 >/dev/null || { echo "SKIP: python3 is not installed"; exit 77; }
slots_enter_namespace "$@"
. "$top_srcdir/tests/integration/check-lib.sh"

check_fixture
J=$OUT/journal.jsonl
# /run is the namespace's tmpfs: the socket is journald's only here.
python3 "$top_srcdir/tests/integration/journal-sink.py" /run/systemd/journal/socket "$J" &
sink=$!
i=0
while [ ! -e /run/systemd/journal/socket.ready ] && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
check "the journal stand-in listens" test -S /run/systemd/journal/socket
: >"$J"
# syslog: a receiver at the namespace's /dev/log; the host's /dev is untouched.
L=$OUT/syslog
check "the syslog receiver listens at /dev/log" slots_syslog_to "$L"
trap 'kill $sink $slots_syslog_pid 2>/dev/null' EXIT
: >"$L"

# entries FILTER...: the JSON lines of the journal (key=value filters, all must hold), one a line.
entries() {
	python3 - "$J" "$@" <<'PY'
import json, sys
for line in open(sys.argv[1]):
    e = json.loads(line)
    ok = True
    for f in sys.argv[2:]:
        k, v = f.split("=", 1)
        got = e.get(k)
        if not (got == v or (isinstance(got, list) and v in got)):
            ok = False
    if ok:
        print(json.dumps(e, sort_keys=True))
PY
}
count() { entries "$@" | wc -l | tr -d ' '; }
# field NAME FILTER...: the field of the last matching entry.
field() {
	name=$1
	shift
	entries "$@" | tail -n 1 | python3 -c "import json, sys; print(json.loads(sys.stdin.read() or '{}').get('$name', ''))"
}
# expected admin of a run without SUDO_USER: the login uid's name, else the uid's.
luid=$(cat /proc/self/loginuid 2>/dev/null)
admin_of() {
	if [ -n "$luid" ] && [ "$luid" != 4294967295 ]; then getent passwd "$luid" | cut -d: -f1 || echo "$luid"
	else echo "$1"; fi
}

# ---- 1. The journal: assign, a refusal, a refusal of someone who is not root, release ----
SUDO_USER=alice "$SLOTS_ADMIN" assign new.user >"$OUT/assign.out" 2>"$OUT/assign.err"
check "assign new.user: exit 0, slot02" test "$?:$(cat "$OUT/assign.out")" = "0:slot02"
check "one journal entry for the assign" test "$(count SLOTS_ACTION=assign SLOTS_SLOT=slot02)" = 1
check "with its fields: done, the user, the admin from sudo, the service, its MESSAGE_ID" test \
	"$(count SLOTS_ACTION=assign SLOTS_RESULT=done SLOTS_SLOT=slot02 SLOTS_USER=new.user SLOTS_ADMIN=alice \
	SLOTS_SERVICE=$SERVICE MESSAGE_ID=2cefb8af4c034503b7775475e89642b7 SYSLOG_FACILITY=10)" = 1
if field MESSAGE SLOTS_SLOT=slot02 | grep -q "^assigned slot02 to user new.user; tree prepared: .*; by alice (via sudo)$"; then
	ok "its MESSAGE is the syslog line, the admin at its end"
else
	not_ok "its MESSAGE is the syslog line: $(field MESSAGE SLOTS_SLOT=slot02)"
fi
SUDO_USER=alice "$SLOTS_ADMIN" assign intruder slot01 >/dev/null 2>"$OUT/refused.err"
check "assign of a held slot: exit 1" test $? = 1
check "the refusal is in the journal: slot01, the user who asked, refused" test \
	"$(count SLOTS_ACTION=assign SLOTS_RESULT=refused SLOTS_SLOT=slot01 SLOTS_USER=intruder SLOTS_ADMIN=alice)" = 1
field MESSAGE SLOTS_RESULT=refused SLOTS_USER=intruder | grep -q "refused to assign slot01 to user intruder: cannot assign slot01: .*held by another user" &&
	ok "the refusal's message names the reason" || not_ok "the refusal's message names the reason: $(field MESSAGE SLOTS_USER=intruder)"
# The error record itself, as fields: the reason and the object as standard error names them, the fix.
reason=$(field SLOTS_REASON SLOTS_RESULT=refused SLOTS_USER=intruder)
check "the refusal's SLOTS_REASON is the error's reason" sh -c 'case "$1" in *"held by another user"*) grep -qF -- ": $1" "$2" ;; *) false ;; esac' _ "$reason" "$OUT/refused.err"
check "and SLOTS_OBJECT the object standard error names" sh -c 'test -n "$1" && grep -qF -- "cannot assign slot01: $1: " "$2"' _ \
	"$(field SLOTS_OBJECT SLOTS_RESULT=refused SLOTS_USER=intruder)" "$OUT/refused.err"
check "and SLOTS_FIX the fix line" sh -c 'test -n "$1" && grep -qxF -- "slots-admin: fix: $1" "$2"' _ \
	"$(field SLOTS_FIX SLOTS_RESULT=refused SLOTS_USER=intruder)" "$OUT/refused.err"
# The attack: someone who is not root sets SUDO_USER to blame another admin.
runuser -u slot04 -- env SUDO_USER=alice "$SLOTS_ADMIN" assign mallory slot06 >/dev/null 2>"$OUT/nonroot.err"
check "assign by slot04: exit 1" test $? = 1
want=$(admin_of slot04)
check "the refusal of a non-root caller is logged, naming $want, not the forged SUDO_USER" test \
	"$(count SLOTS_ACTION=assign SLOTS_RESULT=refused SLOTS_USER=mallory SLOTS_SLOT=slot06 SLOTS_ADMIN=$want)" = 1
"$SLOTS_ADMIN" release new.user >/dev/null 2>&1
check "release: one entry, clean and free" test \
	"$(count SLOTS_ACTION=release SLOTS_SLOT=slot02)/$(count SLOTS_ACTION=release SLOTS_RESULT=done SLOTS_USER=new.user)" = 1/1
field MESSAGE SLOTS_ACTION=release SLOTS_SLOT=slot02 | grep -q "^released slot02 from user new.user: clean and free (" &&
	ok "the release's line says clean and free, no pending first" || not_ok "release line: $(field MESSAGE SLOTS_ACTION=release)"
check "the release names the admin (no SUDO_USER)" test "$(field SLOTS_ADMIN SLOTS_ACTION=release)" = "$(admin_of root)"
"$SLOTS_ADMIN" release --slot slot09 >/dev/null 2>&1
check "a refused release is logged" test "$(count SLOTS_ACTION=release SLOTS_RESULT=refused SLOTS_SLOT=slot09)" = 1
check "slot02's story: assigned, then released" test \
	"$(entries SLOTS_SLOT=slot02 | python3 -c 'import json,sys; print(" ".join(json.loads(l)["SLOTS_ACTION"] + "/" + json.loads(l)["SLOTS_RESULT"] for l in sys.stdin))')" = \
	"assign/done release/done"

wait_for test "$(grep -c 'slots-admin\[' "$L")" -ge 5
sed 's/^/# syslog: /' "$L" | cut -c1-200
check "syslog: one line per event, refusals included (5 events, 5 lines)" test "$(grep -c 'slots-admin\[' "$L")" = 5
check "syslog: the refusal, with the admin" \
	grep -q "slots-admin\[[0-9]*\]: refused to assign slot01 to user intruder: .*; by alice (via sudo)\$" "$L"
check "syslog: authpriv.notice for the assign, authpriv.warning for a refusal" sh -c \
	"grep -q '^<85>.*assigned slot02 to user new.user' '$L' && grep -q '^<84>.*refused to assign slot01' '$L'"
check "syslog: the release is one line, clean and free" test \
	"$(grep -c 'slot02' "$L")/$(grep -c 'released slot02 from user new.user: clean and free' "$L")" = 2/1

# ---- 2. Dry runs: the same exit and "changed" as the real run right after, nothing written ----
rm -f "$TABLE.lock"
# Each row: the arguments (after the command) | a comment | a set-up before both runs | a
# tidy-up after them.  Every row runs dry, then for real.
H=/var/lib/slots/$SERVICE/home
cat >"$OUT/dry.table" <<ROWS
assign dry.one|the lowest free slot: changed
assign dry.one|again: not changed
assign dry.two slot04|a slot asked for: changed
assign intruder slot01|a slot held by another user: refused
assign $USER_A slot02|the user holds another slot: refused
assign someone slot09|outside the pool: refused
release dry.one|a holder: changed
release dry.one|a user with no slot: not changed
release --slot slot04|by slot: changed
release --slot slot04|a free slot: not changed
assign bad.one slot06|a slot in group sudo, no good slot by the one rule: refused|usermod -a -G sudo slot06|gpasswd -d slot06 sudo
assign dirty.one slot07|its home not as a release leaves it: refused|touch $H/slot07/left|$SLOTS_ADMIN release --slot slot07
release --slot slot09|outside the pool: refused
ROWS
n=0
while IFS='|' read -r args what setup tidy; do
	n=$((n + 1))
	[ -z "$setup" ] || $setup >/dev/null
	before=$(sha256sum "$TABLE"; ls -a /etc/slots)
	# shellcheck disable=SC2086
	"$SLOTS_ADMIN" --json $args --dry-run >"$OUT/dry$n.json" 2>"$OUT/dry$n.err"
	drc=$?
	after=$(sha256sum "$TABLE"; ls -a /etc/slots)
	[ "$n" = 1 ] && check "the first dry run made no lock file where none was" test ! -e "$TABLE.lock"
	# shellcheck disable=SC2086
	"$SLOTS_ADMIN" --json $args >"$OUT/real$n.json" 2>"$OUT/real$n.err"
	rrc=$?
	r=$(python3 - "$OUT/dry$n.json" "$OUT/real$n.json" <<'PY'
import json, sys
d, r = (json.load(open(f)) for f in sys.argv[1:3])
ok = d["version"] == r["version"] == 1 and d["dry_run"] is True and r["dry_run"] is False
ok = ok and d["changed"] == r["changed"] and d["slot"] == r["slot"] and (d["error"] is None) == (r["error"] is None)
print("same" if ok else "dry %s / real %s" % (d, r))
PY
)
	if [ "$before" = "$after" ] && [ "$drc" = "$rrc" ] && [ "$r" = same ]; then
		ok "dry run $n, $what ($args): exit $drc as the real run, same changed and slot, nothing written"
	else
		not_ok "dry run $n, $what ($args): exit $drc, real $rrc; $r; table or folder changed: $([ "$before" = "$after" ] && echo no || echo yes)"
	fi
	[ -z "$tidy" ] || $tidy >/dev/null 2>&1
done <"$OUT/dry.table"
# row ARGS: the number of the table's row with these arguments.
row() { grep -n "^$1|" "$OUT/dry.table" | cut -d: -f1; }
bad=$(row "assign bad.one slot06") dirty=$(row "assign dirty.one slot07")
check "a dry assign of a slot no good by the one rule says why, as the real one does" \
	sh -c 'grep -q "not a good slot" "$1" && grep -q "not a good slot" "$2"' _ "$OUT/dry$bad.err" "$OUT/real$bad.err"
check "a dry assign of a slot whose home is not clean says why, as the real one does" \
	sh -c 'l=$(grep -F "cannot assign slot07: " "$2" | head -n 1) && case $l in *"home/slot07: is not empty"*) grep -qxF "$l" "$1" ;; *) false ;; esac' _ \
	"$OUT/dry$dirty.err" "$OUT/real$dirty.err"
check "the real one marked it pending (its one log line says so), the dry one logged nothing" \
	test "$(grep -c 'refused to assign slot07 to user dirty.one: .*; marked cleanup pending' "$L")" = 1
check "and the tidy-up's release --slot cleared it" sh -c '! "$1" status slot07 | grep -q "cleanup pending"' _ "$SLOTS_ADMIN"
n=$(grep -c . "$OUT/dry.table")
check "a dry release of a slot outside the pool says why, as the real one does" \
	grep -q "the slot is outside the pool of" "$OUT/dry$n.err"
rm -f "$TABLE.lock"
"$SLOTS_ADMIN" assign --dry-run dry.three >"$OUT/dry-text.out" 2>"$OUT/dry-text.err"
check "assign --dry-run in text: would assign slot02, exit 0" test "$?:$(cat "$OUT/dry-text.out")" = "0:would assign slot02 to user dry.three"
check "and says nothing was changed" grep -qx "slots-admin: dry run: nothing was changed" "$OUT/dry-text.err"
check "no lock file where none was" test ! -e "$TABLE.lock"
check "dry runs are not logged" test "$(count SLOTS_USER=dry.three)" = 0
# A dry release never touches the slot's processes.
runuser -u slot03 -- sleep 300 &
victim=$!
wait_for pgrep -u slot03 -f 'sleep 300' >/dev/null
"$SLOTS_ADMIN" release --dry-run "$USER_B" >"$OUT/dry-rel.out" 2>/dev/null
check "release --dry-run of a holder: would release slot03" grep -qx "would release slot03 from user $USER_B" "$OUT/dry-rel.out"
check "slot03's process still runs" kill -0 $victim
kill $victim 2>/dev/null
runuser -u slot04 -- "$SLOTS_ADMIN" assign --dry-run x >/dev/null 2>&1
check "a dry run by someone who is not root: exit 1, as the real run" test $? = 1
usage_is dry-status "$SLOTS_ADMIN" "--dry-run goes with assign or release" status --dry-run

# ---- 3. provision: one summary event, whatever the number of slots it changed ----
for d in state/slot02 state/slot06 run/slot07 run/slot08; do rm -rf "/var/lib/slots/$SERVICE/$d"; done
"$SLOTS_PROVISION" --config "$CONF" >"$OUT/prov.out" 2>"$OUT/prov.err"
check "provision repairs the four folders: exit 0" test $? = 0
check "one journal entry for the run" test "$(count SLOTS_ACTION=provision)" = 1
check "with one SLOTS_SLOT field for each slot it changed, and no other" test \
	"$(entries SLOTS_ACTION=provision | python3 -c 'import json,sys; print(json.loads(sys.stdin.read())["SLOTS_SLOT"])')" = \
	"['slot02', 'slot06', 'slot07', 'slot08']"
if field MESSAGE SLOTS_ACTION=provision | grep -q "^provisioned: $(sed -n 's/^\([0-9]*\) changes$/\1/p' "$OUT/prov.out") changes, 4 of them to 4 slots (slot02, slot06-slot08); by "; then
	ok "its line counts the changes and names the slots as ranges"
else
	not_ok "provision's line: $(field MESSAGE SLOTS_ACTION=provision)"
fi
"$SLOTS_PROVISION" --config "$CONF" >/dev/null 2>&1
check "a second run changes nothing and logs nothing" test "$(count SLOTS_ACTION=provision)" = 1
"$SLOTS_PROVISION" --dry-run --config "$CONF" >/dev/null 2>&1
check "a dry run logs nothing" test "$(count SLOTS_ACTION=provision)" = 1
runuser -u slot04 -- "$SLOTS_PROVISION" --config "$CONF" >/dev/null 2>&1
check "provision by someone who is not root: exit 1, and the refusal is logged" test \
	"$?:$(count SLOTS_ACTION=provision SLOTS_RESULT=refused MESSAGE_ID=26e8cfc1bdd44c5790a601fc6f73ba45)" = 1:1

# A pool of 1,000 slots in an image (--root): one event still.
img=$SLOTS_SCRATCH/image
mkdir -p "$img/etc/slots"
for f in passwd group shadow gshadow login.defs; do cp -p /etc/$f "$img/etc/"; done
sed -i '/^slot/d' "$img/etc/passwd" "$img/etc/group" "$img/etc/shadow" "$img/etc/gshadow"
printf '{"service": "%s", "slots": 1000, "uid_min": 300000, "uid_max": 301500, "app_root": "/opt/none",
 "launcher": "run"}\n' "$SERVICE" >"$img/etc/slots/slots.conf"
"$SLOTS_PROVISION" --root "$img" >"$OUT/prov-big.out" 2>"$OUT/prov-big.err"
rc=$?
check "provision of 1,000 slots under --root: exit 0 (exit $rc)" test $rc = 0
[ $rc = 0 ] || head -n 5 "$OUT/prov-big.err" | sed 's/^/# /'
# libsystemd sends at most 1,024 iovecs, two a field: past 400 slots only the count is a field.
check "one journal entry for it, SLOTS_SLOT_COUNT=1000 (no field per slot past 400)" test \
	"$(count SLOTS_ACTION=provision SLOTS_SLOT_COUNT=1000)" = 1
if field MESSAGE SLOTS_SLOT_COUNT=1000 | grep -q "^provisioned under $img: [0-9]* changes, [0-9]* of them to 1000 slots (slot01-slot1000)"; then
	ok "its line names the image and the slots as one range"
else
	not_ok "the big run's line: $(field MESSAGE SLOTS_SLOT_COUNT=1000 | cut -c1-300)"
fi

# ---- 4. check: nagios, prometheus, --output ----
"$SLOTS_ADMIN" check --format=nagios >"$OUT/nagios-ok.out" 2>"$OUT/nagios-ok.err"
check "nagios on a good host: exit 0" test $? = 0
check "one line: SLOTS OK with perfdata" sh -c "test \$(wc -l <'$OUT/nagios-ok.out') = 1 &&
	grep -Eqx 'SLOTS OK - [0-9]+ passed, 0 skipped \\| passed=[0-9]+;;;0 failed=0;;;0 skipped=0;;;0 warned=0;;;0' '$OUT/nagios-ok.out'"
check "a passed check is logged" test "$(count SLOTS_ACTION=check SLOTS_RESULT=passed)" -ge 1
"$SLOTS_ADMIN" check --format=prometheus >"$OUT/prom-ok.out" 2>"$OUT/prom-ok.err"
check "prometheus on a good host: exit 0" test $? = 0
"$SLOTS_ADMIN" status --json >"$OUT/status.json"
# prom FILE OK FAILED POOL...: the exposition format holds (HELP and TYPE before each metric's
# samples, names and labels well formed, one series each) and says what is expected.
prom() {
	python3 - "$@" "$OUT/status.json" <<'PY'
import json, re, sys
path, ok, failed = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
fails = sys.argv[4].split(",") if sys.argv[4] else []
status = json.load(open(sys.argv[5]))
meta, samples, series = {}, {}, set()
sample = re.compile(r'^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{((?:[a-zA-Z_][a-zA-Z0-9_]*="(?:[^"\\\n]|\\[\\"n])*",?)*)\})? (\S+)$')
for line in open(path):
    line = line.rstrip("\n")
    m = re.match(r"^# (HELP|TYPE) (\S+) (.+)$", line)
    if m:
        meta.setdefault(m.group(2), set()).add(m.group(1))
        continue
    m = sample.match(line)
    assert m, "bad line: %r" % line
    name = m.group(1)
    assert meta.get(name) == {"HELP", "TYPE"}, "no HELP/TYPE before %s" % name
    assert line not in series, "duplicate series %s" % line
    series.add(line)
    samples.setdefault(name, []).append((m.group(3) or "", float(m.group(4))))
v = lambda n: samples[n][0][1]
assert v("slots_check_ok") == ok and v("slots_check_failed") == failed, samples
got = sorted(l for l, _ in samples.get("slots_check_fail", []))
want = sorted('check="%s",slot="%s"' % tuple((f + ":").split(":")[:2]) for f in fails)
assert got == want, (got, want)
assert v("slots_pool_assigned") == status["assigned"] and v("slots_pool_free") == status["free"], samples
assert v("slots_pool_pending") == status["pending"], samples
import time
assert abs(v("slots_check_timestamp_seconds") - time.time()) < 600, samples
PY
}
check "prometheus on a good host: well formed, ok 1, failed 0, the pool's counts" prom "$OUT/prom-ok.out" 1 0 ""
# A failing host: the table someone but root may write.
chmod 0664 "$TABLE"
"$SLOTS_ADMIN" check --format=nagios >"$OUT/nagios-fail.out" 2>"$OUT/nagios-fail.err"
check "nagios with a failed row: exit 2 CRITICAL" test $? = 2
check "naming the first failed row, perfdata failed=1" grep -Eq '^SLOTS CRITICAL - 1 failed, first table: .* \| passed=[0-9]+;;;0 failed=1;;;0 skipped=0;;;0 warned=0;;;0$' "$OUT/nagios-fail.out"
"$SLOTS_ADMIN" check --format=prometheus >"$OUT/prom-fail.out" 2>/dev/null
check "prometheus with a failed row: exit 1, as plain check" test $? = 1
check "prometheus: ok 0, failed 1, slots_check_fail{check=\"table\",slot=\"\"}" prom "$OUT/prom-fail.out" 0 1 "table"
"$SLOTS_ADMIN" check >/dev/null 2>&1
check "plain check with a failed row still exits 1" test $? = 1
field MESSAGE SLOTS_ACTION=check SLOTS_RESULT=failed | grep -q "1 failed, 0 warned, 0 skipped; first failure: table: " &&
	ok "its message names the table row" || not_ok "failed check message: $(field MESSAGE SLOTS_RESULT=failed)"
chmod 0640 "$TABLE"
cp -p "$CONF" "$OUT/conf.good"
printf '{"service": "%s",\n "slots": "eight"}\n' "$SERVICE" >"$CONF"
"$SLOTS_ADMIN" check --format=nagios >"$OUT/nagios-bad.out" 2>/dev/null
check "nagios with an invalid config: exit 3 UNKNOWN" test $? = 3
check "naming the config's line" grep -q "^SLOTS UNKNOWN - invalid config: $CONF:2:" "$OUT/nagios-bad.out"
cp -p "$OUT/conf.good" "$CONF"
usage_is format-bad "$SLOTS_ADMIN" "--format takes text, json, nagios or prometheus" check --format=xml
usage_is format-json "$SLOTS_ADMIN" "--json and --format: give one of them" check --json --format=nagios
usage_is output-status "$SLOTS_ADMIN" "--format and --output go with check" status --output /tmp/x

# --output: replaced at once, 0644 whatever the umask, a symlink there replaced, never followed.
mkdir -p "$OUT/textfile"
(umask 077 && "$SLOTS_ADMIN" check --format=prometheus --output "$OUT/textfile/slots.prom" >"$OUT/o1.out" 2>&1)
check "--output: exit 0, nothing on stdout" test $? = 0 -a ! -s "$OUT/o1.out"
check "--output: the file is 0644 and well formed" sh -c "test \$(stat -c %a '$OUT/textfile/slots.prom') = 644" &&
	prom "$OUT/textfile/slots.prom" 1 0 "" && ok "--output's content is the prometheus text" || not_ok "--output content"
ino1=$(stat -c %i "$OUT/textfile/slots.prom")
"$SLOTS_ADMIN" check --format=prometheus --output "$OUT/textfile/slots.prom" >/dev/null 2>&1
check "a second run renames a new file into place (new inode), no temp left" sh -c \
	"test \$(stat -c %i '$OUT/textfile/slots.prom') != $ino1 && test \$(ls -A '$OUT/textfile' | wc -l) = 1"
echo precious >"$OUT/target"
ln -s "$OUT/target" "$OUT/textfile/link.prom"
"$SLOTS_ADMIN" check --format=nagios --output "$OUT/textfile/link.prom" >/dev/null 2>"$OUT/o-link.err"
lrc=$?
check "a symlink at --output is refused (nagios: UNKNOWN), never followed: its target is untouched" \
	test "$lrc:$(cat "$OUT/target")" = "3:precious"
check "the refusal says it is a symlink" grep -q "link.prom: is a symlink" "$OUT/o-link.err"
ln "$OUT/target" "$OUT/textfile/hard.prom"
"$SLOTS_ADMIN" check --format=prometheus --output "$OUT/textfile/hard.prom" >/dev/null 2>"$OUT/o-hard.err"
hrc=$?
check "a file with a second name at --output: that name gets a new file, the other keeps its content" \
	test "$hrc:$(cat "$OUT/target"):$(stat -c %h "$OUT/target"):$(stat -c %h "$OUT/textfile/hard.prom")" = "0:precious:1:1"
"$SLOTS_ADMIN" check --format=nagios --output "$OUT/nowhere/x.txt" >/dev/null 2>"$OUT/o-none.err"
check "--output into a missing folder: nagios UNKNOWN (3), with the reason" test "$?" = 3
check "the reason names the file" grep -q "cannot write the self-check: $OUT/nowhere/x.txt" "$OUT/o-none.err"
slots_done
