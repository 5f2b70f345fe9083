/* The self-check's report as the commands see it: its rows, their statuses, the options of a run. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "ids.h"

enum slots_check_status {
        SLOTS_CHECK_PASS,
        SLOTS_CHECK_FAIL,
        SLOTS_CHECK_SKIP,
        SLOTS_CHECK_WARN,               /* an outcome a slot's own processes or content could cause: not a failure */
};

/* One row of the report.  No text in it ever holds an application user id. */
struct slots_check_row {
        enum slots_check_status status;
        const char *check;              /* "config", "table", "runner-reachable", ... (static) */
        char slot[SLOTS_NAME_MAX];      /* "slot03", or "-" for a host-wide check */
        char *detail;                   /* what was found (for a failure: what is wrong) */
        char *fix;                      /* how to repair a failure; NULL for PASS and SKIP */
};

struct slots_check_report {
        struct slots_check_row *rows;
        size_t n, cap;
        unsigned passed, failed, skipped, warned;
};

struct slots_check_opts {
        const char *config;             /* NULL: SLOTS_CONFIG or the default */
        const char *sudo;               /* NULL: /usr/bin/sudo */
        int sudo_timeout_ms;            /* each stage of a run of sudo; <= 0: 10000 (the chain's probe 20000) */
        int probe_timeout_ms;           /* <= 0: 10000 (a hung NFS mount must not hang the check) */
};

void slots_check_report_free(struct slots_check_report *rep);

/* "PASS", "FAIL", "SKIP", "WARN". */
const char *slots_check_status_name(enum slots_check_status s);

/* Appends a row to rep (detail and fix copied; a FAIL without a fix gets the man page's).  0 or -ENOMEM. */
int slots_check_report_add(struct slots_check_report *rep, enum slots_check_status st, const char *check,
                           const char *slot, const char *detail, const char *fix);
