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
 * neither uid 0 nor the old uid or gid can be regained, then returns fn(arg) as its exit status
 * (0..125; a program fn runs goes through child.c's engine).  The parent waits up to
 * timeout_ms (<= 0: no limit) and kills the child when it takes longer.  A stage that fails
 * in the child is told through a close-on-exec pipe, never by an exit status, so no status of
 * fn can pass for one.  Returns the status (>= 0), or -errno: -ETIMEDOUT, -EPERM when
 * dropping failed, -ECHILD when the child died from a signal.
 */
int slots_run_as(const struct slots_ident *id, int (*fn)(void *arg), void *arg, int timeout_ms);

/*
 * slots_run_as() in a folder: the child first changes into cwd_fd (an open folder; -1: stays
 * where the caller is), before the drop, so it may start in a folder the account itself cannot
 * enter (a program it runs, such as sudo, passes that folder on).  id NULL: no drop, for a
 * caller that already is the account.  A failed change of folder returns its -errno.
 */
int slots_run_in(const struct slots_ident *id, int cwd_fd, int (*fn)(void *arg), void *arg, int timeout_ms);

/* In fn of a slots_run_*() child: a step of its setup failed with errno err; slots_run_*() returns -err. */
__attribute__((noreturn)) void slots_run_fail(int err);

/*
 * Like slots_run_as(), for probes the account must not be able to end: the
 * child sets the account's groups and gids, then only its effective (and so
 * file-system) uid, and drops every capability (effective, permitted,
 * inheritable, ambient; no new privileges).  It opens and reads exactly as the
 * account would, yet the account's own processes can neither signal nor trace
 * it (kill(2) and ptrace(2) match the real or saved uid, which stay 0), so a
 * kill(-1) loop of the account never turns a probe into a false failure.  For
 * our own code that opens and reads, never to run a program.  id->uid must
 * not be 0 (-EINVAL).
 */
int slots_run_as_unkillable(const struct slots_ident *id, int (*fn)(void *arg), void *arg, int timeout_ms);

/* getgrouplist(3) of account with primary group gid, in a buffer that grows until the list fits (*groups malloc'ed). */
int slots_grouplist(const char *account, gid_t gid, gid_t **groups, int *count);

/* Fills id from an account: its primary group plus every group NSS lists it in. *groups is malloc'ed. */
int slots_ident_of(const char *account, struct slots_ident *id, gid_t **groups);
