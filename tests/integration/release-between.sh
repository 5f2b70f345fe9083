#!/bin/sh
# A release writes the table twice: step 1 marks the slot pending (the user leaves), step 5
# reads the table again under its lock and saves it without the entry, so the table alone says
# the slot is free; nothing but its lock and index lies beside it.  Another admin writes the
# table between the two steps: the release is stopped (faultshim) just before step 5 takes the
# table lock, an assign and a release of other slots run, and their changes stay.
RELEASE_POOL=3
. "$top_srcdir/tests/integration/release-lib.sh"
SHIM=$top_builddir/tests/fault/.libs/faultshim.so
[ -f "$SHIM" ] || { echo "SKIP: $SHIM is not built"; exit 77; }

# reads_of LOG: the read() calls logged on the table file itself (not its temp, index or lock).
reads_of() {
	grep -c ' read /etc/slots/slots.json$' "$1" || true
}

# --- the table locks a release takes: once in step 1, once in step 5 ---
check "assign bob slot01" prints slot01 admin assign bob slot01
LD_PRELOAD=$SHIM FAULT_PROG=slots-admin FAULT_CALLS=flock FAULT_LOG=$S/flocks \
	"$SLOTS_ADMIN" --config "$CONF" release bob >"$S/out" 2>"$S/err"
check "release bob exits 0 under the shim" test $? = 0
check "release takes the table lock twice (steps 1 and 5)" \
	test "$(grep -c ' flock /etc/slots/slots.json.lock$' "$S/flocks")" = 2

# --- two writes of the table (two renames), two reads (each as many read calls as status makes) ---
LD_PRELOAD=$SHIM FAULT_PROG=slots-admin FAULT_CALLS=read FAULT_LOG=$S/status-reads \
	"$SLOTS_ADMIN" --config "$CONF" status >/dev/null 2>&1
one=$(reads_of "$S/status-reads")
check "status reads the table (read calls: $one)" test "$one" -gt 0
check "assign bob slot01 again" prints slot01 admin assign bob slot01
LD_PRELOAD=$SHIM FAULT_PROG=slots-admin FAULT_CALLS=read,rename,renameat,renameat2 FAULT_LOG=$S/reads \
	"$SLOTS_ADMIN" --config "$CONF" release bob >"$S/out" 2>"$S/err"
check "release bob exits 0" test $? = 0
check "release reads the table twice, as often each time as status ($one)" \
	test "$(reads_of "$S/reads")" = "$((2 * one))"
check "release renames a new table into place twice (steps 1 and 5)" \
	test "$(grep -Ec ' rename(at2?)? ([^ ]*/)?slots\.json$' "$S/reads")" = 2
check "the table itself has no entry for slot01" test "$(table_entry slot01)" = null
check "nothing but the table, its lock and its index is beside it" \
	test "$(ls -A /etc/slots | grep 'slots\.json' | grep -vxE 'slots\.json(\.lock|\.index)?' | wc -l)" = 0
check "assign bob slot01 at once: the slot is free" prints slot01 admin assign bob slot01

# --- another admin writes the table while the release is stopped before step 5 ---
check "assign carol slot02" prints slot02 admin assign carol slot02
LD_PRELOAD=$SHIM FAULT_PROG=slots-admin FAULT_CALLS=flock FAULT_AT=2 FAULT_ACTION=stop \
	"$SLOTS_ADMIN" --config "$CONF" release bob >"$S/out" 2>"$S/err" &
rel=$!
i=0
while [ "$(awk '{ print $3 }' "/proc/$rel/stat" 2>/dev/null)" != T ] && [ $i -lt 500 ]; do
	sleep 0.02
	i=$((i + 1))
done
check "the release stops before step 5" test "$(awk '{ print $3 }' "/proc/$rel/stat")" = T
table_entry slot01 >"$S/entry"
check "step 1 left slot01 pending" json_ok '(has("user") | not) and .cleanup == "pending"' "$S/entry"
check "meanwhile: assign dave slot03" prints slot03 timeout 30 "$SLOTS_ADMIN" --config "$CONF" assign dave slot03
check "meanwhile: release carol" quiet timeout 30 "$SLOTS_ADMIN" --config "$CONF" release carol
kill -CONT "$rel"
wait "$rel"
st=$?
cat "$S/out" "$S/err"
check "release bob exits 0 after the others' writes" test "$st" = 0
check "and says slot01 released" grep -qx "slot01 released" "$S/out"
check "slot01 is free in the table itself" test "$(table_entry slot01)" = null
table_entry slot03 >"$S/entry"
check "dave's assign stays: slot03 holds dave" json_ok '.user == "dave"' "$S/entry"
check "carol's release stays: slot02 is free" slot_is_free slot02
admin status --json >"$S/status.json"
check "status --json agrees: one slot assigned, none pending" \
	json_ok '.assigned == 1 and .pending == 0' "$S/status.json"

# --- the table made a symlink while the release is stopped before step 5: refused, pending ---
check "assign erin slot02" prints slot02 admin assign erin slot02
LD_PRELOAD=$SHIM FAULT_PROG=slots-admin FAULT_CALLS=flock FAULT_AT=2 FAULT_ACTION=stop \
	"$SLOTS_ADMIN" --config "$CONF" release erin >"$S/out" 2>"$S/err" &
rel=$!
wait_for sh -c 'test "$(awk "{ print \$3 }" /proc/$1/stat)" = T' _ "$rel"
check "the release stops before step 5" test "$(awk '{ print $3 }' "/proc/$rel/stat")" = T
cp -p "$TABLE" "$TABLE.real"
ln -s slots.json.real "$TABLE.link"
mv -T "$TABLE.link" "$TABLE"
kill -CONT "$rel"
wait "$rel"
st=$?
cat "$S/err"
check "step 5 with the table a symlink: exit 1" test "$st" = 1
check "the message names the table, a symlink" grep -q "slots.json.*symlink" "$S/err"
check "the symlink's target was not written: slot02 pending there" \
	json_ok '.cleanup == "pending"' "$(jq -c '.slots.slot02' "$TABLE.real" >"$S/entry"; echo "$S/entry")"
mv -T "$TABLE.real" "$TABLE"
check "slot02 stays pending" json_ok '.cleanup == "pending"' "$(table_entry slot02 >"$S/entry"; echo "$S/entry")"
check "release --slot slot02 finishes it" prints "slot02 released" admin release --slot slot02
check "slot02 is free" slot_is_free slot02
slots_done
