#!/bin/sh
# tests/arch.sh catches what it says it checks: a copy of the tree with one break of each rule
# (an include across a layer, a private header from another folder, a function or file past its
# cap, a listed function that grew, a cycle through definitions behind attributes) must fail,
# naming each; a copy with everything just at its cap passes.  Runs as any user.
. "$top_srcdir/tests/integration/lib.sh"
cd "$top_srcdir" || exit 99
work=$(mktemp -d) || exit 99
trap 'rm -rf "$work"' EXIT

# A copy of what arch.sh reads.
fresh() {
	rm -rf "$work/t" && mkdir -p "$work/t/tests" && cp -r src pam docs "$work/t/" && cp -r tests/unit "$work/t/tests/"
}

# A function whose body is $1 lines, behind an attribute before the storage class.
long_fn() {
	printf '__attribute__((noreturn)) static void %s(void)\n{\n' "$2"
	i=1
	while [ "$i" -lt "$1" ]; do
		printf '        (void) 0;\n'
		i=$((i + 1))
	done
	printf '        _exit(0);\n}\n'
}

# Just at the caps: a function of 70 lines, a file of 800.
fresh
long_fn 70 at_cap >>"$work/t/src/core/size.c"
n=$(wc -l <"$work/t/src/core/size.c")
yes '/* x */' | head -n $((800 - n)) >>"$work/t/src/core/size.c"
sh tests/arch.sh "$work/t" >"$work/out" 2>&1
check "the tree with a function of 70 lines and a file of 800 passes" test $? = 0
cat "$work/out"

# Every rule broken once.
fresh
while IFS='|' read -r file text; do
	printf '%s\n' "$text" >>"$work/t/$file"
done <<'ROWS'
src/core/path.c|#include "strbuf.h"
pam/env.c|#include "nss.h"
src/lib/walk.c|#include "cmdutil.h"
src/lib/lifecycle/assign.c|#include "check-int.h"
tests/unit/core/test-path.c|#include "tree-int.h"
src/core/path.h|__attribute__((noreturn)) void arch_row_a(void);
src/core/size.h|__attribute__((noreturn)) void arch_row_b(void);
ROWS
printf '#include "size.h"\n__attribute__((noreturn)) void arch_row_a(void)\n{\n        arch_row_b();\n}\n' \
	>>"$work/t/src/core/path.c"
printf '#include "path.h"\n__attribute__((noreturn)) void arch_row_b(void)\n{\n        arch_row_a();\n}\n' \
	>>"$work/t/src/core/size.c"
long_fn 71 too_long >>"$work/t/src/core/escape.c"
n=$(wc -l <"$work/t/src/core/ids.c")
yes '/* x */' | head -n $((801 - n)) >>"$work/t/src/core/ids.c"
awk '{ print } /^int slots_ensure_dir\(/ { s = 1 } s && /^\{/ { print "        (void) 0;"; s = 0 }' src/core/fsutil.c \
	>"$work/t/src/core/fsutil.c"
sh tests/arch.sh "$work/t" >"$work/out" 2>&1
check "the broken tree fails" test $? = 1
while IFS='|' read -r what want; do
	check "$what" grep -q "$want" "$work/out"
done <<'ROWS'
src/core includes a header of src/lib|^src/core/path.c:[0-9]*: includes src/lib/strbuf.h: src/core sees only src/core
pam includes a header of src/lib|^pam/env.c:[0-9]*: includes src/lib/nss.h: pam sees only src/core
src/lib includes a header of src/|^src/lib/walk.c:[0-9]*: includes src/cmdutil.h: src/lib never includes
a private header from another subsystem|^src/lib/lifecycle/assign.c:[0-9]*: includes src/lib/check/check-int.h, private
a private header in a unit test docs/ARCHITECTURE.md does not name|^tests/unit/core/test-path.c:[0-9]*: includes src/lib/lifecycle/tree-int.h
a function of 71 lines, named behind its attribute|^src/core/escape.c:[0-9]*: too_long() is 71 lines, more than 70
a file of 801 lines|^src/core/ids.c:801: 801 lines, more than 800
a function over the cap before the check that grew|^src/core/fsutil.c:[0-9]*: slots_ensure_dir() is 75 lines, more than 74
a cycle through definitions behind attributes|calls arch_row_[ab]() of
ROWS
grep -q "arch_row\|too_long\|slots_ensure_dir\|801 lines" "$work/out" || cat "$work/out"

slots_done
