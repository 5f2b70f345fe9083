/* What the run of the self-check calls: its rows (check-host.c, check-slot.c, check-chain.c) over check-row.h. */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "check-row.h"

/* Host-wide rows (check-host.c), in the order the run calls them. */
bool check_config(struct check_run *k);
void check_resolve_service(struct check_run *k);
void check_table(struct check_run *k);
void check_roots(struct check_run *k);
void check_service_apart(struct check_run *k);
void check_find_releases(struct check_run *k);
void check_slotctl(struct check_run *k);
void check_pending(struct check_run *k);
void check_hard_links(struct check_run *k);  /* check-links.c, after collect_slots: walks the users' trees */
void check_app_private(struct check_run *k); /* check-shared.c: walks the shared folders */
void check_setid(struct check_run *k);       /* check-setid.c: walks every folder slots write */

/* Host-wide rows about sudo (check-sudoers.c): the drop-in, and what sudo grants each slot of the pool. */
void check_sudoers_dropin(struct check_run *k);
void check_sudo_grants(struct check_run *k);

/* Where two texts first differ: the line (1-based), the byte in it, that line in each. */
struct text_diff {
        size_t line, column;
        const char *a, *b;      /* the line in each text (no newline); NULL when the text has no such line */
        size_t alen, blen;
        bool a_newline, b_newline;      /* the line ends with a newline */
};

/* Fills d and returns true when a[0, alen) and b[0, blen) differ. */
bool check_text_first_diff(const char *a, size_t alen, const char *b, size_t blen, struct text_diff *d);

/*
 * Reads "sudo -l" output: each privilege line "(RUNAS) TAGS: COMMANDS" that names cmd
 * (as a whole command, or as "!cmd") sets state[n] of each slot n in 1..pool its Runas
 * list names (ALL: every slot) to 1 or -1, in order, so the last match decides as in
 * sudo; "!slotNN" in a Runas list sets -1.  Slots not named keep their state.  Returns
 * the number of privilege lines read.
 */
size_t check_sudo_list_grants(const char *text, const char *cmd, unsigned pool, signed char *state);

/*
 * Whether sudo is there to run (check-chain.c); when it is not, adds check's row (slot may be
 * NULL), a SKIP saying why (more, may be NULL, after it) or a FAIL, and the caller stops.
 */
bool check_sudo_missing(struct check_run *k, const char *check, const char *slot, const char *more);

/* Per-slot rows (check-slot.c, check-chain.c): one row per slot each. */
void check_account(struct check_run *k, const struct slotinfo *s);
void check_folders(struct check_run *k, const struct slotinfo *s);
void check_password(struct check_run *k, const struct slotinfo *s);
void check_runner(struct check_run *k, const struct slotinfo *s);
void check_private(struct check_run *k, const struct slotinfo *s);
void check_tree(struct check_run *k, const struct slotinfo *s);
void check_sudo(struct check_run *k, const struct slotinfo *s);
void check_sudo_env(struct check_run *k, const struct slotinfo *s);
/*
 * The sudo-env row from its run (check-env.c): r the run's status or -errno, out its stdout
 * (/proc/self/status of the command), err its first stderr line, cwd where it ran.  false,
 * and no row, when r < 0 and sudo refused nothing: chain_failed_run's case.
 */
bool check_sudo_env_verdict(struct check_run *k, const struct slotinfo *s, int r, const char *out, const char *err,
                            const char *cwd);
void check_sudo_kill(struct check_run *k, const struct slotinfo *s);
void check_chain(struct check_run *k, const struct slotinfo *s);
void check_slice(struct check_run *k, const struct slotinfo *s); /* check-slice.c */

/*
 * Which of n assigned slots (in slot order) get the sudo rows: every one when n <= max,
 * else max of them, the lowest, the highest and evenly between (position i*(n-1)/(max-1)
 * for i in 0..max-1, rounded down).  Sets pick[] for those; returns how many.
 */
size_t check_sample(size_t n, size_t max, bool *pick);

/* Adds to each slot's plan the users' trees it lists for the user-tree row (check-plan.c). */
int check_plan_tree_probes(struct check_run *k);

/* The accounts of the pool's other slots: FAIL rows for the broken, one PASS row for the rest. */
void check_other_accounts(struct check_run *k);
