#!/bin/sh
# The slot's own lock, deterministically (issue 19: release-lock.sh races two releases and
# did not notice a release that skips the lock): while another holder has byte N of the
# table's lock file (slot N), a release of slot N waits -- the slot keeps its user, the home
# keeps its files -- and finishes once the lock is free.  An assign of another slot does not
# wait for it.
. "$top_srcdir/tests/integration/release-lib.sh"
command -v python3 >/dev/null || { echo "SKIP: python3 is not installed (it holds the lock)"; exit 77; }

HOME1=$SROOT/home/slot01
LOCK=$TABLE.lock

check "assign bob slot01" prints slot01 admin assign bob slot01
runuser -u slot01 -- sh -c "echo secret >$HOME1/.history"
check "the lock file exists after the assign" test -f "$LOCK"

# Another holder of slot01's byte (a POSIX record lock conflicts with release's OFD lock).
python3 - "$LOCK" 1 "$S/held" "$S/free" <<'PY' &
import fcntl, os, sys, time
fd = os.open(sys.argv[1], os.O_RDWR)
fcntl.lockf(fd, fcntl.LOCK_EX, 1, int(sys.argv[2]))
open(sys.argv[3], "w").close()
for _ in range(1200):
    if os.path.exists(sys.argv[4]):
        break
    time.sleep(0.05)
PY
holder=$!
i=0
while [ ! -e "$S/held" ] && [ $i -lt 200 ]; do sleep 0.05; i=$((i + 1)); done
check "the other holder has slot01's lock" test -e "$S/held"

timeout 120 "$SLOTS_ADMIN" --config "$CONF" release bob >"$S/rel.out" 2>"$S/rel.err" &
rel=$!
sleep 1.5
check "release bob still waits for slot01's lock" kill -0 "$rel"
table_entry slot01 >"$S/entry"
check "slot01 still holds bob while the release waits" json_ok '.user == "bob"' "$S/entry"
check "the home still holds bob's file while the release waits" test -s "$HOME1/.history"
check "assign carol slot02 does not wait for slot01's lock" prints slot02 timeout 10 "$SLOTS_ADMIN" --config "$CONF" assign carol slot02

touch "$S/free"
wait "$holder"
wait "$rel"
st=$?
cat "$S/rel.out" "$S/rel.err"
check "release bob exits 0 once the lock is free" test "$st" = 0
check "and says slot01 released" grep -qx "slot01 released" "$S/rel.out"
check "the home is empty" test -z "$(ls -A "$HOME1")"
check "slot01 is free" slot_is_free slot01
slots_done
