/* slots-admin: the command line for the slot table (assign, release, status, check). */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <jansson.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "arena.h"
#include "assign.h"
#include "check.h"
#include "status.h"
#include "cmdutil.h"
#include "escape.h"
#include "config.h"
#include "ids.h"
#include "nss.h"
#include "release.h"
#include "service.h"
#include "store.h"
#include "tree.h"

static const char usage_text[] =
        "Usage: slots-admin [--config FILE] COMMAND [ARGS]\n"
        "\n"
        "Manage the slot table: which application user holds which slot account.\n"
        "\n"
        "Commands:\n"
        "  assign [--json] [--dry-run] USER [SLOT]\n"
        "                            give USER the slot SLOT, or the lowest free slot; prints the slot\n"
        "  release [--json] [--dry-run] USER\n"
        "                            free the slot USER holds and clean it for the next user\n"
        "  release --slot SLOT       the same by slot; also finishes a release left pending\n"
        "  status [--json] [USER|SLOT]\n"
        "                            one row per slot, the table file's owner and mode, the test slot\n"
        "  status --held             one line per slot assigned or pending, with what releases it\n"
        "  check [--json] [--format FORMAT] [--output FILE] [--timeout SECONDS]\n"
        "                            read-only self-check of the host, as the slots see it; exit 1 on\n"
        "                            any failure, each with its fix\n"
        "\n"
        "Options:\n"
        "  --config FILE             config file (default: $SLOTS_CONFIG or /etc/slots/slots.conf)\n"
        "  --json                    machine-readable output (assign and release: changed, slot, user,\n"
        "                            error; status, check)\n"
        "  --slot SLOT               select by slot (release)\n"
        "  --format FORMAT           check: text (default), json, nagios (one plugin line; exit 0 OK,\n"
        "                            2 CRITICAL, 3 UNKNOWN) or prometheus (node_exporter textfile)\n"
        "  --output FILE             check: replace FILE atomically (mode 0644) instead of stdout\n"
        "  --dry-run                 assign and release: say what would change (changed in --json),\n"
        "                            write nothing; the exit status is the real run's\n"
        "  --timeout SECONDS         check: the limit of each timed stage of its runs, 1 to 3600\n"
        "                            (default 10; the chain's probe 20)\n"
        "  -h, --help                show this help and exit\n"
        "  -V, --version             show the version and exit\n"
        "\n"
        "Exit status: 0 done (a no-op counts as done), 1 refused or failed (nothing changed),\n"
        "2 usage error or an invalid config or table.  See slots-admin(8).\n";

struct opts {
        const char *config;
        const char *slot;
        bool json;
        bool dry_run;                   /* --dry-run: say what would change, write nothing */
        bool held;                      /* status --held */
        const char *cmd;                /* "assign", "release", ... */
        int timeout_s;                  /* check's --timeout; 0: its defaults */
        const char *format;             /* check's --format, else NULL */
        const char *output;             /* check's --output, else NULL */
};

/* What a command works on: the config and the service group. */
struct admin_run {
        struct slots_config *cfg;
        gid_t group;
        char *group_name;
};

static void ctx_done(struct admin_run *x)
{
        free(x->group_name);
        slots_config_free(x->cfg);
}

static int usage_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static int usage_error(const char *fmt, ...)
{
        va_list ap;

        fprintf(stderr, "%s: ", cmd_name);
        va_start(ap, fmt);
        vfprintf(stderr, fmt, ap);
        va_end(ap);
        fprintf(stderr, "\nTry 'slots-admin --help'.\n");
        return EXIT_USAGE;
}

/*
 * Loads config and service group.  A command that acts as root (config_flags
 * SLOTS_CONFIG_ROOT_OWNED) refuses a config someone else can change; a reader warns.
 */
static int ctx_load(struct admin_run *x, const struct opts *o, const char *what, unsigned config_flags)
{
        struct slots_error e;
        int r;

        r = cmd_load_config_flags(o->config, config_flags, &x->cfg);
        if (r != EXIT_DONE)
                return r;
        if (!(config_flags & SLOTS_CONFIG_ROOT_OWNED))
                cmd_warn_config_writers(x->cfg);
        slots_error_clear(&e);
        r = slots_service_group(x->cfg, &x->group, &x->group_name, &e);
        if (r < 0) {
                cmd_report(what, &e, NULL);
                return EXIT_REFUSED;
        }
        return EXIT_DONE;
}

