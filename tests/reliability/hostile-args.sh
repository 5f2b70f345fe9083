#!/bin/sh
# Issue 7.4, the command line: user ids and slot names that are not what slots-admin(8) allows
# (a "/", "..", newlines, escapes, 65 characters, slot00, slot1, slot0001, slot-1, ...) are
# refused by every command that takes them with exit 2 and the same clear message whatever
# the argument was, so nothing of it is echoed (no terminal escape or forged line reaches
# stderr); the table is byte-identical afterwards.  A NUL cannot reach a command through
# argv at all: execve() copies each argument up to its first NUL, so "ok\0/../x" arrives as
# "ok"; tests/reliability/execnul shows what the command then receives and does.
. "$top_srcdir/tests/integration/lib.sh"
. "$top_srcdir/tests/reliability/rel-lib.sh"
slots_need_root
slots_enter_namespace "$@"

W=$SLOTS_WORLD/w
P=$SLOTS_WORLD/p
mkdir -p "$W" "$P"
rel_admin_world "$W" 4
TABLE=$W/s/etc/slots.json
check "assign alice slot01 in the world" prints slot01 admin_in "$W" assign alice slot01
cp -p "$TABLE" "$P/table.before"

nl='
'
esc=$(printf '\033')
tab=$(printf '\t')
long65=$(printf '%065d' 0 | tr 0 a)
long64=$(printf '%064d' 0 | tr 0 b)
# Just under what execve takes for one argument (MAX_ARG_STRLEN, 128 KiB).
huge=$(head -c 100000 /dev/zero | tr '\0' a)

# The message for an invalid id and an invalid slot name, from harmless cases.
admin_in "$W" assign "a/b" >/dev/null 2>"$P/user.msg"
check "assign 'a/b' is a usage error (exit 2)" [ $? = 2 ]
admin_in "$W" assign alice slot1 >/dev/null 2>"$P/slot.msg"
check "assign alice slot1 is a usage error (exit 2)" [ $? = 2 ]
admin_in "$W" status "a/b" >/dev/null 2>"$P/status.msg"
check "status 'a/b' is a usage error (exit 2)" [ $? = 2 ]
check "status says why (a message on stderr)" test -s "$P/status.msg"
check "an invalid user id is named as such" grep -q "invalid user id" "$P/user.msg"
check "an invalid slot name is named as such" grep -q "invalid slot name" "$P/slot.msg"

n_args=0
# refused DESC ARG: every command that takes a user id refuses ARG with exit 2, a message
# that does not depend on ARG, and nothing on stdout.
refused_user() {
	desc=$1
	arg=$2
	bad=
	for cmd in assign release status; do
		# "--": an id that starts with "-" is an id here, not an option.
		admin_in "$W" $cmd -- "$arg" >"$P/out" 2>"$P/err"
		st=$?
		n_args=$((n_args + 1))
		msg=$P/user.msg
		[ $cmd = status ] && msg=$P/status.msg
		if [ "$st" != 2 ]; then
			bad="$bad $cmd:exit-$st"
		elif ! cmp -s "$P/err" "$msg"; then
			bad="$bad $cmd:message-differs"
		elif [ -s "$P/out" ]; then
			bad="$bad $cmd:stdout"
		fi
	done
	admin_in "$W" assign -- "$arg" slot02 >"$P/out" 2>"$P/err"
	st=$?
	n_args=$((n_args + 1))
	{ [ "$st" = 2 ] && cmp -s "$P/err" "$P/user.msg"; } || bad="$bad assign-with-slot:exit-$st"
	check "user id $desc: refused with exit 2 and the same message by assign, release, status${bad:+ ($bad)}" [ -z "$bad" ]
}

refused_slot() {
	desc=$1
	arg=$2
	bad=
	admin_in "$W" assign carol "$arg" >"$P/out" 2>"$P/err"
	st=$?
	{ [ "$st" = 2 ] && cmp -s "$P/err" "$P/slot.msg" && [ ! -s "$P/out" ]; } || bad="$bad assign:exit-$st"
	admin_in "$W" release --slot "$arg" >"$P/out" 2>"$P/err"
	st=$?
	{ [ "$st" = 2 ] && cmp -s "$P/err" "$P/slot.msg" && [ ! -s "$P/out" ]; } || bad="$bad release:exit-$st"
	n_args=$((n_args + 2))
	check "slot name $desc: refused with exit 2 and the same message by assign and release --slot${bad:+ ($bad)}" \
		[ -z "$bad" ]
}

refused_user "with a slash (a/b)" "a/b"
refused_user "'..'" ".."
refused_user "'../etc'" "../etc"
refused_user "'.'" "."
refused_user "starting with a dot" ".hidden"
refused_user "starting with a dash" "-rf"
check_exit "user id starting with a dash, without \"--\": an unknown option, exit 2" 2 admin_in "$W" release -rf 2>/dev/null
refused_user "with a newline" "alice${nl}slot02: forged line"
refused_user "ending in a newline" "alice${nl}"
refused_user "with a terminal escape" "a${esc}[31mred${esc}[0m"
refused_user "with a tab" "a${tab}b"
refused_user "with a space" "a b"
refused_user "with a colon" "a:b"
refused_user "with a shell substitution" '$(id)'
refused_user "with a glob" "a*"
refused_user "that is empty" ""
refused_user "of 65 characters" "$long65"
refused_user "of 100,000 characters" "$huge"
refused_user "with UTF-8 (é)" "$(printf 'caf\303\251')"
refused_user "with an invalid UTF-8 byte" "$(printf 'a\377b')"
refused_user "with a percent sign (format string)" "%s%n%x"

