/* The self-check's run and report (slots-admin(8), "check"): which rows run, for which slots, in what order. */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check-int.h"
#include "error.h"
#include "fsutil.h"
#include "identity-look.h"
#include "selfcheck.h"

#define SUDO_ROWS_MAX ((size_t) 64 << 10)   /* the rows one slot's sudo checks hand back */
#define SUDO_SAMPLE 8                       /* assigned slots that get the sudo rows in a larger pool */
#define SAMPLE_SHOWN 24                     /* sampled slots named in the sudo-sample row */

/* ---- the slots to look at: every assigned slot and the test slot ---- */

static int add_slot(struct check_run *k, unsigned n, const char *user)
{
        struct slotinfo *s = &k->slots[k->n_slots++];

        s->n = n;
        slots_slot_name(n, s->name);
        s->user = user;
        check_slot_lookup(k, s);
        if (user && k->cfg->docs_root) {
                char *rel = slots_config_user_tree(k->cfg, user), *shown = slots_config_user_tree(k->cfg, "<user>");

                if (!rel || !shown || !(s->tree = slots_path_join(k->cfg->docs_root, rel)) ||
                    asprintf(&s->tree_shown, "<docs>/%s", shown) < 0) {
                        free(rel);
                        free(shown);
                        return -ENOMEM;
                }
                free(rel);
                free(shown);
                if (slots_perm_path_read(s->tree, &s->tree_walk) < 0)
                        return -ENOMEM;
                k->n_trees++;
        }
        return 0;
}

static int collect_slots(struct check_run *k)
{
        unsigned pool = k->cfg->slots;
        int r;

        k->slots = calloc(pool + 1, sizeof(*k->slots));
        if (!k->slots)
                return -ENOMEM;
        k->test = k->table ? slots_table_test_slot(k->table, pool) : pool;
        for (unsigned n = 1; n <= pool; n++) {
                const char *user = NULL;

                if (k->table && slots_table_get(k->table, n, &user, NULL, NULL) == SLOTS_SLOT_ASSIGNED) {
                        r = add_slot(k, n, user);
                        if (r < 0)
                                return r;
                } else if (n == k->test) {
                        r = add_slot(k, n, NULL);
                        if (r < 0)
                                return r;
                }
        }
        return 0;
}

/* ---- which slots get the real sudo rows ---- */

size_t check_sample(size_t n, size_t max, bool *pick)
{
        if (n <= max) {
                for (size_t i = 0; i < n; i++)
                        pick[i] = true;
                return n;
        }
        if (max == 0)
                return 0;
        if (max == 1) {
                pick[0] = true;
                return 1;
        }
        /* n > max, so the step (n-1)/(max-1) is above 1: max distinct positions, 0 and n-1 among them. */
        for (size_t i = 0; i < max; i++)
                pick[i * (n - 1) / (max - 1)] = true;
        return max;
}

static bool own_limits(const struct slots_config *c, unsigned n)
{
        for (size_t i = 0; i < c->n_slot_limits; i++)
                if (c->slot_limits[i].slot == n)
                        return true;
        return false;
}

/*
 * The rows that run sudo: the test slot's prove the host (about 7 sudo runs); an
 * assigned slot's chain in its user's tree is one run, the same for every slot but
 * its name and tree (sudoers-dropin and sudo-grants check every name).  The chain
 * runs for every slot with limits of its own (pam_slots opens its sudo session with
 * those) and check_sample() of the assigned slots.  Above SUDO_SAMPLE assigned
 * slots, a SKIP row names the sample.
 */
