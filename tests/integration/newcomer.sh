#!/bin/sh
# What a newcomer trips on first (issue 11), on the check fixture in a private namespace:
#  - assign on a table the service cannot read (root:root after an admin's script): it
#    succeeds, and says on stderr that the service cannot read the table, with the fix;
#  - check reports a missing or changed account of a slot that is neither assigned nor
#    the test slot (the next assign would hand it out);
#  - the account-files lock held by another program: slots-provision says that the lock is
#    held, by which process, and how long it waited (lckpwdf's own error is "Interrupted
#    system call"), for the live /etc and for --root.
. "$top_srcdir/tests/integration/lib.sh"
slots_need_root
for tool in python3 useradd userdel usermod; do
	command -v "$tool" >/dev/null || { echo "SKIP: $tool is not installed"; exit 77; }
done
slots_enter_namespace "$@"
. "$top_srcdir/tests/integration/check-lib.sh"

check_fixture

# --- assign on a table the service cannot read ---
# table state                    want: exit  warning on stderr, its fix (the store's verdict)
while read -r owner mode warn fix; do
	chown "$owner" "$TABLE"
	chmod "$mode" "$TABLE"
	user=u-$(echo "$owner$mode" | tr -dc 'a-z0-9')
	"$SLOTS_ADMIN" assign "$user" >"$OUT/assign.out" 2>"$OUT/assign.err"
	rc=$?
	check "assign with a $owner $mode table exits 0 (exit $rc)" test "$rc" = 0
	check "assign with a $owner $mode table prints the slot" grep -Eq '^slot[0-9]+$' "$OUT/assign.out"
	if [ "$warn" = yes ]; then
		check "$owner $mode: stderr says the service cannot read the table" \
			grep -q "warning: $TABLE is $owner 0*$mode: the service account $SERVICE cannot read it" "$OUT/assign.err"
		check "$owner $mode: stderr gives the fix" \
			grep -qxF "slots-admin: fix: $(echo "$fix" | sed "s|SVC|$SERVICE|g; s|TBL|$TABLE|g")" "$OUT/assign.err"
		# The fix it prints works: the service reads the table afterwards.
		sh -c "$(sed -n 's/^slots-admin: fix: //p' "$OUT/assign.err")"
		check "$owner $mode: after the printed fix the service can read the table" \
			setpriv --reuid=$SERVICE --regid=$SERVICE --init-groups "$SLOTS_ADMIN" status "$user" >/dev/null
	else
		check "$owner $mode: no warning" test ! -s "$OUT/assign.err"
	fi
	"$SLOTS_ADMIN" release "$user" >/dev/null 2>"$OUT/release.err" || { cat "$OUT/release.err"; not_ok "release $user"; }
	chown "root:$SERVICE" "$TABLE"
	chmod 0640 "$TABLE"
done <<EOF
root:root 640 yes chgrp SVC TBL
root:root 600 yes chgrp SVC TBL && chmod 0640 TBL
root:$SERVICE 600 yes chmod 0640 TBL
root:$SERVICE 640 no
root:$SERVICE 644 no
EOF
[ "$(cat "$OUT/assign.err" 2>/dev/null)" = "" ] || cat "$OUT/assign.err"
# An ACL that lets the service group read a root:root table: no warning.
if command -v setfacl >/dev/null; then
	chown root:root "$TABLE"
	setfacl -m "g:$SERVICE:r" "$TABLE"
	"$SLOTS_ADMIN" assign u-acl >"$OUT/acl.out" 2>"$OUT/acl.err"
	check "root:root with an ACL for the service group: assign exits 0" test $? = 0
	check "root:root with an ACL for the service group: no warning" test ! -s "$OUT/acl.err"
	"$SLOTS_ADMIN" release u-acl >/dev/null 2>"$OUT/release.err" || { cat "$OUT/release.err"; not_ok "release u-acl"; }
	setfacl -b "$TABLE"
	chown "root:$SERVICE" "$TABLE"
else
	echo "# setfacl is not installed (package acl): the ACL case of assign's warning is not run"
fi

# --- check: the accounts of the slots nobody holds ---
# The fixture: slot01, slot03 and slot05 assigned, slot08 the test slot; slot02, 04, 06, 07 free.
run_check allgood
check "check passes on the fixture" test "$(rc_of allgood)" = 0
check "one account row covers the other free slots" \
	grep -Eq '^PASS +account +- +4 other slots of the pool \(free or pending\): accounts as planned' "$OUT/allgood.out"
userdel slot02 2>/dev/null
usermod -d /var/lib/slots/elsewhere slot06
run_check accounts
check "check exits 1 when a free slot's account is missing" test "$(rc_of accounts)" = 1
check "the missing account of the free slot02 is a FAIL row" test "$(row_status accounts account slot02)" = FAIL
check "its fix says slots-provision creates it" \
	sh -c "grep -F 'FAIL account slot02: no account slot02' '$OUT/accounts.out' | grep -q 'fix: slots-provision creates it'"
check "the changed home of the free slot06 is a FAIL row" test "$(row_status accounts account slot06)" = FAIL
check "the slot06 row names the home and its fix" grep -q "FAIL account slot06: home is /var/lib/slots/elsewhere.*fix: usermod -d" "$OUT/accounts.out"
check "the two good free slots are still one row" \
	grep -Eq '^PASS +account +- +2 other slots of the pool' "$OUT/accounts.out"
check "no user id in the output" no_user_ids "$OUT/accounts.out" "$OUT/accounts.err"
# The home back as planned (slots-provision refuses a conflict), then the missing slot02 made again.
usermod -d "/var/lib/slots/$SERVICE/home/slot06" slot06
check "slots-provision makes the free slot02's account again" quiet "$SLOTS_PROVISION" --config "$CONF"
check "slot02 exists again" getent passwd slot02

