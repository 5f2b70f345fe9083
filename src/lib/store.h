/* The table file on disk: checked directory, lock, load, owner-preserving save. */
#pragma once

#include <stdbool.h>
#include <sys/stat.h>
#include <sys/types.h>

#include "error.h"
#include "table.h"

struct slots_store {
        char *path;                     /* the table's path (for errors) */
        int dirfd;                      /* the checked directory that holds it */
        const char *name;               /* last component of path */
        int lockfd;                     /* -1 unless opened for writing */
        bool exists;                    /* the table file existed when loaded */
        struct stat st;                 /* its stat when it existed */
        gid_t group;                    /* service group: owner group of a new table */
        unsigned pool;
        struct slots_table *table;
};

enum {
        SLOTS_STORE_WRITE = 1 << 0,     /* take the lock; the directory must be safe to write */
};

/*
 * Opens the table at path inside rootfd, takes the lock when writing, and loads
 * it (a missing table loads as empty).  group is the service group, used when
 * the table is created.  Refuses a table that is a symlink or not a regular
 * file, and a directory writable by others (e's kind says refused), and
 * invalid content (e's kind says invalid).  Returns 0 or a -errno.
 */
int slots_store_open(struct slots_store *s, int rootfd, const char *path, unsigned pool, gid_t group,
                     unsigned flags, struct slots_error *e);

/* Writes s->table back (owner, group, mode and ACL kept; new: root:group 0640). */
int slots_store_save(struct slots_store *s, struct slots_error *e);

/* Releases lock, fds and the table. */
void slots_store_close(struct slots_store *s);

/* The table's policy: root:<service group> 0640, so the service reads it and only root writes it. */
#define SLOTS_TABLE_MODE 0640
bool slots_store_policy_ok(const struct stat *st, gid_t group);

/* The lock file's name for a table named `name`: "<name>.lock" in the same directory. */
#define SLOTS_LOCK_SUFFIX ".lock"
