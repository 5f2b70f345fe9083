#!/usr/bin/env python3
"""Concurrent slots-admin: WORKERS threads of OPS random assign/release operations each over one
table, with READERS threads running "status --json" all the while, then a replay that checks
every result.  Used by concurrency.sh, which sets up the world and the environment:

  concurrency.py WORKDIR TABLE POOL WORKERS OPS READERS USERS-PER-WORKER SEED -- ADMIN-COMMAND...

Every slots-admin runs through tests/fault/faultshim.so with FAULT_COMMIT_NAME=slots.json and
FAULT_TAG=<op id>: after each rename of the table the shim appends "<op id> <monotonic time>"
to WORKDIR/commits, under the table lock, so the file is the order in which the table
changed.  The replay walks that order and checks, with the table state at each point:

  * each assign that succeeded took a slot that was free (the lowest free one when no slot
    was given) for a user who held none; each release freed the slot its user held, through
    "cleanup": "pending"; no slot ever had two users and no user two slots;
  * every refusal (exit 1) is one slots-admin(8) documents and was true of some state the table went
    through while the command ran (held by another user, the user already holds one, the pool
    is full, outside the pool); every no-op (exit 0 without a change) too;
  * every status --json a reader got is valid JSON of the documented shape and shows exactly one
    of the states the table went through while that reader ran: never a torn or mixed table;
  * the final table is exactly the replayed state.
"""
import json
import os
import random
import re
import subprocess
import sys
import threading
import time

SLOT_RE = re.compile(r"^slot(\d{2,4})$")


def slot_name(n):
    return "slot%02d" % n


class Run:
    def __init__(self, workdir, pool, workers, ops, readers, users, seed, admin):
        self.workdir, self.pool, self.workers, self.ops = workdir, pool, workers, ops
        self.readers, self.users, self.seed, self.admin = readers, users, seed, admin
        self.results = []           # one dict per operation
        self.reads = []             # one dict per status --json
        self.lock = threading.Lock()
        self.done = threading.Event()

    def run_admin(self, tag, args):
        env = dict(os.environ, FAULT_TAG=tag)
        t0 = time.monotonic_ns()
        p = subprocess.run(self.admin + args, env=env, capture_output=True, timeout=120)
        t1 = time.monotonic_ns()
        return p, t0, t1

    def worker(self, w):
        rnd = random.Random(self.seed * 1000 + w)
        users = ["w%02d-u%d" % (w, i) for i in range(self.users)]
        for i in range(self.ops):
            u = rnd.choice(users)
            r = rnd.random()
            if r < 0.30:
                args = ["assign", u]
            elif r < 0.60:
                # A given slot, now and then one outside the pool.
                args = ["assign", u, slot_name(rnd.randint(1, self.pool + 2))]
            elif r < 0.92:
                args = ["release", u]
            else:
                args = ["release", "--slot", slot_name(rnd.randint(1, self.pool))]
            tag = "w%02d-%05d" % (w, i)
            p, t0, t1 = self.run_admin(tag, args)
            res = {"tag": tag, "args": args, "exit": p.returncode, "out": p.stdout.decode(errors="replace"),
                   "err": p.stderr.decode(errors="replace"), "t0": t0, "t1": t1}
            with self.lock:
                self.results.append(res)

    def reader(self, k):
        n = 0
        while not self.done.is_set():
            tag = "r%02d-%05d" % (k, n)
            p, t0, t1 = self.run_admin(tag, ["status", "--json"])
            with self.lock:
                self.reads.append({"tag": tag, "exit": p.returncode, "out": p.stdout.decode(errors="replace"),
                                   "err": p.stderr.decode(errors="replace"), "t0": t0, "t1": t1})
            n += 1

    def go(self):
        ws = [threading.Thread(target=self.worker, args=(w,)) for w in range(self.workers)]
        rs = [threading.Thread(target=self.reader, args=(k,)) for k in range(self.readers)]
        start = time.monotonic()
        for t in ws + rs:
            t.start()
        for t in ws:
            t.join()
        self.done.set()
        for t in rs:
            t.join()
        return time.monotonic() - start


def ns(text):
    sec, _, frac = text.partition(".")
    return int(sec) * 10**9 + int(frac)


def load_commits(path):
    """(op tag, time before the rename, time after it) in the order the table changed."""
    out = []
    if os.path.exists(path):
        with open(path) as f:
            for line in f:
                tag, before, after = line.split()
                out.append((tag, ns(before), ns(after)))
    return out


def frozen(state):
    return tuple(sorted(state.items()))


def lowest_free(state, pool):
    for n in range(1, pool + 1):
        if slot_name(n) not in state:
            return slot_name(n)
    return None


