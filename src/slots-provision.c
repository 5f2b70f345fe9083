/* slots-provision: the command line around slots_provision(); every decision is in src/lib/provision/. */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>

#include "cmdutil.h"
#include "config.h"
#include "emit.h"
#include "escape.h"
#include "fsutil.h"
#include "ids.h"
#include "ldif.h"
#include "provision.h"

struct run {
        bool dry_run;
        bool json_wanted;               /* --json */
        int changed_exit;               /* --changed-exit N, else EXIT_DONE */
        const char *config;             /* --config FILE, else NULL */
        const char *root;
        const char *ldif;               /* --ldif DN: print the pool's LDIF, change nothing */
        json_t *json;                   /* --json: the report built as the run goes, else NULL */
        unsigned json_lost;             /* entries it could not hold (out of memory) */
        /* The run's log is one summary event (log_summary): which slots changed, the host's changes. */
        unsigned char *slot_changed;    /* [1..slots]: 1 when a change was about that slot */
        unsigned slots;
        unsigned slot_changes;          /* changes about a slot */
        char host_log[600];             /* the changes about no slot, joined with "; " */
        unsigned host_more;             /* host changes that did not fit */
        char (*slot_names)[SLOTS_NAME_MAX];     /* the changed slots the event names, and a list of them */
        const char **slot_list;
        struct cmd_outcome out;         /* the run's error, event and last lines, for cmd_emit() */
};

static void usage(FILE *f)
{
        fprintf(f,
                "Usage: slots-provision [--root DIR] [--dry-run] [--config FILE] [--json]\n"
                "                       [--changed-exit N]\n"
                "       slots-provision --ldif BASE_DN [--config FILE]\n"
                "\n"
                "Creates or repairs the slot accounts, groups, folders, release traversal bits,\n"
                "shared folders, slot table, slotctl config and sudoers drop-in that the config\n"
                "describes. Prints one line per change, then \"N changes\".\n"
                "\n"
                "  --root DIR        work on the tree under DIR (an image): its etc/ files, no NSS\n"
                "  --dry-run         print what would change; change nothing\n"
                "  --ldif BASE_DN    print the pool (needs uid_base) as LDIF for ldapadd,\n"
                "                    entries below BASE_DN; change nothing\n"
                "  --config FILE     the config (default: $SLOTS_CONFIG or %s,\n"
                "                    read inside DIR with --root)\n"
                "  --json            print one JSON object: the changes, their count, warnings\n"
                "  --changed-exit N  exit N (3 to 125) instead of 0 when something changed\n"
                "                    (or, with --dry-run, would change)\n"
                "  -h, --help        show this help\n"
                "  -V, --version     show the version\n",
                SLOTS_DEFAULT_CONFIG);
}

/* "object: text", or the text alone when it already starts with the object. */
static void print_msg(const char *what, const struct slots_prov_msg *m)
{
        size_t n = strlen(m->object);
        /* Names from the file system are escaped before they reach the terminal. */
        char *obj = slots_escape(m->object), *text = slots_escape(m->text), *fix = slots_escape(m->fix);

        if (!obj || !text || !fix)
                fprintf(cmd_err(), "%s: %s: out of memory\n", cmd_name, what);
        else if (n && !(strncmp(m->text, m->object, n) == 0 && m->text[n] == ' '))
                fprintf(cmd_err(), "%s: %s: %s: %s\n", cmd_name, what, obj, text);
        else
                fprintf(cmd_err(), "%s: %s: %s\n", cmd_name, what, text);
        if (fix && fix[0])
                fprintf(cmd_err(), "%s: fix: %s\n", cmd_name, fix);
        free(obj);
        free(text);
        free(fix);
}

/* --json: adds {"object", "text", "fix"} (or, for a change, {"text"}) to the report's list `key`. */
static void json_note(struct run *run, const char *key, const struct slots_prov_msg *m)
{
        json_t *o;

        if (!run->json)
                return;
        if (m->kind == SLOTS_PROV_CHANGE)
                o = json_pack("{s:o}", "text", cmd_json_text(m->text));
        else
                o = json_pack("{s:o, s:o, s:o}", "object", cmd_json_text(m->object), "text",
                              cmd_json_text(m->text), "fix", m->fix[0] ? cmd_json_text(m->fix) : json_null());
        if (!o || json_array_append_new(json_object_get(run->json, key), o) < 0)
                run->json_lost++;
}

