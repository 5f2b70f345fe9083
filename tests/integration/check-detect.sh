#!/bin/sh
# slots-admin check on broken hosts: each break is found with a FAIL line whose fix, applied as
# printed, repairs it (check passes again); every run changes nothing and shows no user id.
. "$top_srcdir/tests/integration/lib.sh"
slots_need_root
slots_enter_namespace "$@"
. "$top_srcdir/tests/integration/check-lib.sh"

check_fixture

# detect NAME CHECK [SLOT] [check options]: check finds the break; sets FIX to the printed fix.
detect() {
	name=$1 c=$2 s=$3
	shift 3
	fixture_snapshot >"$OUT/$name.before"
	run_check "$name" "$@"
	fixture_snapshot >"$OUT/$name.after"
	check_rc "$name: check exits 1" 1 "$name"
	FIX=$(fix_of "$name" "$c" "$s")
	check "$name: a 'FAIL $c${s:+ $s}: ... -- fix: ...' line" test -n "$FIX"
	[ -n "$FIX" ] || show "$name"
	check "$name: its row is FAIL" test "$(row_status "$name" "$c" "$s")" = FAIL
	check "$name: the closing line counts the failures" \
		sh -c "tail -n 1 '$OUT/$name.out' | grep -Eq '^slot self-check: [0-9]+ passed, [1-9][0-9]* failed, [0-9]+ warned, [0-9]+ skipped$'"
	check "$name: check changed nothing" cmp -s "$OUT/$name.before" "$OUT/$name.after"
	check "$name: no user id in the output" no_user_ids "$OUT/$name.out" "$OUT/$name.err"
	echo "# fix: $FIX"
}

# repaired NAME: after the fix, every row passes again.
repaired() {
	run_check "$1.fixed"
	check_rc "$1: after the printed fix, check exits 0" 0 "$1.fixed"
}

# Applies a slotctl fix as printed: 'add "VALUE" to "KEY" there'.
apply_slotctl_fix() {
	python3 - "$SLOTCTL" "$1" <<'EOF'
import json, re, sys
path, fix = sys.argv[1], sys.argv[2]
m = re.search(r'add "([^"]+)" to "(\w+)" there', fix)
assert m, fix
doc = json.load(open(path))
doc.setdefault(m.group(2), []).append(m.group(1))
with open(path, "w") as f:
    json.dump(doc, f, indent=2, sort_keys=True)
    f.write("\n")
EOF
}

run_check base
check_rc "the fixture passes" 0 base

# The outage: the table root:root; the service can no longer read it.
chgrp root "$TABLE"
detect table-root table ""
check "table-root: the service account's read is what fails" grep -q "$SERVICE cannot read it" "$OUT/table-root.out"
check "table-root: the fix is chgrp" test "$FIX" = "chgrp $SERVICE $TABLE"
sh -c "$FIX"
repaired table-root

# releases/ 0700: no slot reaches the launcher.
chmod 0700 "$APP/releases"
detect releases runner-reachable slot01
for s in slot03 slot05 slot08; do
	check "releases: $s fails too" test "$(row_status releases runner-reachable $s)" = FAIL
done
check "releases: the fix names the folder" test "$FIX" = "chmod o+x $APP/releases"
sh -c "$FIX"
repaired releases

# allowed_cwd without the docs root.
python3 - "$SLOTCTL" <<'EOF'
import json, sys
d = json.load(open(sys.argv[1])); d["allowed_cwd"] = ["/srv/elsewhere", "/var/lib/slots/vstudio/state"]
open(sys.argv[1], "w").write(json.dumps(d, indent=2, sort_keys=True) + "\n")
EOF
detect cwd slotctl-config ""
check "cwd: the detail names allowed_cwd" grep -q 'allowed_cwd does not cover the docs root' "$OUT/cwd.out"
check "cwd: the enforcing slotctl refuses the chain in the docs root" \
	grep -q "^FAIL chain slot08: in $DOCS: the launcher exits 126: slotctl: $DOCS is outside the allowed folders" \
	"$OUT/cwd.out"
apply_slotctl_fix "$FIX"
repaired cwd

