/* Owner-preserving atomic replace of a file: temp, fchown, fchmod, ACL, fsync, renameat, fsync dir. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "error.h"

/* Owner and mode for a file that does not exist yet. */
struct slots_file_mode {
        uid_t uid;
        gid_t gid;
        mode_t mode;
};

enum {
        SLOTS_REPLACE_BACKUP = 1 << 0,  /* keep the old content as "<name>-", same owner and mode */
        SLOTS_REPLACE_FORCE_MODE = 1 << 1, /* apply def even when the file exists (repair) */
        /*
         * No fsync of the file or its folder: for a file whose readers detect a torn or
         * lost copy themselves and fall back (the table's index).
         */
        SLOTS_REPLACE_NO_SYNC = 1 << 2,
};

/* A replacement written and synced but not yet renamed into place. */
struct slots_staged {
        int dirfd;                      /* borrowed */
        char name[256];
        char tmp[300];
        char backup_tmp[300];           /* empty without a backup */
        bool sync;                      /* fsync the file and the folder (not SLOTS_REPLACE_NO_SYNC) */
        char display[4096];             /* path for errors */
};

/*
 * Takes an exclusive flock on dirfd/lockname (created 0600 root if missing,
 * opened O_NOFOLLOW; must be a regular file).  Returns the lock fd or -errno.
 * The lock is released by closing the fd.
 */
int slots_lock_take(int dirfd, const char *lockname, const char *display, struct slots_error *e);

/*
 * Writes data into a new temp file next to dirfd/name that has the owner, group,
 * mode and POSIX ACL of the existing file (or def when there is none), and
 * fsyncs it.  Nothing visible changes yet.  On failure the temp is removed.
 */
int slots_replace_stage(int dirfd, const char *name, const char *display, const void *data,
                        size_t len, const struct slots_file_mode *def, unsigned flags,
                        struct slots_staged *st, struct slots_error *e);

/* Renames a staged file (and its backup first) into place and fsyncs the directory. */
int slots_replace_commit(struct slots_staged *st, struct slots_error *e);

/*
 * Writes a file's content into fd (a new temp file): 0 or -errno.  For content
 * made while it is written (the table's dump), so it is never all in memory.
 */
typedef int slots_writer_fn(int fd, void *arg);

/* slots_replace_stage with the content written by write(fd, arg). */
int slots_replace_stage_with(int dirfd, const char *name, const char *display, slots_writer_fn *write,
                             void *arg, const struct slots_file_mode *def, unsigned flags,
                             struct slots_staged *st, struct slots_error *e);

/* Removes a staged temp (and backup temp); safe to call twice. */
void slots_replace_abort(struct slots_staged *st);

/* stage + commit. */
int slots_replace(int dirfd, const char *name, const char *display, const void *data, size_t len,
                  const struct slots_file_mode *def, unsigned flags, struct slots_error *e);

/* stage + commit, the content written by write(fd, arg). */
int slots_replace_with(int dirfd, const char *name, const char *display, slots_writer_fn *write, void *arg,
                       const struct slots_file_mode *def, unsigned flags, struct slots_error *e);

/*
 * Removes the temps a writer killed before its rename left next to dirfd/name:
 * regular files named ".<name>.XXXXXXXXXXXX" or ".<name>-.XXXXXXXXXXXX" (12 hex
 * digits, the pattern slots_replace_stage uses for the file and its backup) last
 * changed before this call.  Call it with the file's lock held: every writer
 * makes its temps under that lock, so none of them belongs to a live writer.
 * Never follows a symlink.  Returns how many were removed, or -errno.
 */
int slots_replace_clean_stale(int dirfd, const char *name);
