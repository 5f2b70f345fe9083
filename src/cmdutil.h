/* What both commands do at their boundary: standard streams, the error lines and exit status, the config, JSON text. */
#pragma once

#include <stdbool.h>
#include <stdio.h>
#include <sys/types.h>

#include <jansson.h>

#include "config.h"
#include "error.h"

/* Exit statuses of the contract. */
enum {
        EXIT_DONE = 0,
        EXIT_REFUSED = 1,
        EXIT_USAGE = 2,
};

/* The "version" every --json output carries; a change of any shape bumps it. */
#define CMD_JSON_VERSION 1

/* The command's name for messages ("slots-admin"); set once in main. */
extern const char *cmd_name;

/*
 * First thing in main, as sudo and doas do: each of fds 0-2 that is closed gets
 * /dev/null, so no file the command opens later (the table's lock) becomes its
 * standard output or error.  Returns the mask of the fds that were closed
 * (1 << fd); exits 1 when /dev/null cannot be opened.
 */
unsigned cmd_fds_guard(void);

/* The mask cmd_fds_guard() returned: a standard output closed at start reached nobody. */
extern unsigned cmd_fds_closed;

/*
 * Flushes standard output and says whether what was printed reached a reader:
 * -errno when a write failed (a full disk or pipe) or stdout was closed at start.
 */
int cmd_stdout_done(void);

/*
 * Standard error, with standard output flushed first: standard output may be
 * written in blocks (slots-provision's change lines), and in a log that takes
 * both, a warning must still follow the changes made before it.
 */
FILE *cmd_err(void);

/*
 * Prints "<cmd>: <what>: <object>[:line:col]: <reason>" and, when the error
 * carries one, "<cmd>: fix: <fix>" (or `fix` given here when the error has none).
 */
void cmd_report(const char *what, const struct slots_error *e, const char *fix);

/* Exit status for a library result r and its error e: 0 done, 2 invalid, 1 failed or refused. */
int cmd_exit_for(int r, const struct slots_error *e);

/* Loads the config named by --config, SLOTS_CONFIG or the default; reports and returns an exit status. */
int cmd_load_config(const char *path, struct slots_config **c);

/*
 * The same with SLOTS_CONFIG_* flags: a config refused by them (one that someone
 * but root can change, SLOTS_CONFIG_ROOT_OWNED) is exit 1, with the fix.
 */
int cmd_load_config_flags(const char *path, unsigned flags, struct slots_config **c);

/*
 * The same without a word printed: the exit status, and for a config not loaded the
 * heading of its error ("invalid config") in *what and the error in e.
 */
int cmd_config_get(const char *path, unsigned flags, struct slots_config **c, const char **what,
                   struct slots_error *e);

/* "<cmd>: <message>" and "Try '<cmd> --help'." on standard error; returns EXIT_USAGE. */
int cmd_usage_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* A warning on stderr, with the fix, when someone but root can change config c (slots_config_writers). */
void cmd_warn_config_writers(const struct slots_config *c);

/*
 * A JSON string of s: the exact text when it is UTF-8 (a name made by a slot or the service
 * may hold any byte but NUL); each byte that is not, as the four characters \\xHH, so the
 * entry is never lost.  NULL when out of memory.
 */
json_t *cmd_json_text(const char *s);
