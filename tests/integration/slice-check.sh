#!/bin/sh
# slots-admin check's slice row (check-slice.c) where systemd is not PID 1, as in these
# namespaces: without "slice" there is no such row; with it, one SKIP row per slot that says
# why, the check still exits 0 and changes nothing.  The rows on a booted host (the unit file
# against its rendering, the live limits, a free slot's empty slice) run in tests/guest.
. "$top_srcdir/tests/integration/lib.sh"
slots_need_root
slots_enter_namespace "$@"
. "$top_srcdir/tests/integration/check-lib.sh"

check_fixture_good
check "without slice there is no slice row" sh -c "! grep -q '^[A-Z]* slice ' '$OUT/base.out'"

case_row slice-no-systemd 0 SKIP slice slot01 "systemd is not PID 1: there are no slices here" \
	"edit_config 'c[\"slice\"] = {\"pool\": {\"MemoryMax\": \"4G\"}, \"default\": {\"TasksMax\": 64}}'" restore_config

edit_config 'c["slice"] = {"default": {"CPUQuota": "150%"}, "slot03": {"MemoryMax": "1G"}}'
run_check slice-rows
check_rc "with slice: check exits 0" 0 slice-rows
for s in slot01 slot03 slot05; do
	check "with slice: $s has a SKIP slice row" row_says slice-rows SKIP slice "$s" "systemd is not PID 1"
done
check "with slice: no slice row passes or fails" sh -c "! grep -E -q '^(PASS|FAIL) slice ' '$OUT/slice-rows.out'"
restore_config

slots_done
