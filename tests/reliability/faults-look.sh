#!/bin/sh
# Issue 19: a failure at each call that looks, reads, looks up or starts something (opens,
# stats, reads, directory reads, extended attributes and ACLs, links, the NSS lookups, fork,
# pipes, pidfds, locks) and at each call that changes something, in the commands' real runs on
# a host made by slots-provision: release of a slot whose holder left one of every object,
# release --slot of a pending slot, assign with a user tree, status, check, and
# slots-provision --root.  tests/fault/faultshim.so makes one call of the program's own code
# fail (FAULT_CALLS=all FAULT_CALLER=program).  Each run must either
#   - fail cleanly: exit 1 (2 for an unreadable config or table, as slots-admin(8) says), a
#     message "<command>: <what>: <file or object>: ... <reason>" with strerror's words
#     (check: or a FAIL row with them), no temp left, nothing changed before the command's
#     first change (read-only commands: nothing changed at all), and the next command (the
#     same again, or release --slot of a slot left pending) finishes the job: the world then
#     equals an undisturbed run's, no process or IPC object of the slot left; or
#   - succeed with the job done in full: the world (and, read-only, what it prints) as an
#     undisturbed run's.  A failure passed over in silence, the job left undone, is a bug.
# First the cases the fixes of this issue came with (one call named by its target), then the
# sweep, then the same sites failed the way a race does (an entry gone, a symlink swapped in,
# an interrupted wait), judged more loosely.  Short form: the first call of each line of code
# that makes one (FAULT_LOG_SITES names the calling instruction), each line once per program;
# SLOTS_RELIABILITY_FULL=1: the first call of each line on each target, with a second errno.
. "$top_srcdir/tests/integration/lib.sh"
. "$top_srcdir/tests/reliability/rel-lib.sh"
slots_need_root
rel_need_shim
for tool in setpriv getent jq setfacl python3; do
	command -v "$tool" >/dev/null || { echo "SKIP: $tool is not installed"; exit 77; }
done
[ -x "$SLOTS_PROVISION" ] || { echo "SKIP: $SLOTS_PROVISION is not built"; exit 77; }
slots_enter_namespace "$@"
. "$top_srcdir/tests/integration/check-lib.sh"

P=$SLOTS_WORLD/p
mkdir -p "$P"
IPC_HELPER=$top_builddir/tests/integration/release-ipc
export FAULT_CALLER=program FAULT_LOG_SITES=1
unset FAULT_CALLS FAULT_AT FAULT_SITE FAULT_TARGET FAULT_ACTION

# ---- the host: check-lib.sh's fixture with a pool of 3; slot01 held by USER_A ----
mount -t tmpfs -o mode=0755 tmpfs /var/spool || slots_ns_fail "cannot mount a tmpfs on /var/spool"
mount -t tmpfs -o mode=2775 tmpfs /var/mail || slots_ns_fail "cannot mount a tmpfs on /var/mail"
# The namespace's POSIX message queues, seen through a mount of our own (never a folder made in /dev).
MQ=$SLOTS_WORLD/mq
mkdir -p "$MQ"
mount -t mqueue mqueue "$MQ" || slots_ns_fail "cannot mount the mqueue file system"
mkdir -p /var/spool/cron/crontabs /var/spool/cron/atjobs /var/spool/cron/atspool /var/lib/systemd/linger \
	/run/lock /run/user
chmod 1730 /var/spool/cron/crontabs
chmod 1770 /var/spool/cron/atjobs
chmod 1777 /run/lock
check_pick_range
groupadd -g $((UID_MIN - 1)) $SERVICE
useradd -u $((UID_MIN - 1)) -g $SERVICE -M -d /nonexistent -s /usr/sbin/nologin $SERVICE
check_write_config
sed -i 's/"slots": 8,/"slots": 3,/' "$CONF"
check_write_app
check_fixture_accounts
check_pam_sudo
check_assign slot01 "$USER_A"
SROOT=/var/lib/slots/$SERVICE
U2=$(id -u slot02)
G2=$(getent group slot02 | cut -d: -f3)
U3=$(id -u slot03)
echo "# host: service $SERVICE, slots 1-3 (uids $((UID_MIN + 1))-$((UID_MIN + 3))), docs $DOCS"

