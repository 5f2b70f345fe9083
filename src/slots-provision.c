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

#include "cmdutil.h"
#include "config.h"
#include "emit.h"
#include "escape.h"
#include "fsutil.h"
#include "ids.h"
#include "ldif.h"
#include "provision.h"

struct run {
        int changed_exit;               /* --changed-exit N, else EXIT_DONE */
        const char *config;             /* --config FILE, else NULL */
        const char *ldif;               /* --ldif DN: print the pool's LDIF, change nothing */
        /* The run's log is one summary event (log_summary): which slots changed, the host's changes. */
        unsigned char *slot_changed;    /* [1..slots]: 1 when a change was about that slot */
        unsigned slots;
        char (*slot_names)[SLOTS_NAME_MAX];     /* the changed slots the event names, and a list of them */
        const char **slot_list;
        struct cmd_outcome out;         /* the run: --dry-run, --json, --root, its notes, error and event */
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
static void log_summary(struct run *run, int r)
{
        char (*names)[SLOTS_NAME_MAX] = calloc(run->slots + 1, SLOTS_NAME_MAX);
        const char **list = calloc(run->slots + 1, sizeof(*list));
        char ranges[400] = "(out of memory)", under[300] = "", host[600] = "", more[48] = "", err[1400];
        unsigned changes = run->out.count, to_slots = 0, host_more = 0;
        size_t n = 0, have = 0;

        if (run->out.dry_run || (r >= 0 && changes == 0))
                goto out;
        for (size_t i = 0; i < run->out.n_notes; i++) {
                const struct cmd_note *m = &run->out.notes[i];

                if (m->kind == CMD_NOTE_CHANGE && m->slot[0])
                        to_slots++;
                else if (m->kind == CMD_NOTE_CHANGE && have + 2 + strlen(m->text) < sizeof(host))
                        have += (size_t) snprintf(host + have, sizeof(host) - have, "%s%s", have ? "; " : "", m->text);
                else if (m->kind == CMD_NOTE_CHANGE)
                        host_more++;
        }
        if (names && list && run->slot_changed)
                n = slot_ranges(run, ranges, sizeof(ranges), names);
        for (size_t i = 0; i < n; i++)
                list[i] = names[i];
        if (run->out.root)
                snprintf(under, sizeof(under), " under %s", run->out.root);
        if (host_more)
                snprintf(more, sizeof(more), "; and %u more", host_more);
        run->out.slots = list;
        run->out.n_slots = n;
        if (r < 0)
                cmd_outcome_event(&run->out, CMD_EV_PROVISION_REFUSED, "provision%s refused: %s; %u changes made "
                                  "before it%s%s%s%s%s", under, cmd_outcome_error_text(&run->out, err, sizeof(err)),
                                  changes, n ? " to " : "", n ? ranges : "", host[0] ? "; " : "", host, more);
        else
                cmd_outcome_event(&run->out, CMD_EV_PROVISIONED, "provisioned%s: %u changes, %u of them to %zu "
                                  "slot%s%s%s%s%s%s%s", under, changes, to_slots, n, n == 1 ? "" : "s",
                                  n ? " (" : "", n ? ranges : "", n ? ")" : "", host[0] ? "; " : "", host, more);
        /* The names live as long as the run: the outcome points at them. */
        run->slot_names = names;
        run->slot_list = list;
        return;
out:
        free(names);
        free(list);
}

/* Each record of the run, in order, into its outcome; a change about a slot marks it for the summary. */
static void report(void *arg, const struct slots_prov_msg *m)
{
        static const enum cmd_note_kind kind[] = {
                [SLOTS_PROV_CHANGE] = CMD_NOTE_CHANGE,
                [SLOTS_PROV_WARNING] = CMD_NOTE_WARNING,
                [SLOTS_PROV_PROBLEM] = CMD_NOTE_CONFLICT,
        };
        struct run *run = arg;
        char name[SLOTS_NAME_MAX];
        bool about = m->slot && m->slot <= run->slots;

        if (about && run->slot_changed && m->kind == SLOTS_PROV_CHANGE)
                run->slot_changed[m->slot] = 1;
        cmd_outcome_add(&run->out, kind[m->kind], about ? slots_slot_name(m->slot, name) : NULL, m->object, m->text,
                        m->fix);
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
static int print_ldif(struct run *run, const struct slots_config *c)
{
        struct slots_error e;
        size_t len;
        int r = 0;
        char *text;

        slots_error_clear(&e);
        text = slots_ldif(c, run->ldif, &len, &r, &e);

        if (!text) {
                cmd_outcome_fail(&run->out, "cannot print the LDIF", &e);
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
                        run->out.root = optarg;
                        break;
                case 'n':
                        run->out.dry_run = true;
                        break;
                case 'l':
                        run->ldif = optarg;
                        break;
                case 'c':
                        run->config = optarg;
                        break;
                case 'j':
                        run->out.json = true;
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
        if (run->ldif && (run->out.root || run->out.dry_run || run->out.json || run->changed_exit)) {
                fprintf(cmd_err(), "%s: --ldif changes nothing and prints LDIF: it takes only --config\n", cmd_name);
                usage(cmd_err());
                return EXIT_USAGE;
        }
        if (run->out.root && !run->out.root[0]) {
                fprintf(cmd_err(), "%s: --root needs a folder\n", cmd_name);
                return EXIT_USAGE;
        }
        return -1;
}

/* The tree to work on: the host is AT_FDCWD, as slots-admin has it; an image root is resolved in itself. */
static int open_tree(struct run *run, int *rootfd)
{
        struct slots_error e = { 0 };
        int fd;

        *rootfd = AT_FDCWD;
        if (!run->out.root)
                return -1;
        fd = slots_root_open(run->out.root);
        if (fd >= 0) {
                *rootfd = fd;
                return -1;
        }
        *rootfd = -1;
        /* A root that is not there is an argument naming nothing: a usage error; one that fails to open, a failure. */
        if (fd == -ENOENT || fd == -ENOTDIR)
                slots_error_invalid(&e, fd, run->out.root, "%s", strerror(-fd));
        else
                slots_error_set(&e, fd, run->out.root, "%s", strerror(-fd));
        cmd_outcome_fail(&run->out, "cannot open the root", &e);
        return cmd_exit_for(fd, &e);
}

/* --config and SLOTS_CONFIG name a file of the invoking host; the default lives in the tree.  -1: loaded. */
static int load_config(struct run *run, int rootfd, struct slots_config **c)
{
        /* A run that changes the host acts as root on what the config says: one others can change is refused. */
        unsigned flags = run->out.dry_run || run->ldif ? 0 : SLOTS_CONFIG_ROOT_OWNED;
        const char *config = run->config;
        struct slots_error e = { 0 };
        char *path = NULL;
        int r, at;

        if (!config && getenv("SLOTS_CONFIG") && getenv("SLOTS_CONFIG")[0])
                config = slots_config_default_path();
        at = run->out.root && !config ? rootfd : AT_FDCWD;
        if (config) {
                path = absolute(config);
                if (!path) {
                        slots_error_set(&e, -errno, config, "%s", strerror(errno));
                        cmd_outcome_fail(&run->out, "cannot read the config", &e);
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

                cmd_outcome_fail(&run->out, e.kind == SLOTS_ERR_INVALID ? "invalid config" :
                          e.kind == SLOTS_ERR_REFUSED ? "refused" : "cannot read the config", &e);
                return named_nothing ? EXIT_USAGE : cmd_exit_for(r, &e);
        }
        /* A dry run or --ldif changes nothing: the same rule, as a warning with its fix. */
        slots_error_clear(&e);
        if (!flags && slots_config_writers_at(at, (*c)->path, &e) == -EPERM && e.kind == SLOTS_ERR_REFUSED) {
                char text[SLOTS_ERR_TEXT + 128];

                snprintf(text, sizeof(text), "%s; a run that changes the host refuses this config, and pam_slots "
                         "refuses every slot session with it", e.reason);
                cmd_outcome_add(&run->out, CMD_NOTE_WARNING, NULL, NULL, text, e.fix);
        }
        return -1;
}

/* One run of slots_provision(), its changes logged per slot; the exit status. */
static int provision(struct run *run, int rootfd, const struct slots_config *c)
{
        struct slots_prov_opts po = { .dry_run = run->out.dry_run, .host = !run->out.root, .lastchg = shadow_today(),
                                      .report = report, .arg = run };
        struct slots_error e;
        int r;

        run->slots = c->slots;
        /* Without it (out of memory) the event names no slot's range but says so. */
        run->slot_changed = calloc(c->slots + 1, 1);
        run->out.service = c->service;
        slots_error_clear(&e);
        r = slots_provision(rootfd, c, &po, &run->out.count, &e);
        run->out.changed = run->out.count > 0;
        if (r < 0)
                cmd_outcome_fail(&run->out, e.kind == SLOTS_ERR_INVALID ? "invalid config or table" :
                          e.kind == SLOTS_ERR_REFUSED ? "refused" : "cannot provision", &e);
        log_summary(run, r);
        free(run->slot_changed);
        if (r < 0) {
                if (run->out.count)
                        snprintf(run->out.closing, sizeof(run->out.closing), "%u change%s made before this failure; "
                                 "fix it and run again", run->out.count, run->out.count == 1 ? " was" : "s were");
                return cmd_exit_for(r, &e);
        }
        snprintf(run->out.line, sizeof(run->out.line), "%u changes", run->out.count);
        if (run->out.dry_run)
                snprintf(run->out.closing, sizeof(run->out.closing), "dry run: nothing was changed");
        return run->out.count ? run->changed_exit : EXIT_DONE;
}

int main(int argc, char **argv)
{
        struct run run = { .changed_exit = EXIT_DONE };
        struct slots_config *c = NULL;
        char err[1400];
        int rootfd = -1, status;

        cmd_name = "slots-provision";
        cmd_outcome_init(&run.out, "provision", false, false);
        run.out.listed = true;
        status = parse_args(&run, argc, argv);
        if (status >= 0)
                return status;
        if (!run.out.dry_run && !run.ldif && geteuid() != 0) {
                struct slots_error e = { 0 };

                slots_error_set(&e, -EPERM, "", "must be run as root");
                slots_error_fix(&e, "run it as root, or with --dry-run to see the plan");
                cmd_outcome_fail(&run.out, "cannot provision", &e);
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
                status = print_ldif(&run, c);
        else
                status = provision(&run, rootfd, c);
out:
        /* Every refusal is logged, those before the run began too (not root, a config refused). */
        if (status != EXIT_DONE && status != run.changed_exit && run.out.event == CMD_EV_N && !run.out.dry_run &&
            !run.ldif)
                cmd_outcome_event(&run.out, CMD_EV_PROVISION_REFUSED, "provision%s%s refused: %s",
                                  run.out.root ? " under " : "", run.out.root ? run.out.root : "",
                                  cmd_outcome_error_text(&run.out, err, sizeof(err)));
        run.out.status = status;
        status = cmd_emit(&run.out);
        free(run.slot_names);
        free(run.slot_list);
        slots_config_free(c);
        slots_close(rootfd);
        return status;
}
