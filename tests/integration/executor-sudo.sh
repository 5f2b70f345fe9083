#!/bin/sh
# The platform's run_as_user executor, end to end with the real sudo on a host that
# slots-provision set up (in a private namespace).  As the service account it replays,
# character for character, the three command lines it runs:
#   sudo -n -u slotNN true
#   sudo -n -u slotNN [-g RUN_AS_GROUP] --preserve-env=LIST -- [SLOTCTL] LAUNCHER ARGS...
#   sudo -n -u slotNN kill -s SIGNAL -- -PGID
# and checks that everything else the drop-in must not allow is refused.
set -u
. "$top_srcdir/tests/integration/lib.sh"
slots_need_root
command -v sudo >/dev/null 2>&1 || { echo "SKIP: sudo not installed"; exit 77; }
command -v visudo >/dev/null 2>&1 || { echo "SKIP: visudo not installed"; exit 77; }
command -v useradd >/dev/null 2>&1 || { echo "SKIP: useradd not installed"; exit 77; }
slots_enter_namespace "$@"
if [ -z "${SLOTS_IN_NAMESPACE:-}" ] || ! findmnt -n -o SOURCE /etc | grep -q 'slots-etc\.'; then
	echo "FAIL: /etc is not the namespace's copy; refusing to touch it"
	exit 99
fi

SVC=execsvc
GRP=execagents
CONF=/etc/slots/slots.conf
APP=$SLOTS_SCRATCH/app
REL=$APP/releases/r1
LAUNCH=$REL/bin/launch
CURRENT=$APP/current/bin/launch
SLOTCTL=$APP/slotctl
OUT=$SLOTS_SCRATCH/out
# The executor's allowlist as the platform passes it (19 names).
LIST=PATH,LANG,LC_ALL,TERM,TZ,TMPDIR,HOME,GOCACHE,GOMODCACHE,GOFLAGS,GOTOOLCHAIN,GOPROXY,GONOSUMDB,GOPRIVATE,NODE_OPTIONS,PILOT_EXECUTOR,CLAUDE_CONFIG_DIR,ANTHROPIC_API_KEY,ANTHROPIC_BASE_URL
mkdir -p "$OUT" /etc/slots

# A free id range for the pool.
for base in 7300 17300 27300; do
	taken=
	i=$base
	while [ $i -le $((base + 20)) ]; do
		if getent passwd $i >/dev/null || getent group $i >/dev/null; then taken=1; break; fi
		i=$((i + 1))
	done
	[ -z "$taken" ] && break
done
[ -z "$taken" ] || { echo "SKIP: no free uid range"; exit 77; }

useradd -r -l -M -U -s /bin/sh "$SVC" || { echo "FAIL: useradd $SVC"; exit 1; }
useradd -r -l -M -U -s /bin/sh appuser || { echo "FAIL: useradd appuser"; exit 1; }
# slot03 exists but is outside the pool of 2.
useradd -r -l -M -U -s /usr/sbin/nologin slot03 || { echo "FAIL: useradd slot03"; exit 1; }

