#!/bin/sh
# The end-to-end suite, run as root inside the booted Debian 12 guest (tests/guest/run.sh):
# systemd as PID 1, cgroup v2, journald, Debian's sudo with use_pty.  It installs the two
# .debs with dpkg, sets up a service with four slots and slice limits, and replays what the
# platform does: the executor's three sudo lines as the service (with and without a
# terminal), limits that stop one slot and not another, a release that must end a process
# that left the slot's uid through a user namespace, check, the journal, no new privileges
# (sudo, su, cron, at, a set-id file of another slot), a slot's journal that must not reach its
# next holder, an inventory of the whole host after a release that must find nothing of the
# slot's but its fresh folders, the check's timer writing the Prometheus textfile (red with a broken table), a
# removal refused while slots are held, an upgrade to the next build (DEBDIR/next), a removal
# with the override, the purge.  The ids are the fleet recipe's: uid_base 60000.
# Prints "ok - ..." / "not ok - ..." lines; exits 1 when any case failed.
set -u
IN=${SLOTS_GUEST_IN:-/mnt/in}
export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin LANG=C.UTF-8
SVC=video-studio
GRP=video-studio-agents
ESC=$(systemd-escape "$SVC")
POOL="slots-$ESC.slice"
APP=/opt/video-studio
REL=$APP/releases/2026.12.01
LAUNCH=$APP/current/bin/slot-exec
SLOTCTL=$APP/current/bin/slotctl
LIST=PATH,LANG,LC_ALL,TERM,TZ,HOME
ALICE=aa73da63e26b40a1bb701c2b4c024870
BOB=5f0c2e91b7d84a6e9c3d2b1a0f9e8d7c
CAROL=0b1c2d3e4f5a6b7c8d9e0f1a2b3c4d5e
T=/tmp/e2e
S=$T/svc
mkdir -p $T && chmod 0755 $T
passed=0 failed=0
ok() { passed=$((passed + 1)); echo "ok - $*"; }
not_ok() { failed=$((failed + 1)); echo "not ok - $*"; }
# check DESC CMD...: the command succeeds; on failure its output is shown.
check() {
	d=$1
	shift
	if "$@" >$T/out 2>&1; then ok "$d"; else
		not_ok "$d"
		sed 's/^/#   /' $T/out | head -n 30
	fi
}
show() { sed 's/^/#   /' "$@" | head -n 30; }
# The service as the executor runs: a bare environment with the names it passes.
as_svc() {
	runuser -u $SVC -- env -i PATH=/usr/local/bin:/usr/bin:/bin LANG=C.UTF-8 TERM=xterm TZ=UTC \
		HOME=/srv/video-studio "$@"
}
# run_slot SLOT ARGS...: the executor's command line for a slot (slotctl, then the launcher).
run_slot() {
	s=$1
	shift
	as_svc timeout 300 sudo -n -u "$s" -g $GRP --preserve-env=$LIST -- $SLOTCTL $LAUNCH "$@"
}
slice_of() { echo "slots-$ESC-$1.slice"; }
cg_of() { echo "/sys/fs/cgroup/slots.slice/$POOL/$(slice_of "$1")"; }

echo "# systemd $(systemctl --version | sed -n 1p | cut -d' ' -f2), $(uname -r), state $(systemctl is-system-running)"

echo "=== install"
check "dpkg -i slots libpam-slots" dpkg -i "$IN/debs/slots.deb" "$IN/debs/libpam-slots.deb"
check "the pam-auth-update profile is active in common-session" grep -q '^session.*pam_slots\.so' /etc/pam.d/common-session
check "and in common-session-noninteractive (sudo -n)" grep -q '^session.*pam_slots\.so' /etc/pam.d/common-session-noninteractive
check "sudo keeps Debian's use_pty" grep -q '^Defaults[[:space:]]*use_pty' /etc/sudoers

echo "=== the service, the app and the config"
useradd --system --user-group --create-home --home-dir /srv/video-studio --shell /bin/sh $SVC
install -d -m 0755 -o $SVC -g $SVC $APP $APP/releases $REL $REL/bin /srv/video-studio/docs \
	/srv/video-studio/docs/assets /srv/video-studio/docs/renders
