# What a run killed between mkdir (mode 0) and chmod leaves: root:root 0000 folders on the way
# to slots_root and to the table.  The next run finishes them.
mkdir -p "$ROOT/var/lib/slots" "$ROOT/etc/slots"
chmod 0755 "$ROOT/var" "$ROOT/var/lib"
chmod 0000 "$ROOT/var/lib/slots" "$ROOT/etc/slots"