# What a command of this host may change.  /tmp also holds the namespace's /etc and /var/lib
# layers: only what the slots own there counts.
AREAS="/etc/slots $SROOT $DOCS /var/spool/cron /var/mail /var/lib/systemd/linger /run/user /run/lock /var/tmp /dev/shm"
slot_procs() {
	cat /proc/[0-9]*/status 2>/dev/null | awk -v u="$1" '/^Name:/ { s = "" } /^State:/ { s = $2 }
		/^Uid:/ { if (($2 == u || $3 == u) && s != "Z" && s != "X") n++ } END { print n + 0 }'
}
world_snap() {
	# shellcheck disable=SC2086
	{
		find $AREAS ! -name "$REL_INDEX" -printf '%p %y %U:%G %m %l\n'
		find $AREAS -type f ! -name "$REL_INDEX" -exec sha256sum {} +
		getfacl -Rnps $AREAS 2>/dev/null
		find /tmp -xdev \( -uid "$U2" -o -gid "$G2" -o -uid "$U3" \) -printf '/tmp %p %y %U:%G %m %l\n' \
			2>/dev/null
	} | LC_ALL=C sort
	# SysV objects by kind and owner (their ids and times differ from run to run).
	awk 'FNR == 1 { k = FILENAME; sub(/.*\//, "", k); for (i = 1; i <= NF; i++) if ($i == "uid") c = i; next }
		{ print "ipc", k, "uid", $c }' /proc/sysvipc/shm /proc/sysvipc/sem /proc/sysvipc/msg | LC_ALL=C sort
	ls -ln "$MQ" | awk 'NR > 1 { print "mq", $3, $4, $NF }'
	# slot_procs of both slots in one pass.
	cat /proc/[0-9]*/status 2>/dev/null | awk -v a="$U2" -v b="$U3" '/^Name:/ { s = "" } /^State:/ { s = $2 }
		/^Uid:/ && s != "Z" && s != "X" { if ($2 == a || $3 == a) na++; if ($2 == b || $3 == b) nb++ }
		END { printf "processes of slot02: %d, of slot03: %d\n", na, nb }'
}
# save_areas NAME / restore_areas NAME: a copy of every area.
save_areas() {
	rm -rf "$P/areas-$1"
	for a in $AREAS; do
		mkdir -p "$P/areas-$1$a"
		cp -a "$a/." "$P/areas-$1$a/"
	done
}
restore_areas() {
	set --
	for a in $AREAS; do
		for f in "$a"/* "$a"/.[!.]* "$a"/..?*; do
			if [ -e "$f" ] || [ -L "$f" ]; then set -- "$@" "$f"; fi
		done
	done
	[ $# = 0 ] || rm -rf "$@"
	for a in $AREAS; do cp -a "$P/areas-$RESTORE$a/." "$a/"; done
}
HOLDER_PIDS=
end_holders() {
	# Only the processes this script started: by pid.
	for pid in $HOLDER_PIDS; do kill -KILL "$pid" 2>/dev/null; done
	for pid in $HOLDER_PIDS; do wait "$pid" 2>/dev/null; done
	HOLDER_PIDS=
	ipcrm --all 2>/dev/null
	find "$MQ" -mindepth 1 -delete
	find /tmp -xdev -mindepth 1 -maxdepth 1 \( -uid "$U2" -o -gid "$G2" -o -uid "$U3" \) -exec rm -rf {} +
}
# What slot $1's holder leaves outside the areas: files in /tmp, a process, IPC objects.
holder_objects() {
	setpriv --reuid="$1" --regid="$1" --init-groups sh -c 'echo t >/tmp/$1-tmp
		mkdir -p /tmp/$1-dir/sub/deeper; echo y >/tmp/$1-dir/sub/deeper/f
		ln -s /etc/passwd /tmp/$1-dir/link; mkfifo /tmp/$1-dir/fifo' sh "$1"
	setpriv --reuid="$1" --regid="$1" --init-groups sleep 1000 &
	HOLDER_PIDS="$HOLDER_PIDS $!"
	setpriv --reuid="$1" --regid="$1" --init-groups "$IPC_HELPER" "$1-mq" >/dev/null || echo "# release-ipc as $1 failed"
	# Running as the slot before the command starts: a release must find it.
	u=$(id -u "$1")
	tries=0
	while [ "$(slot_procs "$u")" = 0 ] && [ $tries -lt 200 ]; do
		sleep 0.01
		tries=$((tries + 1))
	done
}
as_slot() {
	s=$1
	shift
	setpriv --reuid="$s" --regid="$s" --init-groups "$@"
}
# The files a holder of slot $1 leaves in its home, state, run and the areas.
holder_files() {
	s=$1
	u=$(id -u "$s")
	as_slot "$s" sh -c "cd $SROOT/home/$s && echo secret >.history && mkdir -p deep/er && echo x >deep/er/f &&
		ln -s /etc/passwd link && mkfifo fifo && echo s >$SROOT/state/$s/s && echo r >$SROOT/run/$s/r"
	as_slot "$s" sh -c "echo v >/var/tmp/$s-vartmp; echo s >/dev/shm/$s-shm; echo l >/run/lock/$s-lock"
	setfacl -m "g:$s:rx" "$SROOT/home/$s"
	python3 -c 'import os, sys; os.setxattr(sys.argv[1], "user.secret", b"old user")' "$SROOT/state/$s"
	install -d -o "$s" -g "$s" -m 0700 "/run/user/$u"
	echo r >"/run/user/$u/runtime"
	chown "$s:$s" "/run/user/$u/runtime"
	echo '* * * * * true' >"/var/spool/cron/crontabs/$s"
	echo job >"/var/spool/cron/atjobs/a$u"
	echo spool >"/var/spool/cron/atspool/=$u"
	chown "$s" "/var/spool/cron/crontabs/$s" "/var/spool/cron/atjobs/a$u" "/var/spool/cron/atspool/=$u"
	printf 'From x\nSubject: secret\n\nthe previous user\n' >"/var/mail/$s"
	chown "$s:mail" "/var/mail/$s"
	: >"/var/lib/systemd/linger/$s"
	as_slot "$s" sh -c "echo shared >$DOCS/shared/$s-file; mkdir $DOCS/shared/$s-dir; echo f >$DOCS/shared/$s-dir/f"
}

# World "base": the fixture as made, check passes on it.
save_areas base

# World "rel": bob holds slot02 and left one of every object.
TREE=$DOCS/_users/bob
check "assign bob slot02" prints slot02 "$SLOTS_ADMIN" assign bob slot02
holder_files slot02
as_slot slot02 sh -c "cd $TREE && echo made >by-slot && mkdir -p dir/sub && echo f >dir/sub/f && ln -s /etc/shadow lnk &&
	mkfifo pipe && echo two >two && ln two two-again && chmod 0777 by-slot"
setfacl -m "u:slot02:rwx" "$TREE/dir/sub/f" "$TREE/by-slot"
setfacl -d -m "u:slot02:rwx" "$TREE/dir"
# Deeper than the walks keep open (64 levels): they read ahead, close and come back through "..".
deep=$(printf 'd/%.0s' $(seq 70))
as_slot slot02 mkdir -p "$SROOT/home/slot02/$deep" "$TREE/$deep"
save_areas rel

# World "pending": slot03 pending; the last holder's files in two trees (carol's, whose
# tree it was, and alice's, which slot03 reached through an ACL), its home and the areas.
holder_files slot03
for t in "$DOCS/_users/carol" "$DOCS/_users/$USER_A"; do
	install -d -o "$SERVICE" -g slot03 -m 2770 "$t"
	# Alice's tree has an ACL (slot01's), whose owning-group entry gives slot03 nothing: its own entry does.
	[ "$t" = "$DOCS/_users/carol" ] || setfacl -m "u:slot03:rwx" "$t"
	as_slot slot03 sh -c "cd $t && echo made >by-slot3 && mkdir -p d3/deeper && echo f >d3/deeper/f && mkfifo p3" ||
		{ echo "Bail out! slot03 cannot leave its files in $t"; exit 99; }
	setfacl -m "u:slot03:rw" "$t/by-slot3"
done
jq '.slots.slot03 = {"cleanup": "pending", "released": "2026-01-03T00:00:00Z"}' "$TABLE" >"$P/t" &&
	cat "$P/t" >"$TABLE"
save_areas pending

# World "assign": slot02 and slot03 free again; carol's tree exists with one of every kind.
RESTORE=rel restore_areas
check "release bob (the assign world)" prints "slot02 released" "$SLOTS_ADMIN" release bob 2>/dev/null
CT=$DOCS/_users/carol
install -d -o "$SERVICE" -g "$SERVICE" -m 2750 "$CT" "$CT/sub" "$CT/sub/deeper"
echo notes >"$CT/notes"
echo deep >"$CT/sub/deeper/f"
printf '#!/bin/sh\n' >"$CT/setuid"
chmod 4755 "$CT/setuid"
mkfifo "$CT/fifo"
ln -s /etc/shadow "$CT/link"
echo two >"$CT/two"
ln "$CT/two" "$CT/two-again"
echo other >"$CT/by-someone"
chown "$((UID_MIN + 50)):$((UID_MIN + 50))" "$CT/by-someone"
chown -h "$SERVICE:$SERVICE" "$CT/notes" "$CT/sub/deeper/f" "$CT/fifo" "$CT/link" "$CT/two"
setfacl -m "u:$SERVICE:rw" "$CT/notes"
setfacl -d -m "g:$SERVICE:rwx" "$CT/sub"
save_areas assign

# ---- judging one faulty run ----
total_runs=0
total_clean=0
total_done=0
total_raced=0

# The errno a failing call gets: what the kernel says for it in real life.
errno_for() {
	case $1 in
	fork) echo EAGAIN ;;
	pipe2 | dup | pidfd_open) echo EMFILE ;;
	mmap) echo ENOMEM ;;
	write | fsync | fdatasync | ftruncate | fsetxattr | mkdirat) echo ENOSPC ;;
	fchown | fchownat | fchmod | fchmodat | fchmodat2 | rename | renameat | renameat2 | unlink | unlinkat | \
		fremovexattr | acl_set_fd | umount2 | ipc_rmid) echo EPERM ;;
	*) echo EIO ;;
	esac
}

# The long form tries a second errno.
errnos_for() {
	e=$(errno_for "$1")
	echo "$e"
	[ "$FULL" = 1 ] || return 0
	case $e in
	EIO) echo EACCES ;;
	ENOSPC | EPERM) echo EIO ;;
	esac
}

# What a race or an odd file system makes a call fail with: the entry went away, a symlink
# was swapped in, a folder appeared, a signal interrupted a wait, a buffer was too small.
race_errnos_for() {
	case $1 in
	openat) echo ENOENT ELOOP ;;
	open | opendir | scandir | stat | lstat | statx | fstatat | readlink | readlinkat | realpath | faccessat | \
		getxattr | unlinkat | fchownat | pidfd_open | pidfd_send_signal)
		case $1 in pidfd_*) echo ESRCH ;; *) echo ENOENT ;; esac ;;
	fgetxattr | fsetxattr | fremovexattr) echo ENODATA ;;
	flistxattr | acl_get_fd | acl_extended_fd) echo EOPNOTSUPP ;;
	fchmodat2) echo ENOSYS EOPNOTSUPP ;;
	mkdirat) echo EEXIST ;;
	read | write | flock) echo EINTR ;;
	fcntl_lock) echo EINTR EAGAIN ;;
	getpwnam_r | getpwuid_r | getgrnam_r | getgrgid_r | getspnam_r) echo ERANGE ;;
	esac
}

CHANGE_RE='^[0-9]+ (write|fsync|fdatasync|fchown|fchownat|fchmod|fchmodat|rename|renameat|renameat2|unlink|unlinkat|ftruncate|fsetxattr|mkdirat|fremovexattr|acl_set_fd|umount2|fchmodat2|ipc_rmid) '

# annotate_points PROG: each line "N SITE OCCURRENCE" of $P/points becomes "N SITE OCCURRENCE
# CALL (the reference's line N but its number) [the line of code behind SITE]", the line of
# code when binutils is there to say it: one addr2line for all the sites, not one per run.
annotate_points() {
	: >"$P/where"
	if command -v addr2line >/dev/null; then
		cut -d' ' -f2 "$P/points" | grep '^@0x' | sort -u >"$P/sites"
		while read -r s; do printf '0x%x\n' $((${s#@} - 1)); done <"$P/sites" >"$P/addrs"
		# -a heads each site's frames (innermost first) with its address.
		# shellcheck disable=SC2046 # one address a word
		[ -s "$P/addrs" ] && addr2line -a -f -i -e "$1" $(cat "$P/addrs") 2>/dev/null |
			awk 'FILENAME == ARGV[1] { site[FNR] = $0; next }
				/^0x[0-9a-f]+$/ { if (n) print site[n], t; n++; t = ""; next }
				{ t = t (t == "" ? "" : " ") $0 }
				END { if (n) print site[n], t }' "$P/sites" - | sed 's|[^ ]*/src/||g' >"$P/where"
	fi
	awk 'FILENAME == ARGV[1] { w = $0; sub(/^[^ ]+ /, "", w); where[$1] = " [" w "]"; next }
		FILENAME == ARGV[2] { line[FNR] = $0; next }
		{ l = line[$1]; sub(/^[^ ]+ /, "", l); split(l, f, " "); print $1, $2, $3, f[1], "(" l ")" where[$2] }' \
		"$P/where" "$P/ref.log" "$P/points" >"$P/points.a"
	mv "$P/points.a" "$P/points"
}

