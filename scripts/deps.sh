#!/bin/sh
# Installs what building, testing and the demo need on Debian 12 (run as root).
set -eu
export DEBIAN_FRONTEND=noninteractive
pkgs="build-essential autoconf automake libtool pkg-config
      libpam0g-dev libacl1-dev libjansson-dev libcrypt-dev libcmocka-dev libsystemd-dev
      libseccomp-dev
      libpam-wrapper libpamtest0-dev libnss-wrapper libuid-wrapper
      libpam-modules pamtester sudo passwd login util-linux procps acl jq openssl mandoc valgrind
      clang python3 keyutils uidmap
      slapd ldap-utils nslcd libnss-ldapd libnss-extrausers sssd-ldap libnss-sss
      debhelper dpkg-dev lintian bash-completion ansible-core
      qemu-system-x86 mmdebstrap e2fsprogs shellcheck git"
# tests/shellcheck.sh runs shellcheck; tests/package/version.sh needs git (versions from git).
# The guest step (tests/guest) boots a Debian 12 guest under qemu from an image mmdebstrap makes.
# uidmap: the identity attacks map a slot into a user namespace (newuidmap).
# The directory tests (tests/directory) run their own slapd and nslcd; --no-install-recommends
# keeps nscd out (libnss-ldapd recommends it), since its cache would hide the directory's state.
# They run sssd the same way (sssd-ldap, libnss-sss), with a config of their own; the packages'
# scripts add "sss" to the host's nsswitch.conf and pam_sss and pam_pwquality to its PAM stack, so
# both are put back as they were: the host keeps answering from its files, and no host sssd runs.
missing=
for p in $pkgs; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing="$missing $p"
done
if [ -n "$missing" ]; then
	apt-get update -qq
	nsswitch=$(mktemp)
	cp -p /etc/nsswitch.conf "$nsswitch"
	# shellcheck disable=SC2086
	apt-get install -y -qq --no-install-recommends $missing >/dev/null
	cmp -s "$nsswitch" /etc/nsswitch.conf || cp -p "$nsswitch" /etc/nsswitch.conf
	rm -f "$nsswitch"
	case $missing in *sssd*)
		pam-auth-update --disable sss pwquality
		# policy-rc.d may have kept it from starting; where it did start, the host needs none.
		if command -v systemctl >/dev/null 2>&1 && [ -d /run/systemd/system ]; then
			systemctl disable --now sssd.service >/dev/null 2>&1 || :
		fi
		;;
	esac
fi