# The launcher runs what it is given, else says who it runs as and on which terminal.
cat >$REL/bin/slot-exec <<'LAUNCHER'
#!/bin/sh
[ $# -gt 0 ] && exec "$@"
echo "launcher as $(id -un) group $(id -gn) tty $(tty)"
LAUNCHER
printf '#!/bin/sh\nexec "$@"\n' >$REL/bin/slotctl
chown $SVC:$SVC $REL/bin/slot-exec $REL/bin/slotctl
chmod 0755 $REL/bin/slot-exec $REL/bin/slotctl
ln -s releases/2026.12.01 $APP/current
# What the service's own processes write (the executor's side of a background run).
install -d -m 0755 -o $SVC -g $SVC $S
write_conf() {
	cat >/etc/slots/slots.conf <<CONF
{
  "service": "$SVC",
  "slots": 4,
  "uid_base": 60000,
  "app_root": "$APP",
  "launcher": "slot-exec",
  "slotctl": "$SLOTCTL",
  "run_as_group": "$GRP",
  "docs_root": "/srv/video-studio/docs",
  "shared_dirs": ["assets", "renders"]$1
}
CONF
}
SLICE=',
  "slice": {
    "pool": {"MemoryMax": "1G"},
    "default": {"MemoryMax": "200M", "TasksMax": 40},
    "slot02": {"MemoryMax": "64M", "TasksMax": 16}
  }'
write_conf "$SLICE"
if slots-provision >$T/prov.out 2>&1; then ok "slots-provision with a slice key"; have_slice=1; else
	not_ok "slots-provision with a slice key (exit $?)"
	show $T/prov.out
	# The cases that do not need slices still run, on the same config without the key.
	echo "# provisioning again without the slice key, for the cases that do not need it"
	have_slice=
	write_conf ""
	check "slots-provision (without slice)" slots-provision
fi
check "slot01..slot04 exist" sh -c 'for s in slot01 slot02 slot03 slot04; do id $s || exit 1; done'
check "slot03 is uid and gid 60003, slotshared gid 60000 (uid_base 60000)" sh -c \
	'test "$(id -u slot03):$(id -g slot03):$(getent group slotshared | cut -d: -f3)" = 60003:60003:60000'
check "the drop-in passes visudo" visudo -cf /etc/sudoers.d/slots-$SVC
check "a second slots-provision changes nothing" sh -c 'slots-provision | grep -qx "0 changes"'

echo "=== slice units"
check "$POOL is loaded from /etc/systemd/system" sh -c \
	"test -f '/etc/systemd/system/$POOL' && systemctl show -p LoadState --value '$POOL' | grep -qx loaded"
check "$(slice_of slot01) has MemoryMax=200M TasksMax=40" sh -c \
	"systemctl show -p MemoryMax -p TasksMax '$(slice_of slot01)' | tee /dev/stderr | tr '\n' ' ' | grep -qx 'MemoryMax=209715200 TasksMax=40 '"
check "$(slice_of slot02) has its own MemoryMax=64M TasksMax=16" sh -c \
	"systemctl show -p MemoryMax -p TasksMax '$(slice_of slot02)' | tee /dev/stderr | tr '\n' ' ' | grep -qx 'MemoryMax=67108864 TasksMax=16 '"
check "the pool's slice has MemoryMax=1G" sh -c "systemctl show -p MemoryMax --value '$POOL' | grep -qx 1073741824"

echo "=== assign"
check "assign ALICE -> slot01" sh -c "slots-admin assign $ALICE | grep -qx slot01"
check "assign BOB -> slot02" sh -c "slots-admin assign $BOB | grep -qx slot02"
check "assign CAROL -> slot03" sh -c "slots-admin assign $CAROL | grep -qx slot03"

echo "=== the executor's three command lines, as the service through sudo"
check "preflight without a terminal: sudo -n -u slot01 true" as_svc timeout 5 sudo -n -u slot01 true
check "preflight with a terminal (script -qc)" as_svc script -qec "timeout 5 sudo -n -u slot01 true" /dev/null
run_slot slot01 >$T/run.out 2>&1 </dev/null
grep -qx "launcher as slot01 group $GRP tty not a tty" $T/run.out &&
	ok "run without a terminal: slotctl and the launcher as slot01, -g $GRP" ||
	{ not_ok "run without a terminal: slotctl and the launcher as slot01, -g $GRP"; show $T/run.out; }
as_svc script -qec "sudo -n -u slot01 -g $GRP --preserve-env=$LIST -- $SLOTCTL $LAUNCH" /dev/null >$T/tty.out 2>&1 </dev/null
tr -d '\r\000' <$T/tty.out | grep -q "launcher as slot01 group $GRP tty /dev/pts/" &&
	ok "run with a terminal: the launcher gets a pty (use_pty)" ||
	{ not_ok "run with a terminal: the launcher gets a pty (use_pty)"; show $T/tty.out; }
check_fails() { d=$1; shift; if "$@" >$T/out 2>&1; then not_ok "$d"; show $T/out; else ok "$d"; fi; }
check_fails "the service cannot run another command as slot01" as_svc sudo -n -u slot01 -- /bin/sh -c true
check_fails "the service cannot run anything as root" as_svc sudo -n -u root true
# kill: a process group of slot01, started by the executor, ended by the third line.
kill_case() {
	how=$1
	as_svc setsid sh -c "sudo -n -u slot01 -g $GRP --preserve-env=$LIST -- $SLOTCTL $LAUNCH \
		sh -c 'echo \$\$ \$(ps -o pgid= -p \$\$); exec sleep 300' >$S/pg.$how 2>&1 </dev/null &"
	i=0
	while [ ! -s $S/pg.$how ] && [ $i -lt 30 ]; do sleep 1; i=$((i + 1)); done
	read -r pid pgid <$S/pg.$how
	if [ -z "${pgid:-}" ] || ! kill -0 "$pid" 2>/dev/null; then
		not_ok "kill $how: the slot's process did not start"
		show $S/pg.$how
		return
	fi
	if [ "$how" = tty ]; then
		as_svc script -qec "sudo -n -u slot01 kill -s TERM -- -$pgid" /dev/null >$T/kill.out 2>&1 </dev/null
	else
		as_svc sudo -n -u slot01 kill -s TERM -- -$pgid >$T/kill.out 2>&1 </dev/null
	fi
	i=0
	while kill -0 "$pid" 2>/dev/null && [ $i -lt 10 ]; do sleep 1; i=$((i + 1)); done
	if kill -0 "$pid" 2>/dev/null; then
		not_ok "kill $how: sudo -n -u slot01 kill -s TERM -- -$pgid ended the group"
		show $T/kill.out
		kill -9 "$pid"
	else
		ok "kill $how: sudo -n -u slot01 kill -s TERM -- -PGID ended the group"
	fi
}
kill_case notty
kill_case tty
# HOME and CLAUDE_CONFIG_DIR: the slot's own home unless the caller passes them.
own=/var/lib/slots/$SVC/home/slot01
env_case() {
	d=$1 want=$2
	shift 2
	as_svc "$@" printenv HOME CLAUDE_CONFIG_DIR >$T/env.out 2>&1 </dev/null
	printf '%s\n' $want >$T/env.want
	if cmp -s $T/env.want $T/env.out; then ok "$d"; else not_ok "$d"; show $T/env.out; fi
}
env_case "HOME and CLAUDE_CONFIG_DIR not passed: both the slot's home" "$own $own" \
	sudo -n -u slot01 -g $GRP --preserve-env=PATH,LANG -- $SLOTCTL $LAUNCH
env_case "HOME and CLAUDE_CONFIG_DIR passed: the caller's values" "/srv/video-studio /srv/video-studio/.claude" \
	env CLAUDE_CONFIG_DIR=/srv/video-studio/.claude sudo -n -u slot01 -g $GRP \
	--preserve-env=PATH,HOME,CLAUDE_CONFIG_DIR -- $SLOTCTL $LAUNCH

echo "=== a slot's command runs in its slot's slice, with the limits"
run_slot slot01 cat /proc/self/cgroup >$T/cg.out 2>&1 </dev/null
want="/slots.slice/$POOL/$(slice_of slot01)/"
grep -qF "0::$want" $T/cg.out && ok "slot01's command is in $want..." ||
	{ not_ok "slot01's command is in $want... (got: $(cat $T/cg.out))"; }
check "slot01's slice cgroup has memory.max 209715200" grep -qx 209715200 "$(cg_of slot01)/memory.max"
check "and pids.max 40" grep -qx 40 "$(cg_of slot01)/pids.max"
as_svc script -qec "sudo -n -u slot01 -g $GRP --preserve-env=$LIST -- $SLOTCTL $LAUNCH cat /proc/self/cgroup" /dev/null \
	>$T/cgt.out 2>&1 </dev/null
tr -d '\r\000' <$T/cgt.out | grep -qF "0::$want" && ok "with a terminal too" ||
	{ not_ok "with a terminal too (got: $(cat $T/cgt.out))"; }

echo "=== limits stop only the slot that exceeds them"
# slot01 keeps a process running while slot02 goes over its limits.
as_svc setsid sh -c "sudo -n -u slot01 -g $GRP --preserve-env=$LIST -- $SLOTCTL $LAUNCH \
	sh -c 'echo \$\$; exec sleep 300' >$S/bystander 2>&1 </dev/null &"
i=0
while [ ! -s $S/bystander ] && [ $i -lt 30 ]; do sleep 1; i=$((i + 1)); done
bystander=$(cat $S/bystander)
# 60 processes where slot02 may have 16 tasks.  dash gives up at the first fork the kernel
# refuses ("Cannot fork"), so the loop never reaching its end is what tells; the kernel (6.1)
# counts the refusal in pids.events of the session's scope, which is gone by now.  The sleeps
# left are ended before the next case.
run_slot slot02 sh -c 'i=0; while [ $i -lt 60 ]; do sleep 20 & i=$((i + 1)); done; echo "started all 60"' \
	>$T/fork.out 2>&1 </dev/null
if ! grep -q '^started all' $T/fork.out && grep -q 'Cannot fork' $T/fork.out; then
	ok "slot02 could not start 60 processes (TasksMax=16: its fork was refused)"
else
	not_ok "slot02 could not start 60 processes (TasksMax=16)"
	show $T/fork.out
fi
pkill -KILL -u slot02 2>/dev/null
i=0
while [ "$(cat "$(cg_of slot02)/pids.current" 2>/dev/null || echo 0)" != 0 ] && [ $i -lt 20 ]; do sleep 1; i=$((i + 1)); done
# 300 MB held by tail (no newline in it): within the guest's memory, over slot02's MemoryMax.
run_slot slot02 sh -c 'head -c 300M /dev/zero | tail >/dev/null' >$T/oom.out 2>&1 </dev/null
rc=$?
oom=$(sed -n 's/^oom_kill //p' "$(cg_of slot02)/memory.events" 2>/dev/null)
if [ "$rc" != 0 ] && [ "${oom:-0}" -ge 1 ]; then ok "slot02 going over MemoryMax=64M is OOM-killed in its slice (exit $rc, oom_kill $oom)"; else
	not_ok "slot02 going over MemoryMax=64M is OOM-killed in its slice (exit $rc, oom_kill ${oom:-none})"
	show $T/oom.out
fi
if [ -n "$bystander" ] && kill -0 "$bystander" 2>/dev/null; then ok "slot01's process lived through slot02's limits"; else
	not_ok "slot01's process lived through slot02's limits (pid '${bystander}')"
fi
check "slot01 still runs a command" sh -c "$(command -v runuser) -u $SVC -- env -i PATH=/usr/bin:/bin \
	sudo -n -u slot01 -g $GRP --preserve-env=PATH -- $SLOTCTL $LAUNCH true"
[ -n "$bystander" ] && kill "$bystander" 2>/dev/null

echo "=== release of a slot whose process left its uid through a user namespace"
# slot03 has a subordinate id range (as useradd gives a normal account): a process of it can
# run as one of those ids in a user namespace of its own, and no longer carries slot03's uid.
usermod --add-subuids 300000-365535 --add-subgids 300000-365535 slot03
# Through the executor's line that is closed now: newuidmap is set-uid root, and under the
# session's no_new_privs it cannot write a mapping of the subordinate ids.  (Without -g:
# newuidmap maps only for a process whose group is the account's own.)
as_svc sudo -n -u slot03 --preserve-env=$LIST -- $SLOTCTL $LAUNCH \
	unshare --user --map-auto --map-root-user -- true >$T/userns-sudo.out 2>&1 </dev/null
rc=$?
if [ "$rc" != 0 ] && grep -q newuidmap $T/userns-sudo.out; then
	ok "through the executor's line slot03 cannot map its subordinate ids (newuidmap under no_new_privs)"
else
	not_ok "through the executor's line slot03 cannot map its subordinate ids (exit $rc)"
	show $T/userns-sudo.out
fi
# A process of slot03 started outside a slot session (root's systemd-run, no pam_slots, in
# slot03's slice) still can: release must end it all the same.
setsid sh -c "systemd-run --quiet --scope --slice='$(slice_of slot03)' --uid=slot03 -- \
	unshare --user --map-auto --map-root-user -- setpriv --reuid=1000 --regid=1000 --clear-groups \
	sleep 600 >$S/userns.out 2>&1 </dev/null &"
i=0
while ! pgrep -u 300999 -x sleep >/dev/null && [ $i -lt 30 ]; do sleep 1; i=$((i + 1)); done
escaped=$(pgrep -u 300999 -x sleep | head -n 1)
if [ -n "$escaped" ]; then ok "a process of slot03 runs as uid 300999 in a user namespace (pid $escaped)"; else
	not_ok "a process of slot03 runs as uid 300999 in a user namespace"
	show $S/userns.out
fi
# Where it runs before the release: the slice case below counts only if it was in slot03's slice.
cg_before=
[ -n "$escaped" ] && cg_before=$(cat /proc/$escaped/cgroup 2>/dev/null)
runuser -u slot03 -- sh -c 'sleep 600 &' 2>/dev/null
check "release CAROL" slots-admin release $CAROL
check "slot03 is free in the table, no cleanup pending" sh -c \
	"slots-admin status --json slot03 >$T/st.json; cat $T/st.json; grep -q '\"user\": null' $T/st.json && ! grep -q cleanup $T/st.json"
sleep 1
if [ -z "$escaped" ]; then
	not_ok "after release the process that left slot03's uid is gone (it never started)"
elif kill -0 "$escaped" 2>/dev/null; then
	not_ok "after release the process that left slot03's uid is gone (pid $escaped lives: $(cat /proc/$escaped/cgroup))"
	kill -9 "$escaped"
else
	ok "after release the process that left slot03's uid is gone"
fi
check_fails "after release no process of slot03 remains" pgrep -u slot03
if [ -z "$have_slice" ]; then
	not_ok "after release slot03's slice cgroup is empty (no slice: provisioning refused the key)"
elif ! echo "$cg_before" | grep -qF "/$(slice_of slot03)/"; then
	not_ok "after release slot03's slice cgroup is empty (its process was never in it: $cg_before)"
else
	check "after release slot03's slice cgroup is empty" sh -c \
		"! test -e '$(cg_of slot03)/cgroup.procs' || test -z \"\$(cat '$(cg_of slot03)'/*/cgroup.procs '$(cg_of slot03)/cgroup.procs' 2>/dev/null)\""
fi
usermod --del-subuids 300000-365535 --del-subgids 300000-365535 slot03

echo "=== check"
# The guest runs under TCG on a loaded host: each of check's timed stages gets 60 s, not 10.
slots-admin check --timeout 60 >$T/check.out 2>&1 && ok "slots-admin check as root passes" ||
	{ not_ok "slots-admin check as root passes (exit $?)"; grep '^FAIL' $T/check.out | show; }
as_svc /usr/sbin/slots-admin check --timeout 60 >$T/check-svc.out 2>&1 && ok "slots-admin check as the service passes" ||
	{ not_ok "slots-admin check as the service passes (exit $?)"; grep '^FAIL' $T/check-svc.out | show; }

echo "=== the journal"
journalctl --sync 2>/dev/null
journalctl -t slots-admin --no-pager -o cat >$T/journal.out 2>&1
check "journalctl -t slots-admin has the assign of ALICE, by root" grep -Eq "^assigned slot01 to user $ALICE; .*by root \((login )?uid 0\)$" $T/journal.out
check "the release of CAROL" grep -q "^released slot03 from user $CAROL" $T/journal.out
check "and that slot03 ended clean and free, in one line" grep -q "^released slot03 from user $CAROL: clean and free (" $T/journal.out
journalctl -t slots-provision --no-pager -o cat >$T/journal-prov.out 2>&1

echo "=== operations: the journal's audit trail, dry runs, monitoring outputs"
# Who held slot03 when, and who was refused it: journalctl SLOTS_SLOT=slot03 answers.
DAVE=d0d0d0d0e1e1e1e1f2f2f2f2a3a3a3a3
EVE=e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5
slots-admin assign --dry-run --json $DAVE slot03 >$T/dry.json 2>$T/dry.err
check "assign --dry-run --json: version 1, would change slot03" \
	jq -e '.version == 1 and .dry_run and .changed and .slot == "slot03"' $T/dry.json
check "and slot03 is still free" sh -c "slots-admin status --json slot03 | jq -e '.slots[0].user == null'"
check "SUDO_USER=ops assign DAVE slot03" sh -c "SUDO_USER=ops slots-admin assign $DAVE slot03 | grep -qx slot03"
SUDO_USER=ops slots-admin assign $EVE slot03 >/dev/null 2>&1 && not_ok "assign EVE slot03 is refused" ||
	ok "assign EVE slot03 is refused"
check "SUDO_USER=ops release DAVE" sh -c "SUDO_USER=ops slots-admin release $DAVE | grep -qx 'slot03 released'"
journalctl --sync 2>/dev/null
journalctl SLOTS_SLOT=slot03 -o json --no-pager >$T/slot03.json 2>&1
jq -r '[.SLOTS_ACTION, .SLOTS_RESULT, .SLOTS_USER // "-", .SLOTS_ADMIN] | join(" ")' $T/slot03.json >$T/slot03.txt
show $T/slot03.txt
check "the journal: CAROL held slot03 and released it, by root" sh -c \
	"grep -Eqx 'assign done $CAROL root' $T/slot03.txt && grep -Eqx 'release done $CAROL root' $T/slot03.txt"
check "DAVE held it next, assigned and released by ops (via sudo)" sh -c \
	"grep -qx 'assign done $DAVE ops' $T/slot03.txt && grep -qx 'release done $DAVE ops' $T/slot03.txt"
check "EVE's refusal is there, with who asked" grep -qx "assign refused $EVE ops" $T/slot03.txt
check "in time order: CAROL's release, DAVE's assign, EVE's refusal" test \
	"$(grep -E "release done $CAROL|assign done $DAVE|assign refused $EVE" $T/slot03.txt | tr '\n' '|')" = \
	"release done $CAROL root|assign done $DAVE ops|assign refused $EVE ops|"
check "every entry has the service and a MESSAGE_ID" \
	jq -se "all(.[]; .SLOTS_SERVICE == \"$SVC\" and (.MESSAGE_ID | length) == 32)" $T/slot03.json
journalctl -x SLOTS_SLOT=slot03 SLOTS_RESULT=refused --no-pager >$T/explain.out 2>&1
check "journalctl -x explains the refusal from the catalog" grep -q "the slot table was not changed" $T/explain.out
# The syslog line (through /dev/log, without the SLOTS_ fields) is there as well as the entry.
journalctl SYSLOG_FACILITY=10 -o json --no-pager | jq -r 'select(.SLOTS_ACTION == null) | .MESSAGE' >$T/authpriv.txt
check "authpriv has the refusal too, as a syslog line with the admin" \
	grep -q "^refused to assign slot03 to user $EVE: .*; by ops (via sudo)$" $T/authpriv.txt
# Monitoring: nagios and prometheus on the host as it is (it passes when "check as root"
# above passed: a slow guest can fail its timed rows), then with a failing row.
slots-admin check --format=nagios >$T/nagios.out 2>&1
rc=$?
show $T/nagios.out
nfail=$(sed -n 's/.* | passed=[0-9]*;;;0 failed=\([0-9]*\);;;0 skipped=[0-9]*;;;0 warned=[0-9]*;;;0$/\1/p' $T/nagios.out)
check "check --format=nagios: one line; exit 0 SLOTS OK with failed=0, or 2 SLOTS CRITICAL with failed>0" sh -c \
	"test \$(wc -l <$T/nagios.out) = 1 && { { test $rc = 0 && test '$nfail' = 0 && grep -q '^SLOTS OK - ' $T/nagios.out; } ||
	{ test $rc = 2 && test '${nfail:-0}' -gt 0 && grep -q '^SLOTS CRITICAL - ' $T/nagios.out; }; }"
