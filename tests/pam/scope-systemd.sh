#!/bin/sh
# pam_slots places a slot's session in its slice through systemd's manager, and refuses the
# session (PAM_PERM_DENIED) whenever it cannot: each row is what the host holds (the slice unit
# file, /etc/systemd/system) and how the manager answers StartTransientUnit, and the result the
# real module gives through the pam-open driver.  The manager is tests/pam/fake-systemd on
# /run/systemd/private of a private mount namespace, with /run/systemd/system present so the
# module believes systemd is PID 1; the booted guest (tests/guest) keeps the real systemd.
# Runs as root (the module talks to the private socket only as root).
. "$top_srcdir/tests/integration/lib.sh"
slots_need_root
slots_enter_namespace "$@"
MOD=$top_builddir/pam/.libs/pam_slots.so
DRV=$top_builddir/tests/integration/pam-open
FAKE=$top_builddir/tests/pam/fake-systemd
for f in "$MOD" "$DRV" "$FAKE"; do
	[ -e "$f" ] || { echo "Bail out! $f is not built"; exit 99; }
done
# The module falls back to the system bus: none here, and none named from outside.
unset DBUS_SYSTEM_BUS_ADDRESS
mkdir -p /run/systemd/system

C=$SLOTS_SCRATCH/c
ERR=$SLOTS_SCRATCH/driver.err
CALLS=$SLOTS_SCRATCH/calls
UNITS=/etc/systemd/system
UNIT=$UNITS/slots-svc-slot01.slice
mkdir -p "$C/pam.d" "$UNITS"
chmod 0755 "$C"
printf 'session required pam_permit.so\n' >"$C/pam.d/slots-open"
printf '{\n  "service": "svc",\n  "slots": 4,\n  "slice": {"default": {"TasksMax": 64}}\n}\n' >"$C/slots.conf"
printf '{\n  "service": "svc",\n  "slots": 4\n}\n' >"$C/no-slice.conf"
chmod 0644 "$C/slots.conf" "$C/no-slice.conf"

fake_pid=
stop_fake() {
	if [ -n "$fake_pid" ]; then
		kill "$fake_pid" 2>/dev/null
		wait "$fake_pid" 2>/dev/null
	fi
	fake_pid=
	rm -f /run/systemd/private
}
# start_fake CASE: the manager answering as CASE says, once its socket is there.
start_fake() {
	"$FAKE" /run/systemd/private "$1" "$CALLS" &
	fake_pid=$!
	i=0
	while [ ! -S /run/systemd/private ] && [ $i -lt 100 ]; do
		sleep 0.05
		i=$((i + 1))
	done
	[ -S /run/systemd/private ] || not_ok "fake-systemd $1: no socket after 5 s"
}
# unit STATE: the slot's slice unit file as provisioning wrote it, missing, masked, or foreign.
unit() {
	rm -f "$UNIT"
	case $1 in
	file) printf '[Slice]\nTasksMax=64\n' >"$UNIT" ;;
	masked) ln -s /dev/null "$UNIT" ;;
	foreign) printf '[Slice]\n' >"$UNIT" && chown 4321:0 "$UNIT" ;;
	missing) ;;
	esac
}