# allowed_cwd without the slots' state folders (where a run starts without docs_root).
python3 - "$SLOTCTL" <<'EOF'
import json, sys
d = json.load(open(sys.argv[1])); d["allowed_cwd"] = [c for c in d["allowed_cwd"] if not c.endswith("/state")]
open(sys.argv[1], "w").write(json.dumps(d, indent=2, sort_keys=True) + "\n")
EOF
detect cwd-state slotctl-config ""
check "cwd-state: the detail names the state folders" \
	grep -q 'allowed_cwd does not cover the slots. state folders /var/lib/slots/vstudio/state' "$OUT/cwd-state.out"
apply_slotctl_fix "$FIX"
repaired cwd-state

# allowed_exec without the launcher.
python3 - "$SLOTCTL" <<'EOF'
import json, sys
d = json.load(open(sys.argv[1])); d["allowed_exec"] = ["/usr/bin/true"]
open(sys.argv[1], "w").write(json.dumps(d, indent=2, sort_keys=True) + "\n")
EOF
detect exec slotctl-config ""
check "exec: the detail names the launcher" grep -q "allowed_exec does not name the launcher $LAUNCHER" "$OUT/exec.out"
apply_slotctl_fix "$FIX"
repaired exec

# A private path at 0755: every slot can reach it.
chmod 0755 "$APP/state"
detect private private-unreachable slot08
check "private: the fix takes the other bits away" test "$FIX" = "chmod o-rwx $APP/state"
sh -c "$FIX"
repaired private

# An ACL entry u:slot01:--- above the launcher: the mode bits alone would pass it.
setfacl -m u:slot01:--- "$APP"
check "acl: $APP is still 0755 by its mode bits" test "$(stat -c %a "$APP")" = 755
detect acl runner-reachable slot01
check "acl: slot03 still reaches the launcher" test "$(row_status acl runner-reachable slot03)" = PASS
check "acl: the detail names the ACL entry" grep -q "ACL entry user:slot01:--- on $APP" "$OUT/acl.out"
check "acl: the fix removes the entry" test "$FIX" = "setfacl -x u:slot01 $APP"
sh -c "$FIX"
repaired acl

# The modes and ACLs allow the launcher but the kernel refuses it (a noexec mount): the probe
# wins and the row says so.
cp -p "$LAUNCHER" "$OUT/run.keep"
mount -t tmpfs -o noexec,mode=0755 tmpfs "$APP/releases/$RELEASE/bin"
cp -p "$OUT/run.keep" "$LAUNCHER"
detect noexec runner-reachable slot01
check "noexec: the row says the probe wins" grep -q 'FAIL runner-reachable slot01: .*the probe wins' "$OUT/noexec.out"
check "noexec: the fix points at the mount options" sh -c "echo '$FIX' | grep -q 'findmnt -T'"
umount "$APP/releases/$RELEASE/bin"
repaired noexec

# The release in use: with current pointing at the good release, a broken older one does not
# matter; without current, every release is in use and the broken one fails.
install -d -m 0755 -o $SERVICE -g $SERVICE "$APP/releases/2026.09.3" "$APP/releases/2026.09.3/bin"
cp -p "$LAUNCHER" "$APP/releases/2026.09.3/bin/run"
chmod 0700 "$APP/releases/2026.09.3"
run_check old-release
check_rc "a broken release that current does not point at is not checked" 0 old-release
mv "$APP/current" "$OUT/current.keep"
detect no-current runner-reachable slot03
check "no-current: the failing launcher is the old release's" \
	grep -q "FAIL runner-reachable slot03: slot03 cannot run $APP/releases/2026.09.3/bin/run" "$OUT/no-current.out"
mv "$OUT/current.keep" "$APP/current"
rm -r "$APP/releases/2026.09.3"
repaired no-current

# app_root reached through a symlink: refused, as slots-provision refuses it; the
# row names the link.  (tests/integration/check-roots.sh has the service's own swaps.)
ln -s srv "$SLOTS_SCRATCH/srv-link"
sed -i "s|\"app_root\": \"$APP\"|\"app_root\": \"$SLOTS_SCRATCH/srv-link/app\"|" "$CONF"
detect via-link roots ""
check "via-link: the row names the link" grep -q "^FAIL roots: .*$SLOTS_SCRATCH/srv-link: is a symbolic link" \
	"$OUT/via-link.out"
