#!/bin/sh
# Issue 7.5: a hostile file system.  Symlinks planted at the table, at its temp name, at the
# lock file, at a slot's home and state folder, at a component of a user's tree and at a
# release folder are never followed: their targets (the "victims": files and folders with
# their own owner, mode and content) are byte-identical afterwards, owner and mode included.
# A table folder writable by others (or not owned by root) is refused for writing; a FIFO, a
# device node, a socket or a folder at the table path (and a FIFO at the lock file or the
# config) are refused without blocking.  Temps of the table's own pattern that a killed
# writer left are removed by the next writer; anything else there is left alone.
. "$top_srcdir/tests/integration/lib.sh"
. "$top_srcdir/tests/reliability/rel-lib.sh"
slots_need_root
rel_need_shim
slots_enter_namespace "$@"

W=$SLOTS_WORLD/w
P=$SLOTS_WORLD/p
V=$SLOTS_SCRATCH/victims
mkdir -p "$W" "$P" "$V"
rel_admin_world "$W" 4
TABLE=$W/s/etc/slots.json
ETC=$W/s/etc

# The victims: what a followed link would damage.
mkdir -p "$V/dir/sub"
echo "VICTIM FILE" >"$V/file"
echo "victim in a folder" >"$V/dir/sub/f"
chown 0:0 "$V/file"
chmod 0600 "$V/file"
chown -R 4321:4321 "$V/dir"
chmod 0700 "$V/dir" "$V/dir/sub"
chmod 0600 "$V/dir/sub/f"
chmod 0755 "$V"
rel_snap "$V" "$P/victims.snap"
victims_intact() {
	rel_snap "$V" "$P/victims.now"
	cmp -s "$P/victims.snap" "$P/victims.now" && [ ! -e "$V/created" ] && [ ! -e "$V/dir/created" ]
}

check "assign alice slot01" prints slot01 admin_in "$W" assign alice slot01
check "assign bob slot02" prints slot02 admin_in "$W" assign bob slot02
cp -p "$TABLE" "$P/table"

# ---- symlinks at the table ----
mv "$TABLE" "$P/table.moved"
for target in "$V/file" "$P/table" "$V/created"; do
	ln -s "$target" "$TABLE"
	for cmd in "assign carol" "release bob" "release --slot slot01"; do
		# shellcheck disable=SC2086
		check_exit "a symlink at the table ($target): $cmd refused" 1 admin_in "$W" $cmd 2>"$P/err"
	done
	check "the refusal says it is a symlink" grep -q "symlink" "$P/err"
	check_exit "status refuses to read through it too" 1 admin_in "$W" status 2>/dev/null
	check "the link still points at $target" [ "$(readlink "$TABLE")" = "$target" ]
	rm -f "$TABLE"
done
check "the symlink targets are untouched (and no dangling target was created)" victims_intact
check "the table the link pointed at is unchanged" cmp -s "$P/table" "$P/table.moved"
mv "$P/table.moved" "$TABLE"

# ---- symlinks (and other things) at the temp name ----
# FAULT_RANDOM=counter makes the temp names predictable: .slots.json.000000000000, ...001, ...
ln -s "$V/file" "$ETC/.slots.json.000000000000"
ln -s "$V/created" "$ETC/.slots.json.000000000001"
mkfifo "$ETC/.slots.json.000000000002"
check "with links and a FIFO at its first three temp names, assign still works" \
	env FAULT_RANDOM=counter LD_PRELOAD="$SHIM $NSSW" NSS_WRAPPER_PASSWD="$W/passwd" NSS_WRAPPER_GROUP="$W/group" \
	FAULT_PROG=slots-admin timeout 20 "$SLOTS_ADMIN" --config "$W/slots.conf" assign carol slot03 >/dev/null
check "and the table has carol" grep -q '"carol"' "$TABLE"
check "the links at the temp names were not followed" victims_intact
check "the links and the FIFO are still there (the cleanup removes only regular files)" \
	[ -L "$ETC/.slots.json.000000000000" ] && [ -L "$ETC/.slots.json.000000000001" ] && [ -p "$ETC/.slots.json.000000000002" ]
rm -f "$ETC"/.slots.json.00000000000*

