#!/bin/sh
# The journal's catalog (data/slots.catalog): journalctl compiles it, and its entries are
# exactly the MESSAGE_IDs the commands send (src/emit.c), one per kind of event, each
# with a subject; journalctl -x shows an entry's text for its id.
. "$top_srcdir/tests/integration/lib.sh"
command -v journalctl >/dev/null || { echo "SKIP: journalctl is not installed"; exit 77; }
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
mkdir -p "$T/root/usr/lib/systemd/catalog"
cp "$top_srcdir/data/slots.catalog" "$T/root/usr/lib/systemd/catalog/"
check "journalctl --update-catalog compiles it" journalctl --root="$T/root" --update-catalog
journalctl --root="$T/root" --list-catalog >"$T/list" 2>"$T/err"
sed -n 's/^\([0-9a-f]\{32\}\) .*/\1/p' "$T/list" | sort >"$T/catalog-ids"
sed -n 's/.*\[CMD_EV_[A-Z_]*\] = { "\([0-9a-f]\{32\}\)".*/\1/p' "$top_srcdir/src/emit.c" | sort >"$T/code-ids"
check "the code has its 11 kinds of event" test "$(wc -l <"$T/code-ids")" = 11
check "no two kinds share an id" test "$(sort -u "$T/code-ids" | wc -l)" = 11
check "the catalog has exactly the code's ids" cmp "$T/catalog-ids" "$T/code-ids"
check "every entry has a subject and says it is slots'" sh -c "! grep -v ' slots: [A-Z]' '$T/list'"
check "journalctl --dump-catalog shows the release's text" sh -c \
	"journalctl --root='$T/root' --dump-catalog 37f06b5da888482fa6886f1204f3c2a8 | grep -q 'back in the pool'"
slots_done