sed -i "s|\"app_root\": \"$SLOTS_SCRATCH/srv-link/app\"|\"app_root\": \"$APP\"|" "$CONF"
rm "$SLOTS_SCRATCH/srv-link"
repaired via-link
# A folder above the launcher that the slots cannot search is named in the fix.
chmod 0700 "$SLOTS_SCRATCH/srv"
detect srv-closed runner-reachable slot05
check "srv-closed: the fix names the folder" test "$FIX" = "chmod o+x $SLOTS_SCRATCH/srv"
sh -c "$FIX"
repaired srv-closed

# A slot password that is not locked.
hash=$(openssl passwd -6 not-locked)
usermod -p "$hash" slot03
detect password password-locked slot03
check "password: the hash is not printed" sh -c "! grep -qF '$hash' '$OUT/password.out'"
check "password: the fix locks it" test "$FIX" = "usermod -L slot03"
sh -c "$FIX"
repaired password

# A missing config: one FAIL row and the closing line.
mv "$CONF" "$CONF.away"
detect config config ""
check "config: a single row, then the closing line" \
	test "$(grep -c '^FAIL ' "$OUT/config.out")" = 2 -a "$(tail -n 1 "$OUT/config.out")" = \
	"slot self-check: 0 passed, 1 failed, 0 warned, 0 skipped"
check "config: the fix says to create it" sh -c "echo '$FIX' | grep -q '^create it'"
mv "$CONF.away" "$CONF"
repaired config
run_check config-named --config /nonexistent/slots.conf
check_rc "a missing --config file fails the check" 1 config-named
check "it names the file" grep -q '^FAIL config: /nonexistent/slots.conf' "$OUT/config-named.out"

# A user's tree open to others: its slot fails, and every other slot can list it.  The fix
# names the tree as <docs>/_users/<user>; the admin fills in the user.
chmod o+rx "$DOCS/_users/$USER_B"
detect tree user-tree slot03
run_check tree-json --json
for s in slot01 slot05 slot08; do
	check "tree: $s can list it, and fails" test "$(row_status tree user-tree $s)" = FAIL
done
check "tree: the --json rows say the same, with no user id" python3 - "$OUT/tree-json.out" "$USERS" <<'EOF'
import json, sys
text = open(sys.argv[1]).read()
assert not any(u in text for u in sys.argv[2].split()), "a user id in the JSON"
d = json.loads(text)
fails = {(r["check"], r["slot"]) for r in d["checks"] if r["status"] == "FAIL"}
assert fails == {("user-tree", s) for s in ("slot01", "slot03", "slot05", "slot08")}, fails
assert all(r["fix"] for r in d["checks"] if r["status"] == "FAIL")
assert d["failed"] == 4 and d["ok"] is False
EOF
check_rc "tree: --json exits 1 too" 1 tree-json
sh -c "$(echo "$FIX" | sed "s| (<user>: [^)]*)||g; s|<docs>|$DOCS|g; s|<user>|$USER_B|g")"
repaired tree

# A table that names a slot outside the pool, and one that does not parse next to a user id:
# found, with the line, and the user id still not shown.
cp -p "$TABLE" "$OUT/table.good"
python3 - "$TABLE" <<'EOF'
import json, sys
d = json.load(open(sys.argv[1]))
d["slots"]["slot09"] = {"since": "2026-10-01T09:12:00Z", "user": "zz-outside-user"}
open(sys.argv[1], "w").write(json.dumps(d, indent=2, sort_keys=True) + "\n")
EOF
USERS="$USERS zz-outside-user"
detect outside table ""
check "outside: says a slot is outside the pool" \
	grep -q 'does not parse at .*slots.json:[0-9]*:[0-9]* (a slot outside the pool)' "$OUT/outside.out"
printf '{"version": 1, "slots": {"slot01": {"user": "%s" "since": 1}}}\n' "$USER_A" >"$TABLE"
detect garbled table ""
cp -p "$OUT/table.good" "$TABLE"
repaired table-restored

