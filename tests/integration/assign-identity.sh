#!/bin/sh
# One rule for "this account is a good slot", the one check and provision apply, held by assign:
# each way a slot account can hand its user more than a slot (a group but its own and
# <prefix>shared, such as sudo or a docker-like group; a subordinate uid or gid range; a
# usable password as pam_unix reads it, the passwd field first; a shell but the configured
# one; another owner's subordinate range holding its uid or gid, as useradd hands them out; a
# second name of its uid; a member of its group only /etc/gshadow lists) is made on slot02,
# and `assign alice slot02` must refuse it: exit 1, the table
# unchanged, the fix named; the printed fix then clears it.  Without a slot asked for, the
# lowest free choice skips such a slot and says so (stderr and --json); a slot the user holds
# that breaks the rule is refused too, the assignment standing.  And check's
# password-locked row FAILs a hash in the passwd field beside `!` in shadow, which pam_unix
# accepts: the attacker (slot03, through pamtester) logs in as slot04 with it.
RELEASE_UID_MIN=48100
RELEASE_POOL=4
. "$top_srcdir/tests/integration/release-lib.sh"
for tool in pamtester openssl; do
	command -v "$tool" >/dev/null || { echo "SKIP: $tool is not installed"; exit 77; }
done

# A PAM service of pam_unix alone (Debian's common-auth line), in the namespace's /etc.
printf 'auth required pam_unix.so nullok\naccount required pam_permit.so\n' >/etc/pam.d/slots-unix
HASH=$(openssl passwd -6 -salt c2FsdHNhbHQ secret)
# unix_ok ACCOUNT: the attacker slot03 authenticates as ACCOUNT with the password "secret".
unix_ok() {
	printf 'secret\n' | runuser -u slot03 -- pamtester slots-unix "$1" authenticate >/dev/null 2>&1
}
passwd_field() {
	getent passwd "$1" | cut -d: -f2
}
set_passwd_field() {
	awk -F: -v OFS=: -v u="$1" -v f="$2" '$1 == u { $2 = f } { print }' /etc/passwd >"$S/passwd.new" &&
		cat "$S/passwd.new" >/etc/passwd
}
groupadd -r dockerish
useradd -M -s /bin/sh ops1
useradd -M -s /bin/sh ops3
U2=$(uid_of slot02)
G2=$(gid_of slot02)
# gshadow_member GROUP USER: USER joins GROUP's member list in /etc/gshadow only.
gshadow_member() {
	awk -F: -v OFS=: -v g="$1" -v u="$2" '$1 == g { $4 = $4 == "" ? u : $4 "," u } { print }' /etc/gshadow >"$S/gs" &&
		cat "$S/gs" >/etc/gshadow
}

# The attacks on slot02: NAME, the command that makes it, what the refusal says, the fix expected.
cat >"$S/cases" <<EOF
sudo|gpasswd -a slot02 sudo|slot02 is a member of sudo|gpasswd -d slot02 sudo
docker-like|gpasswd -a slot02 dockerish|slot02 is a member of dockerish|gpasswd -d slot02 dockerish
subuid|echo slot02:300000:65536 >>/etc/subuid|subordinate uids 300000-365535|usermod --del-subuids 300000-365535 slot02
subgid|echo slot02:400000:10 >>/etc/subgid|subordinate gids 400000-400009|usermod --del-subgids 400000-400009 slot02
passwd-hash|set_passwd_field slot02 '$HASH'|usable password hash (\$6\$) in its passwd entry|usermod -L slot02
passwd-empty|set_passwd_field slot02 ''|empty password field in its passwd entry|usermod -L slot02
shadow-hash|usermod -p '$HASH' slot02|usable password hash (\$6\$) in its shadow entry|usermod -L slot02
shell|usermod -s /bin/sh slot02|slot02 has shell /bin/sh, configured /usr/sbin/nologin|usermod -s /usr/sbin/nologin slot02
foreign-subuid|echo ops1:$((U2 - 1)):65536 >>/etc/subuid|ops1's subordinate uids $((U2 - 1))-$((U2 + 65534)) (/etc/subuid line|usermod --del-subuids $((U2 - 1))-$((U2 + 65534)) ops1
foreign-subgid|echo ops1:$G2:1 >>/etc/subgid|ops1's subordinate gids $G2-$G2 (/etc/subgid line|usermod --del-subgids $G2-$G2 ops1
alias|useradd -M -o -u $U2 -s /bin/sh ops2|account ops2 has slot02's uid $U2 too (/etc/passwd)|userdel ops2
gshadow-member|gshadow_member slot02 ops3|ops3 is a member of the group slot02 (/etc/gshadow)|gpasswd -d ops3 slot02
EOF

check "a good slot02: assign alice slot02 and release it" sh -c '"$0" --config "$1" assign alice slot02 >/dev/null &&
	"$0" --config "$1" release alice >/dev/null' "$SLOTS_ADMIN" "$CONF"
