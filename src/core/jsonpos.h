/* Where a value or key sits in a JSON text, for errors that name line and column. */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "error.h"

/* One step of a path into a JSON document: an object key, or an array index when key is NULL. */
struct slots_jpath {
        const char *key;
        size_t index;
};

/*
 * The source of a parsed document: its name (for errors) and its text, which
 * jansson has already accepted as JSON.
 */
struct slots_jsrc {
        const char *file;
        const char *text;
        size_t len;
};


/*
 * Sets e to an invalid-content error (-EBADMSG) about the element at path (n steps) in src (its
 * key with want_key), with file, line and column; returns -EBADMSG.
 */
int slots_json_fail(struct slots_error *e, const struct slots_jsrc *src, const struct slots_jpath *path,
                    size_t n, bool want_key, const char *fmt, ...) __attribute__((format(printf, 6, 7)));

struct json_error_t;

/*
 * Sets e from what json_loadb() left in jerr about file: invalid content at its
 * line and column (-EBADMSG), or a failure when jansson ran out of memory (it
 * says so by its code, or by leaving no text at all when it could not start):
 * -ENOMEM.  Returns that.
 */
int slots_json_load_error(struct slots_error *e, const char *file, const struct json_error_t *jerr);
