#!/bin/sh
# pam_slots.so loads with every symbol resolved, exports only the pam_sm_* hooks,
# stays loaded after dlclose (-z nodelete), and holds no writable data of its own
# (pam_slots(8): "no mutable global data"), which is what makes staying loaded sound.
set -u
: "${top_builddir:?run through make check}"
mod="$top_builddir/pam/.libs/pam_slots.so"
fail=0

test -f "$mod" || { echo "FAIL: $mod not built"; exit 1; }

work=$(mktemp -d "$top_builddir/tests/pam/exports.XXXXXX")
trap 'rm -rf "$work"' EXIT
echo "session required pam_permit.so" > "$work/slots-dlopen"
"$top_builddir/tests/pam/test-dlopen" "$mod" "$work" || fail=1

# Dynamic symbols defined by the module: exactly the two hooks.
exported=$(nm -D --defined-only "$mod" | awk '$2 ~ /^[A-Za-z]$/ && $2 != "A" { print $3 }' | sort | tr '\n' ' ')
if [ "$exported" = "pam_sm_close_session pam_sm_open_session " ]; then
	echo "ok exports: $exported"
else
	echo "FAIL exports: want 'pam_sm_close_session pam_sm_open_session', got '$exported'"
	fail=1
fi

# Writable data: symbols in .data, .bss and their thread-local twins, apart
# from what the compiler's start-up files put into every shared object and the
# one-byte ODR indicators AddressSanitizer adds beside each global (__odr_asan.*).
# A coverage build (configure --enable-coverage) links libgcov into the module: its
# counters (__gcov*) and libgcov's own statics are the tool's state, not the module's.
gcov_own=__no_gcov__
if objdump -t "$mod" | grep -q -w '__gcov_init'; then
	gcov_own='__gcov.*|fn_buffer|list_sizes\.[0-9]*|list_size_length\.[0-9]*'
fi
globals=$(objdump -t "$mod" | awk 'NF >= 3 && $(NF-2) ~ /^\.(data|bss|tdata|tbss)$/ { print $NF }' |
	  grep -v -x -e '__dso_handle' -e 'completed\.[0-9]*' -e '__TMC_END__' -e '__odr_asan\..*' |
	  grep -v -x -E "$gcov_own" | tr '\n' ' ')
if [ -z "$globals" ]; then
	echo "ok no writable globals"
else
	echo "FAIL writable globals in $mod: $globals"
	fail=1
fi
exit $fail
