# releases/ a symlink (to a folder of someone else's): never followed, never loosened; no
# /etc/sudoers.d in the image, so the drop-in waits for it.
mkdir -p "$ROOT/opt/app" "$ROOT/srv/elsewhere"
chmod 0755 "$ROOT/opt" "$ROOT/opt/app" "$ROOT/srv" "$ROOT/srv/elsewhere"
ln -s ../../srv/elsewhere "$ROOT/opt/app/releases"