static int need_root(const char *what)
{
        struct slots_error e;

        if (geteuid() == 0)
                return EXIT_DONE;
        slots_error_refuse(&e, -EPERM, "", "permission denied: only root changes the slot table");
        slots_error_fix(&e, "run it as root (sudo slots-admin ...)");
        cmd_report(what, &e, NULL);
        return EXIT_REFUSED;
}

/* A tree walk's note (an entry left alone): a warning on stderr, escaped; the first 20 of them. */
static void tree_note(void *data, const char *path, const char *why)
{
        unsigned long *shown = data;
        char *p;

        if ((*shown)++ >= 20)
                return;
        p = slots_escape(path);
        fprintf(stderr, "%s: warning: %s: %s\n", cmd_name, p ? p : "(out of memory)", why);
        free(p);
}

static void tree_notes_done(unsigned long shown)
{
        if (shown > 20)
                fprintf(stderr, "%s: warning: and %lu more entries left alone\n", cmd_name, shown - 20);
}

/* The store's table policy with the service group of x, ids named. */
static struct slots_table_policy table_policy(const struct admin_run *x)
{
        return (struct slots_table_policy){ .group = x->group, .group_name = x->group_name,
                                            .user_name = slots_uid_name, .group_name_of = slots_gid_name };
}

/*
 * After assign: the write kept the table's owner, group, mode and ACL.  When the
 * store's verdict says the service group cannot read what was kept (a table
 * left root:root by a script: the service refuses every user's command although
 * assign succeeded), or that someone but root may write it: say so, with the fix.
 */
static void warn_table_policy(const struct admin_run *x, const struct slots_table_verdict *v)
{
        char owner[64], group[64];

        if (!(v->writable || v->unreadable))
                return;
        fprintf(stderr, "%s: warning: %s is %s:%s %04o: %s%s%s (%s)\n", cmd_name, x->cfg->table,
                slots_uid_name(v->st.st_uid, owner, sizeof(owner)),
                slots_gid_name(v->st.st_gid, group, sizeof(group)), v->st.st_mode & 07777u,
                v->writable ? "someone but root may write it, and so decide who gets a slot's session" :
                "the service account ", v->writable ? "" : x->cfg->service,
                v->writable ? "" : " cannot read it, so the service refuses every user's command", v->e.reason);
        fprintf(stderr, "%s: fix: %s\n", cmd_name, v->e.fix);
}

/*
 * Prints the slot name, the one line a caller reads from assign.  A write that
 * fails (a closed or full stdout) is a failure: the caller would get no slot.
 */
static int print_slot(const char *name)
{
        int r = printf("%s\n", name) < 0 ? -(errno ? errno : EIO) : cmd_stdout_done();

        if (r < 0) {
                fprintf(stderr, "%s: cannot print the slot name (the assignment stands; assign again prints it): "
                        "standard output: %s\n", cmd_name,
                        r == -EBADF ? "closed when assign started" : strerror(-r));
                return EXIT_REFUSED;
        }
        return EXIT_DONE;
}

/*
 * --json of assign and release, in the shape of slots-provision's: whether the
 * table changed, the slot and user it is about, and the error that ended the
 * run (NULL: none), with the shape's version and whether it was a dry run.
 * Returns st, or 1 when the object could not be printed.
 */
static bool dry_run_json;

