/* The read-only self-check (slots-admin(8), "check"): every layer of the slot chain, as the slots see it. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "ids.h"
#include "perm.h"

enum slots_check_status {
        SLOTS_CHECK_PASS,
        SLOTS_CHECK_FAIL,
        SLOTS_CHECK_SKIP,
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
        unsigned passed, failed, skipped;
};

struct slots_check_opts {
        const char *config;             /* NULL: SLOTS_CONFIG or the default */
        const char *sudo;               /* NULL: /usr/bin/sudo */
        int sudo_timeout_ms;            /* <= 0: 5000 */
        int probe_timeout_ms;           /* <= 0: 10000 (a hung NFS mount must not hang the check) */
};

/*
 * Runs every check and fills rep (free it with slots_check_report_free).  Needs
 * root: it reads /etc/shadow and probes in forked children that drop to each
 * slot and to the service account.  Changes nothing: no mode, owner, table or
 * config is written and the table's lock is not taken.  A config that cannot be
 * loaded is one FAIL row and the end of the run.  Returns 0 (whatever the
 * rows say) or -ENOMEM.
 */
int slots_selfcheck(const struct slots_check_opts *o, struct slots_check_report *rep);

void slots_check_report_free(struct slots_check_report *rep);

/* "PASS", "FAIL", "SKIP". */
const char *slots_check_status_name(enum slots_check_status s);