# The table: description | the unit file | the manager's case (none: nothing listens) | config |
# the result | what syslog must say.
cases() {
	cat <<'EOF'
placed in its slice|file|done|slots.conf|PAM_SUCCESS|
the job ends before the reply is read|file|early-done|slots.conf|PAM_SUCCESS|
no slice key: systemd is not asked|missing|none|no-slice.conf|PAM_SUCCESS|
no slice unit: refused, never an unbounded slice|missing|done|slots.conf|PAM_PERM_DENIED|slice unit is not in /etc/systemd/system.*fix: run slots-provision
a masked slice (a symlink to /dev/null)|masked|done|slots.conf|PAM_PERM_DENIED|not a root-owned file (a masked unit?)
a slice unit owned by uid 4321|foreign|done|slots.conf|PAM_PERM_DENIED|not a root-owned file
no bus at all|file|none|slots.conf|PAM_PERM_DENIED|cannot connect to systemd's manager
StartTransientUnit answered with AccessDenied|file|refused|slots.conf|PAM_PERM_DENIED|systemd refused StartTransientUnit: the fake manager says no
StartTransientUnit answered with UnitExists|file|unit-exists|slots.conf|PAM_PERM_DENIED|systemd refused StartTransientUnit
the reply holds no job|file|no-job|slots.conf|PAM_PERM_DENIED|reply to StartTransientUnit holds no job
the job ends "failed"|file|failed|slots.conf|PAM_PERM_DENIED|job for it ended "failed", not "done"
the job ends "timeout"|file|timeout|slots.conf|PAM_PERM_DENIED|job for it ended "timeout", not "done"
the job ends "dependency"|file|dependency|slots.conf|PAM_PERM_DENIED|ended "dependency", not "done"
the manager hangs up while the job runs|file|hangup|slots.conf|PAM_PERM_DENIED|lost systemd while its job ran
the job never ends (the module waits 10 s)|file|silent|slots.conf|PAM_PERM_DENIED|did not end within 10 s
EOF
}

cases >"$SLOTS_SCRATCH/cases"
while IFS='|' read -r row state answer conf want says; do
	unit "$state"
	: >"$CALLS"
	[ "$answer" = none ] || start_fake "$answer"
	got=$(timeout 30 "$DRV" "$MOD" "$C/pam.d" slot01 "config=$C/$conf" 2>"$ERR")
	st=$?
	stop_fake
	sed 's/^/#   /' "$ERR"
	check "$row: $want" test "$got" = "$want"
	[ -n "$got" ] || not_ok "$row: the driver printed nothing (exit $st)"
	if [ -n "$says" ]; then
		check "$row: syslog says why and refuses" sh -c 'grep "$1" "$2" | grep -q "session refused"' _ "$says" "$ERR"
	fi
	# When the manager was asked, it was asked for a scope of this process in the slot's slice.
	if [ "$want" = PAM_SUCCESS ] && [ "$answer" != none ]; then
		check "$row: one StartTransientUnit of a scope in slots-svc-slot01.slice" \
			grep -Eq '^StartTransientUnit slots-svc-slot01-[0-9]+\.scope fail slice=slots-svc-slot01\.slice pid=[1-9]' "$CALLS"
		pid=$(sed -n 's/^StartTransientUnit slots-svc-slot01-\([0-9]*\)\.scope .* pid=\([0-9]*\)$/\1 \2/p' "$CALLS")
		check "$row: the scope is named after the pid it holds ($pid)" test "${pid% *}" = "${pid#* }"
	fi
	case $state:$answer in
	missing:done | masked:done | foreign:done)
		check "$row: systemd is never asked" test ! -s "$CALLS" ;;
	esac
done <"$SLOTS_SCRATCH/cases"

# /etc/systemd/system is not a folder the module can open (a symlink: never followed).
unit file
mv "$UNITS" "$UNITS.real"
ln -s "$UNITS.real" "$UNITS"
start_fake done
got=$(timeout 30 "$DRV" "$MOD" "$C/pam.d" slot01 "config=$C/slots.conf" 2>"$ERR")
stop_fake
sed 's/^/#   /' "$ERR"
check "/etc/systemd/system a symlink: PAM_PERM_DENIED" test "$got" = PAM_PERM_DENIED
check "/etc/systemd/system a symlink: syslog says so" grep -q "cannot open /etc/systemd/system: .*session refused" "$ERR"
rm "$UNITS"
mv "$UNITS.real" "$UNITS"

# systemd not PID 1 (no /run/systemd/system): the session stays where it is, nobody asked.
rmdir /run/systemd/system
: >"$CALLS"
start_fake failed
got=$(timeout 30 "$DRV" "$MOD" "$C/pam.d" slot01 "config=$C/slots.conf" 2>"$ERR")
stop_fake
check "systemd not PID 1: PAM_SUCCESS" test "$got" = PAM_SUCCESS
check "systemd not PID 1: the manager is not asked" test ! -s "$CALLS"
slots_done
