#!/bin/sh
# Every key of "slots-admin status --json", "check --json", "assign --json", "release --json" and
# "slots-provision --json" is documented in the man page, and every documented key
# shows up in real output.  The man pages list the keys as ".It Li path" items after a
# ".\" json-keys: NAME" marker, with "a.b" for a nested object and "a[].b" for the
# objects of an array; the output's keys are read the same way from the runs below,
# which together reach every key (a pending slot, a failed row, a warning, a conflict,
# an error with a line and column).  Also: names that are not UTF-8 keep their entries in
# both commands' JSON, and --changed-exit's exit statuses and its refused values.
. "$top_srcdir/tests/integration/lib.sh"
slots_need_root
command -v python3 >/dev/null || { echo "SKIP: python3 is not installed"; exit 77; }
slots_enter_namespace "$@"
. "$top_srcdir/tests/integration/check-lib.sh"

# documented MANPAGE NAME: the key paths listed after the marker, one a line, sorted.
documented() {
	awk -v name="$2" '
		$0 ~ "^\\.\\\\\" json-keys: " name "( |$)" { on = 1; next }
		on && /^\.El/ { exit }
		on && /^\.It Li / { print $3 }' "$1" | LC_ALL=C sort -u
}

# keys FILE...: the key paths of JSON documents, one a line, sorted.
keys() {
	python3 - "$@" <<'PY'
import json, sys
found = set()
def walk(v, path):
    if path:
        found.add(path)
    if isinstance(v, dict):
        for k, x in v.items():
            walk(x, path + "." + k if path else k)
    elif isinstance(v, list):
        for x in v:
            walk(x, path + "[]")
for f in sys.argv[1:]:
    with open(f) as fh:
        walk(json.load(fh), "")
# An array's own path ("slots[]") is not a key; its objects' keys are.
for k in sorted(found):
    if not k.endswith("[]"):
        print(k)
PY
}

# compare NAME MANPAGE OUTPUT...: the documented list and the real keys are the same set.
compare() {
	name=$1
	page=$2
	shift 2
	documented "$page" "$name" >"$OUT/$name.doc"
	if ! keys "$@" >"$OUT/$name.keys"; then
		not_ok "$name: the outputs parse as JSON"
		return
	fi
	check "$name: the man page documents keys ($(wc -l <"$OUT/$name.doc"))" test -s "$OUT/$name.doc"
	check "$name: the output has keys ($(wc -l <"$OUT/$name.keys"))" test -s "$OUT/$name.keys"
	if diff -u "$OUT/$name.doc" "$OUT/$name.keys" >"$OUT/$name.diff"; then
		ok "$name: every key of the output is documented in $(basename "$page"), and every documented key is output"
	else
		not_ok "$name: $(basename "$page") and the output differ (- documented only, + output only)"
		sed 's/^/# /' "$OUT/$name.diff"
	fi
}

# run NAME WANT-STATUS COMMAND...: stdout in $OUT/NAME.json; the exit status and non-empty output checked.
run() {
	name=$1
	want=$2
	shift 2
	"$@" >"$OUT/$name.json" 2>"$OUT/$name.err"
	got=$?
	if [ "$got" = "$want" ] && [ -s "$OUT/$name.json" ]; then
		ok "$name exits $want with output"
	else
		not_ok "$name exits $want with output (exit $got)"
		sed 's/^/# /' "$OUT/$name.err"
	fi
}

check_fixture

