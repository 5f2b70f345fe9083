# shellcheck shell=sh
# Helpers for the directory tests: a private OpenLDAP slapd on ldapi:// and nslcd in
# front of it, both started by the test inside its namespace and stopped by saved pid.
# Source after tests/integration/lib.sh, call dir_need_tools before slots_enter_namespace
# and dir_setup after it.  Nothing here reads or changes the host's /etc/ldap, its slapd
# or nslcd service: slapd gets its own slapd.conf (slapd -f) and database under
# $DIR_LDAP, nslcd a /etc/nslcd.conf in the namespace's copy of /etc, and /run (where
# nslcd's socket path, /run/nslcd/socket, is compiled in) is the namespace's tmpfs.  sssd.sh
# puts sssd in front of the same slapd instead (dir_need_sssd, dir_enter_netns, dir_sssd_setup
# below).

DIR_SUFFIX="dc=slots,dc=test"
DIR_POOL="ou=slots,$DIR_SUFFIX"

dir_need_tools() {
	for t in /usr/sbin/slapd /usr/sbin/nslcd ldapadd ldapmodify ldapdelete getent; do
		command -v "$t" >/dev/null 2>&1 || { echo "SKIP: $t is not installed (slapd, ldap-utils, nslcd)"; exit 77; }
	done
	found=
	for so in /usr/lib/*/libnss_ldap.so.2 /lib/*/libnss_ldap.so.2; do [ -f "$so" ] && found=$so; done
	[ -n "$found" ] || { echo "SKIP: libnss-ldapd is not installed"; exit 77; }
	[ -f /usr/lib/ldap/back_mdb.so ] || { echo "SKIP: slapd's back_mdb module is missing"; exit 77; }
	[ -f /etc/ldap/schema/nis.schema ] || { echo "SKIP: slapd's nis schema is missing"; exit 77; }
	getent passwd nslcd >/dev/null || { echo "SKIP: no nslcd account (install nslcd)"; exit 77; }
	# nscd would answer from its cache and hide the directory's state from the test.
	if command -v nscd >/dev/null 2>&1 || command -v unscd >/dev/null 2>&1; then
		echo "SKIP: nscd is installed; its cache would hide the directory's state (remove nscd)"
		exit 77
	fi
}

# Runs the first printed fix's LDIF change in FILE (matching PATTERN, default any), as printed
# ($BASE the pool's base), through ldapmodify as root over ldapi.
dir_apply_fix() { # FILE [PATTERN]
	cmd=$(grep -F -- "${2:-not on this host: for l in}" "$1" |
		sed -n "s/.*not on this host: \(for l in [^|]*; done\) | ldapmodify -H .*/\1/p" | head -1)
	[ -n "$cmd" ] || return 1
	BASE=$DIR_POOL sh -c "$cmd" | ldapmodify -Q -Y EXTERNAL -H "$DIR_URI" >/dev/null
}

# Stops the test's own daemons, by the pids it saved.
dir_stop() {
	for var in DIR_SSSD_PID DIR_NSLCD_PID DIR_SLAPD_PID; do
		eval "pid=\${$var:-}"
		[ -n "$pid" ] || continue
		kill "$pid" 2>/dev/null
		i=0
		while kill -0 "$pid" 2>/dev/null && [ $i -lt 50 ]; do sleep 0.1; i=$((i + 1)); done
		kill -9 "$pid" 2>/dev/null
		eval "$var="
	done
}

dir_setup() {
	DIR_LDAP=$(mktemp -d /run/slots-ldap.XXXXXX) || slots_ns_fail "mktemp /run"
	chmod 0755 "$DIR_LDAP"
	mkdir -p "$DIR_LDAP/db"
	DIR_URI="ldapi://$(printf '%s' "$DIR_LDAP/ldapi" | sed 's|/|%2F|g')"
	# root over ldapi (SASL EXTERNAL) is the rootdn; everyone may read, as nslcd's anonymous bind does.
	cat >"$DIR_LDAP/slapd.conf" <<CONF
include /etc/ldap/schema/core.schema
include /etc/ldap/schema/cosine.schema
include /etc/ldap/schema/nis.schema
include /etc/ldap/schema/inetorgperson.schema
modulepath /usr/lib/ldap
moduleload back_mdb
pidfile $DIR_LDAP/slapd.pid
argsfile $DIR_LDAP/slapd.args
database mdb
suffix "$DIR_SUFFIX"
rootdn "gidNumber=0+uidNumber=0,cn=peercred,cn=external,cn=auth"
directory $DIR_LDAP/db
maxsize 16777216
access to * by * read
CONF
	cat >"$DIR_LDAP/base.ldif" <<LDIF
dn: $DIR_SUFFIX
objectClass: dcObject
objectClass: organization
dc: slots
o: slots test

dn: $DIR_POOL
objectClass: organizationalUnit
ou: slots
LDIF
	mkdir -p /run/nslcd
	chown nslcd:nslcd /run/nslcd
	cat >/etc/nslcd.conf <<CONF
uid nslcd
gid nslcd
uri $DIR_URI
base $DIR_SUFFIX
# A lookup while the directory is down fails after 2 s of retries, not 10 (the default):
# the same failure, sooner.
reconnect_sleeptime 1
reconnect_retrytime 2
CONF
	chown root:nslcd /etc/nslcd.conf
	chmod 0640 /etc/nslcd.conf
	trap 'dir_stop' EXIT
	dir_start_slapd || return 1
	ldapadd -Q -Y EXTERNAL -H "$DIR_URI" -f "$DIR_LDAP/base.ldif" >/dev/null || return 1
	# DIR_NO_NSLCD=1: the test puts sssd in front of the directory instead (dir_sssd_setup).
	[ -n "${DIR_NO_NSLCD:-}" ] || dir_start_nslcd
}

