#!/bin/sh
# Prints the version of the source tree this script is in (or of DIR), without a newline:
#   - a release tarball: what .tarball-version says (make dist writes it), so the tarball keeps
#     the version it was made with;
#   - a git checkout at a tag 0.1.0 (or v0.1.0): 0.1.0;
#   - a commit after it: 0.1.0+git20261207.5.e225142, the commit's date (UTC), the number of
#     commits since the tag and the short hash; two commits of one day differ by the count,
#     so each later commit of a branch is a later Debian version (dpkg --compare-versions);
#   - a checkout without a tag: the base in .version with the same suffix, the count from the
#     first commit;
#   - neither git nor .tarball-version: the base in .version.
# configure.ac takes its version from here (autoreconf runs it), debian/rules stamps the same
# into debian/changelog.  Usage: sh scripts/git-version.sh [DIR]
set -eu
top=${1:-$(dirname "$0")/..}
top=$(cd "$top" && pwd -P)
if [ -s "$top/.tarball-version" ]; then
	printf '%s' "$(sed -n 1p "$top/.tarball-version")"
	exit 0
fi
base=$(sed -n 1p "$top/.version")
# Only the repository whose top this tree is: a tree copied into another checkout is not it.
if command -v git >/dev/null 2>&1 &&
	[ "$(git -C "$top" rev-parse --show-toplevel 2>/dev/null)" = "$top" ] &&
	git -C "$top" rev-parse -q --verify HEAD >/dev/null 2>&1; then
	if d=$(git -C "$top" describe --tags --long --match '[0-9]*' --match 'v[0-9]*' 2>/dev/null); then
		tag=${d%-*-g*}
		rest=${d#"$tag"-}
		count=${rest%%-*}
		base=${tag#v}
	else
		count=$(git -C "$top" rev-list --count HEAD)
	fi
	if [ -n "${tag:-}" ] && [ "$count" = 0 ]; then
		printf '%s' "$base"
		exit 0
	fi
	day=$(TZ=UTC0 git -C "$top" log -1 --format=%cd --date=format-local:%Y%m%d HEAD)
	hash=$(git -C "$top" rev-parse --short=7 HEAD)
	printf '%s+git%s.%s.%s' "$base" "$day" "$count" "$hash"
	exit 0
fi
printf '%s' "$base"
