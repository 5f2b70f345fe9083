/* Ending every process of one account as root, so that the account cannot fight back. */
#pragma once

#include <stdbool.h>
#include <sys/types.h>

#include "error.h"

/* One process as /proc/<pid>/status shows it. */
struct slots_proc {
        pid_t pid;
        char state;                     /* R S D T t Z X ... */
        unsigned long uid[4];           /* real, effective, saved, file system */
        unsigned long threads;
        char comm[64];
};

/*
 * Parses the text of /proc/<pid>/status into p (pid is left alone).  Returns 0,
 * or -EBADMSG when the State or Uid line is missing.
 */
int slots_proc_parse(const char *text, struct slots_proc *p);

/* The account may signal it itself: its real or saved uid is uid (kill(2)'s rule). */
bool slots_proc_signallable(const struct slots_proc *p, uid_t uid);

/* It acts as uid in any way: real, effective, saved or file-system uid. */
bool slots_proc_of(const struct slots_proc *p, uid_t uid);

/* It runs nothing and never will again: a zombie (not a zombie leader with live threads) or dead. */
bool slots_proc_dead(const struct slots_proc *p);

/* It cannot run user code now: stopped, traced, in uninterruptible sleep, or dead. */
bool slots_proc_held(const struct slots_proc *p);

#define SLOTS_PROCS_SHOWN 8

struct slots_procs_report {
        unsigned rounds;                /* scans of /proc */
        unsigned long stopped;          /* SIGSTOPs sent */
        unsigned long killed;           /* SIGKILLs sent */
        long elapsed_ms;
        unsigned survivors;             /* processes of uid left at the end */
        struct slots_proc shown[SLOTS_PROCS_SHOWN];
};

/*
 * Ends every process of uid, as root (the account's own kill(-1) cannot reach
 * this process): first SIGSTOP in rounds over /proc until none of them runs
 * (a stopped process can neither fork nor signal), then SIGKILL to each, then
 * again from the start while some are left, until timeout_ms.  Only processes
 * the account could signal itself are signalled (real or saved uid), each
 * through a pidfd opened before its status is read and checked alive after,
 * so a pid reused by another process is never signalled.  A process that acts
 * as uid but is not the account's (say a root daemon with effective uid uid)
 * is never signalled and counts as a survivor.  Refuses uid 0 (-EINVAL).
 * Returns 0 when none is left, -EBUSY naming the survivors (rep->shown), or
 * -errno.  The process table is the one of this PID namespace's /proc.
 */
int slots_end_processes(uid_t uid, int timeout_ms, struct slots_procs_report *rep, struct slots_error *e);
