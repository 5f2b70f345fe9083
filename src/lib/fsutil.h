/* fd-based file handling: resolve inside a root, open without following, check what was opened. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <sys/stat.h>
#include <sys/types.h>

/*
 * Opens the host root ("/") or an image root (--root DIR) as a directory fd for
 * slots_open_in(). Returns an fd or -errno.
 */
int slots_root_open(const char *dir);

/*
 * Opens absolute path resolved inside rootfd: symlinks and ".." never leave
 * rootfd (openat2 RESOLVE_IN_ROOT).  flags as for openat (O_CLOEXEC is added).
 * Returns an fd or -errno.
 */
int slots_open_in(int rootfd, const char *path, int flags);

/*
 * The same resolution as slots_open_in() done one component at a time with
 * O_NOFOLLOW and symlinks resolved by hand; slots_open_in() falls back to it
 * where openat2 is missing (old kernels, valgrind).  Exposed for tests.
 */
int slots_open_in_walk(int rootfd, const char *path, int flags);

/*
 * Opens the directory that holds absolute path inside rootfd and points *base at
 * the last component of path.  Returns a directory fd or -errno (-EINVAL for a
 * path without a last component).
 */
int slots_open_parent_in(int rootfd, const char *path, const char **base);

/*
 * Opens name in dirfd for reading without following a symlink and without
 * blocking on a FIFO, and checks it is a regular file (-ELOOP for a symlink,
 * -EINVAL for anything else but a regular file).  Fills *st.  Returns fd or -errno.
 */
int slots_open_regular(int dirfd, const char *name, struct stat *st);

/* Reads all of fd (at most max bytes, -EFBIG beyond).  *buf is NUL-terminated. */
int slots_read_all(int fd, size_t max, char **buf, size_t *len);

/* Writes all of buf, retrying short writes and EINTR.  Returns 0 or -errno. */
int slots_write_all(int fd, const void *buf, size_t len);

/*
 * Makes dirfd/name a directory owned by uid:gid with mode, never following a
 * symlink: created with mode 0, then fchown, then fchmod; an existing directory
 * gets owner and mode re-asserted through its fd.  *changed tells whether
 * anything was created or changed (may be NULL).  With dry_run nothing is
 * changed, *changed says what would be, and the return is -ENOENT when the
 * directory does not exist (no fd).  Returns the directory fd or -errno
 * (-ENOTDIR when name exists and is not a directory, -ELOOP for a symlink).
 */
int slots_ensure_dir(int dirfd, const char *name, uid_t uid, gid_t gid, mode_t mode, bool dry_run,
                     bool *changed);

/* Closes fd when it is >= 0, keeping errno; for cleanup paths. */
void slots_close(int fd);

/* fsync of a directory fd, ignoring EINVAL from file systems that cannot. */
int slots_fsync_dir(int dirfd);
