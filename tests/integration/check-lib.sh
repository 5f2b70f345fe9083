# shellcheck shell=sh
# top_srcdir and top_builddir come from make check's environment (lib.sh).
# shellcheck disable=SC2154
# Fixture host for the "slots-admin check" tests.  Source it after lib.sh, inside the
# private mount namespace (slots_enter_namespace): everything it makes lives in the
# namespace's copy of /etc, its /tmp and its /var/lib/slots.

# CHECK_POOL: the pool's size (default 8; the uid range holds up to 98).
SERVICE=vstudio
CONF=/etc/slots/slots.conf
TABLE=/etc/slots/slots.json
SLOTCTL=/etc/slots/slotctl.json
SUDOERS=/etc/sudoers.d/slots-$SERVICE
APP=$SLOTS_SCRATCH/srv/app
DOCS=$SLOTS_SCRATCH/srv/docs
RELEASE=2026.10.1
LAUNCHER=$APP/releases/$RELEASE/bin/run
# slotctl as the platform's enforces it: 126 "outside the allowed folders" (slotctl-enforcing.py).
SLOTCTL_BIN=$SLOTS_SCRATCH/srv/slotctl
OUT=$(mktemp -d /tmp/check-out.XXXXXX)
unset SLOTS_CONFIG

# Application user ids: none of them may ever appear in check's output.
USER_A=aa73da63e26b40a1bb701c2b4c024870
USER_B=bob.example-1
USER_C=C_0ffee.99
USERS="$USER_A $USER_B $USER_C"

# A uid range free on this host: the slots and the shared group take ids from it.
check_pick_range() {
	for base in 7100 17100 27100 37100; do
		taken=
		i=$((base - 1))
		while [ $i -le $((base + 99)) ]; do
			if getent passwd $i >/dev/null || getent group $i >/dev/null; then taken=1; break; fi
			i=$((i + 1))
		done
		[ -z "$taken" ] && { UID_MIN=$base; UID_MAX=$((base + 99)); return 0; }
	done
	echo "SKIP: no free uid range for the fixture"
	exit 77
}

check_write_config() {
	mkdir -p /etc/slots
	chmod 0755 /etc/slots
	cat >"$CONF" <<EOF
{
  "service": "$SERVICE",
  "slots": ${CHECK_POOL:-8},
  "uid_min": $UID_MIN,
  "uid_max": $UID_MAX,
  "app_root": "$APP",
  "launcher": "run",
  "slotctl": "$SLOTCTL_BIN",
  "docs_root": "$DOCS",
  "shared_dirs": ["shared"],
  "private_paths": ["$APP/state", "$APP/.env"],
  "probe": ["{launcher}", "/bin/sh", "-c", "cd \\"\$0\\" && pwd", "{cwd}"]
}
EOF
	chown root:root "$CONF"
	chmod 0644 "$CONF"
}

# The service's own layout: releases, the current link, private paths, the document tree.
check_write_app() {
	install -d -m 0755 -o $SERVICE -g $SERVICE "$SLOTS_SCRATCH/srv" "$APP" "$DOCS"
	install -d -m 0711 -o root -g root "$APP/releases"
	install -d -m 0755 -o $SERVICE -g $SERVICE "$APP/releases/$RELEASE" "$APP/releases/$RELEASE/bin"
	printf '#!/bin/sh\nexec "$@"\n' >"$LAUNCHER"
	chown $SERVICE:$SERVICE "$LAUNCHER"
	chmod 0755 "$LAUNCHER"
	install -m 0755 -o root -g root "$top_srcdir/tests/integration/slotctl-enforcing.py" "$SLOTCTL_BIN"
	ln -s "releases/$RELEASE" "$APP/current"
	install -d -m 0700 -o $SERVICE -g $SERVICE "$APP/state"
	echo "browser profile" >"$APP/state/profile"
	echo "SECRET=1" >"$APP/.env"
	chown $SERVICE:$SERVICE "$APP/.env" "$APP/state/profile"
	chmod 0600 "$APP/.env" "$APP/state/profile"
	install -d -m 0711 -o $SERVICE -g $SERVICE "$DOCS/_users"
}