# reference NAME: the undisturbed run of $RUN after $SETUP: its log, output and world.
reference() {
	$SETUP
	world_snap >"$P/before.w"
	rm -f "$P/ref.log"
	FAULT_CALLS=all FAULT_LOG=$P/ref.log $RUN >"$P/ref.out" 2>"$P/ref.err" </dev/null
	st=$?
	check "$1: the undisturbed run succeeds and says what it did" test "$st" = 0 -a -s "$P/ref.out"
	[ "$st" = 0 ] && [ -s "$P/ref.out" ] || { head -n 20 "$P/ref.err"; grep '^FAIL' "$P/ref.out" | head -n 10; return 1; }
	world_snap >"$P/after.w"
	sed -E 's/\([0-9]+ ms\)//' "$P/ref.out" >"$P/ref.norm"
	# The first change that is not an fsync or a call on a temp: up to it, nothing may change.
	# GOES_ON=1: a command whose steps go on after one failed (release --slot of a pending slot)
	# may change things after any fault, so every fault must be finished by the next command.
	commit=$(grep -E "$CHANGE_RE" "$P/ref.log" | grep -v -E '^[0-9]+ f(data)?sync |(/| )\.[^/ ]+\.[0-9a-f]{12}$' |
		head -n 1 | cut -d' ' -f1)
	[ -n "$commit" ] || commit=$(($(wc -l <"$P/ref.log") + 1))
	[ "${GOES_ON:-0}" = 1 ] && commit=0
	return 0
}

