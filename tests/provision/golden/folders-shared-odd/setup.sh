# Each shape a shared folder's path can have: a folder on the way (made), one missing, one a
# symlink; the folder itself a symlink or a file (never followed, never shared); one a killed
# run left at mode 0 (finished).
mkdir -p "$ROOT/srv/docs/media" "$ROOT/srv/docs/real"
chmod 0755 "$ROOT/srv" "$ROOT/srv/docs" "$ROOT/srv/docs/media" "$ROOT/srv/docs/real"
ln -s real "$ROOT/srv/docs/nested"
ln -s real "$ROOT/srv/docs/link"
printf 'x\n' >"$ROOT/srv/docs/file"
chmod 0644 "$ROOT/srv/docs/file"
mkdir "$ROOT/srv/docs/half"
chmod 0000 "$ROOT/srv/docs/half"