/* The error that ends the run: in its outcome (printed once, by cmd_emit) and its --json report. */
static void fail(struct run *run, const char *what, const struct slots_error *e)
{
        cmd_outcome_fail(&run->out, what, e);
        if (run->json && json_object_set_new(run->json, "error", cmd_error_json(what, e, NULL)) < 0)
                run->json_lost++;
}

/* Counts a change for the summary: its slot, or its text when it is about no slot. */
static void note_change(struct run *run, unsigned slot, const char *text)
{
        size_t have = strlen(run->host_log);

        if (slot && run->slot_changed && slot <= run->slots) {
                run->slot_changed[slot] = 1;
                run->slot_changes++;
        } else if (have + 2 + strlen(text) < sizeof(run->host_log)) {
                snprintf(run->host_log + have, sizeof(run->host_log) - have, "%s%s", have ? "; " : "", text);
        } else {
                run->host_more++;
        }
}

/* The changed slots as ranges, "slot01-slot03, slot07", into buf; their names into names[] (n returned). */
static size_t slot_ranges(const struct run *run, char *buf, size_t size, char (*names)[SLOTS_NAME_MAX])
{
        size_t n = 0, len = 0;

        buf[0] = '\0';
        for (unsigned a = 1; run->slot_changed && a <= run->slots; a++) {
                char first[SLOTS_NAME_MAX], last[SLOTS_NAME_MAX];
                unsigned b = a;

                if (!run->slot_changed[a])
                        continue;
                while (b < run->slots && run->slot_changed[b + 1])
                        b++;
                for (unsigned k = a; k <= b; k++)
                        slots_slot_name(k, names[n++]);
                slots_slot_name(a, first);
                slots_slot_name(b, last);
                if (len < size)
                        len += (size_t) snprintf(buf + len, size - len, "%s%s%s%s", len ? ", " : "", first,
                                                 b > a ? "-" : "", b > a ? last : "");
                a = b;
        }
        return n;
}

/*
 * One event for the whole run, whatever its size: the count, the slots changed (as
 * ranges, and one SLOTS_SLOT field each in the journal), the changes about no slot;
 * with the error that ended it, when one did.  Nothing for a dry run or 0 changes.
 */
static void log_summary(struct run *run, unsigned changes, int r)
{
        char (*names)[SLOTS_NAME_MAX] = calloc(run->slots + 1, SLOTS_NAME_MAX);
        const char **list = calloc(run->slots + 1, sizeof(*list));
        char ranges[400], under[300] = "", more[48] = "", err[1400];
        size_t n = 0;

        if (run->dry_run || (r >= 0 && changes == 0))
                goto out;
        if (names && list)
                n = slot_ranges(run, ranges, sizeof(ranges), names);
        else
                snprintf(ranges, sizeof(ranges), "(out of memory)");
        for (size_t i = 0; i < n; i++)
                list[i] = names[i];
        if (run->root)
                snprintf(under, sizeof(under), " under %s", run->root);
        if (run->host_more)
                snprintf(more, sizeof(more), "; and %u more", run->host_more);
        run->out.slots = list;
        run->out.n_slots = n;
        if (r < 0)
                cmd_outcome_event(&run->out, CMD_EV_PROVISION_REFUSED, "provision%s refused: %s; %u changes made "
                                  "before it%s%s%s%s%s", under, cmd_outcome_error_text(&run->out, err, sizeof(err)),
                                  changes, n ? " to " : "", n ? ranges : "", run->host_log[0] ? "; " : "",
                                  run->host_log, more);
        else
                cmd_outcome_event(&run->out, CMD_EV_PROVISIONED, "provisioned%s: %u changes, %u of them to %zu "
                                  "slot%s%s%s%s%s%s%s", under, changes, run->slot_changes, n, n == 1 ? "" : "s",
                                  n ? " (" : "", n ? ranges : "", n ? ")" : "", run->host_log[0] ? "; " : "",
                                  run->host_log, more);
        /* The names live as long as the run: the outcome points at them. */
        run->slot_names = names;
        run->slot_list = list;
        return;
out:
        free(names);
        free(list);
}

/* Each kind of record: its --json list and, but for a change (printed on stdout), the word stderr gives it. */
static const struct {
        const char *key, *word;
} kinds[] = {
        [SLOTS_PROV_CHANGE] = { "changes", NULL },
        [SLOTS_PROV_WARNING] = { "warnings", "warning" },
        [SLOTS_PROV_PROBLEM] = { "conflicts", "conflict" },
};