# The sudoers drop-in gone: the preflight fails within its time limit.
mv "$SUDOERS" "$OUT/sudoers.away"
detect sudo sudo-preflight slot08
check "sudo: sudo's own message is shown" grep -q 'sudo-preflight slot08: .*password is required' "$OUT/sudo.out"
check "sudo: sudoers-dropin says the file is missing, fix slots-provision" \
	grep -q "^FAIL sudoers-dropin: $SUDOERS does not exist -- fix: slots-provision " "$OUT/sudo.out"
check "sudo: sudo-grants finds no rule for the service" \
	grep -q "^FAIL sudo-grants: sudo -n -l -U $SERVICE lists no rule that lets $SERVICE run a command as another account (\"User $SERVICE is not allowed" "$OUT/sudo.out"
mv "$OUT/sudoers.away" "$SUDOERS"
repaired sudo

# No sudo at all: the preflight is skipped with the reason.
: >"$OUT/no-sudo"
mount --bind "$OUT/no-sudo" /usr/bin/sudo
run_check nosudo
umount /usr/bin/sudo
check_rc "no sudo: check exits 0" 0 nosudo
check "no sudo: the test slot's preflight skips with the reason" \
	test "$(grep -c '^SKIP  *sudo-preflight  *slot08  *sudo is not installed' "$OUT/nosudo.out")" = 1
check "no sudo: sudoers-dropin and sudo-grants skip with the reason" \
	test "$(grep -c '^SKIP  *\(sudoers-dropin\|sudo-grants\)  *-  *sudo is not installed' "$OUT/nosudo.out")" = 2

# A release left pending.
python3 - "$TABLE" <<'EOF'
import json, sys
d = json.load(open(sys.argv[1]))
d["slots"]["slot06"] = {"cleanup": "pending", "released": "2026-10-02T10:00:00Z"}
open(sys.argv[1], "w").write(json.dumps(d, indent=2, sort_keys=True) + "\n")
EOF
detect pending pending-cleanup slot06
check "pending: the fix finishes the release" test "$FIX" = "slots-admin release --slot slot06"
"$SLOTS_ADMIN" release --slot slot06 >"$OUT/release.out" 2>&1 || sed 's/^/# /' "$OUT/release.out"
repaired pending

# The incident's third layer: a launcher that stats an app-private path (a browser
# profile) fails for every slot.  check runs the real chain as the service and fails,
# quoting the launcher's first stderr line with its control bytes escaped.
cp "$LAUNCHER" "$OUT/launcher.good"
printf '#!/bin/sh\nstat %s >/dev/null 2>&1 || { printf "cannot stat the profile\\033[31m\\n" >&2; exit 3; }\nexec "$@"\n' \
	"$APP/state/profile" >"$LAUNCHER"
detect launcher chain slot01
check "launcher: the row quotes the launcher's first stderr line, escaped" \
	grep -qF 'exits 3: cannot stat the profile\033[31m' "$OUT/launcher.out"
check "launcher: no raw ESC reaches the terminal" sh -c "! grep -q \"\$(printf '\\033')\" '$OUT/launcher.out'"
# The same as the service account, the way the deploy self-test runs it.
chmod 0755 "$OUT"
runuser -u "$SERVICE" -- "$SLOTS_ADMIN" check >"$OUT/launcher-svc.out" 2>"$OUT/launcher-svc.err"
echo $? >"$OUT/launcher-svc.rc"
check_rc "launcher, as $SERVICE: check exits 1" 1 launcher-svc
check "launcher, as $SERVICE: the chain row is FAIL with the message" \
	grep -qF 'exits 3: cannot stat the profile\033[31m' "$OUT/launcher-svc.out"
cp "$OUT/launcher.good" "$LAUNCHER"
repaired launcher

# The service account in a slot's group: it could reach that slot's files.
gpasswd -a "$SERVICE" slot02 >/dev/null
detect apart service-apart ""
check "apart: the fix removes the membership" test "$FIX" = "gpasswd -d $SERVICE slot02"
gpasswd -d "$SERVICE" slot02 >/dev/null
repaired apart

slots_done