slots-admin check --format=prometheus --output /var/lib/slots-e2e.prom >$T/prom.out 2>&1
pfail=$(sed -n 's/^slots_check_failed //p' /var/lib/slots-e2e.prom)
pok=$([ "${pfail:-1}" = 0 ] && echo 1 || echo 0)
check "--format=prometheus --output: 0644, slots_check_ok 1 exactly when slots_check_failed is 0, the pool's gauges" sh -c \
	"test \$(stat -c %a /var/lib/slots-e2e.prom) = 644 && grep -qx 'slots_check_ok $pok' /var/lib/slots-e2e.prom &&
	grep -q '^slots_pool_free ' /var/lib/slots-e2e.prom && grep -q '^# TYPE slots_check_fail gauge' /var/lib/slots-e2e.prom"
chmod 0664 /etc/slots/slots.json
slots-admin check --format=nagios >$T/nagios-fail.out 2>&1
rc=$?
check "with the table group-writable: exit 2, SLOTS CRITICAL naming the table row" sh -c \
	"test $rc = 2 && grep -q '^SLOTS CRITICAL - .*first table' $T/nagios-fail.out"
slots-admin check --format=prometheus >$T/prom-fail.out 2>&1
check "and prometheus says slots_check_fail{check=\"table\",slot=\"\"} 1" \
	grep -qx 'slots_check_fail{check="table",slot=""} 1' $T/prom-fail.out