static int print_result_json(int st, bool changed, unsigned slot, const char *user, const char *what,
                             const struct slots_error *e, json_t *skipped)
{
        const bool dry_run = dry_run_json;
        char name[SLOTS_NAME_MAX];
        json_t *root, *err = json_null();
        int r;

        if (e)
                err = json_pack("{s:s, s:o, s:o, s:o, s:o, s:o}", "what", what, "object", cmd_json_text(e->object),
                                "line", e->line ? json_integer(e->line) : json_null(), "column",
                                e->column ? json_integer(e->column) : json_null(), "reason",
                                cmd_json_text(e->reason), "fix", e->fix[0] ? cmd_json_text(e->fix) : json_null());
        root = json_pack("{s:i, s:b, s:b, s:o, s:o, s:o}", "version", CMD_JSON_VERSION, "dry_run", dry_run,
                         "changed", changed, "slot", slot ? json_string(slots_slot_name(slot, name)) : json_null(),
                         "user", user ? cmd_json_text(user) : json_null(), "error", err ? err : json_null());
        if (root && skipped)
                json_object_set(root, "skipped", skipped);
        json_decref(skipped);
        r = root && json_dumpf(root, stdout, JSON_INDENT(2) | JSON_PRESERVE_ORDER) == 0 && putchar('\n') != EOF ?
            cmd_stdout_done() : -EIO;
        json_decref(root);
        if (r < 0) {
                fprintf(stderr, "%s: cannot print the JSON result: standard output: %s\n", cmd_name,
                        r == -EBADF ? "closed when the command started" : strerror(-r));
                return EXIT_REFUSED;
        }
        return st;
}

/* The refusal of an assign (or a release) that never reached the table: the error cmd_report printed. */
static void log_refusal(enum cmd_event ev, const char *slot, const char *user)
{
        if (ev == CMD_EV_ASSIGN_REFUSED)
                cmd_event(ev, slot, user, "refused to assign %s to user %s: %s", slot ? slot : "a slot", user,
                          cmd_last_error());
        else if (slot)
                cmd_event(ev, slot, user, "refused to release %s: %s", slot, cmd_last_error());
        else
                cmd_event(ev, NULL, user, "refused to release the slot of user %s: %s", user ? user : "?",
                          cmd_last_error());
}

/* Logs an assign's end as one event (after cmd_report, whose error it names): nothing for a no-op. */
static void assign_log(const char *user, const char *asked, const char *name, int r,
                       const struct slots_assign_report *rep)
{
        const char *about = asked ? asked : name[0] ? name : NULL;
        char tree[160] = "";

        if (rep->tree_prepared)
                snprintf(tree, sizeof(tree), "; tree prepared: %lu entries, %lu changed, %lu hard-linked files "
                         "left alone", rep->tree.entries, rep->tree.changed, rep->tree.linked);
        if (r < 0 && rep->step)
                cmd_event(CMD_EV_ASSIGN_UNFINISHED, name, user, "assigned %s to user %s, but preparing the tree "
                          "failed: %s", name, user, cmd_last_error());
        else if (r < 0)
                cmd_event(CMD_EV_ASSIGN_REFUSED, about, user, "refused to assign %s to user %s: %s%s",
                          about ? about : "a slot", user, cmd_last_error(),
                          rep->marked_pending ? "; marked cleanup pending" : "");
        else if (rep->changed)
                cmd_event(CMD_EV_ASSIGNED, name, user, "assigned %s to user %s%s", name, user, tree);
        else if (rep->tree_prepared && rep->tree.changed)
                cmd_event(CMD_EV_ASSIGNED, name, user, "user %s holds %s already%s", user, name, tree);
}

/* The free slots the lowest-free choice passed over, each with why and the fix: warnings on stderr. */
static void warn_skipped(const struct slots_assign_report *rep)
{
        char name[SLOTS_NAME_MAX];

        for (unsigned i = 0; i < rep->n_skipped && i < SLOTS_ASSIGN_SKIPS_KEPT; i++) {
                fprintf(stderr, "%s: warning: skipped %s: %s\n", cmd_name, slots_slot_name(rep->skipped[i].slot, name),
                        rep->skipped[i].why.reason);
                fprintf(stderr, "%s: fix: %s\n", cmd_name, rep->skipped[i].why.fix);
        }
        if (rep->n_skipped > SLOTS_ASSIGN_SKIPS_KEPT)
                fprintf(stderr, "%s: warning: and %u more free slots skipped\n", cmd_name,
                        rep->n_skipped - SLOTS_ASSIGN_SKIPS_KEPT);
}

