#!/bin/sh
# The directory goes away (a real slapd and nslcd, started and stopped by this test): every
# lookup that fails refuses the run, nothing on the host changes, and nothing is mistaken for
# "not found" (glibc returns ENOENT with no entry then; a reachable directory that lacks a name
# returns 0).  Rows: what is stopped, and when (before the run, or at the lookup of a name
# in the middle of it, through libdirgone.so).  Then the directory comes back and the same run
# goes through with no local account added.
. "$top_srcdir/tests/integration/lib.sh"
. "$top_srcdir/tests/directory/dir-lib.sh"
slots_need_root
dir_need_tools
DIRGONE_SO="$top_builddir/tests/directory/.libs/libdirgone.so"
[ -f "$DIRGONE_SO" ] || { echo "missing $DIRGONE_SO (make check builds it)"; exit 99; }
slots_enter_namespace "$@"
S=$SLOTS_SCRATCH
dir_service_and_config
dir_setup || { echo "FAIL: the directory did not start"; exit 99; }
dir_nsswitch ldap
check "the pool is loaded from --ldif" dir_load_pool
check "the directory serves slot02" getent passwd slot02
dir_host_state >"$S/state0"

# Waits until NSS answers for slot01 again (nslcd reconnects within seconds).
wait_served() {
	i=0
	until getent passwd slot01 >/dev/null 2>&1; do
		i=$((i + 1)); [ $i -lt 60 ] || return 1; sleep 0.5
	done
}

# daemon: slapd or nslcd; at: "before" or the name whose lookup stops it.
while read -r daemon at; do
	case $daemon in slapd) pid=$DIR_SLAPD_PID ;; nslcd) pid=$DIR_NSLCD_PID ;; esac
	what="$daemon stopped $( [ "$at" = before ] && echo "before the run" || echo "at the lookup of $at")"
	if [ "$at" = before ]; then
		kill "$pid"; wait "$pid" 2>/dev/null
		"$SLOTS_PROVISION" --config /etc/slots/slots.conf >"$S/out" 2>"$S/err"
		st=$?
	else
		SLOTS_TEST_DIR_GONE_AT=$at SLOTS_TEST_DIR_GONE_PID=$pid LD_PRELOAD=$DIRGONE_SO \
			"$SLOTS_PROVISION" --config /etc/slots/slots.conf >"$S/out" 2>"$S/err"
		st=$?
		wait "$pid" 2>/dev/null
	fi
	check "$what: refused (exit 1, got $st)" test "$st" = 1
	cat "$S/err"
	check "$what: the error is a failed lookup, not a missing account" \
		grep -q "lookup through NSS failed: No such file or directory" "$S/err"
	check "$what: it says nothing was changed" grep -q "nothing was changed" "$S/err"
	check "$what: nothing on standard output" test ! -s "$S/out"
	dir_host_state >"$S/state1"
	check "$what: no account file, /etc entry or slot folder changed" cmp -s "$S/state0" "$S/state1"
	check "$what: no local slot02 was made" sh -c '! grep -q "^slot02:" /etc/passwd /etc/group'
	# slots-admin refuses too: an assignment needs the slot's account.
	"$SLOTS_ADMIN" --config /etc/slots/slots.conf assign user1 >"$S/out" 2>"$S/err"
	st=$?
	check "$what: slots-admin assign is refused (exit 1, got $st)" test "$st" = 1
	check "$what: assign says the lookup failed" grep -q "lookup failed" "$S/err"
	case $daemon in
	slapd) DIR_SLAPD_PID=; dir_start_slapd ;;
	nslcd) DIR_NSLCD_PID=; dir_start_nslcd ;;
	esac
	check "$what: after a restart the directory answers again" wait_served
done <<'TABLE'
nslcd before
slapd before
slapd slot02
nslcd slot03
TABLE

# The table never got the assignments tried above.
check "no table was written by the refused runs" test ! -e /etc/slots/slots.json

"$SLOTS_PROVISION" --config /etc/slots/slots.conf >"$S/out" 2>"$S/err"
check "with the directory back, provisioning exits 0" test $? = 0
check "it created no local account or group" \
	sh -c "grep -Eq '^[0-9]+ changes\$' '$S/out' && ! grep -Eq '^create (account|group)' '$S/out'"
check "the local account files are unchanged" sh -c "head -4 '$S/state0' | md5sum -c --quiet -"
dir_stop
slots_done
