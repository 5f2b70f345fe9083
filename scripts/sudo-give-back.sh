# shellcheck shell=sh
# What scripts/demo.sh and scripts/test.sh share: under sudo, give the files they made in the
# checkout back to the user who cloned it.  Sourced, not run.
#
# slots_give_back TOP OUT: the build folder OUT and what ./autogen.sh makes in TOP would be
# root's, and the next ./autogen.sh or make of that user would fail; they go back to
# SUDO_UID:SUDO_GID, only when the checkout is theirs, never through a symlink or a hard link.
slots_give_back() {
	[ -n "${SUDO_UID:-}" ] && [ "${SUDO_UID:-0}" != 0 ] && [ "$(stat -c %u "$1")" = "$SUDO_UID" ] || return 0
	for p in "$2" "$1/configure" "$1/Makefile.in" "$1/aclocal.m4" "$1/build-config.h.in" \
		"$1/autom4te.cache" "$1/build-aux" "$1/m4"; do
		[ -e "$p" ] || continue
		find "$p" -xdev -uid 0 \( -type f -links 1 -o -type d \) -exec chown "$SUDO_UID:$SUDO_GID" {} + 2>/dev/null || true
	done
}
