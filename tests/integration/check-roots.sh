#!/bin/sh
# slots-admin check against a hostile service or slot (check's side): a configured
# root reached through a symlink, the sudoers drop-in swapped for the service's copy, a
# hard-linked file in a user's tree or a shared folder (the holder's own, every name in its tree:
# a WARN naming the slot), and a home moved away.  Each case is made by the attacker (runuser as the service or a slot)
# where the attacker could make it; check must FAIL the row, name the component and give a
# fix that does not repeat the attack, change nothing, and pass again once the host is put back.
. "$top_srcdir/tests/integration/lib.sh"
slots_need_root
slots_enter_namespace "$@"
. "$top_srcdir/tests/integration/check-lib.sh"

check_fixture_good

# --- a configured root reached through a symlink (provision refuses these too) ---
# The service owns the folder above docs_root and app_root: it swaps each for a link to a copy.
case_ docs-link roots - "docs_root $DOCS: is a symbolic link" \
	"runuser -u $SERVICE -- sh -c 'mv $DOCS $DOCS.real && ln -s docs.real $DOCS'" \
	"rm $DOCS && mv $DOCS.real $DOCS"
check "docs-link: the fix names the link" sh -c "echo '$FIX' | grep -qF 'replace the link $DOCS'"
case_ app-link roots - "app_root $APP: is a symbolic link" \
	"runuser -u $SERVICE -- sh -c 'mv $APP $APP.real && ln -s app.real $APP'" \
	"rm $APP && mv $APP.real $APP"
# A link higher up: the admin points app_root at a path through a symlinked folder.
case_ app-above-link roots - "$SLOTS_SCRATCH/srv-link" \
	"ln -s srv $SLOTS_SCRATCH/srv-link && sed -i 's|\"app_root\": \"$APP\"|\"app_root\": \"$SLOTS_SCRATCH/srv-link/app\"|' $CONF" \
	"cp -p $OUT/conf.good $CONF && rm $SLOTS_SCRATCH/srv-link"
# Root-only roots: the table's folder and /etc/sudoers.d.
case_ sudoers-link roots - "/etc/sudoers.d: is a symbolic link" \
	"mv /etc/sudoers.d /etc/sudoers.d.real && ln -s sudoers.d.real /etc/sudoers.d" \
	"rm /etc/sudoers.d && mv /etc/sudoers.d.real /etc/sudoers.d"
# The service owning a folder above slots_root: it could swap the slots' homes.
case_ slots-root-owner roots - "not by root" \
	"chown $SERVICE /var/lib/slots" "chown root /var/lib/slots"

# --- the sudoers drop-in: the compare never reads a file the service could have made ---
# The service owns the app tree: it writes a copy of the drop-in there, byte for byte what
# slots-provision writes.  Whatever puts that copy (or another name of the drop-in) at the
# drop-in's path, check must not compare it as the drop-in.  (/etc/sudoers.d is root's, so
# root makes the link here; the link, not who made it, is what check must refuse.)
cp -p "$SUDOERS" "$OUT/sudoers.good"
runuser -u "$SERVICE" -- sh -c "cat >$APP/dropin" <"$SUDOERS"
check "the service's copy is byte for byte the drop-in" cmp -s "$APP/dropin" "$SUDOERS"
case_ dropin-symlink sudoers-dropin - "$SUDOERS is a symbolic link; the drop-in is never read through one" \
	"mv $SUDOERS $OUT/sudoers.away && ln -s $APP/dropin $SUDOERS" "rm $SUDOERS && mv $OUT/sudoers.away $SUDOERS"
# Another name in a folder of the service's (on /etc's file system: a hard link cannot leave it).
case_ dropin-hardlink sudoers-dropin - "$SUDOERS has 2 hard links" \
	"install -d -m 0755 -o $SERVICE /etc/svc-held && ln $SUDOERS /etc/svc-held/dropin" "rm -r /etc/svc-held"
check "dropin-hardlink: the fix finds the other name" sh -c "echo '$FIX' | grep -qF 'find / -xdev -samefile $SUDOERS'"
# A FIFO at the path: refused before it is opened, so check does not hang on it.
case_ dropin-fifo sudoers-dropin - "$SUDOERS is not a regular file" \
	"mv $SUDOERS $OUT/sudoers.away && mkfifo -m 0440 $SUDOERS" "rm $SUDOERS && mv $OUT/sudoers.away $SUDOERS"
