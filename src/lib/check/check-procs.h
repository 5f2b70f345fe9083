/*
 * The processes of a run of sudo as /proc shows them, the kill as the slot, and the end of
 * what a run left (check-procs.c): what check-chain.c and check-kill.c share below them.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "child.h"

struct kproc {
        pid_t pid, ppid, pgrp, sid;
        uid_t uid;
        char state;
        unsigned long long start;       /* since boot, in clock ticks: the pid's own, not a reuse */
        char comm[32];
};

/* Reads a /proc/PID/stat line (its owner uid) into p: false when it is not one. */
bool check_kproc_parse(const char *buf, uid_t uid, struct kproc *p);

/*
 * The live processes of all (n_all of them) that descend from self, at any depth, into out
 * (room for n_all): their number.  Zombies are not live; a loop of parents ends the walk.
 */
size_t check_kproc_descendants(const struct kproc *all, size_t n_all, pid_t self, struct kproc *out);

/* Reads /proc/PID/stat (name: its folder) into p, its uid the owner of the file; false when it is gone. */
bool check_proc_read(const char *name, struct kproc *p);

/* Every live process self started, at any depth (self a child subreaper): *n of them, malloc'ed; NULL when none. */
struct kproc *check_proc_run(pid_t self, size_t *n);

/* Whom a run of sudo is for, as its helper ends what the run left. */
struct run_slot {
        const char *sudo, *slot;
        uid_t slot_uid;
        int stage_ms;           /* each stage's deadline, the helper's kills after the run among them */
        int report;             /* in the helper: the write end of its report's pipe (check_run_helped) */
};


/* What a run's helper could not end, for check as root to end by pidfd (smaller than PIPE_BUF). */
struct run_left {
        unsigned n;
        struct {
                pid_t pid;
                unsigned long long start;       /* the pid's start time: that process, not a reuse */
        } p[32];
};

/*
 * In a run's helper, a child subreaper: ends each live process of the slot it
 * started, at any depth, with the drop-in's KILL for each process group, within one stage;
 * left gets what still lives.
 */
void check_run_end(const struct run_slot *w, struct run_left *left);

/* As root: ends each process of left that is still that one (its start time) and slot_uid's, by pidfd. */
void check_run_end_left(const struct run_left *left, uid_t slot_uid);

/* The live processes of the slot the run started, in group when in_group, else outside it (group 0: all). */
size_t check_run_of_slot(const struct run_slot *w, pid_t group, bool in_group, struct kproc *out, size_t max);

/* Waits through pidfds until no process of the slot is left in group (0: anywhere), ms at most; else *who is one. */
bool check_group_ended(const struct run_slot *w, pid_t group, pid_t command, int ms, struct kproc *who);

/* sudo -n -u SLOT kill -s SIG -- -GROUP for ms at most: its status (0..255) or -errno; err its stderr. */
int check_kill_sudo(const struct run_slot *w, const char *sig, pid_t group, int ms, char *err, size_t size);
