# A minimal image: /etc/passwd and /etc/group only; shadow and gshadow are made, locked.
rm "$ROOT/etc/shadow" "$ROOT/etc/gshadow"