static void report(void *arg, const struct slots_prov_msg *m)
{
        struct run *run = arg;

        json_note(run, kinds[m->kind].key, m);
        if (kinds[m->kind].word) {
                print_msg(kinds[m->kind].word, m);
                return;
        }
        if (!run->json) {
                char *text = slots_escape(m->text);

                /* Not flushed line by line (a write per change); cmd_err() flushes. */
                printf("%s\n", text ? text : "(out of memory)");
                free(text);
        }
        if (!run->dry_run)
                note_change(run, m->slot, m->text);
}

/* The day written into new shadow lines: SOURCE_DATE_EPOCH when set (reproducible images), else today. */
static long shadow_today(void)
{
        const char *s = getenv("SOURCE_DATE_EPOCH");
        char *end;
        long long t;

        if (s && *s) {
                errno = 0;
                t = strtoll(s, &end, 10);
                if (!errno && !*end && t >= 0)
                        return (long) (t / 86400);
        }
        return (long) (time(NULL) / 86400);
}

/* --ldif: the pool for a directory, on stdout; nothing on the host is read or changed. */
static int print_ldif(const struct slots_config *c, const char *base_dn)
{
        struct slots_error e;
        size_t len;
        int r = 0;
        char *text;

        slots_error_clear(&e);
        text = slots_ldif(c, base_dn, &len, &r, &e);

        if (!text) {
                cmd_report("cannot print the LDIF", &e, NULL);
                return cmd_exit_for(r, &e);
        }
        if (fwrite(text, 1, len, stdout) != len || fflush(stdout) != 0) {
                fprintf(cmd_err(), "%s: cannot print the LDIF: standard output: %s\n", cmd_name, strerror(errno));
                free(text);
                return EXIT_REFUSED;
        }
        free(text);
        return EXIT_DONE;
}

/* An explicit config path is the invoking admin's: made absolute against the current folder. */
static char *absolute(const char *path)
{
        char *cwd, *s;
        int n;

        if (path[0] == '/')
                return strdup(path);
        /* The current folder at any length: no PATH_MAX buffer. */
        cwd = get_current_dir_name();
        if (!cwd)
                return NULL;
        n = asprintf(&s, "%s/%s", cwd, path);
        free(cwd);
        return n < 0 ? NULL : s;
}

/* --changed-exit N: 1 and 2 mean refused and invalid; above 125 the shell's own statuses begin. */
static bool parse_changed_exit(struct run *run, const char *arg)
{
        char *end;
        long n;

        errno = 0;
        n = strtol(arg, &end, 10);
        if (errno || end == arg || *end || n < 3 || n > 125) {
                /* The argument may hold control bytes: escaped before it reaches the terminal. */
                char *shown = slots_escape(arg);

                fprintf(cmd_err(), "%s: --changed-exit needs a number from 3 to 125, not '%s'\n", cmd_name,
                        shown ? shown : "?");
                free(shown);
                return false;
        }
        run->changed_exit = (int) n;
        return true;
}

/* The options into run; -1 to go on, else the exit status (--help, --version, a usage error). */
static int parse_args(struct run *run, int argc, char **argv)
{
        static const struct option opts[] = {
                { "root", required_argument, NULL, 'r' },
                { "dry-run", no_argument, NULL, 'n' },
                { "ldif", required_argument, NULL, 'l' },
                { "config", required_argument, NULL, 'c' },
                { "json", no_argument, NULL, 'j' },
                { "changed-exit", required_argument, NULL, 'x' },
                { "help", no_argument, NULL, 'h' },
                { "version", no_argument, NULL, 'V' },
                { 0 },
        };
        int opt;

        while ((opt = getopt_long(argc, argv, "hV", opts, NULL)) != -1) {
                switch (opt) {
                case 'r':
                        run->root = optarg;
                        break;
                case 'n':
                        run->dry_run = true;
                        break;
                case 'l':
                        run->ldif = optarg;
                        break;
                case 'c':
                        run->config = optarg;
                        break;
                case 'j':
                        run->json_wanted = true;
                        break;
                case 'x':
                        if (!parse_changed_exit(run, optarg))
                                return EXIT_USAGE;
                        break;
                case 'h':
                        usage(stdout);
                        return EXIT_DONE;
                case 'V':
                        printf("slots-provision %s\n", PACKAGE_VERSION);
                        return EXIT_DONE;
                default:
                        usage(cmd_err());
                        return EXIT_USAGE;
                }
        }
        if (optind < argc) {
                fprintf(cmd_err(), "%s: unexpected argument: %s\n", cmd_name, argv[optind]);
                usage(cmd_err());
                return EXIT_USAGE;
        }
        if (run->ldif && (run->root || run->dry_run || run->json_wanted || run->changed_exit)) {
                fprintf(cmd_err(), "%s: --ldif changes nothing and prints LDIF: it takes only --config\n", cmd_name);
                usage(cmd_err());
                return EXIT_USAGE;
        }
        if (run->root && !run->root[0]) {
                fprintf(cmd_err(), "%s: --root needs a folder\n", cmd_name);
                return EXIT_USAGE;
        }
        return -1;
}

