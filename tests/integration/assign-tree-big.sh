#!/bin/sh
# assign on a tree of 100,000 files (SLOTS_TREE_FILES overrides) completes and leaves every entry
# granted to the slot's uid with the right mode; release gives it all back.  Prints the times (the benchmark
# itself is bench/'s).
RELEASE_POOL=1
. "$top_srcdir/tests/integration/release-lib.sh"

FILES=${SLOTS_TREE_FILES:-100000}
PER_DIR=1000
TREE=$DOCS/_users/big
mkdir -p "$TREE"
d=0
while [ $((d * PER_DIR)) -lt "$FILES" ]; do
	mkdir -m 0755 "$TREE/d$d"
	(cd "$TREE/d$d" && seq -f 'f%g' 1 $PER_DIR | xargs touch)
	d=$((d + 1))
done
chown -R svc:svc "$TREE"
find "$TREE" -type f -exec chmod 0644 {} +
total=$(find "$TREE" | wc -l)
echo "# tree of $total entries ($d folders)"

ms() {
	date +%s%N | cut -c1-13
}

t0=$(ms)
out=$(admin assign big slot01)
st=$?
t1=$(ms)
echo "# assign (every entry changed): $((t1 - t0)) ms"
check "assign on $total entries exits 0" test "$st" = 0 -a "$out" = slot01
check "every entry's ACL names slot01's uid" \
	test "$(getfacl -Rcnp -- "$TREE" 2>/dev/null | grep -c "^user:$(uid_of slot01):")" = "$total"
check "every folder is 0770 (the mask)" test "$(find "$TREE" -type d ! -perm 0770 | wc -l)" = 0
check "every file is 0660" test "$(find "$TREE" -type f ! -perm 0660 | wc -l)" = 0
check "owners stay" test "$(find "$TREE" ! -user svc | wc -l)" = 0

t0=$(ms)
out=$(admin assign big slot01)
st=$?
t1=$(ms)
echo "# assign again (nothing to change): $((t1 - t0)) ms"
check "assign again exits 0 and prints slot01" test "$st" = 0 -a "$out" = slot01

t0=$(ms)
out=$(admin release big)
st=$?
t1=$(ms)
echo "# release (every entry changed): $((t1 - t0)) ms"
check "release exits 0" test "$st" = 0
check "every entry has the service group again" test "$(find "$TREE" ! -group svc | wc -l)" = 0
check "every file keeps its owner's bits only at release" test "$(find "$TREE" -type f ! -perm 0600 | wc -l)" = 0
check "no ACL entry names slot01 after release" \
	test "$(getfacl -Rcnp -- "$TREE" 2>/dev/null | grep -c ":$(uid_of slot01):")" = 0
slots_done
