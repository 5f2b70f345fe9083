#!/bin/sh
# The Debian package, end to end: builds it from this tree with dpkg-buildpackage, runs
# lintian, installs the .debs into a throwaway root (an overlay over / in private mount,
# PID and IPC namespaces, entered with chroot) and there
#   1. checks that installing changed no account, wrote no table and started nothing,
#      that pam-auth-update put pam_slots into the session stacks, and that a purge
#      leaves nothing but what dpkg, debconf and pam-auth-update keep as their own state;
#   2. installs again and runs the demo's steps with the installed /usr/sbin binaries
#      (provision, assign, status, check, the PAM module through sudo, completion,
#      release), then purges: the admin's files in /etc/slots and the accounts stay,
#      everything of the package goes.
# The build is the README's "dpkg-buildpackage -us -uc -b" as written, with its "make check",
# run as a buildd runs it: by an account that is not root (nobody, through runuser), in a
# folder it owns, with HOME its own.  So make check runs the unit tests and those that need
# no root under Debian's build flags, and each test that needs root skips (77) saying why;
# the root tests ran in scripts/test.sh's first step on the same tree.
# Not part of "make check" (the build takes minutes of CPU): scripts/test.sh runs it as
# its own step.  The .debs, .changes and .buildinfo are moved to WORKDIR, where the guest
# step (tests/guest/run.sh) boots them.  Run as root on Debian 12:
#   sh tests/package/package.sh [WORKDIR]
# The host is not changed: the build happens in a temporary folder of the build account,
# everything else in WORKDIR (default: a temporary folder) and inside the namespaces.
# SLOTS_PKG_REUSE=1 takes the packages a run left in WORKDIR instead of building again (for
# working on this script).
set -u
top=$(cd "$(dirname "$0")/../.." && pwd)

