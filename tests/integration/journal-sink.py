#!/usr/bin/env python3
"""A stand-in for journald's native socket: binds PATH, and for each datagram (the
protocol of sd_journal_sendv: "NAME=value\\n", or "NAME\\n" + 64-bit little-endian
length + value + "\\n" for a value with a newline; an entry too big for a datagram comes
as a sealed memfd passed with SCM_RIGHTS, as journald takes it) appends one JSON
object to OUT, a field seen twice as a list.  Writes PATH.ready once listening; runs until killed."""
import json
import os
import socket
import struct
import sys


def parse(data):
    fields = {}
    i = 0
    while i < len(data):
        nl = data.index(b"\n", i)
        line = data[i:nl]
        if b"=" in line:
            name, value = line.split(b"=", 1)
            i = nl + 1
        else:
            name = line
            (n,) = struct.unpack("<Q", data[nl + 1:nl + 9])
            value = data[nl + 9:nl + 9 + n]
            i = nl + 9 + n + 1
        key, val = name.decode(), value.decode("utf-8", "backslashreplace")
        if key in fields:
            old = fields[key]
            fields[key] = (old if isinstance(old, list) else [old]) + [val]
        else:
            fields[key] = val
    return fields


def main():
    path, out = sys.argv[1], sys.argv[2]
    os.makedirs(os.path.dirname(path), exist_ok=True)
    s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    s.bind(path)
    os.chmod(path, 0o666)
    open(path + ".ready", "w").close()
    while True:
        data, fds, _, _ = socket.recv_fds(s, 1 << 20, 4)
        for fd in fds:
            data += os.pread(fd, os.fstat(fd).st_size, 0)
            os.close(fd)
        with open(out, "a") as f:
            f.write(json.dumps(parse(data)) + "\n")


main()
