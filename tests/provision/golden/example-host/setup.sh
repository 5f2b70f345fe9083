# The application as deployed: three releases (one left behind by another account),
# a "current" link, private state, a docs tree with one shared folder already there.
app=$ROOT/opt/video-studio
rel=$app/releases
mkdir -p "$ROOT/opt" "$rel/2026.11.01/bin" "$rel/2026.11.20/bin" "$rel/2026.10.15-hotfix/bin" \
	"$app/state/sessions"
printf '#!/bin/sh\nexec "$@"\n' >"$rel/2026.11.01/bin/slot-exec"
cp "$rel/2026.11.01/bin/slot-exec" "$rel/2026.11.20/bin/slot-exec"
cp "$rel/2026.11.01/bin/slot-exec" "$rel/2026.10.15-hotfix/bin/slot-exec"
printf 'SECRET=1\n' >"$app/.env"
ln -s 2026.11.20 "$rel/current"
chown -R 1500:1500 "$app"
chmod 0755 "$app"
# The incident: releases/ at 0700 kept every slot away from the launcher.
chmod 0700 "$rel"
chmod 0750 "$rel/2026.11.01" "$rel/2026.11.01/bin" "$rel/2026.11.01/bin/slot-exec"
# A root-owned release whose launcher is set-uid: it gets exactly 0755.
chown -R 0:0 "$rel/2026.11.20"
chmod 0755 "$rel/2026.11.20" "$rel/2026.11.20/bin"
chmod 4755 "$rel/2026.11.20/bin/slot-exec"
# Left by the render agent: reported, never changed.
chown -R 4242:4242 "$rel/2026.10.15-hotfix"
chmod 0700 "$rel/2026.10.15-hotfix" "$rel/2026.10.15-hotfix/bin"
# Private: stays exactly as it is.
chmod 0700 "$app/state" "$app/state/sessions"
chmod 0600 "$app/.env"

docs=$ROOT/srv/video-studio/docs
mkdir -p "$docs/assets/fonts" "$docs/_private" "$docs/_users"
printf 'png\n' >"$docs/assets/logo.png"
printf 'ttf\n' >"$docs/assets/fonts/body.ttf"
printf '#!/bin/sh\n' >"$docs/assets/convert.sh"
ln -s /etc/shadow "$docs/assets/shadow-link"
chown -R 1500:1500 "$ROOT/srv/video-studio"
chmod 0755 "$ROOT/srv" "$ROOT/srv/video-studio" "$docs" "$docs/assets" "$docs/assets/fonts" "$docs/_users"
chmod 0644 "$docs/assets/logo.png" "$docs/assets/fonts/body.ttf"
chmod 0755 "$docs/assets/convert.sh"
chmod 0700 "$docs/_private"

mkdir -p "$ROOT/var/lib/video-studio/browser-profiles"
chown -R 1500:1500 "$ROOT/var/lib/video-studio"
chmod 0700 "$ROOT/var/lib/video-studio/browser-profiles"

# sudo is installed in the image.
mkdir -p "$ROOT/usr/sbin" "$ROOT/etc/sudoers.d"
: >"$ROOT/usr/sbin/visudo"
chmod 0755 "$ROOT/usr" "$ROOT/usr/sbin" "$ROOT/usr/sbin/visudo" "$ROOT/etc/sudoers.d"
