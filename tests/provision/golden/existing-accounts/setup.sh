# A host provisioned before, then drifted: slot01's home opened up and given to root, the
# table made world-readable and root's, the slotctl config edited by hand.
mkdir -p "$ROOT/srv/slots/home/slot01" "$ROOT/srv/slots/state/slot01" "$ROOT/etc/slots"
chmod 0755 "$ROOT/srv" "$ROOT/srv/slots" "$ROOT/srv/slots/home" "$ROOT/srv/slots/home/slot01" \
	"$ROOT/srv/slots/state" "$ROOT/etc/slots"
chown 905:905 "$ROOT/srv/slots/state/slot01"
chmod 0700 "$ROOT/srv/slots/state/slot01"
printf 'hello\n' >"$ROOT/srv/slots/home/slot01/.profile"
cat >"$ROOT/etc/slots/slots.json" <<'J'
{"version": 1, "slots": {"slot02": {"user": "aa73da63e26b40a1bb701c2b4c024870", "since": "2026-10-01T09:12:00Z", "note": "kept"}}}
J
chmod 0644 "$ROOT/etc/slots/slots.json"
printf '{"docs_root": "/elsewhere"}\n' >"$ROOT/etc/slots/slotctl.json"
chmod 0666 "$ROOT/etc/slots/slotctl.json"