static int pick_sudo_slots(struct check_run *k)
{
        size_t n_assigned = 0, a = 0, n_own = 0, n_test = 0;
        struct strbuf d = { 0 };
        bool *pick;

        for (size_t i = 0; i < k->n_slots; i++)
                n_assigned += k->slots[i].user != NULL;
        pick = calloc(n_assigned + 1, sizeof(*pick));
        k->sudo_slots = calloc(k->n_slots + 1, sizeof(*k->sudo_slots));
        if (!pick || !k->sudo_slots) {
                free(pick);
                return -ENOMEM;
        }
        (void) check_sample(n_assigned, SUDO_SAMPLE, pick);
        for (size_t i = 0; i < k->n_slots; i++) {
                struct slotinfo *s = &k->slots[i];
                bool own = s->user && own_limits(k->cfg, s->n);

                s->sudo_rows = !s->user || pick[a] || own;
                n_own += own && !pick[a];
                a += s->user != NULL;
                if (!s->sudo_rows)
                        continue;
                s->sudo_pos = k->n_sudo;
                k->sudo_slots[k->n_sudo++] = i;
                n_test += !s->user;
        }
        free(pick);
        if (n_assigned <= SUDO_SAMPLE)
                return 0;
        strbuf_addf(&d, "chain runs in the users' trees of %zu of the %zu assigned slots: ", k->n_sudo - n_test,
                    n_assigned);
        for (size_t j = 0, shown = 0; j < k->n_sudo; j++) {
                const struct slotinfo *s = &k->slots[k->sudo_slots[j]];

                if (!s->user)
                        continue;
                if (shown++ == SAMPLE_SHOWN) {
                        strbuf_addf(&d, " and %zu more", k->n_sudo - n_test - SAMPLE_SHOWN);
                        break;
                }
                strbuf_addf(&d, "%s%s", shown > 1 ? ", " : "", s->name);
        }
        strbuf_addf(&d, "; the lowest, the highest and %d evenly between by slot number%s; what it runs is the same "
                    "for every slot but its name and tree, sudoers-dropin and sudo-grants check each slot's name in "
                    "sudo's rules, and the rows that prove the host run as the test slot", SUDO_SAMPLE - 2,
                    n_own ? ", and each slot with limits of its own (pam_slots opens its sudo session with them)" : "");
        check_add_row(k, SLOTS_CHECK_SKIP, "sudo-sample", NULL, &d, NULL);
        strbuf_free(&d);
        return 0;
}

/* One plan for all slots: the folders to each launcher, the private paths (the trees: check_plan_tree_probes). */
static int build_plan(struct check_run *k)
{
        const struct slots_config *c = k->cfg;

        for (size_t i = 0; i < k->n_launchers; i++) {
                struct launcher *l = &k->launchers[i];

                if (slots_perm_path_read(l->path, &l->walk) < 0)
                        return -ENOMEM;
                l->first = k->plan.n;
                if (l->walk.err)
                        continue;
                for (size_t j = 0; j < l->walk.n; j++) {
                        const struct slots_perm_step *s = &l->walk.steps[j];
                        /* The launcher itself by its configured path: exec follows the same links. */
                        if (check_plan_add(&k->plan, s->traverse ? s->path : l->path,
                                           s->traverse ? PROBE_SEARCH : PROBE_EXEC) < 0)
                                return -ENOMEM;
                }
        }
        k->private_first = k->plan.n;
        k->private_walks = calloc(c->n_private_paths + 1, sizeof(*k->private_walks));
        if (!k->private_walks)
                return -ENOMEM;
        for (size_t i = 0; i < c->n_private_paths; i++) {
                if (slots_perm_path_read(c->private_paths[i], &k->private_walks[i]) < 0 ||
                    check_plan_add(&k->plan, c->private_paths[i], PROBE_PRIVATE) < 0)
                        return -ENOMEM;
        }
        return 0;
}

/* One pool task: slot i's plan, as the slot; the result lands after every slot's results. */
static int slot_probe_task(void *arg, size_t i)
{
        struct check_run *k = arg;
        struct slotinfo *s = &k->slots[i];
        int *probe_r = (int *) (k->res_mem + k->res_size / sizeof(*k->res_mem));

        if (s->have_id)
                probe_r[i] = check_run_probes(&s->id, &s->plan, 0, s->plan.n, s->res, check_probe_timeout(k));
        return 0;
}

