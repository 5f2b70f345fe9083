# shellcheck shell=sh
# top_srcdir and top_builddir come from make check's environment (lib.sh).
# shellcheck disable=SC2154
# The example host's image for the tests that run slots-provision --root on it: source it
# after lib.sh, inside the private namespace.  G is the golden case the image comes from.
G=$top_srcdir/tests/provision/golden/example-host

# image DIR: the example host's image as the golden test makes it.
image() {
	R=$1
	rm -rf "$R"
	mkdir -p "$R/etc"
	for f in passwd group shadow gshadow; do
		src=$G/initial-$f
		[ -f "$src" ] || src=$top_srcdir/tests/provision/initial-$f
		cp "$src" "$R/etc/$f"
	done
	chmod 0644 "$R/etc/passwd" "$R/etc/group"
	chown 0:42 "$R/etc/shadow" "$R/etc/gshadow"
	chmod 0640 "$R/etc/shadow" "$R/etc/gshadow"
	: >"$R/etc/.pwd.lock"
	chmod 0600 "$R/etc/.pwd.lock"
	ROOT=$R sh -e "$G/setup.sh"
}

# snap DIR: every entry below DIR with its type, owner, mode, size and time, and each file's hash.
snap() {
	(cd "$1" && find . -printf '%p %y %U:%G %m %s %T@\n' | LC_ALL=C sort &&
		find . -type f -exec sha256sum {} + | LC_ALL=C sort)
}
