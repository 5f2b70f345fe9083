# sudo in the image, but no /etc/sudoers.d: the drop-in is checked, and not written.
mkdir -p "$ROOT/opt/app/releases" "$ROOT/usr/sbin"
chmod 0755 "$ROOT/opt" "$ROOT/opt/app" "$ROOT/usr" "$ROOT/usr/sbin"
chmod 0711 "$ROOT/opt/app/releases"
: >"$ROOT/usr/sbin/visudo"
chmod 0755 "$ROOT/usr/sbin/visudo"
