#!/bin/sh
# Runs tests/pam/test-pam-slots (pam_slots.so in process through libpamtest)
# under pam_wrapper and nss_wrapper: writes the service files, the passwd and
# group files, and a work folder for the per-case config and table.
set -eu
: "${top_builddir:?run through make check}"
bin="$top_builddir/tests/pam/test-pam-slots"
mod="$top_builddir/pam/.libs/pam_slots.so"

if [ ! -x "$bin" ]; then
	echo "SKIP: libpamtest was not found by configure (apt-get install libpamtest0-dev libpam-wrapper libnss-wrapper)"
	exit 77
fi
if ! pam_wrapper=$(pkg-config --libs pam_wrapper 2>/dev/null) ||
   ! nss_wrapper=$(pkg-config --libs nss_wrapper 2>/dev/null); then
	echo "SKIP: pam_wrapper or nss_wrapper not installed"
	exit 77
fi
test -f "$mod" || { echo "FAIL: $mod not built"; exit 1; }

work=$(mktemp -d "$top_builddir/tests/pam/pam-slots.XXXXXX")
trap 'rm -rf "$work"' EXIT
mkdir "$work/services"

cat > "$work/passwd" <<EOP
root:x:0:0:root:/root:/bin/sh
nobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin
alice:x:1000:1000::/home/alice:/bin/sh
slot01:x:20001:20001:slot 01:/nonexistent:/usr/sbin/nologin
slot02:x:20002:20002:slot 02:/nonexistent:/usr/sbin/nologin
slot03:x:20003:20003:slot 03:/nonexistent:/usr/sbin/nologin
slot05:x:20005:20005:slot 05:/nonexistent:/usr/sbin/nologin
slot1:x:20101:20101:not a slot name:/nonexistent:/usr/sbin/nologin
slot001:x:20102:20102:not a slot name:/nonexistent:/usr/sbin/nologin
EOP
cat > "$work/group" <<EOP
root:x:0:
nogroup:x:65534:
alice:x:1000:
slot01:x:20001:
slot02:x:20002:
slot03:x:20003:
slot05:x:20005:
slotshared:x:20000:slot01,slot02,slot03,slot05
EOP

# The module's own result is made visible: success skips the pam_debug line,
# "ignore" reaches it (PAM_NO_MODULE_DATA), anything else ends the stack with
# the module's code.  pam_permit comes last.
service() {
	name=$1; shift
	{
		echo "session [success=1 ignore=ignore default=die] $mod config=$work/case.conf $*"
		echo "session [default=die] pam_debug.so open_session=no_module_data close_session=no_module_data"
		echo "session required pam_permit.so"
	} > "$work/services/$name"
}
service slots
service slots_req require_assigned
service slots_opts debug bogus_option
# The line pam_slots(8) recommends, in a plain stack.
printf 'session optional %s config=%s\nsession required pam_permit.so\n' "$mod" "$work/case.conf" \
	> "$work/services/slots_optional"
# Keeps libpam from logging about a missing "other" service.
printf 'auth required pam_deny.so\naccount required pam_deny.so\npassword required pam_deny.so\nsession required pam_deny.so\n' \
	> "$work/services/other"

# For sanitizer builds: the wrappers are preloaded before the sanitizer's
# runtime, deep binding is off (pam_wrapper 1.1.4 reads the UID_ name), and
# pam_wrapper's own constructor leaks are not the module's.
printf 'leak:libpam_wrapper.so\n' > "$work/lsan.supp"
ASAN_OPTIONS="verify_asan_link_order=0${ASAN_OPTIONS:+:$ASAN_OPTIONS}" \
LSAN_OPTIONS="suppressions=$work/lsan.supp:print_suppressions=0${LSAN_OPTIONS:+:$LSAN_OPTIONS}" \
LD_PRELOAD="$pam_wrapper:$nss_wrapper${LD_PRELOAD:+:$LD_PRELOAD}" \
PAM_WRAPPER=1 PAM_WRAPPER_SERVICE_DIR="$work/services" PAM_WRAPPER_DISABLE_DEEPBIND=1 UID_WRAPPER_DISABLE_DEEPBIND=1 \
NSS_WRAPPER_PASSWD="$work/passwd" NSS_WRAPPER_GROUP="$work/group" \
SLOTS_TEST_DIR="$work" \
	"$bin" "$@"