/* Each slot's probes through the fork server; false when it could not be used (nothing ran then). */
static bool probes_by_server(struct check_run *k, struct probe_server *srv)
{
        struct probe_task *t;
        bool ran;

        if (!srv->c.pid)
                return false;
        t = calloc(k->n_slots + 1, sizeof(*t));
        if (!t)
                return false;
        for (size_t i = 0; i < k->n_slots; i++) {
                struct slotinfo *s = &k->slots[i];

                if (s->have_id)
                        t[i] = (struct probe_task) { .id = &s->id, .plan = &s->plan, .res = s->res };
        }
        ran = check_probe_server_run(srv, t, k->n_slots, check_probe_timeout(k)) == 0;
        for (size_t i = 0; ran && i < k->n_slots; i++)
                if (k->slots[i].have_id)
                        k->slots[i].probe_r = t[i].r;
        free(t);
        /* Done with it: its lanes leave now, before the run forks children that would keep its socket. */
        check_probe_server_stop(srv);
        return ran;
}

/*
 * Each slot's probes: the run's plan and the trees check_plan_tree_probes picks.
 * Through the fork server when it runs (srv, started before the slots' data
 * was built), else in a pool of children of the run (check_probe_pool_width() at
 * once, each with its deadline).
 */
static void run_slot_probes(struct check_run *k, struct probe_server *srv)
{
        size_t total = 0, off = 0;
        int *status = NULL, *probe_r;

        for (size_t i = 0; i < k->n_slots; i++) {
                struct slotinfo *s = &k->slots[i];

                if (!s->have_id) {
                        s->probe_r = -ENOENT;
                        continue;
                }
                for (size_t j = 0; j < k->plan.n; j++)
                        if (check_plan_add(&s->plan, k->plan.paths[j], k->plan.ops[j]) < 0)
                                goto nomem;
        }
        if (check_plan_tree_probes(k) < 0)
                goto nomem;
        for (size_t i = 0; i < k->n_slots; i++)
                total += k->slots[i].plan.n;
        /* The results, then one probe_r per slot (res_size counts the results only). */
        k->res_size = total * sizeof(*k->res_mem);
        k->res_mem = check_probe_shared(k->res_size + (k->n_slots + 1) * sizeof(int));
        status = calloc(k->n_slots + 1, sizeof(*status));
        if (!k->res_mem || !status)
                goto nomem;
        probe_r = (int *) (k->res_mem + total);
        for (size_t i = 0; i < k->n_slots; i++) {
                struct slotinfo *s = &k->slots[i];

                s->res = k->res_mem + off;
                off += s->plan.n;
                /* A slot without an account has nothing to run: its child only returns. */
                probe_r[i] = -ENOENT;
                status[i] = 0;
        }
        if (probes_by_server(k, srv)) {
                free(status);
                return;
        }
        (void) check_probe_pool(k->n_slots, check_probe_pool_width(), check_probe_timeout(k) + 5000, slot_probe_task, k,
                                status);
        for (size_t i = 0; i < k->n_slots; i++) {
                struct slotinfo *s = &k->slots[i];

                if (s->have_id)
                        s->probe_r = status[i] < 0 ? status[i] : probe_r[i];
        }
        free(status);
        return;
nomem:
        free(status);
        k->err = -ENOMEM;
}

/* ---- the run ---- */

static void ctx_free(struct check_run *k)
{
        for (size_t i = 0; i < k->n_slots; i++) {
                struct slotinfo *s = &k->slots[i];
                slots_pw_clear(&s->pw);
                free(s->groups);
                free(s->tree);
                free(s->tree_shown);
                slots_perm_path_free(&s->tree_walk);
                free(s->plan.paths);
                free(s->plan.ops);
                free(s->tree_slot);
        }
        free(k->slots);
        for (size_t i = 0; i < k->n_launchers; i++) {
                free(k->launchers[i].path);
                free(k->launchers[i].release);
                slots_perm_path_free(&k->launchers[i].walk);
        }
        free(k->launchers);
        if (k->private_walks && k->cfg)
                for (size_t i = 0; i < k->cfg->n_private_paths; i++)
                        slots_perm_path_free(&k->private_walks[i]);
        free(k->private_walks);
        free(k->plan.paths);
        free(k->plan.ops);
        check_probe_shared_free(k->sudo_mem, k->n_sudo * SUDO_ROWS_MAX);
        free(k->sudo_slots);
        if (k->res_mem)
                check_probe_shared_free(k->res_mem, k->res_size + (k->n_slots + 1) * sizeof(int));
        free(k->release_note);
        slots_procs_table_free(k->procs);
        slots_accountmap_free(k->accounts);
        for (int i = 0; k->idfiles && i < 3; i++)
                slots_idfile_free(&k->idfiles[i]);
        free(k->idfiles);
        free(k->nsswitch);
        slots_table_free(k->table);
        slots_pw_clear(&k->svc_pw);
        free(k->svc_groups);
        free(k->group_name);
        slots_config_free(k->cfg);
        slots_close(k->rootfd);
}

