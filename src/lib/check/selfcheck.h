/* The read-only self-check (slots-admin(8), "check"): every layer of the slot chain, as the slots see it. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "check-report.h"
#include "perm.h"               /* for the commands that judge a mode with the same model */

/*
 * Runs every check and fills rep (free it with slots_check_report_free).  Needs
 * root: it reads /etc/shadow and probes in forked children that drop to each
 * slot and to the service account.  Changes nothing: no mode, owner, table or
 * config is written and the table's lock is not taken.  A config that cannot be
 * loaded is one FAIL row and the end of the run.  Returns 0 (whatever the
 * rows say) or -ENOMEM.
 */
int slots_selfcheck(const struct slots_check_opts *o, struct slots_check_report *rep);