# A stale temp (a regular file of the pattern) is removed by the next writer; look-alikes stay.
echo stale >"$ETC/.slots.json.0123456789ab"
echo stale >"$ETC/.slots.json-.0123456789ab"
echo other >"$ETC/.slots.json.0123456789abc"
echo other >"$ETC/.slots.json.0123456789AB"
echo other >"$ETC/.other.json.0123456789ab"
touch -d '2000-01-01' "$ETC"/.*.json*
check "release removes stale temps of the table's pattern" quiet admin_in "$W" release carol
check "both the table's and its backup's" [ ! -e "$ETC/.slots.json.0123456789ab" ] && [ ! -e "$ETC/.slots.json-.0123456789ab" ]
check "and leaves names that only look alike" \
	[ -f "$ETC/.slots.json.0123456789abc" ] && [ -f "$ETC/.slots.json.0123456789AB" ] && [ -f "$ETC/.other.json.0123456789ab" ]
check_exit "status (a reader, no lock) removes nothing" 0 quiet admin_in "$W" status
rm -f "$ETC"/.*.json.*

# ---- the lock file ----
cp -p "$TABLE" "$P/table"
for target in "$V/file" "$V/created"; do
	rm -f "$ETC/slots.json.lock"
	ln -s "$target" "$ETC/slots.json.lock"
	check_exit "a symlink at the lock file ($target): assign refused" 1 admin_in "$W" assign dave 2>"$P/err"
	check "the refusal names the lock file and says it is a symlink" grep -q "lock file.*symlink" "$P/err"
done
rm -f "$ETC/slots.json.lock"
mkfifo "$ETC/slots.json.lock"
check_exit "a FIFO at the lock file: refused, without blocking" 1 timeout 10 env LD_PRELOAD="$NSSW" \
	NSS_WRAPPER_PASSWD="$W/passwd" NSS_WRAPPER_GROUP="$W/group" "$SLOTS_ADMIN" --config "$W/slots.conf" assign dave 2>/dev/null
rm -f "$ETC/slots.json.lock"
check "the lock file's targets are untouched" victims_intact
check "the table is unchanged after the lock refusals" cmp -s "$TABLE" "$P/table"

# ---- the table's folder ----
for mode in 0757 0777 1777; do
	chmod $mode "$ETC"
	check_exit "a table folder of mode $mode: assign refused" 1 admin_in "$W" assign dave 2>"$P/err"
	check "the refusal says the folder is writable by others" grep -q "writable by others" "$P/err"
	check_exit "a table folder of mode $mode: release refused" 1 admin_in "$W" release alice 2>/dev/null
done
chmod 0755 "$ETC"
chown 4321 "$ETC"
check_exit "a table folder owned by another user: assign refused" 1 admin_in "$W" assign dave 2>"$P/err"
check "the refusal names the owner" grep -q "owned by uid 4321" "$P/err"
chown 0 "$ETC"
check "the table is unchanged after the folder refusals" cmp -s "$TABLE" "$P/table"

# ---- FIFO, devices, socket, folder at the table path: refused, never blocking ----
# The control for "never opens it" below: the shim sees status open a regular table.
rm -f "$P/opens"
check_exit "the control: status of a regular table exits 0 under the shim" 0 quiet env FAULT_CALLS=openat \
	FAULT_LOG="$P/opens" LD_PRELOAD="$SHIM $NSSW" NSS_WRAPPER_PASSWD="$W/passwd" NSS_WRAPPER_GROUP="$W/group" \
	FAULT_PROG=slots-admin "$SLOTS_ADMIN" --config "$W/slots.conf" status