/* The same for --json: [{"slot", "reason", "fix"}], the first few. */
static json_t *skipped_json(const struct slots_assign_report *rep)
{
        json_t *a = json_array();
        char name[SLOTS_NAME_MAX];

        for (unsigned i = 0; a && i < rep->n_skipped && i < SLOTS_ASSIGN_SKIPS_KEPT; i++)
                json_array_append_new(a, json_pack("{s:s, s:o, s:o}", "slot",
                                                   slots_slot_name(rep->skipped[i].slot, name), "reason",
                                                   cmd_json_text(rep->skipped[i].why.reason), "fix",
                                                   cmd_json_text(rep->skipped[i].why.fix)));
        return a;
}

/* What a refused or failed assign could not do: "invalid table", or "cannot assign" the slot it is about. */
static void assign_what(char *what, size_t size, const struct slots_assign_report *rep, const struct slots_error *e,
                        const char *asked)
{
        char name[SLOTS_NAME_MAX];

        if (e->kind == SLOTS_ERR_INVALID)
                snprintf(what, size, "invalid table");
        else if (rep->slot && rep->verdict != SLOTS_ASSIGN_HELD_ELSEWHERE)
                snprintf(what, size, "cannot assign %s", slots_slot_name(rep->slot, name));
        else
                snprintf(what, size, "cannot assign %s", asked ? asked : "a slot");
}

/* Reports slots_assign's result r (asked: the SLOT argument, or NULL); returns the exit status. */
static int assign_report(const struct admin_run *x, const struct opts *o, const char *user, const char *asked, int r,
                         const struct slots_assign_report *rep, struct slots_error *e)
{
        char what[SLOTS_NAME_MAX + 96], name[SLOTS_NAME_MAX] = "", fix[SLOTS_ERR_TEXT + 256] = "";
        int st;

        if (rep->slot)
                slots_slot_name(rep->slot, name);
        warn_skipped(rep);
        if (r < 0 && rep->step) {
                snprintf(what, sizeof(what), "cannot prepare the user's tree for %s", name);
                snprintf(fix, sizeof(fix), "%s, then run the same assign again (the assignment stands, and "
                         "assign is idempotent): slots-admin assign %s %s", e->fix[0] ? e->fix : "remove the cause",
                         user, name);
                e->fix[0] = '\0';
        } else if (r < 0) {
                assign_what(what, sizeof(what), rep, e, asked);
        }
        if (r < 0) {
                cmd_report(what, e, fix[0] ? fix : NULL);
                assign_log(user, asked, name, r, rep);
                if (fix[0])
                        snprintf(e->fix, sizeof(e->fix), "%.*s", (int) sizeof(e->fix) - 1, fix);
                st = rep->step ? EXIT_REFUSED : cmd_exit_for(r, e);
                return o->json ? print_result_json(st, rep->changed, rep->slot, user, what, e, skipped_json(rep)) : st;
        }
        assign_log(user, asked, name, r, rep);
        if (!rep->table_ok)
                warn_table_policy(x, &rep->table);
        return o->json ? print_result_json(EXIT_DONE, rep->changed, rep->slot, user, NULL, NULL, skipped_json(rep)) :
                         print_slot(name);
}

/* --dry-run: the table read as status reads it (no lock taken, no file created); exit status, e set. */
static int dry_open(const struct admin_run *x, struct slots_store *st, const char *what, struct slots_error *e)
{
        int r;

        slots_error_clear(e);
        r = slots_store_open(st, AT_FDCWD, x->cfg->table, x->cfg->slots, x->group, 0, e);
        if (r < 0) {
                cmd_report(e->kind == SLOTS_ERR_INVALID ? "invalid table" : what, e, NULL);
                return cmd_exit_for(r, e);
        }
        return EXIT_DONE;
}

/*
 * The end of a dry run: the JSON (or the line already printed) reached its reader; "nothing
 * changed".  An assign's JSON has "skipped" as the real run's has (taken; NULL for release).
 */
