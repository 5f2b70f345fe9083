/* The one directory walker: fd-relative, no symlink followed, any depth, a bound on open fds, a visitor. */
#pragma once

#include <fcntl.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/stat.h>

#include "error.h"

/* Folders a walk keeps open at most, unless the caller says otherwise. */
#define SLOTS_WALK_OPEN_MAX 64

/* What the walker asks of statx for every entry. */
#define SLOTS_WALK_STATX (STATX_TYPE | STATX_MODE | STATX_UID | STATX_GID | STATX_INO | STATX_NLINK | STATX_MNT_ID)

enum {
        /*
         * A folder on another file system, or a mount root, is shown to the visitor with
         * other_fs set and never entered.
         */
        SLOTS_WALK_ONE_FS = 1 << 0,
        /* Folders are shown again after all they hold (SLOTS_WALK_LEAVE): the unlink walk. */
        SLOTS_WALK_POST = 1 << 1,
};

enum slots_walk_event {
        SLOTS_WALK_ENTRY,       /* anything but a folder to be entered: never opened by the walker */
        SLOTS_WALK_ENTER,       /* a folder, opened, before what it holds (the root too, depth 0) */
        SLOTS_WALK_LEAVE,       /* the same folder after what it holds (SLOTS_WALK_POST only) */
        /*
         * A folder that kept changing between the look and the open, three times: the
         * walk fails on it unless the visitor returns SLOTS_WALK_SKIP (left alone,
         * on purpose).  fd is -1.
         */
        SLOTS_WALK_CHANGING,
};

/* What the visitor is told of one entry. */
struct slots_walk_entry {
        int parent_fd;          /* the folder that holds it (-1 for the root) */
        const char *name;       /* its name there (NULL for the root); raw bytes, escape before showing */
        int fd;                 /* a folder's fd (O_RDONLY | O_DIRECTORY) at ENTER and LEAVE; else -1 */
        const struct statx *sx; /* the entry itself (AT_SYMLINK_NOFOLLOW); for a folder, the one opened */
        unsigned depth;         /* 0: the root; 1: an entry of the root */
        const char *path;       /* the walk's path of it, for messages (raw bytes) */
        size_t root_len;        /* the length of the root's path at its start (slots_walk_shown()) */
        bool other_fs;          /* SLOTS_WALK_ONE_FS: a folder not entered, on another file system */
        bool last_try;          /* the visitor's -EAGAIN will not be retried again: decide now */
};

/* A visitor's return: 0 goes on; SLOTS_WALK_SKIP at ENTER does not look inside that folder. */
#define SLOTS_WALK_SKIP 1

/*
 * Called for each entry.  A negative return (-errno, with e set) is a failure of
 * that entry: the walk keeps the first and goes on, and fails with it.  -EAGAIN
 * means the entry changed under the visitor: it is looked at again (statx
 * anew), at most three times, then the walk fails unless the visitor, told
 * last_try, returns something else.
 */
typedef int (*slots_walk_visit_fn)(void *data, enum slots_walk_event ev, const struct slots_walk_entry *en,
                                   struct slots_error *e);

struct slots_walk {
        unsigned flags;
        unsigned open_max;      /* folders kept open at most; 0: SLOTS_WALK_OPEN_MAX */
        const char *path;       /* the root as messages name it */
        slots_walk_visit_fn visit;
        void *data;
};

/*
 * Walks the folder fd (not consumed) and everything below it, at any depth:
 * entries are looked at with statx(AT_SYMLINK_NOFOLLOW), folders opened with
 * O_NOFOLLOW and checked to be the entry looked at.  A folder deeper than
 * open_max levels below the deepest open one is read ahead into memory and
 * closed, then opened again through ".." and checked to be the same folder.
 *
 * One rule for what the walk cannot read: a folder that cannot be opened or
 * read, an entry that cannot be looked at, a folder moved away while it was
 * closed (-ESTALE), each is a failure of the walk (e names the entry).  The
 * walk goes on with what it can reach and returns the first failure: a walk
 * that did not reach the end of every folder never returns 0.
 */
int slots_walk(int fd, const struct slots_walk *how, struct slots_error *e);

/*
 * A walk's path as an error record shows it: whole when it fits in size, else
 * the root's path (its first root_len bytes: which tree, at most half of
 * size) and the path's end (where), "/.../" between.
 */
void slots_walk_shown(const char *path, size_t root_len, char *buf, size_t size);
