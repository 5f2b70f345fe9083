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

# slots-provision on this host, where systemd is not PID 1: the slice is checked, nothing is
# written, and one warning says so.
"$SLOTS_PROVISION" --config "$CONF" >"$OUT/prov-slice.out" 2>"$OUT/prov-slice.err"
echo $? >"$OUT/prov-slice.rc"
check_rc "provision with slice, no systemd: exits 0" 0 prov-slice
check "provision with slice, no systemd: one warning says no units were written" \
	test "$(grep -c 'systemd is not PID 1 here: no slice units written' "$OUT/prov-slice.err")" = 1
check "provision with slice, no systemd: no slice unit in /etc/systemd/system" \
	sh -c "! ls /etc/systemd/system/slots-* 2>/dev/null | grep -q ."
edit_config 'c["slice"] = {"default": {"CPUQuota": "1.5%"}}'
"$SLOTS_PROVISION" --config "$CONF" >"$OUT/prov-bad.out" 2>"$OUT/prov-bad.err"
echo $? >"$OUT/prov-bad.rc"
check_rc "provision with a bad slice value: exits 2" 2 prov-bad
check "provision with a bad slice value: the error names the key, line and column" \
	grep -E -q "$CONF:[0-9]+:[0-9]+: property \"CPUQuota\": must be a percentage" "$OUT/prov-bad.err"
restore_config

slots_done
