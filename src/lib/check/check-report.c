/* The self-check's report: rows added and counted, statuses named, the report freed. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check-report.h"

const char *slots_check_status_name(enum slots_check_status s)
{
        switch (s) {
        case SLOTS_CHECK_PASS:
                return "PASS";
        case SLOTS_CHECK_FAIL:
                return "FAIL";
        case SLOTS_CHECK_SKIP:
                return "SKIP";
        case SLOTS_CHECK_WARN:
                return "WARN";
        }
        return "?";
}

void slots_check_report_free(struct slots_check_report *rep)
{
        for (size_t i = 0; i < rep->n; i++) {
                free(rep->rows[i].detail);
                free(rep->rows[i].fix);
        }
        free(rep->rows);
        memset(rep, 0, sizeof(*rep));
}

int slots_check_report_add(struct slots_check_report *rep, enum slots_check_status st, const char *check,
                           const char *slot, const char *detail, const char *fix)
{
        struct slots_check_row *row;

        if (rep->n == rep->cap) {
                size_t cap = rep->cap ? rep->cap * 2 : 32;
                struct slots_check_row *rows = realloc(rep->rows, cap * sizeof(*rows));
                if (!rows)
                        return -ENOMEM;
                rep->rows = rows;
                rep->cap = cap;
        }
        row = &rep->rows[rep->n];
        memset(row, 0, sizeof(*row));
        row->status = st;
        row->check = check;
        snprintf(row->slot, sizeof(row->slot), "%s", slot ? slot : "-");
        row->detail = strdup(detail);
        row->fix = st == SLOTS_CHECK_FAIL ? strdup(fix && fix[0] ? fix : "see slots-admin(8), CHECK") : NULL;
        if (!row->detail || (st == SLOTS_CHECK_FAIL && !row->fix)) {
                free(row->detail);
                free(row->fix);
                return -ENOMEM;
        }
        rep->n++;
        if (st == SLOTS_CHECK_PASS)
                rep->passed++;
        else if (st == SLOTS_CHECK_FAIL)
                rep->failed++;
        else if (st == SLOTS_CHECK_WARN)
                rep->warned++;
        else
                rep->skipped++;
        return 0;
}

