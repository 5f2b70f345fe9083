# Releases whose folder, bin or launcher is a private path: left exactly as they are; a
# launcher with a second name is never loosened; a folder above app_root others cannot
# traverse is reported, not changed.
r=$ROOT/opt/app/releases
for n in 1 2 3 4 5; do mkdir -p "$r/$n/bin"; printf '#!/bin/sh\n' >"$r/$n/bin/run"; chmod 0700 "$r/$n" "$r/$n/bin" "$r/$n/bin/run"; done
ln "$r/5/bin/run" "$ROOT/opt/app/run.copy"
ln -s 1 "$r/current"
printf 'notes\n' >"$r/NOTES"
chmod 0700 "$ROOT/opt"
chmod 0755 "$ROOT/opt/app"
chmod 0700 "$r"
mkdir -p "$ROOT/etc/sudoers.d"
chmod 0755 "$ROOT/etc/sudoers.d"