chmod 0640 /etc/slots/slots.json
check "every --json has version 1 (status, check)" sh -c \
	"slots-admin status --json | jq -e '.version == 1' && slots-admin check --json | jq -e '.version == 1'"

echo "=== a slot's journal does not reach its next holder"
# Slot uids above journald's system range (999) get, with a persistent journal, a file of their
# own: user-<uid>.journal, with an ACL entry that lets the uid read it.  FRANK's session in slot03
# logs a line; release must take the file away, so that GRACE, the next holder, cannot read it.
FRANK=f4f4f4f4f4f4f4f4a1a1a1a1a1a1a1a1
GRACE=9a9a9a9a9a9a9a9ab2b2b2b2b2b2b2b2
MARK=frank-$(od -An -N8 -tx1 /dev/urandom | tr -d ' \n')
U3=$(id -u slot03)
mkdir -p /var/log/journal
systemd-tmpfiles --create --prefix /var/log/journal >/dev/null 2>&1
journalctl --flush >/dev/null 2>&1
ls /var/log/journal/*/system.journal >/dev/null 2>&1 ||
	{ systemctl restart systemd-journald && journalctl --flush; } >/dev/null 2>&1
check "the journal is persistent: /var/log/journal/*/system.journal" sh -c 'ls /var/log/journal/*/system.journal'
check "assign FRANK -> slot03" sh -c "slots-admin assign $FRANK slot03 | grep -qx slot03"
run_slot slot03 logger -t slots-e2e "$MARK" >$T/frank-log.out 2>&1 </dev/null
journalctl --sync 2>/dev/null
check "journald wrote FRANK's line to user-$U3.journal" sh -c \
	"journalctl --file='/var/log/journal/*/user-$U3.journal' --no-pager -o cat -t slots-e2e | grep -qx $MARK"