cp "$TABLE" "$S/table.before"
while IFS='|' read -r name make says want_fix; do
	eval "$make" >/dev/null
	case $name in passwd-*)
		check "$name: pam_unix takes slot02's passwd field: the attacker logs in as slot02" unix_ok slot02 ;;
	esac
	admin_run assign alice slot02
	echo "# $name: exit $st: $(cat "$S/err")"
	check "$name: assign alice slot02 exits 1" test "$st" = 1
	check "$name: the table is unchanged" cmp -s "$TABLE" "$S/table.before"
	check "$name: nothing on stdout" test ! -s "$S/out"
	check "$name: it says \"$says\"" grep -qF -- "$says" "$S/err"
	fix=$(sed -n 's/^slots-admin: fix: //p' "$S/err")
	check "$name: the fix is \"$want_fix\"" test "$fix" = "$want_fix"
	admin_run assign --json alice slot02
	check "$name: --json: exit 1, the error names slot02 and the fix" \
		json_ok '.changed == false and .error.object == "slot02" and .error.fix == "'"$want_fix"'"' "$S/out"
	eval "$fix" >/dev/null
	case $name in passwd-*)
		check_fails "$name: after the fix the attacker no longer logs in as slot02" unix_ok slot02 ;;
	esac
	admin_run assign alice slot02
	check "$name: after the fix assign alice slot02 exits 0 (exit $st)" test "$st" = 0
	admin_run release alice
	cp "$TABLE" "$S/table.before"
	# A locked passwd field is back to x (what provision makes).
	case $name in passwd-*) set_passwd_field slot02 x ;; esac
done <"$S/cases"

# ---- the lowest free choice skips a slot that fails the rule, and says so ----
gpasswd -a slot01 sudo >/dev/null
usermod -s /bin/sh slot02
admin_run assign carol
echo "# skip: exit $st: $(cat "$S/out") / $(cat "$S/err")"
check "skip: assign carol exits 0" test "$st" = 0
check "skip: carol gets slot03, the lowest good free slot" test "$(cat "$S/out")" = slot03
check "skip: it warns that slot01 was skipped, with the fix" sh -c \
	'grep -q "^slots-admin: warning: skipped slot01: .*slot01 is a member of sudo" "$1" &&
	 grep -qx "slots-admin: fix: gpasswd -d slot01 sudo" "$1"' _ "$S/err"
check "skip: and slot02" grep -q "^slots-admin: warning: skipped slot02: .*slot02 has shell /bin/sh" "$S/err"
check "skip: slot01 and slot02 stay free" sh -c '[ "$(jq -c ".slots.slot01, .slots.slot02" "$1")" = "null
null" ]' _ "$TABLE"
admin_run assign --json dave
check "skip: --json lists the skipped slots" json_ok '.slot == "slot04" and ([.skipped[].slot] == ["slot01", "slot02"])
	and .skipped[0].fix == "gpasswd -d slot01 sudo"' "$S/out"
cp "$TABLE" "$S/table.before"
admin_run assign erin
echo "# none good: exit $st: $(cat "$S/err")"
check "none good: assign erin exits 1" test "$st" = 1
check "none good: the table is unchanged" cmp -s "$TABLE" "$S/table.before"
check "none good: it says no free slot is a good slot" grep -q "no free slot is a good slot" "$S/err"
admin_run release carol
admin_run release dave
gpasswd -d slot01 sudo >/dev/null
usermod -s /usr/sbin/nologin slot02

# ---- check: a hash in the passwd field beside ! in shadow ----
check "assign bob slot04" prints slot04 admin assign bob slot04
set_passwd_field slot04 "$HASH"
check "the shadow entry of slot04 is still locked" sh -c 'getent shadow slot04 | cut -d: -f2 | grep -q "^!"'
check "the attack: the attacker logs in as slot04 with the passwd field's password" unix_ok slot04
admin_run check --json
row=$(jq -r '[.checks[] | select(.check == "password-locked" and .slot == "slot04")][0] |
	"\(.status) \(.detail) -- fix: \(.fix)"' "$S/out")
echo "# password-locked: $row"
check "check: password-locked FAILs for slot04" sh -c 'case "$1" in "FAIL "*"usable password hash (\$6\$) in its passwd entry"*) ;;
	*) exit 1 ;; esac' _ "$row"
check "check: the hash is not printed" sh -c '! grep -qF "$1" "$2"' _ "${HASH#\$6\$c2FsdHNhbHQ\$}" "$S/out"
eval "${row#* -- fix: }"
check_fails "after the fix the attacker no longer logs in as slot04" unix_ok slot04
admin_run check --json
check "after the fix password-locked passes for slot04" json_ok \
	'[.checks[] | select(.check == "password-locked" and .slot == "slot04")][0].status == "PASS"' "$S/out"
# An assigned slot that turns bad: check fails it, and the same assign again is refused (the
# assignment stands) until the fix.
gpasswd -a slot04 sudo >/dev/null
admin_run check --json
check "check: the account row of the assigned slot04 in sudo fails" json_ok \
	'[.checks[] | select(.check == "account" and .slot == "slot04")][0].status == "FAIL"' "$S/out"
cp "$TABLE" "$S/table.before"
admin_run assign bob
echo "# held: exit $st: $(cat "$S/err")"
check "held: assign bob again exits 1" test "$st" = 1
check "held: the table is unchanged (bob still holds slot04)" cmp -s "$TABLE" "$S/table.before"
check "held: the fix is named" grep -qx "slots-admin: fix: gpasswd -d slot04 sudo" "$S/err"
gpasswd -d slot04 sudo >/dev/null
check "held: after the fix assign bob prints slot04" prints slot04 admin assign bob
slots_done
