#!/bin/sh
# Issue 7.3: 16 concurrent slots-admin workers doing random assign/release operations, with
# and without a given slot, over a pool of 50, while readers run "status --json" all the
# while; concurrency.py logs every result and replays them in the order the table changed
# (the fault shim logs each rename of the table, under the table lock) to check that no slot
# ever had two users nor a user two slots, that every refusal is one slots-admin(8) documents and was
# true when it was made, that readers only ever saw whole tables the replay went through,
# and that the final table is exactly the replayed state.
# Short form: 16 x 60 operations; SLOTS_RELIABILITY_FULL=1: 16 x 1,000.
. "$top_srcdir/tests/integration/lib.sh"
. "$top_srcdir/tests/reliability/rel-lib.sh"
slots_need_root
rel_need_shim
slots_enter_namespace "$@"

WORKERS=16
OPS=60
[ "$FULL" = 1 ] && OPS=1000
OPS=${SLOTS_CONCURRENCY_OPS:-$OPS}
POOL=50
READERS=2
SEED=${SLOTS_CONCURRENCY_SEED:-7}
W=$SLOTS_WORLD/w
P=$SLOTS_WORLD/p
mkdir -p "$W" "$P"
rel_admin_world "$W" $POOL
TABLE=$W/s/etc/slots.json
printf '{\n  "slots": {},\n  "version": 1\n}\n' >"$TABLE"
chown "0:$SVC_UID" "$TABLE"
chmod 0640 "$TABLE"

echo "# $WORKERS workers x $OPS operations over a pool of $POOL, $READERS readers, seed $SEED"
check "the operations replay exactly (slots, users, refusals, readers, final table)" \
	python3 "$top_srcdir/tests/reliability/concurrency.py" "$P" "$TABLE" $POOL $WORKERS "$OPS" $READERS 8 "$SEED" -- \
	env LD_PRELOAD="$SHIM $NSSW" NSS_WRAPPER_PASSWD="$W/passwd" NSS_WRAPPER_GROUP="$W/group" \
	FAULT_PROG=slots-admin FAULT_COMMIT_NAME=slots.json FAULT_COMMIT_LOG="$P/commits" \
	"$SLOTS_ADMIN" --config "$W/slots.conf"
check "the table is still root:<service group> 0640" [ "$(stat -c '%u:%g %a' "$TABLE")" = "0:$SVC_UID 640" ]
check "no temp is left next to the table" [ -z "$(rel_temps "$W/s/etc")" ]
slots_done
