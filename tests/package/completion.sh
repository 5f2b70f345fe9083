#!/bin/sh
# Bash completion of slots-admin and slots-provision in a real bash: bash-completion loads
# the files from a completions folder on first use (complete -p shows them), then each
# row of the table below sets COMP_WORDS/COMP_CWORD and calls the completion function.
# The pool's slots come from the config, the users from the real "slots-admin status" of a
# fixture host (root, in a private namespace).
. "$top_srcdir/tests/integration/lib.sh"
bc=/usr/share/bash-completion/bash_completion
[ -r "$bc" ] || { echo "SKIP: bash-completion is not installed ($bc)"; exit 77; }
command -v bash >/dev/null || { echo "SKIP: bash is not installed"; exit 77; }
slots_need_root
slots_enter_namespace "$@"
. "$top_srcdir/tests/integration/check-lib.sh"

check_fixture
python3 - "$TABLE" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
d["slots"]["slot07"] = {"cleanup": "pending", "released": "2026-10-02T10:00:00Z"}
json.dump(d, open(sys.argv[1], "w"), indent=2)
PY
# A second config with a pool of 3 (for --config).
sed 's/"slots": 8/"slots": 3/' "$CONF" >"$SLOTS_SCRATCH/three.conf"
mkdir -p "$SLOTS_SCRATCH/bc/completions" "$SLOTS_SCRATCH/dir1" "$SLOTS_SCRATCH/dir2"
cp "$top_srcdir/data/bash-completion/slots-admin" "$top_srcdir/data/bash-completion/slots-provision" \
	"$SLOTS_SCRATCH/bc/completions/"

POOL="slot01 slot02 slot03 slot04 slot05 slot06 slot07 slot08"
# The fixture holds slot01, slot03 and slot05; slot07 is made pending below.
HELD="slot01 slot03 slot05 slot07"
FREE="slot02 slot04 slot06 slot08"
USERS_SORTED=$(printf '%s\n' $USERS | LC_ALL=C sort | tr '\n' ' ' | sed 's/ $//')
# Each row: the words before the one to complete | the word to complete (may be empty) |
# what it completes to (sorted, space-separated; empty for nothing).
S=$SLOTS_SCRATCH
cat >"$OUT/table" <<ROWS
slots-admin||assign check release status
slots-admin|st|status
slots-admin|-|--config --help --version
slots-admin|--ver|--version
slots-admin status|-|--config --json
slots-admin check|-|--config --format --json --output --timeout
slots-admin check --format||json nagios prometheus text
slots-admin check --format|na|nagios
slots-admin check --output|$S/thr|$S/three.conf
slots-admin release|-|--config --dry-run --json --slot
slots-admin assign|-|--config --dry-run --json
slots-admin status||$(printf '%s\n' $USERS $POOL | LC_ALL=C sort | tr '\n' ' ' | sed 's/ $//')
slots-admin status|slot0|$POOL
slots-admin status|slot03|slot03
slots-admin status|bob|$USER_B
slots-admin status $USER_B||
slots-admin release||$USERS_SORTED
slots-admin release|C_|$USER_C
slots-admin release|slot|
slots-admin release --slot||$HELD
slots-admin release --slot|slot0|$HELD
slots-admin release --slot slot01||
slots-admin assign||
slots-admin assign newuser||$FREE
slots-admin assign --dry-run newuser||$FREE
slots-admin release --dry-run||$USERS_SORTED
slots-admin assign newuser slot08||
slots-admin --config $S/three.conf release --slot||slot01 slot02 slot03
slots-admin --config=$S/three.conf assign u1||slot01 slot02 slot03
slots-admin release --config $S/three.conf --slot||slot01 slot02 slot03
slots-admin --config|$S/thr|$S/three.conf
slots-admin check||
slots-admin nonsense||
slots-admin --config \$(id>$S/pwned-config) release --slot||
slots-provision|-|--changed-exit --config --dry-run --help --json --ldif --root --version
slots-provision --dry-run|--j|--json
slots-provision --root|$S/dir|$S/dir1 $S/dir2
slots-provision --config|$S/three|$S/three.conf
ROWS

# The driver: one bash for all rows; prints "complete -p" lines, then one result line a row.
cat >"$OUT/driver.bash" <<'BASH'
set -u
. /usr/share/bash-completion/bash_completion
for cmd in slots-admin slots-provision; do
	complete -p "$cmd" 2>/dev/null && echo "error: $cmd has a completion before loading"
	__load_completion "$cmd" || echo "error: bash-completion found no completion for $cmd"
	complete -p "$cmd"
