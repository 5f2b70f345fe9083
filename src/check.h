/* slots-admin check: the self-check's rows as the table of slots-admin(8), JSON, a Nagios line or Prometheus text. */
#pragma once

#include <stdbool.h>

enum cmd_check_format {
        CMD_CHECK_TEXT,
        CMD_CHECK_JSON,                 /* --json, --format=json */
        CMD_CHECK_NAGIOS,               /* one plugin line; exit 0 OK, 2 CRITICAL, 3 UNKNOWN */
        CMD_CHECK_PROMETHEUS,           /* node_exporter's textfile format */
};

struct cmd_check_args {
        const char *config;             /* NULL: SLOTS_CONFIG or the default */
        enum cmd_check_format format;
        const char *output;             /* --output FILE, replaced atomically; NULL: stdout */
        int timeout_s;                  /* > 0: the limit of each timed stage of its runs (--timeout) */
};

/*
 * Runs the self-check and prints it in a's format; returns the exit status (0/1 for
 * text and JSON, the plugin's 0/2/3 for nagios).
 */
int cmd_check(const struct cmd_check_args *a);

/* The format named by --format's argument; -1 for an unknown name. */
int cmd_check_format(const char *name);

/* --timeout's argument: whole seconds from 1 to 3600 into *seconds; false for anything else. */
bool cmd_check_timeout(const char *arg, int *seconds);
