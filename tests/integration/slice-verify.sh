#!/bin/sh
# The slice units slots-provision writes, read by systemd's own unit parser: every unit of the
# golden case slice-units (each property the slice key takes) passes `systemd-analyze verify`
# without a word, and a unit with values the config refuses does not (so the check can fail).
# Skips where systemd-analyze is not installed.
. "$top_srcdir/tests/integration/lib.sh"
command -v systemd-analyze >/dev/null 2>&1 || { echo "SKIP: systemd-analyze is not installed (apt-get install systemd)"; exit 77; }
slots_tmpdir
units="$top_srcdir/tests/provision/golden/slice-units/expected-files/etc/systemd/system"
for f in "$units"/slots-*.slice; do
	name=$(basename "$f")
	# the admin's own unit of that case is not provisioning's
	case $name in *-extra.slice) continue ;; esac
	cp "$f" "$slots_tmp/$name"
	out=$(cd "$slots_tmp" && timeout 60 systemd-analyze verify --man=no "./$name" 2>&1)
	check "systemd reads $name without a warning${out:+: $out}" test -z "$out"
done
printf '[Slice]\nMemoryMax=2GB\nTasksMax=0\n' >"$slots_tmp/slots-bad.slice"
out=$(cd "$slots_tmp" && timeout 60 systemd-analyze verify --man=no ./slots-bad.slice 2>&1)
check "systemd warns about values the config refuses (2GB, TasksMax 0)" sh -c "echo '$out' | grep -q 'Invalid memory limit' && echo '$out' | grep -q 'out of range'"
slots_done
