# A NUL byte in /etc/group (a half-written copy): no account file is rewritten over it.
printf 'broken:x:7\000:\n' >>"$ROOT/etc/group"