# ---- slots-admin status: assigned, free and a pending slot ----
python3 - "$TABLE" <<'PY'
import json, sys
t = json.load(open(sys.argv[1]))
t["slots"]["slot07"] = {"cleanup": "pending", "released": "2026-10-02T17:40:11Z"}
open(sys.argv[1] + ".new", "w").write(json.dumps(t, indent=2) + "\n")
PY
chown root:$SERVICE "$TABLE.new" && chmod 0640 "$TABLE.new" && mv "$TABLE.new" "$TABLE"
run status 0 "$SLOTS_ADMIN" status --json
run status-slot 0 "$SLOTS_ADMIN" status --json slot07
check "status shows the pending slot" python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
assert [s for s in d["slots"] if s.get("cleanup") == "pending" and s["slot"] == "slot07"], d' "$OUT/status.json"
# A missing table: owner, group and mode are null (same keys).
mv "$TABLE" "$TABLE.away"
run status-none 0 "$SLOTS_ADMIN" status --json
mv "$TABLE.away" "$TABLE"
compare status "$top_srcdir/man/slots-admin.8" "$OUT/status.json" "$OUT/status-slot.json" "$OUT/status-none.json"

# ---- slots-admin check: the pending slot fails a row, so "fix" is a string there ----
run check 1 "$SLOTS_ADMIN" check --json
check "check --json has a failed row with a fix" python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
assert not d["ok"] and [c for c in d["checks"] if c["status"] == "FAIL" and c["fix"]], d' "$OUT/check.json"
compare check "$top_srcdir/man/slots-admin.8" "$OUT/check.json"

# The attack: the service account names the release in use with a byte that is not UTF-8
# (and a terminal escape); check --json must still print every row, the byte as \xff.
badrel=$(printf 'bad\377\033[31mrel')
mkdir -p "$APP/releases/$badrel/bin"
cp -p "$LAUNCHER" "$APP/releases/$badrel/bin/run"
chown -R $SERVICE:$SERVICE "$APP/releases/$badrel"
ln -sfn "releases/$badrel" "$APP/current"
run check-badname 1 "$SLOTS_ADMIN" check --json
check "check --json keeps the row that names the release, the byte as \\xff" python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
assert [c for c in d["checks"] if "bad\\xff\x1b[31mrel" in c["detail"]], d' "$OUT/check-badname.json"
ln -sfn "releases/$RELEASE" "$APP/current"

# ---- slots-admin assign and release --json: changed, a repeat, a refusal with its error ----
run assign 0 "$SLOTS_ADMIN" assign --json json.user
run assign-again 0 "$SLOTS_ADMIN" assign --json json.user
run assign-refused 1 "$SLOTS_ADMIN" assign --json other.json.user slot01
check "assign --json: changed, then not; a refusal names its error" python3 -c '
import json, sys
a, b, c = (json.load(open(f)) for f in sys.argv[1:4])
assert a["changed"] is True and a["slot"] == b["slot"] and a["user"] == "json.user" and a["error"] is None, a
assert b["changed"] is False and b["error"] is None, b
assert c["changed"] is False and c["error"]["what"] == "cannot assign slot01" and c["error"]["fix"], c' \
	"$OUT/assign.json" "$OUT/assign-again.json" "$OUT/assign-refused.json"
compare assign "$top_srcdir/man/slots-admin.8" "$OUT/assign.json" "$OUT/assign-refused.json"
run release 0 "$SLOTS_ADMIN" release --json json.user
run release-again 0 "$SLOTS_ADMIN" release --json json.user
check "release --json: changed, then not" python3 -c '
import json, sys
a, b = (json.load(open(f)) for f in sys.argv[1:3])
assert a["changed"] is True and a["slot"] and a["user"] == "json.user" and a["error"] is None, a
assert b["changed"] is False and b["slot"] is None, b' "$OUT/release.json" "$OUT/release-again.json"
run release-refused 1 "$SLOTS_ADMIN" release --json --slot slot09
check "release --json outside the pool: the error, nothing changed" python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
assert d["changed"] is False and d["error"]["reason"], d' "$OUT/release-refused.json"
compare release "$top_srcdir/man/slots-admin.8" "$OUT/release.json" "$OUT/release-refused.json"

