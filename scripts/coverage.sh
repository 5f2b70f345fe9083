#!/bin/sh
# make coverage: runs "make check" in a build configured with --enable-coverage and prints
# per-file line and branch coverage of src/ and pam/ (gcovr).  Run it as root, or the root
# tests skip and their code counts as never run.  Usage (from make): coverage.sh SRCDIR BUILDDIR
# Only some tests: SLOTS_COVERAGE_TESTS="tests/unit/core/test-ids tests/unit/core/test-table".
# Targets (issue 19): lines >= 90% and branches >= 80% over src/ and pam/, no file under 80% lines.
set -u
src=$(cd "$1" && pwd -P)
build=$(cd "$2" && pwd -P)
gcovr=${GCOVR:-gcovr}
cd "$build" || exit 1

# The programs and test helpers first, so every object's notes file (.gcno) exists.
make check TESTS= >/dev/null || exit 1

# Fresh counters.  A forked child that dropped to a slot (a probe, the kill helper) writes
# its counters as that slot: every data file exists before the run, empty (libgcov takes an
# empty file for a new one) and writable by all, in folders every account can traverse.
# SLOTS_COVERAGE_KEEP=1 keeps the counters of earlier runs and adds this one's (e.g. a few
# new tests on top of a whole run).
[ "${SLOTS_COVERAGE_KEEP:-0}" = 1 ] || find . -name '*.gcda' -exec rm -f {} +
find . -name '*.gcno' | while read -r notes; do
	data=${notes%.gcno}.gcda
	[ -e "$data" ] || : >"$data"
	chmod 0666 "$data" && chmod a+rx "$(dirname "$notes")"
done
chmod a+rx .

rc=0
if [ -n "${SLOTS_COVERAGE_TESTS:-}" ]; then
	make -k check TESTS="$SLOTS_COVERAGE_TESTS" || rc=$?
else
	make -k check || rc=$?
fi

report() {
	"$gcovr" --root "$src" --object-directory "$build" --filter "$src/src/" --filter "$src/pam/" \
		--exclude-unreachable-branches "$@" "$build"
}
echo
echo "=== line coverage of src/ and pam/ (gcovr)"
report --print-summary || rc=1
echo
echo "=== branch coverage of src/ and pam/ (gcovr --branches)"
report --branches || rc=1
[ "$rc" = 0 ] || echo "make coverage: some tests failed (exit $rc); the numbers above still count what ran" >&2
exit "$rc"
