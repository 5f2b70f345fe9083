/* The context of one self-check run, a row of its report, and the helpers every row shares (check-row.c). */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "accountmap.h"
#include "config.h"
#include "ids.h"
#include "nss.h"
#include "path.h"
#include "perm-path.h"
#include "perm.h"
#include "probe.h"
#include "procs.h"
#include "check-report.h"
#include "strbuf.h"
#include "table.h"

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
        struct slots_perm_path tree_walk;
        struct probe_plan plan; /* the run's plan, then the trees this slot probes (check_plan_tree_probes) */
        size_t *tree_slot;      /* plan item k->plan.n + t probes the tree of slots[tree_slot[t]] */
        size_t n_tree;
        int probe_r;            /* slots_run_as result of this slot's probe */
        struct probe_res *res;  /* one per item of plan, in the run's shared memory */
        bool sudo_rows;         /* gets the real sudo rows (the sample: pick_sudo_slots in selfcheck.c) */
        size_t sudo_pos;        /* its place among those, in the sudo pool's shared memory */
        unsigned long foreign;  /* entries of its user's tree of another account (check_hard_links' walk) */
        char foreign_first[256];        /* the first of them, as shown, with its owner */
};

struct launcher {
        char *path;
        char *release;
        struct slots_perm_path walk;
        size_t first;           /* its first plan item */
};

struct check_run {
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
        size_t n_trees;                 /* the slots whose user has a tree (slotinfo.tree) */
        struct launcher *launchers;
        size_t n_launchers;
        bool releases_missing;  /* app_root/releases could not be read */
        char *release_note;     /* how the release in use was chosen */
        struct slots_perm_path *private_walks;
        struct probe_plan plan;
        size_t private_first;
        struct probe_res *res_mem; /* every slot's probe results (check_probe_shared) */
        size_t res_size;
        char *sudo_mem;                 /* the pool's rows, SUDO_ROWS_MAX per sampled slot (selfcheck.c) */
        size_t *sudo_slots;             /* the slots with sudo_rows, as indexes into slots */
        size_t n_sudo;
        struct slots_proc_table *procs; /* every process, read once for the account rows (check-ident.c) */
        struct slots_accountmap *accounts;      /* passwd, group (and as root shadow), read once per run */
        struct slots_idfile *idfiles;   /* /etc/passwd, group, gshadow, indexed, read once (check-ident.c) */
        int idfiles_err[3];             /* each file's failed read */
        char *nsswitch;                 /* nsswitch.conf's text, read with them (NULL: none) */
};

/* A row from strbufs (k->err set once an allocation failed), or from a format. */
void check_add_row(struct check_run *k, enum slots_check_status st, const char *check, const char *slot,
                   const struct strbuf *detail, const struct strbuf *fix);
void check_add_rowf(struct check_run *k, enum slots_check_status st, const char *check, const char *slot,
                    const char *fix, const char *fmt, ...) __attribute__((format(printf, 6, 7)));

/*
 * Slot s's account (s->n and s->name set): found, pw, and its groups as the drop takes them
 * (id, groups, have_id), from the run's account map (NSS for a name the map does not list).
 */
void check_slot_lookup(struct check_run *k, struct slotinfo *s);

/*
 * The live processes of slot s now, one look over /proc (procs.c, finding only): their number
 * and "pid N (comm), ..." added to d, comm escaped; or -1 with the file and reason added to d.
 */
int check_slot_procs(const struct slotinfo *s, struct strbuf *d);

/*
 * A run as the assigned slot s ended as the slot's own processes could make it end (stopped,
 * killed, never started): a WARN row of check saying what, naming the slot's processes now.
 * Whether the host works is the test slot's rows to say, which nobody holds.
 */
void check_warn_held(struct check_run *k, const struct slotinfo *s, const char *check, const char *what);

/* Whether r (a run's -errno, privdrop.h) is an end the slot's own processes could cause. */
bool check_held_end(int r);

/* How fix lines name accounts; a file the slot must not own goes to the service. */
struct slots_perm_names check_names_for(const struct check_run *k);

/* Runs fn as the service account (see check_run_as_id). */
int check_svc_run(const struct check_run *k, int (*fn)(void *arg), void *arg, int timeout_ms);
int check_probe_timeout(const struct check_run *k);

/* The sudo every sudo row runs, resolved here only: the options' (a test's), else /usr/bin/sudo. */
const char *check_sudo_path(const struct check_run *k);

/*
 * The docs root opened for a row that walks it (no symlink on the way, owned by
 * root or the service all the way): its fd, or -1 after a SKIP row for check
 * saying why it cannot be walked (the roots row says what is wrong with it).
 */
int check_docs_for_walk(struct check_run *k, const char *check);

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

void check_reach_explain(struct check_run *k, const struct slots_perm_path *w, const struct probe_res *res, int probe_r,
                         const struct slots_ident *id, const char *who, unsigned want_end, const char *end_shown,
                         const struct slots_perm_model *end_after, struct reach *out);
void check_reach_free(struct reach *r);
