#!/bin/sh
# slots-admin check: the FAIL rows of the account and table layers that no other test
# produced.  Each case is a row of a table: how the fixture host is broken, the
# row that must fail, words its detail must hold, and how the host is put back (the printed
# fix itself where it is a command, run as printed).  Every run: exit 1, the row FAIL with a
# fix, nothing changed by check; after the repair check exits 0 again.
. "$top_srcdir/tests/integration/lib.sh"
slots_need_root
slots_enter_namespace "$@"
. "$top_srcdir/tests/integration/check-lib.sh"

check_fixture_good
HOME8=/var/lib/slots/$SERVICE/home/slot08

# --- the account layer (slot08: the test slot, always checked) ---
case_ home-mode account slot08 "home $HOME8 is 0755, not 0700" "chmod 0755 $HOME8" FIX
case_ home-owner account slot08 "home $HOME8 is owned by root" "chown root $HOME8" FIX
case_ home-missing account slot08 "home $HOME8: No such file or directory" "mv $HOME8 $OUT/home8" FIX
case_ home-file account slot08 "home $HOME8 is a file, not a folder" \
	"rmdir $HOME8 && : >$HOME8" "rm $HOME8 && install -d -m 0700 -o slot08 -g slot08 $HOME8"
case_ home-symlink account slot08 "home $HOME8 is a symlink, not a folder" \
	"mv $HOME8 $OUT/home8b && ln -s $OUT/home8b $HOME8" "rm $HOME8 && mv $OUT/home8b $HOME8"
case_ home-path account slot08 "home is /var/lib/slots/elsewhere/slot08, not $HOME8" \
	"usermod -d /var/lib/slots/elsewhere/slot08 slot08" FIX
case_ not-shared account slot08 "not a member of slotshared" "gpasswd -d slot08 slotshared >/dev/null" FIX
case_ primary-group account slot08 "primary group is slotshared, not slot08" "usermod -g slotshared slot08" FIX
case_ no-shared-group account slot08 "the group slotshared does not exist" \
	"sed -i '/^slotshared:/d' /etc/group /etc/gshadow" restore_accounts
case_ no-account account slot08 "no account slot08" \
	"sed -i '/^slot08:/d' /etc/passwd /etc/shadow" restore_accounts

# --- the table layer ---
case_ table-owner table - "owner is $SERVICE, not root" "chown $SERVICE $TABLE" FIX
case_ table-mode table - "mode is 0604, not 0640" "chmod 0604 $TABLE" FIX
case_ table-missing table - "$TABLE: No such file or directory" "mv $TABLE $OUT/table.away" restore_table
case_ table-symlink table - "is a symlink; the table is never read through one" \
	"mv $TABLE $OUT/table.real && ln -s $OUT/table.real $TABLE" "rm $TABLE && mv $OUT/table.real $TABLE"
case_ table-fifo table - "is not a regular file" "rm $TABLE && mkfifo $TABLE" restore_table
case_ table-folder-closed table - "the service account $SERVICE cannot read it" "chmod 0700 /etc/slots" \
	"chmod 0755 /etc/slots"
case_ table-no-service table - "the service account $SERVICE does not exist" \
	"sed -i '/^$SERVICE:/d' /etc/passwd" restore_accounts
slots_done