static int dry_done(const struct opts *o, int st, bool changed, unsigned slot, const char *user, const char *what,
                    const struct slots_error *e, json_t *skipped)
{
        if (o->json) {
                st = print_result_json(st, changed, slot, user, what, e, skipped);
        } else {
                json_decref(skipped);
                if (cmd_stdout_done() < 0) {
                        fprintf(stderr, "%s: cannot print the dry run: standard output: %s\n", cmd_name,
                                strerror(errno));
                        st = EXIT_REFUSED;
                }
        }
        fprintf(cmd_err(), "%s: dry run: nothing was changed\n", cmd_name);
        return st;
}

/*
 * assign --dry-run: what step 1 of the real run decides (slots_assign_dry: the verdict, the one
 * rule on the slot's account, the account, the service apart and the folders of a new
 * assignment), its refusal with the same words and exit status; nothing written, no lock.
 */
static int dry_assign(const struct admin_run *x, const struct opts *o, const char *user, const char *asked,
                      unsigned want)
{
        struct slots_assign_report rep;
        char what[SLOTS_NAME_MAX + 32], name[SLOTS_NAME_MAX] = "";
        struct slots_error e;
        int r;

        slots_error_clear(&e);
        r = slots_assign_dry(x->cfg, x->group, user, want, &rep, &e);
        if (rep.slot)
                slots_slot_name(rep.slot, name);
        warn_skipped(&rep);
        if (r < 0) {
                assign_what(what, sizeof(what), &rep, &e, asked);
                cmd_report(what, &e, NULL);
                return dry_done(o, cmd_exit_for(r, &e), false, rep.slot, user, what, &e, skipped_json(&rep));
        }
        if (!o->json && rep.changed)
                printf("would assign %s to user %s\n", name, user);
        else if (!o->json)
                printf("user %s holds %s already: nothing would change in the table\n", user, name);
        return dry_done(o, EXIT_DONE, rep.changed, rep.slot, user, NULL, NULL, skipped_json(&rep));
}

/* release --dry-run: what the table says would be released; nothing written, no process touched. */
static int dry_release(const struct admin_run *x, const struct opts *o, const char *user, unsigned n)
{
        struct slots_store st = { 0 };
        const char *holder = NULL, *since, *released;
        char what[SLOTS_NAME_MAX + 32], name[SLOTS_NAME_MAX] = "", who[72] = "";
        enum slots_slot_state state = SLOTS_SLOT_FREE;
        struct slots_error e;
        int r;

        snprintf(what, sizeof(what), "cannot release %s", o->slot ? o->slot : "the user's slot");
        r = dry_open(x, &st, what, &e);
        if (r != EXIT_DONE)
                return dry_done(o, r, false, 0, user, what, &e, NULL);
        if (user)
                n = slots_table_find_user(st.table, user);
        else if (n > x->cfg->slots)
                slots_error_refuse(&e, -EPERM, x->cfg->table, "the slot is outside the pool of %u slots",
                                   x->cfg->slots);
        if (n && n <= x->cfg->slots) {
                state = slots_table_get(st.table, n, &holder, &since, &released);
                snprintf(who, sizeof(who), "%s", holder ? holder : "");
                slots_slot_name(n, name);
        }
        slots_store_close(&st);
        if (!user && n > x->cfg->slots) {
                cmd_report(what, &e, NULL);
                return dry_done(o, EXIT_REFUSED, false, 0, NULL, what, &e, NULL);
        }
        if (!o->json) {
                if (n == 0)
                        printf("user %s holds no slot; nothing to release\n", user);
                else if (state == SLOTS_SLOT_FREE)
                        printf("%s is free; nothing to release\n", name);
                else if (state == SLOTS_SLOT_PENDING)
                        printf("would finish the release of %s\n", name);
                else
                        printf("would release %s from user %s\n", name, who);
        }
        return dry_done(o, EXIT_DONE, n && state != SLOTS_SLOT_FREE, n, user ? user : who[0] ? who : NULL, NULL,
                        NULL, NULL);
}

