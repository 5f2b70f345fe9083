/* The release protocol: every step that frees a slot for its next user, in order, each safe to repeat. */
#pragma once

#include <stdbool.h>
#include <sys/types.h>

#include "config.h"
#include "error.h"
#include "nss.h"
#include "procs.h"
#include "tree.h"

/*
 * The order (SPEC "slots-admin release"), step numbers as the messages show them:
 *   1  the user leaves the table ("cleanup": "pending"), under the table lock;
 *   2  the accounts are looked up, then the slot's systemd slice is stopped
 *      (where there is one) and every process of the slot is ended;
 *   3  the user's tree goes back to the service;
 *   4  scheduled jobs, FUSE mounts, home/state/run, temp files, shared folders,
 *      the slot's set-id files wherever slots write, IPC objects and keyrings, then a last check that nothing runs and the
 *      three folders are exact;
 *   5  the entry leaves the table, read again under the table lock (a write
 *      of anyone's since step 1 stays), in the store's one save.
 * Steps 2 to 4 run without the table lock (assign and status go on meanwhile)
 * but under the slot's own lock (byte n of the table's lock file, see
 * slots_release_lock), so two releases of one slot never overlap.  Step 2
 * stops the release when it fails (files must not be removed while the user's
 * code still runs); every
 * part of steps 3 and 4 runs even after another failed, and the first failure
 * is reported.  A failure leaves the slot pending; a release --slot runs
 * steps 2 to 5 again.
 */

/* What steps 2 to 4 work on. */
struct slots_release_job {
        int rootfd;
        const struct slots_config *cfg;
        const char *name;               /* the slot: slotNN */
        const char *user;               /* the tree's user; NULL: every tree is searched for the slot */
        struct slots_pw slot;           /* the slot account */
        gid_t slot_gid;                 /* group slotNN (its tree's group), else the account's primary group */
        uid_t svc_uid;
        gid_t svc_gid;                  /* the service group */
        int kill_timeout_ms;
        /*
         * Release runs at nice -20 until the slot's processes are ended; then the walks
         * go back to the caller's priority (nice_before), so an assign or another release
         * is not starved by this one's cleanup.
         */
        bool lower_after_processes;
        int nice_before;
        struct slots_tree_stats tree;
        struct slots_held held;         /* inodes of the user's tree and the slot's folders (step 3) */
        struct slots_procs_report procs;
        unsigned long setid_cleared;    /* files whose set-id bits the sweep cleared */
};

struct slots_release_step {
        const char *name;               /* "step 4 of 5, ..." */
        bool stops;                     /* a failure ends the release here */
        int (*run)(struct slots_release_job *j, struct slots_error *e);
};

/* Steps 2 to 4 in order, ending with an entry whose name is NULL. */
extern const struct slots_release_step slots_release_steps[];

/* Default bound of step 2 (ms); SLOTS_KILL_TIMEOUT_MS in the environment overrides it for tests. */
#define SLOTS_RELEASE_KILL_MS 10000

struct slots_release_report {
        unsigned slot;                  /* the slot; 0 when the user holds none */
        bool was_free;                  /* nothing to do: the slot was free */
        bool marked;                    /* step 1 took a user out of the table in this run */
        char user[72];                  /* that user, for the log */
        const char *step;               /* the step that failed, else NULL */
        struct slots_tree_stats tree;   /* in: tree.note and tree.note_data, if set; out: the counts */
        struct slots_procs_report procs;
        unsigned long setid_cleared;    /* files of the slot whose set-id bits were cleared */
};

/*
 * Releases the slot user holds (user non-NULL) or slot n (user NULL); a
 * pending slot is finished.  service_gid is the service group (owner group of
 * the table).  Returns 0 when the slot is free at the end (or was, or the user
 * held none), -EBADMSG for an invalid table, another -errno otherwise;
 * rep->step names the failed step when the slot was left pending.
 */
int slots_release(const struct slots_config *c, gid_t service_gid, const char *user, unsigned n,
                  struct slots_release_report *rep, struct slots_error *e);

/*
 * Takes the slot's own lock: an open-file-description write lock on byte n of
 * the table's lock file "<table>.lock" in dirfd (the flock on the whole file
 * that guards the table is independent of it).  Never opens a symlink or a
 * file with more than one link.  With wait false, -EWOULDBLOCK when another
 * release holds it.  Returns the lock fd (close it to release) or -errno.
 */
int slots_release_lock(int dirfd, const char *table_name, unsigned n, bool wait, struct slots_error *e);

/*
 * Where systemd is PID 1 and the config has a slice: stops the slot's slice
 * through systemd (every session scope in it) and waits until its cgroup is
 * empty, at most timeout_ms (the kernel's cgroup.kill after half of it).
 * Without either it does nothing.  The first part of step 2.  0 or -errno.
 */
int slots_release_slice(const struct slots_config *c, const char *slot, int timeout_ms, struct slots_error *e);

/* Looks up the accounts a release needs into j (slot, its group, the service), and refuses shared ids. */
int slots_release_accounts(struct slots_release_job *j, const char *slot, struct slots_error *e);
