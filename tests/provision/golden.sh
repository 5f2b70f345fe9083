#!/bin/sh
# Golden tests of slots-provision under --root, in the style of systemd-sysusers' test-N.input:
# each folder in tests/provision/golden/ is one case:
#
#   input.conf            the config (or input-path: a file naming one, relative to top_srcdir)
#   initial-{passwd,group,shadow,gshadow}   the tree's account files (default: ../initial-*)
#   initial-login.defs    the tree's etc/login.defs (optional)
#   setup.sh              makes the rest of the tree; run with $ROOT set (optional)
#   expected-status       exit status (default 0)
#   expected-out          standard output of the run (and of --dry-run)
#   expected-err          standard error (default: empty)
#   expected-log          both into one file, in the order they were printed (a case with warnings)
#   expected-{passwd,group,shadow,gshadow}  the account files afterwards
#   expected-tree         every path under the root with type, mode and owner, afterwards
#   expected-files/PATH   other files whose bytes are compared (slotctl.json, sudoers drop-in)
#   needs-visudo          skip the case on a host without /usr/sbin/visudo
#
# A case with status 0 runs three times: --dry-run (same lines, nothing changes, not even a
# folder's mtime), the real run (the files and the tree as expected), and again ("0 changes",
# every file byte-identical, same inode and mtime).  Any other status: nothing may change.
# SLOTS_GOLDEN_UPDATE=1 rewrites the expected files from what the run does (review the diff!);
# SLOTS_GOLDEN_KEEP=1 keeps the scratch trees.
. "$top_srcdir/tests/integration/lib.sh"
slots_need_root
# In a private mount namespace: its /run hides the syslog socket, so the many change lines
# of these runs do not end up in the host's journal.
slots_enter_namespace "$@"

GOLDEN="$top_srcdir/tests/provision/golden"
# A fixed day for the shadow lines: 2026-01-01 is day 20454.
SOURCE_DATE_EPOCH=1767225600
export SOURCE_DATE_EPOCH
unset SLOTS_CONFIG

umask 022
slots_tmpdir
work=$slots_tmp
if [ -n "${SLOTS_GOLDEN_KEEP:-}" ]; then
	trap - EXIT
	echo "# keeping $work"
fi

# Everything about every path under the root: what "nothing changed" compares.
snapshot() {
	(cd "$1" && find . -mindepth 1 -printf '%P %y %m %U:%G %s %i %T@ %l\n' | LC_ALL=C sort &&
		find . -type f -exec md5sum {} + | LC_ALL=C sort -k2)
}

# The tree as a golden file: path, type, mode, numeric owner (symlinks with their target).
tree() {
	(cd "$1" && find . -mindepth 1 \( -type l -printf '%P %y %m %U:%G -> %l\n' \) -o -printf '%P %y %m %U:%G\n' |
		LC_ALL=C sort)
}

# expect NAME EXPECTED-FILE ACTUAL-FILE: compares, or rewrites the expectation in update mode.
expect() {
	if [ -n "${SLOTS_GOLDEN_UPDATE:-}" ]; then
		mkdir -p "$(dirname "$2")"
		cp "$3" "$2"
		ok "$1 (updated)"
	elif [ -f "$2" ] && cmp -s "$2" "$3"; then
		ok "$1"
	else
		not_ok "$1"
		if [ -f "$2" ]; then diff -u "$2" "$3" | head -40; else echo "# missing $2"; fi
	fi
}

populate() {
	c=$1 root=$2
	mkdir -p "$root/etc"
	for f in passwd group shadow gshadow; do
		src="$c/initial-$f"
		[ -f "$src" ] || src="$top_srcdir/tests/provision/initial-$f"
		cp "$src" "$root/etc/$f"
	done
	chown 0:0 "$root/etc/passwd" "$root/etc/group"
	chmod 0644 "$root/etc/passwd" "$root/etc/group"
	# Debian's owner and mode: they must survive the rewrite.
	chown 0:42 "$root/etc/shadow" "$root/etc/gshadow"
	chmod 0640 "$root/etc/shadow" "$root/etc/gshadow"
	# A real /etc has the lock file; a refused run then leaves the tree exactly as it was.
	: >"$root/etc/.pwd.lock"
	chmod 0600 "$root/etc/.pwd.lock"
	if [ -f "$c/initial-login.defs" ]; then
		cp "$c/initial-login.defs" "$root/etc/login.defs"
		chmod 0644 "$root/etc/login.defs"
	fi
	if [ -f "$c/setup.sh" ]; then
		ROOT=$root sh -e "$c/setup.sh" || return 1
	fi
}

# Replaces the config's path in messages, so expected-err does not depend on the build folder.
unpath() {
	sed "s|$conf|@CONFIG@|g" "$1"
}