/* What a per-slot check needs before it can run; the run, not the check, says why one is skipped. */
enum {
        NEEDS_ROOT = 1 << 0,            /* run as the service, each slot gets a SKIP row with root_why */
        NEEDS_PROBE = 1 << 1,           /* reads the slot's probe results (run_slot_probes as root) */
        NEEDS_RELEASE = 1 << 2,         /* app_root, launcher and a release: else one host-wide row */
        NEEDS_SUDO = 1 << 3,            /* runs sudo: for the sampled slots only, in a pool of children */
        NEEDS_TEST = 1 << 4,            /* proves the host: as the test slot only, which nobody holds */
};

static const struct slot_check {
        const char *row;
        void (*fn)(struct check_run *k, const struct slotinfo *s);
        unsigned needs;
        const char *root_why;
} per_slot[] = {
        { "account", check_account, 0, NULL },
        { "slot-folders", check_folders, 0, NULL },
        { "password-locked", check_password, NEEDS_ROOT, "needs root: reads /etc/shadow" },
        /* As the service: from the modes and ACLs it can read (check_runner), no probe. */
        { "runner-reachable", check_runner, NEEDS_PROBE | NEEDS_RELEASE, NULL },
        { "private-unreachable", check_private, NEEDS_ROOT | NEEDS_PROBE, "needs root: probes as the slot" },
        { "user-tree", check_tree, NEEDS_ROOT | NEEDS_PROBE, "needs root: probes as the slot" },
        { "sudo-preflight", check_sudo, NEEDS_SUDO | NEEDS_TEST, NULL },
        { "sudo-env", check_sudo_env, NEEDS_SUDO | NEEDS_TEST, NULL },
        { "sudo-kill", check_sudo_kill, NEEDS_SUDO | NEEDS_TEST, NULL },
        { "chain", check_chain, NEEDS_SUDO, NULL },
        { "slice", check_slice, 0, NULL },
};

/*
 * The rows of the NEEDS_SUDO checks are made ahead, in a pool of children (one
 * per sampled slot, check_probe_pool_width() at once; each sudo run inside keeps its own
 * deadline), and handed back through shared memory: a record per row, in the
 * order the child made them.  The run then adds them where the table puts
 * them, so the report reads as if they ran one after another.  A slot whose
 * child did not finish, or whose rows did not fit, runs those checks again in
 * the run itself.
 */
struct row_rec {
        unsigned check;         /* index into per_slot */
        unsigned status;
        const char *name;       /* the row's check: a static string, at the same address in the child */
        size_t detail_len, fix_len;     /* fix_len: SIZE_MAX for no fix */
};

struct sudo_rows {
        int err;                /* the child's k->err */
        bool done, overflow;
        size_t len;
        char data[];
};

static struct sudo_rows *sudo_rows_of(const struct check_run *k, size_t i)
{
        return (struct sudo_rows *) (k->sudo_mem + i * SUDO_ROWS_MAX);
}

/* A row that proves the host runs as the test slot only: an assigned slot's holder could sway it. */
static bool runs_for(const struct slot_check *c, const struct slotinfo *s)
{
        return !(c->needs & NEEDS_TEST) || !s->user;
}

