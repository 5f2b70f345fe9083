# Planted links: following them would chown the tree's /etc and its shadow file to a slot.
mkdir -p "$ROOT/var/lib/slots/svc/home" "$ROOT/var/lib/slots/svc/state"
chmod 0755 "$ROOT/var" "$ROOT/var/lib" "$ROOT/var/lib/slots" "$ROOT/var/lib/slots/svc" \
	"$ROOT/var/lib/slots/svc/home" "$ROOT/var/lib/slots/svc/state"
ln -s /etc "$ROOT/var/lib/slots/svc/home/slot02"
ln -s ../../../../etc/shadow "$ROOT/var/lib/slots/svc/state/slot01"
# And where the slotctl config goes: replacing it must not be the first sign of trouble.
mkdir -p "$ROOT/etc/slots"
chmod 0755 "$ROOT/etc/slots"
ln -s /etc/shadow "$ROOT/etc/slots/slotctl.json"
