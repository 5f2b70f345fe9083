#!/bin/sh
# 1,000 slots under --root: one transaction (each account file written once: its "-" backup
# holds the file as it was before the run, not an intermediate), and fast.  Prints the times.
. "$top_srcdir/tests/integration/lib.sh"
slots_need_root
# In a private mount namespace: its /run hides the syslog socket, so the many change lines
# of these runs do not end up in the host's journal.
slots_enter_namespace "$@"
umask 022
slots_tmpdir
R=$slots_tmp/root
mkdir -p "$R/etc"
for f in passwd group shadow gshadow; do cp "$top_srcdir/tests/provision/initial-$f" "$R/etc/$f"; done
cat >"$slots_tmp/slots.conf" <<'CONF'
{
  "service": "svc",
  "slots": 1000,
  "uid_min": 20000,
  "uid_max": 29999,
  "table": "/etc/slots/slots.json",
  "slotctl_config": "/etc/slots/slotctl.json"
}
CONF
now() { date +%s%N; }
t0=$(now)
"$SLOTS_PROVISION" --root "$R" --config "$slots_tmp/slots.conf" >"$slots_tmp/out" 2>"$slots_tmp/err"
st=$?
t1=$(now)
check "1,000 slots: exits 0" test $st = 0
cat "$slots_tmp/err"
check "1,000 slots: 1,000 accounts in passwd" test "$(grep -c '^slot[0-9]*:x:' "$R/etc/passwd")" = 1000
check "1,000 slots: 1,000 locked shadow lines" test "$(grep -c '^slot[0-9]*:!:' "$R/etc/shadow")" = 1000
check "1,000 slots: slot1000 follows slot999" grep -q '^slot1000:x:' "$R/etc/passwd"
check "1,000 slots: the shared group lists all of them" \
	test "$(grep '^slotshared:' "$R/etc/group" | cut -d: -f4 | tr , '\n' | wc -l)" = 1000
for f in passwd group shadow gshadow; do
	check "1,000 slots: $f was written once (its backup is the file from before the run)" \
		cmp -s "$top_srcdir/tests/provision/initial-$f" "$R/etc/$f-"
done
check "1,000 slots: 3,000 slot folders" test "$(find "$R/var/lib/slots/svc" -mindepth 2 -maxdepth 2 -type d | wc -l)" = 3000
t2=$(now)
"$SLOTS_PROVISION" --root "$R" --config "$slots_tmp/slots.conf" >"$slots_tmp/out2" 2>"$slots_tmp/err2"
t3=$(now)
check "1,000 slots: no warning but the image's missing sudo" sh -c "! grep -v 'visudo\|install sudo' '$slots_tmp/err2'"
check "1,000 slots: second run prints 0 changes" test "$(cat "$slots_tmp/out2")" = "0 changes"
first=$(((t1 - t0) / 1000000))
second=$(((t3 - t2) / 1000000))
echo "# 1,000 slots under --root: first run ${first} ms ($(tail -1 "$slots_tmp/out")), second run ${second} ms"
# Generous bounds: they catch a rewrite per account (seconds to minutes), not a slow disk.
check "1,000 slots: the first run takes less than 20 s" test "$first" -lt 20000
check "1,000 slots: the second run takes less than 10 s" test "$second" -lt 10000
slots_done
