#!/bin/sh
# The demo: provisions the example host of data/slots.conf.example, first into an image
# folder (--root) and then as a live host inside a private mount namespace, assigns two
# users, shows the status, runs the self-check, replays the root:root outage and its fix,
# and releases a user.  Run as root on Debian 12; the host is left untouched.
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
out=${SLOTS_BUILD:-$top/build-demo}
# The service and the slots read and run what the demo builds and installs (slotctl, the
# launcher, the docs): whatever the caller's umask (sudo keeps a stricter one than 022),
# it is made as an admin's umask 022 makes it.
umask 022

if [ -z "${SLOTS_DEMO_INSIDE:-}" ]; then
	[ "$(id -u)" = 0 ] || { echo "demo: run it as root (sudo sh scripts/demo.sh)" >&2; exit 1; }
	sh "$top/scripts/deps.sh"
	echo "Building slots in $out ..."
	(cd "$top" && ./autogen.sh >/dev/null 2>&1)
	mkdir -p "$out"
	(cd "$out" && "$top/configure" -q >/dev/null && make -j"$(nproc)" >/dev/null)
	# Private mount, PID and IPC namespaces: a release's kill(-1) as a slot reaches only the demo.
	st=0
	SLOTS_DEMO_INSIDE=1 SLOTS_BUILD=$out unshare --mount --propagation private --pid --ipc --fork \
		--mount-proc sh "$0" "$@" || st=$?
	# Under sudo, the build and what ./autogen.sh made go back to the user who cloned the tree.
	. "$top/scripts/sudo-give-back.sh"
	slots_give_back "$top" "$out"
	exit "$st"
fi

# ---- inside a private mount namespace: nothing below reaches the host ----
# The build and the example config first move to /run, so a checkout under /tmp, /opt or /srv
# stays usable when those get their fresh tmpfs.
mount -t tmpfs -o mode=0755 tmpfs /run
mkdir -p /run/slots-build && mount --bind "$out" /run/slots-build
cp "$top/data/slots.conf.example" /run/slots.conf.example
# Root without CAP_SYS_RESOURCE (a container's) cannot raise a hard limit above this shell's,
# and pam_slots, which fails closed, would then refuse every slot session: the example's limits
# are kept within this shell's hard limits (prlimit: bytes, counts, seconds).
prlimit --pid $$ --noheadings --raw --output RESOURCE,HARD | awk '
	NR == FNR { if ($2 != "unlimited") hard[tolower($1)] = $2; next }
	match($0, /"(nproc|nofile|as|data|fsize|cpu|core)": "?[0-9]+[KMGT]?"?/) {
		kv = substr($0, RSTART, RLENGTH); key = kv; sub(/^"/, "", key); sub(/".*/, "", key)
		v = kv; sub(/^[^:]*: "?/, "", v); sub(/"$/, "", v)
		n = v + 0; u = substr(v, length(v)); m = u == "K" ? 1024 : u == "M" ? 1048576 : \
			u == "G" ? 1073741824 : u == "T" ? 1099511627776 : 1
		if ((key in hard) && n * m > hard[key] + 0)
			$0 = substr($0, 1, RSTART - 1) "\"" key "\": " hard[key] substr($0, RSTART + RLENGTH)
	}
	{ print }' - "$top/data/slots.conf.example" >/run/slots.conf.example
out=/run/slots-build
example=/run/slots.conf.example
for d in /tmp /var/tmp /dev/shm /opt /srv; do
	mount -t tmpfs -o mode=0755 tmpfs "$d"
done
chmod 1777 /tmp /var/tmp /dev/shm
# /var/lib gets a private writable layer, so nothing the demo writes there reaches the disk.
mkdir -p /tmp/.varlib/upper /tmp/.varlib/work
mount -t overlay overlay -o lowerdir=/var/lib,upperdir=/tmp/.varlib/upper,workdir=/tmp/.varlib/work /var/lib
etc=$(mktemp -d /tmp/etc.XXXXXX)
cp -a /etc/. "$etc/" && mount --bind "$etc" /etc

PATH=$out:$PATH
say() { printf '\n\033[1m== %s\033[0m\n' "$*"; }
run() {
	if [ "$1" = sh ] && [ "$2" = -c ]; then printf '$ %s\n' "$3"; else printf '$ %s\n' "$*"; fi
	"$@"
}
ALICE=aa73da63e26b40a1bb701c2b4c024870
BOB=5f0c2e91b7d84a6e9c3d2b1a0f9e8d7c

