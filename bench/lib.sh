# bench/lib.sh: what bench/run and bench/counts-provision set up alike.  Sourced (bash);
# the caller has SVC and SVC_ID (the service account's name and id), PY (python3) and die().

# A syslog socket at /dev/log, as on a host, so logging costs what it costs there (without
# one, glibc tries to connect again at every syslog() call).  /dev becomes a copy on tmpfs
# (mount the loop devices you need before) with the host's /dev/pts, /dev/shm and
# /dev/mqueue, and a receiver that counts the lines, drops them, and writes the count to
# $1 when it gets SIGTERM.  The host's /dev is not touched.  Sets DEVLOG_PID.
bench_dev_log() {
	local dev=/tmp/dev m
	mkdir "$dev"
	mount -t tmpfs -o mode=0755 tmpfs "$dev"
	cp -a /dev/. "$dev/" 2>/dev/null || true
	for m in pts shm mqueue; do
		if mountpoint -q "/dev/$m"; then
			mkdir -p "$dev/$m"
			mount --bind "/dev/$m" "$dev/$m"
		fi
	done
	rm -f "$dev/log"
	"$PY" - "$dev/log" "$1" <<'EOF' &
import os, signal, socket, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
s.bind(sys.argv[1])
os.chmod(sys.argv[1], 0o666)
n = 0
def done(*_):
    open(sys.argv[2], "w").write("%d\n" % n)
    sys.exit(0)
signal.signal(signal.SIGTERM, done)
while True:
    s.recv(65536)
    n += 1
EOF
	DEVLOG_PID=$!
	for m in 1 2 3 4 5 6 7 8 9 10; do
		[ -S "$dev/log" ] && break
		sleep 0.1
	done
	[ -S "$dev/log" ] || die "the syslog receiver did not start"
	mount --rbind "$dev" /dev
}

# A host the way an admin sets it up, in the /etc the caller gave this namespace: the
# service account and /etc/slots/slots.conf for a pool of $2 with every path under $1 (a
# release with its launcher, a docs tree with a shared folder, a private path, limits).
# slots-provision is the caller's to run.
bench_host() {
	local d=$1 n=$2
	mkdir -m 0755 "$d" "$d/app" "$d/app/releases" "$d/docs" "$d/slots"
	mkdir -p "$d/app/releases/r1/bin" "$d/docs/_users" "$d/docs/shared" "$d/app/private"
	printf '#!/bin/sh\nexec "$@"\n' >"$d/app/releases/r1/bin/launch"
	chmod 0755 "$d/app/releases/r1/bin/launch"
	groupadd -g "$SVC_ID" "$SVC"
	useradd -u "$SVC_ID" -g "$SVC" -M -d /nonexistent -s /usr/sbin/nologin "$SVC" 2>/dev/null
	chown -R "$SVC:$SVC" "$d/docs" "$d/app"
	chmod 0700 "$d/app/private"
	mkdir -p /etc/slots
	cat >/etc/slots/slots.conf <<EOF
{"service": "$SVC", "slots": $n, "uid_min": 20001, "uid_max": 30000,
 "app_root": "$d/app", "launcher": "launch", "docs_root": "$d/docs", "shared_dirs": ["shared"],
 "slots_root": "$d/slots", "private_paths": ["$d/app/private"],
 "limits": {"default": {"nofile": 1024, "nproc": 512}}}
EOF
}

# An image tree for slots-provision --root at $1: root and the service account in its etc/
# files, login.defs, and a config for $2 slots.
bench_image() {
	local root=$1 n=$2
	mkdir -p "$root/etc/slots" "$root/var/lib" "$root/var/log" "$root/etc/sysusers.d" "$root/etc/tmpfiles.d"
	chmod 0755 "$root" "$root/etc" "$root/etc/slots"
	printf 'root:x:0:0:root:/root:/bin/bash\n%s:x:%d:%d:bench service:/nonexistent:/usr/sbin/nologin\n' \
		"$SVC" "$SVC_ID" "$SVC_ID" >"$root/etc/passwd"
	printf 'root:x:0:\n%s:x:%d:\n' "$SVC" "$SVC_ID" >"$root/etc/group"
	printf 'root:*:19000:0:99999:7:::\n%s:!:19000::::::\n' "$SVC" >"$root/etc/shadow"
	printf 'root:*::\n%s:!::\n' "$SVC" >"$root/etc/gshadow"
	chmod 0644 "$root/etc/passwd" "$root/etc/group"
	chmod 0640 "$root/etc/shadow" "$root/etc/gshadow"
	chown root:shadow "$root/etc/shadow" "$root/etc/gshadow" 2>/dev/null || true
	cp /etc/login.defs "$root/etc/login.defs"
	printf '{"service": "%s", "slots": %d, "uid_min": 20001, "uid_max": 29999}\n' "$SVC" "$n" \
		>"$root/etc/slots/slots.conf"
}

# A tree at $1 of $2 folders of $3 files of 64 bytes (under ten folders d00..d09).
bench_tree() {
	"$PY" - "$1" "$2" "$3" <<'EOF'
import os, sys
top, dirs, files = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
os.mkdir(top)
for i in range(dirs):
    sub = os.path.join(top, "d%02d" % (i % 10), "d%04d" % i)
    os.makedirs(sub, exist_ok=True)
    for j in range(files):
        with open(os.path.join(sub, "f%03d.txt" % j), "w") as f:
            f.write("x" * 64)
EOF
}