def holder_slot(state, user):
    for s, v in state.items():
        if v == user:
            return s
    return None


class Replay:
    """The table's states in commit order, and the checks of each operation against them."""

    def __init__(self, run, commits):
        self.run = run
        self.pool = run.pool
        self.errors = []
        self.ops = {r["tag"]: r for r in run.results}
        # states[i]: the table after commit i (states[0]: the empty table it starts as);
        # visible[i]: from when state i may be seen (just before its rename), replaced[i]:
        # until when (just after the next rename).
        self.states, self.visible, self.replaced = [], [0], []
        state = {}
        self.states.append(frozen(state))
        seen = {}
        for tag, before, after in commits:
            op = self.ops.get(tag)
            if op is None:
                self.err("commit by %s, which is no operation of this run" % tag)
                continue
            k = seen.get(tag, 0)
            seen[tag] = k + 1
            self.apply(op, k, state)
            self.states.append(frozen(state))
            self.visible.append(before)
            self.replaced.append(after)
            users = [v for v in state.values() if v != "PENDING"]
            if len(users) != len(set(users)):
                self.err("after %s a user holds two slots: %s" % (tag, state))
        self.replaced.append(float("inf"))
        self.commits_of = seen
        self.final = state

    def err(self, msg):
        if len(self.errors) < 50:
            self.errors.append(msg)
        else:
            self.errors.append(None)

    def apply(self, op, k, state):
        a = op["args"]
        tag = op["tag"]
        if op["exit"] != 0:
            self.err("%s %s changed the table but exited %d" % (tag, a, op["exit"]))
        if a[0] == "assign":
            if k > 0:
                self.err("%s %s: an assign committed twice" % (tag, a))
                return
            got = op["out"].strip()
            u = a[1]
            if not SLOT_RE.match(got):
                self.err("%s %s: printed %r, not a slot" % (tag, a, got))
                return
            if got in state:
                self.err("%s %s: took %s, which %s held" % (tag, a, got, state[got]))
            if holder_slot(state, u):
                self.err("%s %s: %s already held %s" % (tag, a, u, holder_slot(state, u)))
            if len(a) == 3 and got != a[2]:
                self.err("%s %s: asked for %s, got %s" % (tag, a, a[2], got))
            if len(a) == 2 and got != lowest_free(state, self.pool):
                self.err("%s %s: got %s, but the lowest free slot was %s" % (tag, a, got,
                                                                            lowest_free(state, self.pool)))
            state[got] = u
        else:
            m = re.match(r"^(slot\d+) released$", op["out"].strip())
            if not m:
                self.err("%s %s: committed but printed %r" % (tag, a, op["out"]))
                return
            s = m.group(1)
            if k == 0 and state.get(s) == "PENDING" or k == 1:
                if state.get(s) != "PENDING":
                    self.err("%s %s: finished %s, which was %s" % (tag, a, s, state.get(s)))
                state.pop(s, None)
                return
            if a[1] != "--slot" and state.get(s) != a[1]:
                self.err("%s %s: released %s, held by %s" % (tag, a, s, state.get(s)))
            if state.get(s) in (None, "PENDING"):
                self.err("%s %s: released %s, which was %s" % (tag, a, s, state.get(s)))
            state[s] = "PENDING"

    def window(self, t0, t1):
        """The states the table may have shown between t0 and t1."""
        return [dict(s) for s, v, r in zip(self.states, self.visible, self.replaced) if v <= t1 and r >= t0]

    def check_ops(self):
        refusals = {}
        for op in self.run.results:
            a, tag = op["args"], op["tag"]
            ncommits = self.commits_of.get(tag, 0)
            if ncommits:
                if a[0] == "release" and ncommits != 2 and not (a[1] == "--slot" and ncommits == 1):
                    self.err("%s %s: %d commits" % (tag, a, ncommits))
                continue
            states = self.window(op["t0"], op["t1"])
            out, err = op["out"].strip(), op["err"]
            if op["exit"] == 0:
                # A no-op that says so, and was true at some point while it ran.
                if a[0] == "assign":
                    ok = any(holder_slot(s, a[1]) == out and (len(a) == 2 or out == a[2]) for s in states)
                    why = "the same assignment again"
                elif a[1] == "--slot":
                    ok = "is free; nothing to release" in out and any(a[2] not in s for s in states)
                    why = "a free slot"
                else:
                    ok = "holds no slot" in out and any(holder_slot(s, a[1]) is None for s in states)
                    why = "a user without a slot"
                if not ok:
                    self.err("%s %s: exit 0 without a change (%s), which no state allowed: %r" % (tag, a, why, out))
                refusals["no-op: " + why] = refusals.get("no-op: " + why, 0) + 1
                continue
            if op["exit"] != 1:
                self.err("%s %s: exit %d: %s" % (tag, a, op["exit"], err[:300]))
                continue
            if "held by another user" in err:
                kind = "slot held by another user"
                ok = any(s.get(a[2]) not in (None, "PENDING", a[1]) for s in states)
            elif "already holds" in err:
                kind = "user already holds another slot"
                ok = any(holder_slot(s, a[1]) not in (None, a[2] if len(a) == 3 else None) for s in states)
            elif "pool is full" in err:
                kind = "pool full"
                ok = any(lowest_free(s, self.pool) is None for s in states)
            elif "outside the pool" in err:
                kind = "slot outside the pool"
                ok = int(a[-1][4:]) > self.pool
            elif "cleanup pending" in err:
                kind = "slot pending"
                ok = any(s.get(a[2]) == "PENDING" for s in states)
            else:
                kind, ok = "unexpected", False
            if not ok:
                self.err("%s %s: refused (%s), which no state it ran through allowed: %s" % (tag, a, kind,
                                                                                          err.strip()[:300]))
            refusals[kind] = refusals.get(kind, 0) + 1
        return refusals

    def check_reads(self):
        torn = 0
        for rd in self.run.reads:
            try:
                d = json.loads(rd["out"])
            except ValueError as e:
                self.err("%s: status --json is not valid JSON (%s): %r" % (rd["tag"], e, rd["out"][:200]))
                torn += 1
                continue
            if rd["exit"] != 0:
                self.err("%s: status --json exited %d: %s" % (rd["tag"], rd["exit"], rd["err"][:200]))
                continue
            try:
                rows = d["slots"]
                assert [r["slot"] for r in rows] == [slot_name(n) for n in range(1, self.pool + 1)]
                seen = {}
                for r in rows:
                    assert set(r) >= {"slot", "uid", "account", "user", "since"}
                    if r.get("cleanup") == "pending":
                        seen[r["slot"]] = "PENDING"
                    elif r["user"] is not None:
                        seen[r["slot"]] = r["user"]
                users = [v for v in seen.values() if v != "PENDING"]
                assert len(users) == len(set(users)), "a user in two slots"
                assert d["assigned"] == len(users), "assigned count"
                assert d["table"]["ok"] is True, "table owner/mode"
            except (AssertionError, KeyError, TypeError) as e:
                self.err("%s: status --json has a wrong shape (%s)" % (rd["tag"], e))
                continue
            if seen not in self.window(rd["t0"], rd["t1"]):
                self.err("%s: status --json showed a table the replay never went through: %s" % (rd["tag"], seen))
        return torn