static bool runs_in_pool(const struct slot_check *c, bool root)
{
        return (c->needs & NEEDS_SUDO) && !(c->needs & NEEDS_RELEASE) && (root || !(c->needs & NEEDS_ROOT));
}

static void rows_put(struct sudo_rows *b, const void *p, size_t n)
{
        if (b->overflow || n > SUDO_ROWS_MAX - sizeof(*b) - b->len) {
                b->overflow = true;
                return;
        }
        memcpy(b->data + b->len, p, n);
        b->len += n;
}

/* Pool task j: the sudo rows of the j-th sampled slot. */
static int sudo_task(void *arg, size_t j)
{
        struct check_run *k = arg;
        struct sudo_rows *b = sudo_rows_of(k, j);
        size_t i = k->sudo_slots[j];
        struct slots_check_report rep = { 0 };
        bool root = geteuid() == 0;

        /* The child's own report: its rows go to the caller as records. */
        k->rep = &rep;
        k->err = 0;
        for (size_t c = 0; c < sizeof(per_slot) / sizeof(per_slot[0]); c++) {
                size_t from = rep.n;

                if (!runs_in_pool(&per_slot[c], root) || !runs_for(&per_slot[c], &k->slots[i]))
                        continue;
                per_slot[c].fn(k, &k->slots[i]);
                for (size_t r = from; r < rep.n; r++) {
                        const struct slots_check_row *row = &rep.rows[r];
                        struct row_rec h = {
                                .check = (unsigned) c,
                                .status = row->status,
                                .name = row->check,
                                .detail_len = strlen(row->detail),
                                .fix_len = row->fix ? strlen(row->fix) : SIZE_MAX,
                        };

                        rows_put(b, &h, sizeof(h));
                        rows_put(b, row->detail, h.detail_len);
                        if (row->fix)
                                rows_put(b, row->fix, h.fix_len);
                }
        }
        b->err = k->err;
        b->done = true;
        /* The rows are in b now; the child's own copies go before it exits. */
        slots_check_report_free(&rep);
        k->rep = NULL;
        return 0;
}

/* The sampled slots' NEEDS_SUDO rows, made ahead in the pool.  Without shared memory the run makes them itself. */
static void run_sudo_rows(struct check_run *k, bool root)
{
        int *status;
        bool any = false;

        for (size_t c = 0; c < sizeof(per_slot) / sizeof(per_slot[0]); c++)
                any |= runs_in_pool(&per_slot[c], root);
        if (!any || k->n_sudo == 0)
                return;
        status = calloc(k->n_sudo, sizeof(*status));
        k->sudo_mem = check_probe_shared(k->n_sudo * SUDO_ROWS_MAX);
        if (!status || !k->sudo_mem) {
                check_probe_shared_free(k->sudo_mem, k->n_sudo * SUDO_ROWS_MAX);
                k->sudo_mem = NULL;
                free(status);
                return;
        }
        (void) check_probe_pool(k->n_sudo, check_probe_pool_width(), 0, sudo_task, k, status);
        free(status);
}

/* Adds slot i's rows of check c from the pool; false when the run must make them itself. */
static bool sudo_rows_add(struct check_run *k, size_t c, size_t i)
{
        const struct sudo_rows *b;
        size_t off = 0;

        if (!k->sudo_mem)
                return false;
        b = sudo_rows_of(k, k->slots[i].sudo_pos);
        if (!b->done || b->overflow)
                return false;
        if (b->err)
                k->err = b->err;
        while (off + sizeof(struct row_rec) <= b->len) {
                struct row_rec h;
                char *detail, *fix = NULL;

                memcpy(&h, b->data + off, sizeof(h));
                off += sizeof(h);
                detail = strndup(b->data + off, h.detail_len);
                off += h.detail_len;
                if (h.fix_len != SIZE_MAX) {
                        fix = strndup(b->data + off, h.fix_len);
                        off += h.fix_len;
                }
                if (!detail || (h.fix_len != SIZE_MAX && !fix))
                        k->err = -ENOMEM;
                else if (h.check == c &&
                         slots_check_report_add(k->rep, h.status, h.name, k->slots[i].name, detail, fix) < 0)
                        k->err = -ENOMEM;
                free(detail);
                free(fix);
        }
        return true;
}