# ---- slots-provision: an image with changes and warnings, a conflict, an invalid config ----
img=$SLOTS_SCRATCH/image
mkdir -p "$img/etc/slots"
for f in passwd group shadow gshadow login.defs; do cp -p /etc/$f "$img/etc/"; done
cat >"$img/etc/slots/slots.conf" <<CONF
{"service": "$SERVICE", "slots": 2, "uid_min": $UID_MIN, "uid_max": $UID_MAX,
 "app_root": "/opt/not-installed", "launcher": "run", "docs_root": "/docs", "shared_dirs": ["shared"]}
CONF
# The attack: a file the service made in a shared folder, named with a byte that is not
# UTF-8 and a terminal escape, hard-linked so provisioning warns about it by name.  JSON
# cannot carry the byte: the warning must still be there, with the byte as \xff.
mkdir -p "$img/docs/shared"
bad=$(printf '%s/docs/shared/bad\377\033[31mname' "$img")
echo x >"$bad" && ln "$bad" "$img/docs/shared/link"
chown -R $SERVICE:$SERVICE "$img/docs"
run provision-dry 0 "$SLOTS_PROVISION" --root "$img" --dry-run --json
run provision 0 "$SLOTS_PROVISION" --root "$img" --json
check "the image run reports changes and a warning with a fix" python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
assert d["changed"] and d["count"] == len(d["changes"]) > 0 and d["error"] is None, d
assert [w for w in d["warnings"] if w["fix"]], d' "$OUT/provision.json"
check "a name that is not UTF-8 keeps its warning, the byte as \\xff, the escape exact" python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
assert [w for w in d["warnings"] if w["object"].endswith("/shared/bad\\xff\x1b[31mname")], d["warnings"]' \
	"$OUT/provision.json"
# --changed-exit: N only when something changed (or would); 0 for nothing; bad N is a usage error.
run provision-again 0 "$SLOTS_PROVISION" --root "$img" --json --changed-exit 3
check "a second run counts 0 changes" grep -q '"count": 0' "$OUT/provision-again.json"
rm -rf "$img/var/lib/slots"
run changed-dry 3 "$SLOTS_PROVISION" --root "$img" --dry-run --changed-exit 3
run changed-max 125 "$SLOTS_PROVISION" --root "$img" --dry-run --json --changed-exit 125
for n in 0 1 2 126 -3 3x ""; do
	check_exit "--changed-exit '$n' is a usage error" 2 "$SLOTS_PROVISION" --root "$img" --dry-run \
		--changed-exit "$n" 2>/dev/null
done
# A slot name held by an account of another uid: a conflict, refused.
conflict=$SLOTS_SCRATCH/conflict
mkdir -p "$conflict/etc/slots"
for f in passwd group shadow gshadow login.defs; do cp -p /etc/$f "$conflict/etc/"; done
cp "$img/etc/slots/slots.conf" "$conflict/etc/slots/"
sed -i '/^slot0[12]:/d' "$conflict/etc/passwd" "$conflict/etc/group" "$conflict/etc/shadow" "$conflict/etc/gshadow"
echo "slot01:x:4242:4242::/home/slot01:/bin/sh" >>"$conflict/etc/passwd"
run provision-conflict 1 "$SLOTS_PROVISION" --root "$conflict" --json
check "the conflict is reported" python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
assert d["conflicts"] and d["error"]["what"] == "refused" and not d["changed"], d' "$OUT/provision-conflict.json"
printf '{"service": "%s",\n "slots": "eight"}\n' "$SERVICE" >"$SLOTS_SCRATCH/bad.conf"
run provision-invalid 2 "$SLOTS_PROVISION" --dry-run --config "$SLOTS_SCRATCH/bad.conf" --json
check "the invalid config names its line" python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
assert d["error"]["line"] == 2 and d["error"]["column"], d' "$OUT/provision-invalid.json"
compare provision "$top_srcdir/man/slots-provision.8" "$OUT/provision-dry.json" "$OUT/provision.json" \
	"$OUT/provision-conflict.json" "$OUT/provision-invalid.json"

slots_done
