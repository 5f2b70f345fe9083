#!/usr/bin/env python3
"""Snapshots of a folder tree for the reliability tests: what a crash may leave, compared.

  snap.py save ROOT OUT          every entry under ROOT: type, owner, group, mode, ACL, content hash
  snap.py same A B               exit 0 when both snapshots are equal; otherwise print the differences
  snap.py between ROOT P R [--atomic REL]... [--also REL=FILE]...
        checks ROOT as a crash may leave it, between the snapshots P (before) and R (after a
        complete run): every regular file has its content, its owner and its mode each from
        P or from R; an --atomic file (the table, an account file) is exactly as in P or as
        in R, all four together, or absent where one of them has it absent; --also adds a
        third allowed content for REL (a release left "cleanup": "pending"); --json FILE
        checks that FILE holds valid JSON (a status --json taken in the same state);
        --narrowing REL also accepts REL's content and owner from P or R with a mode that grants
        nothing P's and R's modes do not both grant (an owner and mode repaired in place).  Directories may
        be half made (a create with mode 0 before its chown and chmod) and are not checked.
        Temp files of the replace pattern (".<name>.XXXXXXXXXXXX") and release's own names beside
        a slot's folders and mailbox (".slotNN.slots-fresh", "-old", "-new"), with what is in them
        (the old folder swapped out, being emptied), are allowed and counted.
        Prints "temps N"; exit 1 with the violations listed otherwise.
  snap.py serve IN OUT           answers the commands above, one per request, in one process
        (the fault and crash tests ask hundreds of times; a python start costs more than the
        walk): a request is the arguments, one a line, written to the FIFO IN; the answer,
        on the FIFO OUT, is each line of output as "o LINE", then "rc STATUS".
"""
import contextlib
import hashlib
import io
import json
import os
import re
import stat
import sys

TEMP = re.compile(r"^\.(.+?)-?\.[0-9a-f]{12}$")
# Release's own names beside a slot's folders and its mailbox (the fresh folder, the old one
# swapped out, the new mailbox): a kill may leave one; the next release removes it.
RELEASE_TEMP = re.compile(r"^\.slot[0-9]+\.slots-(fresh|old|new)$")


def entry(path):
    st = os.lstat(path)
    e = {"uid": st.st_uid, "gid": st.st_gid, "mode": "%04o" % stat.S_IMODE(st.st_mode)}
    try:
        acl = os.getxattr(path, "system.posix_acl_access", follow_symlinks=False)
        e["acl"] = acl.hex()
    except OSError:
        pass
    if stat.S_ISREG(st.st_mode):
        e["type"] = "file"
        with open(path, "rb") as f:
            e["sha256"] = hashlib.sha256(f.read()).hexdigest()
    elif stat.S_ISDIR(st.st_mode):
        e["type"] = "dir"
    elif stat.S_ISLNK(st.st_mode):
        e["type"] = "link"
        e["target"] = os.readlink(path)
    elif stat.S_ISFIFO(st.st_mode):
        e["type"] = "fifo"
    else:
        e["type"] = "other"
    return e


# The table's index names the table file's inode and change time, which no two runs share;
# a reader believes it only when it names the table as it is (test-table-index), so it is
# no part of a world to compare.
INDEX = "slots.json.index"


def save(root):
    snap = {}
    for dirpath, dirnames, filenames in os.walk(root):
        for name in dirnames + filenames:
            if name == INDEX:
                continue
            p = os.path.join(dirpath, name)
            snap[os.path.relpath(p, root)] = entry(p)
    return snap


def load(path):
    with open(path) as f:
        return json.load(f)


def diff(a, b):
    out = []
    for k in sorted(set(a) | set(b)):
        if a.get(k) != b.get(k):
            out.append("%s: %s != %s" % (k, a.get(k), b.get(k)))
    return out


def file_hash(path):
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


def narrower(mode, states):
    """True when mode grants nothing that one of the states does not grant."""
    m = int(mode, 8)
    return all(m & ~int(s["mode"], 8) == 0 for s in states)


