#!/bin/sh
# assign prepares the user's tree (slots-admin(8), assign): created if missing, granted to the
# slot's uid by an ACL entry u:slotNN:rwX (folders with its default), no access for the owning
# group or others, every entry of another account the service's first; symlinks never followed, other file systems never
# entered; a failure leaves the assignment standing and the same assign repairs it.  release
# gives the tree back to the service with group bits closed.
. "$top_srcdir/tests/integration/release-lib.sh"

SLOT1_GID=$(gid_of slot01)
U1=$(uid_of slot01)
TREE=$DOCS/_users/alice

# --- docs_root missing: exit 1, the assignment stands, the same assign again finishes it ---
mv "$DOCS" "$S/docs.away"
admin assign alice slot01 >"$S/out" 2>"$S/err"
st=$?
cat "$S/err"
check "assign with docs_root missing exits 1" test "$st" = 1
check "it prints no slot name" test ! -s "$S/out"
check "the error names docs_root" grep -q -F "$DOCS" "$S/err"
check "the error says the assignment stands and to run the same assign again" \
	grep -q "assignment stands.*slots-admin assign alice slot01" "$S/err"
check "the assignment stands" test "$(table_entry slot01 | jq -r .user)" = alice
mv "$S/docs.away" "$DOCS"
check "the same assign again exits 0 and prints slot01" prints slot01 admin assign alice slot01
check "the tree's parent _users is made svc:svc 0711" test "$(stat -c '%U:%G %a' "$DOCS/_users")" = "svc:svc 711"
check "the tree is made svc:svc 0700, then granted (mask rwx)" test "$(stat -c '%U:%G %a' "$TREE")" = "svc:svc 770"
check "the tree's ACL names slot01's uid and nobody's group" \
	test "$(getfacl -acn -- "$TREE" 2>/dev/null | grep . | tr '\n' ' ')" = "user::rwx user:$U1:rwx group::--- mask::rwx other::--- "

# --- an existing tree: groups, modes, owners; symlinks; other file systems ---
mkdir -p "$TREE/a/b" "$TREE/c" "$S/outside/dir"
echo secret >"$S/outside/file"
echo inner >"$S/outside/dir/inner"
chmod 0600 "$S/outside/file"
chmod 0700 "$S/outside/dir"
chmod 0644 "$S/outside/dir/inner"
echo 1 >"$TREE/a/f644"
chmod 0644 "$TREE/a/f644"
echo 2 >"$TREE/a/b/f600"
chmod 0600 "$TREE/a/b/f600"
chown svc "$TREE/a/b/f600"
echo 3 >"$TREE/c/suid"
chmod 04755 "$TREE/c/suid"
echo 4 >"$TREE/f777"
chmod 0777 "$TREE/f777"
mkfifo -m 0600 "$TREE/c/fifo"
chmod 0755 "$TREE/a" "$TREE/c"
chmod 0700 "$TREE/a/b"
ln -s "$S/outside/file" "$TREE/link-file"
ln -s "$S/outside/dir" "$TREE/a/link-dir"
ln -s "$S/outside" "$TREE/c/link-up"
# a symlink of another account's (nobody's) goes to the service, never followed
ln -s /etc/shadow "$TREE/link-shadow"
chown -h nobody:nogroup "$TREE/link-shadow"
# another file system inside the tree, and a bind mount of a folder outside it
mkdir "$TREE/mnt" "$TREE/bind"
mount -t tmpfs -o mode=0705 tmpfs "$TREE/mnt"
echo m >"$TREE/mnt/file"
chmod 0604 "$TREE/mnt/file"
mount --bind "$S/outside/dir" "$TREE/bind"

bind_before=$(stat_all "$S/outside/dir" "$S/outside/dir/inner")
outside_before=$(stat_all "$S/outside/file" "$S/outside/dir" "$S/outside/dir/inner" /etc/shadow "$S/outside")
mnt_before=$(stat_all "$TREE/mnt" "$TREE/mnt/file")
check "assign again (a repair) exits 0" prints slot01 admin assign alice slot01

# everything reached below the tree, except links and the mounts
in_tree() {
	find "$TREE" \( -path "$TREE/mnt" -o -path "$TREE/bind" \) -prune -o ! -type l "$@" -print
}
# ungranted: the entries below the tree without slot01's ACL entry or with access for their group.
ungranted() {
	in_tree | while read -r p; do
		getfacl -cn -- "$p" 2>/dev/null | grep -q "^user:$U1:rw" &&
			getfacl -cn -- "$p" 2>/dev/null | grep -qx 'group::---' || echo "$p"
	done
}
check "every entry grants slot01's uid and nothing to its group" test "$(ungranted | wc -l)" = 0
check "every folder has slot01's entry in its default ACL" \
	test "$(in_tree -type d | while read -r p; do getfacl -cnd -- "$p" 2>/dev/null | grep -q "^user:$U1:rwx" || echo "$p"; done | wc -l)" = 0