# Accounts, homes, shared group, table, slotctl config, sudoers drop-in.  The one place
# that decides between slots-provision and the shadow-utils stand-in.
check_fixture_accounts() {
	if [ -x "$SLOTS_PROVISION" ] && [ "${CHECK_FIXTURE:-}" != manual ]; then
		FIXTURE_BY=slots-provision
		"$SLOTS_PROVISION" --config "$CONF" >"$OUT/provision.out" 2>&1 || {
			cat "$OUT/provision.out"
			echo "Bail out! slots-provision failed"
			exit 99
		}
		return 0
	fi
	FIXTURE_BY=useradd
	groupadd -g $UID_MIN slotshared
	install -d -m 0755 /var/lib/slots/$SERVICE /var/lib/slots/$SERVICE/home \
		/var/lib/slots/$SERVICE/state /var/lib/slots/$SERVICE/run
	runas=
	for n in $(seq "${CHECK_POOL:-8}"); do
		s=$(printf 'slot%02d' $n)
		u=$((UID_MIN + n))
		groupadd -g $u $s
		useradd -u $u -g $s -G slotshared -d /var/lib/slots/$SERVICE/home/$s -M -s /usr/sbin/nologin $s
		for d in home state run; do
			install -d -m 0700 -o $s -g $s /var/lib/slots/$SERVICE/$d/$s
		done
		runas=${runas:+$runas,}$s
	done
	install -d -m 2770 -o $SERVICE -g slotshared "$DOCS/shared"
	printf '{\n  "slots": {}, \n  "version": 1\n}\n' >"$TABLE"
	chown root:$SERVICE "$TABLE"
	chmod 0640 "$TABLE"
	cat >"$SLOTCTL" <<EOF
{
  "allowed_cwd": [
    "$DOCS"
  ],
  "allowed_exec": [
    "$APP/releases/*/bin/run"
  ],
  "docs_root": "$DOCS"
}
EOF
	chown root:root "$SLOTCTL"
	chmod 0644 "$SLOTCTL"
	printf '%s ALL=(%s) NOPASSWD: /usr/bin/true, /usr/bin/kill, %s\n' $SERVICE "$runas" "$SLOTCTL_BIN" >"$SUDOERS"
	chmod 0440 "$SUDOERS"
	visudo -cqf "$SUDOERS" || { echo "Bail out! the test's sudoers drop-in is invalid"; exit 99; }
}