refused_slot "slot00" slot00
refused_slot "slot1" slot1
refused_slot "slot0001" slot0001
refused_slot "slot-1" slot-1
refused_slot "slot+1" "slot+1"
refused_slot "slot" slot
refused_slot "SLOT01" SLOT01
refused_slot "slot01x" slot01x
refused_slot "' slot01'" " slot01"
refused_slot "slot01 with a newline" "slot01${nl}"
refused_slot "slot10000" slot10000
refused_slot "slot007" slot007
refused_slot "slot with Arabic-Indic digits" "$(printf 'slot\331\243\331\243')"
refused_slot "slot01/../x" "slot01/../x"
refused_slot "empty" ""

check "the table is byte-identical after every refusal" cmp -s "$TABLE" "$P/table.before"
check "no temp is next to the table" [ -z "$(rel_temps "$W/s/etc")" ]

# The other side of each limit: accepted.
check "a user id of 64 characters is accepted" prints slot02 admin_in "$W" assign "$long64" slot02
check "and released" quiet admin_in "$W" release "$long64"
check "a user id with . _ - inside is accepted" prints slot02 admin_in "$W" assign "a.b_c-d" slot02
check "and released" quiet admin_in "$W" release "a.b_c-d"
check_exit "slot99 is a valid name outside the pool: refused (exit 1), not a usage error" 1 \
	admin_in "$W" assign carol slot99 2>/dev/null
check_exit "slot100 too" 1 admin_in "$W" assign carol slot100 2>/dev/null
cp -p "$TABLE" "$P/table.before"

# A NUL: what execve passes is the part before it.
EXECNUL=$top_builddir/tests/reliability/execnul
if [ -x "$EXECNUL" ]; then
	nul() {
		env LD_PRELOAD="$NSSW" NSS_WRAPPER_PASSWD="$W/passwd" NSS_WRAPPER_GROUP="$W/group" \
			"$EXECNUL" "$SLOTS_ADMIN" --config "$W/slots.conf" "$@"
	}
	nul release 'nobody\0/../../etc/passwd' >"$P/out" 2>&1
	st=$?
	check "release 'nobody<NUL>/../../etc/passwd' arrives as 'nobody': a user without a slot, exit 0" \
		sh -c '[ "$1" = 0 ] && grep -q "^user nobody holds no slot" "$2"' sh "$st" "$P/out"
	check_exit "assign '<NUL>alice' arrives as an empty id: exit 2" 2 nul assign '\0alice' 2>/dev/null
	check_exit "assign 'a/<NUL>b' arrives as 'a/': exit 2" 2 nul assign 'a/\0b' 2>/dev/null
	check_exit "status 'slot01<NUL>x' arrives as slot01: exit 0" 0 quiet nul status 'slot01\0x'
	check "the table is byte-identical after them" cmp -s "$TABLE" "$P/table.before"
	n_args=$((n_args + 4))
fi

# Options and commands: unknown ones are usage errors, and nothing changes.
check_exit "an unknown command: exit 2" 2 admin_in "$W" frobnicate 2>/dev/null
check_exit "an unknown option: exit 2" 2 admin_in "$W" --frobnicate status 2>/dev/null
check_exit "assign with three arguments: exit 2" 2 admin_in "$W" assign a slot01 extra 2>/dev/null
check_exit "release with a user and --slot: exit 2" 2 admin_in "$W" release --slot slot01 alice 2>/dev/null
check_exit "--json assign without a user: exit 2" 2 admin_in "$W" --json assign 2>/dev/null
check_exit "no command: exit 2" 2 admin_in "$W" 2>/dev/null
n_args=$((n_args + 6))
if rel_have_provision; then
	check_exit "slots-provision: an unknown option: exit 2" 2 "$SLOTS_PROVISION" --frobnicate 2>/dev/null
	check_exit "slots-provision: a stray argument: exit 2" 2 "$SLOTS_PROVISION" --root "$W" extra 2>/dev/null
	check_exit "slots-provision: --root that does not exist: exit 2" 2 \
		"$SLOTS_PROVISION" --root "$W/nonexistent" --config "$W/slots.conf" 2>/dev/null
	n_args=$((n_args + 3))
fi
# slots-provision echoes a bad --changed-exit value: escaped, never the raw bytes.
"$SLOTS_PROVISION" --changed-exit "x${esc}]0;owned$(printf '\a')" >"$P/ce.out" 2>"$P/ce.err"
check "provision --changed-exit with control bytes: exit 2" test $? = 2
check "its message shows the value escaped" grep -qF 'not '"'"'x\033]0;owned\a'"'" "$P/ce.err"
check "no raw ESC reaches the terminal" sh -c "! grep -q '$esc' '$P/ce.err'"
n_args=$((n_args + 1))
check "the table is byte-identical at the end" cmp -s "$TABLE" "$P/table.before"
echo "# hostile-args: $n_args hostile command lines, each refused or handled as slots-admin(8) says"
slots_done
