/* The table's index: each slot's state in one byte, valid only for the table file it names. */
#pragma once

#include <stdbool.h>
#include <sys/stat.h>
#include <sys/types.h>

#include "error.h"
#include "table.h"

/* The index of table NAME is "<NAME>.index" in the same folder. */
#define SLOTS_TINDEX_SUFFIX ".index"

/*
 * Writes the index of table t, saved in dirfd as table_name, whose stat after
 * the rename is table_st: the table's device, inode, size and change time, the
 * pool, then one byte per slot ('-' free, 'a' assigned, 'p' pending), then
 * a hash of those bytes.  Replaced
 * atomically, with the table's group and mode 0640 less any write bit for
 * others.  Call it with the table's lock held, after the table's rename.
 * Returns 0 or -errno (e says why).
 */
int slots_tindex_write(int dirfd, const char *table_name, const char *display, const struct stat *table_st,
                       const struct slots_table *t, unsigned pool, struct slots_error *e);

/* Removes the temps a writer of the index killed before its rename left (table lock held). */
int slots_tindex_clean_stale(int dirfd, const char *table_name);

/*
 * The state of slot n as the index of dirfd/table_name says it, when the index
 * can be trusted for the table whose fstat is table_st: a regular file with one
 * link, owned by root, writable by nobody else (group and other write bits,
 * which an ACL's mask shows as group write, clear), of exactly the size its
 * pool makes, naming this table's device, inode, size and change time and this
 * pool.  Returns 0 and sets *state; or -ESTALE (any of that not so: read the
 * table itself) with *why set to a short reason; or another -errno.
 */
int slots_tindex_lookup(int dirfd, const char *table_name, const struct stat *table_st, unsigned pool,
                        unsigned n, enum slots_slot_state *state, const char **why);

/* What slots_tindex_ask found. */
struct slots_tindex_answer {
        int table_fd;                   /* the table, open (the caller closes it), or -1 */
        struct stat table;              /* its fstat */
        enum slots_slot_state state;    /* when believed */
        const char *why;                /* when not: a short reason */
};

/*
 * slots_tindex_lookup for the table at absolute path table, in as few system
 * calls as a session can afford: its folder opened with openat2() and
 * RESOLVE_NO_SYMLINKS (a symlink anywhere on the way is "not believed": the
 * caller's full read resolves the path its own way; a kernel without openat2
 * gets the resolver's walk, slots_open_parent_in()), the table opened without following and fstat'ed (a->table_fd and
 * a->table, for the caller's own checks of its mode and ACL; the caller closes
 * the fd), then the index.  Returns 0 when believed, -ESTALE when not.
 */
int slots_tindex_ask(const char *table, unsigned pool, unsigned n, struct slots_tindex_answer *a);
