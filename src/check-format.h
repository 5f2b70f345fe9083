/* check's monitoring outputs: the rows as the table of slots-admin(8), JSON, a Nagios plugin line with perfdata, Prometheus text. */
#pragma once

#include <stdbool.h>
#include <stdio.h>
#include <time.h>

#include "check.h"
#include "check-report.h"
#include "error.h"

/* Nagios plugin statuses (the Monitoring Plugins guidelines). */
enum { NAGIOS_OK = 0, NAGIOS_WARNING = 1, NAGIOS_CRITICAL = 2, NAGIOS_UNKNOWN = 3 };

/* What the machine outputs add to the rows: the config's fate and the pool's counts. */
struct check_run {
        const struct cmd_check_args *a;
        struct slots_check_report rep;
        char config_error[2 * SLOTS_ERR_TEXT + 64];     /* "" when the config loaded */
        bool pool_known;                                /* the table could be read */
        unsigned slots, assigned, pending;
        time_t when;
};

/*
 * Renders x in its format (x->a->format) into f; 0, or -errno when the JSON could not be
 * made or written.  *st becomes the plugin's status for nagios and is left alone otherwise.
 */
int check_format(FILE *f, const struct check_run *x, int *st);