# The service's copy owned by the service, moved into place: not root's, so not the drop-in.
case_ dropin-owner sudoers-dropin - "not by root" \
	"mv $SUDOERS $OUT/sudoers.away && cp -p $APP/dropin $SUDOERS" "rm $SUDOERS && mv $OUT/sudoers.away $SUDOERS"
check "the drop-in is root's again" cmp -s "$SUDOERS" "$OUT/sudoers.good"
rm "$APP/dropin"

# --- hard links: a slot links a file it can read into its user's tree or a shared folder ---
# Release and assign never change a file with more than one link, so check reports it.
echo "plan" >"$DOCS/shared/plan.txt"
chown "$SERVICE:slotshared" "$DOCS/shared/plan.txt"
chmod 0660 "$DOCS/shared/plan.txt"
case_ tree-link hard-links - "<docs>/_users/<user>/plan-link (slot03's user)" \
	"runuser -u slot03 -- ln $DOCS/shared/plan.txt $DOCS/_users/$USER_B/plan-link" \
	"rm $DOCS/_users/$USER_B/plan-link"
check "tree-link: the fix says what to do with the link" sh -c 'printf "%s\n" "$1" | grep -qF "cp FILE FILE.copy"' - "$FIX"
case_ shared-link hard-links - "$DOCS/shared/notes-link" \
	"runuser -u slot03 -- ln $DOCS/_users/$USER_B/notes.txt $DOCS/shared/notes-link" \
	"rm $DOCS/shared/notes-link"
rm "$DOCS/shared/plan.txt"
# The holder's own file with both names in its user's tree: release replaces each name by a copy
# of the service's, so it is a WARN naming the slot, and check passes.
TREE3=$DOCS/_users/$USER_B
case_row own-link 0 WARN hard-links slot03 "<docs>/_users/<user>/own" \
	"runuser -u slot03 -- sh -c 'echo mine >$TREE3/own.txt && ln $TREE3/own.txt $TREE3/own-link'" \
	"rm $TREE3/own.txt $TREE3/own-link"
check "own-link: the WARN says release clears it" sh -c 'grep "^WARN  *hard-links  *slot03 " "$1" | grep -q "release"' _ \
	"$OUT/own-link.out"
check "own-link: the hard-links row of the host PASSes" test "$(row_status own-link hard-links)" = PASS
check "own-link: no user id in the output" no_user_ids "$OUT/own-link.out" "$OUT/own-link.err"
grep "hard-links" "$OUT/own-link.out" | sed 's/^/# /'
# The service's file linked by the slot, both names in the tree: not the holder's own, a FAIL.
case_ svc-link-in hard-links - "<docs>/_users/<user>/notes" \
	"runuser -u slot03 -- ln $TREE3/notes.txt $TREE3/notes-link" "rm $TREE3/notes-link"
# The holder's own file with a third name outside the tree (in /tmp, on the tree's file system): a FAIL.
case_ own-link-out hard-links - "<docs>/_users/<user>/own" \
	"runuser -u slot03 -- sh -c 'echo mine >$TREE3/own.txt && ln $TREE3/own.txt $TREE3/own-link && ln $TREE3/own.txt /tmp/own-away'" \
	"rm $TREE3/own.txt $TREE3/own-link /tmp/own-away"

# --- a home moved away: the fix is usermod -d, never a folder made at the wrong path ---
HOME8=/var/lib/slots/$SERVICE/home/slot08
case_ home-moved account slot08 "home is /var/lib/slots/elsewhere/slot08, not $HOME8" \
	"usermod -d /var/lib/slots/elsewhere/slot08 slot08" "sh -c \"\$FIX\""
check "home-moved: the fix is usermod -d" test "$FIX" = "usermod -d $HOME8 slot08"
check "home-moved: nothing is made at the old path" sh -c "! grep -F 'elsewhere' '$OUT/home-moved.out' | grep -q 'install -d'"
slots_done
