#!/bin/sh
# Runs the unit tests and the PAM cycle test under valgrind: any error or leak fails.
# SLOTS_BUILD_DIR is a configured and built tree (scripts/test.sh passes it).
set -u
b=${SLOTS_BUILD_DIR:?set SLOTS_BUILD_DIR to a build folder}
top=$(cd "$(dirname "$0")/.." && pwd)
command -v valgrind >/dev/null || { echo "SKIP: valgrind is not installed"; exit 77; }
make -C "$b" -j2 check TESTS= >/dev/null || exit 1
passed=0
failed=0
# The unit tests (tests/unit/*/, test-scope and test-nsswitch beside their modules); not the PAM
# drivers, which need pam_wrapper's environment.  test-child's rows time a child's wait on its
# pidfd, which valgrind's slowness breaks: it runs under ASan instead.
for t in $(find "$b/tests/unit" "$b/tests/directory" "$b/tests/pam/test-scope" -name "test-*" -type f ! -name "*.*" \
	! -name test-child | LC_ALL=C sort); do
	[ -x "$t" ] || continue
	if valgrind -q --error-exitcode=99 --leak-check=full --errors-for-leak-kinds=definite,indirect \
		"$t" >"$t.valgrind.log" 2>&1; then
		passed=$((passed + 1)); echo "ok - valgrind $(basename "$t")"
	else
		failed=$((failed + 1)); echo "not ok - valgrind $(basename "$t")"; tail -n 40 "$t.valgrind.log"
	fi
done
# The PAM module's own valgrind run (1,000 open/close cycles), when the PAM tests provide it.
for s in "$top"/tests/pam/valgrind*.sh; do
	[ -f "$s" ] || continue
	if top_builddir=$b top_srcdir=$top sh "$s"; then
		passed=$((passed + 1)); echo "ok - $(basename "$s")"
	else
		failed=$((failed + 1)); echo "not ok - $(basename "$s")"
	fi
done
echo "$passed passed, $failed failed"
[ "$failed" = 0 ]
