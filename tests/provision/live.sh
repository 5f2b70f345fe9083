#!/bin/sh
# slots-provision on the live /etc, inside a private mount namespace over a copy of /etc:
# real NSS, real PAM (runuser), real sudo and visudo.  Also the rules on folders that matter on a
# real host: private paths under app_root stay as they are, a release owned by an unrelated user
# is reported and unchanged, and the slots can reach the launcher (and only through sudo as
# the service may run it).
. "$top_srcdir/tests/integration/lib.sh"
slots_need_root
for tool in runuser getent visudo sudo; do
	command -v "$tool" >/dev/null || { echo "SKIP: $tool is not installed"; exit 77; }
done
slots_enter_namespace "$@"

S=$SLOTS_SCRATCH
APP=$S/app
DOCS=$S/docs
echo 'svc:x:1990:1990:the service:/nonexistent:/bin/sh' >>/etc/passwd
echo 'svc:x:1990:' >>/etc/group
echo 'svc:!:20000::::::' >>/etc/shadow
echo 'svc:!::' >>/etc/gshadow
cat >"$S/slots.conf" <<CONF
{
  "service": "svc",
  "slots": 3,
  "app_root": "$APP",
  "launcher": "run",
  "docs_root": "$DOCS",
  "shared_dirs": ["shared"],
  "private_paths": ["$APP/private", "$APP/releases/r2"],
  "table": "/etc/slots/slots.json",
  "slotctl_config": "/etc/slots/slotctl.json"
}
CONF
mkdir -p "$APP/releases/r1/bin" "$APP/releases/r2/bin" "$APP/releases/r3/bin" "$APP/private" "$DOCS"
printf '#!/bin/sh\nid -un\n' >"$APP/releases/r1/bin/run"
cp "$APP/releases/r1/bin/run" "$APP/releases/r2/bin/run"
cp "$APP/releases/r1/bin/run" "$APP/releases/r3/bin/run"
chown -R svc:svc "$APP" "$DOCS"
chmod 0755 "$APP" "$DOCS"
chmod 0700 "$APP/releases" "$APP/releases/r1" "$APP/releases/r1/bin" "$APP/releases/r1/bin/run"
# private: a release the config keeps away from everyone, and the app's own state
chmod 0700 "$APP/releases/r2" "$APP/releases/r2/bin" "$APP/private"
# left by an unrelated account
chown -R nobody:nogroup "$APP/releases/r3"
chmod 0700 "$APP/releases/r3" "$APP/releases/r3/bin"

shadow_before=$(slots_stat /etc/shadow)
"$SLOTS_PROVISION" --config "$S/slots.conf" >"$S/out" 2>"$S/err"
check "provisioning the live /etc exits 0" test $? = 0
cat "$S/out" "$S/err"
check "it ends with the number of changes" grep -Eq '^[1-9][0-9]* changes$' "$S/out"
check "getent passwd slot01 finds the new account" getent passwd slot01
check "id slot01 shows the slot's group and the shared group" sh -c 'id slot01 | grep -q "groups=[0-9]*(slot01),[0-9]*(slotshared)"'
check "runuser -u slot01 -- true works (PAM accepts the locked account)" runuser -u slot01 -- true
check "/etc/shadow is still root:shadow 0640 (as before: $shadow_before)" test "$(slots_stat /etc/shadow)" = "root:shadow 640"
check "/etc/gshadow kept its owner and mode" test "$(slots_stat /etc/gshadow)" = "root:shadow 640"
check "/etc/passwd- is the backup, root:root 0644" test "$(slots_stat /etc/passwd-)" = "root:root 644"
check "/etc/shadow- is the backup, root:shadow 0640" test "$(slots_stat /etc/shadow-)" = "root:shadow 640"
check "the password is locked" sh -c 'grep -q "^slot01:!:" /etc/shadow'
check "pwck finds nothing wrong in the account files" pwck -r -q
check "grpck finds nothing wrong in the group files" grpck -r
check "visudo -c accepts the whole sudoers with the drop-in" visudo -c -q
check "the drop-in is root:root 0440" test "$(slots_stat /etc/sudoers.d/slots-svc)" = "root:root 440"
check "the service may run the launcher as slot01, without a password" \
	test "$(runuser -u svc -- sudo -n -u slot01 "$APP/releases/r1/bin/run")" = slot01
check "the service may run /usr/bin/true as slot03" runuser -u svc -- sudo -n -u slot03 /usr/bin/true
check_fails "the service may not run a shell as slot01" runuser -u svc -- sudo -n -u slot01 /bin/sh -c true
check_fails "the service may not run the launcher as root" runuser -u svc -- sudo -n -u root "$APP/releases/r1/bin/run"
check "releases/ is 0711" test "$(slots_stat "$APP/releases")" = "svc:svc 711"
check "a release folder and its bin/ got o+x" \
	sh -c "test \"\$(stat -c %a '$APP/releases/r1' '$APP/releases/r1/bin')\" = '701
701'"
check "the launcher is 0755" test "$(slots_stat "$APP/releases/r1/bin/run")" = "svc:svc 755"
check "a slot can reach and run the launcher itself" test "$(runuser -u slot02 -- "$APP/releases/r1/bin/run")" = slot02
check "a private release stays 0700" test "$(slots_stat "$APP/releases/r2")" = "svc:svc 700"
check "a private path under app_root stays 0700" test "$(slots_stat "$APP/private")" = "svc:svc 700"
check "a release owned by another user is unchanged" test "$(slots_stat "$APP/releases/r3")" = "nobody:nogroup 700"
check "that release is reported" grep -q "warning: $APP/releases/r3: owned by nobody" "$S/err"
check "homes are the slot's, 0700" test "$(slots_stat /var/lib/slots/svc/home/slot01)" = "slot01:slot01 700"
check "a slot cannot enter another slot's home (Permission denied)" sh -c \
	"runuser -u slot02 -- ls /var/lib/slots/svc/home/slot01 2>&1 | grep -q 'Permission denied'"
check "the shared folder is group slotshared, setgid 2770" test "$(slots_stat "$DOCS/shared")" = "svc:slotshared 2770"
check "the table is root:svc 0640" test "$(slots_stat /etc/slots/slots.json)" = "root:svc 640"
check "the service can read the table" runuser -u svc -- cat /etc/slots/slots.json

md5sum /etc/passwd /etc/group /etc/shadow /etc/gshadow /etc/sudoers.d/slots-svc /etc/slots/* >"$S/sums"
"$SLOTS_PROVISION" --config "$S/slots.conf" >"$S/out2" 2>"$S/err2"
check "second run exits 0" test $? = 0
check "second run prints 0 changes" test "$(cat "$S/out2")" = "0 changes"
check "second run leaves the files byte-identical" md5sum -c --quiet "$S/sums"

# A symlink planted where a home belongs on the live host is refused, not followed.
rm -rf /var/lib/slots/svc/home/slot03
ln -s /etc /var/lib/slots/svc/home/slot03
"$SLOTS_PROVISION" --config "$S/slots.conf" >"$S/out3" 2>"$S/err3"
check "a planted symlink refuses the run (exit 1)" test $? = 1
check "the symlink is named" grep -q "home/slot03: is a symlink" "$S/err3"
check "the link's target was not touched" test "$(slots_stat /etc)" = "root:root 755"
slots_done