if [ -z "${SLOTS_PKG_INSIDE:-}" ]; then
	[ "$(id -u)" = 0 ] || { echo "SKIP: needs root (dpkg in a throwaway root)"; exit 77; }
	for t in dpkg-buildpackage lintian dh unshare chroot runuser; do
		command -v $t >/dev/null || { echo "SKIP: $t is not installed (scripts/deps.sh installs it)"; exit 77; }
	done
	if ! unshare --mount --pid --ipc --fork --mount-proc true 2>/dev/null; then
		echo "SKIP: cannot create mount, PID and IPC namespaces (unshare)"
		exit 77
	fi
	work=${1:-}
	tmpwork=
	if [ -z "$work" ]; then
		work=$(mktemp -d /var/tmp/slots-package.XXXXXX)
		tmpwork=$work
	fi
	mkdir -p "$work"
	work=$(cd "$work" && pwd)
	# The build account's folder: the trees, HOME, and what dpkg-buildpackage leaves beside a tree.
	builder=nobody
	build=$(mktemp -d /var/tmp/slots-build.XXXXXX) || exit 1
	trap 'rm -rf "$build" ${tmpwork:+"$tmpwork"}' EXIT
	mkdir "$build/home"
	chown -R "$builder:" "$build" || exit 1
	# dpkg-buildpackage -us -uc -b in tree $1 as the build account; the log on stdout.
	build_as_user() {
		runuser -u "$builder" -- env HOME="$build/home" ${DEB_BUILD_OPTIONS:+DEB_BUILD_OPTIONS="$DEB_BUILD_OPTIONS"} \
			sh -c 'cd "$1" && exec dpkg-buildpackage -us -uc -b' _ "$1" 2>&1
	}
	# The tree as git has it (tracked and new files, no build folders) into folder $1 at version
	# $2 (kept in its .tarball-version and stamped into its changelog), the build account's; a
	# tree without .git (a tarball) is taken as it is, less what a build leaves.
	copy_tree() {
		mkdir -p "$1" || return 1
		if git -C "$top" rev-parse --git-dir >/dev/null 2>&1; then
			(cd "$top" && git ls-files -z --cached --others --exclude-standard | tar --null -T - -cf -) |
				tar -C "$1" -xf - || return 1
		else
			(cd "$top" && tar --exclude='./build*' --exclude=./autom4te.cache --exclude=./.git -cf - .) |
				tar -C "$1" -xf - || return 1
		fi
		printf '%s\n' "$2" >"$1/.tarball-version" &&
			(cd "$1" && make -s --no-print-directory -f debian/rules version-stamp) &&
			chown -R "$builder:" "$1"
	}
	# What a build left beside its tree, moved from folder $1 into folder $2 (root's again).
	take_debs() {
		for f in "$1"/*.deb "$1"/*.changes "$1"/*.buildinfo; do
			chown 0:0 "$f" && mv "$f" "$2/" || return 1
		done
	}
	# The tree's version (scripts/git-version.sh: from git, or a tarball's .tarball-version).
	version=$(sh "$top/scripts/git-version.sh") || exit 1
	src=$build/slots-$version
	if [ -n "${SLOTS_PKG_REUSE:-}" ] && ls "$work"/slots_*.changes >/dev/null 2>&1; then
		echo "# SLOTS_PKG_REUSE: the packages already in $work, not built again"
	else
		rm -rf "$work"/*.deb "$work"/*.changes "$work"/*.buildinfo
		echo "=== build: dpkg-buildpackage -us -uc -b in $src, as $builder"
		copy_tree "$src" "$version" || exit 1
		# The README's command as it is written: no DEB_BUILD_OPTIONS, so dh_auto_test runs
		# "make check" under Debian's build flags.  SLOTS_PKG_NOCHECK=1 (for working on this
		# script) builds with nocheck.
		if [ -n "${SLOTS_PKG_NOCHECK:-}" ]; then
			export DEB_BUILD_OPTIONS=nocheck
		else
			unset DEB_BUILD_OPTIONS
		fi
		t0=$(date +%s)
		if ! build_as_user "$src" >"$work/build.log"; then
			grep -E '^(FAIL|ERROR):|^# (TOTAL|PASS|SKIP|FAIL|ERROR):' "$work/build.log" | sed 's/^/# /'
			for log in $(find "$src" -name '*.log' ! -name config.log ! -name test-suite.log 2>/dev/null); do
				grep -qE '^:test-result: (FAIL|ERROR)' "${log%.log}.trs" 2>/dev/null &&
					{ echo "--- $log"; tail -n 40 "$log"; }
			done
			tail -n 60 "$work/build.log"
			echo "not ok - dpkg-buildpackage failed (log: $work/build.log)"
			exit 1
		fi
		echo "ok - dpkg-buildpackage -us -uc -b as $builder ($(($(date +%s) - t0)) s$([ -n "${SLOTS_PKG_NOCHECK:-}" ] && echo ", nocheck"))"
		grep -E '^# (TOTAL|PASS|SKIP|FAIL|ERROR):' "$work/build.log" | sed 's/^/# make check: /'
		if [ -z "${SLOTS_PKG_NOCHECK:-}" ]; then
			grep -q '^# TOTAL: [1-9]' "$work/build.log" ||
				{ echo "not ok - the package build ran no make check"; exit 1; }
			grep -Eq '^# FAIL: +0$' "$work/build.log" && grep -Eq '^# ERROR: +0$' "$work/build.log" ||
				{ echo "not ok - the package build's make check had a FAIL or an ERROR"; exit 1; }
		fi
		take_debs "$build" "$work" || exit 1
		ls "$work"/*.deb | sed 's/^/# /'
	fi

	# The next build, for the guest's upgrade case (tests/guest/e2e.sh): the same tree with the
	# version a later commit gets (an empty commit on a clone of HEAD), in WORKDIR/next; built
	# with nocheck, since its code is the one make check just passed.  A tree without git takes
	# its version with +next1.
	next=$work/next
	if [ -n "${SLOTS_PKG_REUSE:-}" ] && ls "$next"/slots_*.deb >/dev/null 2>&1; then
		echo "# SLOTS_PKG_REUSE: the next build already in $next"
	else
		rm -rf "$next" && mkdir -p "$next" || exit 1
		nextv=$version+next1
		if git -C "$top" rev-parse -q --verify HEAD >/dev/null 2>&1 &&
			git clone -q "$top" "$next/clone" 2>/dev/null &&
			git -C "$next/clone" -c user.name=slots-test -c user.email=test@example.org \
				commit -q --allow-empty -m "the next commit" &&
			mkdir -p "$next/clone/scripts" && cp "$top/scripts/git-version.sh" "$next/clone/scripts/" &&
			cp "$top/.version" "$next/clone/.version"; then
			nextv=$(sh "$next/clone/scripts/git-version.sh" "$next/clone")
		fi
		rm -rf "$next/clone"
		dpkg --compare-versions "$nextv" gt "$version" ||
			{ echo "not ok - the next commit's version $nextv is not later than $version"; exit 1; }
		nsrc=$build/next/slots-$nextv
		mkdir -p "$build/next" && copy_tree "$nsrc" "$nextv" && chown "$builder:" "$build/next" || exit 1
		if DEB_BUILD_OPTIONS=nocheck build_as_user "$nsrc" >"$next/build.log" && take_debs "$build/next" "$next"; then
			echo "ok - the next build ($nextv, nocheck, as $builder) for the upgrade test"
		else
			tail -n 30 "$next/build.log"
			echo "not ok - the next build ($nextv) failed (log: $next/build.log)"
			exit 1
		fi
	fi

	echo "=== lintian"
	changes=$(ls "$work"/slots_*.changes)
	lintian --pedantic --fail-on error,warning,pedantic --display-info "$changes" >"$work/lintian.log" 2>&1
	lrc=$?
	grep -v '^running with root privileges' "$work/lintian.log" | sed 's/^/# /'
	lfail=0
	if [ "$lrc" = 0 ] && ! grep -Eq '^[EWP]: ' "$work/lintian.log"; then
		echo "ok - lintian --pedantic: no error, warning or pedantic tag (overrides: debian/*.lintian-overrides)"
	else
		echo "not ok - lintian (exit $lrc)"
		lfail=1
	fi

	SLOTS_PKG_INSIDE=1 SLOTS_PKG_WORK=$work SLOTS_PKG_TOP=$top SLOTS_PKG_LINTIAN=$lfail \
		unshare --mount --propagation private --pid --ipc --fork --mount-proc sh "$0"
	exit $?
fi

# ---- inside private mount, PID and IPC namespaces ----
work=$SLOTS_PKG_WORK
passed=0
failed=$SLOTS_PKG_LINTIAN
ok() { passed=$((passed + 1)); echo "ok - $*"; }
not_ok() { failed=$((failed + 1)); echo "not ok - $*"; }
check() { d=$1; shift; if "$@"; then ok "$d"; else not_ok "$d"; fi; }
fatal() { echo "Bail out! $*"; exit 99; }

deb_slots=$(ls "$work"/slots_*.deb)
deb_pam=$(ls "$work"/libpam-slots_*.deb)

echo "=== the packages' contents"
dpkg-deb -c "$deb_slots" | awk '{ print $1, $2, $6 }' >"$work/slots.list"
dpkg-deb -c "$deb_pam" | awk '{ print $1, $2, $6 }' >"$work/pam.list"
ma=$(dpkg-architecture -qDEB_HOST_MULTIARCH)
while read -r list entry; do
	check "$list has $entry" grep -qxF -- "$entry" "$work/$list.list"
done <<EOF
slots -rwxr-xr-x root/root ./usr/sbin/slots-admin
slots -rwxr-xr-x root/root ./usr/sbin/slots-provision
slots drwxr-xr-x root/root ./etc/slots/
slots -rw-r--r-- root/root ./usr/share/doc/slots/examples/slots.conf.example
slots -rw-r--r-- root/root ./usr/share/doc/slots/examples/slots-ansible.yml
slots -rw-r--r-- root/root ./usr/share/bash-completion/completions/slots-admin
slots -rw-r--r-- root/root ./usr/share/bash-completion/completions/slots-provision
slots -rw-r--r-- root/root ./usr/share/man/man8/slots-admin.8.gz
slots -rw-r--r-- root/root ./usr/share/man/man8/slots-provision.8.gz
slots -rw-r--r-- root/root ./usr/share/man/man5/slots.conf.5.gz
slots -rw-r--r-- root/root ./usr/share/man/man5/slots.json.5.gz
pam -rw-r--r-- root/root ./usr/lib/$ma/security/pam_slots.so
pam -rw-r--r-- root/root ./usr/share/pam-configs/slots
pam -rw-r--r-- root/root ./usr/share/man/man8/pam_slots.8.gz
EOF
check "the slots package holds no file of the module" sh -c "! grep -q 'security/\|pam-configs' '$work/slots.list'"
check "/etc/slots is the only thing under /etc (no conffile to overwrite an admin's config)" \
	test "$(grep -c ' ./etc/.' "$work/slots.list")" = 1
rm -rf "$work/ctl"
# Its only install script is debhelper's for the check's timer: no preinst, and a postinst
# that names no unit but the timer and runs neither command (the timer's service waits
# for a config, so nothing is provisioned or checked on install).
check "slots provisions nothing on install: its postinst only enables the check's timer" \
	sh -c "dpkg-deb -e '$deb_slots' '$work/ctl' && ! test -e '$work/ctl/preinst' &&
		grep -q \"'slots-check.timer'\" '$work/ctl/postinst' &&
		! grep -Eq 'slots-(admin|provision)|slots-check[.]service' '$work/ctl/postinst'"
check "its prerm acts on remove only" sh -c "grep -q '\"\\\$1\" = remove' '$work/ctl/prerm'"
check "its postrm acts on purge only" sh -c "grep -q '\"\\\$1\" = purge' '$work/ctl/postrm'"

echo "=== a throwaway root: an overlay over /"
base=/run/slots-pkg
mkdir -p $base || fatal "mkdir $base"
mount -t tmpfs -o mode=0755 tmpfs $base || fatal "cannot mount a tmpfs on $base"
mkdir -p $base/upper $base/work $base/root
mount -t overlay overlay -o lowerdir=/,upperdir=$base/upper,workdir=$base/work $base/root ||
	fatal "cannot mount an overlay over /"
R=$base/root
mount -t proc proc $R/proc || fatal "proc"
mount --rbind /dev $R/dev && mount --make-rslave $R/dev || fatal "dev"
# The slots' IPC and temp files of a release stay in here, never the host's.
mount -t tmpfs -o mode=1777 tmpfs $R/dev/shm || fatal "dev/shm"
mount -t mqueue mqueue $R/dev/mqueue 2>/dev/null || true
mount --rbind /sys $R/sys && mount --make-rslave $R/sys || fatal "sys"
for d in tmp var/tmp run; do
	mount -t tmpfs -o mode=1777 tmpfs "$R/$d" || fatal "$d"
done
chmod 0755 $R/run
mkdir -p $R/run/lock && chmod 1777 $R/run/lock
mkdir -p $R/tmp/debs && cp "$deb_slots" $R/tmp/debs/slots.deb && cp "$deb_pam" $R/tmp/debs/libpam-slots.deb ||
	fatal "copy the debs"
in_root() { chroot $R /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root LANG=C.UTF-8 "$@"; }
in_root test -x /usr/bin/dpkg || fatal "the throwaway root has no dpkg"
in_root test ! -e /usr/sbin/slots-admin || fatal "slots is installed on the host already; nothing to compare with"
cp -p $R/etc/pam.d/common-session $base/common-session.before

# What a purge may leave: dpkg's, debconf's and pam-auth-update's own state, logs, man-db's
# index (its dpkg trigger rebuilds it), journald's catalog database (systemd's trigger compiles
# it from the catalog files), and
# the common-* PAM files pam-auth-update writes again (their content must equal the host's).
leftovers() {
	(cd $base/upper && find . -mindepth 1 \( -type d -o -print \) | sed 's:^\.::' | LC_ALL=C sort) |
		grep -Ev '^/(var/lib/dpkg|var/log|var/cache/debconf|var/cache/man|var/lib/pam|var/lib/systemd/catalog)(/|$)' |
		while IFS= read -r p; do
			case $p in
			/etc/pam.d/common-*)
				cmp -s "$R$p" "$p" && continue
				echo "$p (differs from before)"
				;;
			*) echo "$p" ;;
			esac
		done
	# New folders (a copied-up folder that was there before is no change).
	(cd $base/upper && find . -mindepth 1 -type d | sed 's:^\.::' | LC_ALL=C sort) |
		grep -Ev '^/(var/lib/dpkg|var/log|var/cache/debconf|var/cache/man|var/lib/pam|var/lib/systemd/catalog)(/|$)' |
		while IFS= read -r p; do [ -d "$p" ] || echo "$p/ (new folder)"; done
}

echo "=== 1. install, look, purge"
if in_root dpkg -i /tmp/debs/slots.deb /tmp/debs/libpam-slots.deb >$base/install.log 2>&1; then
	ok "dpkg -i slots libpam-slots"
else
	not_ok "dpkg -i slots libpam-slots"
	sed 's/^/# /' $base/install.log
fi
check "dpkg lists both as installed" sh -c \
	"chroot $R dpkg-query -W -f='\${Status}\n' slots libpam-slots | grep -c '^install ok installed' | grep -qx 2"
check "/etc/slots is root:root 0755" test "$(stat -c '%U:%G %a' $R/etc/slots)" = "root:root 755"
check "/etc/slots is empty: no config, no table" sh -c "test -d $R/etc/slots && test -z \"\$(ls -A $R/etc/slots)\""
check "no slot account was created" sh -c "! grep -q '^slot' $R/etc/passwd $R/etc/group"
check "no sudoers drop-in was written" sh -c "! ls $R/etc/sudoers.d | grep -q slots"
check "no unit but the check's service and timer, no cron job (the journal's catalog is no unit)" sh -c \
	"chroot $R dpkg -L slots libpam-slots >$base/files && grep -q /usr/sbin/slots-admin $base/files &&
	 ! grep -Ev '^/usr/lib/systemd(/catalog(/slots\\.catalog)?)?$|^/lib/systemd(/system(/slots-check\\.(service|timer))?)?$' $base/files |
	 grep -Eq 'systemd|cron|init.d'"
check "the timer is enabled, the service waits for the config" sh -c \
	"test -L $R/etc/systemd/system/timers.target.wants/slots-check.timer &&
	 grep -qx 'ConditionPathExists=/etc/slots/slots.conf' $R/lib/systemd/system/slots-check.service"
check "pam-auth-update added pam_slots to common-session" grep -q 'pam_slots\.so' $R/etc/pam.d/common-session
check "and to common-session-noninteractive" grep -q 'pam_slots\.so' $R/etc/pam.d/common-session-noninteractive
check "the module is where libpam looks" test -f "$R/usr/lib/$ma/security/pam_slots.so"
check "man slots-admin finds the page" sh -c "chroot $R sh -c 'test -f \$(man -w slots-admin 2>/dev/null || echo /usr/share/man/man8/slots-admin.8.gz)'"
check "the example config is valid for slots-provision --dry-run --root" sh -c \
	"mkdir -p $R/tmp/img/etc/slots && cp $R/usr/share/doc/slots/examples/slots.conf.example $R/tmp/img/etc/slots/slots.conf &&
	 cp $R/etc/passwd $R/etc/group $R/etc/shadow $R/etc/gshadow $R/etc/login.defs $R/tmp/img/etc/ &&
	 echo 'video-studio:x:990:990::/srv/video-studio:/usr/sbin/nologin' >>$R/tmp/img/etc/passwd &&
	 echo 'video-studio:x:990:' >>$R/tmp/img/etc/group &&
	 chroot $R slots-provision --root /tmp/img --dry-run --json >$base/img.json 2>$base/img.err &&
	 grep -q '\"changed\": true' $base/img.json"
rm -rf $R/tmp/img
# What slots-provision writes that grants something, with no config left to name the service:
# the purge must find them by the header slots-provision writes.
for f in sudoers.d/slots-ghost systemd/system/slots-ghost.slice systemd/system/slots-ghost-slot01.slice; do
	mkdir -p "$R/etc/${f%/*}"
	printf '# Written by slots-provision from the slots config; changes here are overwritten.\n' >"$R/etc/$f"
done
if in_root dpkg --purge libpam-slots slots >$base/purge.log 2>&1; then
	ok "dpkg --purge libpam-slots slots"
else
	not_ok "dpkg --purge libpam-slots slots"
	sed 's/^/# /' $base/purge.log
fi
check "pam_slots left the session stacks" sh -c "! grep -q pam_slots $R/etc/pam.d/common-session*"
check "the purge took out a drop-in and slice units slots-provision wrote, with no config" sh -c \
	"test ! -e $R/etc/sudoers.d/slots-ghost && ! ls $R/etc/systemd/system | grep -q '^slots-'"
check "common-session is byte for byte what it was" cmp -s $base/common-session.before $R/etc/pam.d/common-session
leftovers >$base/left
if [ ! -s $base/left ]; then
	ok "the purge left nothing outside dpkg's, debconf's and pam-auth-update's state"
else
	not_ok "the purge left files behind:"
	sed 's/^/#   /' $base/left
fi

echo "=== 2. install again and run the demo's steps with the installed binaries"
in_root dpkg -i /tmp/debs/slots.deb /tmp/debs/libpam-slots.deb >$base/install2.log 2>&1 ||
	{ sed 's/^/# /' $base/install2.log; fatal "second install failed"; }
cat >$R/tmp/demo.sh <<'DEMO'
set -u
ALICE=aa73da63e26b40a1bb701c2b4c024870
BOB=5f0c2e91b7d84a6e9c3d2b1a0f9e8d7c
n=0
ok() { n=$((n + 1)); echo "ok - $*"; }
not_ok() { n=$((n + 1)); echo "not ok - $*"; }
# expect DESC STATUS CMD...: the command exits STATUS and prints something.
expect() {
	d=$1 want=$2
	shift 2
	"$@" >/tmp/out 2>/tmp/err
	got=$?
	if [ "$got" = "$want" ] && [ -s /tmp/out ]; then ok "$d"; else
		not_ok "$d (exit $got, want $want)"
		sed 's/^/#   /' /tmp/out /tmp/err | head -n 30
	fi
}
useradd --system --user-group --home-dir /srv/video-studio --shell /usr/sbin/nologin video-studio
rel=/opt/video-studio/releases/2026.11.29
mkdir -p $rel/bin /opt/video-studio/state /srv/video-studio/docs/assets /srv/video-studio/docs/renders \
	/srv/video-studio/docs/_private /var/lib/video-studio/browser-profiles
# The launcher runs what it is given (check's probes), else says who it runs as; slotctl, the
# first program of the chain sudo -> slotctl -> launcher, runs it; current names the release.
printf '#!/bin/sh\n[ $# -gt 0 ] && exec "$@"\necho "launcher runs as $(id -un), nofile $(ulimit -n)"\n' >$rel/bin/slot-exec
printf '#!/bin/sh\nexec "$@"\n' >$rel/bin/slotctl && chmod 0755 $rel/bin/slotctl
ln -s releases/2026.11.29 /opt/video-studio/current
chmod 0700 /opt/video-studio/releases $rel/bin/slot-exec /opt/video-studio/state \
	/srv/video-studio/docs/_private /var/lib/video-studio/browser-profiles
echo "SECRET=1" >/opt/video-studio/.env && chmod 0600 /opt/video-studio/.env
chown -R video-studio:video-studio /opt/video-studio /srv/video-studio /var/lib/video-studio/browser-profiles
cp /usr/share/doc/slots/examples/slots.conf.example /etc/slots/slots.conf

expect "slots-provision --dry-run" 0 slots-provision --dry-run
expect "slots-provision --json --changed-exit 3: changed" 3 slots-provision --json --changed-exit 3
grep -q '"changed": true' /tmp/out && ok "the JSON says changed" || not_ok "the JSON says changed"
expect "slots-provision again --changed-exit 3: unchanged, exit 0" 0 slots-provision --json --changed-exit 3
grep -q '"count": 0' /tmp/out && ok "the JSON counts 0 changes" || not_ok "the JSON counts 0 changes"
expect "slot01 exists" 0 id slot01
expect "assign ALICE" 0 slots-admin assign $ALICE
grep -qx slot01 /tmp/out && ok "ALICE got slot01" || not_ok "ALICE got slot01"
expect "assign BOB" 0 slots-admin assign $BOB
expect "status" 0 slots-admin status
expect "status --json as the service account" 0 runuser -u video-studio -- slots-admin status --json
expect "check" 0 slots-admin check
if command -v sudo >/dev/null; then
	# sudo opens a PAM session for slot01: common-session-noninteractive has pam_slots now,
	# and the example config gives every slot nofile 4096.
	expect "the service runs the launcher as slot01 through sudo" 0 \
		runuser -u video-studio -- sudo -n -u slot01 --preserve-env=PATH,LANG -- \
		/opt/video-studio/current/bin/slotctl /opt/video-studio/current/bin/slot-exec
	grep -q 'runs as slot01, nofile 4096' /tmp/out &&
		ok "pam_slots set the slot's limits in the sudo session: $(cat /tmp/out)" ||
		not_ok "pam_slots set the slot's limits in the sudo session: $(cat /tmp/out)"
fi
# Completion, as an admin's interactive bash would load it.
bash --norc --noprofile -c '. /usr/share/bash-completion/bash_completion
	__load_completion slots-admin && complete -p slots-admin
	COMP_WORDS=(slots-admin release ""); COMP_CWORD=2; COMP_LINE="slots-admin release "; COMP_POINT=20
	_slots_admin slots-admin "" release; printf "%s\n" "${COMPREPLY[@]}" | sort' >/tmp/out 2>/tmp/err
if [ "$(cat /tmp/out)" = "complete -F _slots_admin slots-admin
$BOB
$ALICE" ] && [ ! -s /tmp/err ]; then ok "installed completion: complete -p, and release offers the two users"
else not_ok "installed completion"; sed 's/^/#   /' /tmp/out /tmp/err; fi
runuser -u slot02 -- sh -c 'echo left-behind >/tmp/slot02-file; sleep 600 &'
expect "release BOB" 0 slots-admin release $BOB
[ ! -e /tmp/slot02-file ] && ok "BOB's file in /tmp is gone" || not_ok "BOB's file in /tmp is gone"
pgrep -u slot02 >/dev/null && not_ok "no process of slot02 runs" || ok "no process of slot02 runs"
expect "status --json slot02 is free" 0 slots-admin status --json slot02
grep -q '"user": null' /tmp/out && ok "slot02 is free" || not_ok "slot02 is free"
DEMO
in_root sh /tmp/demo.sh >$base/demo.out 2>&1
cat $base/demo.out
passed=$((passed + $(grep -c '^ok' $base/demo.out)))
failed=$((failed + $(grep -c '^not ok' $base/demo.out)))
check "the demo ran its steps" test "$(grep -c '^ok' $base/demo.out)" -ge 20

echo "=== 3. purge after the demo: the admin's files and the accounts stay"
in_root sh -c 'ls -A /etc/slots' >$base/etc-slots.before
check "the drop-in is there before the purge" test -f $R/etc/sudoers.d/slots-video-studio
check "and lets the service run as slot01" in_root runuser -u video-studio -- sudo -n -u slot01 true
# A slice unit of the configured service, found by its name (no header).
mkdir -p $R/etc/systemd/system
echo '[Slice]' >"$R/etc/systemd/system/slots-video\x2dstudio-slot01.slice"
# ALICE still holds slot01: remove and purge are refused, naming her and the release.
in_root dpkg -r libpam-slots slots >$base/remove-held.log 2>&1
check "dpkg -r with slot01 assigned is refused" sh -c \
	"chroot $R dpkg-query -W -f='\${Status}\n' slots libpam-slots |
	 grep -c ' ok installed$' | grep -qx 2"
check "the refusal names slot01, the user and slots-admin release USER" \
	grep -q "slot01 is assigned to aa73da63e26b40a1bb701c2b4c024870: slots-admin release aa73da63e26b40a1bb701c2b4c024870" \
	$base/remove-held.log
check "and the override SLOTS_REMOVE_ASSIGNED=1" grep -q SLOTS_REMOVE_ASSIGNED=1 $base/remove-held.log
# BOB's release finished: the table itself has no entry for slot02, and no refusal names it.
check "the table has no entry for slot02 after BOB's release" \
	test "$(jq -c .slots.slot02 $R/etc/slots/slots.json)" = null
check "the refusal does not name slot02, whose release finished" sh -c "! grep -q slot02 $base/remove-held.log"
check "slots-admin status --held prints the line the refusal shows" sh -c \
	"chroot $R slots-admin status --held | grep -qx 'slot01 is assigned to aa73da63e26b40a1bb701c2b4c024870: slots-admin release aa73da63e26b40a1bb701c2b4c024870'"
check "libpam-slots depends on slots of its own version" sh -c \
	"chroot $R dpkg-query -W -f='\${Depends}\n' libpam-slots | grep -q 'slots (= '"
# slots' own prerm (libpam-slots' dependency forced aside) refuses the same way.
check "dpkg --purge slots with slot01 assigned is refused too" sh -c \
	"! chroot $R dpkg --force-depends --purge slots >$base/purge-held.log 2>&1 && test -x $R/usr/sbin/slots-admin"
check "slots' refusal names slot01 too" grep -q "slot01 is assigned to aa73da63e26b40a1bb701c2b4c024870" \
	$base/purge-held.log
check "the drop-in is still there after the refusals" test -f $R/etc/sudoers.d/slots-video-studio
if in_root env SLOTS_REMOVE_ASSIGNED=1 dpkg -r libpam-slots slots >$base/remove2.log 2>&1; then
	ok "SLOTS_REMOVE_ASSIGNED=1 dpkg -r libpam-slots slots"
else
	not_ok "SLOTS_REMOVE_ASSIGNED=1 dpkg -r libpam-slots slots"
	sed 's/^/# /' $base/remove2.log
fi
check "remove took out the drop-in with the PAM lines" sh -c \
	"test ! -e $R/etc/sudoers.d/slots-video-studio && ! grep -q pam_slots $R/etc/pam.d/common-session*"
check "after remove the service can no longer run sudo -n -u slot01 true" sh -c \
	"! chroot $R runuser -u video-studio -- sudo -n -u slot01 true 2>/dev/null"
if in_root dpkg --purge libpam-slots slots >$base/purge2.log 2>&1; then
	ok "dpkg --purge after the demo"
else
	not_ok "dpkg --purge after the demo"
	sed 's/^/# /' $base/purge2.log
fi
check "the binaries are gone" test ! -e $R/usr/sbin/slots-admin -a ! -e $R/usr/sbin/slots-provision
check "the module is gone" test ! -e "$R/usr/lib/$ma/security/pam_slots.so"
check "the profile is gone and no stack names pam_slots" sh -c \
	"test ! -e $R/usr/share/pam-configs/slots && ! grep -q pam_slots $R/etc/pam.d/common-session*"
check "and its slice unit, found by name" sh -c "! ls $R/etc/systemd/system | grep -q '^slots-'"
check "the service can no longer run sudo -n -u slot01 true" sh -c \
	"! chroot $R runuser -u video-studio -- sudo -n -u slot01 true 2>/dev/null"
check "sudo still works for root after the purge" in_root sudo -n true
check "/etc/slots keeps the admin's config and table" sh -c \
	"test -f $R/etc/slots/slots.conf && test -f $R/etc/slots/slots.json && test \"\$(ls -A $R/etc/slots)\" = \"\$(cat $base/etc-slots.before)\""
check "the slot accounts stay (Debian never removes accounts on purge)" grep -q '^slot01:' $R/etc/passwd

echo "$passed passed, $failed failed"
[ "$failed" = 0 ]
