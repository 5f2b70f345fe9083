#!/bin/sh
# A slot's identity as slots-provision plans it (identity.c's verdict): a subordinate uid or gid
# range, a group but its own and <prefix>shared (the service's, sudo), a usable or empty
# password, another shell.  Each is a conflict naming its fix, under --root (the tree's
# etc/subuid and etc/subgid) and on the live host (in a private namespace); nothing changes.
# And the slot's identity held by another account, on every run, not only at creation: another
# owner's subordinate range holding a slot's uid (useradd's defaults), a second name of a slot's
# uid or gid, a member of a slot's group that only gshadow lists: each a conflict, never
# "0 changes".
. "$top_srcdir/tests/integration/lib.sh"
slots_need_root
slots_enter_namespace "$@"

S=$SLOTS_SCRATCH
R=$S/root
mkdir -p "$R/etc"
for f in passwd group shadow gshadow; do cp "$top_srcdir/tests/provision/initial-$f" "$R/etc/$f"; done
cat >"$S/slots.conf" <<'CONF'
{"service": "svc", "slots": 4, "uid_min": 20000, "uid_max": 20099, "shell": "/usr/sbin/nologin"}
CONF
"$SLOTS_PROVISION" --root "$R" --config "$S/slots.conf" >"$S/out0" 2>"$S/err0"
check "the pool is made in the tree" test $? = 0
uid3=$(awk -F: '$1 == "slot03" { print $3 }' "$R/etc/passwd")
check "slot03 has a uid" test -n "$uid3"

# The shapes image tools and hand "fixes" leave (useradd's ranges, a group for the launcher).
echo "slot01:100000:65536" >"$R/etc/subuid"
echo "$uid3:200000:1000" >>"$R/etc/subuid"
echo "slot01:100000:65536" >"$R/etc/subgid"
sed -i 's/^svc:x:1000:$/svc:x:1000:slot02/' "$R/etc/group"
echo "sudo:x:27:slot04" >>"$R/etc/group"
sed -i 's/^slot03:!:/slot03:$6$salt$hash:/' "$R/etc/shadow"
sed -i 's/^slot04:!:/slot04::/' "$R/etc/shadow"
sed -i 's|^\(slot02:.*:\)/usr/sbin/nologin$|\1/bin/bash|' "$R/etc/passwd"
(cd "$R/etc" && md5sum passwd group shadow gshadow subuid subgid) >"$S/sums"
"$SLOTS_PROVISION" --root "$R" --config "$S/slots.conf" >"$S/out" 2>"$S/err"
st=$?
cat "$S/err"
check "refused (exit 1, got $st)" test "$st" = 1
check "slot01's ranges: a conflict" grep -q "conflict: slot01 has subordinate uids 100000-165535 (/etc/subuid) and gids 100000-165535 (/etc/subgid)" "$S/err"
check "slot01's ranges: the fix" grep -q "fix: usermod --del-subuids 100000-165535 --del-subgids 100000-165535 slot01\$" "$S/err"
check "slot03's range by uid: a conflict" grep -q "conflict: slot03 has subordinate uids 200000-200999" "$S/err"
check "slot02 in the service's group: a conflict" grep -q "conflict: slot02 is a member of svc" "$S/err"
check "slot02 in the service's group: the fix" grep -q "fix: gpasswd -d slot02 svc\$" "$S/err"
check "slot04 in sudo: the fix" grep -q "fix: gpasswd -d slot04 sudo\$" "$S/err"
check "slot03's usable password: a conflict" grep -q "conflict: slot03 has a usable password" "$S/err"
check "slot04's empty password: a conflict, fixed by usermod -L" \
	sh -c 'grep -q "conflict: slot04 has an empty password field" "$1" && grep -q "fix: usermod -L slot04\$" "$1"' - "$S/err"
check "slot02's shell: a conflict" grep -q "conflict: slot02 has shell /bin/bash, configured /usr/sbin/nologin" "$S/err"
check "the count of conflicts" grep -q "refused: 7 conflicts found; nothing was changed" "$S/err"
check "nothing was changed in the tree" sh -c "cd '$R/etc' && md5sum -c --quiet '$S/sums'"

