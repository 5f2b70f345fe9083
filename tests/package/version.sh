#!/bin/sh
# Versions that move (scripts/git-version.sh, debian/rules version-stamp), in a scratch git
# repository holding this tree's script, .version and debian/: without a tag the base with the
# commit's date, count and hash; two successive commits (the same day too) give increasing
# Debian versions; a tag is the version itself, a commit after it a later one; a tarball's
# .tarball-version wins; the changelog stamp is that version and replaces an earlier stamp
# rather than piling up.  And --version prints the version configure took.  Skips without git
# or dpkg.
. "$top_srcdir/tests/integration/lib.sh"
for t in git dpkg dpkg-parsechangelog; do
	command -v $t >/dev/null 2>&1 || { echo "SKIP: $t is not installed"; exit 77; }
done
slots_tmpdir
R=$slots_tmp/repo
mkdir -p "$R/scripts"
cp "$top_srcdir/scripts/git-version.sh" "$R/scripts/" && cp "$top_srcdir/.version" "$R/" &&
	cp -r "$top_srcdir/debian" "$R/" || { not_ok "copy the tree's script, .version and debian/"; slots_done; }
base=$(sed -n 1p "$R/.version")
g() { git -C "$R" -c user.name=test -c user.email=test@example.org "$@"; }
ver() { sh "$R/scripts/git-version.sh" "$R"; }
gt() { dpkg --compare-versions "$1" gt "$2"; }
g init -q && g add -A && GIT_COMMITTER_DATE='2026-12-07T10:00:00Z' g commit -qm one || not_ok "git commit"
v1=$(ver)
check "no tag: the base, the commit's day, count 1 and hash ($v1)" \
	test "$v1" = "$base+git20261207.1.$(g rev-parse --short=7 HEAD)"
echo a >"$R/a" && g add a && GIT_COMMITTER_DATE='2026-12-07T11:00:00Z' g commit -qm two
v2=$(ver)
check "a second commit the same day is a later Debian version ($v2 > $v1)" gt "$v2" "$v1"
echo b >"$R/b" && g add b && GIT_COMMITTER_DATE='2026-12-08T09:00:00Z' g commit -qm three
v3=$(ver)
check "and one the next day again ($v3 > $v2)" gt "$v3" "$v2"
g tag 0.2.0
check "at a tag: the tag" test "$(ver)" = 0.2.0
check "which is later than the commits before it" gt 0.2.0 "$v3"
echo c >"$R/c" && g add c && GIT_COMMITTER_DATE='2026-12-09T09:00:00Z' g commit -qm four
v4=$(ver)
check "a commit after the tag: 0.2.0+git20261209.1.HASH ($v4)" \
	test "$v4" = "0.2.0+git20261209.1.$(g rev-parse --short=7 HEAD)"
check "later than the tag" gt "$v4" 0.2.0
# The changelog stamp: the tree's version on top, an earlier stamp replaced.
(cd "$R" && make -s --no-print-directory -f debian/rules version-stamp) || not_ok "debian/rules version-stamp"
check "debian/rules version-stamp puts the tree's version on top of debian/changelog" \
	test "$(dpkg-parsechangelog -l "$R/debian/changelog" -S Version)" = "$v4"
stanzas=$(grep -c '^slots (' "$R/debian/changelog")
echo d >"$R/d" && g add d && GIT_COMMITTER_DATE='2026-12-09T10:00:00Z' g commit -qm five
v5=$(ver)
(cd "$R" && make -s --no-print-directory -f debian/rules version-stamp) || not_ok "debian/rules version-stamp again"
check "a later commit's stamp replaces the earlier one ($v5, still $stanzas stanzas)" sh -c \
	"test \"\$(dpkg-parsechangelog -l '$R/debian/changelog' -S Version)\" = '$v5' &&
	 test \$(grep -c '^slots (' '$R/debian/changelog') = $stanzas"
check "and the .deb's version moves up with it" gt "$v5" "$v4"
# A tarball (no .git) keeps the version it was made with.
T=$slots_tmp/tarball
mkdir -p "$T/scripts" && cp "$R/scripts/git-version.sh" "$T/scripts/" && cp "$R/.version" "$T/"
check "a tree without git and .tarball-version: the base" test "$(sh "$T/scripts/git-version.sh")" = "$base"
printf '%s\n' "$v4" >"$T/.tarball-version"
check "a tarball: what .tarball-version says" test "$(sh "$T/scripts/git-version.sh")" = "$v4"
want=$(sed -n 's/^#define PACKAGE_VERSION "\(.*\)"$/\1/p' "$top_builddir/build-config.h")
check "slots-admin --version prints configure's version ($want)" \
	test "$("$top_builddir/slots-admin" --version)" = "slots-admin $want"
check "slots-provision --version too" \
	test "$("$top_builddir/slots-provision" --version)" = "slots-provision $want"
slots_done
