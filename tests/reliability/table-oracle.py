#!/usr/bin/env python3
"""What the slot table must look like after one operation, computed without slots-admin.

  table-oracle.py assign  OLD SLOT USER SINCE     OUT
  table-oracle.py pending OLD SLOT RELEASED       OUT   (the user leaves; "cleanup": "pending")
  table-oracle.py remove  OLD SLOT                OUT
  table-oracle.py validate FILE POOL               a valid table: version 1, slots in the pool,
                                                   no user in two slots, valid ids

OLD is "-" for a table that does not exist yet.  OUT is written the way slots.json(5) says a table
is written: sorted keys, two-space indent, a final newline.  Keys an entry has that this
version does not know are kept.
"""
import json
import re
import sys

USER = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9._-]{0,63}$")
SLOT = re.compile(r"^slot(0[1-9]|[1-9][0-9]{1,3})$")


def load(path):
    if path == "-":
        return {"slots": {}, "version": 1}
    with open(path) as f:
        return json.load(f)


def dump(t, path):
    with open(path, "w") as f:
        f.write(json.dumps(t, indent=2, sort_keys=True, ensure_ascii=False) + "\n")


def validate(t, pool):
    assert isinstance(t, dict) and t.get("version") == 1, "version"
    assert isinstance(t.get("slots"), dict), "slots"
    seen = {}
    for slot, e in t["slots"].items():
        assert SLOT.match(slot) and int(slot[4:]) <= pool, "slot %s outside the pool" % slot
        assert isinstance(e, dict), slot
        if "user" in e:
            u = e["user"]
            assert isinstance(u, str) and USER.match(u), "bad user in %s" % slot
            assert u not in seen, "user in %s and %s" % (seen.get(u), slot)
            seen[u] = slot
            assert isinstance(e.get("since"), str), "since of %s" % slot
        else:
            assert e.get("cleanup") == "pending" and isinstance(e.get("released"), str), slot


def main(a):
    op = a[1]
    if op == "validate":
        with open(a[2]) as f:
            validate(json.load(f), int(a[3]))
        return 0
    t = load(a[2])
    slot = a[3]
    if op == "assign":
        e = t["slots"].setdefault(slot, {})
        for k in ("cleanup", "released"):
            e.pop(k, None)
        e["user"], e["since"] = a[4], a[5]
        out = a[6]
    elif op == "pending":
        e = t["slots"][slot]
        e.pop("user", None)
        e.pop("since", None)
        e["cleanup"], e["released"] = "pending", a[4]
        out = a[5]
    elif op == "remove":
        t["slots"].pop(slot, None)
        out = a[4]
    else:
        raise SystemExit("unknown operation " + op)
    dump(t, out)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
