#!/bin/sh
# slots-admin's command line (issue 19): every usage error exits 2 with its own message and the
# pointer to --help on stderr, and nothing on stdout; --help and --version exit 0 and print.
# No error here needs a config or root: the command line is judged first.
. "$top_srcdir/tests/integration/lib.sh"
slots_tmpdir
OUT=$slots_tmp

# usage NAME MESSAGE ARGS...: a usage error (usage_is) whose last line points at --help.
usage() {
	an=$1 am=$2
	shift 2
	usage_is "$an" "$SLOTS_ADMIN" "$am" "$@"
	check "$an: points at --help" test "$(tail -n 1 "$OUT/$an.err")" = "Try 'slots-admin --help'."
}

usage no-command "no command given (assign, release, status, check)"
usage unknown-command "unknown command 'frobnicate' (assign, release, status, check)" frobnicate
usage unknown-option "" --frobnicate status
usage missing-config-argument "" status --config
usage json-assign-nothing "assign takes USER and an optional SLOT" --json assign
usage json-release-nothing "release takes USER, or --slot SLOT" --json release
usage slot-with-status "--slot goes with release" --slot slot01 status
usage slot-with-assign "--slot goes with release" --slot slot01 assign alice
usage check-with-argument "check takes no arguments" check slot01
usage assign-nothing "assign takes USER and an optional SLOT" assign
usage assign-three "assign takes USER and an optional SLOT" assign alice slot01 slot02
usage assign-bad-user "invalid user id: it must be 1-64 of A-Z a-z 0-9 . _ -, not starting with . or -" \
	assign .alice
usage assign-bad-slot "invalid slot name: slot names are slot01 ... slot99, slot100 ... slot9999" \
	assign alice slot1
usage release-nothing "release takes USER, or --slot SLOT" release
usage release-two "release takes USER, or --slot SLOT" release alice bob
usage release-slot-and-user "release takes USER, or --slot SLOT" --slot slot01 release alice
usage release-bad-slot "invalid slot name: slot names are slot01 ... slot99, slot100 ... slot9999" \
	--slot slot0 release
usage release-bad-user "invalid user id: it must be 1-64 of A-Z a-z 0-9 . _ -, not starting with . or -" \
	release -- -alice
usage status-two "status takes at most one USER or SLOT" status alice bob
usage status-neither "the argument is neither a slot name nor a valid user id" status 'a/b'
usage held-with-assign "--held goes with status" assign --held alice
usage held-with-json "--held and --json: give one of them" status --held --json
usage held-with-slot "status --held takes no USER or SLOT" status --held slot01

# --help and --version: exit 0, on stdout, nothing on stderr.
"$SLOTS_ADMIN" --help >"$OUT/help.out" 2>"$OUT/help.err"
check "--help exits 0" test $? = 0
check "--help names every command" sh -c 'for c in assign release status check; do grep -q "$c" "$1" || exit 1; done' _ \
	"$OUT/help.out"
check "--help prints nothing on stderr" test ! -s "$OUT/help.err"
"$SLOTS_ADMIN" -h >"$OUT/h.out" 2>&1
check "-h is --help" cmp -s "$OUT/h.out" "$OUT/help.out"
"$SLOTS_ADMIN" --version >"$OUT/version.out" 2>"$OUT/version.err"
check "--version exits 0" test $? = 0
check "--version prints the name and a version" grep -Eqx 'slots-admin [0-9][0-9.]*(\+git[0-9]{8}\.[0-9]+\.[0-9a-f]{7,})?' "$OUT/version.out"
"$SLOTS_ADMIN" -V >"$OUT/V.out" 2>&1
check "-V is --version" cmp -s "$OUT/V.out" "$OUT/version.out"
slots_done
