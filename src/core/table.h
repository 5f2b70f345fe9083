/* The slot table format (slots.json(5)): validate, query, change, serialize. */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "error.h"

/* The mode of the table file (and of its index): the service group reads, only root writes. */
#define SLOTS_TABLE_MODE 0640

struct slots_table;

enum slots_slot_state {
        SLOTS_SLOT_FREE,
        SLOTS_SLOT_ASSIGNED,
        SLOTS_SLOT_PENDING,     /* release did not finish: "cleanup": "pending" */
};

/* The largest table text read (a pool of 9999 slots is far below it). */
#define SLOTS_TABLE_MAX ((size_t) 64 << 20)

/* What is wrong with a table text that does not parse. */
enum slots_table_problem {
        SLOTS_TABLE_OK,
        SLOTS_TABLE_SYNTAX,             /* not JSON (or a key twice in one object) */
        SLOTS_TABLE_VERSION,            /* "version" is not 1 */
        SLOTS_TABLE_SCHEMA,             /* not an object, "slots" not an object, an entry of the wrong shape */
        SLOTS_TABLE_OUT_OF_POOL,        /* a key that is not a slot of the pool */
        SLOTS_TABLE_USER,               /* an invalid user id */
        SLOTS_TABLE_DUPLICATE,          /* a user in two slots */
        SLOTS_TABLE_NO_MEMORY,
};

/* An empty table (version 1, no slots); NULL on ENOMEM. */
struct slots_table *slots_table_new(void);

/*
 * Parses and validates table text for a pool of `pool` slots: version 1, slot
 * names in the pool, valid user ids, no user in two slots, entries either
 * assigned (user, since) or pending (cleanup, released).  Errors name file,
 * line and column; returns -EBADMSG (an invalid error) then.
 */
int slots_table_parse(const char *text, size_t len, const char *file, unsigned pool,
                      struct slots_table **ret, struct slots_error *e);

/* The same; *problem says what is wrong (SLOTS_TABLE_OK when it parses), not the message's words. */
int slots_table_parse_problem(const char *text, size_t len, const char *file, unsigned pool,
                              struct slots_table **ret, enum slots_table_problem *problem,
                              struct slots_error *e);

void slots_table_free(struct slots_table *t);

/* Frees t but not its jansson values, for an allocator that drops them all at once (arena.h). */
void slots_table_forget(struct slots_table *t);

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

/* The state of slots 1..pool into states[0..pool-1] (enum slots_slot_state values). */
void slots_table_states(const struct slots_table *t, unsigned pool, unsigned char *states);

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
