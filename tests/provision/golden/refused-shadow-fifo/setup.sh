# Something not a regular file where /etc/shadow belongs: never read, never replaced.
rm "$ROOT/etc/shadow"
mkfifo -m 0640 "$ROOT/etc/shadow"