/* --json: the report's skeleton, filled as the run goes; false when out of memory. */
static bool json_start(struct run *run)
{
        if (!run->json_wanted)
                return true;
        run->json = json_pack("{s:i, s:b, s:o, s:b, s:i, s:[], s:[], s:[], s:n}", "version", CMD_JSON_VERSION,
                              "dry_run", run->dry_run, "root",
                              run->root ? json_string(run->root) : json_null(), "changed", false, "count", 0,
                              "changes", "warnings", "conflicts", "error");
        if (!run->json)
                fprintf(cmd_err(), "%s: out of memory\n", cmd_name);
        return run->json != NULL;
}

/* The tree to work on: the host is AT_FDCWD, as slots-admin has it; an image root is resolved in itself. */
static int open_tree(struct run *run, int *rootfd)
{
        struct slots_error e = { 0 };
        int fd;

        *rootfd = AT_FDCWD;
        if (!run->root)
                return -1;
        fd = slots_root_open(run->root);
        if (fd >= 0) {
                *rootfd = fd;
                return -1;
        }
        *rootfd = -1;
        /* A root that is not there is an argument naming nothing: a usage error; one that fails to open, a failure. */
        if (fd == -ENOENT || fd == -ENOTDIR)
                slots_error_invalid(&e, fd, run->root, "%s", strerror(-fd));
        else
                slots_error_set(&e, fd, run->root, "%s", strerror(-fd));
        fail(run, "cannot open the root", &e);
        return cmd_exit_for(fd, &e);
}

/* --config and SLOTS_CONFIG name a file of the invoking host; the default lives in the tree.  -1: loaded. */
static int load_config(struct run *run, int rootfd, struct slots_config **c)
{
        /* A run that changes the host acts as root on what the config says: one others can change is refused. */
        unsigned flags = run->dry_run || run->ldif ? 0 : SLOTS_CONFIG_ROOT_OWNED;
        const char *config = run->config;
        struct slots_error e = { 0 };
        char *path = NULL;
        int r, at;

        if (!config && getenv("SLOTS_CONFIG") && getenv("SLOTS_CONFIG")[0])
                config = slots_config_default_path();
        at = run->root && !config ? rootfd : AT_FDCWD;
        if (config) {
                path = absolute(config);
                if (!path) {
                        slots_error_set(&e, -errno, config, "%s", strerror(errno));
                        fail(run, "cannot read the config", &e);
                        return EXIT_USAGE;
                }
        }
        r = slots_config_load_flags(at, path ? path : SLOTS_DEFAULT_CONFIG, flags, c, &e);
        free(path);
        if (r < 0) {
                /*
                 * A file named on the command line (or by SLOTS_CONFIG) that is not there is a usage
                 * error; the default one missing in the tree, or any config that cannot be read, a failure.
                 */
                bool named_nothing = config && (r == -ENOENT || r == -ENOTDIR);

                fail(run, e.kind == SLOTS_ERR_INVALID ? "invalid config" :
                          e.kind == SLOTS_ERR_REFUSED ? "refused" : "cannot read the config", &e);
                return named_nothing ? EXIT_USAGE : cmd_exit_for(r, &e);
        }
        /* A dry run or --ldif changes nothing: the same rule, as a warning with its fix. */
        slots_error_clear(&e);
        if (!flags && slots_config_writers_at(at, (*c)->path, &e) == -EPERM && e.kind == SLOTS_ERR_REFUSED) {
                const struct slots_prov_msg m = { .kind = SLOTS_PROV_WARNING, .object = "", .text = e.reason,
                                                  .fix = e.fix };

                json_note(run, kinds[m.kind].key, &m);
                print_msg(kinds[m.kind].word, &m);
                fprintf(cmd_err(), "%s: a run that changes the host refuses this config, and pam_slots refuses "
                        "every slot session with it\n", cmd_name);
        }
        return -1;
}

