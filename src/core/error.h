/* The error record that library calls fill and only the command boundary prints; the first of several kept. */
#pragma once

#include <stdarg.h>

#define SLOTS_ERR_TEXT 512

/*
 * What kind of error it is, decided where it is raised; the commands map it to
 * their exit status (failed and refused 1, invalid 2).  The -errno a library
 * call returns stays the system's word for the cause and decides nothing.
 */
enum slots_error_kind {
        SLOTS_ERR_FAILED,       /* could not be done: a call, a lookup or memory failed */
        SLOTS_ERR_REFUSED,      /* would not be safe or allowed: refused, nothing changed */
        SLOTS_ERR_INVALID,      /* the config, the table or an argument is invalid */
};

/*
 * Library functions return 0 or a negative errno and, on failure, describe the
 * problem here, with its kind.  A text longer than its field is cut and ends
 * in "...", never cut without a mark.
 */
struct slots_error {
        enum slots_error_kind kind;
        char object[SLOTS_ERR_TEXT];    /* file or object the error is about */
        unsigned line, column;          /* 1-based; 0 when not about a position */
        char reason[SLOTS_ERR_TEXT];
        char fix[SLOTS_ERR_TEXT];       /* empty when there is no single fix */
        int err;                        /* the system's errno for the cause (-r of the call); 0: none */
};

void slots_error_clear(struct slots_error *e);

/*
 * Sets object and reason (printf-style) of a failure; returns r so callers can
 * `return slots_error_set(...)`.
 */
int slots_error_set(struct slots_error *e, int r, const char *object, const char *fmt, ...)
        __attribute__((format(printf, 4, 5)));

/* The same for a refusal (SLOTS_ERR_REFUSED). */
int slots_error_refuse(struct slots_error *e, int r, const char *object, const char *fmt, ...)
        __attribute__((format(printf, 4, 5)));

/* The same for invalid content or arguments (SLOTS_ERR_INVALID). */
int slots_error_invalid(struct slots_error *e, int r, const char *object, const char *fmt, ...)
        __attribute__((format(printf, 4, 5)));

/* Adds position information to an error already set. */
void slots_error_at(struct slots_error *e, unsigned line, unsigned column);

/* Sets the fix line (printf-style). */
void slots_error_fix(struct slots_error *e, const char *fmt, ...)
        __attribute__((format(printf, 2, 3)));

/*
 * The first failure of work that goes on after one (a release's steps, the
 * objects one step removes, the entries of a walk): later failures are mostly
 * its consequences, so the first is the one reported.
 */
struct slots_first {
        int r;                          /* 0, or the first failure's -errno */
        struct slots_error *e;          /* gets the first failure's record; may be NULL */
};

/* Keeps r, and *sub into f->e (sub may be NULL), when r < 0 is the first failure; else nothing. */
void slots_first_keep(struct slots_first *f, int r, const struct slots_error *sub);

/* Renders "object:line:column: reason" (position only when known) into buf; a cut ends in "...". */
const char *slots_error_format(const struct slots_error *e, char *buf, unsigned long size);
