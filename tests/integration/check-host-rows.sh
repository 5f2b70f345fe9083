#!/bin/sh
# slots-admin check: the host-wide rows (check-host.c) that no other test produced.
# Each FAIL case is a row of a table: how the fixture host is broken, the row that must fail,
# words its detail must hold, and how the host is put back (the printed fix itself where it is
# a command, run as printed): exit 1, the row FAIL with a fix, nothing changed by check, exit 0
# after the repair.  Then hosts set up otherwise that still pass, each row saying why (a
# current link outside releases/, a tree deeper than the hard-link walk, a config with
# neither docs_root nor a launcher).
. "$top_srcdir/tests/integration/lib.sh"
slots_need_root
slots_enter_namespace "$@"
. "$top_srcdir/tests/integration/check-lib.sh"

check_fixture_good

cp -p "$SLOTCTL" "$OUT/slotctl.good"
restore_slotctl() {
	rm -rf "$SLOTCTL"
	cp -p "$OUT/slotctl.good" "$SLOTCTL"
}

# --- config: the file that decides what runs as whom ---
case_ config-owner config - "$CONF is 0644 owned by uid $((UID_MIN - 1)): someone other than root can change it" \
	"chown $SERVICE $CONF" FIX
case_ config-writable config - "$CONF is 0664 owned by uid 0" "chmod 0664 $CONF" FIX
case_ config-invalid config - "$CONF:1:" "printf '{\"service\": }\n' >$CONF" restore_config
case_ config-folder config - "$CONF" "rm $CONF && mkdir $CONF" restore_config

# --- table: its folder, its content, its group ---
case_ table-folder-missing table - "/etc/slots-gone/slots.json: cannot open its folder" \
	"edit_config 'c[\"table\"] = \"/etc/slots-gone/slots.json\"'" restore_config
case_ table-nul table - "$TABLE: contains a NUL byte" "printf '{\"slots\": {}, \"version\": 1}\\000\\n' >$TABLE" \
	restore_table
case_ table-no-group table - "group is $SERVICE, not the service group vs-render" \
	"edit_config 'c[\"service_group\"] = \"vs-render\"'" restore_config
check "table-no-group: the fix says to create the group first" \
	grep -q "fix: create the group vs-render (slots-provision), then chgrp vs-render $TABLE" "$OUT/table-no-group.out"
groupadd vs-render
# With the group there, chgrp is the fix; the service reads through that group once it is a member.
case_ table-other-group table - "group is $SERVICE, not the service group vs-render" \
	"edit_config 'c[\"service_group\"] = \"vs-render\"'" "sh -c \"\$FIX\" && usermod -a -G vs-render $SERVICE"
check "table-other-group: the fix is chgrp" test "$FIX" = "chgrp vs-render $TABLE"
restore_config
chgrp "$SERVICE" "$TABLE"

# --- slotctl-config: the file the launcher reads ---
case_ slotctl-symlink slotctl-config - "$SLOTCTL: is a symlink" \
	"mv $SLOTCTL $OUT/slotctl.real && ln -s $OUT/slotctl.real $SLOTCTL" "rm $SLOTCTL && mv $OUT/slotctl.real $SLOTCTL"
case_ slotctl-fifo slotctl-config - "$SLOTCTL: is not a regular file" "rm $SLOTCTL && mkfifo $SLOTCTL" restore_slotctl
case_ slotctl-missing slotctl-config - "$SLOTCTL: No such file or directory" "rm $SLOTCTL" restore_slotctl
case_ slotctl-owner slotctl-config - "$SLOTCTL is 0644 owned by uid $((UID_MIN - 1)), not root:root 0644" \
	"chown $SERVICE $SLOTCTL" FIX
case_ slotctl-closed slotctl-config - "$SLOTCTL is 0600 owned by uid 0, not root:root 0644" "chmod 0600 $SLOTCTL" FIX
case_ slotctl-not-json slotctl-config - "$SLOTCTL does not parse:" "printf '{\"docs_root\": \n' >$SLOTCTL" \
	restore_slotctl
case_ slotctl-array slotctl-config - "$SLOTCTL does not parse: not a JSON object" "printf '[]\n' >$SLOTCTL" \
	restore_slotctl
case_ slotctl-docs-root slotctl-config - "its docs_root is \"/srv/other\", not $DOCS as in $CONF" \
	"edit_slotctl 'c[\"docs_root\"] = \"/srv/other\"'" restore_slotctl
case_ slotctl-no-docs-root slotctl-config - "its docs_root is missing, not $DOCS as in $CONF" \
	"edit_slotctl 'del c[\"docs_root\"]'" restore_slotctl
# No release deployed at all: the pattern itself must be allowed.
case_ slotctl-no-pattern slotctl-config - "allowed_exec does not name $APP/releases/*/bin/run" \
	"mv $APP/releases/$RELEASE $OUT/release.away && mv $APP/current $OUT/current.away &&
	 edit_slotctl 'c[\"allowed_exec\"] = [\"/usr/bin/true\"]'" \
	"restore_slotctl && mv $OUT/release.away $APP/releases/$RELEASE && mv $OUT/current.away $APP/current"

# --- hosts set up otherwise that still pass, each row saying why ---
case_row current-outside 0 PASS slotctl-config - "every release: $APP/current points outside $APP/releases" \
	"rm $APP/current && ln -s /opt $APP/current" "rm $APP/current && ln -s releases/$RELEASE $APP/current"
case_row current-absolute 0 PASS slotctl-config - "release $RELEASE, which $APP/current points at" \
	"rm $APP/current && ln -s $APP/releases/$RELEASE/ $APP/current" \
	"rm $APP/current && ln -s releases/$RELEASE $APP/current"
deep=$DOCS/shared
for i in $(seq 66); do deep=$deep/d; done
case_row links-deep 0 PASS hard-links - "(1 folder deeper than 64 and 0 unreadable not read)" \
	"install -d -o $SERVICE -g slotshared $deep" "rm -rf $DOCS/shared/d"
# docs_root gone: the rows that need it fail; roots says it did not look at it.
case_row roots-absent 1 PASS roots - "not looked at: docs_root $DOCS" \
	"mv $DOCS $OUT/docs.away" "mv $OUT/docs.away $DOCS"
check "roots-absent: hard-links skips a docs_root that does not exist" \
	row_says roots-absent SKIP hard-links - "$DOCS cannot be walked: it does not exist"

# A config with neither docs_root nor a launcher: the rows about them skip, naming the config.
# The drop-in slots-provision wrote names the launcher this config no longer has: the
# sudoers-dropin row must see that the host was not provisioned again (exit 1).
case_row no-docs-no-app 1 SKIP slotctl-config - "$CONF sets neither docs_root nor app_root and launcher" \
	"edit_config 'del c[\"docs_root\"]; del c[\"app_root\"]; del c[\"launcher\"]; del c[\"shared_dirs\"]; c[\"private_paths\"] = []; del c[\"probe\"]'" \
	restore_config
check "no-docs-no-app: hard-links skips, naming the config" \
	row_says no-docs-no-app SKIP hard-links - "$CONF sets no docs_root"
check "no-docs-no-app: user-tree skips for an assigned slot" \
	row_says no-docs-no-app SKIP user-tree slot01 "$CONF sets no docs_root"
check "no-docs-no-app: sudoers-dropin fails, the drop-in is not what this config renders" \
	row_says no-docs-no-app FAIL sudoers-dropin - "differs from what slots-provision writes"
slots_done