# no_temps WHAT: no temp (".name.XXXXXXXXXXXX") is left anywhere a command writes.
no_temps() {
	# shellcheck disable=SC2086
	temps=$(find $AREAS /tmp -xdev -regextype posix-extended -regex '.*/\.[^/]+\.[0-9a-f]{12}' 2>/dev/null | head -n 3)
	[ -z "$temps" ] && return 0
	not_ok "$1: temps left: $temps"
	return 1
}

# world_is WHAT SNAPSHOT HOW: the world now is SNAPSHOT, else "not ok - WHAT: HOW" and the diff.
world_is() {
	world_snap >"$P/now.w"
	cmp -s "$P/now.w" "$2" && return 0
	not_ok "$1: $3"
	diff "$2" "$P/now.w" | sed 's/^/#   /' | head -n 12
	return 1
}

# next_ok WHAT: the next command ($NEXT, no fault) succeeds.
next_ok() {
	$NEXT >"$P/next.out" 2>"$P/next.err" </dev/null && return 0
	not_ok "$1: the next command fails: $(grep -v ': warning: ' "$P/next.err" | head -c 300)"
	return 1
}

# names_reason WHAT REASON: the failed run ($st, $P/out, $P/err) says "<command>: <what>:
# <object>: ... REASON" (or check: a FAIL row with REASON); else "not ok" and 1.  REASON "-":
# any reason (a race is told in the product's own words: "is a symlink", "was moved").
names_reason() {
	r=$2
	[ "$r" = - ] && r=
	# Running out of processes, descriptors or memory is about the step, not a file.
	case $call in
	fork | pipe2 | dup | mmap | pidfd_open) want="^slots-(admin|provision): .+: .*$r" ;;
	*) want="^slots-(admin|provision): [^:]+: [^:]+: .*$r" ;;
	esac
	if [ -z "$2" ] || { ! grep -v -E ': (warning|fix): ' "$P/err" | grep -q -E "$want" && ! grep -q -E "^FAIL .*$r" "$P/out"; }; then
		not_ok "$1: exit $st, but no message names the object and the reason:" \
			"$(grep -v -E ': (warning|fix): ' "$P/err" | head -c 300)$(grep '^FAIL' "$P/out" | head -c 300)"
		return 1
	fi
	return 0
}

