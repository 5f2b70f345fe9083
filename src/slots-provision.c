/* slots-provision: the command line around slots_provision(); every decision is in src/lib/provision.c. */
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
#include "fsutil.h"
#include "ids.h"
#include "ldif.h"
#include "provision.h"

struct run {
        bool dry_run;
        const char *root;
        const char *ldif;               /* --ldif DN: print the pool's LDIF, change nothing */
        unsigned problems;
        char **slot_log;                /* per slot: its changes, logged as one line (slot_log_flush) */
        size_t *slot_log_len;
        unsigned slots;
};

static void usage(FILE *f)
{
        fprintf(f,
                "Usage: slots-provision [--root DIR] [--dry-run] [--config FILE]\n"
                "       slots-provision --ldif BASE_DN [--config FILE]\n"
                "\n"
                "Creates or repairs the slot accounts, groups, folders, release traversal bits,\n"
                "shared folders, slot table, slotctl config and sudoers drop-in that the config\n"
                "describes. Prints one line per change, then \"N changes\".\n"
                "\n"
                "  --root DIR     work on the tree under DIR (an image): its etc/ files, no NSS\n"
                "  --dry-run      print what would change; change nothing\n"
                "  --ldif BASE_DN print the pool (needs uid_base) as LDIF for ldapadd,\n"
                "                 entries below BASE_DN; change nothing\n"
                "  --config FILE  the config (default: $SLOTS_CONFIG or %s,\n"
                "                 read inside DIR with --root)\n"
                "  --help         show this help\n"
                "  --version      show the version\n",
                SLOTS_DEFAULT_CONFIG);
}

/* "object: text", or the text alone when it already starts with the object. */
static void print_msg(const char *what, const struct slots_prov_msg *m)
{
        size_t n = strlen(m->object);

        if (n && !(strncmp(m->text, m->object, n) == 0 && m->text[n] == ' '))
                fprintf(stderr, "%s: %s: %s: %s\n", cmd_name, what, m->object, m->text);
        else
                fprintf(stderr, "%s: %s: %s\n", cmd_name, what, m->text);
        if (m->fix[0])
                fprintf(stderr, "%s: fix: %s\n", cmd_name, m->fix);
}

/* Logs one change, or one slot's changes joined with "; ". */
static void log_change(const struct run *run, const char *text)
{
        if (run->root)
                cmd_log("%s (under %s)", text, run->root);
        else
                cmd_log("%s", text);
}

/* Logs the changes kept for each slot, one line per slot (issue 18: a line per change cost a third of the run). */
static void slot_log_flush(struct run *run)
{
        for (unsigned i = 0; run->slot_log && i < run->slots; i++) {
                if (run->slot_log[i])
                        log_change(run, run->slot_log[i]);
                free(run->slot_log[i]);
                run->slot_log[i] = NULL;
                run->slot_log_len[i] = 0;
        }
}

/*
 * The slot a change line is about: the first word of it (split at spaces, '/',
 * '(', ')', ':', ',') that is a slot of the pool; 0 for none (the shared group,
 * parents, files).
 */
static unsigned change_slot(const struct run *run, const char *text)
{
        char word[16];

        while (*text) {
                size_t n = strcspn(text, " /():,");

                if (n > 0 && n < sizeof(word)) {
                        unsigned k;

                        memcpy(word, text, n);
                        word[n] = '\0';
                        k = slots_slot_parse(word);
                        if (k >= 1 && k <= run->slots)
                                return k;
                }
                text += n;
                if (*text)
                        text++;
        }
        return 0;
}

/* Keeps a slot's change for its line; logs it at once when it is about no slot or memory is short. */
static void log_slot_change(struct run *run, const char *text)
{
        unsigned k = run->slot_log ? change_slot(run, text) : 0;
        size_t n = strlen(text), have;
        char *p;

        if (k == 0) {
                log_change(run, text);
                return;
        }
        have = run->slot_log_len[k - 1];
        /* syslog lines stay under cmd_log's 1,024 bytes: a long line is logged and a new one begun. */
        if (have && have + 2 + n > 700) {
                log_change(run, run->slot_log[k - 1]);
                free(run->slot_log[k - 1]);
                run->slot_log[k - 1] = NULL;
                have = run->slot_log_len[k - 1] = 0;
        }
        p = realloc(run->slot_log[k - 1], have + 2 + n + 1);
        if (!p) {
                log_change(run, text);
                return;
        }
        if (have) {
                memcpy(p + have, "; ", 2);
                have += 2;
        }
        memcpy(p + have, text, n + 1);
        run->slot_log[k - 1] = p;
        run->slot_log_len[k - 1] = have + n;
}

