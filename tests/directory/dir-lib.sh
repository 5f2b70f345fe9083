# Helpers for the directory tests: a private OpenLDAP slapd on ldapi:// and nslcd in
# front of it, both started by the test inside its namespace and stopped by saved pid.
# Source after tests/integration/lib.sh, call dir_need_tools before slots_enter_namespace
# and dir_setup after it.  Nothing here reads or changes the host's /etc/ldap, its slapd
# or nslcd service: slapd gets its own slapd.conf (slapd -f) and database under
# $DIR_LDAP, nslcd a /etc/nslcd.conf in the namespace's copy of /etc, and /run (where
# nslcd's socket path, /run/nslcd/socket, is compiled in) is the namespace's tmpfs.

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

# Stops the test's own daemons, by the pids it saved.
dir_stop() {
	for var in DIR_NSLCD_PID DIR_SLAPD_PID; do
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
CONF
	chown root:nslcd /etc/nslcd.conf
	chmod 0640 /etc/nslcd.conf
	trap 'dir_stop' EXIT
	dir_start_slapd || return 1
	ldapadd -Q -Y EXTERNAL -H "$DIR_URI" -f "$DIR_LDAP/base.ldif" >/dev/null || return 1
	dir_start_nslcd
}

dir_start_slapd() {
	/usr/sbin/slapd -d 0 -f "$DIR_LDAP/slapd.conf" -h "$DIR_URI" >"$DIR_LDAP/slapd.log" 2>&1 &
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

# The service account (local, as on most hosts) and a pool of 3 with uid_base 60000.
dir_service_and_config() {
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
  "slotctl_config": "/etc/slots/slotctl.json"${DIR_EXTRA_CONFIG:-}
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
	ls -A /etc /etc/slots | grep -vx 'slots.json.lock'
	find /var/lib/slots -printf '%p %u:%g %m\n' | sort
}