# --- the account files lock held by another program ---
# A POSIX write lock on .pwd.lock, as lckpwdf and vipw take it; the holder runs until killed.
hold_lock() {
	python3 -c 'import fcntl, sys, time
f = open(sys.argv[1], "a")
fcntl.lockf(f, fcntl.LOCK_EX)
print("locked", flush=True)
time.sleep(600)' "$1" >"$OUT/holder.$2" 2>&1 &
	eval "holder_$2=\$!"
	for _ in $(seq 50); do grep -q locked "$OUT/holder.$2" 2>/dev/null && return 0; sleep 0.1; done
	return 1
}
R=$SLOTS_SCRATCH/image
mkdir -p "$R/etc"
for f in passwd group shadow gshadow; do
	cp "$top_srcdir/tests/provision/initial-$f" "$R/etc/$f"
done
printf '{"service": "svc", "slots": 2, "table": "/etc/slots/slots.json", "slotctl_config": "/etc/slots/slotctl.json"}\n' \
	>"$OUT/image.conf"
: >"$R/etc/.pwd.lock"
chmod 0600 "$R/etc/.pwd.lock"
# A change to make, so that the runs need the lock: slot02 goes once more.
check "userdel slot02" userdel slot02
if hold_lock /etc/.pwd.lock host && hold_lock "$R/etc/.pwd.lock" image; then
	t0=$(date +%s)
	"$SLOTS_PROVISION" --config "$CONF" >"$OUT/lock-host.out" 2>"$OUT/lock-host.err" &
	p1=$!
	"$SLOTS_PROVISION" --root "$R" --config "$OUT/image.conf" >"$OUT/lock-image.out" 2>"$OUT/lock-image.err" &
	p2=$!
	wait $p1; rc1=$?
	wait $p2; rc2=$?
	t1=$(date +%s)
	# label    exit  holder pid
	for run in "host $rc1 $holder_host" "image $rc2 $holder_image"; do
		set -- $run
		check "$1: a held lock refuses the run, exit 1 (exit $2)" test "$2" = 1
		check "$1: it says the lock is held and by whom" \
			grep -q "account files lock is held by process $3 (python3); gave up after waiting 1[5-9]\.[0-9] s" \
			"$OUT/lock-$1.err"
		check "$1: not the alarm's 'Interrupted system call'" sh -c "! grep -q 'Interrupted' '$OUT/lock-$1.err'"
		check "$1: it gives the fix" grep -q 'fix: wait for the other account tool' "$OUT/lock-$1.err"
		sed 's/^/# /' "$OUT/lock-$1.err"
	done
	check "both gave up after about 15 s ($((t1 - t0)) s)" test $((t1 - t0)) -lt 40
	check "the live account files are unchanged: slot02 was not made" sh -c '! getent passwd slot02 >/dev/null'
	kill "$holder_host" "$holder_image"
	wait "$holder_host" "$holder_image" 2>/dev/null
else
	not_ok "could not take the account files lock for the test"
fi
"$SLOTS_PROVISION" --config "$CONF" >"$OUT/after.out" 2>&1
check "with the lock free again, provisioning makes slot02" getent passwd slot02

# --- the commands do not depend on the caller's umask ---
# The same provisioning of an image under umask 022, 077 and 000: the same modes and owners;
# and a table made by assign is root:<service group> 0640 whatever the umask.
for mask in 022 077 000; do
	I=$SLOTS_SCRATCH/umask-$mask
	mkdir -p "$I/etc/slots" "$I/srv/docs"
	for f in passwd group shadow gshadow; do
		cp "$top_srcdir/tests/provision/initial-$f" "$I/etc/$f"
	done
	chown 1000:1000 "$I/srv/docs"
	printf '{"service": "svc", "slots": 2, "docs_root": "/srv/docs", "shared_dirs": ["shared"], "table": "/etc/slots/slots.json", "slotctl_config": "/etc/slots/slotctl.json"}\n' \
		>"$I/etc/slots/slots.conf"
	(umask $mask && "$SLOTS_PROVISION" --root "$I" --config "$I/etc/slots/slots.conf" >"$OUT/umask-$mask.out" 2>&1)
	check "umask $mask: provisioning the image exits 0" test $? = 0
	(cd "$I" && find . -mindepth 1 -printf '%P %y %m %U:%G\n' | LC_ALL=C sort) >"$OUT/umask-$mask.tree"
done
check "umask 077: the image is the same as under 022" cmp -s "$OUT/umask-022.tree" "$OUT/umask-077.tree"
check "umask 000: the image is the same as under 022" cmp -s "$OUT/umask-022.tree" "$OUT/umask-000.tree"
cmp -s "$OUT/umask-022.tree" "$OUT/umask-077.tree" || diff "$OUT/umask-022.tree" "$OUT/umask-077.tree" | sed 's/^/# /'
for mask in 077 000; do
	rm -f "$TABLE" "$TABLE.lock"
	(umask $mask && "$SLOTS_ADMIN" assign "u-mask$mask" >"$OUT/mask.out" 2>"$OUT/mask.err")
	check "umask $mask: assign makes a new table and exits 0" test $? = 0
	check "umask $mask: the new table is root:$SERVICE 640 (got: $(slots_stat "$TABLE"))" \
		test "$(slots_stat "$TABLE")" = "root:$SERVICE 640"
	check "umask $mask: no warning" test ! -s "$OUT/mask.err"
done

slots_done
