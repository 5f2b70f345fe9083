# A FIFO where the account files lock belongs: never locked through, never waited on.
rm "$ROOT/etc/.pwd.lock"
mkfifo -m 0600 "$ROOT/etc/.pwd.lock"
