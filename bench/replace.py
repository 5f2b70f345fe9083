#!/usr/bin/python3
"""The admin-script way of assigning a slot: load the JSON table, give USER the
lowest free slot of the pool, write a temp file next to it and os.replace it.

Usage: replace.py TABLE POOL USER [--no-fsync]

By default it is as durable as slots-admin (fsync of the file and of the
directory, owner and mode of the old table kept), so the comparison is about
speed and not about skipped guarantees.  --no-fsync is the common shortcut
(no fsync at all), shown for reference.
"""
import json
import os
import sys
import tempfile
import time


def main():
    table, pool, user = sys.argv[1], int(sys.argv[2]), sys.argv[3]
    durable = "--no-fsync" not in sys.argv[4:]
    with open(table) as f:
        doc = json.load(f)
    slots = doc["slots"]
    if any(e.get("user") == user for e in slots.values()):
        return 0
    for n in range(1, pool + 1):
        name = "slot%02d" % n
        if name not in slots:
            break
    else:
        print("pool full", file=sys.stderr)
        return 1
    slots[name] = {"user": user,
                   "since": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}
    text = json.dumps(doc, sort_keys=True, indent=2) + "\n"
    st = os.stat(table)
    folder = os.path.dirname(os.path.abspath(table))
    fd, tmp = tempfile.mkstemp(dir=folder, prefix="." + os.path.basename(table) + ".")
    try:
        os.write(fd, text.encode())
        if durable:
            os.fsync(fd)
        os.fchown(fd, st.st_uid, st.st_gid)
        os.fchmod(fd, st.st_mode & 0o7777)
        os.close(fd)
        os.replace(tmp, table)
    except BaseException:
        os.unlink(tmp)
        raise
    if durable:
        dfd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY)
        os.fsync(dfd)
        os.close(dfd)
    print(name)
    return 0


if __name__ == "__main__":
    sys.exit(main())
