#!/bin/sh
# Durability of every replace (issue 19): a kill cannot tell whether the folder was synced
# after a rename (the rename is visible either way), only a power loss can.  So the order of
# calls is asserted instead: the fault shim logs each rename with its folder and each fsync,
# and every rename into a folder D must be followed by an fsync of D before the command
# syncs anything else (the next file it writes) and before it ends.  Runs assign, release,
# release --slot and slots-provision --root (a fresh image of the example host).
. "$top_srcdir/tests/integration/lib.sh"
. "$top_srcdir/tests/reliability/rel-lib.sh"
slots_need_root
rel_need_shim
slots_enter_namespace "$@"

W=$SLOTS_WORLD/w
P=$SLOTS_WORLD/p
mkdir -p "$W" "$P"
rel_admin_world "$W" 4
rel_table_t0 "$W/s/etc/slots.json"
chmod 0640 "$W/s/etc/slots.json"
chgrp "$SVC_UID" "$W/s/etc/slots.json"
rel_slot_leftovers "$W" slot01
export FAULT_LOG_DIRS=1 FAULT_CALLS=fsync,fdatasync,rename,renameat,renameat2

# synced LOG: prints each rename whose folder was not synced in time; fails if any, or if
# the log shows no rename at all (then it proves nothing).
synced() {
	awk '
	function flush_check(why) {
		for (d in pending) { printf "call %s: rename into %s, then %s before an fsync of %s\n", pending[d], d, why, d; bad = 1 }
		split("", pending)
	}
	# The table index is written without fsync on purpose: a lost or torn copy is never
	# believed (slots.json(5)), so only its own rename may go unsynced.
	$2 ~ /^rename/ && $3 ~ /\/slots\.json\.index$/ { next }
	$2 ~ /^rename/ { renames++; d = $3; sub(/\/[^\/]*$/, "", d); pending[d] = $1; next }
	$2 ~ /sync$/ {
		if ($3 in pending) { delete pending[$3]; next }
		flush_check("an fsync of " $3)
	}
	END {
		flush_check("the end of the command")
		if (!renames) { print "no rename logged"; bad = 1 }
		exit bad
	}' "$1"
}

# durable DESC LOG COMMAND...: the command must exit 0 and its log pass synced.
durable() {
	desc=$1 log=$2
	shift 2
	rm -f "$log"
	FAULT_LOG=$log "$@" >"$P/out" 2>"$P/err"
	st=$?
	if [ "$st" != 0 ]; then
		cat "$P/out" "$P/err"
		not_ok "$desc: exit $st"
		return
	fi
	echo "# $desc: $(grep -c ' rename' "$log") renames, $(grep -c 'sync ' "$log") fsyncs"
	if synced "$log" >"$P/why"; then
		ok "$desc: every rename is followed by an fsync of its folder"
	else
		cat "$P/why"
		not_ok "$desc: every rename is followed by an fsync of its folder"
	fi
}

durable "assign carol" "$P/assign.log" shim_admin_in "$W" assign carol
durable "release alice" "$P/release.log" shim_admin_in "$W" release alice
durable "release --slot slot03" "$P/release-slot.log" shim_admin_in "$W" release --slot slot03

if rel_have_provision; then
	R=$SLOTS_SCRATCH/root
	rel_example_image "$R"
	durable "slots-provision --root (example host)" "$P/provision.log" \
		env LD_PRELOAD="$SHIM" FAULT_PROG=slots-provision "$SLOTS_PROVISION" --root "$R" \
		--config "$top_srcdir/data/slots.conf.example"
	check "the provision log shows the account files replaced" grep -q " rename.* $R/etc/passwd\$" "$P/provision.log"
else
	not_ok "slots-provision is not built: its replaces are not checked"
fi
slots_done