/* The test slot among the slots checked (the one no user holds), or NULL. */
static const struct slotinfo *test_slot(const struct check_run *k)
{
        for (size_t i = 0; i < k->n_slots; i++)
                if (!k->slots[i].user)
                        return &k->slots[i];
        return NULL;
}

/*
 * The test slot's processes, looked at before the runs that prove the host (when before is
 * NULL: d gets them) and after them: the row test-slot-idle.  Nobody holds the test slot, so
 * a process of it could only sway those runs.
 */
static void test_slot_idle(struct check_run *k, struct strbuf *d, const struct strbuf *before)
{
        const struct slotinfo *t = test_slot(k);
        struct strbuf fix = { 0 };
        int n;

        if (!t || !t->have_id)
                return;
        if (!before) {
                (void) check_slot_procs(t, d);
                return;
        }
        n = check_slot_procs(t, d);
        strbuf_addf(&fix, "find what runs as the test slot (ps -o pid,stat,cmd -u %s; nobody holds it) and end it, "
                    "then run the check again", t->name);
        if (before->len)
                check_add_rowf(k, SLOTS_CHECK_FAIL, "test-slot-idle", t->name, strbuf_str(&fix),
                               "before the runs as %s that prove the host (nobody holds it; a process of it "
                               "could stop or kill those runs), processes of it: %s", t->name, strbuf_str(before));
        else if (n != 0)
                check_add_rowf(k, SLOTS_CHECK_FAIL, "test-slot-idle", t->name, strbuf_str(&fix),
                               "a process of %s appeared while check ran as it (nobody holds it): %s", t->name,
                               strbuf_str(d));
        else
                check_add_rowf(k, SLOTS_CHECK_PASS, "test-slot-idle", t->name, NULL,
                               "no process of %s (uid %lu) before or after the runs as it that prove the host",
                               t->name, (unsigned long) t->pw.uid);
        strbuf_free(&fix);
}

/* A check that cannot run for any slot: its rows say why (true), or it runs (false). */
static bool slot_check_skipped(struct check_run *k, const struct slot_check *c, bool root)
{
        if ((c->needs & NEEDS_ROOT) && !root) {
                for (size_t i = 0; i < k->n_slots; i++)
                        check_add_rowf(k, SLOTS_CHECK_SKIP, c->row, k->slots[i].name, NULL, "%s (check runs as %s)",
                                       c->root_why, k->cfg->service);
                return true;
        }
        if ((c->needs & NEEDS_TEST) && !test_slot(k)) {
                check_add_rowf(k, SLOTS_CHECK_SKIP, c->row, NULL, NULL,
                               "no test slot: every slot of the pool is assigned or pending, and this row runs as "
                               "the test slot only (nobody holds it); release a slot or grow the pool");
                return true;
        }
        if (!(c->needs & NEEDS_RELEASE))
                return false;
        if (!(k->cfg->app_root && k->cfg->launcher)) {
                check_add_rowf(k, SLOTS_CHECK_SKIP, c->row, NULL, NULL, "%s sets no app_root and launcher",
                               k->cfg->path);
                return true;
        }
        if (k->n_launchers == 0) {
                char fix[4200];
                snprintf(fix, sizeof(fix), "deploy a release: %s/releases/<release>/bin/%s", k->cfg->app_root,
                         k->cfg->launcher);
                check_add_rowf(k, SLOTS_CHECK_FAIL, c->row, NULL, fix, "no release in %s/releases%s%s",
                               k->cfg->app_root, k->releases_missing ? ": " : "",
                               k->releases_missing ? "the folder cannot be read" : "");
                return true;
        }
        return false;
}

