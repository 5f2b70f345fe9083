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
        "  assign [--json] USER [SLOT]\n"
        "                            give USER the slot SLOT, or the lowest free slot; prints the slot\n"
        "  release [--json] USER     free the slot USER holds and clean it for the next user\n"
        "  release --slot SLOT       the same by slot; also finishes a release left pending\n"
        "  status [--json] [USER|SLOT]\n"
        "                            one row per slot, the table file's owner and mode, the test slot\n"
        "  check [--json]            read-only self-check of the host, as the slots see it; exit 1 on\n"
        "                            any failure, each with its fix\n"
        "\n"
        "Options:\n"
        "  --config FILE             config file (default: $SLOTS_CONFIG or /etc/slots/slots.conf)\n"
        "  --json                    machine-readable output (assign and release: changed, slot, user,\n"
        "                            error; status, check)\n"
        "  --slot SLOT               select by slot (release)\n"
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
        int timeout_s;          /* check's --timeout; 0: its defaults */
};

/* What a command works on: the config and the service group. */
struct ctx {
        struct slots_config *cfg;
        gid_t group;
        char *group_name;
};

static void ctx_done(struct ctx *x)
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
static int ctx_load(struct ctx *x, const struct opts *o, const char *what, unsigned config_flags)
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
        if (geteuid() == 0)
                return EXIT_DONE;
        fprintf(stderr, "%s: %s: permission denied: only root changes the slot table\n", cmd_name, what);
        fprintf(stderr, "%s: fix: run it as root (sudo slots-admin ...)\n", cmd_name);
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
static struct slots_table_policy table_policy(const struct ctx *x)
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
static void warn_table_policy(const struct ctx *x, const struct slots_table_verdict *v)
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
 * run (NULL: none).  Returns st, or 1 when the object could not be printed.
 */
