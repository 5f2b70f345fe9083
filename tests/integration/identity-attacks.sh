#!/bin/sh
# A slot's identity cannot outlive its release: each attack is run as the attacker (runuser -u
# slotNN) in the test's namespaces, and release must end every process that carries any of
# slot03's identity (its uid, its group, a user namespace it owns), never another's process.
#   a. slot03 leaves a set-group-ID copy of a program (group slot03) in /var/tmp; slot04 runs it
#      and keeps a process with egid slot03.
#   b. slot03 has a range in /etc/subuid and /etc/subgid (the namespace's copy), maps itself into
#      a user namespace with newuidmap/newgidmap and runs a process as a subordinate uid that
#      holds an fd on the user's document.
# And check FAILs, in the account row, each way the identity can be borrowed or used: on the
# free slot03 a subordinate range, a group but its own and <prefix>shared, a shell drift, a
# usable password, a process of its own or one of slot04's with egid slot03; on the assigned
# slot03 a process of another account through its group, and one of its own without
# no_new_privs.  Each printed fix is run and clears it.
# Another account holding slot03's identity is tried as that account before check runs: ops1,
# whose subordinate range (another owner's line, as useradd hands out) holds slot03's uid and
# gid, maps them through newuidmap and reads slot03's 0600 file; ops2, a second name of the uid,
# reads it too; grp3, a second group of the gid; ops3, a member of group slot03 that only
# /etc/gshadow lists, reads a file of the group through sg.
RELEASE_UID_MIN=47900
RELEASE_POOL=4
. "$top_srcdir/tests/integration/release-lib.sh"

U3=$(uid_of slot03)
G3=$(gid_of slot03)
U4=$(uid_of slot04)
TREE=$DOCS/_users/alice
as3() {
	runuser -u slot03 -- "$@"
}
as4() {
	runuser -u slot04 -- "$@"
}
# Live processes of no root uid whose status names $1 in a Uid, Gid or Groups field (root's
# processes carry a slot's groups after su and runuser, and need none).
carriers() {
	cat /proc/[0-9]*/status 2>/dev/null | awk -v id="$1" '
		/^Name:/ { s = ""; root = 0; hit = 0 } /^State:/ { s = $2 }
		/^Uid:/ { for (i = 2; i <= NF; i++) if ($i == 0) root = 1 }
		/^(Uid|Gid|Groups):/ { for (i = 2; i <= NF; i++) if ($i == id) hit = 1 }
		/^Groups:/ { if (hit && !root && s != "Z" && s != "X") n++ }
		END { print n + 0 }'
}
# Process $1 runs: it exists and is no zombie (runuser's parent stops with its child and never reaps it).
alive() {
	[ -n "$1" ] && kill -0 "$1" 2>/dev/null && [ "$(awk '/^State:/ { print $2 }' "/proc/$1/status")" != Z ]
}
not_alive() {
	[ -n "$1" ] && ! alive "$1"
}

