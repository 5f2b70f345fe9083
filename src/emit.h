/* The one emitter: a run's outcome record written once as text, the --json envelope, the authpriv line and the journal entry. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <sys/uio.h>

#include "cmdutil.h"
#include "error.h"
#include "ids.h"

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
        CMD_EV_N,                       /* no event */
};

/* The MESSAGE_ID of ev, 32 hex digits (as in data/slots.catalog). */
const char *cmd_event_id(enum cmd_event ev);

/* A journal entry names at most this many slots one field each (libsystemd's iovec limit). */
#define CMD_EVENT_MAX_SLOTS 400

/* What a note is: a warning beside the result, a conflict that refused the run, or one change made. */
enum cmd_note_kind {
        CMD_NOTE_WARNING,
        CMD_NOTE_CONFLICT,
        CMD_NOTE_CHANGE,
};

/*
 * A line the run gives beside its result, in the order the run met it: a change (on
 * standard output), or a warning or conflict with what it is about and its fix; a
 * warning with a slot is about it ("<notes_key> <slot>: <text>", listed under notes_key).
 */
struct cmd_note {
        enum cmd_note_kind kind;
        char slot[SLOTS_NAME_MAX];      /* "": none */
        char *object, *text, *fix;      /* "": none; one allocation, at object */
};

/*
 * What one run of a verb came to, rendered once by cmd_emit().  A verb fills it from
 * its one library call; nothing else is printed or logged about the run.
 */
struct cmd_outcome {
        const char *verb;               /* "assign", "release", "provision", "check" */
        bool json;                      /* --json: the envelope on stdout, no text line */
        bool dry_run, changed;
        bool listed;                    /* --json: root, count and the notes by kind (provision), not slot and user */
        int status;                     /* the exit status: cmd_exit_for() of the error's kind, or the verb's */
        unsigned slot;                  /* the slot it is about (0: none) */
        const char *asked;              /* the slot as asked, named in the event when slot is 0 */
        const char *const *slots;       /* or the n_slots slots a run changed (provision) */
        size_t n_slots;
        const char *root;               /* the image root it worked on (provision); NULL: the host */
        unsigned count;                 /* the changes made (or, in a dry run, to be made) */
        const char *user;               /* the application user it is about */
        const char *service;            /* the config's service account, once loaded */
        char what[320];                 /* the error's heading ("cannot assign slot03"); "": no error */
        struct slots_error error;       /* the error that ended the run, when what is set */
        char fix[SLOTS_ERR_TEXT + 256]; /* the fix printed when the error has none; "": none */
        struct cmd_note *notes;         /* the notes, in order (cmd_outcome_add) */
        size_t n_notes;
        size_t notes_lost;              /* notes not kept (out of memory): the run fails, saying so */
        const char *notes_key;          /* --json: the key of the warnings with a slot ("skipped"); NULL: none */
        enum cmd_event event;           /* CMD_EV_N: nothing logged (a dry run, a no-op) */
        char message[2048];             /* the event's sentence: the syslog line before "; by <admin>" */
        char line[512];                 /* the text output's one line; "": none */
        const char *line_name;          /* what that line is, for "cannot print <line_name>"; NULL: not checked */
        char closing[256];              /* a last line on standard error ("dry run: nothing was changed") */
};

/* A new record for verb: no error, no event, exit 0. */
void cmd_outcome_init(struct cmd_outcome *o, const char *verb, bool json, bool dry_run);

/* Sets the error that ended the run (what: its heading) and the exit status its kind gives. */
void cmd_outcome_fail(struct cmd_outcome *o, const char *what, const struct slots_error *e);

/* The same, with the exit status given (a failure the verb counts as refused, or as a usage error). */
void cmd_outcome_fail_st(struct cmd_outcome *o, int status, const char *what, const struct slots_error *e);

/* Adds a note (slot, object, fix NULL: none); one that cannot be kept is counted in notes_lost. */
void cmd_outcome_add(struct cmd_outcome *o, enum cmd_note_kind kind, const char *slot, const char *object,
                     const char *text, const char *fix);

/* Adds a warning (slot, fix NULL: none). */
void cmd_outcome_note(struct cmd_outcome *o, const char *slot, const char *fix, const char *fmt, ...)
        __attribute__((format(printf, 4, 5)));

/* Frees the record's notes (cmd_emit does, once they are written). */
void cmd_outcome_free(struct cmd_outcome *o);

/* Sets the event and its sentence. */
void cmd_outcome_event(struct cmd_outcome *o, enum cmd_event ev, const char *fmt, ...)
        __attribute__((format(printf, 3, 4)));

/* "<what>: <object>: <reason>" of the record's error, escaped as the error line prints it: for a sentence. */
const char *cmd_outcome_error_text(const struct cmd_outcome *o, char *buf, size_t size);

/*
 * Writes o: its notes in order (changes on standard output without --json, the rest on
 * standard error, with their fixes) and its error ("<cmd>: <what>: <object>: <reason>", then the fix) on
 * standard error; the event as one authpriv syslog line "<message>; by <admin>" and, where
 * journald runs, one journal entry (cmd_journal_fields); then the --json envelope or the
 * text line on standard output; then frees the notes.  Returns the exit status:
 * o->status, or 1 when a note was lost or what standard output was to carry did not reach it.
 */
int cmd_emit(struct cmd_outcome *o);

/* The journal entry as a list of "NAME=value" fields; cmd_journal_send() sends it. */
struct cmd_fields {
        struct iovec *iov;
        int n;
        char *buf;
};

/*
 * The journal entry of o's event, its syslog line and admin given: MESSAGE, MESSAGE_ID,
 * PRIORITY, SYSLOG_FACILITY, SYSLOG_IDENTIFIER, SLOTS_ACTION, SLOTS_RESULT, SLOTS_USER,
 * SLOTS_ADMIN, SLOTS_SERVICE, SLOTS_SLOT_COUNT (more than one slot), the error's
 * SLOTS_OBJECT, SLOTS_REASON, SLOTS_FIX and ERRNO, and a SLOTS_SLOT field per slot (up to
 * CMD_EVENT_MAX_SLOTS; more are named in MESSAGE only).  Fields without a value are left
 * out; names are escaped.  -ENOMEM, or 0.
 */
int cmd_journal_fields(const struct cmd_outcome *o, const char *line, const char *admin, struct cmd_fields *f);
void cmd_fields_free(struct cmd_fields *f);

/* Sends the fields to the journal where journald runs; a journal that does not take them changes nothing. */
void cmd_journal_send(const struct cmd_fields *f);

/*
 * The file the login uid is read from (/proc/self/loginuid) and the journal's socket
 * (/run/systemd/journal/socket; journald runs where it is or sd_booted() says so): the
 * unit test points them elsewhere.
 */
extern const char *cmd_loginuid_file;
extern const char *cmd_journal_socket;
