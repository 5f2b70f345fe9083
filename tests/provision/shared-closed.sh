#!/bin/sh
# Below a shared folder slots-provision sets the group (and setgid on folders) and never adds
# a permission bit: what a previous holder left closed, or a current holder keeps closed, stays
# closed through the next routine run.  Run on the live /etc in a private namespace, the files
# made by the slots themselves (runuser).  Also: a file with a second name is never changed,
# a symlink is never followed, and the platform's app-private names (a browser's socket folder
# and profile) are left alone with a warning, and FAILed by check, unless listed on purpose.
. "$top_srcdir/tests/integration/lib.sh"
slots_need_root
for tool in runuser getent; do
	command -v "$tool" >/dev/null || { echo "SKIP: $tool is not installed"; exit 77; }
done
slots_enter_namespace "$@"

S=$SLOTS_SCRATCH
DOCS=$S/docs
W=$DOCS/Workflow
echo 'svc:x:1990:1990:the service:/nonexistent:/bin/sh' >>/etc/passwd
echo 'svc:x:1990:' >>/etc/group
echo 'svc:!:20000::::::' >>/etc/shadow
echo 'svc:!::' >>/etc/gshadow
cat >"$S/slots.conf" <<CONF
{
  "service": "svc",
  "slots": 3,
  "docs_root": "$DOCS",
  "shared_dirs": ["Workflow"],
  "table": "/etc/slots/slots.json",
  "slotctl_config": "/etc/slots/slotctl.json"
}
CONF
mkdir -p "$DOCS"
chown svc:svc "$DOCS"
chmod 0755 "$DOCS"
"$SLOTS_PROVISION" --config "$S/slots.conf" >"$S/out1" 2>"$S/err1"
check "the first run exits 0" test $? = 0
check "the shared folder is svc:slotshared 2770" test "$(slots_stat "$W")" = "svc:slotshared 2770"

# slot01, the previous holder, leaves a closed file and a closed folder; slot02, the current
# holder, keeps a file of its own closed; both under umask 077, as a careful program would.
runuser -u slot01 -- sh -c "umask 077; echo old-secret >'$W/old.txt'; mkdir '$W/old-dir'; echo x >'$W/old-dir/f'"
runuser -u slot02 -- sh -c "umask 077; echo mine >'$W/mine.txt'"
# A file that slot01 has a second name of (made outside on the same file system, linked in),
# and symlinks to root's files and folders.
mkdir "$S/own"
chown slot01:slot01 "$S/own"
runuser -u slot01 -- sh -c "umask 022; echo linked >'$S/own/keep'; ln '$S/own/keep' '$W/linked'"
ln -s /etc/shadow "$W/to-shadow"
ln -s /etc/slots "$W/to-etc-slots"
shadow=$(stat -c '%U:%G %a' /etc/shadow)
etcslots=$(stat -c '%U:%G %a' /etc/slots)
check "set up: the closed file is 0600" test "$(slots_stat "$W/old.txt")" = "slot01:slotshared 600"
check "set up: the closed folder is 2700" test "$(slots_stat "$W/old-dir")" = "slot01:slotshared 2700"
check "set up: the linked file has two names" test "$(stat -c %h "$W/linked")" = 2

"$SLOTS_PROVISION" --config "$S/slots.conf" >"$S/out2" 2>"$S/err2"
check "the routine run exits 0" test $? = 0
cat "$S/out2" "$S/err2"
check "a previous holder's 0600 file stays 0600" test "$(slots_stat "$W/old.txt")" = "slot01:slotshared 600"
check "a previous holder's 0700 folder stays closed (2700)" test "$(slots_stat "$W/old-dir")" = "slot01:slotshared 2700"
check "the file inside it stays 0600" test "$(slots_stat "$W/old-dir/f")" = "slot01:slotshared 600"
check "a current holder's own 0600 file stays 0600" test "$(slots_stat "$W/mine.txt")" = "slot02:slotshared 600"
check_fails "slot03 still cannot read the previous holder's file" runuser -u slot03 -- cat "$W/old.txt"
check_fails "slot03 still cannot list the previous holder's folder" runuser -u slot03 -- ls "$W/old-dir"
check_fails "slot03 still cannot read the current holder's file" runuser -u slot03 -- cat "$W/mine.txt"
check "the file with two names keeps its group and mode" test "$(slots_stat "$W/linked")" = "slot01:slot01 644"
check "it is reported" grep -q "$W/linked: has 2 hard links" "$S/err2"
check "a symlink's target keeps its owner and mode (/etc/shadow)" test "$(stat -c '%U:%G %a' /etc/shadow)" = "$shadow"
check "a symlinked folder's target keeps its owner and mode" test "$(stat -c '%U:%G %a' /etc/slots)" = "$etcslots"
check "the symlinks are still symlinks" test -L "$W/to-shadow" -a -L "$W/to-etc-slots"