static int cmd_assign(const struct opts *o, int argc, char **argv)
{
        unsigned long notes = 0;
        struct slots_assign_report rep = { .tree = { .note = tree_note, .note_data = &notes } };
        struct slots_table_policy policy;
        const char *user;
        char what[64];
        struct slots_error e;
        struct admin_run x = { 0 };
        unsigned n = 0;
        int r;

        if (argc < 1 || argc > 2)
                return usage_error("assign takes USER and an optional SLOT");
        user = argv[0];
        if (!slots_user_valid(user))
                return usage_error("invalid user id: it must be 1-64 of A-Z a-z 0-9 . _ -, not "
                                   "starting with . or -");
        if (argc == 2 && !(n = slots_slot_parse(argv[1])))
                return usage_error("invalid slot name: slot names are slot01 ... slot99, slot100 ... slot9999");
        snprintf(what, sizeof(what), "cannot assign %s", argc == 2 ? argv[1] : "a slot");
        r = need_root(what);
        if (r == EXIT_DONE)
                r = ctx_load(&x, o, what, SLOTS_CONFIG_ROOT_OWNED);
        if (r != EXIT_DONE) {
                if (!o->dry_run)
                        log_refusal(CMD_EV_ASSIGN_REFUSED, argc == 2 ? argv[1] : NULL, user);
                goto out;
        }
        cmd_log_service(x.cfg->service);
        if (o->dry_run) {
                r = dry_assign(&x, o, user, argc == 2 ? argv[1] : NULL, n);
                goto out;
        }
        policy = table_policy(&x);
        slots_error_clear(&e);
        r = slots_assign(x.cfg, &policy, user, n, &rep, &e);
        tree_notes_done(notes);
        r = assign_report(&x, o, user, argc == 2 ? argv[1] : NULL, r, &rep, &e);
out:
        ctx_done(&x);
        return r;
}

/* Reports slots_release's result r for user (NULL: by slot); returns the exit status. */
static int release_report(const struct opts *o, const char *user, int r, const struct slots_release_report *rep,
                          struct slots_error *e)
{
        char what[256], name[SLOTS_NAME_MAX] = "", fix[SLOTS_ERR_TEXT + 256] = "";
        const char *who = user ? user : rep->user[0] ? rep->user : NULL;
        bool changed = rep->marked || (r >= 0 && rep->slot && !rep->was_free);

        snprintf(what, sizeof(what), "cannot release %s", o->slot ? o->slot : "the user's slot");
        if (rep->slot)
                snprintf(what, sizeof(what), "cannot release %s", slots_slot_name(rep->slot, name));
        if (r < 0 && rep->step) {
                snprintf(what, sizeof(what), "cannot release %s (%s)", name, rep->step);
                snprintf(fix, sizeof(fix), "%s, then finish the release: slots-admin release --slot %s (until "
                         "then %s stays \"cleanup\": \"pending\" and is never assigned)",
                         e->fix[0] ? e->fix : "remove the cause", name, name);
                e->fix[0] = '\0';
        } else if (r < 0 && e->kind == SLOTS_ERR_INVALID) {
                snprintf(what, sizeof(what), "invalid table");
        }
        if (r < 0) {
                cmd_report(what, e, fix[0] ? fix : NULL);
                if (rep->step)
                        cmd_event(CMD_EV_RELEASE_PENDING, name, who, "%s %s%s%s, but %s; cleanup pending",
                                  rep->marked ? "released" : "could not finish the release of", name,
                                  rep->marked ? " from user " : "", rep->marked ? rep->user : "", cmd_last_error());
                else
                        log_refusal(CMD_EV_RELEASE_REFUSED, name[0] ? name : o->slot, who);
                if (fix[0])
                        snprintf(e->fix, sizeof(e->fix), "%.*s", (int) sizeof(e->fix) - 1, fix);
                r = rep->step ? EXIT_REFUSED : cmd_exit_for(r, e);
                return o->json ? print_result_json(r, changed, rep->slot, who, what, e, NULL) : r;
        }
        /* One line for a release that ended well: what was cleaned, and that the slot is free. */
        if (rep->slot && !rep->was_free)
                cmd_event(CMD_EV_RELEASED, name, who, "%s %s%s%s: clean and free (%lu processes stopped and %lu "
                          "killed in %ld ms, tree given back: %lu entries, %lu changed; files, IPC objects and "
                          "keys removed)", rep->marked ? "released" : "finished the release of", name,
                          rep->marked ? " from user " : "", rep->marked ? rep->user : "", rep->procs.stopped,
                          rep->procs.killed, rep->procs.elapsed_ms, rep->tree.entries, rep->tree.changed);
        if (o->json)
                return print_result_json(EXIT_DONE, changed, rep->slot, who, NULL, NULL, NULL);
        if (rep->slot == 0)
                printf("user %s holds no slot; nothing to release\n", user);
        else if (rep->was_free)
                printf("%s is free; nothing to release\n", name);
        else
                printf("%s released\n", name);
        return EXIT_DONE;
}

