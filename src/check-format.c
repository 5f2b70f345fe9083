/* check's monitoring outputs: the rows as the table of slots-admin(8), JSON, a Nagios plugin line with perfdata, Prometheus text. */
#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check-format.h"
#include "cmdutil.h"
#include "escape.h"

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
static int print_nagios(FILE *f, const struct check_run *x)
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
        /* label=value;warn;crit;min: every count has min 0 (the Monitoring Plugins guidelines). */
        fprintf(f, " | passed=%u;;;0 failed=%u;;;0 skipped=%u;;;0 warned=%u;;;0\n", rep->passed, rep->failed,
                rep->skipped, rep->warned);
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
static void print_prometheus(FILE *f, const struct check_run *x)
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

int check_format(FILE *f, const struct check_run *x, int *st)
{
        switch (x->a->format) {
        case CMD_CHECK_JSON:
                return print_json(f, &x->rep);
        case CMD_CHECK_NAGIOS:
                *st = print_nagios(f, x);
                return 0;
        case CMD_CHECK_PROMETHEUS:
                print_prometheus(f, x);
                return 0;
        case CMD_CHECK_TEXT:
                break;
        }
        print_text(f, &x->rep);
        return 0;
}