run_slot slot03 journalctl --no-pager -o cat >$T/frank.out 2>&1 </dev/null
check "the attack is real: slot03 reads the line with journalctl through the executor's line" grep -qx "$MARK" $T/frank.out
slots-admin release $FRANK >$T/rel-frank.out 2>&1 && ok "release FRANK" || { not_ok "release FRANK (exit $?)"; }
show $T/rel-frank.out
journalctl --sync 2>/dev/null
check "release removed slot03's journal files" sh -c \
	"! ls -d /var/log/journal/*/user-$U3.* /var/log/journal/*/user-$U3@* /run/log/journal/*/user-$U3.* \
	/run/log/journal/*/user-$U3@* 2>/dev/null | grep ."
echo "# root's journalctl after release finds FRANK's line $(journalctl --no-pager -o cat -t slots-e2e | grep -cx "$MARK") time(s)"
check "assign GRACE -> slot03" sh -c "slots-admin assign $GRACE slot03 | grep -qx slot03"
run_slot slot03 logger -t slots-e2e grace-first </dev/null
# journald looks whether the file it writes was deleted only every few seconds (then it opens a
# new one): 11 s later her line must be readable to her.
sleep 11
run_slot slot03 logger -t slots-e2e grace-second </dev/null
journalctl --sync 2>/dev/null
run_slot slot03 journalctl --no-pager -o cat >$T/grace.out 2>&1 </dev/null
grep -c . $T/grace.out | sed 's/^/# GRACE reads this many lines: /'
check "GRACE reads her own line 11 s later: journalctl works for her" grep -qx grace-second $T/grace.out
check "GRACE's journalctl shows nothing of FRANK's" sh -c "! grep -F $MARK $T/grace.out"
echo "# GRACE's first line, logged at once after her assign, $(grep -qx grace-first $T/grace.out && echo is || echo is not) in her journal"
check "release GRACE" slots-admin release $GRACE

echo "=== a released slot leaves nothing of its holder on the host"
# HEIDI's run in slot04 (no other case uses it) uses what a slot can: files in every place it
# may write, a crontab, SysV and POSIX IPC, a key, a journal line, a process holding a file of
# its home open.  After the release, root inventories the host for everything that names
# slot04's uid or gid: only the fresh folders may be left.  The same inventory before the
# release must find each kind, so a broken inventory command cannot pass.
HEIDI=4e4e4e4e4e4e4e4e5f5f5f5f5f5f5f5f
U4=$(id -u slot04) G4=$(id -g slot04)
SR=/var/lib/slots/$SVC
TREE4=/srv/video-studio/docs/_users/$HEIDI
HAVE_PY=$(command -v python3)
# The ACL entries naming U or G under a mount, from the xattrs (the guest has no getfacl):
# each entry of system.posix_acl_access/default is tag (2 user, 8 group), perm, id.
cat >$T/acl.py <<'PY'
import os, stat, struct, sys
uid, gid = int(sys.argv[1]), int(sys.argv[2])
for top in sys.argv[3:]:
    dev, stack = os.lstat(top).st_dev, [top]
    while stack:
        d = stack.pop()
        try:
            entries = list(os.scandir(d))
        except OSError:
            continue
        for p in [d] + [e.path for e in entries]:
            try:
                st = os.lstat(p)
            except OSError:
                continue
            if st.st_dev != dev or stat.S_ISLNK(st.st_mode):
                continue
            if p != d and stat.S_ISDIR(st.st_mode):
                stack.append(p)
                continue
            try:
                names = os.listxattr(p, follow_symlinks=False)
            except OSError:
                continue
            for n in ("system.posix_acl_access", "system.posix_acl_default"):
                if n not in names:
                    continue
                v = os.getxattr(p, n, follow_symlinks=False)
                for i in range(4, len(v) - 7, 8):
                    tag, perm, xid = struct.unpack_from("<HHI", v, i)
                    if (tag == 2 and xid == uid) or (tag == 8 and xid == gid):
                        print("acl: %r %s %s:%d:%o" % (p, n[17:], "user" if tag == 2 else "group", xid, perm))
PY
# inventory U G: one line per thing on the host that names uid U or gid G, "KIND: what".
inventory() {
	iu=$1 ig=$2
	# Local mounts a slot can write: not /proc, /sys, /dev but /dev/shm and /dev/mqueue.
	mounts=$(findmnt -rn -o TARGET,FSTYPE | awk '($2 ~ /^(ext[234]|xfs|btrfs|tmpfs|ramfs|overlay|mqueue)$/ &&
		$1 !~ /^\/(proc|sys|dev)(\/|$)/ || $1 == "/dev/shm" || $1 == "/dev/mqueue") && !seen[$1]++ { print $1 }')
	for im in $mounts; do
		find "$im" -xdev \( -uid "$iu" -o -gid "$ig" \) -printf 'file: %p %U:%G %m %y\n' 2>/dev/null
	done
	[ -n "$HAVE_PY" ] && python3 $T/acl.py "$iu" "$ig" $mounts
	for ik in shm sem msg; do
		awk -v k=$ik -v u="$iu" -v g="$ig" 'NR == 1 { for (i = 1; i <= NF; i++) c[$i] = i; next }
			$c["uid"] == u || $c["cuid"] == u || $c["gid"] == g || $c["cgid"] == g { print "ipc: " k " " $0 }' \
			/proc/sysvipc/$ik
	done
	# /proc/keys shows a key only to who may view it: read it as U.  The user and user-session
	# keyrings, once cleared, stay for the life of the uid (the kernel's); /proc/key-users
	# counts every key of U, so one hidden from U's view shows as a difference.
	setpriv --reuid="$iu" --regid="$ig" --clear-groups cat /proc/keys >$T/keys.$iu 2>&1
	awk -v u="$iu" -v g="$ig" '$6 == u || $7 == g' $T/keys.$iu >$T/keys.mine
	grep -Ev " keyring +_uid(_ses)?\.$iu: empty$" $T/keys.mine | sed 's/^/key: /'
	ikeys=$(awk -v u="$iu" '$1 == u ":" { split($3, a, "/"); print a[1] }' /proc/key-users)
	[ "${ikeys:-0}" -gt "$(grep -c . $T/keys.mine)" ] &&
		echo "key: /proc/key-users counts $ikeys keys of $iu, $(grep -c . $T/keys.mine) visible to it"
	find /sys/fs/cgroup -type d \( -name "user-$iu.slice" -o -name "user@$iu.service" \) -printf 'cgroup: %p\n'
	grep -qx 'populated 1' "$(cg_of slot04)/cgroup.events" 2>/dev/null && echo "cgroup: $(cg_of slot04) is populated"
	ls -d /var/log/journal/*/user-${iu}[.@~]* /run/log/journal/*/user-${iu}[.@~]* \
		/var/lib/systemd/coredump/core.*.$iu.* 2>/dev/null | sed 's/^/journal: /'
	ps -e -o pid=,ruid=,euid=,suid=,fsuid=,rgid=,egid=,sgid=,fsgid=,supgid=,comm= |
		awk -v u="$iu" -v g="$ig" '{ s = "," $10 "," } $2 == u || $3 == u || $4 == u || $5 == u ||
			$6 == g || $7 == g || $8 == g || $9 == g || index(s, "," g ",") { print "proc: " $0 }'
}
check "assign HEIDI -> slot04" sh -c "slots-admin assign $HEIDI slot04 | grep -qx slot04"
# What the holder does, through the executor's line.
run_slot slot04 sh -c "
	for d in $SR/home/slot04 $SR/state/slot04 $SR/run/slot04 /tmp /var/tmp /dev/shm /run/lock $TREE4 \
		/srv/video-studio/docs/assets; do echo heidi >\$d/heidi-file.\$\$ || echo \"cannot write in \$d\"; done
	mkdir -p /tmp/heidi-dir/sub && echo heidi >/tmp/heidi-dir/sub/f
	echo '* * * * * true' | crontab - 2>&1; echo \"crontab exit \$?\"
	ipcmk -Q; ipcmk -M 4096; ipcmk -S 1
	logger -t slots-e2e heidi-was-here
	true" >$T/heidi.out 2>&1 </dev/null
