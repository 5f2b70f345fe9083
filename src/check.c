/* slots-admin check: the self-check's run, the pool counts, --output, its event; the rendering is check-format.c's. */
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "check.h"
#include "check-format.h"
#include "emit.h"
#include "verbs.h"
#include "cmdutil.h"
#include "escape.h"
#include "fsutil.h"
#include "replace.h"
#include "selfcheck.h"
#include "service.h"
#include "store.h"

/* The config and the table's counts for nagios and prometheus, read as status reads them. */
static void read_pool(struct check_run *x)
{
        struct slots_config *c = NULL;
        struct slots_store st = { 0 };
        struct slots_error e;
        char *group_name = NULL;
        gid_t group;

        slots_error_clear(&e);
        if (slots_config_load_flags(AT_FDCWD, x->a->config ? x->a->config : slots_config_default_path(), 0, &c,
                                    &e) < 0) {
                char buf[sizeof(x->config_error) - 32];

                snprintf(x->config_error, sizeof(x->config_error), "%s: %s",
                         e.kind == SLOTS_ERR_INVALID ? "invalid config" : "cannot read the config",
                         slots_error_format(&e, buf, sizeof(buf)));
                return;
        }
        slots_error_clear(&e);
        if (slots_service_group(c, &group, &group_name, &e) == 0 &&
            slots_store_open(&st, AT_FDCWD, c->table, c->slots, group, 0, &e) == 0) {
                slots_table_count(st.table, &x->assigned, &x->pending);
                x->slots = c->slots;
                x->pool_known = true;
                slots_store_close(&st);
        }
        free(group_name);
        slots_config_free(c);
}