dir_start_slapd() {
	/usr/sbin/slapd -d 0 -f "$DIR_LDAP/slapd.conf" -h "$DIR_URI${DIR_TCP_URI:+ $DIR_TCP_URI}" >"$DIR_LDAP/slapd.log" 2>&1 &
	DIR_SLAPD_PID=$!
	i=0
	until ldapsearch -Q -Y EXTERNAL -H "$DIR_URI" -s base -b "" namingContexts >/dev/null 2>&1; do
		i=$((i + 1))
		if [ $i -gt 100 ] || ! kill -0 "$DIR_SLAPD_PID" 2>/dev/null; then
			echo "slapd did not start:"; cat "$DIR_LDAP/slapd.log"; return 1
		fi
		sleep 0.1
	done
}

dir_start_nslcd() {
	/usr/sbin/nslcd -n >"$DIR_LDAP/nslcd.log" 2>&1 &
	DIR_NSLCD_PID=$!
	i=0
	until [ -S /run/nslcd/socket ]; do
		i=$((i + 1))
		if [ $i -gt 100 ] || ! kill -0 "$DIR_NSLCD_PID" 2>/dev/null; then
			echo "nslcd did not start:"; cat "$DIR_LDAP/nslcd.log"; return 1
		fi
		sleep 0.1
	done
}

# nsswitch.conf of the namespace: files first, then the sources named ("ldap", "extrausers").
dir_nsswitch() {
	sed -i -E "s/^(passwd|group|shadow):.*/\1: files $*/" /etc/nsswitch.conf
}

dir_ldapadd() {
	ldapadd -Q -Y EXTERNAL -H "$DIR_URI" "$@"
}

# The service account (local, as on most hosts) and a pool of 3 with uid_base 60000; "accounts"
# said ("local" unless DIR_EXTRA_CONFIG says it): a host whose nsswitch.conf names the directory
# fails closed without it.
dir_service_and_config() {
	case ${DIR_EXTRA_CONFIG:-} in
	*'"accounts"'*) dir_accounts= ;;
	*) dir_accounts=',
  "accounts": "local"' ;;
	esac
	echo 'svc:x:1990:1990:the service:/nonexistent:/usr/sbin/nologin' >>/etc/passwd
	echo 'svc:x:1990:' >>/etc/group
	echo 'svc:!:20000::::::' >>/etc/shadow
	echo 'svc:!::' >>/etc/gshadow
	[ -e /etc/.pwd.lock ] || install -m 0600 /dev/null /etc/.pwd.lock
	mkdir -p /etc/slots
	cat >/etc/slots/slots.conf <<CONF
{
  "service": "svc",
  "slots": 3,
  "uid_base": 60000,
  "table": "/etc/slots/slots.json",
  "slotctl_config": "/etc/slots/slotctl.json"${DIR_EXTRA_CONFIG:-}$dir_accounts
}
CONF
}

# The pool, loaded into the directory from slots-provision --ldif exactly as printed.
dir_load_pool() {
	"$SLOTS_PROVISION" --config /etc/slots/slots.conf --ldif "$DIR_POOL" >"$DIR_LDAP/pool.ldif" ||
		{ echo "slots-provision --ldif failed"; return 1; }
	dir_ldapadd -f "$DIR_LDAP/pool.ldif" >"$DIR_LDAP/ldapadd.out" 2>&1 ||
		{ cat "$DIR_LDAP/ldapadd.out"; return 1; }
}

# What "nothing changed" compares: the account files, the folders of /etc, and the slots' folders.
dir_host_state() {
	md5sum /etc/passwd /etc/group /etc/shadow /etc/gshadow
	# slots-admin's lock file (empty, made by a refused assign) is no change.
	find /etc /etc/slots -mindepth 1 -maxdepth 1 ! -path /etc/slots/slots.json.lock -printf '%p\n' | sort
	find /var/lib/slots -printf '%p %u:%g %m\n' | sort
}