/* The per-slot rows in the table's order, each for every slot it runs for (the sudo rows' results added). */
static void run_per_slot_rows(struct check_run *k, bool root)
{
        for (size_t c = 0; c < sizeof(per_slot) / sizeof(per_slot[0]); c++) {
                if (slot_check_skipped(k, &per_slot[c], root))
                        continue;
                for (size_t i = 0; i < k->n_slots; i++) {
                        if (((per_slot[c].needs & NEEDS_SUDO) && !k->slots[i].sudo_rows) ||
                            !runs_for(&per_slot[c], &k->slots[i]))
                                continue;
                        if (!runs_in_pool(&per_slot[c], root) || !sudo_rows_add(k, c, i))
                                per_slot[c].fn(k, &k->slots[i]);
                }
        }
}

/* The host-wide rows before the pool's data is read: table, roots, service, releases, slotctl, pending. */
static void host_rows(struct check_run *k)
{
        check_table(k);
        check_roots(k);
        check_service_apart(k);
        if (k->cfg->app_root && k->cfg->launcher)
                check_find_releases(k);
        check_slotctl(k);
        check_pending(k);
}

/* The rows over the whole pool's folders and the drop-in: hard links, app-private, set-id, sudoers. */
static void pool_rows(struct check_run *k)
{
        check_hard_links(k);
        check_app_private(k);
        check_setid(k);
        check_sudoers_dropin(k);
        check_sudo_grants(k);
}

int slots_selfcheck(const struct slots_check_opts *o, struct slots_check_report *rep)
{
        struct check_run k = { .o = o, .rep = rep, .rootfd = -1 };
        struct probe_server srv = { .fd = -1 };
        struct strbuf before = { 0 }, after = { 0 };
        bool root = geteuid() == 0, probes = false;

        memset(rep, 0, sizeof(*rep));
        if (!check_config(&k))
                goto out;
        /* While the run is small: the slots' probes fork from it, not from the run grown by the pool's data. */
        if (root)
                (void) check_probe_server_start(&srv, check_probe_pool_width());
        k.rootfd = slots_root_open(NULL);
        if (k.rootfd < 0) {
                /* Every row below looks through it: none can run. */
                check_add_rowf(&k, SLOTS_CHECK_FAIL, "roots", NULL,
                               "see why / cannot be opened, then run the check again", "/: cannot open: %s",
                               strerror(-k.rootfd));
                goto out;
        }
        check_resolve_service(&k);
        if (k.err)
                goto out;
        if (!root && (!k.have_svc || geteuid() != k.svc.uid)) {
                k.err = -EPERM;
                goto out;
        }
        host_rows(&k);
        /* Every slot's account, groups and password from one read of each database. */
        if (!k.err && slots_accountmap_read(NULL, SLOTS_AMAP_PASSWD | SLOTS_AMAP_GROUP | (root ? SLOTS_AMAP_SHADOW : 0),
                                            &k.accounts, &(struct slots_error){ 0 }) < 0)
                k.err = -ENOMEM;
        if (k.err || collect_slots(&k) < 0 || build_plan(&k) < 0) {
                k.err = -ENOMEM;
                goto out;
        }
        pool_rows(&k);
        if (k.err || pick_sudo_slots(&k) < 0) {
                k.err = k.err ? k.err : -ENOMEM;
                goto out;
        }
        for (size_t c = 0; c < sizeof(per_slot) / sizeof(per_slot[0]); c++)
                probes |= root && (per_slot[c].needs & NEEDS_PROBE);
        if (probes)
                run_slot_probes(&k, &srv);
        check_probe_server_stop(&srv);
        if (k.err)
                goto out;
        test_slot_idle(&k, &before, NULL);
        run_sudo_rows(&k, root);
        run_per_slot_rows(&k, root);
        test_slot_idle(&k, &after, &before);
        check_other_accounts(&k);
        if (k.n_slots == 0)
                check_add_rowf(&k, SLOTS_CHECK_SKIP, "account", NULL, NULL,
                               "no slot to check: none is assigned and no test slot is free");
out:
        check_probe_server_stop(&srv);
        strbuf_free(&before);
        strbuf_free(&after);
        ctx_free(&k);
        if (k.err) {
                slots_check_report_free(rep);
                return k.err;
        }
        return 0;
}
