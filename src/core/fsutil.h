/* fd-based file handling: open without following, check what was opened, read it, make folders. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <sys/stat.h>
#include <sys/types.h>

#include "error.h"
#include "resolve.h"          /* the resolver, for the callers of the opens below */

/*
 * Opens name in dirfd for reading without following a symlink and without
 * blocking on a FIFO, and checks it is a regular file (-ELOOP for a symlink,
 * -EINVAL for anything else but a regular file).  Fills *st.  Returns fd or -errno.
 */
int slots_open_regular(int dirfd, const char *name, struct stat *st);

/* Reads all of fd (at most max bytes, -EFBIG beyond).  *buf is NUL-terminated. */
int slots_read_all(int fd, size_t max, char **buf, size_t *len);

/*
 * How a text file root relies on is read (the config, the table, login.defs, the
 * account files, the slotctl config): a regular file, whole, at most max bytes,
 * without a NUL byte.
 */
struct slots_read {
        const char *path;       /* the file as errors name it (their object) */
        const char *what;       /* "the config": the subject of the reasons; NULL: none ("is not a regular file") */
        size_t max;             /* more is -EFBIG */
        /*
         * May be NULL.  Called with the file's fstat once it is known to be a regular
         * file, before a byte is read (an owner or mode policy); a negative return,
         * with e set, stops.
         */
        int (*check)(const struct stat *st, void *data, struct slots_error *e);
        void *data;
        /*
         * Content that is too large or holds a NUL byte is invalid input (exit 2)
         * unless this is set: then it is a failure (exit 1), for a file the
         * caller was not handed to judge (the account files).
         */
        bool content_fails;
};

/*
 * Reads name in dirfd as how says, opened by slots_open_regular() (no symlink
 * followed, no FIFO or device opened).  *text is malloc'ed and NUL-terminated;
 * st (may be NULL) gets the file's fstat.  Returns 0, or -errno with e set and
 * its kind: a symlink (-ELOOP) or not a regular file (-EINVAL) refused, more
 * than max bytes (-EFBIG) or a NUL byte (-EBADMSG) invalid, any other error
 * (-ENOENT too) failed.
 */
int slots_read_text(int dirfd, const char *name, const struct slots_read *how, struct stat *st, char **text,
                    size_t *len, struct slots_error *e);

/* The same for a file already open (the end of slots_chase(), slots_open_in()); fd stays open. */
int slots_read_text_fd(int fd, const struct slots_read *how, struct stat *st, char **text, size_t *len,
                       struct slots_error *e);

/* Writes all of buf, retrying short writes and EINTR.  Returns 0 or -errno. */
int slots_write_all(int fd, const void *buf, size_t len);

/* How slots_ensure_dir() goes about it. */
enum {
        SLOTS_ENSURE_DRY_RUN = 1 << 0,     /* change nothing; found says what would change */
        SLOTS_ENSURE_NO_FD = 1 << 1,       /* no fd wanted: a folder that is right is looked at by name only */
        SLOTS_ENSURE_MKDIR_FIRST = 1 << 2, /* probably missing: mkdirat before any look (EEXIST: looked at) */
};

/* What slots_ensure_dir() found, for the caller's report. */
struct slots_dir_found {
        bool created;           /* it was missing and was made (dry run: would be) */
        bool changed;           /* created, or its owner or mode set (dry run: to be set) */
        uid_t uid;              /* when it was there: the owner, group and mode it had */
        gid_t gid;
        mode_t mode;            /* the 07777 bits */
};

/*
 * Makes dirfd/name a directory owned by uid:gid with mode, never following a
 * symlink: created owned by root with no access for anyone else (the owner
 * bits of mode when uid is not root, none when it is), then fchown, then
 * fchmod where the mode still differs; an existing directory gets owner and
 * mode re-asserted through its fd.  found (may be NULL) tells what was there
 * and what was done.  Returns the directory fd, 0 with SLOTS_ENSURE_NO_FD
 * (never an fd), or -errno (-ENOTDIR when name exists and is not a directory,
 * -ELOOP for a symlink).  With SLOTS_ENSURE_DRY_RUN nothing is changed, and
 * the return is -ENOENT when the directory does not exist (found->created set).
 */
int slots_ensure_dir(int dirfd, const char *name, uid_t uid, gid_t gid, mode_t mode, unsigned flags,
                     struct slots_dir_found *found);

/* Closes fd when it is >= 0, keeping errno; for cleanup paths. */
void slots_close(int fd);

/* fsync of a directory fd, ignoring EINVAL from file systems that cannot. */
int slots_fsync_dir(int dirfd);