done
while IFS='|' read -r before cur want; do
	read -r -a COMP_WORDS <<<"$before"
	COMP_WORDS+=("$cur")
	row="$before [$cur]"
	COMP_CWORD=$((${#COMP_WORDS[@]} - 1))
	COMP_LINE="${COMP_WORDS[*]}"
	COMP_POINT=${#COMP_LINE}
	COMPREPLY=()
	func=$(complete -p "${COMP_WORDS[0]}" | sed -n 's/.*-F \([^ ]*\) .*/\1/p')
	"$func" "${COMP_WORDS[0]}" "${COMP_WORDS[COMP_CWORD]}" "${COMP_WORDS[COMP_CWORD-1]}"
	got=$(printf '%s\n' "${COMPREPLY[@]}" | sed 's:/$::' | LC_ALL=C sort | tr '\n' ' ' | sed 's/ *$//')
	printf '%s\t%s\t%s\n' "$row" "$want" "$got"
done
BASH
PATH=$top_builddir:$PATH BASH_COMPLETION_USER_DIR=$SLOTS_SCRATCH/bc SLOTS_CONFIG= \
	bash --norc --noprofile "$OUT/driver.bash" <"$OUT/table" >"$OUT/results" 2>"$OUT/driver.err"
rc=$?
check "the driver bash ran (exit $rc)" test "$rc" = 0
check "the driver printed nothing on stderr" test ! -s "$OUT/driver.err"
sed 's/^/# /' "$OUT/driver.err"
check "complete -p slots-admin names _slots_admin" grep -qx 'complete -F _slots_admin slots-admin' "$OUT/results"
check "complete -p slots-provision names _slots_provision" \
	grep -qx 'complete -F _slots_provision slots-provision' "$OUT/results"
check "no errors from the loader" sh -c "! grep -q '^error:' '$OUT/results'"
rows=$(wc -l <"$OUT/table")
check "a result for each of the $rows rows" test "$(grep -c '	' "$OUT/results")" = "$rows"
tab=$(printf '\t')
grep "$tab" "$OUT/results" | while IFS="$tab" read -r row want got; do
	if [ "$want" = "$got" ]; then echo "ok - $row -> ${got:-(nothing)}"; else echo "not ok - $row -> '$got', want '$want'"; fi
done >"$OUT/rows"
cat "$OUT/rows"
slots_passed=$((slots_passed + $(grep -c '^ok' "$OUT/rows")))
slots_failed=$((slots_failed + $(grep -c '^not ok' "$OUT/rows")))
check "a config path typed as \$(...) is never run" test ! -e "$S/pwned-config"

# The attack: a user id that would run a command if compgen -W expanded it.  The table
# parser refuses such an id, status fails, and nothing is offered or run.
cp -p "$TABLE" "$OUT/table.good"
printf '{\n  "slots": {"slot02": {"since": "2026-10-01T09:12:00Z", "user": "$(id>%s/pwned)"}},\n  "version": 1\n}\n' \
	"$S" >"$TABLE"
check_exit "status refuses the table with that id" 2 sh -c "'$SLOTS_ADMIN' status >/dev/null 2>&1"
printf 'slots-admin release||\nslots-admin status|s|slot01 slot02 slot03 slot04 slot05 slot06 slot07 slot08\n' |
	PATH=$top_builddir:$PATH BASH_COMPLETION_USER_DIR=$SLOTS_SCRATCH/bc SLOTS_CONFIG= \
	bash --norc --noprofile "$OUT/driver.bash" >"$OUT/hostile" 2>&1
check "with that table release offers nothing, status only the pool" sh -c \
	"grep '	' '$OUT/hostile' | awk -F '	' '\$2 != \$3 { bad = 1 } END { exit bad }' && test \$(grep -c '	' '$OUT/hostile') = 2"
check "and the id's command never ran" test ! -e "$S/pwned"
cp -p "$OUT/table.good" "$TABLE"

# Completing "sudo slots-admin ..." runs as the admin, who may not read the table: no
# error noise, no users, the whole pool for a slot (the table is root:<service> 0640).
cp "$OUT/driver.bash" "$S/driver.bash"
chmod 0644 "$S/driver.bash"
printf 'slots-admin release||\nslots-admin assign newuser||%s\nslots-admin release --slot|slot0|%s\n' \
	"$POOL" "$POOL" >"$S/unprivileged.table"
chmod 0644 "$S/unprivileged.table"
runuser -u slot04 -- env PATH="$top_builddir:$PATH" BASH_COMPLETION_USER_DIR="$S/bc" SLOTS_CONFIG= \
	bash --norc --noprofile "$S/driver.bash" <"$S/unprivileged.table" >"$OUT/unprivileged" 2>"$OUT/unprivileged.err"
check "as an account that cannot read the table: nothing on stderr" test ! -s "$OUT/unprivileged.err"
check "and the rows hold: no users, the pool for slots" sh -c \
	"grep '	' '$OUT/unprivileged' | awk -F '	' '\$2 != \$3 { bad = 1 } END { exit bad }' && test \$(grep -c '	' '$OUT/unprivileged') = 3"
sed 's/^/# /' "$OUT/unprivileged.err"
slots_done