/* One run of slots_provision(), its changes logged per slot; the exit status. */
static int provision(struct run *run, int rootfd, const struct slots_config *c, unsigned *changes)
{
        struct slots_prov_opts po = { .dry_run = run->dry_run, .host = !run->root, .lastchg = shadow_today(),
                                      .report = report, .arg = run };
        struct slots_error e;
        int r;

        run->slots = c->slots;
        /* Without it (out of memory) the changes about slots are counted in the host's list. */
        run->slot_changed = calloc(c->slots + 1, 1);
        run->out.service = c->service;
        slots_error_clear(&e);
        r = slots_provision(rootfd, c, &po, changes, &e);
        if (r < 0)
                fail(run, e.kind == SLOTS_ERR_INVALID ? "invalid config or table" :
                          e.kind == SLOTS_ERR_REFUSED ? "refused" : "cannot provision", &e);
        log_summary(run, *changes, r);
        free(run->slot_changed);
        if (r < 0) {
                if (*changes)
                        snprintf(run->out.closing, sizeof(run->out.closing), "%u change%s made before this failure; "
                                 "fix it and run again", *changes, *changes == 1 ? " was" : "s were");
                return cmd_exit_for(r, &e);
        }
        if (!run->json)
                snprintf(run->out.line, sizeof(run->out.line), "%u changes", *changes);
        if (run->dry_run)
                snprintf(run->out.closing, sizeof(run->out.closing), "dry run: nothing was changed");
        return *changes ? run->changed_exit : EXIT_DONE;
}

/* --json: the report, with the count; a report that could not be whole or written is a failure. */
static int json_finish(struct run *run, unsigned changes, int status)
{
        bool ok = status == EXIT_DONE || status == run->changed_exit;

        if (!run->json)
                return status;
        json_object_set_new(run->json, "changed", json_boolean(changes > 0));
        json_object_set_new(run->json, "count", json_integer(changes));
        if (run->json_lost) {
                /* A report that leaves something out would read as a clean run. */
                fprintf(cmd_err(), "%s: out of memory: %u entries are missing from the JSON report\n", cmd_name,
                        run->json_lost);
                if (ok)
                        status = EXIT_REFUSED;
        }
        if (json_dumpf(run->json, stdout, JSON_INDENT(2) | JSON_PRESERVE_ORDER) < 0 || putchar('\n') == EOF ||
            fflush(stdout) == EOF) {
                fprintf(cmd_err(), "%s: cannot write the JSON report: %s\n", cmd_name, strerror(errno));
                if (ok)
                        status = EXIT_REFUSED;
        }
        json_decref(run->json);
        return status;
}

int main(int argc, char **argv)
{
        struct run run = { .changed_exit = EXIT_DONE };
        struct slots_config *c = NULL;
        char err[1400];
        unsigned changes = 0;
        int rootfd = -1, status;

        cmd_name = "slots-provision";
        cmd_outcome_init(&run.out, "provision", false, false);
        status = parse_args(&run, argc, argv);
        if (status >= 0)
                return status;
        run.out.dry_run = run.dry_run;
        if (!json_start(&run))
                return EXIT_REFUSED;

        if (!run.dry_run && !run.ldif && geteuid() != 0) {
                struct slots_error e = { 0 };

                slots_error_set(&e, -EPERM, "", "must be run as root");
                slots_error_fix(&e, "run it as root, or with --dry-run to see the plan");
                fail(&run, "cannot provision", &e);
                status = EXIT_REFUSED;
                goto out;
        }
        status = open_tree(&run, &rootfd);
        if (status >= 0)
                goto out;
        status = load_config(&run, rootfd, &c);
        if (status >= 0)
                goto out;

        if (run.ldif)
                status = print_ldif(c, run.ldif);
        else
                status = provision(&run, rootfd, c, &changes);
out:
        /* Every refusal is logged, those before the run began too (not root, a config refused). */
        if (status != EXIT_DONE && status != run.changed_exit && run.out.event == CMD_EV_N && !run.dry_run &&
            !run.ldif)
                cmd_outcome_event(&run.out, CMD_EV_PROVISION_REFUSED, "provision%s%s refused: %s",
                                  run.root ? " under " : "", run.root ? run.root : "",
                                  cmd_outcome_error_text(&run.out, err, sizeof(err)));
        run.out.status = status;
        status = cmd_emit(&run.out);
        status = json_finish(&run, changes, status);
        free(run.slot_names);
        free(run.slot_list);
        slots_config_free(c);
        slots_close(rootfd);
        return status;
}
