#!/bin/sh
# A real sudo session of a slot that exists only in the directory (slapd + nslcd, started by
# this test): sudo -u slot01 resolves it through libnss-ldapd, runs as the directory's uid
# with the directory's groups and home, and pam_slots.so in the session stack gives it the
# configured limits; with require_assigned, an unassigned directory slot is refused (an empty
# home is what assign asks of a free slot); with nslcd down, sudo runs nothing.  No slot is in /etc.
. "$top_srcdir/tests/integration/lib.sh"
. "$top_srcdir/tests/directory/dir-lib.sh"
slots_need_root
dir_need_tools
command -v sudo >/dev/null 2>&1 || { echo "SKIP: sudo is not installed"; exit 77; }
mod="$top_builddir/pam/.libs/pam_slots.so"
[ -f "$mod" ] || { echo "missing $mod (make builds it)"; exit 99; }
slots_enter_namespace "$@"
mod=$top_builddir/pam/.libs/pam_slots.so
S=$SLOTS_SCRATCH
# Below any hard limit the test has, and unlike the defaults.
DIR_EXTRA_CONFIG=',
  "limits": {"default": {"nofile": {"soft": 777, "hard": 888}}, "slot02": {"nofile": 555}}'
dir_service_and_config
dir_setup || { echo "FAIL: the directory did not start"; exit 99; }
dir_nsswitch ldap
check "the pool is loaded from --ldif" dir_load_pool
"$SLOTS_PROVISION" --config /etc/slots/slots.conf >"$S/out" 2>"$S/err"
check "provisioning exits 0" test $? = 0
check "slot01 is in no local file" sh -c '! grep -q "^slot01:" /etc/passwd /etc/group /etc/shadow /etc/gshadow'

before=$(sudo -n -u slot01 /bin/bash -c 'ulimit -n' 2>&1)
check "sudo -u slot01 runs before pam_slots is in the stack (nofile $before)" test -n "$before" -a "$before" != 777

cp /etc/pam.d/sudo "$S/pam-sudo.orig"
echo "session required $mod config=/etc/slots/slots.conf" >>/etc/pam.d/sudo
# account | what sudo -u ACCOUNT prints: uid, groups, soft and hard nofile
while read -r acct want; do
	got=$(sudo -n -u "$acct" /bin/bash -c 'echo "$(id -u):$(id -G | tr " " ,):$(ulimit -Sn):$(ulimit -Hn)"' 2>&1)
	check "sudo -u $acct: $want (got: $got)" test "$got" = "$want"
done <<TABLE
slot01 60001:60001,60000:777:888
slot02 60002:60002,60000:555:555
TABLE
got=$(sudo -n -u slot01 /bin/sh -c 'cd && pwd && touch mine && stat -c %u:%a mine' 2>&1)
check "slot01's session has the directory's home and writes it (got: $got)" \
	test "$got" = "/var/lib/slots/svc/home/slot01
60001:644"
got=$(sudo -n -u svc /bin/bash -c 'ulimit -n' 2>&1)
check "the service account (not a slot) keeps the defaults (got: $got)" test "$got" = "$before"

# require_assigned: slot01 is assigned (slots-admin, through the directory), slot02 is not.
cp "$S/pam-sudo.orig" /etc/pam.d/sudo
echo "session required $mod config=/etc/slots/slots.conf require_assigned" >>/etc/pam.d/sudo
# assign hands out only a slot whose home is as a release leaves it: empty.
rm -f /var/lib/slots/svc/home/slot01/mine
got=$("$SLOTS_ADMIN" --config /etc/slots/slots.conf assign aa73da63e26b40a1bb701c2b4c024870 slot01 2>&1)
st=$?
check "slots-admin assigns the directory's slot01 (exit $st, got: $got)" test "$st" = 0 -a "$got" = slot01
got=$(sudo -n -u slot01 /bin/bash -c 'ulimit -n' 2>&1)
check "require_assigned: the assigned slot01 gets its session and limits (got: $got)" test "$got" = 777
# The module refuses slot02's session with PAM_PERM_DENIED, which sudo treats as fatal: the
# command never runs.
got=$(sudo -n -u slot02 /bin/bash -c 'echo ran' 2>&1)
st=$?
check "require_assigned: the unassigned slot02 is refused (sudo exit $st, got: $got)" \
	sh -c 'test "$1" != 0 && ! printf "%s\n" "$2" | grep -q "^ran$"' - "$st" "$got"

# The directory down: sudo cannot resolve slot01 at all, and runs nothing.
kill "$DIR_NSLCD_PID"; wait "$DIR_NSLCD_PID" 2>/dev/null; DIR_NSLCD_PID=
sudo -n -u slot01 /bin/sh -c 'echo ran' >"$S/out" 2>&1
st=$?
check "with nslcd down, sudo -u slot01 runs nothing (exit $st)" sh -c "test $st != 0 && ! grep -q ran '$S/out'"
cat "$S/out"
cp "$S/pam-sudo.orig" /etc/pam.d/sudo
dir_stop
slots_done