check "every folder is 0770 (the mask)" test "$(in_tree -type d ! -perm 0770 | wc -l)" = 0
check "no entry got group slot01" test "$(in_tree -gid "$SLOT1_GID" | wc -l)" = 0
check "every file is g+rw" test "$(in_tree ! -type d ! -perm -0060 | wc -l)" = 0
check "nothing is open to others" test "$(in_tree -perm /0007 | wc -l)" = 0
check "no setuid or setgid file is left" test "$(in_tree ! -type d -perm /6000 | wc -l)" = 0
check "owners stay (svc's file is still svc's)" test "$(stat -c %U "$TREE/a/b/f600")" = svc
check "another account's entry is the service's (root's file too)" test "$(stat -c %U "$TREE/a/f644")" = svc
check "a 0644 file became 0660" test "$(stat -c %a "$TREE/a/f644")" = 660
check "a 0777 file became 0770" test "$(stat -c %a "$TREE/f777")" = 770
check "a 04755 file became 0770" test "$(stat -c %a "$TREE/c/suid")" = 770
check "a FIFO became 0660 with slot01's entry (and assign did not block on it)" \
	test "$(stat -c '%a' "$TREE/c/fifo")" = 660
check "symlink targets outside the tree are unchanged" \
	test "$(stat_all "$S/outside/file" "$S/outside/dir" "$S/outside/dir/inner" /etc/shadow "$S/outside")" = "$outside_before"
check "the symlinks themselves are the service's now, their targets as before" \
	test "$(stat -c '%U:%G %N' "$TREE/link-file" "$TREE/a/link-dir" "$TREE/c/link-up" "$TREE/link-shadow" | grep -vc '^svc:svc ')" = 0 -a \
	"$(readlink "$TREE/link-shadow")" = /etc/shadow
check "another file system inside the tree is not entered" \
	test "$(stat_all "$TREE/mnt" "$TREE/mnt/file")" = "$mnt_before"
check "a bind mount inside the tree is not entered" \
	test "$(stat_all "$S/outside/dir" "$S/outside/dir/inner")" = "$bind_before"

# --- the slot can work in its tree, and nobody else can ---
check "slot01 can write in the tree" runuser -u slot01 -- sh -c "echo x >'$TREE/a/by-slot'"
check "slot01 can read svc's 0600 file (now granted to slot01)" quiet runuser -u slot01 -- cat "$TREE/a/b/f600"
check_fails "a process of slot02 with slot01's group cannot read it" \
	setpriv --reuid slot02 --regid slot01 --clear-groups -- cat "$TREE/a/b/f600"
check_fails "slot02 cannot list the tree" runuser -u slot02 -- ls "$TREE"
check_fails "slot02 cannot list _users" runuser -u slot02 -- ls "$DOCS/_users"

# --- a repair: the same assign again puts back what was changed ---
chmod 0755 "$TREE/a"
chgrp svc "$TREE/a/f644"
chmod 0604 "$TREE/a/f644"
check "the same assign again exits 0" prints slot01 admin assign alice slot01
check "it repaired the folder's mode" test "$(stat -c %a "$TREE/a")" = 770
check "it repaired the file's mode, its group kept" test "$(stat -c '%G %a' "$TREE/a/f644")" = "svc 660"

# --- symlinks on the way to a tree are never followed ---
mkdir -p "$S/elsewhere"
chmod 0700 "$S/elsewhere"
ln -s "$S/elsewhere" "$DOCS/_users/eve"
before=$(stat_all "$S/elsewhere")
admin assign eve slot02 >/dev/null 2>"$S/err"
st=$?
cat "$S/err"
check "assign refuses a tree that is a symlink (exit 1)" test $st = 1
check "the error says it is a symbolic link" grep -q "symbolic link" "$S/err"
check "the link's target is unchanged" test "$(stat_all "$S/elsewhere")" = "$before"
check "release of a user whose tree is a symlink completes" quiet admin release eve
check "the link's target is still unchanged" test "$(stat_all "$S/elsewhere")" = "$before"

# --- a user with no docs_root in the config: assign changes the table only ---
sed 's/"docs_root".*//' "$CONF" >"$S/nodocs.conf"
check "assign without docs_root works" prints slot02 "$SLOTS_ADMIN" --config "$S/nodocs.conf" assign frank
check "and makes no tree" test ! -e "$DOCS/_users/frank"
check "release frank without docs_root" quiet "$SLOTS_ADMIN" --config "$S/nodocs.conf" release frank

