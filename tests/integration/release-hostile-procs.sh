#!/bin/sh
# Ending a hostile holder's processes (issue 12): each attack runs as the slot (runuser -u
# slot01) and fights the release; release must end every process of slot01 within its bound,
# never signal another account's process, and leave the next holder nothing running.
# Bounded: every release runs under timeout(1), the fork bomb stays within RLIMIT_NPROC.
RELEASE_UID_MIN=47700
. "$top_srcdir/tests/integration/release-lib.sh"

U1=$(uid_of slot01)
U2=$(uid_of slot02)
NPROC=64
as1() {
	runuser -u slot01 -- "$@"
}

# attack NAME MIN COMMAND: slot01 starts COMMAND and runs at least MIN processes before the release
ATTACKS='
kill-spinner    1 sh -c "while :; do kill -KILL -1 2>/dev/null; done"
cont-spinner    1 sh -c "while :; do kill -CONT -1 2>/dev/null; done"
fork-bomb       16 prlimit --nproc=NPROC sh -c "while :; do (while :; do :; done) & done"
setsid-ignorer  1 setsid sh -c "trap \"\" TERM HUP INT QUIT USR1; while :; do sleep 1; done"
user-namespace  3 unshare --user --map-root-user --pid --mount --fork --mount-proc sh -c "sleep 1000 & sleep 1000"
'

# procs_at_least UID N: the uid runs at least N processes.
procs_at_least() {
	[ "$(procs_of "$1")" -ge "$2" ]
}

# release_case NAME COMMAND...: start the attack, release, and check the result.
release_case() {
	name=$1
	shift
	check "assign alice slot01 ($name)" prints slot01 admin assign alice slot01
	as1 "$@" >/dev/null 2>&1 &
	wait_for procs_at_least "$U1" "$min"
	n=$(procs_of "$U1")
	echo "# $name: $n processes of slot01 before the release"
	check "$name: slot01 runs processes before the release" test "$n" -ge "$min"
	t0=$(date +%s%N)
	timeout 60 "$SLOTS_ADMIN" --config "$CONF" release alice >"$S/out" 2>"$S/err"
	st=$?
	t1=$(date +%s%N)
	cat "$S/err"
	echo "# $name: release took $(( (t1 - t0) / 1000000 )) ms"
	check "$name: release exits 0" test "$st" = 0
	check "$name: it says slot01 released" grep -q "slot01 released" "$S/out"
	check "$name: it printed no error" test ! -s "$S/err"
	check "$name: no process of slot01 is left" test "$(procs_of "$U1")" = 0
	check "$name: slot02's process was never signalled" kill -0 "$bystander"
	check "$name: slot01 is free" slot_is_free slot01
}

check "assign bob slot02" prints slot02 admin assign bob slot02
runuser -u slot02 -- sleep 100000 &
wait_for pgrep -u "$U2" -x sleep >/dev/null
bystander=$(pgrep -u "$U2" -x sleep | head -n 1)
check "slot02 runs a process (the bystander)" test -n "$bystander"

echo "$ATTACKS" | grep . >"$S/cases"
while read -r name min cmd; do
	cmd=$(echo "$cmd" | sed "s/NPROC/$NPROC/")
	eval "release_case $name $cmd"
done <"$S/cases"

# A root parent that suspends itself when its command (slot01's) stops, as sudo without a pty
# does: release stops the command, then kills it; the parent must not stay stopped for good
# (its caller would wait forever), so release continues it and it reaps the command and ends.
check "assign alice slot01 (root parent)" prints slot01 admin assign alice slot01
cat >"$S/parent.py" <<'PY'
import os, signal, sys
uid, gid, done = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
pid = os.fork()
if pid == 0:
    os.setgroups([])
    os.setgid(gid)
    os.setuid(uid)
    os.execvp("sleep", ["sleep", "100000"])
while True:
    _, st = os.waitpid(pid, os.WUNTRACED)
    if os.WIFSTOPPED(st):
        os.kill(os.getpid(), signal.SIGSTOP)
        os.kill(pid, signal.SIGCONT)
        continue
    open(done, "w").close()
    sys.exit(0)
PY
if command -v python3 >/dev/null; then
	python3 "$S/parent.py" "$U1" "$(gid_of slot01)" "$S/parent-done" &
	parent=$!
	wait_for procs_at_least "$U1" 1
	check "root parent: release exits 0" prints "slot01 released" timeout 60 "$SLOTS_ADMIN" --config "$CONF" release alice
	wait_for test -e "$S/parent-done"
	check "root parent: it went on, reaped the killed command and ended" test -e "$S/parent-done"
	kill -CONT "$parent" 2>/dev/null
	wait "$parent"
else
	echo "# root parent case not run: python3 is not installed"
fi

# a fork bomb of the next holder: RLIMIT_NPROC shows it was really bounded
check "the pool is usable after all the attacks" prints slot01 admin assign carol slot01
check "the next holder of slot01 runs nothing of the previous ones" test "$(procs_of "$U1")" = 0
slots_done
