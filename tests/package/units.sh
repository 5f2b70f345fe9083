#!/bin/sh
# The check's service and timer as shipped (data/slots-check.service made by make from its .in,
# data/slots-check.timer), read by systemd's own unit parser: `systemd-analyze verify` of both
# says nothing, the service runs check into node_exporter's textfile folder and counts exit 1
# (a written file with a failed row) as success; a service whose ExecStart is not there is
# reported (so the verify can fail).  Skips where systemd-analyze is not installed.
. "$top_srcdir/tests/integration/lib.sh"
command -v systemd-analyze >/dev/null 2>&1 || { echo "SKIP: systemd-analyze is not installed (apt-get install systemd)"; exit 77; }
slots_tmpdir
svc="$top_builddir/data/slots-check.service"
check "make built the service from its .in" test -f "$svc"
check "its ExecStart is check --format=prometheus into node_exporter's folder" \
	grep -Eq '^ExecStart=/.*/slots-admin check --format=prometheus --output /var/lib/prometheus/node-exporter/slots\.prom$' "$svc"
check "it counts check's exit 1 (the file is written) as success, not 2" grep -qx 'SuccessExitStatus=1' "$svc"
check "it waits for the config" grep -qx 'ConditionPathExists=/etc/slots/slots.conf' "$svc"
check "the timer is wanted by timers.target" grep -qx 'WantedBy=timers.target' "$top_srcdir/data/slots-check.timer"
# The command as built (the build's slots-admin) where the installed one would be.
sed "s|^ExecStart=[^ ]*|ExecStart=$top_builddir/slots-admin|" "$svc" >"$slots_tmp/slots-check.service"
cp "$top_srcdir/data/slots-check.timer" "$slots_tmp/slots-check.timer"
out=$(cd "$slots_tmp" && timeout 60 systemd-analyze verify --man=no ./slots-check.service ./slots-check.timer 2>&1)
check "systemd reads the service and the timer without a warning${out:+: $out}" test -z "$out"
sed "s|^ExecStart=[^ ]*|ExecStart=$slots_tmp/nowhere/slots-admin|" "$svc" >"$slots_tmp/slots-check.service"
out=$(cd "$slots_tmp" && timeout 60 systemd-analyze verify --man=no ./slots-check.service 2>&1)
check "a service whose command is not there is reported" sh -c "printf '%s\n' \"\$1\" | grep -q 'nowhere/slots-admin'" _ "$out"
slots_done
