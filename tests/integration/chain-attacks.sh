#!/bin/sh
# What the owner chain and the temp walks of release cannot be steered by.
# Each attack is made as the attacker (runuser -u slotNN|svc) or set up by root the way a
# careless admin would, on a provisioned host in private namespaces; the test asserts the
# product's exit status, what it printed, and that nothing outside the intended tree changed.
#   A a POSIX ACL on a folder on the way to docs_root or app_root lets a slot write it (check's
#     row for the configured roots is check's own test)
#   B release's temp walk: a folder swapped for another account's folder between the look
#     and the act; a symlink, a FIFO, a hard link where the slot's folder was
#   B the service swaps the folder of slotctl_config for a symlink to /etc/sudoers.d
#   C the mailbox: a hard link to another file of the slot's, a FIFO, a symlink
RELEASE_POOL=4
. "$top_srcdir/tests/integration/release-lib.sh"
command -v setfacl >/dev/null || { echo "SKIP: setfacl is not installed (apt-get install acl)"; exit 77; }

# The service's own folder holds the app and the docs, as in walk-attacks.sh.
SV=$SLOTS_WORLD/srv
APP=$SV/app
D=$SV/docs
mkdir -p "$APP/releases/r5/bin" "$D/Workflow"
printf '#!/bin/sh\nexit 0\n' >"$APP/releases/r5/bin/vs-runner"
chown -R svc:svc "$SV"
chmod 0755 "$SV" "$APP" "$APP/releases" "$APP/releases/r5" "$APP/releases/r5/bin" "$APP/releases/r5/bin/vs-runner"
chmod 0751 "$D"
C=$S/attack.conf
cat >"$C" <<CONF
{
  "service": "svc",
  "slots": 4,
  "app_root": "$APP",
  "launcher": "vs-runner",
  "docs_root": "$D",
  "shared_dirs": ["Workflow"],
  "table": "$TABLE",
  "slotctl_config": "/etc/slots/slotctl.json"
}
CONF
adm() { "$SLOTS_ADMIN" --config "$C" "$@"; }
prov() { "$SLOTS_PROVISION" --config "$C" "$@"; }
# run CMD...: its stdout in $S/out, stderr in $S/err, exit status in $st.
run() {
	"$@" >"$S/out" 2>"$S/err"
	st=$?
	cat "$S/err"
}
check "provisioning the attack host works" quiet prov
U3=$(uid_of slot03)
G3=$(gid_of slot03)

# ---- A: writers only an ACL shows ----
# Each row: where the ACL goes, the entry, and what the refusal must name.
for row in "$SV u:slot03:rwx user:$U3 u:$U3" "$D u:slot03:rwx user:$U3 u:$U3" \
	"$APP g:slot03:rwx group:$G3 g:$G3" "$D g:slotshared:rwx group:$(gid_of slotshared) g:$(gid_of slotshared)"; do
	set -- $row
	where=$1 entry=$2 who=$3 fixid=$4
	setfacl -m "$entry" "$where"
	run prov
	check "ACL $entry on $where: provision exits 1" test "$st" = 1
	check "ACL $entry on $where: provision names the folder and the entry" \
		grep -q "$where: .*its ACL lets $(echo "$who" | tr : ' ') write" "$S/err"
	check "ACL $entry on $where: provision gives the fix" grep -qF "fix: setfacl -x $fixid $where" "$S/err"
	case $where in
	"$APP") ;;	# assign never opens app_root
	*)
		run adm assign bob
		check "ACL $entry on $where: assign bob exits 1" test "$st" = 1
		check "ACL $entry on $where: assign names the folder and the fix" \
			grep -qF "fix: setfacl -x $fixid $where" "$S/err"
		check "ACL $entry on $where: no tree was made for bob" test ! -e "$D/_users/bob"
		;;
	esac
	setfacl -b "$where"
done
# The other side of the rule: an entry the mask takes write from, or the service's own.
setfacl -m u:slot03:rwx,m::r-x "$SV"
run prov
check "ACL u:slot03:rwx with mask r-x: provision passes" test "$st" = 0
setfacl -b "$SV"
setfacl -m u:svc:rwx "$D"
run prov
check "ACL u:svc:rwx on docs_root (the service itself): provision passes" test "$st" = 0
run adm assign bob
check "ACL u:svc:rwx on docs_root: assign bob works" test "$st" = 0 -a "$(cat "$S/out")" = slot01
check "release bob" quiet adm release bob
setfacl -b "$D"

