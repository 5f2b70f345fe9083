/* The slot table format (slots.json(5)): validate, query, change, serialize. */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "error.h"

struct slots_table;

enum slots_slot_state {
        SLOTS_SLOT_FREE,
        SLOTS_SLOT_ASSIGNED,
        SLOTS_SLOT_PENDING,     /* release did not finish: "cleanup": "pending" */
};

/* An empty table (version 1, no slots); NULL on ENOMEM. */
struct slots_table *slots_table_new(void);

/*
 * Parses and validates table text for a pool of `pool` slots: version 1, slot
 * names in the pool, valid user ids, no user in two slots, entries either
 * assigned (user, since) or pending (cleanup, released).  Errors name file,
 * line and column; returns -EBADMSG then.
 */
int slots_table_parse(const char *text, size_t len, const char *file, unsigned pool,
                      struct slots_table **ret, struct slots_error *e);

void slots_table_free(struct slots_table *t);

/* State of slot n; user, since and released point into the table (NULL when absent). */
enum slots_slot_state slots_table_get(const struct slots_table *t, unsigned n, const char **user,
                                      const char **since, const char **released);

/* The slot USER holds, or 0. */
unsigned slots_table_find_user(const struct slots_table *t, const char *user);

/* The lowest free slot of the pool, or 0 when full. */
unsigned slots_table_lowest_free(const struct slots_table *t, unsigned pool);

/* The highest-numbered slot neither assigned nor pending, or 0. */
unsigned slots_table_test_slot(const struct slots_table *t, unsigned pool);

/* Counts assigned and pending entries. */
void slots_table_count(const struct slots_table *t, unsigned *assigned, unsigned *pending);

/* Sets slot n to user since `since` (RFC 3339 UTC); unknown keys of the entry are kept. */
int slots_table_assign(struct slots_table *t, unsigned n, const char *user, const char *since);

/* Removes the user from slot n and marks it "cleanup": "pending" with "released". */
int slots_table_mark_pending(struct slots_table *t, unsigned n, const char *released);

/* Removes slot n's entry. */
int slots_table_remove(struct slots_table *t, unsigned n);

/* Serializes: sorted keys, two-space indent, final newline.  malloc'ed; NULL on ENOMEM. */
char *slots_table_dump(const struct slots_table *t, size_t *len);

/*
 * The same text, handed to out in pieces (json_dump_callback's contract: out
 * returns 0, or -1 to stop).  Returns 0, or -1 when out failed or on ENOMEM.
 */
int slots_table_dump_to(const struct slots_table *t, int (*out)(const char *text, size_t n, void *arg),
                        void *arg);

/* Writes the current time as RFC 3339 UTC ("2026-10-01T09:12:00Z") into buf[32]. */
const char *slots_now_rfc3339(char buf[static 32]);
