/* A bump allocator for jansson in a short-lived command: trees carved from a few mappings, dropped whole. */
#pragma once

#include <stdbool.h>
#include <stddef.h>

/*
 * Makes the arena jansson's allocator (json_set_alloc_funcs) for the rest of
 * the process.  Call it before any other jansson call: memory jansson got from
 * malloc must never reach the arena's free, nor the reverse.  Never in
 * pam_slots.so: its host process may use jansson itself.
 */
void slots_arena_use(void);

/* Whether slots_arena_use() was called: jansson's values then live in the arena. */
bool slots_arena_active(void);

/*
 * Gives every mapping back.  Nothing jansson handed out before may be used
 * after; jansson may go on allocating (from new mappings).
 */
void slots_arena_drop(void);

/* The allocator itself, for the unit test: NULL on ENOMEM. */
void *slots_arena_malloc(size_t n);
void slots_arena_free(void *p);

/* Bytes mapped for the arena right now (its share of the peak memory). */
size_t slots_arena_mapped(void);
