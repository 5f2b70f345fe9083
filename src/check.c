/* slots-admin check: the self-check's rows printed as the table of slots-admin(8), or as JSON. */
#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "cmdutil.h"
#include "escape.h"
#include "selfcheck.h"

/* The table, one FAIL line per failure, the closing line. */
static void print_text(const struct slots_check_report *rep)
{
        int wcheck = (int) strlen("CHECK"), wslot = (int) strlen("SLOT");

        for (size_t i = 0; i < rep->n; i++) {
                int c = (int) strlen(rep->rows[i].check), s = (int) strlen(rep->rows[i].slot);
                wcheck = c > wcheck ? c : wcheck;
                wslot = s > wslot ? s : wslot;
        }
        printf("%-6s  %-*s  %-*s  %s\n", "STATUS", wcheck, "CHECK", wslot, "SLOT", "DETAIL");
        for (size_t i = 0; i < rep->n; i++) {
                const struct slots_check_row *r = &rep->rows[i];
                char *detail = slots_escape(r->detail);

                /* Details name files a slot or the service may have named: escaped for the terminal. */
                printf("%-6s  %-*s  %-*s  %s\n", slots_check_status_name(r->status), wcheck, r->check, wslot,
                       r->slot, detail ? detail : "(out of memory)");
                free(detail);
        }
        if (rep->failed)
                putchar('\n');
        for (size_t i = 0; i < rep->n; i++) {
                const struct slots_check_row *r = &rep->rows[i];
                char *detail, *fix;

                if (r->status != SLOTS_CHECK_FAIL)
                        continue;
                detail = slots_escape(r->detail);
                fix = slots_escape(r->fix);
                printf("FAIL %s%s%s: %s -- fix: %s\n", r->check, strcmp(r->slot, "-") ? " " : "",
                       strcmp(r->slot, "-") ? r->slot : "", detail ? detail : "(out of memory)",
                       fix ? fix : "(out of memory)");
                free(detail);
                free(fix);
        }
        printf("slot self-check: %u passed, %u failed, %u skipped\n", rep->passed, rep->failed, rep->skipped);
}

static int print_json(const struct slots_check_report *rep)
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
        root = json_pack("{s:o, s:i, s:i, s:i, s:b}", "checks", rows, "passed", (int) rep->passed, "failed",
                         (int) rep->failed, "skipped", (int) rep->skipped, "ok", rep->failed == 0);
        if (!root)
                return -ENOMEM;
        errno = 0;
        r = json_dumpf(root, stdout, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
        json_decref(root);
        /* The write's own errno (a full disk is ENOSPC), not a made-up one. */
        if (r < 0)
                return errno ? -errno : -EIO;
        putchar('\n');
        return 0;
}

int cmd_check(const char *config, bool json, int timeout_s)
{
        const struct slots_check_opts o = { .config = config, .sudo_timeout_ms = timeout_s * 1000,
                                            .probe_timeout_ms = timeout_s * 1000 };
        struct slots_check_report rep;
        int r;

        r = slots_selfcheck(&o, &rep);
        if (r == -EPERM) {
                fprintf(stderr, "%s: cannot run the self-check: permission denied: it runs as root or as the "
                        "service account\n", cmd_name);
                fprintf(stderr, "%s: fix: run it as root (sudo slots-admin check) or as the service account\n",
                        cmd_name);
                return EXIT_REFUSED;
        }
        if (r < 0) {
                fprintf(stderr, "%s: cannot run the self-check: %s\n", cmd_name, strerror(-r));
                return EXIT_REFUSED;
        }
        if (json)
                r = print_json(&rep);
        else
                print_text(&rep);
        if (r >= 0)
                r = cmd_stdout_done();
        if (r < 0) {
                fprintf(stderr, "%s: cannot print the self-check: standard output: %s\n", cmd_name,
                        r == -EBADF ? "closed when check started" : strerror(-r));
                r = EXIT_REFUSED;
        } else {
                r = rep.failed ? EXIT_REFUSED : EXIT_DONE;
        }
        slots_check_report_free(&rep);
        return r;
}