def between(root, p, r, atomic, also, narrowing):
    now = save(root)
    bad = []
    temps = 0
    for k in sorted(set(now) | set(p) | set(r)):
        cur, before, after = now.get(k), p.get(k), r.get(k)
        states = [s for s in (before, after) if s is not None]
        if cur is None:
            # Gone: fine when one of the two states has it gone, or it is a folder being re-made.
            if before is not None and after is not None and before["type"] != "dir":
                bad.append("%s: lost (it is there before and after)" % k)
            continue
        if not states:
            if (cur["type"] == "file" and TEMP.match(os.path.basename(k))) or \
                    any(RELEASE_TEMP.match(part) for part in k.split("/")):
                temps += 1
            else:
                bad.append("%s: appeared but is in neither snapshot: %s" % (k, cur))
            continue
        if cur["type"] == "dir" and all(s["type"] == "dir" for s in states):
            continue
        owners = [(s["uid"], s["gid"]) for s in states]
        modes = [(s["mode"], s.get("acl")) for s in states]
        if k in also and cur.get("sha256") == also[k] and (cur["uid"], cur["gid"]) in owners and \
                (cur["mode"], cur.get("acl")) in modes:
            continue
        if k in narrowing and cur.get("sha256") in [s.get("sha256") for s in states] and \
                (cur["uid"], cur["gid"]) in owners and narrower(cur["mode"], states):
            continue
        if k in atomic:
            if cur not in states:
                bad.append("%s: torn or mis-owned: %s; before %s; after %s" % (k, cur, before, after))
            continue
        for field in ("type", "sha256", "target"):
            if cur.get(field) not in [s.get(field) for s in states]:
                bad.append("%s: %s is %s, neither before's nor after's" % (k, field, cur.get(field)))
        if (cur["uid"], cur["gid"]) not in owners:
            bad.append("%s: owner %s:%s is neither before's nor after's" % (k, cur["uid"], cur["gid"]))
        if (cur["mode"], cur.get("acl")) not in modes:
            bad.append("%s: mode %s is neither before's nor after's" % (k, cur["mode"]))
    for line in bad:
        print(line)
    print("temps %d" % temps)
    return not bad


def serve(fifo_in, fifo_out):
    while True:
        with open(fifo_in) as f:
            args = f.read().split("\n")[:-1]
        out = io.StringIO()
        try:
            with contextlib.redirect_stdout(out):
                rc = main(["snap.py"] + args)
        except SystemExit as err:
            out.write("%s\n" % err)
            rc = 2
        except Exception as err:  # noqa: BLE001 - told to the asker, who fails on it
            out.write("snap.py %s: %r\n" % (" ".join(args), err))
            rc = 2
        with open(fifo_out, "w") as f:
            for line in out.getvalue().splitlines():
                f.write("o %s\n" % line)
            f.write("rc %d\n" % rc)


def main(argv):
    if len(argv) == 4 and argv[1] == "serve":
        return serve(argv[2], argv[3])
    if len(argv) >= 3 and argv[1] == "save":
        with open(argv[3], "w") as f:
            json.dump(save(argv[2]), f, sort_keys=True)
        return 0
    if len(argv) == 4 and argv[1] == "same":
        d = diff(load(argv[2]), load(argv[3]))
        for line in d[:40]:
            print(line)
        return 1 if d else 0
    if len(argv) >= 5 and argv[1] == "between":
        atomic, also, narrowing = set(), {}, set()
        rest = argv[5:]
        while rest:
            if rest[0] == "--atomic":
                atomic.add(rest[1])
            elif rest[0] == "--narrowing":
                narrowing.add(rest[1])
            elif rest[0] == "--json":
                # A file that must hold valid JSON (a status --json taken in the same state).
                try:
                    with open(rest[1]) as f:
                        json.load(f)
                except ValueError as err:
                    print("%s: not valid JSON: %s" % (rest[1], err))
                    return 1
            elif rest[0] == "--also":
                rel, _, path = rest[1].partition("=")
                also[rel] = file_hash(path)
            else:
                raise SystemExit("unknown option " + rest[0])
            rest = rest[2:]
        return 0 if between(argv[2], load(argv[3]), load(argv[4]), atomic, also, narrowing) else 1
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))
