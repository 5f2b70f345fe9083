#!/bin/sh
# slots-admin check: the per-slot rows (check-slot.c) that no other test produced:
# the account's uid against the range and uid_base, a lookup that fails, password fields that
# are empty or hold a DES hash, a launcher gone from the release in use, a private path a slot
# can write, a user's tree that is a symlink or a file.  Each FAIL case breaks the fixture,
# wants the row FAIL with its detail and a fix, nothing changed, and exit 0 after the repair
# (the printed fix itself where it is a command).  Then hosts set up otherwise that still pass,
# each row saying why (no shadow entry, login.defs unreadable, a private path absent or open
# only below a closed folder).
. "$top_srcdir/tests/integration/lib.sh"
slots_need_root
slots_enter_namespace "$@"
. "$top_srcdir/tests/integration/check-lib.sh"

check_fixture_good
TREE_A=$DOCS/_users/$USER_A
cp -a "$TREE_A" "$OUT/tree.a"
cp -p "$APP/.env" "$OUT/env.good"

# --- account ---
U8=$(id -u slot08)
# (a range that still holds the pool; slots-provision gave slot08 an id above it)
case_ uid-outside account slot08 "uid $U8 is outside $UID_MIN-$((UID_MIN + 20))" \
	"edit_config 'c[\"uid_max\"] = $((UID_MIN + 20))'" restore_config
check "uid-outside: the fix says to widen the range" \
	grep -q "fix: widen uid_min/uid_max in $CONF, or recreate slot08 inside the range" "$OUT/uid-outside.out"
case_ uid-base account slot08 "uid $U8, planned $((UID_MIN + 28)) (uid_base + 8)" \
	"edit_config 'del c[\"uid_min\"]; del c[\"uid_max\"]; c[\"uid_base\"] = $((UID_MIN + 20))'" restore_config
check "uid-base: the fix runs slots-provision" \
	grep -q "FAIL account slot08: .* -- fix: .*run slots-provision, which prints the fix" "$OUT/uid-base.out"

# The name service fails for slot08 (libnssfail: EIO, as an unreachable directory does).
NSSFAIL_SO=$top_builddir/tests/provision/.libs/libnssfail.so
if [ -f "$NSSFAIL_SO" ]; then
	fixture_snapshot >"$OUT/nss.before"
	SLOTS_TEST_NSS_FAIL=slot08 LD_PRELOAD=$NSSFAIL_SO "$SLOTS_ADMIN" check >"$OUT/nss.out" 2>"$OUT/nss.err"
	echo $? >"$OUT/nss.rc"
	fixture_snapshot >"$OUT/nss.after"
	check_rc "nss: check exits 1" 1 nss
	check "nss: the account row says the lookup failed, not that the account is missing" \
		grep -q "^FAIL account slot08: the lookup of slot08 failed: Input/output error -- fix: repair the name service" \
		"$OUT/nss.out"
	check "nss: check changed nothing" cmp -s "$OUT/nss.before" "$OUT/nss.after"
else
	not_ok "nss: $NSSFAIL_SO is missing (make check builds it)"
fi

# --- password-locked ---
case_ password-empty password-locked slot08 "slot08 has an empty password field in its shadow entry: it needs no password at all" \
	"usermod -p '' slot08" FIX
case_ password-des password-locked slot08 "slot08 has a usable password hash (DES) in its shadow entry" \
	"usermod -p 'abJnggxhB/yWI' slot08" FIX
check "password-des: the hash is not printed" sh -c "! grep -q 'abJnggxhB' '$OUT/password-des.out'"
# pam_unix reads the passwd field unless it is x: a hash there is the password, whatever shadow says.
case_ passwd-field-hash password-locked slot08 "slot08 has a usable password hash (DES) in its passwd entry" \
	"sed -i 's/^slot08:x:/slot08:abJnggxhB\\/yWI:/' /etc/passwd" FIX
check "passwd-field-hash: the hash is not printed" sh -c "! grep -q 'abJnggxhB' '$OUT/passwd-field-hash.out'"
restore_accounts
case_row no-shadow-entry 0 PASS password-locked slot08 "locked (the passwd field says shadow, and there is no shadow entry)" \
	"sed -i '/^slot08:/d' /etc/shadow" restore_accounts
case_row shadow-star 0 PASS password-locked slot08 "locked (shadow entry starts with *)" \
	"usermod -p '*' slot08" restore_accounts

# --- runner-reachable: the launcher of the release in use ---
case_ no-launcher runner-reachable slot01 "the launcher $LAUNCHER cannot be reached even as root" \
	"mv $LAUNCHER $OUT/launcher.away" "mv $OUT/launcher.away $LAUNCHER"
check "no-launcher: the fix deploys the release" \
	grep -q "fix: deploy the release $RELEASE with its launcher bin/run" "$OUT/no-launcher.out"

# --- private-unreachable ---
case_ private-writable private-unreachable slot08 "as slot08, $APP/.env can be reached (write)" \
	"chmod 0602 $APP/.env" FIX
case_row private-absent 0 PASS private-unreachable slot08 "; 1 does not exist" \
	"rm $APP/.env" "cp -p $OUT/env.good $APP/.env"
case_row private-open-below-closed 0 PASS private-unreachable slot08 \
	"$APP/state/profile itself is open to slot08, only a folder above keeps it out" \
	"edit_config 'c[\"private_paths\"].append(\"$APP/state/profile\")' && chmod 0644 $APP/state/profile" \
	"restore_config && chmod 0600 $APP/state/profile"

# --- user-tree: the tree of an assigned slot's user ---
case_ tree-symlink user-tree slot01 "the tree <docs>/_users/<user> of slot01's user is a symlink; assign never follows one" \
	"mv $TREE_A $OUT/tree.a.moved && ln -s $OUT/tree.a.moved $TREE_A" "rm $TREE_A && mv $OUT/tree.a.moved $TREE_A"
check "tree-symlink: the fix makes the folder" \
	grep -qF "fix: move the link away, then slots-admin assign <user> slot01 makes the tree (<user>: slots-admin status slot01)" \
	"$OUT/tree-symlink.out"
case_ tree-file user-tree slot01 "the tree <docs>/_users/<user> of slot01's user is not a folder" \
	"rm -rf $TREE_A && echo x >$TREE_A && chown $SERVICE:slot01 $TREE_A" \
	"rm $TREE_A && cp -a $OUT/tree.a $TREE_A"

# --- login.defs: the uid range when the config sets none (a folder there: it cannot be read) ---
case_row login-defs-unreadable 0 PASS account slot08 "(uid range unknown: login.defs unreadable)" \
	"edit_config 'del c[\"uid_min\"]; del c[\"uid_max\"]' && mv /etc/login.defs $OUT/login.defs &&
	 mkdir /etc/login.defs" \
	"rmdir /etc/login.defs && mv $OUT/login.defs /etc/login.defs && restore_config"
slots_done