say "1. Build an image: slots-provision --root IMG (the image's own etc/, never the host's NSS)"
img=/tmp/image
mkdir -p $img/etc/slots
for f in passwd group shadow gshadow login.defs; do cp -p /etc/$f $img/etc/; done
echo "video-studio:x:990:990:video-studio:/srv/video-studio:/usr/sbin/nologin" >>$img/etc/passwd
echo "video-studio:x:990:" >>$img/etc/group
cp "$example" $img/etc/slots/slots.conf
run slots-provision --root $img | tail -n 12
echo "(...)"
run sh -c "grep '^slot' $img/etc/passwd | head -n 3"
run slots-provision --root $img

say "2. A live host (in a private mount namespace): the app tree as production had it"
useradd --system --user-group --home-dir /srv/video-studio --shell /usr/sbin/nologin video-studio
rel=/opt/video-studio/releases/2026.11.29
mkdir -p $rel/bin /opt/video-studio/state /srv/video-studio/docs/assets /srv/video-studio/docs/renders \
	/srv/video-studio/docs/_private /var/lib/video-studio/browser-profiles
# The sandbox launcher: runs what it is given (the self-check's probe), else says who it runs as.
printf '#!/bin/sh\n[ $# -gt 0 ] && exec "$@"\necho "launcher runs as $(id -un)"\n' >$rel/bin/slot-exec
# The app's slotctl, the first program of the chain sudo -> slotctl -> launcher (here: it runs it).
printf '#!/bin/sh\nexec "$@"\n' >$rel/bin/slotctl && chmod 0755 $rel/bin/slotctl
ln -s releases/2026.11.29 /opt/video-studio/current
chmod 0700 /opt/video-studio/releases        # the layer that kept slots from the launcher
chmod 0700 $rel/bin/slot-exec /opt/video-studio/state /srv/video-studio/docs/_private \
	/var/lib/video-studio/browser-profiles
chown video-studio:video-studio /var/lib/video-studio/browser-profiles
echo "SECRET=1" >/opt/video-studio/.env && chmod 0600 /opt/video-studio/.env
chown -R video-studio:video-studio /opt/video-studio /srv/video-studio
mkdir -p /etc/slots && cp "$example" /etc/slots/slots.conf
run ls -ld /opt/video-studio/releases

say "3. slots-provision --dry-run, then for real, then again (idempotent)"
run sh -c 'slots-provision --dry-run | tail -n 4'
run sh -c 'slots-provision | tail -n 8'
run slots-provision
run ls -ld /opt/video-studio/releases /opt/video-studio/state
run id slot01
# What the libpam-slots package's pam-auth-update profile does: pam_slots in sudo's session
# stack (limits, no new privileges), here the build's module in the namespace's /etc.
run sh -c "echo 'session required $out/pam/.libs/pam_slots.so config=/etc/slots/slots.conf' >>/etc/pam.d/sudo"

say "4. Assign two users, show the status"
run slots-admin assign $ALICE
run slots-admin assign $BOB
run slots-admin status
run ls -ld /srv/video-studio/docs/_users/$ALICE
if command -v sudo >/dev/null; then
	# The executor's command line: the service runs slotctl and the launcher as the slot.
	run runuser -u video-studio -- sudo -n -u slot01 --preserve-env=PATH,LANG -- \
		/opt/video-studio/current/bin/slotctl /opt/video-studio/current/bin/slot-exec
fi

if slots-admin --help | grep -q '^  check'; then
	say "5. The self-check (read-only; user ids never printed)"
	run slots-admin check || true

	say "6. The outage, replayed: an admin script leaves the table root:root"
	chgrp root /etc/slots/slots.json
	run sh -c 'slots-admin check | grep -E "^FAIL|self-check"' || true
	run chgrp video-studio /etc/slots/slots.json
	run sh -c 'slots-admin check | tail -n 1'
fi

say "7. Release a user: processes, files and group access of the slot are gone"
runuser -u slot02 -- sh -c 'echo left-behind >/tmp/slot02-file; sleep 600 &' || true
run sh -c "ps -o pid=,stat=,comm= -u slot02"
run slots-admin release $BOB
run sh -c "ls /tmp/slot02-file 2>&1 || true"
run sh -c "ps -o pid=,stat=,comm= -u slot02 | grep -v ' Z' || echo 'no process of slot02 runs'"
run slots-admin status --json slot02
say "Done: the host was not changed (everything ran in a private mount namespace)."
