#!/bin/sh
# The mutation run: each tests/mutation/*.patch breaks one safety claim of the
# product on purpose; it is applied to a scratch copy of the tree, built, and the tests its
# header names are run.  A mutation must be caught (a named test fails).  Results per patch:
#   killed    a test failed: the claim is guarded
#   SURVIVED  every named test passed: a hole in the suite
#   STALE     the patch no longer applies (the code moved): rewrite it against the new code
#   BROKEN    the mutant does not build: fix the patch
#   BASELINE  a named test fails (or skips) on the unchanged tree: nothing can be concluded
# Anything but "killed" fails the run (exit 1).  Run as root (most tests need it; they work
# in private namespaces).  Usage: sh tests/mutation/run.sh [NAME...]   (default: every patch)
# SLOTS_MUTATION_DIR: the scratch folder (default: a new one under /var/tmp, removed at the end).
# SLOTS_MUTATION_TIMEOUT: seconds one named test may take (default 900); a mutant that makes a
# test hang past it counts as killed ("timeout"): the suite would never finish.
# A patch starts with "# claim: ..." and "# tests: TEST..." (names as in Makefile.am's TESTS,
# the quickest first: they run one by one until one fails), then a diff against the source tree (git diff format, paths a/... b/...).
set -u
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
jobs=$(nproc 2>/dev/null || echo 2)
limit=${SLOTS_MUTATION_TIMEOUT:-900}

if [ "$(id -u)" != 0 ]; then
	echo "tests/mutation/run.sh: run it as root: most of the tests that catch mutations need root" >&2
	exit 2
