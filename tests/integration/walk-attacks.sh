#!/bin/sh
# Issue 13: the root walks (provision, assign, release) cannot be steered by a slot or the
# service.  Each attack is made as the attacker (runuser -u slotNN|svc), on a provisioned host in
# private namespaces, and the test asserts the product's exit status, what it printed, and that
# nothing outside the intended tree changed (snapshots of type, owner, mode, ACL and sha256).
#   1 a slot hard-links a shared file and a root file into its user's tree
#   2 the service swaps docs_root for a symlink to /etc or /etc/sudoers.d; a folder on the way
#     writable by others
#   3 the service hard-links a private file as the launcher
#   4 a slot makes its user's tree 1,005 levels deep; a pending slot's walk goes through it
#   5 folder names with ESC ] 0 ; ... BEL, ESC [ 2K and CR reach the terminal
#   6 a user_tree that can name a shared folder
#   7 a slot hides a hard link 70 folders deep in a shared folder
# (The table lock during cleanup is tested with the release code.)
RELEASE_POOL=4
. "$top_srcdir/tests/integration/release-lib.sh"
command -v python3 >/dev/null || { echo "SKIP: python3 is not installed"; exit 77; }

SNAP="$top_srcdir/tests/reliability/snap.py"
P=$S/snaps
mkdir -p "$P"
# snap NAME ROOT / same NAME ROOT: the tree under ROOT is exactly as when NAME was taken.
snap() { python3 "$SNAP" save "$2" "$P/$1.before"; }
same() {
	python3 "$SNAP" save "$2" "$P/$1.after" && python3 "$SNAP" same "$P/$1.before" "$P/$1.after"
}
# same_etc NAME: /etc is as in snapshot NAME but for slots/ (the table: an assignment stands).
same_etc() {
	python3 "$SNAP" save /etc "$P/$1.after" && python3 - "$P/$1.before" "$P/$1.after" <<'PY'
import json, sys
a, b = (json.load(open(f)) for f in sys.argv[1:3])
strip = lambda s: {k: v for k, v in s.items() if not k.startswith("slots/")}
a, b = strip(a), strip(b)
bad = [k for k in sorted(set(a) | set(b)) if a.get(k) != b.get(k)]
for k in bad:
    print("%s: %s != %s" % (k, a.get(k), b.get(k)))
sys.exit(1 if bad or not a else 0)
PY
}
# no_raw FILE: no ESC, BEL or CR byte in FILE.
no_raw() {
	! LC_ALL=C grep -q "$(printf '[\033\007\r]')" "$1"
}

# The service's own folder holds the app and the docs: the service can swap anything below it.
SV=$S/srv
APP=$SV/app
D=$SV/docs
mkdir -p "$SV" "$APP/releases/r5/bin" "$D/Workflow/wf1" "$S/victims"
echo "SECRET=1" >"$APP/.env"
printf '#!/bin/sh\nexit 0\n' >"$APP/releases/r5/bin/vs-runner"
echo "the plan" >"$D/Workflow/wf1/plan.txt"
chown -R svc:svc "$SV"
chmod 0755 "$SV" "$APP" "$APP/releases" "$APP/releases/r5" "$APP/releases/r5/bin"
chmod 0600 "$APP/.env"
chmod 0751 "$D"
chmod 0770 "$D/Workflow" "$D/Workflow/wf1"
chmod 0660 "$D/Workflow/wf1/plan.txt"
echo "root only" >"$S/victims/root.conf"
chmod 0600 "$S/victims/root.conf"
C=$S/attack.conf
cat >"$C" <<CONF
{
  "service": "svc",
  "slots": 4,
  "app_root": "$APP",
  "launcher": "vs-runner",
  "docs_root": "$D",
  "shared_dirs": ["Workflow"],
  "private_paths": ["$APP/.env"],
  "table": "$TABLE",
  "slotctl_config": "/etc/slots/slotctl.json"
}
CONF
adm() { "$SLOTS_ADMIN" --config "$C" "$@"; }
prov() { "$SLOTS_PROVISION" --config "$C" "$@"; }
check "provisioning the attack host works" quiet prov
check "Workflow is shared (group slotshared 2770)" test "$(stat -c '%G %a' "$D/Workflow")" = "slotshared 2770"
check "plan.txt is shared (g+rw)" test "$(stat -c '%G %a' "$D/Workflow/wf1/plan.txt")" = "slotshared 660"

# ---- 1: hard links into a user's tree ----
check "assign alice slot03" prints slot03 adm assign alice slot03
T=$D/_users/alice
snap wf1 "$D/Workflow"
snap victims "$S/victims"
check "slot03 can hard-link the shared plan.txt into alice's tree" \
	runuser -u slot03 -- ln "$D/Workflow/wf1/plan.txt" "$T/plan-link"
