#!/bin/sh
# Lints with shellcheck (warnings and errors) the shell the project ships and the tests share:
# scripts/, the Debian maintainer scripts and DEP-8 test, the bash completions (bash), and
# the sourced helpers of the tests (each says its shell with a directive).  Skips where
# it is not installed (scripts/deps.sh installs it).
. "$top_srcdir/tests/integration/lib.sh"
command -v shellcheck >/dev/null 2>&1 || { echo "SKIP: shellcheck is not installed (apt-get install shellcheck)"; exit 77; }
cd "$top_srcdir" || exit 1
set -- scripts/*.sh debian/*.postinst debian/*.prerm debian/*.postrm debian/tests/lifecycle \
	data/bash-completion/slots-admin data/bash-completion/slots-provision \
	tests/integration/lib.sh tests/integration/release-lib.sh tests/integration/check-lib.sh \
	tests/provision/image-lib.sh tests/directory/dir-lib.sh tests/reliability/rel-lib.sh \
	tests/shellcheck.sh tests/package/units.sh tests/package/version.sh
for f in "$@"; do
	check "$f is there" test -f "$f"
done
out=$(shellcheck -S warning -f gcc "$@" 2>&1)
check "shellcheck -S warning finds nothing${out:+:
$out}" test -z "$out"
# The check can fail: a script with ls | grep and no shebang is reported.
printf 'ls -A /etc | grep -v x\n' >"${TMPDIR:-/tmp}/slots-shellcheck.$$"
bad=$(shellcheck -S warning -f gcc "${TMPDIR:-/tmp}/slots-shellcheck.$$" 2>&1)
rm -f "${TMPDIR:-/tmp}/slots-shellcheck.$$"
check "a script without a shebang that pipes ls into grep is reported" sh -c \
	'printf "%s\n" "$1" | grep -q SC2148 && printf "%s\n" "$1" | grep -q SC2010' _ "$bad"
slots_done
