#!/bin/sh
# The refusals of pam_slots that no other test provokes, through the real module and the
# pam-open driver: a nice value the session's process may not take (an unprivileged caller
# asking for a higher priority), and a slot's home too long for CLAUDE_CONFIG_DIR.  Each row is
# a config, the account the driver runs as, and the result; a refused row must say why in
# syslog.  The control rows pass the same way but for the one thing.
# Runs as root (the driver also runs as an unprivileged uid) in a private mount namespace.
. "$top_srcdir/tests/integration/lib.sh"
slots_need_root
slots_enter_namespace "$@"
MOD=$top_builddir/pam/.libs/pam_slots.so
DRV=$top_builddir/tests/integration/pam-open
for f in "$MOD" "$DRV"; do
	[ -e "$f" ] || { echo "Bail out! $f is not built"; exit 99; }
done
command -v setpriv >/dev/null || { echo "SKIP: setpriv is not installed (package util-linux)"; exit 77; }

C=$SLOTS_SCRATCH/c
ERR=$SLOTS_SCRATCH/driver.err
mkdir -p "$C/pam.d"
chmod 0755 "$C" "$C/pam.d"
printf 'session required pam_permit.so\n' >"$C/pam.d/slots-open"
chmod 0644 "$C/pam.d/slots-open"
# A slots_root of 4,080 characters: a valid absolute path, but CLAUDE_CONFIG_DIR=<it>/home/slot01
# does not fit the module's 4,096 bytes.
long=/$(printf '%04080d' 0 | tr 0 r)
# conf NAME JSON-TAIL: a root-owned config of the pool "svc" with these keys added.
conf() {
	printf '{"service": "svc", "slots": 4, %s}\n' "$2" >"$C/$1"
	chmod 0644 "$C/$1"
}
conf nice-19.conf '"limits": {"default": {"nice": 19}}'
conf nice-minus5.conf '"limits": {"default": {"nice": -5}}'
conf home.conf '"sudo_env": ["CLAUDE_CONFIG_DIR"], "slots_root": "/var/lib/slots/svc"'
conf home-long.conf "\"sudo_env\": [\"CLAUDE_CONFIG_DIR\"], \"slots_root\": \"$long\""

# description | config | as (root, or an unprivileged uid) | result | what syslog must say
cat >"$SLOTS_SCRATCH/cases" <<'EOF'
nice 19, unprivileged: the lowest priority is allowed|nice-19.conf|4321|PAM_SUCCESS|
nice -5, unprivileged: refused|nice-minus5.conf|4321|PAM_PERM_DENIED|cannot set limit nice to -5: Permission denied
nice -5 as root|nice-minus5.conf|root|PAM_SUCCESS|
CLAUDE_CONFIG_DIR set to the slot's home|home.conf|root|PAM_SUCCESS|
a slot's home too long for CLAUDE_CONFIG_DIR: refused|home-long.conf|root|PAM_PERM_DENIED|cannot set CLAUDE_CONFIG_DIR to the slot's home
EOF
while IFS='|' read -r row conf as want says; do
	if [ "$as" = root ]; then
		got=$(timeout 10 "$DRV" "$MOD" "$C/pam.d" slot01 "config=$C/$conf" 2>"$ERR")
	else
		got=$(timeout 10 setpriv --reuid "$as" --regid "$as" --clear-groups \
			"$DRV" "$MOD" "$C/pam.d" slot01 "config=$C/$conf" 2>"$ERR")
	fi
	sed 's/^/#   /' "$ERR"
	check "$row: $want" test "$got" = "$want"
	[ -z "$says" ] || check "$row: syslog says why" grep -qF "slot01: $says" "$ERR"
done <"$SLOTS_SCRATCH/cases"
slots_done