for c in "$GOLDEN"/*/; do
	c=${c%/}
	name=$(basename "$c")
	if [ -f "$c/needs-visudo" ] && [ ! -x /usr/sbin/visudo ]; then
		echo "# skip $name: no visudo on this host"
		continue
	fi
	root="$work/$name/root"
	out="$work/$name"
	mkdir -p "$root"
	conf="$out/slots.conf"
	if [ -f "$c/input-path" ]; then
		cp "$top_srcdir/$(cat "$c/input-path")" "$conf"
	else
		cp "$c/input.conf" "$conf"
	fi
	if ! populate "$c" "$root"; then
		not_ok "$name: setup"
		continue
	fi
	want_status=0
	[ -f "$c/expected-status" ] && want_status=$(cat "$c/expected-status")
	[ -f "$c/expected-err" ] && cp "$c/expected-err" "$out/want-err" || : >"$out/want-err"
	snapshot "$root" >"$out/snap0"

	if [ "$want_status" != 0 ]; then
		"$SLOTS_PROVISION" --root "$root" --config "$conf" >"$out/out" 2>"$out/err"
		st=$?
		check "$name: exit status $want_status" test "$st" = "$want_status"
		check "$name: nothing on standard output" test ! -s "$out/out"
		unpath "$out/err" >"$out/err.u"
		expect "$name: the error names the problem and the fix" "$c/expected-err" "$out/err.u"
		snapshot "$root" >"$out/snap1"
		check "$name: no file or folder changed (bytes, owner, mode, inode, mtime)" \
			cmp -s "$out/snap0" "$out/snap1"
		continue
	fi

	# 1. --dry-run: the lines of the real run, and not one change.
	"$SLOTS_PROVISION" --root "$root" --config "$conf" --dry-run >"$out/dry" 2>"$out/dryerr"
	check "$name: --dry-run exits 0" test $? = 0
	expect "$name: --dry-run prints the plan" "$c/expected-out" "$out/dry"
	grep -v '^slots-provision: dry run: nothing was changed$' "$out/dryerr" | unpath /dev/stdin >"$out/dryerr.u"
	if [ -z "${SLOTS_GOLDEN_UPDATE:-}" ]; then
		check "$name: --dry-run warns as the run does" cmp -s "$out/want-err" "$out/dryerr.u"
	fi
	snapshot "$root" >"$out/snap1"
	check "$name: --dry-run changes nothing" cmp -s "$out/snap0" "$out/snap1"
	# 1b. Standard output and error into one log (a file: output in blocks), as a service
	# manager takes them: each warning after the changes made before it.
	if [ -f "$c/expected-log" ] || { [ -n "${SLOTS_GOLDEN_UPDATE:-}" ] && [ -s "$c/expected-err" ]; }; then
		"$SLOTS_PROVISION" --root "$root" --config "$conf" --dry-run >"$out/log" 2>&1
		check "$name: --dry-run into one log exits 0" test $? = 0
		unpath "$out/log" >"$out/log.u"
		expect "$name: one log keeps the order of changes and warnings" "$c/expected-log" "$out/log.u"
	fi

	# 2. The run.
	"$SLOTS_PROVISION" --root "$root" --config "$conf" >"$out/run" 2>"$out/err"
	check "$name: exits 0" test $? = 0
	check "$name: prints what --dry-run printed" cmp -s "$out/dry" "$out/run"
	unpath "$out/err" >"$out/err.u"
	expect "$name: warnings" "$c/expected-err" "$out/err.u"
	for f in passwd group shadow gshadow; do
		expect "$name: etc/$f" "$c/expected-$f" "$root/etc/$f"
	done
	tree "$root" >"$out/tree"
	expect "$name: tree (types, modes, owners)" "$c/expected-tree" "$out/tree"
	if [ -d "$c/expected-files" ]; then
		(cd "$c/expected-files" && find . -type f) | while read -r f; do
			f=${f#./}
			expect "$name: $f" "$c/expected-files/$f" "$root/$f"
		done >"$out/files.log"
		cat "$out/files.log"
		slots_passed=$((slots_passed + $(grep -c '^ok' "$out/files.log")))
		slots_failed=$((slots_failed + $(grep -c '^not ok' "$out/files.log")))
	fi

	# 3. Again: nothing to do, and not one byte, inode or mtime differs.
	snapshot "$root" >"$out/snap2"
	"$SLOTS_PROVISION" --root "$root" --config "$conf" >"$out/run2" 2>"$out/err2"
	check "$name: second run exits 0" test $? = 0
	check "$name: second run prints 0 changes" test "$(cat "$out/run2")" = "0 changes"
	snapshot "$root" >"$out/snap3"
	check "$name: second run leaves every file byte-identical" cmp -s "$out/snap2" "$out/snap3"
done
slots_done
