#!/bin/sh
# slots-provision's command line (issue 19): every usage error exits 2 with its message and the
# usage on stderr, nothing on stdout; --help and --version exit 0.  Then what needs no root:
# a relative --config and SLOTS_CONFIG with --ldif (one others can write too), a root that is
# not there, a provision without root (refused, exit 1, the fix names --dry-run), and standard
# output that cannot be written (--ldif and --json to /dev/full: exit 1, said on stderr,
# never a silent success).
. "$top_srcdir/tests/integration/lib.sh"
slots_tmpdir
OUT=$slots_tmp

usage_is unknown-option "$SLOTS_PROVISION" "" --frobnicate
usage_is missing-argument "$SLOTS_PROVISION" "" --config
usage_is extra-argument "$SLOTS_PROVISION" "unexpected argument: now" --dry-run now
for bad in 2 126 0 -3 abc 4x ""; do
	usage_is "changed-exit-'$bad'" "$SLOTS_PROVISION" "--changed-exit needs a number from 3 to 125, not '$bad'" --changed-exit "$bad"
done
# The argument is escaped before it reaches the terminal.
usage_is changed-exit-escape "$SLOTS_PROVISION" "--changed-exit needs a number from 3 to 125, not '\\033[2J'" --changed-exit "$(printf '\033[2J')"
for other in --dry-run "--root /" --json "--changed-exit 9"; do
	# shellcheck disable=SC2086
	usage_is "ldif-with-${other%% *}" "$SLOTS_PROVISION" "--ldif changes nothing and prints LDIF: it takes only --config" \
		--ldif dc=x $other
done
usage_is empty-root "$SLOTS_PROVISION" "--root needs a folder" --root "" --dry-run

"$SLOTS_PROVISION" --help >"$OUT/help.out" 2>"$OUT/help.err"
check "--help exits 0" test $? = 0
check "--help names --ldif and --root" sh -c 'grep -q -- --ldif "$1" && grep -q -- --root "$1"' _ "$OUT/help.out"
check "--help prints nothing on stderr" test ! -s "$OUT/help.err"
"$SLOTS_PROVISION" -h >"$OUT/h.out" 2>"$OUT/h.err"
check "-h exits 0" test $? = 0
check "-h is --help" sh -c 'cmp -s "$1" "$2" && test ! -s "$3"' _ "$OUT/h.out" "$OUT/help.out" "$OUT/h.err"
"$SLOTS_PROVISION" --version >"$OUT/version.out" 2>&1
check "--version exits 0" test $? = 0
check "--version prints the name and a version" grep -Eqx 'slots-provision [0-9][0-9.]*(\+git[0-9]{8}\.[0-9]+\.[0-9a-f]{7,})?' "$OUT/version.out"

# --- the config: a relative --config is the caller's folder's; SLOTS_CONFIG names one too ---
mkdir "$OUT/here"
printf '{"service": "web", "slots": 2, "uid_base": 70000}\n' >"$OUT/here/slots.conf"
(cd "$OUT/here" && "$SLOTS_PROVISION" --config slots.conf --ldif dc=x) >"$OUT/relative.out" 2>"$OUT/relative.err"
check "a relative --config is read from the current folder (exit $?)" grep -qx 'dn: cn=slot02,dc=x' "$OUT/relative.out"
SLOTS_CONFIG=$OUT/here/slots.conf "$SLOTS_PROVISION" --ldif dc=y >"$OUT/env.out" 2>"$OUT/env.err"
check "SLOTS_CONFIG names the config (exit $?)" grep -qx 'dn: cn=slot02,dc=y' "$OUT/env.out"
# --ldif changes nothing: a config others can change is no reason to refuse it.
cp "$OUT/here/slots.conf" "$OUT/here/open.conf"
chmod 0666 "$OUT/here/open.conf"
"$SLOTS_PROVISION" --config "$OUT/here/open.conf" --ldif dc=z >"$OUT/open.out" 2>"$OUT/open.err"
check "--ldif reads a config others can write (exit $?)" grep -qx 'dn: cn=slot02,dc=z' "$OUT/open.out"
check "--ldif warns about it with the fix" grep -q "fix: .*chmod go-w $OUT/here/open.conf" "$OUT/open.err"
"$SLOTS_PROVISION" --config "$OUT/none.conf" --ldif dc=x >"$OUT/none.out" 2>"$OUT/none.err"
rc=$?
check "a config that is not there: exit 2 (exit $rc)" test "$rc" = 2
check "a config that is not there: named on stderr" grep -q "cannot read the config: $OUT/none.conf" "$OUT/none.err"