def main(argv):
    i = argv.index("--")
    workdir, table_path, pool, workers, ops, readers, users, seed = argv[1:i]
    run = Run(workdir, int(pool), int(workers), int(ops), int(readers), int(users), int(seed), argv[i + 1:])
    secs = run.go()
    commits = load_commits(os.path.join(workdir, "commits"))
    rp = Replay(run, commits)
    refusals = rp.check_ops()
    rp.check_reads()
    with open(table_path) as f:
        table = json.load(f)
    final = {}
    for s, e in table["slots"].items():
        final[s] = e["user"] if "user" in e else "PENDING"
    if final != rp.final:
        rp.err("the final table %s is not the replayed state %s" % (final, rp.final))
    ok_ops = sum(1 for r in run.results if r["exit"] == 0)
    changed = len({c[0] for c in commits})
    print("# %d operations by %d workers in %.1f s (%.0f/s): %d done (%d changed the table, %d commits), "
          "%d refused; %d status --json reads"
          % (len(run.results), run.workers, secs, len(run.results) / secs, ok_ops, changed, len(commits),
             len(run.results) - ok_ops, len(run.reads)))
    for k in sorted(refusals):
        print("#   %-40s %d" % (k, refusals[k]))
    print("# final table: %d assigned, %d pending" % (sum(1 for v in final.values() if v != "PENDING"),
                                                     sum(1 for v in final.values() if v == "PENDING")))
    errors = [e for e in rp.errors if e]
    for e in errors[:30]:
        print("not ok - " + e)
    if None in rp.errors:
        print("# ... more errors left out")
    with open(os.path.join(workdir, "summary.json"), "w") as f:
        json.dump({"operations": len(run.results), "reads": len(run.reads), "commits": len(commits),
                   "refusals": refusals, "errors": len(rp.errors), "seconds": secs}, f)
    return 1 if rp.errors else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
