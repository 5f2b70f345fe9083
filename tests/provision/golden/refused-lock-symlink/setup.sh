# The account files lock a symlink (to a file the lock would create or truncate elsewhere).
rm "$ROOT/etc/.pwd.lock"
ln -s /etc/passwd "$ROOT/etc/.pwd.lock"