show $T/heidi.out
if [ -n "$HAVE_PY" ]; then
	run_slot slot04 python3 -c '
import ctypes, os
c = ctypes.CDLL(None, use_errno=True)
q = c.mq_open(b"/heidi-mq", os.O_CREAT | os.O_RDWR, 0o600, None)
print("mq_open:", q, os.strerror(ctypes.get_errno()) if q < 0 else "")
c.syscall.restype = ctypes.c_long
k = c.syscall(248, b"user", b"heidi-key", b"v", ctypes.c_size_t(1), ctypes.c_int(-4))
print("add_key @u:", k, os.strerror(ctypes.get_errno()) if k < 0 else "")' >$T/heidi-py.out 2>&1 </dev/null
	show $T/heidi-py.out
else
	echo "# no python3 in the guest: no POSIX queue, no key, no ACL inventory"
fi
# A process of the slot that keeps a file of its home open (release must end it).
as_svc setsid sh -c "sudo -n -u slot04 -g $GRP --preserve-env=$LIST -- $SLOTCTL $LAUNCH \
	sh -c 'echo held >$SR/home/slot04/held; exec 3<$SR/home/slot04/held; echo \$\$; exec sleep 900' \
	>$S/heidi-holder 2>&1 </dev/null &"
i=0
while [ ! -s $S/heidi-holder ] && [ $i -lt 30 ]; do sleep 1; i=$((i + 1)); done
holder4=$(cat $S/heidi-holder)
check "slot04's holder process keeps its home's file open (pid $holder4)" sh -c \
	"ls -l /proc/$holder4/fd/3 | grep -q '$SR/home/slot04/held'"
# HEIDI's code passes a descriptor of a file in her home, and one of the home itself, to a
# process of slot02 (BOB's) over an abstract socket, which needs no path: release must end it.
recv=
if [ -n "$HAVE_PY" ]; then
	cat >$T/recv.py <<'PY'
import os, socket, time
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
s.bind("\0heidi-pass")
s.listen(1)
print(os.getpid(), flush=True)
c, _ = s.accept()
msg, fds, _, _ = socket.recv_fds(c, 16, 4)
print("received", len(fds), flush=True)
time.sleep(900)
PY
	cat >$T/send.py <<'PY'
import os, socket, sys
h = sys.argv[1]
f = os.open(h + "/passed", os.O_RDWR | os.O_CREAT, 0o600)
d = os.open(h, os.O_RDONLY | os.O_DIRECTORY)
c = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
c.connect("\0heidi-pass")
socket.send_fds(c, [b"x"], [f, d])
print("passed 2 descriptors")
PY
	chmod 0644 $T/recv.py $T/send.py
	as_svc setsid sh -c "sudo -n -u slot02 -g $GRP --preserve-env=$LIST -- $SLOTCTL $LAUNCH \
		python3 $T/recv.py >$S/heidi-recv 2>&1 </dev/null &"
	i=0
	while [ ! -s $S/heidi-recv ] && [ $i -lt 30 ]; do sleep 1; i=$((i + 1)); done
	recv=$(sed -n 1p $S/heidi-recv)
	run_slot slot04 python3 $T/send.py $SR/home/slot04 >$T/send.out 2>&1 </dev/null
	show $T/send.out
	i=0
	while ! grep -q '^received 2$' $S/heidi-recv && [ $i -lt 30 ]; do sleep 1; i=$((i + 1)); done
	check "slot02's process (pid $recv) holds slot04's home and a file in it, passed over a socket" sh -c \
		"ls -l /proc/$recv/fd | grep -q '$SR/home/slot04/passed\$' && ls -l /proc/$recv/fd | grep -q '$SR/home/slot04\$'"
fi
journalctl --sync 2>/dev/null
inventory "$U4" "$G4" >$T/inv-before 2>&1
echo "# before the release the inventory has $(grep -c . $T/inv-before) lines"
cat -v $T/inv-before | sed 's/^/#   /'
for kind in file acl ipc key cgroup journal proc; do
	if [ -z "$HAVE_PY" ] && { [ $kind = acl ] || [ $kind = key ]; }; then
		echo "# the $kind inventory is not tested: no python3 in the guest"
		continue
	fi
	if grep -q "^$kind: " $T/inv-before; then ok "before the release the $kind inventory finds slot04's ($(grep -c "^$kind: " $T/inv-before))"; else
		not_ok "before the release the $kind inventory finds slot04's"
		cat -v $T/inv-before | show
	fi
done
[ -n "$HAVE_PY" ] &&
	check "the file inventory sees HEIDI's POSIX queue in /dev/mqueue" grep -q '^file: /dev/mqueue/heidi-mq ' $T/inv-before
