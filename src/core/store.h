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
        struct stat st;                 /* its stat when it existed; after a save, the saved file's */
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

/*
 * Writes the table's index again (table-index.h) when the one on disk does not
 * name the table file as it is: after a writer was killed between the table's
 * rename and the index's, or after the table was replaced by other means.  The
 * store must be open for writing (the lock held, s->table the file's content).
 * Returns 0 (nothing to do, or done) or -errno.
 */
int slots_store_reindex(struct slots_store *s, struct slots_error *e);

/* Releases lock, fds and the table. */
void slots_store_close(struct slots_store *s);

/*
 * The table's policy: root:<service group> SLOTS_TABLE_MODE (table.h) and no POSIX ACL,
 * so the service reads it and only root writes it.  Each way a table file differs:
 */
enum {
        SLOTS_POLICY_OWNER = 1 << 0,    /* not owned by root */
        SLOTS_POLICY_GROUP = 1 << 1,    /* its group is not the service group */
        SLOTS_POLICY_MODE = 1 << 2,     /* its mode is not 0640 */
        SLOTS_POLICY_ACL = 1 << 3,      /* it has a POSIX ACL (or one that cannot be read) */
};

/* The verdict on one table file against the policy. */
struct slots_table_verdict {
        unsigned problems;              /* SLOTS_POLICY_* bits; 0: as the policy says */
        bool writable;                  /* someone but root may write it (or change its mode) */
        bool unreadable;                /* by owner, group and mode alone the service group cannot read it */
        struct slots_error e;           /* with problems: what differs (kind refused) and the one fix line */
        struct stat st;                 /* the file as judged */
};

/* What the verdict judges against, and how it names ids in its text. */
struct slots_table_policy {
        const char *path;               /* for the text (slots_store_verdict: NULL is the store's) */
        gid_t group;                    /* the service group; (gid_t) -1: the group is not judged */
        const char *group_name;         /* its name, for the fix */
        /* Names of an owner and a group (slots_uid_name, slots_gid_name); NULL: numbers. */
        const char *(*user_name)(uid_t uid, char *buf, size_t size);
        const char *(*group_name_of)(gid_t gid, char *buf, size_t size);
};

/*
 * The verdict on the table file open at fd (st its fstat; a regular file;
 * fd -1: the ACL counts as unreadable).  An ACL counts as writable when the
 * mode's group bits (its mask) allow write, or when it cannot be read.  The
 * reason reads "owner is X, not root; group is G, not the service group S;
 * mode is M, not 0640; ..."; the fix is the one command line that repairs all
 * of it (chgrp, chown root:S, chmod 0640, setfacl -b).  Returns true when the
 * file is as the policy says.  Only reads.
 */
bool slots_table_verdict(int fd, const struct stat *st, const struct slots_table_policy *p,
                         struct slots_table_verdict *v);

/* The verdict on the table s loaded (s->exists), through a fresh fd on the file at its name. */
bool slots_store_verdict(const struct slots_store *s, const struct slots_table_policy *p,
                         struct slots_table_verdict *v);

/* The lock file's name for a table named `name`: "<name>.lock" in the same directory. */
#define SLOTS_LOCK_SUFFIX ".lock"