# With fs.protected_hardlinks=0 the slot could link any file; root makes that link here.
ln "$S/victims/root.conf" "$T/root-link"
runuser -u slot03 -- sh -c "echo mine >'$T/own'"
adm release alice >"$P/out" 2>"$P/err"
st=$?
cat "$P/err"
check "release alice exits 0 with hard links in the tree" test "$st" = 0
check "release warns about the hard links" grep -q "plan-link: has 2 hard links: left alone" "$P/err"
check "and names the root file's link too" grep -q "root-link: has 2 hard links" "$P/err"
check "the shared folder is exactly as before (plan.txt still slotshared 660)" same wf1 "$D/Workflow"
check "the root file is exactly as before (root 0600)" same victims "$S/victims"
check "the slot's own file went back to the service" test "$(stat -c '%U:%G' "$T/own")" = svc:svc
check "assign alice again with the links in place" prints slot03 adm assign alice slot03 2>"$P/err"
check "assign warns about them" grep -q "has 2 hard links" "$P/err"
check "assign left the shared folder alone" same wf1 "$D/Workflow"
check "assign left the root file alone" same victims "$S/victims"
check "release alice" quiet adm release alice 2>/dev/null
rm -f "$T/plan-link" "$T/root-link"

# ---- 2: the service swaps docs_root for a symlink ----
snap etc /etc
for target in /etc /etc/sudoers.d; do
	runuser -u svc -- sh -c "mv '$D' '$D.real' && ln -s '$target' '$D'"
	prov >"$P/out" 2>"$P/err"
	st=$?
	cat "$P/err"
	check "docs_root -> $target: provision exits 1" test "$st" = 1
	check "docs_root -> $target: the refusal names the link and says why" \
		grep -q "$D: docs_root: is a symbolic link (to $target)" "$P/err"
	check "docs_root -> $target: the refusal gives the fix" grep -q "fix: point \"docs_root\" at the real folder" "$P/err"
	adm assign bob >"$P/out" 2>"$P/err"
	st=$?
	cat "$P/err"
	check "docs_root -> $target: assign bob exits 1" test "$st" = 1
	check "docs_root -> $target: assign says docs_root is a symbolic link" grep -q "is a symbolic link" "$P/err"
	check "docs_root -> $target: no Workflow and no _users made there" \
		test ! -e "$target/Workflow" -a ! -e "$target/_users"
	check "docs_root -> $target: /etc is exactly as before (but for the table)" same_etc etc
	runuser -u svc -- sh -c "rm '$D' && mv '$D.real' '$D'"
	check "docs_root -> $target: once docs_root is a folder again, release bob works" quiet adm release bob
done
# A folder on the way that others can write: anyone could have swapped what is below it.
chmod 0777 "$SV"
prov >"$P/out" 2>"$P/err"
st=$?
cat "$P/err"
check "a folder on the way writable by others: provision exits 1" test "$st" = 1
check "the refusal names the folder and the mode" grep -q "$SV: .*writable by others (mode 0777)" "$P/err"
check "the fix is chmod o-w" grep -q "fix: chmod o-w $SV" "$P/err"
chmod 0755 "$SV"
# A folder on the way owned by a slot.
chown slot01 "$SV"
prov >"$P/out" 2>"$P/err"
st=$?
check "a folder on the way owned by a slot: provision exits 1" test "$st" = 1
check "the refusal names its owner" grep -q "$SV: .*owned by uid $(uid_of slot01)" "$P/err"
chown svc "$SV"
check "/etc is still exactly as before (but for the table)" same_etc etc
check "provision works again once the layout is sound" quiet prov

# ---- 3: the service hard-links the private .env as the launcher ----
runuser -u svc -- sh -c "rm '$APP/releases/r5/bin/vs-runner' && ln '$APP/.env' '$APP/releases/r5/bin/vs-runner'"
python3 "$SNAP" save "$APP" "$P/env.before"
prov >"$P/out" 2>"$P/err"
st=$?
cat "$P/out" "$P/err"
check "provision with a linked launcher exits 0 (a warning)" test "$st" = 0
check "it warns that the launcher has 2 hard links" grep -q "vs-runner: has 2 hard links" "$P/err"
check "it never prints set mode for the launcher" sh -c "! grep -q 'set mode of .*vs-runner' '$P/out'"
check "the private .env is still svc 0600" test "$(stat -c '%U %a' "$APP/.env")" = "svc 600"
check "the app tree is exactly as before" same env "$APP"
runuser -u svc -- sh -c "rm '$APP/releases/r5/bin/vs-runner' && printf '#!/bin/sh\nexit 0\n' >'$APP/releases/r5/bin/vs-runner'"

# ---- 4: a tree 1,005 levels deep, and a pending slot's walk through it ----
check "assign carol slot02" prints slot02 adm assign carol slot02
check "assign erin slot01" prints slot01 adm assign erin slot01
runuser -u slot02 -- python3 -c 'import os, sys
os.chdir(sys.argv[1])
for i in range(1005):
    os.mkdir("a")
    os.chdir("a")
open("bottom", "w").write("x")' "$D/_users/carol"
check "slot02 made a 1,005-level tree" test "$(find "$D/_users/carol" -name bottom | wc -l)" = 1
# The same depth in the slot's home: the unlink walk of step 4 goes as deep.
H2=$(getent passwd slot02 | cut -d: -f6)
runuser -u slot02 -- python3 -c 'import os, sys
os.chdir(sys.argv[1])
for i in range(1005):
    os.mkdir("h")
    os.chdir("h")