# judge WHAT ERRNO N: the run just made ($st, $P/out, $P/err) with ERRNO injected at what the
# reference made as its call N.  Counts it; prints "not ok" and returns 1 when it is wrong.
judge() {
	what=$1
	reason=$(rel_strerror "$2")
	n=$3
	runs=$((runs + 1))
	no_temps "$what" || return 1
	if [ "$st" = 0 ]; then
		# Succeeded despite the fault: only with the job done in full.
		world_is "$what" "$P/after.w" "exit 0, yet the world differs from an undisturbed run's" || return 1
		# A name lookup for a message may fail: the message then shows the number.
		case $call in getpwuid_r | getgrgid_r) [ -s "$P/out" ] && { done_ok=$((done_ok + 1)); return 0; } ;; esac
		# The same output (but for how long sudo took in check's rows), or a row that passed
		# but says what it could not check and why.
		if [ "$READ_ONLY" = 1 ] && ! sed -E 's/\([0-9]+ ms\)//' "$P/out" | cmp -s - "$P/ref.norm" &&
			! grep -q "^PASS .*$reason" "$P/out"; then
			not_ok "$what: exit 0, yet it printed something else than the undisturbed run"
			diff "$P/ref.out" "$P/out" | sed 's/^/#   /' | head -n 12
			return 1
		fi
		done_ok=$((done_ok + 1))
		return 0
	fi
	if [ "$st" != 1 ] && ! { [ "$st" = 2 ] && grep -q -E "(config|$TABLE)" "$P/err"; }; then
		not_ok "$what: exit $st, want 1: $(head -c 300 "$P/err")"
		return 1
	fi
	names_reason "$what" "$reason" || return 1
	clean=$((clean + 1))
	if [ "$READ_ONLY" = 1 ] || [ "$n" -lt "$commit" ]; then
		world_is "$what" "$P/before.w" "before the first change, yet something changed" || return 1
		[ "$READ_ONLY" = 1 ] && return 0
	fi
	next_ok "$what" || return 1
	world_is "$what" "$P/after.w" "after the next command the world differs from an undisturbed run's"
}