# ---- B: the folder of the slotctl config, where provision writes as root ----
# The admin put slotctl_config in a folder the service owns; the service swaps it for a
# symlink to /etc/sudoers.d, or just keeps it: root's file there is the service's to replace.
CTL=$SLOTS_WORLD/ctl
mkdir -p "$CTL"
chown svc:svc "$CTL"
sed "s|/etc/slots/slotctl.json|$CTL/slotctl.json|" "$C" >"$S/ctl.conf"
ls -la /etc/sudoers.d /etc >"$S/sudoers.before" 2>&1
# row: how the folder is held, what the refusal says, the fix
for row in "folder|owned by uid $(uid_of svc), not by root|fix: chown root $CTL" \
	"symlink|is a symbolic link (to /etc/sudoers.d)|fix: replace the link $CTL"; do
	how=${row%%|*} rest=${row#*|}
	say=${rest%%|*} fix=${rest#*|}
	# (root swaps it here: the folder above is root's in this world; the service does the same in its own)
	[ "$how" = symlink ] && mv "$CTL" "$CTL.real" && ln -s /etc/sudoers.d "$CTL" && chown -h svc:svc "$CTL"
	run "$SLOTS_PROVISION" --config "$S/ctl.conf"
	check "slotctl_config in a $how the service holds: provision exits 1" test "$st" = 1
	check "slotctl_config in a $how the service holds: the refusal names $CTL and why" \
		grep -qF "$CTL: $say" "$S/err"
	check "slotctl_config in a $how the service holds: the fix" grep -qF "$fix" "$S/err"
	check "slotctl_config in a $how the service holds: nothing written there" \
		test ! -e "$CTL/slotctl.json" -a ! -e "$CTL/slotctl.json.lock"
	ls -la /etc/sudoers.d /etc >"$S/sudoers.after" 2>&1
	check "slotctl_config in a $how the service holds: /etc and /etc/sudoers.d as before" \
		cmp -s "$S/sudoers.before" "$S/sudoers.after"
done
rm "$CTL"
mv "$CTL.real" "$CTL"
chown root:root "$CTL"
run "$SLOTS_PROVISION" --config "$S/ctl.conf"
check "slotctl_config in a folder of root's: provision writes it" test "$st" = 0 -a -f "$CTL/slotctl.json"

# ---- C: the mailbox ----
# A spool open to all (1777, as older hosts keep /var/mail): the slot names its own file,
# a FIFO or a symlink as its mailbox.  Release empties a mailbox only when it is a regular
# file of the slot's with one link; anything else of the slot's there loses its name only.
mount -t tmpfs -o mode=1777 tmpfs /var/mail || { echo "Bail out! cannot mount a tmpfs on /var/mail"; exit 99; }
echo "root's" >/var/mail/root-file
chmod 0644 /var/mail/root-file
# row: what slot03 leaves as /var/mail/slot03, set up as slot03
for row in "hard link|echo keep me >/var/mail/keep && ln /var/mail/keep /var/mail/slot03" \
	"FIFO|mkfifo /var/mail/slot03" \
	"symlink|ln -s /var/mail/root-file /var/mail/slot03" \
	"mailbox|echo old mail >/var/mail/slot03"; do
	what=${row%%|*} make=${row#*|}
	check "assign carol slot03 ($what)" prints slot03 adm assign carol slot03
	check "as slot03: the $what is made at /var/mail/slot03" \
		sh -c 'runuser -u slot03 -- sh -c "$1" && { [ -e /var/mail/slot03 ] || [ -L /var/mail/slot03 ]; }' _ "$make"
	before=$(sha256sum /var/mail/root-file)
	run timeout 60 "$SLOTS_ADMIN" --config "$C" release carol
	check "mailbox as a $what: release exits 0 (and never blocks)" test "$st" = 0
	check "mailbox as a $what: root's file is as before" test "$(sha256sum /var/mail/root-file)" = "$before"
	case $what in
	"hard link")
		check "mailbox as a hard link: the other name keeps its content" test "$(cat /var/mail/keep)" = "keep me"
		check "mailbox as a hard link: the slot's name is gone" test ! -e /var/mail/slot03
		rm -f /var/mail/keep ;;
	mailbox)
		check "a real mailbox stays, empty, the slot's" \
			test -f /var/mail/slot03 -a ! -s /var/mail/slot03 -a "$(stat -c %U /var/mail/slot03)" = slot03
		rm -f /var/mail/slot03 ;;
	*)
		check "mailbox as a $what: the name is gone" test ! -e /var/mail/slot03 -a ! -L /var/mail/slot03 ;;
	esac
done

slots_done
