/* The error record that library calls fill and only the command boundary prints. */
#pragma once

#include <stdarg.h>

#define SLOTS_ERR_TEXT 512

/*
 * Library functions return 0 or a negative errno and, on failure, describe the
 * problem here.  Convention for the return value, which the commands map to
 * exit statuses:
 *   -EBADMSG  invalid config or table content (exit 2)
 *   -EINVAL   invalid argument (exit 2)
 *   anything else: refused or failed (exit 1)
 */
struct slots_error {
        char object[SLOTS_ERR_TEXT];    /* file or object the error is about */
        unsigned line, column;          /* 1-based; 0 when not about a position */
        char reason[SLOTS_ERR_TEXT];
        char fix[SLOTS_ERR_TEXT];       /* empty when there is no single fix */
};

void slots_error_clear(struct slots_error *e);

/* Sets object and reason (printf-style); returns r so callers can `return slots_error_set(...)`. */
int slots_error_set(struct slots_error *e, int r, const char *object, const char *fmt, ...)
        __attribute__((format(printf, 4, 5)));

/* Adds position information to an error already set. */
void slots_error_at(struct slots_error *e, unsigned line, unsigned column);

/* Sets the fix line (printf-style). */
void slots_error_fix(struct slots_error *e, const char *fmt, ...)
        __attribute__((format(printf, 2, 3)));

/* Renders "object:line:column: reason" (position only when known) into buf. */
const char *slots_error_format(const struct slots_error *e, char *buf, unsigned long size);