# sssd in front of the same slapd, for the tests that run it instead of nslcd: call
# dir_need_sssd with dir_need_tools, and dir_sssd_setup after dir_setup.  Its config is
# the namespace's /etc/sssd/sssd.conf; its caches (/var/lib/sss: the LDB cache, the memory
# cache libnss_sss reads, the sockets) are in the namespace's overlay of /var/lib, its logs
# go to the test's folder: nothing of a host sssd is read or changed.
dir_need_sssd() {
	command -v ip >/dev/null 2>&1 || { echo "SKIP: ip is not installed (iproute2)"; exit 77; }
	[ -x /usr/sbin/sssd ] || { echo "SKIP: sssd is not installed (sssd-ldap)"; exit 77; }
	found=
	for so in /usr/lib/*/sssd/libsss_ldap.so /lib/*/sssd/libsss_ldap.so; do [ -f "$so" ] && found=$so; done
	[ -n "$found" ] || { echo "SKIP: sssd's LDAP provider is not installed (sssd-ldap)"; exit 77; }
	found=
	for so in /usr/lib/*/libnss_sss.so.2 /lib/*/libnss_sss.so.2; do [ -f "$so" ] && found=$so; done
	[ -n "$found" ] || { echo "SKIP: libnss-sss is not installed"; exit 77; }
}

# sssd reaches LDAP over TCP only (an ldapi:// URI is taken for a host name): the test runs in
# a network namespace of its own, where slapd listens on 127.0.0.1:389 and nothing of the host's
# network is seen.  Call before slots_enter_namespace, with the script's arguments.
dir_enter_netns() {
	if [ -z "${DIR_IN_NETNS:-}" ]; then
		unshare --net true 2>/dev/null || { echo "SKIP: cannot create a network namespace (unshare --net)"; exit 77; }
		DIR_IN_NETNS=1 exec unshare --net sh "$0" "$@"
	fi
	ip link set lo up || { echo "cannot bring up lo in the network namespace"; exit 99; }
	DIR_TCP_URI=ldap://127.0.0.1:389
}

# The fleet's sssd.conf (docs/install.md shows the same): the LDAP provider, no enumeration.
# offline_timeout is short so that a test sees sssd go back online quickly.
dir_sssd_setup() {
	mkdir -p /etc/sssd /var/lib/sss/db /var/lib/sss/mc /var/lib/sss/pipes/private "$DIR_LDAP/sssd-log"
	rm -f /var/lib/sss/db/* /var/lib/sss/mc/*
	cat >/etc/sssd/sssd.conf <<CONF
[sssd]
services = nss
domains = slots

[nss]
memcache_timeout = 300

[domain/slots]
id_provider = ldap
auth_provider = none
access_provider = permit
ldap_uri = $DIR_TCP_URI
ldap_search_base = $DIR_SUFFIX
ldap_schema = rfc2307
enumerate = false
cache_credentials = false
entry_cache_timeout = 1
offline_timeout = 2
ldap_network_timeout = 2
ldap_opt_timeout = 2
CONF
	chmod 0600 /etc/sssd/sssd.conf
	# sssd logs into /var/log/sssd, the host's: the namespace puts a folder of its own there.
	mkdir -p /var/log/sssd && mount -t tmpfs -o mode=0750 tmpfs /var/log/sssd ||
		{ echo "cannot mount a tmpfs on /var/log/sssd"; return 1; }
	dir_start_sssd
}

dir_start_sssd() {
	# A socket a stopped sssd left would look like a started one.
	rm -f /var/lib/sss/pipes/nss /var/lib/sss/pipes/private/sbus-monitor
	/usr/sbin/sssd -i --logger=stderr -d 0x0070 >"$DIR_LDAP/sssd.log" 2>&1 &
	DIR_SSSD_PID=$!
	i=0
	until [ -S /var/lib/sss/pipes/nss ]; do
		i=$((i + 1))
		if [ $i -gt 150 ] || ! kill -0 "$DIR_SSSD_PID" 2>/dev/null; then
			echo "sssd did not start:"; cat "$DIR_LDAP/sssd.log"; return 1
		fi
		sleep 0.1
	done
}

# Stops sssd by its pid and waits for it (its children, the responders and the provider, end with it).
dir_stop_sssd() {
	[ -n "${DIR_SSSD_PID:-}" ] || return 0
	kill "$DIR_SSSD_PID" 2>/dev/null
	i=0
	while kill -0 "$DIR_SSSD_PID" 2>/dev/null && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
	kill -9 "$DIR_SSSD_PID" 2>/dev/null
	wait "$DIR_SSSD_PID" 2>/dev/null
	DIR_SSSD_PID=
}

# Stops slapd by its pid (sssd then goes offline and answers from its cache).
dir_stop_slapd() {
	kill "$DIR_SLAPD_PID" 2>/dev/null
	wait "$DIR_SLAPD_PID" 2>/dev/null
	DIR_SLAPD_PID=
}