# The live host: /etc/subuid names a slot (as useradd gives a non-system account).
echo 'svc:x:1990:1990:the service:/nonexistent:/bin/sh' >>/etc/passwd
echo 'svc:x:1990:' >>/etc/group
echo 'svc:!:20000::::::' >>/etc/shadow
echo 'svc:!::' >>/etc/gshadow
cat >"$S/host.conf" <<'CONF'
{"service": "svc", "slots": 2, "table": "/etc/slots/slots.json", "slotctl_config": "/etc/slots/slotctl.json"}
CONF
"$SLOTS_PROVISION" --config "$S/host.conf" >"$S/hout0" 2>"$S/herr0"
check "the host's pool is made" test $? = 0
echo "slot02:300000:65536" >>/etc/subgid
"$SLOTS_PROVISION" --config "$S/host.conf" >"$S/hout" 2>"$S/herr"
st=$?
check "on the host, slot02's subordinate gids refuse the run (exit 1, got $st)" test "$st" = 1
check "and name the fix" grep -q "fix: usermod --del-subgids 300000-365535 slot02\$" "$S/herr"
sed -i '/^slot02:300000:65536$/d' /etc/subgid
"$SLOTS_PROVISION" --config "$S/host.conf" >"$S/hout2" 2>"$S/herr2"
check "with the range removed: 0 changes" test "$(cat "$S/hout2")" = "0 changes"

# Another account holds a slot's identity: each row is NAME|what makes it|the conflict|the fix|what undoes it.
# gshadow_member GROUP USER: USER joins GROUP's member list in /etc/gshadow only.
gshadow_member() {
	awk -F: -v OFS=: -v g="$1" -v u="$2" '$1 == g { $4 = $4 == "" ? u : $4 "," u } { print }' /etc/gshadow >"$S/gs" &&
		cat "$S/gs" >/etc/gshadow
}
hu2=$(id -u slot02)
hg2=$(getent group slot02 | cut -d: -f3)
cat >"$S/held" <<EOF
foreign-subuid|echo ops1:$((hu2 - 1)):65536 >>/etc/subuid|ops1's subordinate uids $((hu2 - 1))-$((hu2 + 65534)) (/etc/subuid line|usermod --del-subuids $((hu2 - 1))-$((hu2 + 65534)) ops1|
foreign-subgid|echo ops1:$((hg2 - 1)):10 >>/etc/subgid|ops1's subordinate gids $((hg2 - 1))-$((hg2 + 8)) (/etc/subgid line|usermod --del-subgids $((hg2 - 1))-$((hg2 + 8)) ops1|
alias|echo ops2:x:$hu2:$hg2::/nonexistent:/bin/sh >>/etc/passwd|conflict: slot02: account ops2 has slot02's uid $hu2 too (/etc/passwd)|userdel ops2|sed -i /^ops2:/d /etc/passwd
alias-group|echo grp2:x:$hg2: >>/etc/group|conflict: slot02: group grp2 has slot02's gid $hg2 too (/etc/group)|groupdel -f grp2|sed -i /^grp2:/d /etc/group
gshadow-member|gshadow_member slot02 ops1|conflict: slot02: ops1 is a member of the group slot02 (/etc/gshadow)|gpasswd -d ops1 slot02|gpasswd -d ops1 slot02
EOF
echo 'ops1:x:1991:1991::/nonexistent:/bin/sh' >>/etc/passwd
echo 'ops1:x:1991:' >>/etc/group
while IFS='|' read -r name make says want_fix undo; do
	eval "$make"
	"$SLOTS_PROVISION" --config "$S/host.conf" >"$S/hout" 2>"$S/herr"
	st=$?
	echo "# $name: exit $st: $(cat "$S/herr")"
	check "$name: the run is refused (exit 1, got $st)" test "$st" = 1
	check "$name: not \"0 changes\"" sh -c '! grep -qx "0 changes" "$1"' _ "$S/hout"
	check "$name: it says \"$says\"" grep -qF -- "$says" "$S/herr"
	check "$name: the fix is \"$want_fix\"" grep -qxF "slots-provision: fix: $want_fix" "$S/herr"
	case $name in foreign-*) eval "$want_fix" ;; *) eval "$undo" ;; esac
	"$SLOTS_PROVISION" --config "$S/host.conf" >"$S/hout2" 2>"$S/herr2"
	check "$name: undone, 0 changes" test "$(cat "$S/hout2")" = "0 changes"
done <"$S/held"
slots_done