# The app: one release whose launcher reports who it runs as and what it got, then runs its
# arguments; current points at it; slotctl runs its arguments after saying so.
install -d -m 0755 -o "$SVC" -g "$SVC" "$APP"
install -d -m 0711 -o root -g root "$APP/releases"
install -d -m 0755 -o "$SVC" -g "$SVC" "$REL" "$REL/bin"
cat >"$LAUNCH" <<'EOF'
#!/bin/sh
echo "id $(id -un) $(id -gn)"
env | sed -n 's/^/env /p'
[ $# -gt 0 ] && exec "$@"
exit 0
EOF
cat >"$SLOTCTL" <<'EOF'
#!/bin/sh
echo "slotctl as $(id -un)"
exec "$@"
EOF
chown "$SVC:$SVC" "$LAUNCH" "$SLOTCTL"
chmod 0755 "$LAUNCH" "$SLOTCTL"
cp "$LAUNCH" "$REL/bin/other"
chmod 0755 "$REL/bin/other"
ln -s releases/r1 "$APP/current"

write_config() {
	cat >"$CONF" <<EOF
{
  "service": "$SVC",
  "slots": 2,
  "uid_min": $base,
  "uid_max": $((base + 20)),
  "app_root": "$APP",
  "launcher": "launch",
  "run_as_group": "$GRP"$1
}
EOF
	chmod 0644 "$CONF"
}
write_config ""
"$SLOTS_PROVISION" --config "$CONF" >"$OUT/prov.out" 2>&1
check "slots-provision sets the host up" grep -q "write sudoers drop-in" "$OUT/prov.out"
check "a second run changes nothing" sh -c 'out=$("$1" --config "$2") && printf "%s\n" "$out" | grep -qx "0 changes"' - "$SLOTS_PROVISION" "$CONF"
check "provision created $GRP" grep -q "create group $GRP" "$OUT/prov.out"
check "$SVC is a member of $GRP" sh -c "getent group $GRP | grep -q ':$SVC\$'"
check "the drop-in passes visudo" visudo -cqf "/etc/sudoers.d/slots-$SVC"

# What the executor's process has: the allowlisted names set, and one name outside the list.
as_svc() {
	runuser -u "$SVC" -- env -i PATH=/usr/local/bin:/usr/bin:/bin:/opt/exec-path LANG=C.UTF-8 LC_ALL=C.UTF-8 \
		TERM=xterm-256color TZ=UTC TMPDIR=/tmp/exec-tmp HOME=/var/lib/slots/$SVC/home/slot01 \
		GOCACHE=/tmp/gocache GOMODCACHE=/tmp/gomod GOFLAGS=-mod=mod GOTOOLCHAIN=local \
		GOPROXY=https://proxy.golang.org GONOSUMDB=example.com GOPRIVATE=example.com/private \
		NODE_OPTIONS=--max-old-space-size=512 PILOT_EXECUTOR=run_as_user \
		CLAUDE_CONFIG_DIR=/var/lib/slots/$SVC/home/slot01/.claude ANTHROPIC_API_KEY=sk-test-1 \
		ANTHROPIC_BASE_URL=https://api.example.com NOT_LISTED=leaked LD_LIBRARY_PATH=/tmp/evil BASH_ENV=/tmp/evil "$@"
}

# 1. The preflight, within 5 s.
check "preflight: sudo -n -u slot01 true" as_svc timeout 5 sudo -n -u slot01 true
check "preflight: slot02 too" as_svc timeout 5 sudo -n -u slot02 true

# 2. The launcher with the whole allowlist.
as_svc sudo -n -u slot01 --preserve-env=$LIST -- "$LAUNCH" >"$OUT/run.out" 2>"$OUT/run.err"
check_exit "run: the executor's command line is accepted" 0 test -s "$OUT/run.out"
check "run: it ran as slot01" grep -qx "id slot01 slot01" "$OUT/run.out"
while read -r name value; do
	check "run: $name arrives in the launcher" grep -qxF "env $name=$value" "$OUT/run.out"
done <<EOF
PATH /usr/local/bin:/usr/bin:/bin:/opt/exec-path
LANG C.UTF-8
LC_ALL C.UTF-8
TERM xterm-256color
TZ UTC
HOME /var/lib/slots/$SVC/home/slot01
GOCACHE /tmp/gocache
GOMODCACHE /tmp/gomod
GOFLAGS -mod=mod
GOTOOLCHAIN local
GOPROXY https://proxy.golang.org
GONOSUMDB example.com
GOPRIVATE example.com/private
NODE_OPTIONS --max-old-space-size=512
PILOT_EXECUTOR run_as_user
CLAUDE_CONFIG_DIR /var/lib/slots/$SVC/home/slot01/.claude
ANTHROPIC_API_KEY sk-test-1
ANTHROPIC_BASE_URL https://api.example.com
EOF
check_fails "run: a name outside the list does not arrive" grep -q "NOT_LISTED\|LD_LIBRARY_PATH\|BASH_ENV" "$OUT/run.out"
# glibc removes TMPDIR (like LD_*, TZDIR, LOCALDOMAIN) from the environment of a
# set-user-ID program before sudo runs, so sudo never sees it: the name is accepted
# in --preserve-env but passes nothing.  The launcher sets TMPDIR itself.
check_fails "run: TMPDIR cannot arrive (glibc drops it for set-user-ID sudo)" grep -q "^env TMPDIR=" "$OUT/run.out"
# HOME: the slot's own unless the caller lists it.  The executor's process has its own HOME;
# a run whose --preserve-env leaves HOME out must not get it (always_set_home).
NOHOME=$(echo "$LIST" | tr ',' '\n' | grep -vx HOME | paste -sd, -)
runuser -u "$SVC" -- env -i PATH=/usr/bin:/bin HOME=/var/lib/daemon-home LANG=C.UTF-8 \
	sudo -n -u slot01 --preserve-env=$NOHOME -- "$LAUNCH" >"$OUT/nohome.out" 2>&1
check "HOME not listed: the slot gets its own home, not the caller's" \
	grep -qx "env HOME=/var/lib/slots/$SVC/home/slot01" "$OUT/nohome.out"
runuser -u "$SVC" -- env -i PATH=/usr/bin:/bin HOME=/var/lib/daemon-home LANG=C.UTF-8 \
	sudo -n -u slot01 --preserve-env=$LIST -- "$LAUNCH" >"$OUT/home.out" 2>&1
check "HOME listed: the caller's HOME arrives" grep -qx "env HOME=/var/lib/daemon-home" "$OUT/home.out"
as_svc sudo -n -u slot01 --preserve-env=$LIST -- "$CURRENT" >"$OUT/cur.out" 2>&1
check "run: the launcher through current is accepted" grep -qx "id slot01 slot01" "$OUT/cur.out"

# 3. -g run_as_group, and a guard file the service made for the run.
as_svc sudo -n -u slot01 -g $GRP --preserve-env=$LIST -- "$LAUNCH" >"$OUT/g.out" 2>&1
sed -n "1,2s/^/# /p" "$OUT/g.out"
check "-g $GRP: the process has the group" grep -qx "id slot01 $GRP" "$OUT/g.out"
install -d -m 0755 -o "$SVC" -g "$GRP" "$SLOTS_SCRATCH/guard"
echo "guard-content" >"$SLOTS_SCRATCH/guard/file"
chown "$SVC:$GRP" "$SLOTS_SCRATCH/guard/file"
chmod 0640 "$SLOTS_SCRATCH/guard/file"
got=$(as_svc sudo -n -u slot01 -g $GRP --preserve-env=$LIST -- "$LAUNCH" /bin/cat "$SLOTS_SCRATCH/guard/file" 2>&1)
check "-g $GRP: the agent reads the guard file" sh -c 'printf "%s\n" "$1" | grep -qx guard-content' - "$got"
got=$(as_svc sudo -n -u slot01 --preserve-env=$LIST -- "$LAUNCH" /bin/cat "$SLOTS_SCRATCH/guard/file" 2>&1)
check "without -g: a slot cannot read the guard file" sh -c 'printf "%s\n" "$1" | grep -q "Permission denied"' - "$got"
check_fails "without -g: the content does not leak" sh -c 'printf "%s\n" "$1" | grep -q guard-content' - "$got"

# 4. The kill: the service starts a run in its own process group, as the platform does,
# and ends it through sudo within 5 s.
runuser -u "$SVC" -- setsid sudo -n -u slot01 -- "$LAUNCH" /bin/sh -c 'sleep 300 & sleep 300' \
	>"$OUT/kill.out" 2>&1 &
i=0
pgid=
while [ $i -lt 50 ] && [ -z "$pgid" ]; do
	pgid=$(ps -o pgid= -u slot01 | awk 'NR==1 {print $1}')
	[ -n "$pgid" ] || sleep 0.1
	i=$((i + 1))
done
check "kill: the run's processes are up (pgid ${pgid:-none})" test -n "$pgid"
if [ -n "$pgid" ]; then
	check "kill: sudo -n -u slot01 kill -s TERM -- -$pgid" as_svc timeout 5 sudo -n -u slot01 kill -s TERM -- -$pgid
	i=0
	while [ $i -lt 50 ] && ps -o pid= -g "$pgid" >/dev/null 2>&1; do sleep 0.1; i=$((i + 1)); done
	check "kill: the process group is gone within 5 s" sh -c "! ps -o pid= -g $pgid >/dev/null 2>&1"
fi
wait

# 4b. The kill from a terminal, under Debian's "Defaults use_pty": the service's shell on a
# pseudo-terminal (script) starts the run as a job of its own process group, as the executor
# does, and ends it with the same kill.  With use_pty on these commands sudo would run the
# command in a session of its own on a new pty: the job's group would hold only root's sudo,
# the kill as slot01 would get EPERM and the run would live on; the drop-in turns it off.
grep -q '^Defaults[[:space:]]*use_pty' /etc/sudoers || echo 'Defaults use_pty' >>/etc/sudoers
check "the namespace's sudoers has Debian's Defaults use_pty" grep -q '^Defaults[[:space:]]*use_pty' /etc/sudoers
cat >"$OUT/tty-kill.sh" <<TTY
set -m
tty >/dev/null && echo TTY
sudo -n -u slot01 true && echo PREFLIGHT
sudo -n -u slot01 -- "$LAUNCH" /bin/sh -c 'sleep 300 & sleep 300' </dev/null >/dev/null 2>&1 &
pg=\$!
i=0
while [ \$i -lt 50 ] && [ "\$(ps -o pid= -u slot01 | wc -l)" -lt 2 ]; do sleep 0.1; i=\$((i + 1)); done
ps -o pgid= -u slot01 | grep -qw "\$pg" && echo INGROUP
sudo -n -u slot01 kill -s TERM -- -\$pg && echo KILLED
i=0
while [ \$i -lt 50 ] && ps -o pid= -u slot01 >/dev/null 2>&1; do sleep 0.1; i=\$((i + 1)); done
ps -o pid= -u slot01 >/dev/null 2>&1 && echo ALIVE || echo GONE
TTY
chmod 0644 "$OUT/tty-kill.sh"
# tty_kill NAME: the case above as the service on a terminal; its lines in $OUT/NAME.out.
tty_kill() {
	runuser -u "$SVC" -- script -qec "sh $OUT/tty-kill.sh" /dev/null </dev/null 2>&1 | tr -d '\r' >"$OUT/$1.out"
	pkill -KILL -u slot01 2>/dev/null
	sed 's/^/# /' "$OUT/$1.out"
}
if command -v script >/dev/null 2>&1; then
	tty_kill tty
	check "terminal: the service's shell has a controlling terminal" grep -qx TTY "$OUT/tty.out"
	check "terminal: the preflight passes" grep -qx PREFLIGHT "$OUT/tty.out"
	check "terminal: the run's command stays in the job's process group" grep -qx INGROUP "$OUT/tty.out"
	check "terminal: sudo -n -u slot01 kill -s TERM -- -PGID exits 0" grep -qx KILLED "$OUT/tty.out"
	check "terminal: the process group is gone within 5 s" grep -qx GONE "$OUT/tty.out"
	# The same drop-in without !use_pty: the command leaves the group, the kill cannot end it.
	d=/etc/sudoers.d/slots-$SVC
	cp -p "$d" "$OUT/dropin.good"
	sed 's/, !use_pty//' "$OUT/dropin.good" >"$d"
	check "terminal: the drop-in without !use_pty still parses" visudo -cqf "$d"
	tty_kill tty-pty
	check_fails "terminal, use_pty: the command is not in the job's group" grep -qx INGROUP "$OUT/tty-pty.out"
	check_fails "terminal, use_pty: the run outlives the kill" grep -qx GONE "$OUT/tty-pty.out"
	cat "$OUT/dropin.good" >"$d"
else
	echo "ok # SKIP the terminal cases: script(1), which makes their pseudo-terminal, is not installed"
fi

# 5. Everything else stays refused.  Each line: what, then the command run as the service.
refuses() {
	desc=$1
	shift
	rm -f /tmp/exec-ran
	as_svc timeout 10 "$@" >"$OUT/refused.out" 2>&1
	rc=$?
	if [ $rc != 0 ] && [ ! -e /tmp/exec-ran ] && ! grep -q "^id \|^slotctl as" "$OUT/refused.out"; then
		ok "refused: $desc"
	else
		not_ok "refused: $desc (exit $rc: $(head -c 300 "$OUT/refused.out"))"
	fi
}
refuses "root (no -u)" sudo -n true
refuses "root" sudo -n -u root true
refuses "root, the launcher" sudo -n -u root --preserve-env=$LIST -- "$LAUNCH"
refuses "another account" sudo -n -u appuser true
refuses "a slot outside the pool" sudo -n -u slot03 true
refuses "a slot outside the pool, the launcher" sudo -n -u slot03 -- "$LAUNCH"
refuses "another command" sudo -n -u slot01 /usr/bin/touch /tmp/exec-ran
refuses "a shell" sudo -n -u slot01 /bin/sh -c 'touch /tmp/exec-ran'
refuses "sudo -s" sudo -n -u slot01 -s
refuses "sudo -i" sudo -n -u slot01 -i
refuses "another program of the release" sudo -n -u slot01 -- "$REL/bin/other"
refuses "true with arguments" sudo -n -u slot01 true --help
refuses "kill of pid 1's group (-1: every process)" sudo -n -u slot01 kill -s TERM -- -1
refuses "kill of a pid" sudo -n -u slot01 kill -s TERM -- 1
refuses "kill with extra arguments" sudo -n -u slot01 kill -s TERM -- -2 3
refuses "kill in another form" sudo -n -u slot01 kill -9 -2
refuses "-E" sudo -n -E -u slot01 -- "$LAUNCH"
refuses "sudoedit" sudoedit -n -u slot01 /tmp/exec-ran
refuses "sudo -e" sudo -n -e -u slot01 /tmp/exec-ran
refuses "-g another group" sudo -n -u slot01 -g appuser --preserve-env=$LIST -- "$LAUNCH"
refuses "-g another slot's group" sudo -n -u slot01 -g slot02 -- "$LAUNCH"
refuses "-g the service's group" sudo -n -u slot01 -g $SVC -- "$LAUNCH"
refuses "-g for true" sudo -n -u slot01 -g $GRP true
refuses "-g without -u (the service itself)" sudo -n -g $GRP -- "$LAUNCH"
refuses "-g without -u, true" sudo -n -g $GRP true
refuses "-u the service itself" sudo -n -u $SVC -- "$LAUNCH"
refuses "a name outside sudo_env" sudo -n -u slot01 --preserve-env=$LIST,NOT_LISTED -- "$LAUNCH"
refuses "BASH_ENV" sudo -n -u slot01 --preserve-env=BASH_ENV -- "$LAUNCH"
refuses "a variable on the command line" sudo -n -u slot01 LD_PRELOAD=/tmp/evil.so -- "$LAUNCH"
refuses "--chdir" sudo -n -u slot01 --chdir=/ -- "$LAUNCH"
refuses "--preserve-env for true" sudo -n -u slot01 --preserve-env=NOT_LISTED true

# 6. The chain sudo -> slotctl -> launcher, once slotctl is configured.
write_config ",
  \"slotctl\": \"$SLOTCTL\""
"$SLOTS_PROVISION" --config "$CONF" >"$OUT/prov2.out" 2>&1
check "slots-provision rewrites the drop-in for slotctl" grep -q "write sudoers drop-in" "$OUT/prov2.out"
check "a second run changes nothing" sh -c 'out=$("$1" --config "$2") && printf "%s\n" "$out" | grep -qx "0 changes"' - "$SLOTS_PROVISION" "$CONF"
check "the new drop-in passes visudo" visudo -cqf "/etc/sudoers.d/slots-$SVC"
as_svc sudo -n -u slot01 -g $GRP --preserve-env=$LIST -- "$SLOTCTL" "$LAUNCH" a b >"$OUT/chain.out" 2>&1
check "chain: slotctl runs as slot01" grep -qx "slotctl as slot01" "$OUT/chain.out"
check "chain: the launcher runs with the group" grep -qx "id slot01 $GRP" "$OUT/chain.out"
check "chain: ANTHROPIC_API_KEY arrives" grep -qx "env ANTHROPIC_API_KEY=sk-test-1" "$OUT/chain.out"
as_svc sudo -n -u slot01 --preserve-env=$LIST -- "$SLOTCTL" "$CURRENT" >"$OUT/chain2.out" 2>&1
check "chain: through current" grep -qx "id slot01 slot01" "$OUT/chain2.out"
refuses "chain: slotctl with another program" sudo -n -u slot01 -- "$SLOTCTL" /usr/bin/touch /tmp/exec-ran
refuses "chain: slotctl with a path that leaves releases" \
	sudo -n -u slot01 -- "$SLOTCTL" "$APP/releases/../../../tmp/bin/launch"
refuses "chain: slotctl with a dot release" sudo -n -u slot01 -- "$SLOTCTL" "$APP/releases/../bin/launch"
refuses "chain: slotctl without arguments" sudo -n -u slot01 -- "$SLOTCTL"
refuses "chain: slotctl as root" sudo -n -u root -- "$SLOTCTL" "$LAUNCH"
refuses "chain: -E" sudo -n -E -u slot01 -- "$SLOTCTL" "$LAUNCH"
check "chain: the preflight still works" as_svc timeout 5 sudo -n -u slot01 true

slots_done