slots-admin release $HEIDI >$T/rel-heidi.out 2>&1 && ok "release HEIDI" || { not_ok "release HEIDI (exit $?)"; }
show $T/rel-heidi.out
journalctl --sync 2>/dev/null
sleep 2
inventory "$U4" "$G4" >$T/inv-after 2>&1
echo "# after the release the inventory has $(grep -c . $T/inv-after) lines"
cat -v $T/inv-after | sed 's/^/#   /'
# Ended: gone, or a zombie (it holds no descriptor).  Release stops it before the kill, and sudo
# without a pty stops itself when its command stops, so the parent may not reap it: say so.
if [ -n "$recv" ]; then
	st=$(sed -n 's/^State:[[:space:]]*//p' /proc/$recv/status 2>/dev/null)
	parent=$(ps -o ppid= -p "$recv" 2>/dev/null | tr -d ' ')
	case $st in
	'' | Z*) ok "release ended slot02's process that held slot04's passed descriptors (${st:-gone})" ;;
	*) not_ok "release ended slot02's process that held slot04's passed descriptors (pid $recv: $st)"
		kill -9 "$recv" ;;
	esac
	if [ -n "$parent" ] && [ "$parent" != 1 ]; then
		echo "# its parent, pid $parent ($(ps -o comm= -p "$parent")), is in state $(ps -o stat= -p "$parent")"
		kill -CONT "$parent" 2>/dev/null
	fi
fi
# Allowed: the three fresh folders, exactly slot04:slot04 0700; the mailbox as release makes it.
mailgid=$(getent group mail | cut -d: -f3)
{
	for d in home state run; do echo "file: $SR/$d/slot04 $U4:$G4 700 d"; done
	echo "file: /var/mail/slot04 $U4:$mailgid 660 f"
} >$T/inv-allowed
grep -vxF -f $T/inv-allowed $T/inv-after >$T/inv-left
check "after the release the three fresh folders are there, slot04:slot04 0700" sh -c \
	"test \$(grep -c '^file: $SR/[a-z]*/slot04 ' $T/inv-after) = 3 && test \$(grep -cxF -f $T/inv-allowed $T/inv-after) -ge 3"
if [ -s $T/inv-left ]; then
	not_ok "after the release nothing else on the host names slot04's uid $U4 or gid $G4 ($(grep -c . $T/inv-left) left)"
	cat -v $T/inv-left | sed 's/^/#   /'
else
	ok "after the release nothing else on the host names slot04's uid $U4 or gid $G4 (files, ACLs, IPC, keys, cgroups, journal, processes)"
fi

echo "=== the check's timer writes node_exporter's textfile"
PROM=/var/lib/prometheus/node-exporter/slots.prom
check "the package enabled and started slots-check.timer" sh -c \
	"systemctl is-enabled -q slots-check.timer && systemctl is-active -q slots-check.timer"
# Without node_exporter's folder the run is skipped by its condition, not failed.
systemctl start slots-check.service >$T/unit.out 2>&1
check "without /var/lib/prometheus/node-exporter the service's run is skipped, not failed" sh -c \
	"! systemctl is-failed -q slots-check.service && test ! -e $PROM"
mkdir -p /var/lib/prometheus/node-exporter
# The timer fires the service: a runtime drop-in makes it fire 5 s after it starts again.
mkdir -p /run/systemd/system/slots-check.timer.d
printf '[Timer]\nOnActiveSec=5s\n' >/run/systemd/system/slots-check.timer.d/soon.conf
systemctl daemon-reload && systemctl restart slots-check.timer
i=0
while [ ! -s $PROM ] && [ $i -lt 300 ]; do sleep 2; i=$((i + 2)); done
check "the timer ran the check: $PROM is there, 0644" sh -c \
	"test -s $PROM && test \$(stat -c %a $PROM) = 644 && grep -q '^slots_check_ok [01]$' $PROM"
i=0
while systemctl is-active -q slots-check.service && [ $i -lt 300 ]; do sleep 2; i=$((i + 2)); done
check "and the service did not fail" sh -c "! systemctl is-failed -q slots-check.service"
rm -rf /run/systemd/system/slots-check.timer.d && systemctl daemon-reload
# A broken table: check exits 1 after writing the file; the unit counts that as done.
chmod 0664 /etc/slots/slots.json
systemctl start slots-check.service >$T/unit-red.out 2>&1
check "with the table group-writable the file turns red: slots_check_ok 0, the table row" sh -c \
	"grep -qx 'slots_check_ok 0' $PROM && grep -qx 'slots_check_fail{check=\"table\",slot=\"\"} 1' $PROM"
check "and the unit is not failed (check's exit 1 is SuccessExitStatus)" sh -c \
	"! systemctl is-failed -q slots-check.service && systemctl show -p ExecMainStatus --value slots-check.service | grep -qx 1"
chmod 0640 /etc/slots/slots.json

echo "=== no new privileges in a slot session"
# pam_slots sets PR_SET_NO_NEW_PRIVS in every program that opens a slot session; the command
# inherits it.  nnp_is DESC FILE: FILE holds the line "NoNewPrivs: 1".
nnp_is() {
	if tr -s '\t ' ' ' <"$2" | grep -qx 'NoNewPrivs: 1'; then ok "$1"; else not_ok "$1 (got: $(cat "$2"))"; fi
}
run_slot slot01 grep '^NoNewPrivs:' /proc/self/status >$T/nnp-sudo.out 2>&1 </dev/null
nnp_is "the executor's sudo line: slot01's command has NoNewPrivs: 1" $T/nnp-sudo.out
grep -q '^PASS  *sudo-env  *slot[0-9][0-9]* .*the command has no_new_privs' $T/check.out &&
	ok "check's sudo-env row (as the test slot) saw it through the executor's line" ||
	{ not_ok "check's sudo-env row (as the test slot) saw it through the executor's line"; grep sudo-env $T/check.out | show; }
su -s /bin/sh -c "grep '^NoNewPrivs:' /proc/self/status" slot01 >$T/nnp-su.out 2>&1 </dev/null
nnp_is "su: slot01's shell has NoNewPrivs: 1" $T/nnp-su.out
su -s /bin/sh -c "grep '^NoNewPrivs:' /proc/self/status" $SVC >$T/nnp-svc.out 2>&1 </dev/null
tr -s '\t ' ' ' <$T/nnp-svc.out | grep -qx 'NoNewPrivs: 0' && ok "su to the service (no slot): NoNewPrivs: 0" ||
	not_ok "su to the service (no slot): NoNewPrivs: 0 (got: $(cat $T/nnp-svc.out))"
# cron and atd open the session in the child that runs the job; slot01's home takes the output.
home1=/var/lib/slots/$SVC/home/slot01
rm -f $home1/nnp-cron $home1/nnp-at
if command -v crontab >/dev/null && systemctl is-active -q cron; then
	echo "* * * * * grep '^NoNewPrivs:' /proc/self/status >$home1/nnp-cron 2>&1" | crontab -u slot01 -
	i=0
	while [ ! -s $home1/nnp-cron ] && [ $i -lt 90 ]; do sleep 1; i=$((i + 1)); done
	crontab -r -u slot01
	nnp_is "cron: slot01's job has NoNewPrivs: 1" $home1/nnp-cron
else
	not_ok "cron: slot01's job has NoNewPrivs: 1 (cron is not installed or not running in the guest)"