static int cmd_release(const struct opts *o, int argc, char **argv)
{
        unsigned long notes = 0;
        struct slots_release_report rep = { .tree = { .note = tree_note, .note_data = &notes } };
        const char *user = NULL;
        struct slots_error e;
        struct admin_run x = { 0 };
        char what[256];
        unsigned n = 0;
        int r;

        if (o->slot ? argc != 0 : argc != 1)
                return usage_error("release takes USER, or --slot SLOT");
        if (o->slot && !(n = slots_slot_parse(o->slot)))
                return usage_error("invalid slot name: slot names are slot01 ... slot99, slot100 ... slot9999");
        if (!o->slot) {
                user = argv[0];
                if (!slots_user_valid(user))
                        return usage_error("invalid user id: it must be 1-64 of A-Z a-z 0-9 . _ -, not "
                                           "starting with . or -");
        }
        snprintf(what, sizeof(what), "cannot release %s", o->slot ? o->slot : "the user's slot");
        r = need_root(what);
        if (r == EXIT_DONE)
                r = ctx_load(&x, o, what, SLOTS_CONFIG_ROOT_OWNED);
        if (r != EXIT_DONE) {
                if (!o->dry_run)
                        log_refusal(CMD_EV_RELEASE_REFUSED, o->slot, user);
                goto out;
        }
        cmd_log_service(x.cfg->service);
        if (o->dry_run) {
                r = dry_release(&x, o, user, n);
                goto out;
        }
        slots_error_clear(&e);
        r = slots_release(x.cfg, x.group, user, n, &rep, &e);
        tree_notes_done(notes);
        r = release_report(o, user, r, &rep, &e);
out:
        ctx_done(&x);
        return r;
}

static int cmd_status(const struct opts *o, int argc, char **argv)
{
        if (argc > (o->held ? 0 : 1))
                return usage_error(o->held ? "status --held takes no USER or SLOT" :
                                   "status takes at most one USER or SLOT");
        if (argc == 1 && !slots_slot_parse(argv[0]) && !slots_user_valid(argv[0]))
                return usage_error("the argument is neither a slot name nor a valid user id");
        return cmd_status_show(o->config, o->held ? CMD_STATUS_HELD : o->json ? CMD_STATUS_JSON : CMD_STATUS_TEXT,
                               argc == 1 ? argv[0] : NULL);
}

/* check's --timeout: whole seconds from 1 to 3600; false for anything else. */
static bool parse_timeout(const char *arg, int *seconds)
{
        char *end;
        long t;

        errno = 0;
        t = strtol(arg, &end, 10);
        if (errno || end == arg || *end || t < 1 || t > 3600)
                return false;
        *seconds = (int) t;
        return true;
}

