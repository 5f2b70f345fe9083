/* slots-admin check: the self-check's rows as the table of slots-admin(8), JSON, a Nagios line or Prometheus text. */
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
#include "cmdutil.h"
#include "escape.h"
#include "fsutil.h"
#include "replace.h"
#include "selfcheck.h"
#include "service.h"
#include "store.h"

/* Nagios plugin statuses (the Monitoring Plugins guidelines). */
enum { NAGIOS_OK = 0, NAGIOS_WARNING = 1, NAGIOS_CRITICAL = 2, NAGIOS_UNKNOWN = 3 };

/* What the machine outputs add to the rows: the config's fate and the pool's counts. */
struct run {
        const struct cmd_check_args *a;
        struct slots_check_report rep;
        char config_error[2 * SLOTS_ERR_TEXT + 64];     /* "" when the config loaded */
        bool pool_known;                                /* the table could be read */
        unsigned slots, assigned, pending;
        time_t when;
};

/* The table, one FAIL line per failure, the closing line. */
static void print_text(FILE *f, const struct slots_check_report *rep)
{
        int wcheck = (int) strlen("CHECK"), wslot = (int) strlen("SLOT");

        for (size_t i = 0; i < rep->n; i++) {
                int c = (int) strlen(rep->rows[i].check), s = (int) strlen(rep->rows[i].slot);
                wcheck = c > wcheck ? c : wcheck;
                wslot = s > wslot ? s : wslot;
        }
        fprintf(f, "%-6s  %-*s  %-*s  %s\n", "STATUS", wcheck, "CHECK", wslot, "SLOT", "DETAIL");
        for (size_t i = 0; i < rep->n; i++) {
                const struct slots_check_row *r = &rep->rows[i];
                char *detail = slots_escape(r->detail);

                /* Details name files a slot or the service may have named: escaped for the terminal. */
                fprintf(f, "%-6s  %-*s  %-*s  %s\n", slots_check_status_name(r->status), wcheck, r->check, wslot,
                        r->slot, detail ? detail : "(out of memory)");
                free(detail);
        }
        if (rep->failed)
                fputc('\n', f);
        for (size_t i = 0; i < rep->n; i++) {
                const struct slots_check_row *r = &rep->rows[i];
                char *detail, *fix;

                if (r->status != SLOTS_CHECK_FAIL)
                        continue;
                detail = slots_escape(r->detail);
                fix = slots_escape(r->fix);
                fprintf(f, "FAIL %s%s%s: %s -- fix: %s\n", r->check, strcmp(r->slot, "-") ? " " : "",
                        strcmp(r->slot, "-") ? r->slot : "", detail ? detail : "(out of memory)",
                        fix ? fix : "(out of memory)");
                free(detail);
                free(fix);
        }
        fprintf(f, "slot self-check: %u passed, %u failed, %u warned, %u skipped\n", rep->passed, rep->failed,
                rep->warned, rep->skipped);
}