# fail_points JUDGE ERRNOS: each call of $P/points ("N SITE OCCURRENCE", N the reference's
# call) failed once with each errno ERRNOS gives for it, in a fresh world; JUDGE WHAT ERRNO N
# rules on each run, and bad counts the wrong ones.
fail_points() {
	annotate_points "$prog"
	while read -r n site occ call said; do
		for e in $($2 "$call"); do
			$SETUP
			FAULT_CALLS=all FAULT_SITE=$site FAULT_AT=$occ FAULT_ACTION=$e $RUN >"$P/out" 2>"$P/err" </dev/null
			st=$?
			$1 "$name, $e at call $n $said" "$e" "$n" ||
				bad=$((bad + 1))
		done
	done <"$P/points"
}

# judge_race WHAT ERRNO: the run just made had a call fail the way a race or an odd file
# system makes it (an entry gone, a symlink swapped in, a lock call interrupted, a lookup's
# buffer too small, no xattrs).  What it did then may differ from an undisturbed run, but it
# must end as a command ends (0, 1 or 2), a failure must name the object (in its own words),
# no temp may stay, a read-only command changes nothing, and the next command must succeed.
judge_race() {
	runs=$((runs + 1))
	raced=$((raced + 1))
	no_temps "$1" || return 1
	case $st in
	0) ;;
	1 | 2) names_reason "$1" - || return 1 ;;
	*)
		not_ok "$1: exit $st: $(head -c 300 "$P/err")"
		return 1
		;;
	esac
	if [ "$READ_ONLY" = 1 ]; then
		world_is "$1" "$P/before.w" "a read-only command changed something"
		return
	fi
	next_ok "$1"
}

tally() {
	total_raced=$((total_raced + ${raced:-0}))
	total_runs=$((total_runs + runs))
	total_clean=$((total_clean + clean))
	total_done=$((total_done + done_ok))
}

# site_function PROGRAM SITE: the innermost function of the program's own code at a site.
# addr2line -i lists the frames inlined at an address, innermost first; the frames of system
# headers (glibc's _FORTIFY_SOURCE wrappers of open, openat, read, readlink, which Debian's
# build flags turn on) are passed over, so the answer is the same under any build flags.
site_function() {
	addr2line -f -i -e "$1" "$(printf '0x%x' $(($(echo "$2" | cut -c2-) - 1)))" 2>/dev/null |
		awk 'NR % 2 == 1 { f = $0; next } $0 !~ /^\/usr\/(include|lib\/gcc)\// { print f; exit }'
}

# fault_case NAME PROGRAM CALL TARGET FUNCTION [ERRNO|-] [WANT]: the first CALL that FUNCTION
# makes (site_function names the function of each site) on a target ending with TARGET
# fails.  WANT, where a run the judge accepts either way is not enough: "fails" (a clean
# failure, not a success) or "says" (exit 0, and a PASS row names the reason).
fault_case() {
	call=$3
	e=${6:--}
	[ "$e" = - ] && e=$(errno_for "$3")
	what="$1: $e at the $3 of [...]$4 in $5"
	if ! command -v addr2line >/dev/null; then
		echo "# $what: not run (no addr2line to find the call)"
		return
	fi
	site= n=
	for cand in $(awk -v c="$3" -v t="$4" '$2 == c && substr($0, length($0) - length(t) + 1) == t { print $1 ":" $3 }' \
		"$P/ref.log"); do
		cs=${cand#*:}
		if [ "$(site_function "$2" "$cs")" = "$5" ]; then
			site=$cs
			n=${cand%%:*}
			break
		fi
	done
	if [ -z "$site" ]; then
		# Where the run makes that call on that target instead: the table's entry to fix.
		in=$(awk -v c="$3" -v t="$4" '$2 == c && substr($0, length($0) - length(t) + 1) == t { print $3 }' "$P/ref.log" |
			sort -u | while read -r cs; do site_function "$2" "$cs"; done | sort -u | paste -sd' ')
		not_ok "$what: the undisturbed run makes no such call (it makes it in: ${in:-none})"
		return
	fi
	runs=0 clean=0 done_ok=0 raced=0
	$SETUP
	FAULT_CALLS=$3 FAULT_SITE=$site FAULT_TARGET=$4 FAULT_AT=1 FAULT_ACTION=$e $RUN >"$P/out" 2>"$P/err" </dev/null
	st=$?
	if judge "$what" "$e" "$n"; then
		reason=$(rel_strerror "$e")
		case ${7:-} in
		fails) [ "$st" != 0 ] ;;
		says) [ "$st" = 0 ] && grep -q "^PASS .*$reason" "$P/out" ;;
		esac && ok "$what: exit $st, as it must" || not_ok "$what: exit $st, but it must ${7:-}"
	fi
	tally
}