/* --output FILE: the text replaces FILE at once (a temp in its folder, fsync, rename), mode 0644. */
static int write_output(const char *path, const char *text, size_t len)
{
        const struct slots_file_mode def = { .uid = geteuid(), .gid = getegid(), .mode = 0644 };
        char *dir_copy = strdup(path), *base_copy = strdup(path);
        struct slots_error e;
        int dirfd = -1, r = -ENOMEM;

        slots_error_clear(&e);
        if (dir_copy && base_copy) {
                dirfd = open(dirname(dir_copy), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
                r = dirfd < 0 ? -errno : slots_replace(dirfd, basename(base_copy), path, text, len, &def,
                                                       SLOTS_REPLACE_FORCE_MODE, &e);
        }
        if (r < 0) {
                if (!e.reason[0])
                        slots_error_set(&e, r, path, "%s", strerror(-r));
                cmd_report("cannot write the self-check", &e, "check that the folder exists and root can write it");
        }
        slots_close(dirfd);
        free(dir_copy);
        free(base_copy);
        return r;
}

/* Renders the run in its format into one buffer, then to stdout or --output; the exit status. */
static int emit(struct check_run *x)
{
        const struct cmd_check_args *a = x->a;
        char *text = NULL;
        size_t len = 0;
        FILE *f = open_memstream(&text, &len);
        int r = 0, st = x->rep.failed ? EXIT_REFUSED : EXIT_DONE;

        if (!f)
                return a->format == CMD_CHECK_NAGIOS ? NAGIOS_UNKNOWN : EXIT_REFUSED;
        r = check_format(f, x, &st);
        if (fclose(f) != 0 && r == 0)
                r = -ENOMEM;
        if (r == 0 && a->output)
                r = write_output(a->output, text, len) < 0 ? 1 : 0;
        else if (r == 0) {
                r = fwrite(text, 1, len, stdout) == len ? cmd_stdout_done() : -(errno ? errno : EIO);
                if (r < 0)
                        fprintf(stderr, "%s: cannot print the self-check: standard output: %s\n", cmd_name,
                                r == -EBADF ? "closed when check started" : strerror(-r));
        }
        free(text);
        if (r != 0)
                return a->format == CMD_CHECK_NAGIOS ? NAGIOS_UNKNOWN : EXIT_REFUSED;
        return st;
}

/* One event for the run: its counts and the first failed row. */
static void log_check(const struct slots_check_report *rep)
{
        const struct slots_check_row *first = NULL;
        struct cmd_outcome out;

        cmd_outcome_init(&out, "check", false, false);
        for (size_t i = 0; i < rep->n && !first; i++)
                if (rep->rows[i].status == SLOTS_CHECK_FAIL)
                        first = &rep->rows[i];
        if (first) {
                out.asked = strcmp(first->slot, "-") ? first->slot : NULL;
                cmd_outcome_event(&out, CMD_EV_CHECK_FAILED, "self-check: %u passed, %u failed, %u warned, %u "
                                  "skipped; first failure: %s%s%s: %s", rep->passed, rep->failed, rep->warned,
                                  rep->skipped, first->check,
                                  out.asked ? " " : "", out.asked ? out.asked : "", first->detail);
        } else {
                cmd_outcome_event(&out, CMD_EV_CHECK_PASSED, "self-check: %u passed, %u failed, %u warned, %u skipped",
                                  rep->passed, rep->failed, rep->warned, rep->skipped);
        }
        (void) cmd_emit(&out);
}

/* A run by neither root nor the service: refused, with the fix. */
static int check_refused(const struct cmd_check_args *a)
{
        struct cmd_outcome out;
        struct slots_error e;

        cmd_outcome_init(&out, "check", false, false);
        slots_error_refuse(&e, -EPERM, "", "permission denied: it runs as root or as the service account");
        slots_error_fix(&e, "run it as root (sudo slots-admin check) or as the service account");
        cmd_outcome_fail(&out, "cannot run the self-check", &e);
        cmd_outcome_event(&out, CMD_EV_CHECK_REFUSED, "refused: cannot run the self-check: permission denied");
        (void) cmd_emit(&out);
        return a->format == CMD_CHECK_NAGIOS ? NAGIOS_UNKNOWN : EXIT_REFUSED;
}

int cmd_check(const struct cmd_check_args *a)
{
        const struct slots_check_opts o = { .config = a->config, .sudo_timeout_ms = a->timeout_s * 1000,
                                            .probe_timeout_ms = a->timeout_s * 1000 };
        struct check_run x = { .a = a };
        bool machine = a->format == CMD_CHECK_NAGIOS || a->format == CMD_CHECK_PROMETHEUS;
        int r;

        r = slots_selfcheck(&o, &x.rep);
        if (r == -EPERM)
                return check_refused(a);
        if (r < 0) {
                fprintf(stderr, "%s: cannot run the self-check: %s\n", cmd_name, strerror(-r));
                return a->format == CMD_CHECK_NAGIOS ? NAGIOS_UNKNOWN : EXIT_REFUSED;
        }
        x.when = time(NULL);
        if (machine)
                read_pool(&x);
        log_check(&x.rep);
        r = emit(&x);
        slots_check_report_free(&x.rep);
        return r;
}

int cmd_check_format(const char *name)
{
        static const char *const names[] = {
                [CMD_CHECK_TEXT] = "text",
                [CMD_CHECK_JSON] = "json",
                [CMD_CHECK_NAGIOS] = "nagios",
                [CMD_CHECK_PROMETHEUS] = "prometheus",
        };

        for (int i = 0; i < (int) (sizeof(names) / sizeof(names[0])); i++)
                if (strcmp(name, names[i]) == 0)
                        return i;
        return -1;
}

bool cmd_check_timeout(const char *arg, int *seconds)
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

int verb_check(const struct admin_opts *o, int argc, char **argv)
{
        struct cmd_check_args a = { .config = o->config, .output = o->output, .timeout_s = o->timeout_s,
                                    .format = o->json ? CMD_CHECK_JSON : CMD_CHECK_TEXT };

        (void) argc;
        (void) argv;
        if (o->format && (o->json || (int) (a.format = cmd_check_format(o->format)) < 0))
                return cmd_usage_error(o->json ? "--json and --format: give one of them" :
                                       "--format takes text, json, nagios or prometheus");
        if (o->output && !o->output[0])
                return cmd_usage_error("--output needs a file name");
        return cmd_check(&a);
}
