/* What both commands do at their boundary: report errors, log events to syslog and the journal, make JSON. */
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

/*
 * The kinds of event the commands log, each with its MESSAGE_ID (data/slots.catalog
 * explains each for journalctl -x), its SLOTS_ACTION and its SLOTS_RESULT.
 */
enum cmd_event {
        CMD_EV_ASSIGNED,                /* assign: the user holds the slot, the tree is ready */
        CMD_EV_ASSIGN_REFUSED,          /* assign: refused or failed, the table unchanged */
        CMD_EV_ASSIGN_UNFINISHED,       /* assign: saved, but the tree could not be prepared */
        CMD_EV_RELEASED,                /* release: the slot is clean and free */
        CMD_EV_RELEASE_REFUSED,         /* release: refused or failed, the table unchanged */
        CMD_EV_RELEASE_PENDING,         /* release: a step failed, the slot stays "cleanup": "pending" */
        CMD_EV_PROVISIONED,             /* provision: the run's changes, as one summary */
        CMD_EV_PROVISION_REFUSED,       /* provision: refused or failed */
        CMD_EV_CHECK_PASSED,            /* check: no row failed */
        CMD_EV_CHECK_FAILED,            /* check: a row failed */
        CMD_EV_CHECK_REFUSED,           /* check: it could not run (not root nor the service) */
        CMD_EV_N,
};

/* The MESSAGE_ID of ev, 32 hex digits (as in data/slots.catalog). */
const char *cmd_event_id(enum cmd_event ev);

/* The service account the events name (SLOTS_SERVICE); set once the config is loaded. */
void cmd_log_service(const char *service);

/*
 * Logs one event: one syslog line (LOG_AUTHPRIV) "<text>; by <admin>", and, where
 * journald runs, one journal entry with MESSAGE_ID, SLOTS_ACTION, SLOTS_RESULT,
 * SLOTS_SLOT (one field for each of the n_slots slots, up to CMD_EVENT_MAX_SLOTS; more
 * are named in the text only), SLOTS_SLOT_COUNT (n_slots, when more than one),
 * SLOTS_USER, SLOTS_ADMIN and SLOTS_SERVICE (fields without a value are left out).  The admin is SUDO_USER (only
 * when run by root, as sudo does), else the login uid's name, else the uid's.  Names
 * are escaped (escape.c) in the text and the fields.
 */
#define CMD_EVENT_MAX_SLOTS 400
void cmd_event(enum cmd_event ev, const char *slot, const char *user, const char *fmt, ...)
        __attribute__((format(printf, 4, 5)));
void cmd_event_slots(enum cmd_event ev, const char *const *slots, size_t n_slots, const char *user,
                     const char *fmt, ...) __attribute__((format(printf, 5, 6)));

/*
 * The file the login uid is read from (/proc/self/loginuid) and the journal's socket
 * (/run/systemd/journal/socket; journald runs where it is or sd_booted() says so): the
 * unit test points them elsewhere.
 */
extern const char *cmd_loginuid_file;
extern const char *cmd_journal_socket;

/* What cmd_report last printed ("<what>: <object>: <reason>"), for the refusal's log line; "" before. */
const char *cmd_last_error(void);

/* Loads the config named by --config, SLOTS_CONFIG or the default; reports and returns an exit status. */
int cmd_load_config(const char *path, struct slots_config **c);

/*
 * The same with SLOTS_CONFIG_* flags: a config refused by them (one that someone
 * but root can change, SLOTS_CONFIG_ROOT_OWNED) is exit 1, with the fix.
 */
int cmd_load_config_flags(const char *path, unsigned flags, struct slots_config **c);

/* A warning on stderr, with the fix, when someone but root can change config c (slots_config_writers). */
void cmd_warn_config_writers(const struct slots_config *c);

/*
 * A JSON string of s: the exact text when it is UTF-8 (a name made by a slot or the service
 * may hold any byte but NUL); each byte that is not, as the four characters \\xHH, so the
 * entry is never lost.  NULL when out of memory.
 */
json_t *cmd_json_text(const char *s);