# A file a slot moves in from elsewhere keeps its group (slot02, 0640): what it gave its own
# group was for itself, so the shared group gets no more than others had.
mkdir "$S/own2"
chown slot02:slot02 "$S/own2"
runuser -u slot02 -- sh -c "umask 027; echo moved >'$S/own2/moved'; mv '$S/own2/moved' '$W/moved'"
check "set up: the moved file is slot02:slot02 0640" test "$(slots_stat "$W/moved")" = "slot02:slot02 640"
# A file and a folder the admin puts in by hand get the group, and the folder setgid, but no bit.
mkdir "$W/by-admin"
echo a >"$W/by-admin/notes"
chgrp root "$W/by-admin" "$W/by-admin/notes"
chmod 0755 "$W/by-admin"
chmod g-s "$W/by-admin"  # a folder made in a setgid folder inherits the bit
chmod 0644 "$W/by-admin/notes"
"$SLOTS_PROVISION" --config "$S/slots.conf" >"$S/out3" 2>"$S/err3"
check "the third run exits 0" test $? = 0
cat "$S/out3"
check "a slot's file moved in gets the group, and its group bits closed (0600)" \
	test "$(slots_stat "$W/moved")" = "slot02:slotshared 600"
check_fails "slot03 cannot read the moved file" runuser -u slot03 -- cat "$W/moved"
check "an admin's folder gets the group and setgid, no bit" test "$(slots_stat "$W/by-admin")" = "root:slotshared 2755"
check "an admin's file gets the group, no bit" test "$(slots_stat "$W/by-admin/notes")" = "root:slotshared 644"
check "the change is reported as the group and setgid only" \
	grep -q "^share $W/by-admin: group root -> slotshared, mode 0755 -> 2755\$" "$S/out3"
"$SLOTS_PROVISION" --config "$S/slots.conf" >"$S/out4" 2>"$S/err4"
check "a fourth run changes nothing" test "$(cat "$S/out4")" = "0 changes"
"$SLOTS_ADMIN" --config "$S/slots.conf" check >"$S/check1" 2>&1
check "check: app-private passes without a browser folder" grep -Eq '^PASS +app-private ' "$S/check1"

# ---- the platform's app-private names: a browser's socket folder and profile ----
# slot02 runs a browser whose state lands in the shared folder, made in its own folder and
# moved in (its group stays slot02, as a program's temp files often do).
mkdir -p "$S/own2/tmp/.agent-browser" "$S/own2/.config/chromium/Default"
echo sock >"$S/own2/tmp/.agent-browser/session"
echo cookies >"$S/own2/.config/chromium/Default/Cookies"
chown -R slot02:slot02 "$S/own2/tmp" "$S/own2/.config"
chmod 0770 "$S/own2/tmp/.agent-browser" "$S/own2/.config/chromium"
chmod 0660 "$S/own2/tmp/.agent-browser/session" "$S/own2/.config/chromium/Default/Cookies"
runuser -u slot02 -- sh -c "mv '$S/own2/tmp' '$W/tmp' && mv '$S/own2/.config' '$W/.config'"
ab=$(slots_stat "$W/tmp/.agent-browser")
cr=$(slots_stat "$W/.config/chromium")
ck=$(slots_stat "$W/.config/chromium/Default/Cookies")
"$SLOTS_PROVISION" --config "$S/slots.conf" >"$S/out5" 2>"$S/err5"
check "a run with browser folders in the shared folder exits 0" test $? = 0
check "the socket folder is left as it was ($ab)" test "$(slots_stat "$W/tmp/.agent-browser")" = "$ab"
check "what it holds too" test "$(slots_stat "$W/tmp/.agent-browser/session")" = "slot02:slot02 660"
check "the chromium profile is left as it was ($cr)" test "$(slots_stat "$W/.config/chromium")" = "$cr"
check "its cookies too ($ck)" test "$(slots_stat "$W/.config/chromium/Default/Cookies")" = "$ck"
check "the folder above the socket folder is shared (0755 of slot02's group: the shared group gets r-x)" \
	test "$(slots_stat "$W/tmp")" = "slot02:slotshared 2755"
check "the socket folder is reported, with the fix" \
	grep -q "warning: $W/tmp/.agent-browser: is an app-private name (.agent-browser) inside a shared folder" "$S/err5"
check "the profile is reported" grep -q "warning: $W/.config/chromium: is an app-private name (.config/chromium)" "$S/err5"
check "the fix names the shared_dirs entry" grep -q "fix: move it out of the shared folder.*add \"Workflow/tmp/.agent-browser\" to shared_dirs" "$S/err5"
"$SLOTS_ADMIN" --config "$S/slots.conf" check >"$S/check2" 2>&1
check "check: app-private FAILs them" grep -Eq "^FAIL +app-private .*2 app-private names.*\.agent-browser" "$S/check2"

# Listed on purpose: an entry of shared_dirs is shared.  (A private path cannot lie in a shared
# folder: the config refuses that overlap.)
sed "s|\"shared_dirs\": \[\"Workflow\"\]|\"shared_dirs\": [\"Workflow\", \"Workflow/tmp/.agent-browser\", \"Workflow/.config/chromium\"]|" \
	"$S/slots.conf" >"$S/purpose.conf"
"$SLOTS_PROVISION" --config "$S/purpose.conf" >"$S/out6" 2>"$S/err6"
check "with both named in shared_dirs: exits 0" test $? = 0
check "with both named: no app-private warning" sh -c "! grep -q 'app-private' '$S/err6'"
check "the socket folder named in shared_dirs is shared (a shared folder's rule: group, setgid, g+rwx)" \
	test "$(slots_stat "$W/tmp/.agent-browser")" = "slot02:slotshared 2770"
"$SLOTS_ADMIN" --config "$S/purpose.conf" check >"$S/check3" 2>&1
check "check: app-private passes with both named" grep -Eq '^PASS +app-private ' "$S/check3"
slots_done