# sweep NAME PROGRAM: the short form faults the first call of each site that no earlier
# scenario faulted in PROGRAM; the long form, the first call of each site on each target
# (numbers aside: /proc/<pid>, pipe:[<inode>] and the folders of each slot count once, and so
# do the levels of a deep chain of folders), with a
# second errno for the calls that look (EACCES) and change (EIO).
sweep() {
	name=$1
	prog=$2
	seen=$P/seen-$(basename "$prog")
	touch "$seen"
	awk -v full="$FULL" -v seen="$seen" 'BEGIN { while ((getline s <seen) > 0) done[s] = 1 }
		{ k = ++occ[$3]; t = $0; sub(/^[^ ]+ [^ ]+ [^ ]+ /, "", t); gsub(/[0-9]+/, "N", t); gsub(/\/d\/d(\/d)*/, "/d/d", t) }
		full == 1 && !pair[$3 " " t]++ { print $1, $3, k }
		full != 1 && k == 1 && !done[$3] { print $1, $3, k }' "$P/ref.log" >"$P/points"
	[ "$FULL" = 1 ] || cut -d' ' -f2 "$P/points" >>"$seen"
	bad=0 runs=0 clean=0 done_ok=0
	fail_points judge errnos_for
	# The same sites again with what a race makes them fail with (each site once per program).
	awk -v seen="$seen-race" 'BEGIN { while ((getline s <seen) > 0) done[s] = 1 }
		{ k = ++occ[$3] } k == 1 && !done[$3] { print $1, $3, k }' "$P/ref.log" >"$P/points"
	cut -d' ' -f2 "$P/points" >>"$seen-race"
	raced=0
	fail_points judge_race race_errnos_for
	tally
	check "$name: $runs faults out of $(wc -l <"$P/ref.log") calls: $clean clean failures (finished by the next command), $done_ok runs that did the whole job anyway, $raced races (ended well, the next command succeeds)" [ "$bad" = 0 ]
}

shim_admin() {
	timeout 60 env LD_PRELOAD="$SHIM" FAULT_PROG=slots-admin "$SLOTS_ADMIN" "$@"
}

# ---- 1. release of a user whose holder left one of every object ----
setup_release() {
	end_holders
	RESTORE=rel restore_areas
	holder_objects slot02
}
release_run() {
	shim_admin release bob
}
release_next() {
	if [ "$(jq -r '.slots.slot02.cleanup // empty' "$TABLE")" = pending ]; then
		shim_admin release --slot slot02
	else
		shim_admin release bob
	fi
}
SETUP=setup_release RUN=release_run NEXT=release_next READ_ONLY=0
NAME="release bob (slot02, one of every leftover)"
if reference "$NAME"; then
	A=$SLOTS_ADMIN
	# A configured root below /tmp that cannot be looked at is never walked into.
	fault_case "$NAME" "$A" fstat "$DOCS" skip_add
	# An entry that cannot be looked at is reported, never taken for gone.
	fault_case "$NAME" "$A" statx "a$U2" clean_top_entry
	fault_case "$NAME" "$A" statx slot02-dir look
	fault_case "$NAME" "$A" fstat /tmp/slot02-dir open_dir
	fault_case "$NAME" "$A" fstat /tmp/slot02-dir own_remove
	fault_case "$NAME" "$A" fstat /shared/slot02-dir own_hand
	fault_case "$NAME" "$A" fstatat "$U2" remove_runuser
	fault_case "$NAME" "$A" fstatat slot02 cleanup_clean_mail
	fault_case "$NAME" "$A" fstat "/run/user/$U2" cleanup_open_slot_end
	fault_case "$NAME" "$A" fstat "$SROOT/home/slot02" check_folder - fails
	# The mode narrows before the owner changes: a failed chmod leaves the entry to the next release.
	fault_case "$NAME" "$A" fchmod /_users/bob/pipe release_fd EPERM
	fault_case "$NAME" "$A" fchmod /shared/slot02-dir hand_mode EPERM
	# A failed look is reported as itself, not as a wrong type, a change or a dead helper.
	fault_case "$NAME" "$A" fstat /etc/slots/slots.conf open_end
	fault_case "$NAME" "$A" fstat /etc/slots/slots.conf slots_read_text_fd
	fault_case "$NAME" "$A" fstat /etc/slots/slots.json.lock slots_release_lock
	fault_case "$NAME" "$A" fstat /home/.slot02.slots-fresh/deep open_dir
	fault_case "$NAME" "$A" read "]" clean_mqueues
	fault_case "$NAME" "$A" fstat /srv level_push
	sweep "$NAME" "$A"
