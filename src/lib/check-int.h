/* What the files of the self-check share: the context of one run, its rows, and the checks they call. */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "config.h"
#include "ids.h"
#include "nss.h"
#include "path.h"
#include "perm.h"
#include "probe.h"
#include "selfcheck.h"
#include "strbuf.h"
#include "table.h"

#define SUDO_DEFAULT "/usr/bin/sudo"
#define FIX_MAX 4096

struct slotinfo {
        unsigned n;
        char name[SLOTS_NAME_MAX];
        const char *user;       /* the assigned user: used to build paths, never printed */
        int found;              /* slots_nss_user: 1, 0 (no such account) or -errno */
        struct slots_pw pw;
        struct slots_ident id;
        gid_t *groups;
        bool have_id;
        char *tree;             /* docs_root/<user_tree of user> */
        char *tree_shown;       /* the same as printed: <docs>/.../<user> */
        struct walk tree_walk;
        struct probe_plan plan; /* the run's plan, then the trees this slot probes (plan_tree_probes) */
        size_t *tree_slot;      /* plan item k->plan.n + t probes the tree of slots[tree_slot[t]] */
        size_t n_tree;
        int probe_r;            /* slots_run_as result of this slot's probe */
        struct probe_res *res;  /* one per item of plan, in the run's shared memory */
        bool sudo_rows;         /* gets the real sudo rows (the sample: pick_sudo_slots in selfcheck.c) */
        size_t sudo_pos;        /* its place among those, in the sudo pool's shared memory */
};

struct launcher {
        char *path;
        char *release;
        struct walk walk;
        size_t first;           /* its first plan item */
};

struct ctx {
        const struct slots_check_opts *o;
        struct slots_check_report *rep;
        int err;                /* -ENOMEM once an allocation failed */
        struct slots_config *cfg;
        int rootfd;

        int svc_found;
        struct slots_pw svc_pw;
        struct slots_ident svc;
        gid_t *svc_groups;
        bool have_svc;
        gid_t group;
        char *group_name;
        bool have_group;

        struct slots_table *table;
        bool table_ok;
        unsigned test;

        struct slotinfo *slots;
        size_t n_slots;
        struct launcher *launchers;
        size_t n_launchers;
        bool releases_missing;  /* app_root/releases could not be read */
        char *release_note;     /* how the release in use was chosen */
        struct walk *private_walks;
        struct probe_plan plan;
        size_t private_first;
        struct probe_res *res_mem;      /* every slot's probe results (probe_shared) */
        size_t res_size;
        char *sudo_mem;                 /* the pool's rows, SUDO_ROWS_MAX per sampled slot (selfcheck.c) */
        size_t *sudo_slots;             /* the slots with sudo_rows, as indexes into slots */
        size_t n_sudo;
};


void add_row(struct ctx *k, enum slots_check_status st, const char *check, const char *slot,
             const struct strbuf *detail, const struct strbuf *fix);
void add_rowf(struct ctx *k, enum slots_check_status st, const char *check, const char *slot, const char *fix,
              const char *fmt, ...) __attribute__((format(printf, 6, 7)));

/* How fix lines name accounts; a file the slot must not own goes to the service. */
struct slots_perm_names names_for(const struct ctx *k);

/* Runs fn as the service account (see run_as_id). */
int svc_run(const struct ctx *k, int (*fn)(void *arg), void *arg, int timeout_ms);
int probe_timeout(const struct ctx *k);

/* Reachability: the walk explains, the probe decides. */
/*
 * For a path the account must reach: the first probe refusal, the steps the
 * model denies (with why and the fix), and the verdict.  res holds one result
 * per walk step (a search per folder, then the end).
 */
struct reach {
        bool ok;                /* the probe's verdict */
        struct strbuf why, fix, note;
};


void reach_explain(struct ctx *k, const struct walk *w, const struct probe_res *res, int probe_r,
                   const struct slots_ident *id, const char *who, unsigned want_end, const char *end_shown,
                   const struct slots_perm_model *end_after, struct reach *out);
void reach_free(struct reach *r);

/* Host-wide rows (check-host.c), in the order the run calls them. */
bool check_config(struct ctx *k);
void resolve_service(struct ctx *k);
void check_table(struct ctx *k);
void check_roots(struct ctx *k);
void check_service_apart(struct ctx *k);
void find_releases(struct ctx *k);
void check_slotctl(struct ctx *k);
void check_pending(struct ctx *k);
void check_hard_links(struct ctx *k);   /* after collect_slots: walks the users' trees */

/* Host-wide rows about sudo (check-sudoers.c): the drop-in, and what sudo grants each slot of the pool. */
void check_sudoers_dropin(struct ctx *k);
void check_sudo_grants(struct ctx *k);

/* Where two texts first differ: the line (1-based), the byte in it, that line in each. */
struct text_diff {
        size_t line, column;
        const char *a, *b;      /* the line in each text (no newline); NULL when the text has no such line */
        size_t alen, blen;
        bool a_newline, b_newline;      /* the line ends with a newline */
};

/* Fills d and returns true when a[0, alen) and b[0, blen) differ. */
bool text_first_diff(const char *a, size_t alen, const char *b, size_t blen, struct text_diff *d);

/*
 * Reads "sudo -l" output: each privilege line "(RUNAS) TAGS: COMMANDS" that names cmd
 * (as a whole command, or as "!cmd") sets state[n] of each slot n in 1..pool its Runas
 * list names (ALL: every slot) to 1 or -1, in order, so the last match decides as in
 * sudo; "!slotNN" in a Runas list sets -1.  Slots not named keep their state.  Returns
 * the number of privilege lines read.
 */
size_t sudo_list_grants(const char *text, const char *cmd, unsigned pool, signed char *state);

/*
 * Whether sudo is there to run (check-chain.c); when it is not, adds check's row (slot may be
 * NULL), a SKIP saying why (more, may be NULL, after it) or a FAIL, and the caller stops.
 */
bool sudo_missing(struct ctx *k, const char *check, const char *slot, const char *more);

/* Per-slot rows (check-slot.c, check-chain.c): one row per slot each. */
void check_account(struct ctx *k, const struct slotinfo *s);
void check_folders(struct ctx *k, const struct slotinfo *s);
void check_password(struct ctx *k, const struct slotinfo *s);
void check_runner(struct ctx *k, const struct slotinfo *s);
void check_private(struct ctx *k, const struct slotinfo *s);
void check_tree(struct ctx *k, const struct slotinfo *s);
void check_sudo(struct ctx *k, const struct slotinfo *s);
void check_sudo_env(struct ctx *k, const struct slotinfo *s);
void check_sudo_kill(struct ctx *k, const struct slotinfo *s);
void check_chain(struct ctx *k, const struct slotinfo *s);

/*
 * Which of n assigned slots (in slot order) get the sudo rows: every one when n <= max,
 * else max of them, the lowest, the highest and evenly between (position i*(n-1)/(max-1)
 * for i in 0..max-1, rounded down).  Sets pick[] for those; returns how many.
 */
size_t check_sample(size_t n, size_t max, bool *pick);

/* Adds to s->plan the users' trees s lists for the user-tree row (check-slot.c). */
int plan_tree_probes(struct ctx *k, struct slotinfo *s);

/* The accounts of the pool's other slots: FAIL rows for the broken, one PASS row for the rest. */
void check_other_accounts(struct ctx *k);
