/* Ending every process of one account as root, so that the account cannot fight back. */
#pragma once

#include <stdbool.h>
#include <sys/types.h>

#include "error.h"

/* One process as /proc/<pid>/status shows it, and what of one account's identity it carries. */
struct slots_proc {
        pid_t pid;
        pid_t ppid;                     /* its parent, from the PPid line (0 without one) */
        char state;                     /* R S D T t Z X ... */
        unsigned long uid[4];           /* real, effective, saved, file system */
        unsigned long gid[4];           /* the same for the group */
        bool in_group;                  /* its Groups line lists the gid asked about */
        bool userns;                    /* it runs in a user namespace the uid owns (or one below it) */
        bool neighbour;                 /* another account's that holds what a release takes back */
        unsigned long threads;
        signed char nnp;                /* its NoNewPrivs line: 0 or 1, -1 without one */
        char comm[64];
};

/*
 * Parses the text of /proc/<pid>/status into p (pid and userns are left
 * alone); in_group says whether the Groups line lists gid.  Returns 0, or
 * -EBADMSG when the State, Uid or Gid line is missing.
 */
int slots_proc_parse(const char *text, gid_t gid, struct slots_proc *p);

/*
 * The account may end it: its real or saved uid is uid (kill(2)'s rule), it
 * runs in a user namespace the account owns (where the account holds every
 * capability), or it carries gid (real, effective, saved, file system or a
 * supplementary group) and none of its uids is root.
 */
bool slots_proc_signallable(const struct slots_proc *p, uid_t uid, gid_t gid);

/*
 * It carries the identity: any of its uids is uid, it runs in a user namespace
 * of uid's, or it carries gid and none of its uids is root (root needs no
 * slot's group, and su and runuser keep a root parent in the target's groups).
 */
bool slots_proc_of(const struct slots_proc *p, uid_t uid, gid_t gid);

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
        unsigned survivors;             /* processes carrying the identity left at the end */
        struct slots_proc shown[SLOTS_PROCS_SHOWN];
};

/*
 * The calling process at the highest priority (nice -20), ahead of what a slot keeps busy on every
 * CPU; true when raised, with the priority before in *before (setpriority() puts it back).
 */
bool slots_nice_raise(int *before);

/*
 * Ends every process that carries the identity of the account uid with group
 * gid (slots_proc_of), as root (the account's own kill(-1) cannot reach this
 * process): first SIGSTOP in rounds over /proc until none of them runs (a
 * stopped process can neither fork nor signal), then SIGKILL to each, then
 * again from the start while some are left, until timeout_ms.  One pass finds
 * them by the whole identity.  Only processes the account could be said to own
 * are signalled (slots_proc_signallable), each through a pidfd opened before
 * its status is read and checked alive after, so a pid reused by another
 * process is never signalled.  A process that carries the identity but is not
 * the account's (say a root daemon with effective uid uid) is never signalled
 * and counts as a survivor.  Refuses uid or gid 0 (-EINVAL).  Returns 0 when
 * none is left, -EBUSY naming the survivors (rep->shown), or -errno.  The
 * process table is the one of this PID namespace's /proc.
 */
int slots_end_processes(uid_t uid, gid_t gid, int timeout_ms, struct slots_procs_report *rep, struct slots_error *e);

/* Inodes (device and inode number) a release found in what it takes back: a set for the neighbours' look. */
struct slots_held {
        struct slots_inode {
                dev_t dev;
                ino_t ino;
        } *v;
        size_t n, cap;
};

/* Adds an inode to the set: 0, or -ENOMEM. */
int slots_held_add(struct slots_held *h, dev_t dev, ino_t ino);
void slots_held_free(struct slots_held *h);

/*
 * Another account's process that holds something of what a release takes back: any
 * of its uids neither root's nor keep_uid's (the service), and one of its open files
 * (/proc/PID/fd), its working folder, its root or one of its file mappings
 * (/proc/PID/map_files) is an inode of held, compared by device and inode number
 * through the opened file itself (a renamed or unlinked file is the same inode).
 * named() hears of each one sent SIGKILL.
 */
struct slots_neighbours {
        struct slots_held *held;        /* sorted by the call */
        uid_t keep_uid;
        void (*named)(void *data, const struct slots_proc *p);
        void *data;
};

/*
 * slots_end_processes(), and in the same passes every neighbour of nb (above) is
 * stopped and killed as the identity's processes are, through a pidfd, and counted
 * with them.  nb NULL or an empty set: slots_end_processes() itself.
 */
int slots_end_processes_held(uid_t uid, gid_t gid, const struct slots_neighbours *nb, int timeout_ms,
                             struct slots_procs_report *rep, struct slots_error *e);

/* Which processes slots_find_processes() reports. */
enum slots_find {
        SLOTS_FIND_ANY,                 /* every one that carries the identity (a free slot's) */
        SLOTS_FIND_BORROWED,            /* only ones that carry it through the group alone: another account's */
        SLOTS_FIND_NO_NNP,              /* ones with a uid of it (or in its user namespace) without no_new_privs */
};

/*
 * One look over /proc, signalling nothing: every live process that carries the
 * identity of uid and gid as which says, counted in rep->survivors, the first
 * of them in rep->shown.  For check.  Returns 0 or -errno with e set.
 */
int slots_find_processes(uid_t uid, gid_t gid, enum slots_find which, struct slots_procs_report *rep,
                         struct slots_error *e);

/*
 * Every live process at once, for a look at many identities in one pass (check's
 * account rows): slots_procs_snapshot() reads /proc once (no process is
 * signalled, so no pidfd is needed); slots_procs_table_find() then answers as
 * slots_find_processes() does, from memory.  Returns 0 or -errno with e set.
 */
struct slots_proc_table;
int slots_procs_snapshot(struct slots_proc_table **t, struct slots_error *e);
void slots_procs_table_find(const struct slots_proc_table *t, uid_t uid, gid_t gid, enum slots_find which,
                            struct slots_procs_report *rep);
void slots_procs_table_free(struct slots_proc_table *t);