fi
if command -v at >/dev/null && systemctl is-active -q atd; then
	# Submitted through runuser (no pam_slots in its stack: at is set-gid daemon); atd runs it.
	echo "grep '^NoNewPrivs:' /proc/self/status >$home1/nnp-at 2>&1" | runuser -u slot01 -- at now 2>/dev/null
	i=0
	while [ ! -s $home1/nnp-at ] && [ $i -lt 60 ]; do sleep 1; i=$((i + 1)); done
	nnp_is "at: slot01's job has NoNewPrivs: 1" $home1/nnp-at
else
	not_ok "at: slot01's job has NoNewPrivs: 1 (at is not installed or atd not running in the guest)"
fi
# The attack: slot02 leaves a set-uid and set-gid copy of id where slot01 can run it.
rm -f /tmp/suid-id
runuser -u slot02 -- sh -c 'cp /usr/bin/id /tmp/suid-id && chmod 6755 /tmp/suid-id'
got=$(runuser -u slot01 -- /tmp/suid-id -u -n 2>&1)
[ "$got" = slot02 ] && ok "control: outside a slot session the set-uid file gives slot01 slot02's euid" ||
	not_ok "control: outside a slot session the set-uid file gives slot01 slot02's euid (got: $got)"
got=$(run_slot slot01 /tmp/suid-id -u -n 2>&1 </dev/null):$(run_slot slot01 /tmp/suid-id -g -n 2>&1 </dev/null)
[ "$got" = "slot01:$GRP" ] && ok "the executor's line: slot02's set-id file keeps slot01's euid and egid ($got)" ||
	not_ok "the executor's line: slot02's set-id file keeps slot01's euid and egid (got: $got)"
got=$(su -s /bin/sh -c "/tmp/suid-id -u -n" slot01 2>&1 </dev/null)
[ "$got" = slot01 ] && ok "su: slot02's set-uid file keeps slot01's euid" ||
	not_ok "su: slot02's set-uid file keeps slot01's euid (got: $got)"
rm -f /tmp/suid-id

echo "=== removal refused while slots are held; an upgrade keeps everything"
dpkg -r slots libpam-slots >$T/remove-held.out 2>&1
check "dpkg -r with slots assigned is refused: both still installed" sh -c \
	"dpkg-query -W -f='\${Status}\n' slots libpam-slots | grep -c ' ok installed$' | grep -qx 2"
check "the refusal names ALICE and the command that releases her" \
	grep -q "slot01 is assigned to $ALICE: slots-admin release $ALICE" $T/remove-held.out
check "and the override" grep -q 'SLOTS_REMOVE_ASSIGNED=1' $T/remove-held.out
check "the drop-in and the PAM lines are still there" sh -c \
	"test -f /etc/sudoers.d/slots-$SVC && grep -q pam_slots /etc/pam.d/common-session-noninteractive"
# A running session through the executor's line, in slot01's slice.
as_svc setsid sh -c "sudo -n -u slot01 -g $GRP --preserve-env=$LIST -- $SLOTCTL $LAUNCH \
	sh -c 'echo \$\$; exec sleep 900' >$S/session 2>&1 </dev/null &"
i=0
while [ ! -s $S/session ] && [ $i -lt 30 ]; do sleep 1; i=$((i + 1)); done
session=$(cat $S/session)
sha256sum /etc/slots/slots.conf /etc/slots/slots.json >$T/kept.sha
if [ -f "$IN/debs/next/slots.deb" ]; then
	before=$(dpkg-query -W -f='${Version}' slots)
	# apt from the local files (the guest has no network): what apt upgrade does with a repository.
	check "upgrade to the next commit's build with apt" \
		apt-get install -y "$IN/debs/next/slots.deb" "$IN/debs/next/libpam-slots.deb"
	after=$(dpkg-query -W -f='${Version}' slots)
	check "the next commit's version is installed ($before -> $after)" dpkg --compare-versions "$after" gt "$before"
	check "the config and the table are kept byte for byte" sha256sum -c $T/kept.sha
	check "the drop-in and the PAM lines are kept" sh -c \
		"test -f /etc/sudoers.d/slots-$SVC && grep -q pam_slots /etc/pam.d/common-session-noninteractive"
	if [ -n "$session" ] && kill -0 "$session" 2>/dev/null; then ok "the running session survived the upgrade"; else
		not_ok "the running session survived the upgrade (pid '$session')"
	fi
	slots-admin check --timeout 60 >$T/check-up.out 2>&1 && ok "slots-admin check passes after the upgrade" ||
		{ not_ok "slots-admin check passes after the upgrade (exit $?)"; grep '^FAIL' $T/check-up.out | show; }
	check "ALICE still holds slot01" sh -c "slots-admin status --json slot01 | grep -q '\"user\": \"$ALICE\"'"
else
	not_ok "upgrade: no next build in $IN/debs/next (tests/package/package.sh makes it)"
fi

echo "=== remove with the override, then purge stops the slices"
if SLOTS_REMOVE_ASSIGNED=1 dpkg -r slots libpam-slots >$T/remove.out 2>&1; then
	ok "SLOTS_REMOVE_ASSIGNED=1 dpkg -r slots libpam-slots"
else
	not_ok "SLOTS_REMOVE_ASSIGNED=1 dpkg -r slots libpam-slots"
	show $T/remove.out
fi
check "remove took out the drop-in" test ! -e /etc/sudoers.d/slots-$SVC
check "and the PAM lines" sh -c '! grep -rq pam_slots /etc/pam.d'
check_fails "after remove the service can no longer run sudo -n -u slot01 true" as_svc sudo -n -u slot01 true
check "the pool's slice is still active before the purge" systemctl is-active -q "$POOL"

echo "=== purge"
check "dpkg --purge slots libpam-slots" dpkg --purge slots libpam-slots
check_fails "the purge stopped the pool's slice" systemctl is-active -q "$POOL"
if [ -n "${session:-}" ] && kill -0 "$session" 2>/dev/null; then
	not_ok "the purge ended the session running in slot01's slice (pid $session lives)"
	kill -9 "$session"
else
	ok "the purge ended the session running in slot01's slice"
fi
check "no sudoers drop-in is left" sh -c '! ls /etc/sudoers.d | grep -q slots'
check "no slice unit is left in /etc/systemd/system" sh -c '! ls /etc/systemd/system | grep -q "^slots-.*\.slice$"'
check "systemd has no unit file left for the slot's slice" sh -c \
	"systemctl show -p FragmentPath --value '$(slice_of slot01)' | tee /dev/stderr | grep -qx ''"
check "no PAM line names pam_slots" sh -c '! grep -rq pam_slots /etc/pam.d'
check_fails "the service can no longer run sudo -n -u slot01 true" as_svc sudo -n -u slot01 true
check "the accounts, the table and the homes stay" sh -c 'id slot01 && test -f /etc/slots/slots.json'
check "sudo still works for root" sudo -n true

echo "# $passed passed, $failed failed"
[ "$failed" = 0 ]