fi
if [ $# -gt 0 ]; then
	patches=
	for n in "$@"; do
		p=$here/${n%.patch}.patch
		[ -f "$p" ] || { echo "tests/mutation/run.sh: no such mutation: $n" >&2; exit 2; }
		patches="$patches $p"
	done
else
	patches=$(ls "$here"/*.patch)
fi

scratch=${SLOTS_MUTATION_DIR:-}
if [ -z "$scratch" ]; then
	scratch=$(mktemp -d /var/tmp/slots-mutation.XXXXXX) || exit 2
	trap 'rm -rf "$scratch"' EXIT
fi
src=$scratch/src
build=$scratch/build
log=$scratch/logs
rm -rf "$src" "$build" "$log"
mkdir -p "$src" "$build" "$log"
chmod 0755 "$scratch"

# The scratch copy: what git tracks plus new files not ignored (the tree as it is now,
# uncommitted changes included; a tracked file deleted in the tree is left out), under its own
# git so every mutation starts clean.
if git -C "$top" rev-parse --git-dir >/dev/null 2>&1; then
	(cd "$top" && git ls-files -co --exclude-standard -z |
		xargs -0 tar -cf - --no-recursion --ignore-failed-read --) |
		tar -C "$src" -xf - || exit 2
else
	(cd "$top" && tar -cf - --exclude='./build*' .) | tar -C "$src" -xf - || exit 2
fi
started=$(date +%s)
echo "mutation run: $(echo "$patches" | wc -w) mutations, scratch copy in $src"
echo "started $(date -u '+%Y-%m-%d %H:%M UTC'); load: $(cut -d' ' -f1-3 /proc/loadavg), $jobs CPUs"
(cd "$src" && ./autogen.sh >"$log/autogen" 2>&1) || { echo "autogen failed: $log/autogen"; exit 2; }
# What autogen made is committed too, so resetting the copy never touches it.
git -C "$src" init -q && git -C "$src" add -A -f &&
	git -C "$src" -c user.name=mutation -c user.email=mutation@localhost commit -qm base || exit 2

header() { sed -n "s/^# $1: //p" "$2" | head -n 1; }
# No -Werror: a mutant that only warns is still a mutant.
(cd "$build" && "$src/configure" -q >"$log/configure" 2>&1) || { echo "configure failed"; exit 2; }
if ! make -C "$build" -j"$jobs" >"$log/build" 2>&1 || ! make -C "$build" -j"$jobs" check TESTS= >>"$log/build" 2>&1; then
	echo "the unchanged tree does not build: $log/build"
	tail -n 30 "$log/build"
	exit 2
fi

# run_tests TESTS...: make check of exactly these, within the time limit each; its status
# (124: the limit was reached).
run_tests() {
	timeout -k 30 "$(($# * limit))" make -C "$build" check TESTS="$*" >"$log/current" 2>&1
}
# The tests' own verdicts (PASS, FAIL, SKIP, ERROR), one line each.
verdicts() {
	for t in "$@"; do
		trs=$build/${t%.sh}.trs
		printf '%s %s\n' "$(sed -n 's/^:test-result: //p' "$trs" 2>/dev/null | head -n 1)" "$t"
	done
}

# in_baseline_failures TESTS...: true when one of them did not pass on the unchanged tree.
in_baseline_failures() {
	for t in "$@"; do
		echo "$bad" | grep -q " $t\$" && return 0
	done
	return 1
}

# Baseline: every named test must pass on the unchanged tree, or a kill proves nothing.
all=
for p in $patches; do
	all="$all $(header tests "$p")"
done
all=$(echo "$all" | tr ' ' '\n' | sed '/^$/d' | sort -u | tr '\n' ' ')
echo "baseline: $all"
run_tests $all
bad=$(verdicts $all | grep -v '^PASS ')
cp "$log/current" "$log/baseline"

killed=0 failed=0 n=0
summary=
for p in $patches; do
	name=$(basename "$p" .patch)
	tests=$(header tests "$p")
	claim=$(header claim "$p")
	n=$((n + 1))
	git -C "$src" checkout -q -- . && git -C "$src" clean -qfd
	if [ -z "$tests" ] || [ -z "$claim" ]; then
		result="BROKEN (no '# claim:' or '# tests:' line)"
	elif ! git -C "$src" apply --check "$p" 2>"$log/$name.apply"; then
		result="STALE (does not apply: $(head -n 1 "$log/$name.apply"))"
	elif in_baseline_failures $tests; then
		result="BASELINE (on the unchanged tree: $(echo "$bad" | tr '\n' ';'))"
	else
		git -C "$src" apply "$p"
		if ! make -C "$build" -j"$jobs" >"$log/$name.build" 2>&1 ||
		   ! make -C "$build" -j"$jobs" check TESTS= >>"$log/$name.build" 2>&1; then
			result="BROKEN (does not build: $log/$name.build)"
		else
			# The named tests one by one, in their order (the quickest first): the first
			# failure kills the mutant and the rest need not run.
			result="SURVIVED (passed: $tests)"
			for t in $tests; do
				run_tests "$t"
				rc=$?
				if [ "$rc" = 124 ] || [ "$rc" = 137 ]; then
					cp "$log/current" "$log/$name.check"
					result="killed by $t (timeout after ${limit} s)"
					break
				elif [ "$rc" != 0 ]; then
					cp "$log/current" "$log/$name.check"
					result="killed by $t ($(verdicts "$t" | cut -d' ' -f1))"
					break
				fi
			done
		fi
	fi
	case $result in
	killed*) killed=$((killed + 1)) ;;
	*) failed=$((failed + 1)) ;;
	esac
	printf '%-28s %s\n' "$name" "$result"
	summary="$summary$(printf '| %s | %s | %s |' "$name" "$claim" "$result")
"
done
# The tree back as it was, so a kept scratch folder builds the real thing.
git -C "$src" checkout -q -- . && git -C "$src" clean -qfd

echo
echo "| mutation | claim | result |"
echo "|---|---|---|"
printf '%s' "$summary"
echo
echo "$n mutations: $killed killed, $failed not (survived, stale, broken or no baseline)"
echo "ended $(date -u '+%Y-%m-%d %H:%M UTC') after $((($(date +%s) - started) / 60)) min; load: $(cut -d' ' -f1-3 /proc/loadavg)"
[ "$failed" = 0 ]
