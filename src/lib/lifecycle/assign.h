/* Assign: which slot a user gets, or why not, and the whole sequence that gives it. */
#pragma once

#include <stdbool.h>
#include <sys/types.h>

#include "config.h"
#include "error.h"
#include "nss.h"
#include "store.h"
#include "table.h"
#include "tree.h"

/* What an assign of USER [SLOT] comes to, in the order the checks are made. */
enum slots_assign_verdict {
        SLOTS_ASSIGN_GIVE,              /* the slot is free: give it */
        SLOTS_ASSIGN_AGAIN,             /* the user holds it already: done (the tree is prepared again) */
        SLOTS_ASSIGN_HELD_ELSEWHERE,    /* the user holds another slot than the one asked for */
        SLOTS_ASSIGN_OUT_OF_POOL,       /* the slot asked for is outside the pool */
        SLOTS_ASSIGN_FULL,              /* no slot asked for, and every slot is held or pending */
        SLOTS_ASSIGN_TAKEN,             /* the slot is held by another user */
        SLOTS_ASSIGN_PENDING,           /* the slot's last release did not finish */
};

/*
 * The verdict for `user` asking for slot `want` (0: the lowest free one) in a
 * pool of `pool` slots; *n is the slot it is about (0 with FULL).  Pure: reads
 * the table only.
 */
enum slots_assign_verdict slots_assign_choose(const struct slots_table *t, unsigned pool, const char *user,
                                              unsigned want, unsigned *n);

/*
 * The refusal of a verdict other than GIVE and AGAIN, for the table of config
 * c: reason and fix (slots-admin(8)), kind refused.  Returns -EPERM.
 */
int slots_assign_refusal(enum slots_assign_verdict v, unsigned n, const struct slots_config *c,
                         struct slots_error *e);

/*
 * The service is never a slot: refuses (-EPERM, with the fix) when the service
 * account is a member of group `slot` (gr, the caller's lookup of it; NULL when
 * there is no such group) or has it as its primary group.  0 when it is not, or
 * when either cannot be found (the slot's own lookup reports that).
 */
int slots_assign_service_apart(const struct slots_config *c, const char *slot, const struct slots_gr *gr,
                               struct slots_error *e);

/*
 * Whether slot account name (pw: its passwd entry) is a good slot for config c, by
 * identity.c's one rule (as check and provision judge it): no group but its own and
 * <prefix>shared, no subordinate uid or gid range, no usable password as pam_unix reads
 * it, the configured shell.  Returns 0 when it is; -EPERM (kind refused) with every
 * problem and its fix when it is not; -errno (kind failed) when a fact cannot be looked up.
 */
int slots_assign_identity(const struct slots_config *c, const char *name, const struct slots_pw *pw,
                          struct slots_error *e);

/* A free slot the lowest-free choice passed over: its account is no good slot. */
struct slots_assign_skip {
        unsigned slot;
        struct slots_error why;         /* slots_assign_identity()'s refusal */
};

#define SLOTS_ASSIGN_SKIPS_KEPT 8

/*
 * The whole assign of USER [SLOT], in this order:
 *   1  under the table lock: the verdict (refused unless GIVE or AGAIN); the
 *      slot's account is judged by slots_assign_identity() (refused when it is
 *      no good slot, the slot the user holds too; for a new assignment without
 *      SLOT the next free slot is tried, and each one passed over is reported
 *      in rep->skipped); for a new assignment its
 *      account and group are looked up, the service
 *      must be apart from it, and its home, state and run must be as a release
 *      leaves them (otherwise the slot is marked "cleanup": "pending" and the
 *      refusal names the fix); then the assignment is saved;
 *   2  the slot's own lock is taken (byte n of the table's lock file, as
 *      release takes it), and the table lock is dropped: other assigns and
 *      releases go on;
 *   3  under the slot's lock only: the user's tree is prepared (docs_root);
 *   4  only then is the slot reported (return 0).
 * The same assignment again changes nothing in the table and prepares the
 * tree again (a repair).  A failure in step 3 leaves the assignment standing
 * (rep->step says so): the same assign again finishes the tree.
 */
struct slots_assign_report {
        enum slots_assign_verdict verdict;
        unsigned slot;                  /* the slot it is about; 0 when none was chosen */
        bool changed;                   /* this run wrote the assignment into the table */
        bool marked_pending;            /* its folders were not as a release leaves them: marked pending */
        bool tree_prepared;             /* docs_root is set and the user's tree is ready */
        const char *step;               /* the step that failed after the save, else NULL */
        struct slots_tree_stats tree;   /* in: note and note_data, if set; out: the counts */
        bool table_ok;                  /* the store's verdict on the table as it was saved */
        struct slots_table_verdict table;
        unsigned n_skipped;             /* free slots passed over as no good slot (the first few kept) */
        struct slots_assign_skip skipped[SLOTS_ASSIGN_SKIPS_KEPT];
};

/*
 * Assigns user (slot want, 0: the lowest free one) in the table of config c;
 * policy->group is the service group, owner group of a new table and of the
 * tree's folders.  Returns 0 when the user holds rep->slot and the tree is
 * ready, -EBADMSG for an invalid table, -EPERM for a refusal (e's kind), or
 * another -errno.
 */
int slots_assign(const struct slots_config *c, const struct slots_table_policy *policy, const char *user,
                 unsigned want, struct slots_assign_report *rep, struct slots_error *e);

/*
 * What slots_assign would decide, with nothing written and no lock taken (--dry-run): the
 * table read as status reads it (group: the service group), the verdict, the one rule on the
 * slot's account (the lowest free choice passing over bad slots), and for a new assignment
 * the account, the service apart and the folders as step 1 checks them.  rep->changed: the
 * real run would write the assignment.  Returns as slots_assign; the tree is not looked at.
 */
int slots_assign_dry(const struct slots_config *c, gid_t group, const char *user, unsigned want,
                     struct slots_assign_report *rep, struct slots_error *e);
