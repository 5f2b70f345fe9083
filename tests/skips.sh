#!/bin/sh
# Lists what a "make check" run did not run, with the reason, from the logs in a build folder:
# every test that skipped (exit 77) with its "SKIP: ..." line, and every part of a test that
# said it was not run ("# ... skipped", "# ... not run", a unit test's "skipped: ..." or a
# PAM case's "skip: ...").
# Usage: tests/skips.sh BUILDDIR
# Exit 0 always: it reports; the test results decide.
set -u
build=${1:?usage: tests/skips.sh BUILDDIR}
n=0
parts=0
part_re='^# .*(skipped|not run|SKIP)|^ *skip(ped)?: |^\[  SKIPPED \]|^[0-9]+ passed, [0-9]+ failed, [1-9][0-9]* skipped' 
for trs in $(find "$build" -name '*.trs' | LC_ALL=C sort); do
	log=${trs%.trs}.log
	name=${trs#"$build"/}
	name=${name%.trs}
	if grep -q '^:test-result: SKIP' "$trs"; then
		reason=$(grep -m 1 -E '^(SKIP|# SKIP|1\.\.0 # SKIP)' "$log" 2>/dev/null | sed 's/^[#1. 0]*SKIP:* *//')
		[ -n "$reason" ] || reason="(no reason printed: last line: $(tail -n 1 "$log" 2>/dev/null))"
		echo "SKIP $name: $reason"
		n=$((n + 1))
	fi
	# Parts a test left out, as it said in its log (a comment line that says so).
	if [ -f "$log" ]; then
		grep -E "$part_re" "$log" | grep -v -E '(^|[^0-9])0 skipped' | sed -e "s|^# *||" -e "s|^|  part of $name not run: |"
		parts=$((parts + $(grep -E "$part_re" "$log" | grep -c -v -E '(^|[^0-9])0 skipped')))
	fi
done
echo "skipped: $n tests, $parts parts of tests (reasons above)"