# --- a root that is not there: a usage error, naming it ---
"$SLOTS_PROVISION" --config "$OUT/here/slots.conf" --root "$OUT/no-image" --dry-run >"$OUT/noroot.out" 2>"$OUT/noroot.err"
rc=$?
check "--root that is not there: exit 2 (exit $rc)" test "$rc" = 2
check "--root that is not there: named" grep -q "cannot open the root: $OUT/no-image" "$OUT/noroot.err"

# --- a tree without its config: the tree is not ready, a failure (1), not a usage error ---
mkdir -p "$OUT/bare-image/etc"
"$SLOTS_PROVISION" --root "$OUT/bare-image" --dry-run >"$OUT/bare.out" 2>"$OUT/bare.err"
rc=$?
check "--root whose tree has no config: exit 1 (exit $rc)" test "$rc" = 1
check "--root whose tree has no config: names it and the fix" \
	grep -q "cannot read the config: .*slots.conf" "$OUT/bare.err"

# --- standard output that cannot be written: exit 1 and said, never a silent success ---
"$SLOTS_PROVISION" --config "$OUT/here/slots.conf" --ldif dc=x >/dev/full 2>"$OUT/full.err"
rc=$?
check "--ldif to a full stdout: exit 1 (exit $rc)" test "$rc" = 1
check "--ldif to a full stdout: said on stderr" \
	grep -q "cannot print the LDIF: standard output: No space left on device" "$OUT/full.err"
img=$OUT/image
mkdir -p "$img/etc"
printf 'root:x:0:0::/root:/bin/sh\nweb:x:900:900::/nonexistent:/usr/sbin/nologin\n' >"$img/etc/passwd"
printf 'root:x:0:\nweb:x:900:\n' >"$img/etc/group"
printf 'root:*:19000:0:99999:7:::\nweb:*:19000:0:99999:7:::\n' >"$img/etc/shadow"
printf 'root:*::\nweb:*::\n' >"$img/etc/gshadow"
"$SLOTS_PROVISION" --config "$OUT/here/slots.conf" --root "$img" --dry-run --json >"$OUT/plan.json" 2>"$OUT/plan.err"
check "a dry run into the image plans changes (exit $?)" grep -q '"changed": true' "$OUT/plan.json"
"$SLOTS_PROVISION" --config "$OUT/here/slots.conf" --root "$img" --dry-run --json >/dev/full 2>"$OUT/jfull.err"
rc=$?
check "--json to a full stdout: exit 1, not 0 (exit $rc)" test "$rc" = 1
check "--json to a full stdout: said on stderr" \
	grep -q "cannot print the JSON result: standard output: No space left on device" "$OUT/jfull.err"

# --- without root: only the plan; the change itself is refused, naming --dry-run ---
as_nobody() { "$@"; }
chmod 0755 "$OUT" "$OUT/here"
if [ "$(id -u)" = 0 ]; then
	if setpriv --reuid=nobody --regid=nogroup --clear-groups test -x "$SLOTS_PROVISION" 2>/dev/null &&
		setpriv --reuid=nobody --regid=nogroup --clear-groups test -r "$OUT/here/slots.conf" 2>/dev/null; then
		as_nobody() { setpriv --reuid=nobody --regid=nogroup --clear-groups "$@"; }
	else
		as_nobody() { return 77; }
	fi
fi
as_nobody "$SLOTS_PROVISION" --config "$OUT/here/slots.conf" >"$OUT/user.out" 2>"$OUT/user.err"
rc=$?
if [ "$rc" = 77 ]; then
	echo "# the provision as an ordinary account not run: nobody cannot reach $SLOTS_PROVISION"
else
	check "as an ordinary account: exit 1 (exit $rc)" test "$rc" = 1
	check "as an ordinary account: says it needs root" grep -q "cannot provision: must be run as root" "$OUT/user.err"
	check "as an ordinary account: the fix names --dry-run" \
		grep -q "fix: run it as root, or with --dry-run to see the plan" "$OUT/user.err"
	check "as an ordinary account: nothing on stdout" test ! -s "$OUT/user.out"
fi
slots_done