# --- depth: any depth is walked (issue 13), with at most 64 folders open at once: the walks
# run with 1,024 descriptors, a third of the levels ---
DEEP=$DOCS/_users/deep
mkdir -p "$DEEP"
# (python: a shell's cd gets slower with every level of a long logical path)
python3 -c 'import os, sys
os.chdir(sys.argv[1])
for i in range(3000):
    os.mkdir("d")
    os.chdir("d")
open("f", "w").write("x")' "$DEEP"
check "a tree 3000 levels deep was made" test "$(find "$DEEP" -name f | wc -l)" = 1
check "assign on a tree 3000 levels deep works with 1,024 descriptors" \
	prints slot03 prlimit --nofile=1024 "$SLOTS_ADMIN" --config "$CONF" assign deep slot03
# (python: the deepest path is longer than PATH_MAX, so it is reached through folder fds)
check "the deepest file is granted to slot03 (u:slot03:rw- in its ACL)" python3 -c 'import os, struct, sys
fd = os.open(sys.argv[1], os.O_RDONLY)
while True:
    try:
        nfd = os.open("d", os.O_RDONLY | os.O_DIRECTORY, dir_fd=fd)
    except FileNotFoundError:
        break
    os.close(fd)
    fd = nfd
f = os.open("f", os.O_RDONLY, dir_fd=fd)
a = os.getxattr(f, "system.posix_acl_access")
ents = [struct.unpack_from("<HHI", a, i) for i in range(4, len(a), 8)]
sys.exit(0 if (2, 6, int(sys.argv[2])) in ents else 1)' "$DEEP" "$(uid_of slot03)"
check "every folder of it is 0770 (the mask)" test "$(find "$DEEP" -type d ! -perm 0770 | wc -l)" = 0
check "release of the deep tree works with 1,024 descriptors" \
	quiet prlimit --nofile=1024 "$SLOTS_ADMIN" --config "$CONF" release deep
check "the deepest file is the service's again" test "$(find "$DEEP" -name f -printf '%g')" = svc
rm -rf "$DEEP"

# --- release gives the tree back to the service ---
before=$(stat_all "$TREE/link-shadow" "$TREE/mnt" "$TREE/mnt/file")
check "release alice exits 0" quiet admin release alice
check "no entry has group slot01" test "$(in_tree -gid "$SLOT1_GID" | wc -l)" = 0
check "every entry has the service group" test "$(in_tree ! -group svc | wc -l)" = 0
check "no entry is owned by slot01" test "$(find "$TREE" -uid "$(uid_of slot01)" | wc -l)" = 0
check "the tree root is svc:svc 0700" test "$(stat -c '%U:%G %a' "$TREE")" = "svc:svc 700"
check "no entry keeps access for its group" test "$(in_tree -perm /0070 | wc -l)" = 0
check "no ACL entry names slot01" test "$(in_tree | while read -r p; do getfacl -cn -- "$p" 2>/dev/null | grep -q ":$U1:" && echo "$p"; done | wc -l)" = 0
check "symlink targets are still unchanged" \
	test "$(stat_all "$S/outside/file" "$S/outside/dir" "$S/outside/dir/inner" /etc/shadow "$S/outside")" = "$outside_before"
check "nobody's symlink and the mount are unchanged" \
	test "$(stat_all "$TREE/link-shadow" "$TREE/mnt" "$TREE/mnt/file")" = "$before"
out=$(runuser -u slot01 -- ls "$TREE" 2>&1)
st=$?
check "slot01 can no longer list the tree" test "$st" != 0
check "because of EACCES (Permission denied)" sh -c 'echo "$1" | grep -q "Permission denied"' _ "$out"
# --- a folder on the way to a tree that a slot owns: refused as the resolver refuses it ---
# The resolver makes the rest of a tree's path; _users, already there, is judged by the owner
# chain every open of a path the service controls gets.  Owned by slot02, it could be swapped.
chown slot02 "$DOCS/_users"
admin assign bob slot02 >"$S/out" 2>"$S/err"
st=$?
cat "$S/err"
check "a folder on the way owned by a slot: assign exits 1" test "$st" = 1
check "the error names the folder and its owner" \
	grep -q "$DOCS/_users: user_tree: owned by uid $(uid_of slot02), not by root or the service" "$S/err"
check "bob's tree was not made" test ! -e "$DOCS/_users/bob"
chown svc "$DOCS/_users"
check "with the folder the service's again, the same assign finishes" prints slot02 admin assign bob slot02
check "bob's tree is there" test -d "$DOCS/_users/bob"
check "release bob exits 0" quiet admin release bob
umount "$TREE/mnt" "$TREE/bind"
slots_done