check "the shim logs status opening a regular table" grep -q " slots.json$" "$P/opens"
mv "$TABLE" "$P/table.moved"
not_regular() {
	kind=$1
	for cmd in "status" "assign dave" "release alice"; do
		# shellcheck disable=SC2086
		timeout 10 env LD_PRELOAD="$NSSW" NSS_WRAPPER_PASSWD="$W/passwd" NSS_WRAPPER_GROUP="$W/group" \
			"$SLOTS_ADMIN" --config "$W/slots.conf" $cmd >/dev/null 2>"$P/err"
		st=$?
		check "$kind at the table: $cmd refused with exit 1, not blocked (exit $st)" [ "$st" = 1 ]
	done
	check "$kind: the message says it is not a regular file" grep -q "not a regular file" "$P/err"
	# It is never even opened: opening a device node can act on the device.
	rm -f "$P/opens"
	env FAULT_CALLS=openat FAULT_LOG="$P/opens" LD_PRELOAD="$SHIM $NSSW" NSS_WRAPPER_PASSWD="$W/passwd" \
		NSS_WRAPPER_GROUP="$W/group" FAULT_PROG=slots-admin timeout 10 "$SLOTS_ADMIN" --config "$W/slots.conf" \
		status >/dev/null 2>&1
	# (the shim creates its log when it loads: a missing log means nothing was watched)
	check "$kind: status never opens it" sh -c 'test -f "$1" && ! grep -q " slots.json$" "$1"' sh "$P/opens"
}
mkfifo "$TABLE"
not_regular "a FIFO"
# A writer on the FIFO would make a blocking open return: none is there, so a block is a hang.
rm -f "$TABLE"
mknod "$TABLE" c 1 5
not_regular "a character device (/dev/zero's numbers)"
rm -f "$TABLE"
if mknod "$TABLE" b 7 200; then not_regular "a block device"; else not_ok "mknod of a block device at the table"; fi
rm -f "$TABLE"
python3 -c 'import socket,sys; socket.socket(socket.AF_UNIX).bind(sys.argv[1])' "$TABLE" && not_regular "a socket"
rm -f "$TABLE"
mkdir "$TABLE"
not_regular "a folder"
rmdir "$TABLE"
mv "$P/table.moved" "$TABLE"
mkfifo "$P/fifo.conf"
check_exit "a FIFO as the config: refused (exit 2), not blocked" 2 timeout 10 "$SLOTS_ADMIN" --config "$P/fifo.conf" status 2>/dev/null

# ---- a slot's home and state folder, released ----
# bob holds slot02; its home and state are links to a victim folder.
for d in home state; do
	rm -rf "$W/s/slots/$d/slot02"
	ln -s "$V/dir" "$W/s/slots/$d/slot02"
done
admin_in "$W" release bob >"$P/out" 2>"$P/err"
st=$?
echo "# release with a symlinked home and state folder: exit $st: $(head -n 2 "$P/err" | tr '\n' ' ')"
check "a symlinked home and state folder are not followed by release (the victim folder keeps its files, owner, mode)" victims_intact
check "release refuses the linked home (exit 1), naming it as a symbolic link" \
	sh -c '[ "$1" = 1 ] && grep -q "home/slot02: cannot open: .*(a symbolic link)" "$2"' sh "$st" "$P/err"
check "and leaves slot02 pending, the links in place" \
	sh -c '[ -L "$1/home/slot02" ] && grep -q "\"pending\"" "$2"' sh "$W/s/slots" "$TABLE"
check_exit "status --json still works" 0 quiet admin_in "$W" status --json
check_exit "status still works" 0 quiet admin_in "$W" status

# ---- a component of a user's tree ----
ln -s "$V/dir" "$W/s/docs/_users/erin"
admin_in "$W" assign erin >"$P/out" 2>"$P/err"
st=$?
echo "# assign with the user's tree a symlink: exit $st: $(head -n 1 "$P/err")"
check "assign refuses the symlinked tree (exit 1) and says so" \
	sh -c '[ "$1" = 1 ] && grep -q "_users/erin: is a symbolic link" "$2"' sh "$st" "$P/err"
check "a symlinked user tree is not followed by assign (no chgrp, no chmod of the victim)" victims_intact
check_exit "release erin: exit 0 (the linked tree is not hers to walk)" 0 quiet admin_in "$W" release erin
check "nor by release" victims_intact
rm -f "$W/s/docs/_users/erin"
# A link inside a user's tree.
mkdir -p "$W/s/docs/_users/frank/work"
ln -s "$V/file" "$W/s/docs/_users/frank/work/link-to-file"
ln -s "$V/dir" "$W/s/docs/_users/frank/link-to-dir"
chown -R -h "$SVC_UID:$SVC_UID" "$W/s/docs/_users/frank"
check_exit "assign frank, whose tree holds links: exit 0" 0 quiet admin_in "$W" assign frank
check "links inside a user's tree are not followed by assign" victims_intact
check "and are still links" [ -L "$W/s/docs/_users/frank/work/link-to-file" ]
check_exit "release frank: exit 0" 0 quiet admin_in "$W" release frank
check "nor by release" victims_intact
# The folder that holds the trees is a link.
mv "$W/s/docs/_users" "$W/s/docs/_users.real"
ln -s "$V/dir" "$W/s/docs/_users"
admin_in "$W" assign gina >"$P/out" 2>"$P/err"
st=$?
echo "# assign with _users a symlink: exit $st: $(head -n 1 "$P/err")"
check "assign refuses the symlinked _users (exit 1) and says so" \
	sh -c '[ "$1" = 1 ] && grep -q "_users: .*is a symbolic link" "$2"' sh "$st" "$P/err"
