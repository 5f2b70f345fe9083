#!/bin/sh
# Installs what building, testing and the demo need on Debian 12 (run as root).
set -eu
export DEBIAN_FRONTEND=noninteractive
pkgs="build-essential autoconf automake libtool pkg-config
      libpam0g-dev libacl1-dev libjansson-dev libcrypt-dev libcmocka-dev libsystemd-dev
      libpam-wrapper libpamtest0-dev libnss-wrapper libuid-wrapper
      libpam-modules pamtester sudo passwd login util-linux procps acl jq openssl mandoc valgrind
      clang python3 keyutils uidmap
      slapd ldap-utils nslcd libnss-ldapd libnss-extrausers
      debhelper dpkg-dev lintian bash-completion
      qemu-system-x86 mmdebstrap e2fsprogs"
# The guest step (tests/guest) boots a Debian 12 guest under qemu from an image mmdebstrap makes.
# uidmap: the identity attacks map a slot into a user namespace (newuidmap).
# The directory tests (tests/directory) run their own slapd and nslcd; --no-install-recommends
# keeps nscd out (libnss-ldapd recommends it), since its cache would hide the directory's state.
missing=
for p in $pkgs; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing="$missing $p"
done
if [ -n "$missing" ]; then
	apt-get update -qq
	# shellcheck disable=SC2086
	apt-get install -y -qq --no-install-recommends $missing >/dev/null
fi