fi

# ---- 2. release --slot of a pending slot: every user tree is walked for what names it ----
setup_pending() {
	end_holders
	RESTORE=pending restore_areas
	holder_objects slot03
}
pending_run() {
	shim_admin release --slot slot03
}
SETUP=setup_pending RUN=pending_run NEXT=pending_run READ_ONLY=0 GOES_ON=1
NAME="release --slot slot03 (pending, its files in two users' trees)"
if reference "$NAME"; then
	sweep "$NAME" "$SLOTS_ADMIN"
fi

# ---- 3. assign to a user whose tree is there with one entry of every kind ----
setup_assign() {
	end_holders
	RESTORE=assign restore_areas
}
assign_run() {
	shim_admin assign carol
}
SETUP=setup_assign RUN=assign_run NEXT=assign_run READ_ONLY=0 GOES_ON=0
NAME="assign carol (slot02, her tree with one entry of every kind)"
if reference "$NAME"; then
	sweep "$NAME" "$SLOTS_ADMIN"
fi

# ---- 4. status, status --json, check: they change nothing ----
setup_none() {
	:
}
status_run() {
	shim_admin status
}
status_json_run() {
	shim_admin status --json
}
check_run() {
	shim_admin check
}
end_holders
RESTORE=base restore_areas
SETUP=setup_none NEXT=: READ_ONLY=1
for what in status status_json; do
	RUN=${what}_run
	NAME="$(echo "$what" | sed 's/_json/ --json/') (slot01 assigned)"
	if reference "$NAME"; then
		sweep "$NAME" "$SLOTS_ADMIN"
	fi
done
RUN=check_run
NAME="check (slot01 assigned, every row passes)"
if reference "$NAME"; then
	A=$SLOTS_ADMIN
	# A row that could not look passes only saying so; otherwise it fails with the reason.
	fault_case "$NAME" "$A" open / slots_root_open
	fault_case "$NAME" "$A" fstat /etc/slots/slots.conf slots_config_writers_at - fails
	fault_case "$NAME" "$A" readlink /app/current current_release - says
	# The hard-links row: a tree it could not read to its end may hold such a file, so it fails.
	fault_case "$NAME" "$A" fstat /docs/shared open_end - fails
	fault_case "$NAME" "$A" readdir /docs/shared next - fails
	fault_case "$NAME" "$A" statx notes.txt look - fails
	fault_case "$NAME" "$A" open "/_users/$USER_A" own_tree
	fault_case "$NAME" "$A" fstat "/_users/$USER_A" own_tree
	sweep "$NAME" "$A"
fi

# ---- 5. slots-provision --root: a fresh image, then a run over the finished one ----
R=$SLOTS_WORLD/root
rel_example_image "$R"
rel_example_conf 3 "$P/prov.conf"
AREAS=$R
save_areas fresh
prov_run() {
	timeout 120 env LD_PRELOAD="$SHIM" FAULT_PROG=slots-provision "$SLOTS_PROVISION" --root "$R" --config "$P/prov.conf"
}
setup_fresh() {
	RESTORE=fresh restore_areas
}
SETUP=setup_fresh RUN=prov_run NEXT=prov_run READ_ONLY=0 GOES_ON=0
NAME="slots-provision --root, a fresh image (pool 3)"
if reference "$NAME"; then
	V=$SLOTS_PROVISION
	# A root that cannot be opened is a failure (1), not a usage error.
	fault_case "$NAME" "$V" open "$R" slots_root_open
	# A failed look is reported as itself, not as a wrong type.
	fault_case "$NAME" "$V" fstat /etc/.pwd.lock slots_accounts_lock
	# A listing or an entry that cannot be looked at is reported, never skipped in silence.
	fault_case "$NAME" "$V" readdir /opt/video-studio/releases list_dir
	fault_case "$NAME" "$V" statx convert.sh look
	fault_case "$NAME" "$V" openat convert.sh share_file
	fault_case "$NAME" "$V" fstat /assets/convert.sh share_file
	sweep "$NAME" "$V"
fi
prov_run >/dev/null 2>&1
save_areas done
setup_done() {
	RESTORE=done restore_areas
}
SETUP=setup_done
NAME="slots-provision --root over the finished image (0 changes)"
if reference "$NAME"; then
	sweep "$NAME" "$SLOTS_PROVISION"
fi

end_holders
echo "# faults: $total_runs injected, $total_clean clean failures, $total_done runs that did the job anyway," \
	"$total_raced races that ended well"
slots_done