# The account row of slot $1 as "STATUS detail -- fix: FIX" ("null ..." when it has none: a free
# slot whose account is as planned is folded into one row of the others).
acct() {
	admin_run check --json
	jq -r --arg s "$1" '[.checks[] | select(.check == "account" and .slot == $s)][0] |
		"\(.status) \(.detail) -- fix: \(.fix)"' "$S/out"
}
# check_case NAME WANT: the account row of slot03 fails, its detail holding WANT; its fix in $fix.
check_case() {
	row=$(acct slot03)
	echo "# $1: $row"
	check "$1: the account row of slot03 fails" sh -c 'case "$1" in "FAIL "*) ;; *) exit 1 ;; esac' _ "$row"
	check "$1: it says $2" sh -c 'case "$1" in *"$2"*) ;; *) exit 1 ;; esac' _ "$row" "$2"
	fix=${row#* -- fix: }
}
# clears NAME: after the fix, the account row of slot03 no longer fails.
clears() {
	row=$(acct slot03)
	check "$1: after the fix slot03's account row does not fail" sh -c 'case "$1" in "FAIL "*) exit 1 ;; esac' _ "$row"
}

# ---- check, slot03 free ----
row=$(acct slot03)
check "a good host: slot03's account row does not fail" sh -c 'case "$1" in "FAIL "*) exit 1 ;; esac' _ "$row"
cp /etc/subuid "$S/subuid.good" 2>/dev/null || : >"$S/subuid.good"
cp /etc/subgid "$S/subgid.good" 2>/dev/null || : >"$S/subgid.good"
echo "slot03:300000:65536" >>/etc/subuid
echo "slot03:300000:65536" >>/etc/subgid
check_case subids "slot03 has subordinate uids 300000-365535 (/etc/subuid) and gids 300000-365535 (/etc/subgid)"
check "subids: the fix removes both ranges" test "$fix" = \
	"usermod --del-subuids 300000-365535 --del-subgids 300000-365535 slot03"
eval "$fix"
clears subids

gpasswd -a slot03 svc >/dev/null
check_case groups "slot03 is a member of svc: a slot belongs to no group but its own and slotshared"
check "groups: the fix takes it out" test "$fix" = "gpasswd -d slot03 svc"
eval "$fix" >/dev/null
clears groups

usermod -s /bin/sh slot03
check_case shell "slot03 has shell /bin/sh, configured /usr/sbin/nologin"
eval "$fix"
clears shell

usermod -p '$6$salt$c2VjcmV0aGFzaA' slot03
check_case password "slot03 has a usable password hash (\$6\$) in its shadow entry"
check "password: the hash is not printed" sh -c "! grep -q c2VjcmV0aGFzaA '$S/out'"
check "password: the fix locks it" test "$fix" = "usermod -L slot03"
eval "$fix"
clears password

# ---- another account holds slot03's identity ----
as3 sh -c 'echo slot03-secret >/var/tmp/s3secret && chmod 0600 /var/tmp/s3secret'
useradd -M -s /bin/sh ops1
echo "ops1:$((U3 - 3)):65536" >>/etc/subuid
echo "ops1:$((G3 - 3)):65536" >>/etc/subgid
# ops1's inner 0 is itself, inner 1.. its range: slot03's uid is inner 4, its gid inner 4.
as_ops1_slot03() {
	runuser -u ops1 -- unshare --map-user=0 --map-group=0 --map-users="$((U3 - 3)),1,65536" \
		--map-groups="$((G3 - 3)),1,65536" setpriv --reuid=4 --regid=4 --clear-groups cat /var/tmp/s3secret
}
if ! command -v newuidmap >/dev/null || ! as_ops1_slot03 >"$S/ops1.out" 2>"$S/ops1.err"; then
	cat "$S/ops1.err" 2>/dev/null
	echo "# SKIP the attack itself: ops1 could not map its range into a user namespace here"
else
	check "foreign-subids: the attack: ops1 reads slot03's 0600 file as slot03" grep -qx slot03-secret "$S/ops1.out"
fi
check_case foreign-subids "ops1's subordinate uids $((U3 - 3))-$((U3 + 65532)) (/etc/subuid line"
check "foreign-subids: it names the gid range too" sh -c 'case "$1" in *"ops1'"'"'s subordinate gids"*) ;; *) exit 1 ;; esac' _ "$row"
check "foreign-subids: the fix removes ops1's ranges" test "$fix" = \
	"usermod --del-subuids $((U3 - 3))-$((U3 + 65532)) ops1 && usermod --del-subgids $((G3 - 3))-$((G3 + 65532)) ops1"
eval "$fix"
clears foreign-subids
check_fails "foreign-subids: after the fix ops1 no longer reads the file" as_ops1_slot03

useradd -M -o -u "$U3" -g "$G3" -s /bin/sh ops2
check "alias: the attack: ops2 reads slot03's 0600 file" sh -c 'runuser -u ops2 -- cat /var/tmp/s3secret | grep -qx slot03-secret'
check_case alias "account ops2 has slot03's uid $U3 too (/etc/passwd): to the kernel it is slot03"
check "alias: the fix removes it" test "$fix" = "userdel ops2"
eval "$fix"
clears alias
groupadd -o -g "$G3" grp3
check_case alias-group "group grp3 has slot03's gid $G3 too (/etc/group)"
check "alias-group: the fix removes it" test "$fix" = "groupdel -f grp3"
eval "$fix"
clears alias-group

useradd -M -s /bin/sh ops3
: >/var/tmp/g3secret && chgrp slot03 /var/tmp/g3secret && chmod 0640 /var/tmp/g3secret
echo group-secret >/var/tmp/g3secret
awk -F: -v OFS=: '$1 == "slot03" { $4 = $4 == "" ? "ops3" : $4 ",ops3" } { print }' /etc/gshadow >"$S/gshadow.new" &&
	cat "$S/gshadow.new" >/etc/gshadow
check "gshadow-member: /etc/group does not list ops3" sh -c '! grep "^slot03:" /etc/group | grep -q ops3'
if runuser -u ops3 -- sg slot03 -c 'cat /var/tmp/g3secret' 2>"$S/sg.err" | grep -qx group-secret; then
	ok "gshadow-member: the attack: ops3 reads a file of group slot03 through sg"
else
	echo "# sg: $(cat "$S/sg.err")"
	echo "# SKIP the attack itself: sg did not run here"
fi
check_case gshadow-member "ops3 is a member of the group slot03 (/etc/gshadow)"
check "gshadow-member: the fix takes it out" test "$fix" = "gpasswd -d ops3 slot03"
eval "$fix" >/dev/null
clears gshadow-member
check_fails "gshadow-member: after the fix sg slot03 gives ops3 nothing" sh -c \
	'runuser -u ops3 -- sg slot03 -c "cat /var/tmp/g3secret" </dev/null 2>/dev/null | grep -qx group-secret'
rm -f /var/tmp/s3secret /var/tmp/g3secret

as3 sh -c 'cp /bin/sleep /var/tmp/g3free && chmod 2755 /var/tmp/g3free'
as4 /var/tmp/g3free 100001 &
wait_for pgrep -u "$U4" -f 'g3free 100001' >/dev/null
held=$(pgrep -u "$U4" -f 'g3free 100001' | head -n 1)
check_case free-egid "process $held (g3free) of slot04, with its egid"
check "free-egid: the fix ends it" sh -c 'case "$1" in "kill -KILL $2 "*) ;; *) exit 1 ;; esac' _ "$fix" "$held"
kill -KILL "$held"
as3 sleep 100002 &
wait_for pgrep -u "$U3" -f 'sleep 100002' >/dev/null
own=$(pgrep -u "$U3" -f 'sleep 100002' | head -n 1)
check_case free-own "process $own (sleep) of slot03, as its uid"
kill -KILL "$own"
wait_for sh -c '! pgrep -f "g3free 100001|sleep 100002"' >/dev/null
clears processes
rm -f /var/tmp/g3free

check "assign alice slot03" prints slot03 admin assign alice slot03
as3 sh -c "echo alice-secret >'$TREE/doc'"
check "slot03 wrote alice's document" grep -q alice-secret "$TREE/doc"

# ---- an assigned slot's process without no_new_privs (from before pam_slots: an upgrade) ----
# runuser here opens no pam_slots session, as a process started before the module was installed.
as3 sleep 100003 &
wait_for pgrep -u "$U3" -f 'sleep 100003' >/dev/null
old=$(pgrep -u "$U3" -f 'sleep 100003' | head -n 1)
check "slot03's process has no no_new_privs" grep -q '^NoNewPrivs:[[:space:]]*0' "/proc/$old/status"
check_case no-nnp "process of slot03 without no_new_privs (from before pam_slots, or a way around it): process $old (sleep)"
check "no-nnp: the fix ends it, or releases the slot" sh -c 'case "$1" in "end them: kill -KILL $2 (or release the slot"*) ;; *) exit 1 ;; esac' _ "$fix" "$old"
kill -KILL "$old"
wait_for sh -c '! pgrep -f "sleep 100003"' >/dev/null
clears no-nnp

# ---- a. a set-gid program of slot03's group, run by slot04 ----
check "assign bob slot04" prints slot04 admin assign bob slot04
as3 sh -c 'cp /bin/sleep /var/tmp/g3 && chmod 2755 /var/tmp/g3'
check "slot03 made a set-gid copy in /var/tmp" test "$(stat -c '%G %a' /var/tmp/g3)" = "slot03 2755"
as4 /var/tmp/g3 100000 &
as4 sleep 100000 &
wait_for pgrep -u "$U4" -f 'g3 100000' >/dev/null
wait_for pgrep -u "$U4" -x sleep >/dev/null
held=$(pgrep -u "$U4" -f 'g3 100000' | head -n 1)
bystander=$(pgrep -u "$U4" -x sleep | head -n 1)
check "slot04 runs a process with egid slot03" sh -c "[ -n '$held' ] && grep -q '^Gid:.*	$G3	' /proc/$held/status"
check "slot04 runs a bystander without slot03's group" test -n "$bystander"

row=$(acct slot03)
echo "# assigned: $row"
check "a: check's account row of the assigned slot03 fails on slot04's process" \
	sh -c 'case "$1" in "FAIL "*"process $2 (g3) of slot04, with its egid"*) ;; *) exit 1 ;; esac' _ "$row" "$held"

# ---- b. a user namespace of slot03's under its subordinate ids ----
userns=
if ! command -v newuidmap >/dev/null || ! command -v newgidmap >/dev/null; then
	echo "# SKIP part b: newuidmap/newgidmap (the uidmap package) are not installed"
	userns=skip
else
	echo "slot03:200000:1000" >>/etc/subuid
	echo "slot03:200000:1000" >>/etc/subgid
	# Inner 0 is slot03 itself, inner 1-1000 its range; the fd is opened as inner root, then the
	# process drops to inner uid 999 (200998 outside) and keeps it.
	as3 unshare --map-user=0 --map-group=0 --map-users=200000,1,1000 --map-groups=200000,1,1000 \
		sh -c "exec 3>>'$TREE/doc'; exec setpriv --reuid=999 --regid=999 --clear-groups \
			sh -c 'while sleep 0.2; do echo still-here >&3; done'" >/dev/null 2>"$S/userns.err" &
	wait_for pgrep -u 200998 >/dev/null
	sub=$(pgrep -u 200998 | head -n 1)
	if [ -z "$sub" ]; then
		cat "$S/userns.err"
		echo "# SKIP part b: slot03 could not map its range into a user namespace here"
		userns=skip
	fi
fi
if [ "$userns" != skip ]; then
	check "a process of slot03's user namespace runs as uid 200998" test -n "$sub"
	check "it holds an fd on alice's document" sh -c "ls -l /proc/$sub/fd/ | grep -q '$TREE/doc'"
fi

# ---- release slot03 ----
admin_run release alice
cat "$S/err"
check "release alice exits 0" test "$st" = 0
check "it says slot03 released" grep -q "slot03 released" "$S/out"
check "a: the process with egid slot03 is gone" not_alive "$held"
check "a: no live process carries slot03's gid" test "$(carriers "$G3")" = 0
check "a: slot04's bystander was never signalled" alive "$bystander"
check "slot04 is still assigned" test "$(table_entry slot04)" != null
if [ "$userns" != skip ]; then
	check "b: the process under uid 200998 is gone" not_alive "$sub"
	check "b: no live process runs as uid 200998" test "$(carriers 200998)" = 0
	size=$(stat -c %s "$TREE/doc")
	sleep 0.5
	check "b: nothing writes to alice's document after the release" test "$(stat -c %s "$TREE/doc")" = "$size"
	# The free slot03 still has its range (the fix is check's): a process in its namespace again.
	as3 unshare --map-user=0 --map-group=0 --map-users=200000,1,1000 --map-groups=200000,1,1000 \
		setpriv --reuid=999 --regid=999 --clear-groups sleep 100003 >/dev/null 2>&1 &
	wait_for pgrep -u 200998 -x sleep >/dev/null
	sub=$(pgrep -n -u 200998 -x sleep)
	check_case free-userns "process $sub (sleep) of 200998, in its user namespace"
	check "free-userns: the range is named too" sh -c 'case "$1" in *"subordinate uids 200000-200999"*) ;; *) exit 1 ;; esac' \
		_ "$row"
	kill -KILL "$sub"
fi
slots_done
