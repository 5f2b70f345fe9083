#!/bin/sh
# The one rule for a config others can write (config.c's slots_config_writers, which pam_slots
# shares): slots-provision refuses such a config before it changes anything, and a dry run
# warns with the same fix.  And the store's one table verdict: a table with an ACL that lets
# others in is repaired like one with the wrong mode.  An image without sudo gets no drop-in
# and a warning that says so.  Under --root, in a private namespace.
. "$top_srcdir/tests/integration/lib.sh"
slots_need_root
slots_enter_namespace "$@"

S=$SLOTS_SCRATCH
R=$S/root
mkdir -p "$R/etc/slots"
for f in passwd group shadow gshadow; do cp "$top_srcdir/tests/provision/initial-$f" "$R/etc/$f"; done
cat >"$R/etc/slots/slots.conf" <<'CONF'
{"service": "svc", "slots": 2, "uid_min": 20000, "uid_max": 20099}
CONF
# A template task that writes it 0664 (group-writable), as the platform's did.
chmod 0664 "$R/etc/slots/slots.conf"
(cd "$R/etc" && md5sum passwd group shadow gshadow) >"$S/sums"
"$SLOTS_PROVISION" --root "$R" >"$S/out1" 2>"$S/err1"
st=$?
cat "$S/err1"
check "a config others can write is refused (exit 1, got $st)" test "$st" = 1
check "the refusal names the file, its mode and the rule" \
	grep -q "refused: /etc/slots/slots.conf: /etc/slots/slots.conf is 0664 owned by uid 0: someone other than root can change it" "$S/err1"
check "the fix is chmod go-w" grep -q "fix: chmod go-w /etc/slots/slots.conf\$" "$S/err1"
check "nothing was changed: no account file differs" sh -c "cd '$R/etc' && md5sum -c --quiet '$S/sums'"
check "nothing was changed: no table was made" test ! -e "$R/etc/slots/slots.json"
"$SLOTS_PROVISION" --root "$R" --dry-run --json >"$S/out2" 2>"$S/err2"
st=$?
check "a dry run exits 0 (got $st)" test "$st" = 0
check "and warns with the fix" grep -q "warning: /etc/slots/slots.conf is 0664 owned by uid 0" "$S/err2"
check "and says a real run refuses it" grep -q "a run that changes the host refuses this config" "$S/err2"
check "the JSON report lists the warning with its fix" \
	python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert any(w["fix"] == "chmod go-w /etc/slots/slots.conf" for w in d["warnings"]), d["warnings"]' "$S/out2"
chmod 0644 "$R/etc/slots/slots.conf"
"$SLOTS_PROVISION" --root "$R" >"$S/out3" 2>"$S/err3"
check "with 0644 the run works" test $? = 0
# The image has no sudo: no drop-in, and the run says so (a line, and a warnings entry in --json).
check "without sudo in the image: no drop-in, and a warning line says so" sh -c \
	"test ! -e '$R/etc/sudoers.d' && grep -q '^slots-provision: warning: /usr/sbin/visudo: sudo is not installed (no visudo): no sudoers drop-in written' '$S/err3'"
"$SLOTS_PROVISION" --root "$R" --json >"$S/out5" 2>"$S/err5"
check "and --json lists it under warnings with its fix" \
	python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert any(w["object"] == "/usr/sbin/visudo" and "no sudoers drop-in written" in w["text"] and w["fix"].startswith("install sudo in the image") for w in d["warnings"]), d["warnings"]' "$S/out5"

# The table: root:svc 0640 by its mode, but an ACL entry lets another account (nobody) read it.
T=$R/etc/slots/slots.json
check "the table is root:svc 0640" test "$(stat -c '%u:%g %a' "$T")" = "0:1000 640"
if setfacl -m u:65534:r "$T" 2>/dev/null; then
	check "set up: the mode still reads 0640" test "$(stat -c %a "$T")" = 640
	cp "$T" "$S/table-before"
	"$SLOTS_PROVISION" --root "$R" >"$S/out4" 2>"$S/err4"
	check "a table with an ACL: the run exits 0" test $? = 0
	check "it is repaired, the ACL named" grep -q "^repair table /etc/slots/slots.json: root:svc 0640 with an ACL -> root:svc 0640 (content kept)\$" "$S/out4"
	check "the ACL is gone" test -z "$(getfacl -cs "$T" 2>/dev/null)"
	check "the content is kept" cmp -s "$T" "$S/table-before"
	"$SLOTS_PROVISION" --root "$R" >"$S/out5" 2>"$S/err5"
	check "again: 0 changes" test "$(cat "$S/out5")" = "0 changes"
else
	echo "# the file system of $S takes no ACL: the table's ACL case is not run"
fi
slots_done