open("bottom", "w").write("x")' "$H2"
check "slot02 made a 1,005-level folder in its home" test "$(find "$H2" -name bottom | wc -l)" = 1
runuser -u slot01 -- sh -c "echo e >'$D/_users/erin/by-slot01'"
# erin's release stopped after step 1: the table no longer names erin, slot01 is pending.
jq --arg t "2026-01-01T00:00:00Z" '.slots.slot01 = {"cleanup": "pending", "released": $t}' "$TABLE" >"$P/table"
cat "$P/table" >"$TABLE"
adm release --slot slot01 >"$P/out" 2>"$P/err"
st=$?
cat "$P/err"
check "release --slot slot01 (pending) walks every tree, carol's deep one too: exit 0" test "$st" = 0
check "slot01's file in erin's tree went back to the service" \
	test "$(stat -c '%U:%G' "$D/_users/erin/by-slot01")" = svc:svc
check "slot01 is free again" slot_is_free slot01
adm release carol >"$P/out" 2>"$P/err"
st=$?
cat "$P/err"
check "release carol with a 1,005-level tree exits 0" test "$st" = 0
check "the bottom file is the service's" test "$(find "$D/_users/carol" -name bottom -printf '%u:%g')" = svc:svc
check "no entry of carol's tree is left with slot02" test "$(find "$D/_users/carol" -group slot02 | wc -l)" = 0
check "the 1,005-level folder in slot02's home is gone" test -d "$H2" -a -z "$(ls -A "$H2")"

# ---- 5: names with terminal control sequences are escaped ----
check "assign dave slot04" prints slot04 adm assign dave slot04
EVIL=$(printf 'x\033]0;owned\007\033[2K\rY')
runuser -u slot04 -- sh -c "echo e >'$D/_users/dave/f' && ln '$D/_users/dave/f' '$D/_users/dave/$EVIL'"
adm release dave >"$P/out" 2>"$P/err"
st=$?
check "release dave exits 0" test "$st" = 0
check "the warning is printed" grep -q "has 2 hard links" "$P/err"
check "no ESC, BEL or CR byte reaches the terminal" no_raw "$P/err"
check "the name shows escaped, like ls -b" grep -qF 'x\033]0;owned\a\033[2K\rY' "$P/err"
rm -f "$D/_users/dave/$EVIL"
# The same name in an error: a mount point in the slot's home stops step 4, which names it.
check "assign dave slot04 again" prints slot04 adm assign dave slot04
H4=$(getent passwd slot04 | cut -d: -f6)
runuser -u slot04 -- mkdir "$H4/$EVIL"
mount -t tmpfs tmpfs "$H4/$EVIL"
adm release dave >"$P/out" 2>"$P/err"
st=$?
check "release dave with a mount point in the home exits 1" test "$st" = 1
check "the error names the mount point" grep -q "is a mount point" "$P/err"
check "no ESC, BEL or CR byte reaches the terminal in the error" no_raw "$P/err"
check "the name in the error shows escaped" grep -qF 'x\033]0;owned\a\033[2K\rY' "$P/err"
umount "$H4/$EVIL"
check "release --slot slot04 finishes it" quiet adm release --slot slot04

# ---- 6: a user_tree that can name a shared folder ----
snap wf "$D/Workflow"
sed 's|"shared_dirs"|"user_tree": "{user}",\n  "shared_dirs"|' "$C" >"$S/bad.conf"
"$SLOTS_ADMIN" --config "$S/bad.conf" assign Workflow >"$P/out" 2>"$P/err"
st=$?
cat "$P/err"
check "assign Workflow with user_tree {user}: the config is refused (exit 2)" test "$st" = 2
check "the refusal names user_tree and the shared folder" grep -q 'user_tree.*can name the shared folder "Workflow"' "$P/err"
check_exit "provision refuses the config too (exit 2)" 2 "$SLOTS_PROVISION" --config "$S/bad.conf" --dry-run
check "the shared folder is exactly as before" same wf "$D/Workflow"

# ---- 7: a hard link 70 folders deep in a shared folder ----
# hard_links_row: the status of check's hard-links row, its line in $P/check.
hard_links_row() {
	adm check >"$P/check" 2>&1
	awk '$2 == "hard-links" { print $1; exit }' "$P/check"
}
check "check's hard-links row passes on the clean host" test "$(hard_links_row)" = PASS
runuser -u slot03 -- python3 -c 'import os, sys
os.chdir(sys.argv[1])
for i in range(70):
    os.mkdir("d"); os.chdir("d")
open("mine", "w").write("x")
os.link("mine", "again")' "$D/Workflow"
check "slot03 made two names of one file 70 folders deep in Workflow" \
	test "$(find "$D/Workflow" -name again -links 2 | wc -l)" = 1
check "check's hard-links row FAILs on the link 70 deep" test "$(hard_links_row)" = FAIL
check "the row names the deep link" grep -q 'hard-links.*/d/d/again' "$P/check"
runuser -u slot03 -- sh -c "rm -rf '$D/Workflow/d'"

slots_done
