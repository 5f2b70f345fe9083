/* slots-admin: the command line for the slot table (assign, release, status, check), driven by one table of verbs. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "arena.h"
#include "check.h"
#include "cmdutil.h"
#include "verbs.h"

/* The options a verb may take, beside --config. */
enum {
        OPT_JSON = 1 << 0,
        OPT_DRY_RUN = 1 << 1,
        OPT_SLOT = 1 << 2,
        OPT_CHECK = 1 << 3,             /* --format, --output, --timeout */
        OPT_HELD = 1 << 4,
};

/* One verb: its usage lines, how many arguments it takes (and the error when not), its options, its function. */
static const struct verb {
        const char *name;
        const char *usage;
        unsigned min_args, max_args;
        const char *args_error;
        unsigned opts;
        int (*run)(const struct admin_opts *o, int argc, char **argv);
} verbs[] = {
        { "assign",
          "  assign [--json] [--dry-run] USER [SLOT]\n"
          "                            give USER the slot SLOT, or the lowest free slot; prints the slot\n",
          1, 2, "assign takes USER and an optional SLOT", OPT_JSON | OPT_DRY_RUN, verb_assign },
        { "release",
          "  release [--json] [--dry-run] USER\n"
          "                            free the slot USER holds and clean it for the next user\n"
          "  release --slot SLOT       the same by slot; also finishes a release left pending\n",
          0, 1, "release takes USER, or --slot SLOT", OPT_JSON | OPT_DRY_RUN | OPT_SLOT, verb_release },
        { "status",
          "  status [--json] [USER|SLOT]\n"
          "                            one row per slot, the table file's owner and mode, the test slot\n"
          "  status --held             one line per slot assigned or pending, with what releases it\n",
          0, 1, "status takes at most one USER or SLOT", OPT_JSON | OPT_HELD, verb_status },
        { "check",
          "  check [--json] [--format FORMAT] [--output FILE] [--timeout SECONDS]\n"
          "                            read-only self-check of the host, as the slots see it; exit 1 on\n"
          "                            any failure, each with its fix\n",
          0, 0, "check takes no arguments", OPT_JSON | OPT_CHECK, verb_check },
};

static const char usage_options[] =
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

#define N_VERBS (sizeof(verbs) / sizeof(verbs[0]))

static void usage(void)
{
        fputs("Usage: slots-admin [--config FILE] COMMAND [ARGS]\n\n"
              "Manage the slot table: which application user holds which slot account.\n\nCommands:\n", stdout);
        for (size_t i = 0; i < N_VERBS; i++)
                fputs(verbs[i].usage, stdout);
        fputs(usage_options, stdout);
}

/* The verbs that take option opt (opt 0: every verb) as "assign, release or check" (or: else ", check"). */
static const char *verb_list(unsigned opt, bool or, char *buf, size_t size)
{
        size_t n = 0, k = 0, len = 0;

        for (size_t i = 0; i < N_VERBS; i++)
                n += !opt || (verbs[i].opts & opt);
        for (size_t i = 0; i < N_VERBS; i++)
                if (!opt || (verbs[i].opts & opt))
                        len += (size_t) snprintf(buf + len, size - len, "%s%s", k++ == 0 ? "" :
                                                 k == n && or ? " or " : ", ", verbs[i].name);
        return buf;
}

/* The options before the command into o, what was given into *given; -1 to go on, else the exit status. */
static int parse_options(int argc, char **argv, struct admin_opts *o, unsigned *given)
{
        static const struct option options[] = {
                { "config", required_argument, NULL, 'c' }, { "json", no_argument, NULL, 'j' },
                { "dry-run", no_argument, NULL, 'n' }, { "held", no_argument, NULL, 'H' },
                { "format", required_argument, NULL, 'f' },
                { "output", required_argument, NULL, 'o' }, { "slot", required_argument, NULL, 's' },
                { "timeout", required_argument, NULL, 't' }, { "help", no_argument, NULL, 'h' },
                { "version", no_argument, NULL, 'V' }, {},
        };
        int c;

        while ((c = getopt_long(argc, argv, "hV", options, NULL)) != -1) {
                if (c == 'c')
                        o->config = optarg;
                else if (c == 'j')
                        o->json = (*given |= OPT_JSON) != 0;
                else if (c == 's')
                        *given |= OPT_SLOT, o->slot = optarg;
                else if (c == 'n')
                        o->dry_run = (*given |= OPT_DRY_RUN) != 0;
                else if (c == 'H')
                        o->held = (*given |= OPT_HELD) != 0;
                else if (c == 'f' || c == 'o')
                        *given |= OPT_CHECK, *(c == 'f' ? &o->format : &o->output) = optarg;
                else if (c == 't' && !cmd_check_timeout(optarg, &o->timeout_s))
                        return cmd_usage_error("--timeout takes a number of seconds from 1 to 3600, not '%s'", optarg);
                else if (c == 't')
                        *given |= OPT_CHECK;
                else if (c == 'h')
                        return usage(), EXIT_DONE;
                else if (c == 'V')
                        return printf("slots-admin %s\n", PACKAGE_VERSION) < 0 ? EXIT_REFUSED : EXIT_DONE;
                else
                        return fputs("Try 'slots-admin --help'.\n", stderr), EXIT_USAGE;
        }
        return -1;
}

/* Each option given goes with the verb: -1 when they fit, else the usage error's exit status. */
static int options_fit(const struct verb *v, const struct admin_opts *o, unsigned given)
{
        static const struct { unsigned opt; const char *name; } names[] = {
                { OPT_JSON, "--json goes" }, { OPT_SLOT, "--slot goes" }, { OPT_DRY_RUN, "--dry-run goes" },
                { OPT_HELD, "--held goes" } };
        char list[128];

        for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
                if ((given & names[i].opt) && !(v->opts & names[i].opt))
                        return cmd_usage_error("%s with %s", names[i].name, verb_list(names[i].opt, true, list,
                                                                                       sizeof(list)));
        if ((given & OPT_CHECK) && !(v->opts & OPT_CHECK))
                return cmd_usage_error("%s with %s", o->timeout_s ? "--timeout goes" : "--format and --output go",
                                       verb_list(OPT_CHECK, true, list, sizeof(list)));
        return -1;
}

int main(int argc, char **argv)
{
        struct admin_opts o = { 0 };
        const struct verb *v = NULL;
        unsigned given = 0;
        char list[128];
        int r;

        cmd_name = "slots-admin";
        cmd_fds_guard();
        r = parse_options(argc, argv, &o, &given);
        if (r >= 0)
                return r;
        if (optind >= argc)
                return cmd_usage_error("no command given (%s)", verb_list(0, false, list, sizeof(list)));
        for (size_t i = 0; i < N_VERBS && !v; i++)
                v = strcmp(argv[optind], verbs[i].name) == 0 ? &verbs[i] : NULL;
        if (!v)
                return cmd_usage_error("unknown command '%s' (%s)", argv[optind], verb_list(0, false, list,
                                                                                            sizeof(list)));
        argc -= optind + 1;
        argv += optind + 1;
        if ((r = options_fit(v, &o, given)) >= 0)
                return r;
        if ((unsigned) argc < v->min_args || (unsigned) argc > v->max_args)
                return cmd_usage_error("%s", v->args_error);
        /*
         * The table commands read one table and exit: jansson's values come from an arena
         * (nothing freed piece by piece), set before jansson's first allocation (the config's).
         */
        if (!(v->opts & OPT_CHECK))
                slots_arena_use();
        r = v->run(&o, argc, argv);
        if (!(v->opts & OPT_CHECK))
                slots_arena_drop();
        return r;
}
