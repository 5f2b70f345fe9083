#!/bin/sh
# Builds the libFuzzer targets (config, table and limit parsers) with clang against the
# library sources directly, and runs each for a bounded time from its seed corpus in
# tests/fuzz/corpus/<target>.  Any crash, sanitizer report, broken invariant or leak fails.
#
#   tests/fuzz/run.sh [SECONDS]        default 60 per target (SLOTS_FUZZ_SECONDS also sets it)
#   SLOTS_FUZZ_DIR=DIR                 where binaries, the grown corpus and logs go
#                                      (default: ./fuzz-out; the seed corpus is never written)
#   SLOTS_FUZZ_TARGETS="config table"  a subset
set -eu
top=$(cd "$(dirname "$0")/../.." && pwd)
secs=${1:-${SLOTS_FUZZ_SECONDS:-60}}
out=${SLOTS_FUZZ_DIR:-$PWD/fuzz-out}
targets=${SLOTS_FUZZ_TARGETS:-config table limits}
cc=${CLANG:-clang}

if ! command -v "$cc" >/dev/null; then
	echo "SKIP: $cc is not installed (apt-get install clang)"
	exit 77
fi
mkdir -p "$out"
flags="-g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer"
flags="$flags -D_GNU_SOURCE -Wall -Wextra -Wno-unused-parameter -I$top/src/core -I$top/tests/fuzz"
# shellcheck disable=SC2046
set -- $(pkg-config --cflags --libs jansson libacl libsystemd)
# The parsers' library is libslots-core.la, whose sources src/core/Makemodule.am lists: read them from
# there, so a file the library gains is never missing here.
lib=$(sed -n '/^libslots_core_la_SOURCES/,/^[^[:space:]]/p' "$top/src/core/Makemodule.am" | grep -o 'src/core/[a-z-]*\.c')
[ -n "$lib" ] || { echo "tests/fuzz/run.sh: no libslots_core_la_SOURCES in $top/src/core/Makemodule.am" >&2; exit 1; }

failed=0
for t in $targets; do
	srcs="$top/tests/fuzz/fuzz-$t.c"
	for l in $lib; do srcs="$srcs $top/$l"; done
	# shellcheck disable=SC2086
	"$cc" $flags -o "$out/fuzz-$t" $srcs "$@"
	mkdir -p "$out/corpus-$t"
	log=$out/fuzz-$t.log
	# The first folder collects new inputs; the seed folder is only read.
	# shellcheck disable=SC2086
	if ASAN_OPTIONS=detect_leaks=1:allocator_may_return_null=1 UBSAN_OPTIONS=print_stacktrace=1 \
		"$out/fuzz-$t" -max_total_time="$secs" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 \
		-dict="$top/tests/fuzz/json.dict" -artifact_prefix="$out/crash-$t-" \
		"$out/corpus-$t" "$top/tests/fuzz/corpus/$t" >"$log" 2>&1; then
		execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -n 1)
		cov=$(grep -o 'cov: [0-9]*' "$log" | tail -n 1)
		echo "ok - fuzz-$t: ${execs:-?} executions in ${secs} s, $cov, corpus $(ls "$out/corpus-$t" | wc -l) inputs, no crash, no leak"
	else
		failed=$((failed + 1))
		echo "not ok - fuzz-$t: a crash, sanitizer report or leak; the input is in $out/crash-$t-*"
		grep -E 'ERROR|invariant|SUMMARY|runtime error' "$log" | head -n 20
		tail -n 40 "$log"
	fi
done
[ "$failed" = 0 ]
