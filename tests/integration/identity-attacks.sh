#!/bin/sh
# A slot's identity cannot outlive its release: each attack is run as the attacker (runuser -u
# slotNN) in the test's namespaces, and release must end every process that carries any of
# slot03's identity (its uid, its group, a user namespace it owns), never another's process.
#   a. slot03 leaves a set-group-ID copy of a program (group slot03) in /var/tmp; slot04 runs it
#      and keeps a process with egid slot03.
#   b. slot03 has a range in /etc/subuid and /etc/subgid (the namespace's copy), maps itself into
#      a user namespace with newuidmap/newgidmap and runs a process as a subordinate uid that
#      holds an fd on the user's document.
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

check "assign alice slot03" prints slot03 admin assign alice slot03
as3 sh -c "echo alice-secret >'$TREE/doc'"
check "slot03 wrote alice's document" grep -q alice-secret "$TREE/doc"

# ---- a. a set-gid program of slot03's group, run by slot04 ----
check "assign bob slot04" prints slot04 admin assign bob slot04
as3 sh -c 'cp /bin/sleep /var/tmp/g3 && chmod 2755 /var/tmp/g3'
check "slot03 made a set-gid copy in /var/tmp" test "$(stat -c '%G %a' /var/tmp/g3)" = "slot03 2755"
as4 /var/tmp/g3 100000 &
as4 sleep 100000 &
sleep 0.5
held=$(pgrep -u "$U4" -f 'g3 100000' | head -n 1)
bystander=$(pgrep -u "$U4" -x sleep | head -n 1)
check "slot04 runs a process with egid slot03" sh -c "[ -n '$held' ] && grep -q '^Gid:.*	$G3	' /proc/$held/status"
check "slot04 runs a bystander without slot03's group" test -n "$bystander"

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
	sleep 1
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
fi
slots_done