# Assigns users to slots in the table (written directly, as slots.json(5) gives its format) and
# prepares their trees as assign does (slots-admin(8)): the service's, 0700, granted to the
# slot's uid by an ACL entry u:slotNN:rwX (folders with the same default), nothing for the
# owning group or others.  Arguments: SLOT USER pairs.
check_assign() {
	entries=
	while [ $# -ge 2 ]; do
		entries="$entries${entries:+,}
    \"$1\": {\"since\": \"2026-10-01T09:12:00Z\", \"user\": \"$2\"}"
		install -d -m 0700 -o $SERVICE -g $SERVICE "$DOCS/_users/$2"
		echo "work of $2" >"$DOCS/_users/$2/notes.txt"
		chown $SERVICE:$SERVICE "$DOCS/_users/$2/notes.txt"
		chmod 0600 "$DOCS/_users/$2/notes.txt"
		setfacl -m "u:$1:rwx,m::rwx,g::-,o::-" -m "d:u:$1:rwx,d:g::-,d:o::-" "$DOCS/_users/$2"
		setfacl -m "u:$1:rw-,m::rw-,g::-,o::-" "$DOCS/_users/$2/notes.txt"
		shift 2
	done
	printf '{\n  "slots": {%s\n  },\n  "version": 1\n}\n' "$entries" >"$TABLE.new"
	chown root:$SERVICE "$TABLE.new"
	chmod 0640 "$TABLE.new"
	mv "$TABLE.new" "$TABLE"
}

# pam_slots of the build in the namespace's sudo session stack, as the package's pam-auth-update
# profile puts it in common-session-noninteractive: the sudo-env row reads no_new_privs.  sudo is
# not built with AddressSanitizer and cannot load a module that is: a sanitizer build names a
# plain build's module in SLOTS_SUDO_PAM_MODULE (scripts/test.sh does; pam-slots.sh runs the
# instrumented module in process).
PAM_SUDO_MODULE=${SLOTS_SUDO_PAM_MODULE:-$top_builddir/pam/.libs/pam_slots.so}
PAM_SUDO_LINE="session required $PAM_SUDO_MODULE config=$CONF"
check_pam_sudo() {
	test -f "$PAM_SUDO_MODULE" || { echo "Bail out! $PAM_SUDO_MODULE not built"; exit 99; }
	grep -qxF "$PAM_SUDO_LINE" /etc/pam.d/sudo || echo "$PAM_SUDO_LINE" >>/etc/pam.d/sudo
}

check_fixture() {
	check_pick_range
	groupadd -g $((UID_MIN - 1)) $SERVICE
	useradd -u $((UID_MIN - 1)) -g $SERVICE -M -d /nonexistent -s /usr/sbin/nologin $SERVICE
	check_write_config
	check_write_app
	check_fixture_accounts
	check_pam_sudo
	check_assign slot01 "$USER_A" slot03 "$USER_B" slot05 "$USER_C"
	echo "# fixture accounts made by $FIXTURE_BY; uids $UID_MIN-$UID_MAX; app $APP"
}

# Runs check; stdout in $OUT/$1.out, stderr in $OUT/$1.err, exit status in $OUT/$1.rc.
run_check() {
	name=$1
	shift
	"$SLOTS_ADMIN" "$@" check >"$OUT/$name.out" 2>"$OUT/$name.err"
	echo $? >"$OUT/$name.rc"
}

# The same as the service account, as the deploy's self-test runs it (options before "check").
run_svc() {
	name=$1
	shift
	runuser -u "$SERVICE" -- "$SLOTS_ADMIN" "$@" check >"$OUT/$name.out" 2>"$OUT/$name.err"
	echo $? >"$OUT/$name.rc"
}

# What is left of the slots' runs: every live process of a slot of the fixture.
slot_procs() {
	ps -e -o uid=,pid=,pgid=,sid=,stat=,args= | awk -v lo=$UID_MIN -v hi=$UID_MAX '$1 > lo && $1 <= hi && $5 !~ /^Z/'
}

rc_of() {
	cat "$OUT/$1.rc"
}

# check_rc "description" STATUS NAME: the run NAME exited with STATUS (its output is shown when not).
check_rc() {
	got=$(rc_of "$3")
	if [ "$got" = "$2" ]; then
		ok "$1"
	else
		not_ok "$1 (exit $got, want $2)"
		show "$3"
	fi
}

# The fix of the first "FAIL <check> [<slot>]: ... -- fix: ..." line of a run.
fix_of() {
	name=$1
	want="FAIL $2${3:+ $3}: "
	grep -F -- "$want" "$OUT/$name.out" | head -n 1 | sed 's/.* -- fix: //'
}

# The row "STATUS CHECK SLOT" of a run: prints its status.
row_status() {
	awk -v c="$2" -v s="${3:--}" '$2 == c && $3 == s && ($1 == "PASS" || $1 == "FAIL" || $1 == "WARN" || $1 == "SKIP") { print $1; exit }' \
		"$OUT/$1.out"
}

# Everything of the fixture check may not change: owner, group, mode, type, size, link
# target, mtime and ctime of every entry, the sha256 of every file, every ACL.
fixture_snapshot() {
	for root in "$SLOTS_SCRATCH" /etc/slots /var/lib/slots /etc/sudoers.d /etc/passwd /etc/group /etc/shadow \
		/etc/gshadow; do
		find "$root" -printf '%p %u %g %m %y %s %l %T@ %C@\n' | sort
		find "$root" -type f -exec sha256sum {} + | sort
		(cd / && getfacl -R -P -p "$root" 2>/dev/null)
	done
}

# No application user id in any of the named outputs.
no_user_ids() {
	for f in "$@"; do
		for u in $USERS; do
			if grep -F -q -- "$u" "$f"; then
				echo "# $f shows the user id $u:"
				grep -F -- "$u" "$f" | sed 's/^/#   /'
				return 1
			fi
		done
	done
	return 0
}

# Shows a run's output as TAP comments (for the log of a failing test).
show() {
	sed 's/^/# /' "$OUT/$1.out" "$OUT/$1.err"
}

# ---- broken hosts as a table (check-fail-rows.sh, check-host-rows.sh, check-slot-rows.sh) ----

# edit_json FILE PYTHON: changes FILE's JSON (c is the value) in place, keeping owner and mode.
edit_json() {
	python3 - "$1" "$2" <<'PY'
import json, sys
path, code = sys.argv[1], sys.argv[2]
c = json.load(open(path))
exec(code)
with open(path, "w") as f:
    json.dump(c, f, indent=2, sort_keys=True)
    f.write("\n")
PY
}
edit_config() { edit_json "$CONF" "$1"; }
edit_slotctl() { edit_json "$SLOTCTL" "$1"; }

# The fixture, shown to pass, and kept as it is for the restore_* repairs.
check_fixture_good() {
	check_fixture
	run_check base
	check_rc "the fixture passes" 0 base
	check_keep_good
}

# Keeps the fixture's account files, table and config as they are, for the restore_* repairs.
check_keep_good() {
	cp -p /etc/passwd /etc/group /etc/shadow /etc/gshadow "$OUT/"
	cp -p "$TABLE" "$OUT/table.good"
	cp -p "$CONF" "$OUT/conf.good"
}
restore_accounts() {
	for f in passwd group shadow gshadow; do cat "$OUT/$f" >/etc/$f; done
}
restore_table() {
	rm -f "$TABLE"
	cp -p "$OUT/table.good" "$TABLE"
}
restore_config() {
	rm -rf "$CONF"
	cp -p "$OUT/conf.good" "$CONF"
}

# case_ NAME CHECK SLOT DETAIL BREAK REPAIR: BREAK (shell) breaks the host; check must fail the
# row CHECK SLOT ("-" for none) with DETAIL (a fixed string) in it; REPAIR (shell; "FIX" runs the
# printed fix) puts it back, and check must pass again.
case_() {
	# (not $name, $c or $s: check-lib's helpers set those)
	cname=$1 crow=$2 cslot=$3 detail=$4 break_=$5 repair=$6
	[ "$cslot" = - ] && cslot=
	if ! eval "$break_"; then
		not_ok "$cname: breaking the host ($break_)"
		return
	fi
	fixture_snapshot >"$OUT/$cname.before"
	run_check "$cname"
	fixture_snapshot >"$OUT/$cname.after"
	check_rc "$cname: check exits 1" 1 "$cname"
	check "$cname: the row $crow${cslot:+ $cslot} is FAIL" test "$(row_status "$cname" "$crow" "$cslot")" = FAIL
	FIX=$(fix_of "$cname" "$crow" "$cslot")
	check "$cname: the FAIL line has a fix" test -n "$FIX"
	check "$cname: the detail says what is wrong" sh -c 'grep -E -- "^FAIL $1: " "$2" | grep -q -F -- "$3"' _ \
		"$crow${cslot:+ $cslot}" "$OUT/$cname.out" "$detail"
	check "$cname: check changed nothing" cmp -s "$OUT/$cname.before" "$OUT/$cname.after"
	check "$cname: no user id in the output" no_user_ids "$OUT/$cname.out" "$OUT/$cname.err"
	[ -n "$FIX" ] || show "$cname"
	echo "# fix: $FIX"
	if [ "$repair" = FIX ]; then
		sh -c "$FIX" || not_ok "$cname: the printed fix runs"
	else
		eval "$repair" || not_ok "$cname: the repair runs"
	fi
	run_check "$cname.fixed"
	check_rc "$cname: repaired, check exits 0" 0 "$cname.fixed"
}

# The line of the row CHECK SLOT ("-" or none: a host-wide row) in the table of run NAME.
row_line() {
	awk -v c="$2" -v s="${3:--}" '$2 == c && $3 == s && ($1 == "PASS" || $1 == "FAIL" || $1 == "WARN" || $1 == "SKIP") { print; exit }' \
		"$OUT/$1.out"
}

# row_says NAME STATUS CHECK SLOT DETAIL: the row CHECK SLOT of run NAME is STATUS and says DETAIL.
row_says() {
	[ "$(row_status "$1" "$3" "$4")" = "$2" ] || return 1
	row_line "$1" "$3" "$4" | grep -q -F -- "$5"
}

# case_row NAME RC STATUS CHECK SLOT DETAIL CHANGE UNDO: a host set up otherwise; check exits
# RC with the row CHECK SLOT at STATUS (PASS or SKIP) saying DETAIL, and changes nothing.
# UNDO puts the fixture back (check must exit 0 again).
case_row() {
	cname=$1 crc=$2 cstatus=$3 crow=$4 cslot=$5 detail=$6 change=$7 undo=$8
	[ "$cslot" = - ] && cslot=
	if ! eval "$change"; then
		not_ok "$cname: setting up the host ($change)"
		return
	fi
	fixture_snapshot >"$OUT/$cname.before"
	run_check "$cname"
	fixture_snapshot >"$OUT/$cname.after"
	check_rc "$cname: check exits $crc" "$crc" "$cname"
	check "$cname: the row $crow${cslot:+ $cslot} is $cstatus and says why" \
		row_says "$cname" "$cstatus" "$crow" "$cslot" "$detail"
	check "$cname: check changed nothing" cmp -s "$OUT/$cname.before" "$OUT/$cname.after"
	eval "$undo" || not_ok "$cname: putting the fixture back"
	run_check "$cname.back"
	check_rc "$cname: put back, check exits 0" 0 "$cname.back"
}
