/* Acting as another account: a forked child that drops groups, gid and uid before it runs. */
#pragma once

#include <stdbool.h>
#include <sys/types.h>

struct slots_ident {
        uid_t uid;
        gid_t gid;                      /* primary group */
        const gid_t *groups;            /* supplementary groups (may be NULL when n_groups is 0) */
        int n_groups;
};

/*
 * Forks; the child calls setgroups, setgid, setuid (in that order), checks that
 * none of the old ids can be regained, then returns fn(arg) as its exit status
 * (0..125).  The parent waits up to timeout_ms (<= 0: no limit) and kills the
 * child when it takes longer.  Returns fn's status (>= 0), or -errno: -ETIMEDOUT,
 * -EPERM when dropping failed, -ECHILD when the child died from a signal.
 */
int slots_run_as(const struct slots_ident *id, int (*fn)(void *arg), void *arg, int timeout_ms);

/* Fills id from an account: its primary group plus every group NSS lists it in. *groups is malloc'ed. */
int slots_ident_of(const char *account, struct slots_ident *id, gid_t **groups);