/* The options before the command into o; -1 to go on, else the exit status (--help, --version, an error). */
static int parse_options(int argc, char **argv, struct opts *o)
{
        static const struct option options[] = {
                { "config", required_argument, NULL, 'c' },
                { "json", no_argument, NULL, 'j' },
                { "dry-run", no_argument, NULL, 'n' },
                { "held", no_argument, NULL, 'H' },
                { "format", required_argument, NULL, 'f' },
                { "output", required_argument, NULL, 'o' },
                { "slot", required_argument, NULL, 's' },
                { "timeout", required_argument, NULL, 't' },
                { "help", no_argument, NULL, 'h' },
                { "version", no_argument, NULL, 'V' },
                {},
        };
        int c;

        while ((c = getopt_long(argc, argv, "hV", options, NULL)) != -1) {
                switch (c) {
                case 'c':
                        o->config = optarg;
                        break;
                case 'j':
                        o->json = true;
                        break;
                case 's':
                        o->slot = optarg;
                        break;
                case 'n':
                        o->dry_run = true;
                        break;
                case 'H':
                        o->held = true;
                        break;
                case 'f':
                        o->format = optarg;
                        break;
                case 'o':
                        o->output = optarg;
                        break;
                case 't':
                        if (!parse_timeout(optarg, &o->timeout_s))
                                return usage_error("--timeout takes a number of seconds from 1 to 3600, not '%s'",
                                                   optarg);
                        break;
                case 'h':
                        fputs(usage_text, stdout);
                        return EXIT_DONE;
                case 'V':
                        printf("slots-admin %s\n", PACKAGE_VERSION);
                        return EXIT_DONE;
                default:
                        fprintf(stderr, "Try 'slots-admin --help'.\n");
                        return EXIT_USAGE;
                }
        }
        return -1;
}

/* Each option goes with its commands; check's into *check.  -1 when they fit, else the usage error's status. */
static int options_fit(const struct opts *o, const char *cmd, struct cmd_check_args *check)
{
        bool is_check = strcmp(cmd, "check") == 0;

        if (o->json && strcmp(cmd, "status") != 0 && !is_check && strcmp(cmd, "assign") != 0 &&
            strcmp(cmd, "release") != 0)
                return usage_error("--json goes with assign, release, status or check");
        if (o->held && (strcmp(cmd, "status") != 0 || o->json))
                return usage_error(o->json ? "--held and --json: give one of them" : "--held goes with status");
        if (o->slot && strcmp(cmd, "release") != 0)
                return usage_error("--slot goes with release");
        if (o->dry_run && strcmp(cmd, "assign") != 0 && strcmp(cmd, "release") != 0)
                return usage_error("--dry-run goes with assign or release");
        if ((o->format || o->output || o->timeout_s) && !is_check)
                return usage_error(o->timeout_s ? "--timeout goes with check" : "--format and --output go with check");
        *check = (struct cmd_check_args){ .config = o->config, .output = o->output, .timeout_s = o->timeout_s,
                                          .format = o->json ? CMD_CHECK_JSON : CMD_CHECK_TEXT };
        if (o->format && (o->json || (int) (check->format = cmd_check_format(o->format)) < 0))
                return usage_error(o->json ? "--json and --format: give one of them" :
                                   "--format takes text, json, nagios or prometheus");
        if (o->output && !o->output[0])
                return usage_error("--output needs a file name");
        return -1;
}

int main(int argc, char **argv)
{
        int (*run)(const struct opts *o, int argc, char **argv);
        struct cmd_check_args check;
        struct opts o = { 0 };
        const char *cmd;
        int r;

        cmd_name = "slots-admin";
        cmd_fds_guard();
        r = parse_options(argc, argv, &o);
        if (r >= 0)
                return r;
        if (optind >= argc)
                return usage_error("no command given (assign, release, status, check)");
        cmd = o.cmd = argv[optind++];
        argc -= optind;
        argv += optind;
        r = options_fit(&o, cmd, &check);
        if (r >= 0)
                return r;
        dry_run_json = o.dry_run;
        if (strcmp(cmd, "check") == 0)
                return argc ? usage_error("check takes no arguments") : cmd_check(&check);
        if (strcmp(cmd, "assign") == 0)
                run = cmd_assign;
        else if (strcmp(cmd, "release") == 0)
                run = cmd_release;
        else if (strcmp(cmd, "status") == 0)
                run = cmd_status;
        else
                return usage_error("unknown command '%s' (assign, release, status, check)", cmd);
        /*
         * The table commands read one table and exit: jansson's values come from an arena
         * (nothing freed piece by piece), set before jansson's first allocation (the config's).
         */
        slots_arena_use();
        r = run(&o, argc, argv);
        slots_arena_drop();
        return r;
}
