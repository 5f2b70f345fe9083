/* The one path resolver: a path taken one component at a time from a root fd, each checked before the next. */
#pragma once

#include <stdbool.h>
#include <sys/stat.h>
#include <sys/types.h>

#include "error.h"

/*
 * The one path resolver (in the spirit of systemd's chase()): a path is taken
 * one component at a time from a root fd, each opened O_PATH | O_NOFOLLOW from
 * its parent's fd and checked with fstat on that fd.  Flags say what is refused.
 */
enum {
        SLOTS_CHASE_NO_SYMLINKS = 1 << 0,  /* a symlink in any component is refused (-ELOOP) */
        SLOTS_CHASE_MUST_DIR = 1 << 1,     /* the end must be a directory (-ENOTDIR) */
        SLOTS_CHASE_MUST_REG = 1 << 2,     /* the end must be a regular file (-EINVAL) */
        SLOTS_CHASE_TRUSTED = 1 << 3,      /* owner chain: see struct slots_chase */
        SLOTS_CHASE_PARENT = 1 << 4,       /* open the parent of the end; *base names the end */
        SLOTS_CHASE_MKDIR = 1 << 5,        /* make what is missing: see struct slots_chase */
};

/* How a step came to be, for the step callback. */
enum slots_chase_made {
        SLOTS_CHASE_FOUND,      /* it was there */
        SLOTS_CHASE_MADE,       /* SLOTS_CHASE_MKDIR made it */
        SLOTS_CHASE_FINISHED,   /* SLOTS_CHASE_MKDIR gave owner and mode to one a killed run left half made */
};

/* One step of a resolution, for callers that record the way (the self-check). */
struct slots_chase_step {
        const char *path;       /* the path resolved so far, symlinks replaced */
        int fd;                 /* O_PATH fd of this component */
        const struct stat *st;
        int last;               /* this is the end of the path */
        enum slots_chase_made made;
};

struct slots_chase {
        unsigned flags;
        /*
         * Used in refusals: "docs_root" names the config key the path came from (NULL:
         * "the path").
         */
        const char *what;
        /*
         * SLOTS_CHASE_TRUSTED, like sshd's StrictModes: every component (the end too) is
         * owned by root or trusted_uid, and writable by nobody else: no write for
         * others, group write only for group 0 or trusted_gid.  A root-owned sticky
         * folder (/tmp) may be writable by all: nobody can rename what is in it.
         * Writers in a POSIX ACL count too: an ACL_USER or ACL_GROUP entry with
         * write that the mask lets through, for anyone but root and the trusted
         * account, is refused like group or other write.  Without
         * SLOTS_CHASE_NO_SYMLINKS a symlink is followed only when root or
         * trusted_uid owns it.  (uid_t) -1 / (gid_t) -1: root only.
         */
        uid_t trusted_uid;
        gid_t trusted_gid;
        /*
         * SLOTS_CHASE_MKDIR (systemd's CHASE_MKDIR_0755): a missing component is made a folder
         * (slots_dir_make(): mode 0, nobody may use it yet), then given mkdir_uid:mkdir_gid and
         * mkdir_mode through an fd, then checked like any other (TRUSTED: its owner must be
         * trusted).  A folder of this euid with mode 0 is one a run killed before its chmod left:
         * it is given the same.  Never through a symlink: it implies SLOTS_CHASE_NO_SYMLINKS.
         * Something else in the way (a file, a FIFO) is -ENOTDIR, as without the flag.
         */
        uid_t mkdir_uid;
        gid_t mkdir_gid;
        mode_t mkdir_mode;
        int open_flags;         /* how the end is opened, as for openat (O_CLOEXEC added); O_PATH too */
        /* Called for every component passed and for the end; a negative return stops. */
        int (*step)(void *data, const struct slots_chase_step *s);
        void *data;
};

/*
 * Resolves absolute path inside rootfd (AT_FDCWD: "/").  Without
 * SLOTS_CHASE_NO_SYMLINKS a symlink is read and followed by hand, an absolute
 * target from rootfd, and ".." never climbs above rootfd.  Returns the end's fd
 * (with SLOTS_CHASE_PARENT the parent's, and *base points into path) or
 * -errno; e (may be NULL) names the component that failed and the fix.
 */
int slots_chase(int rootfd, const char *path, const struct slots_chase *how, const char **base,
                struct slots_error *e);

/*
 * A configured root (app_root, docs_root, slots_root, the table's folder,
 * /etc/sudoers.d): a directory reached with no symlink in any component, owned
 * by root or trusted_uid all the way, writable by nobody else.  what names
 * the config key in refusals.  Returns a directory fd (O_RDONLY) or -errno.
 */
int slots_open_root_dir(int rootfd, const char *path, const char *what, uid_t trusted_uid, gid_t trusted_gid,
                        struct slots_error *e);

/*
 * Opens the host root ("/") or an image root (--root DIR) as a directory fd for
 * slots_open_in(). Returns an fd or -errno.
 */
int slots_root_open(const char *dir);

/*
 * Opens absolute path resolved inside rootfd (AT_FDCWD: "/") by slots_chase():
 * symlinks are followed but never leave rootfd, nor does "..".  flags as for
 * openat (O_CLOEXEC is added; O_CREAT is refused).  Returns an fd or -errno.
 */
int slots_open_in(int rootfd, const char *path, int flags);


/*
 * Why name in dirfd could not be opened O_DIRECTORY | O_NOFOLLOW with errno err: -ELOOP for
 * a symlink, -ENOTDIR for another kind of file, else -err.
 */
int slots_not_dir(int dirfd, const char *name, int err);

/*
 * The one place a folder is made: name in the folder open at dirfd, made with mode (0, or
 * the owner's bits of a folder that goes to another owner: nobody may use it before the
 * caller sets its owner and mode through the fd), then opened O_NOFOLLOW | O_DIRECTORY from
 * dirfd.  *made: this call made it (a folder renamed over it in between is not ours).  One
 * that was there is judged by how's owner chain as slots_chase() judges each component
 * (SLOTS_CHASE_TRUSTED: owned by root or how->trusted_uid, writable by nobody else; display
 * names it in e), so a folder a slot made on the way is refused here as the resolver refuses
 * it; how NULL: taken as it is.  Returns a directory fd or -errno: -ELOOP for a symlink,
 * -ENOTDIR for another file, -EPERM refused (e says why).
 */
int slots_dir_make(int dirfd, const char *name, mode_t mode, const struct slots_chase *how, const char *display,
                   bool *made, struct slots_error *e);

/*
 * Opens the directory that holds absolute path inside rootfd and points *base at
 * the last component of path.  Returns a directory fd or -errno (-EINVAL for a
 * path without a last component).
 */
int slots_open_parent_in(int rootfd, const char *path, const char **base);