static void report(void *arg, const struct slots_prov_msg *m)
{
        struct run *run = arg;

        switch (m->kind) {
        case SLOTS_PROV_CHANGE:
                printf("%s\n", m->text);
                fflush(stdout);
                if (!run->dry_run)
                        log_slot_change(run, m->text);
                break;
        case SLOTS_PROV_WARNING:
                print_msg("warning", m);
                break;
        case SLOTS_PROV_PROBLEM:
                run->problems++;
                print_msg("conflict", m);
                break;
        }
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
        char *text = slots_ldif(c, base_dn, &len, &r, &e);

        if (!text) {
                cmd_report("cannot print the LDIF", &e, NULL);
                return cmd_exit_for(r);
        }
        if (fwrite(text, 1, len, stdout) != len || fflush(stdout) != 0) {
                fprintf(stderr, "%s: cannot print the LDIF: standard output: %s\n", cmd_name, strerror(errno));
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
        /* <limits.h> is shadowed by src/lib/limits.h here, so no PATH_MAX buffer. */
        cwd = get_current_dir_name();
        if (!cwd)
                return NULL;
        n = asprintf(&s, "%s/%s", cwd, path);
        free(cwd);
        return n < 0 ? NULL : s;
}

int main(int argc, char **argv)
{
        static const struct option opts[] = {
                { "root", required_argument, NULL, 'r' },
                { "dry-run", no_argument, NULL, 'n' },
                { "ldif", required_argument, NULL, 'l' },
                { "config", required_argument, NULL, 'c' },
                { "help", no_argument, NULL, 'h' },
                { "version", no_argument, NULL, 'V' },
                { 0 },
        };
        struct run run = { 0 };
        struct slots_config *c = NULL;
        struct slots_prov_opts po = { 0 };
        struct slots_error e;
        const char *config = NULL;
        char *config_abs = NULL;
        unsigned changes = 0;
        int rootfd = -1, opt, r, status;

        cmd_name = "slots-provision";
        while ((opt = getopt_long(argc, argv, "", opts, NULL)) != -1) {
                switch (opt) {
                case 'r':
                        run.root = optarg;
                        break;
                case 'n':
                        run.dry_run = true;
                        break;
                case 'l':
                        run.ldif = optarg;
                        break;
                case 'c':
                        config = optarg;
                        break;
                case 'h':
                        usage(stdout);
                        return EXIT_DONE;
                case 'V':
                        printf("slots-provision %s\n", PACKAGE_VERSION);
                        return EXIT_DONE;
                default:
                        usage(stderr);
                        return EXIT_USAGE;
                }
        }
        if (optind < argc) {
                fprintf(stderr, "%s: unexpected argument: %s\n", cmd_name, argv[optind]);
                usage(stderr);
                return EXIT_USAGE;
        }
        if (run.root && !run.root[0]) {
                fprintf(stderr, "%s: --root needs a folder\n", cmd_name);
                return EXIT_USAGE;
        }
        if (!run.dry_run && !run.ldif && geteuid() != 0) {
                fprintf(stderr, "%s: cannot provision: must be run as root (try --dry-run to see the plan)\n",
                        cmd_name);
                return EXIT_REFUSED;
        }

        /* The host is AT_FDCWD, as slots-admin has it; an image root is resolved with RESOLVE_IN_ROOT. */
        if (run.root) {
                rootfd = slots_root_open(run.root);
                if (rootfd < 0) {
                        fprintf(stderr, "%s: cannot open the root: %s: %s\n", cmd_name, run.root,
                                strerror(-rootfd));
                        return EXIT_USAGE;
                }
        } else {
                rootfd = AT_FDCWD;
        }

        /* --config and SLOTS_CONFIG name a file of the invoking host; the default lives in the tree. */
        if (!config && getenv("SLOTS_CONFIG") && getenv("SLOTS_CONFIG")[0])
                config = slots_config_default_path();
        if (config) {
                config_abs = absolute(config);
                if (!config_abs) {
                        fprintf(stderr, "%s: cannot read the config: %s: %s\n", cmd_name, config, strerror(errno));
                        status = EXIT_USAGE;
                        goto out;
                }
                r = slots_config_load(AT_FDCWD, config_abs, &c, &e);
        } else {
                r = slots_config_load(run.root ? rootfd : AT_FDCWD, SLOTS_DEFAULT_CONFIG, &c, &e);
        }
        if (r < 0) {
                cmd_report(r == -EBADMSG ? "invalid config" : "cannot read the config", &e, NULL);
                status = EXIT_USAGE;
                goto out;
        }

        if (run.ldif) {
                status = print_ldif(c, run.ldif);
                goto out;
        }
        po.dry_run = run.dry_run;
        po.host = !run.root;
        po.lastchg = shadow_today();
        po.report = report;
        po.arg = &run;
        run.slots = c->slots;
        run.slot_log = calloc(c->slots ? c->slots : 1, sizeof(*run.slot_log));
        run.slot_log_len = calloc(c->slots ? c->slots : 1, sizeof(*run.slot_log_len));
        if (!run.slot_log || !run.slot_log_len) {
                free(run.slot_log);
                free(run.slot_log_len);
                run.slot_log = NULL;    /* every change gets its own line */
                run.slot_log_len = NULL;
        }
        r = slots_provision(rootfd, c, &po, &changes, &e);
        slot_log_flush(&run);
        free(run.slot_log);
        free(run.slot_log_len);
        if (r == -EEXIST) {
                fprintf(stderr, "%s: refused: %u conflict%s found; nothing was changed\n", cmd_name, run.problems,
                        run.problems == 1 ? "" : "s");
                status = EXIT_REFUSED;
                goto out;
        }
        if (r < 0) {
                cmd_report(r == -EBADMSG ? "invalid config or table" : "cannot provision", &e, NULL);
                if (changes)
                        fprintf(stderr, "%s: %u change%s made before this failure; fix it and run again\n",
                                cmd_name, changes, changes == 1 ? " was" : "s were");
                status = cmd_exit_for(r);
                goto out;
        }
        printf("%u changes\n", changes);
        if (run.dry_run)
                fprintf(stderr, "%s: dry run: nothing was changed\n", cmd_name);
        status = EXIT_DONE;
out:
        slots_config_free(c);
        free(config_abs);
        slots_close(rootfd);
        return status;
}
