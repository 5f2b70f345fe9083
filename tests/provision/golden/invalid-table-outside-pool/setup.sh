mkdir -p "$ROOT/etc/slots"
chmod 0755 "$ROOT/etc/slots"
printf '{"version": 1, "slots": {"slot09": {"user": "u1", "since": "2026-10-01T09:12:00Z"}}}\n' >"$ROOT/etc/slots/slots.json"
chmod 0640 "$ROOT/etc/slots/slots.json"
