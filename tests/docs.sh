#!/bin/sh
# The project stands on its own and its README is true for the tree it is in (a checkout or
# the release tarball, which "make distcheck" tests): CI runs the README's test command, every
# file the README names is there, no file refers to anything outside the tree, and the man
# pages are clean under mandoc's lint.  Runs as any user.
. "$top_srcdir/tests/integration/lib.sh"
cd "$top_srcdir" || exit 99

# 1. CI runs the README's line, as written.
line=$(sh .ci/run --print)
check "README has the command CI runs (got: '$line')" test "$line" = "sudo sh scripts/test.sh"
check "the README's line is an indented command of its own" grep -qxF "    $line" README

# 2. Every file and folder the README names exists here: the scripts it says to run, the
# docs it points to, the examples and man pages it lists.
named=$(grep -oE '(scripts|docs|data|man|bench|tests)/[A-Za-z0-9_.-]*[A-Za-z0-9_]|\.ci/run|[A-Z]+\.md' README | sort -u)
check "the README names its scripts and docs" sh -c "echo '$named' | grep -q scripts/test.sh && echo '$named' | grep -q docs/"
for f in $named; do
	check "README's $f is in the tree" test -e "$f"
done

# 3. Nothing refers outside the tree: no parent-folder brief, no SPEC.md or SPEC-NOTES.md.
refs=$(grep -rIlE '\.\./shared|SPEC\.md|SPEC-NOTES' . \
	--exclude-dir=.git --exclude-dir='build*' --exclude-dir=autom4te.cache --exclude-dir=_build \
	--exclude-dir=_inst --exclude='*.log' --exclude='*.trs' --exclude=docs.sh --exclude=Makefile.in 2>/dev/null)
check "no file refers to a parent-folder brief, SPEC.md or SPEC-NOTES.md${refs:+ (found: $(echo $refs))}" test -z "$refs"

# 4. The man pages lint clean (the reference a user has).
if command -v mandoc >/dev/null 2>&1; then
	for m in man/*.[0-9]; do
		out=$(mandoc -Tlint -W warning "$m" 2>&1)
		check "mandoc -Tlint -W warning $m${out:+: $out}" test -z "$out"
	done
else
	echo "# mandoc not installed: the man page lint is skipped"
fi

slots_done