check "a symlinked _users is not followed" victims_intact
check_exit "release gina: exit 0" 0 quiet admin_in "$W" release gina
check "nor by release" victims_intact
rm -f "$W/s/docs/_users"
mv "$W/s/docs/_users.real" "$W/s/docs/_users"

# ---- slots-provision: a release folder, a home, a state folder ----
if rel_have_provision; then
	R=$SLOTS_SCRATCH/root
	rel_example_image "$R"
	rel_example_conf 2 "$P/prov.conf"
	rel=$R/opt/video-studio/releases
	# A release folder that is a link, to a folder of the image and to one outside it.
	mkdir -p "$R/victim/bin"
	echo x >"$R/victim/bin/slot-exec"
	chmod 0700 "$R/victim" "$R/victim/bin" "$R/victim/bin/slot-exec"
	ln -s /victim "$rel/evil-in-image"
	ln -s "$V/dir" "$rel/evil-outside"
	ln -s "$V/file" "$rel/2026.11.01/bin/evil-launcher"
	mkdir -p "$R/var/lib/slots/video-studio/home"
	ln -s "$V/dir" "$R/var/lib/slots/video-studio/home/slot01"
	rel_snap "$R/victim" "$P/image-victim.snap"
	"$SLOTS_PROVISION" --root "$R" --config "$P/prov.conf" >"$P/out" 2>"$P/err"
	st=$?
	echo "# slots-provision with planted links: exit $st; $(grep -c . "$P/err") lines on stderr"
	check "slots-provision refuses a symlinked home (exit 1)" [ "$st" = 1 ]
	check "and says so" grep -q "slot01" "$P/err"
	check "the victims outside the image are untouched" victims_intact
	rel_snap "$R/victim" "$P/image-victim.now"
	check "the victim inside the image is untouched" cmp -s "$P/image-victim.snap" "$P/image-victim.now"
	rm -f "$R/var/lib/slots/video-studio/home/slot01"
	"$SLOTS_PROVISION" --root "$R" --config "$P/prov.conf" >"$P/out" 2>"$P/err"
	st=$?
	echo "# and without the home link: exit $st"
	check "without the home link, slots-provision finishes (exit 0)" [ "$st" = 0 ]
	check "release folders that are links are not followed (no o+x on their targets)" victims_intact
	rel_snap "$R/victim" "$P/image-victim.now"
	check "the victim inside the image is untouched" cmp -s "$P/image-victim.snap" "$P/image-victim.now"
	check "the links are still links" [ -L "$rel/evil-in-image" ] && [ -L "$rel/evil-outside" ]
	# The state folder as a link.
	rm -rf "$R/var/lib/slots/video-studio/state/slot02"
	ln -s "$V/dir" "$R/var/lib/slots/video-studio/state/slot02"
	check_exit "a symlinked state folder: slots-provision refuses (exit 1)" 1 \
		"$SLOTS_PROVISION" --root "$R" --config "$P/prov.conf" >/dev/null 2>&1
	check "and does not follow it" victims_intact
	# The account files as links.
	rm -f "$R/var/lib/slots/video-studio/state/slot02"
	mv "$R/etc/passwd" "$R/etc/passwd.real"
	ln -s /etc/passwd.real "$R/etc/passwd"
	cp -p "$R/etc/passwd.real" "$P/passwd.before"
	sed 's/"slots": 2,/"slots": 3,/' "$P/prov.conf" >"$P/prov3.conf"
	check_exit "/etc/passwd a symlink: slots-provision refuses (exit 1)" 1 \
		"$SLOTS_PROVISION" --root "$R" --config "$P/prov3.conf" >/dev/null 2>&1
	check "and its target is unchanged" cmp -s "$R/etc/passwd.real" "$P/passwd.before"
	check "and is still a link" [ -L "$R/etc/passwd" ]
fi

check "in the end, every victim is untouched" victims_intact
slots_done