static int print_json(FILE *f, const struct slots_check_report *rep)
{
        json_t *rows = json_array(), *root;
        int r;

        for (size_t i = 0; i < rep->n; i++) {
                const struct slots_check_row *c = &rep->rows[i];
                /* detail and fix name files the service or a slot named: any byte but NUL. */
                json_t *row = json_pack("{s:s, s:s, s:o, s:o, s:o}", "status", slots_check_status_name(c->status),
                                        "check", c->check, "slot",
                                        strcmp(c->slot, "-") ? json_string(c->slot) : json_null(), "detail",
                                        cmd_json_text(c->detail), "fix",
                                        c->fix ? cmd_json_text(c->fix) : json_null());
                if (!row || json_array_append_new(rows, row) < 0) {
                        json_decref(rows);
                        return -ENOMEM;
                }
        }
        root = json_pack("{s:i, s:o, s:i, s:i, s:i, s:i, s:b}", "version", CMD_JSON_VERSION, "checks", rows,
                         "passed", (int) rep->passed, "failed", (int) rep->failed, "warned", (int) rep->warned,
                         "skipped", (int) rep->skipped, "ok", rep->failed == 0);
        if (!root)
                return -ENOMEM;
        errno = 0;
        r = json_dumpf(root, f, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
        json_decref(root);
        /* The write's own errno (a full disk is ENOSPC), not a made-up one. */
        if (r < 0)
                return errno ? -errno : -EIO;
        fputc('\n', f);
        return 0;
}

/* A row's detail on one plugin line: escaped, and no '|' (it starts the perfdata). */
static void nagios_text(FILE *f, const char *s)
{
        char *shown = slots_escape(s);

        for (const char *p = shown ? shown : "(out of memory)"; *p; p++)
                fputc(*p == '|' ? '/' : *p, f);
        free(shown);
}

/* One plugin status line with perfdata; returns the plugin's exit status. */
static int print_nagios(FILE *f, const struct run *x)
{
        const struct slots_check_report *rep = &x->rep;
        const struct slots_check_row *first = NULL;

        if (x->config_error[0]) {
                fputs("SLOTS UNKNOWN - ", f);
                nagios_text(f, x->config_error);
                fputc('\n', f);
                return NAGIOS_UNKNOWN;
        }
        /* The first FAIL, else the first WARN. */
        for (size_t i = 0; i < rep->n && !first; i++)
                if (rep->rows[i].status == (rep->failed ? SLOTS_CHECK_FAIL : SLOTS_CHECK_WARN))
                        first = &rep->rows[i];
        if (first) {
                fprintf(f, "SLOTS %s - %u %s, first %s%s%s: ", rep->failed ? "CRITICAL" : "WARNING",
                        rep->failed ? rep->failed : rep->warned, rep->failed ? "failed" : "warned", first->check,
                        strcmp(first->slot, "-") ? " " : "", strcmp(first->slot, "-") ? first->slot : "");
                nagios_text(f, first->detail);
        } else {
                fprintf(f, "SLOTS OK - %u passed, %u skipped", rep->passed, rep->skipped);
        }
        fprintf(f, " | passed=%u failed=%u skipped=%u warned=%u\n", rep->passed, rep->failed, rep->skipped,
                rep->warned);
        return rep->failed ? NAGIOS_CRITICAL : first ? NAGIOS_WARNING : NAGIOS_OK;
}

/* A label value as the exposition format wants it: backslash, double quote and newline escaped. */
static void prom_label(FILE *f, const char *s)
{
        for (; *s; s++) {
                if (*s == '\\' || *s == '"')
                        fputc('\\', f);
                if (*s == '\n')
                        fputs("\\n", f);
                else
                        fputc(*s, f);
        }
}

static void prom_metric(FILE *f, const char *name, const char *help, unsigned long value)
{
        fprintf(f, "# HELP %s %s\n# TYPE %s gauge\n%s %lu\n", name, help, name, name, value);
}

/* One series name{check,slot} per (check, slot) with rows of status st, its value their number. */
static void prom_series(FILE *f, const struct slots_check_report *rep, enum slots_check_status st, const char *name,
                        const char *what)
{
        fprintf(f, "# HELP %s %s rows of the slot self-check, by check and slot (\"\" host-wide).\n"
                "# TYPE %s gauge\n", name, what, name);
        for (size_t i = 0; i < rep->n; i++) {
                const struct slots_check_row *r = &rep->rows[i];
                unsigned count = 0;
                bool seen = false;

                if (r->status != st)
                        continue;
                for (size_t k = 0; k < rep->n && !seen; k++) {
                        const struct slots_check_row *o = &rep->rows[k];

                        if (o->status != st || strcmp(o->check, r->check) || strcmp(o->slot, r->slot))
                                continue;
                        seen = k < i;
                        count++;
                }
                if (seen)
                        continue;
                fprintf(f, "%s{check=\"", name);
                prom_label(f, r->check);
                fputs("\",slot=\"", f);
                prom_label(f, strcmp(r->slot, "-") ? r->slot : "");
                fprintf(f, "\"} %u\n", count);
        }
}

/* The textfile node_exporter's textfile collector reads; one series per failed or warned (check, slot). */
static void print_prometheus(FILE *f, const struct run *x)
{
        const struct slots_check_report *rep = &x->rep;
        bool ok = rep->failed == 0 && !x->config_error[0];

        prom_metric(f, "slots_check_ok", "1 when no row of the slot self-check failed, else 0.", ok);
        prom_metric(f, "slots_check_failed", "Rows of the slot self-check that failed.", rep->failed);
        prom_metric(f, "slots_check_passed", "Rows of the slot self-check that passed.", rep->passed);
        prom_metric(f, "slots_check_skipped", "Rows of the slot self-check that were skipped.", rep->skipped);
        prom_metric(f, "slots_check_warned", "Rows of the slot self-check that warned (they do not fail it).",
                    rep->warned);
        prom_series(f, rep, SLOTS_CHECK_FAIL, "slots_check_fail", "Failed");
        prom_series(f, rep, SLOTS_CHECK_WARN, "slots_check_warn", "Warned");
        if (x->pool_known) {
                prom_metric(f, "slots_pool_assigned", "Slots of the pool held by a user.", x->assigned);
                prom_metric(f, "slots_pool_pending", "Slots whose release is pending.", x->pending);
                prom_metric(f, "slots_pool_free", "Slots neither held nor pending.",
                            x->slots - x->assigned - x->pending);
        }
        prom_metric(f, "slots_check_timestamp_seconds", "When the slot self-check ended, in Unix time.",
                    (unsigned long) x->when);
}

/* The config and the table's counts for nagios and prometheus, read as status reads them. */
static void read_pool(struct run *x)
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
static int emit(struct run *x)
{
        const struct cmd_check_args *a = x->a;
        char *text = NULL;
        size_t len = 0;
        FILE *f = open_memstream(&text, &len);
        int r = 0, st = x->rep.failed ? EXIT_REFUSED : EXIT_DONE;

        if (!f)
                return a->format == CMD_CHECK_NAGIOS ? NAGIOS_UNKNOWN : EXIT_REFUSED;
        if (a->format == CMD_CHECK_JSON)
                r = print_json(f, &x->rep);
        else if (a->format == CMD_CHECK_NAGIOS)
                st = print_nagios(f, x);
        else if (a->format == CMD_CHECK_PROMETHEUS)
                print_prometheus(f, x);
        else
                print_text(f, &x->rep);
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

        for (size_t i = 0; i < rep->n && !first; i++)
                if (rep->rows[i].status == SLOTS_CHECK_FAIL)
                        first = &rep->rows[i];
        if (first)
                cmd_event(CMD_EV_CHECK_FAILED, strcmp(first->slot, "-") ? first->slot : NULL, NULL,
                          "self-check: %u passed, %u failed, %u warned, %u skipped; first failure: %s%s%s: %s",
                          rep->passed, rep->failed, rep->warned, rep->skipped, first->check, strcmp(first->slot, "-") ? " " : "",
                          strcmp(first->slot, "-") ? first->slot : "", first->detail);
        else
                cmd_event(CMD_EV_CHECK_PASSED, NULL, NULL, "self-check: %u passed, %u failed, %u warned, %u skipped",
                          rep->passed, rep->failed, rep->warned, rep->skipped);
}

int cmd_check(const struct cmd_check_args *a)
{
        const struct slots_check_opts o = { .config = a->config, .sudo_timeout_ms = a->timeout_s * 1000,
                                            .probe_timeout_ms = a->timeout_s * 1000 };
        struct run x = { .a = a };
        bool machine = a->format == CMD_CHECK_NAGIOS || a->format == CMD_CHECK_PROMETHEUS;
        int r;

        r = slots_selfcheck(&o, &x.rep);
        if (r == -EPERM) {
                fprintf(stderr, "%s: cannot run the self-check: permission denied: it runs as root or as the "
                        "service account\n", cmd_name);
                fprintf(stderr, "%s: fix: run it as root (sudo slots-admin check) or as the service account\n",
                        cmd_name);
                cmd_event(CMD_EV_CHECK_REFUSED, NULL, NULL, "refused: cannot run the self-check: permission denied");
                return a->format == CMD_CHECK_NAGIOS ? NAGIOS_UNKNOWN : EXIT_REFUSED;
        }
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
