mkdir -p "$ROOT/etc/slots"
chmod 0755 "$ROOT/etc/slots"
mkfifo -m 0640 "$ROOT/etc/slots/slots.json"