static int print_result_json(int st, bool changed, unsigned slot, const char *user, const char *what,
                             const struct slots_error *e, json_t *skipped)
{
        char name[SLOTS_NAME_MAX];
        json_t *root, *err = json_null();
        int r;

        if (e)
                err = json_pack("{s:s, s:o, s:o, s:o, s:o, s:o}", "what", what, "object", cmd_json_text(e->object),
                                "line", e->line ? json_integer(e->line) : json_null(), "column",
                                e->column ? json_integer(e->column) : json_null(), "reason",
                                cmd_json_text(e->reason), "fix", e->fix[0] ? cmd_json_text(e->fix) : json_null());
        root = json_pack("{s:b, s:o, s:o, s:o}", "changed", changed, "slot",
                         slot ? json_string(slots_slot_name(slot, name)) : json_null(), "user",
                         user ? cmd_json_text(user) : json_null(), "error", err ? err : json_null());
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

/* Logs what an assign changed, whatever its end. */
static void assign_log(const char *user, const char *name, const struct slots_assign_report *rep)
{
        if (rep->marked_pending)
                cmd_log("refused to assign %s: its folders are not as a release leaves them; cleanup pending", name);
        if (rep->changed)
                cmd_log("assigned %s to user %s", name, user);
        if (rep->tree_prepared)
                cmd_log("prepared the tree of user %s for %s: %lu entries, %lu changed, %lu hard-linked "
                        "files left alone", user, name, rep->tree.entries, rep->tree.changed, rep->tree.linked);
        else if (rep->step)
                cmd_log("assigned %s to user %s, but preparing the tree failed", name, user);
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

/* Reports slots_assign's result r (asked: the SLOT argument, or NULL); returns the exit status. */
static int assign_report(const struct ctx *x, const struct opts *o, const char *user, const char *asked, int r,
                         const struct slots_assign_report *rep, struct slots_error *e)
{
        char what[SLOTS_NAME_MAX + 96], name[SLOTS_NAME_MAX] = "", fix[SLOTS_ERR_TEXT + 256] = "";
        bool about_slot = rep->slot && rep->verdict != SLOTS_ASSIGN_HELD_ELSEWHERE;
        int st;

        if (rep->slot)
                slots_slot_name(rep->slot, name);
        assign_log(user, name, rep);
        warn_skipped(rep);
        if (r < 0 && rep->step) {
                snprintf(what, sizeof(what), "cannot prepare the user's tree for %s", name);
                snprintf(fix, sizeof(fix), "%s, then run the same assign again (the assignment stands, and "
                         "assign is idempotent): slots-admin assign %s %s", e->fix[0] ? e->fix : "remove the cause",
                         user, name);
                e->fix[0] = '\0';
        } else if (r < 0) {
                snprintf(what, sizeof(what), "%s", e->kind == SLOTS_ERR_INVALID ? "invalid table" : "");
                if (!what[0])
                        snprintf(what, sizeof(what), "cannot assign %s", about_slot ? name : asked ? asked : "a slot");
        }
        if (r < 0) {
                cmd_report(what, e, fix[0] ? fix : NULL);
                if (fix[0])
                        snprintf(e->fix, sizeof(e->fix), "%.*s", (int) sizeof(e->fix) - 1, fix);
                st = rep->step ? EXIT_REFUSED : cmd_exit_for(r, e);
                return o->json ? print_result_json(st, rep->changed, rep->slot, user, what, e, skipped_json(rep)) : st;
        }
        if (!rep->table_ok)
                warn_table_policy(x, &rep->table);
        return o->json ? print_result_json(EXIT_DONE, rep->changed, rep->slot, user, NULL, NULL, skipped_json(rep)) :
                         print_slot(name);
}

static int cmd_assign(const struct opts *o, int argc, char **argv)
{
        unsigned long notes = 0;
        struct slots_assign_report rep = { .tree = { .note = tree_note, .note_data = &notes } };
        struct slots_table_policy policy;
        const char *user;
        char what[64];
        struct slots_error e;
        struct ctx x = { 0 };
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
        if (r != EXIT_DONE)
                return r;
        r = ctx_load(&x, o, what, SLOTS_CONFIG_ROOT_OWNED);
        if (r != EXIT_DONE)
                goto out;
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
        if (rep->marked)
                cmd_log("released %s from user %s (cleanup pending)", name, rep->user);
        if (r < 0 && rep->step) {
                snprintf(what, sizeof(what), "cannot release %s (%s)", name, rep->step);
                snprintf(fix, sizeof(fix), "%s, then finish the release: slots-admin release --slot %s (until "
                         "then %s stays \"cleanup\": \"pending\" and is never assigned)",
                         e->fix[0] ? e->fix : "remove the cause", name, name);
                e->fix[0] = '\0';
                cmd_log("release of %s failed at %s; cleanup pending", name, rep->step);
        } else if (r < 0 && e->kind == SLOTS_ERR_INVALID) {
                snprintf(what, sizeof(what), "invalid table");
        }
        if (r < 0) {
                cmd_report(what, e, fix[0] ? fix : NULL);
                if (fix[0])
                        snprintf(e->fix, sizeof(e->fix), "%.*s", (int) sizeof(e->fix) - 1, fix);
                r = rep->step ? EXIT_REFUSED : cmd_exit_for(r, e);
                return o->json ? print_result_json(r, changed, rep->slot, who, what, e, NULL) : r;
        }
        if (rep->slot && !rep->was_free) {
                cmd_log("cleaned %s: %lu processes stopped and %lu killed in %ld ms, tree given back (%lu entries, "
                        "%lu changed), files, IPC objects and keys removed", name, rep->procs.stopped,
                        rep->procs.killed, rep->procs.elapsed_ms, rep->tree.entries, rep->tree.changed);
                cmd_log("%s is clean and free", name);
        }
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
        struct ctx x = { 0 };
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
        if (r != EXIT_DONE)
                return r;
        r = ctx_load(&x, o, what, SLOTS_CONFIG_ROOT_OWNED);
        if (r != EXIT_DONE)
                goto out;
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
        if (argc > 1)
                return usage_error("status takes at most one USER or SLOT");
        if (argc == 1 && !slots_slot_parse(argv[0]) && !slots_user_valid(argv[0]))
                return usage_error("the argument is neither a slot name nor a valid user id");
        return cmd_status_show(o->config, o->json, argc == 1 ? argv[0] : NULL);
}

int main(int argc, char **argv)
{
        static const struct option options[] = {
                { "config", required_argument, NULL, 'c' },
                { "json", no_argument, NULL, 'j' },
                { "slot", required_argument, NULL, 's' },
                { "timeout", required_argument, NULL, 't' },
                { "help", no_argument, NULL, 'h' },
                { "version", no_argument, NULL, 'V' },
                {},
        };
        int (*run)(const struct opts *o, int argc, char **argv);
        struct opts o = { 0 };
        const char *cmd;
        int c, r;

        cmd_name = "slots-admin";
        cmd_fds_guard();
        while ((c = getopt_long(argc, argv, "hV", options, NULL)) != -1) {
                switch (c) {
                case 'c':
                        o.config = optarg;
                        break;
                case 'j':
                        o.json = true;
                        break;
                case 's':
                        o.slot = optarg;
                        break;
                case 't': {
                        char *end;
                        long t;

                        errno = 0;
                        t = strtol(optarg, &end, 10);
                        if (errno || end == optarg || *end || t < 1 || t > 3600)
                                return usage_error("--timeout takes a number of seconds from 1 to 3600, not '%s'",
                                                   optarg);
                        o.timeout_s = (int) t;
                        break;
                }
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
        if (optind >= argc)
                return usage_error("no command given (assign, release, status, check)");
        cmd = argv[optind++];
        argc -= optind;
        argv += optind;
        if (o.json && strcmp(cmd, "status") != 0 && strcmp(cmd, "check") != 0 && strcmp(cmd, "assign") != 0 &&
            strcmp(cmd, "release") != 0)
                return usage_error("--json goes with assign, release, status or check");
        if (o.slot && strcmp(cmd, "release") != 0)
                return usage_error("--slot goes with release");
        if (o.timeout_s && strcmp(cmd, "check") != 0)
                return usage_error("--timeout goes with check");
        if (strcmp(cmd, "check") == 0)
                return argc ? usage_error("check takes no arguments") : cmd_check(o.config, o.json, o.timeout_s);
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
