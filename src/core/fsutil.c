/* fd-based file handling: open without following, check what was opened, read it, make folders. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fsutil.h"
#include "resolve.h"

void slots_close(int fd)
{
        int saved = errno;

        if (fd >= 0)
                (void) close(fd);
        errno = saved;
}


int slots_open_regular(int dirfd, const char *name, struct stat *st)
{
        int fd, flags;

        /*
         * Look before opening: opening a device node can act on the device (a tape rewinds,
         * a watchdog arms), and a socket cannot be opened at all.  The fstat below still
         * decides, in case the name changed in between.
         */
        if (fstatat(dirfd, name, st, AT_SYMLINK_NOFOLLOW) < 0)
                return -errno;
        if (S_ISLNK(st->st_mode))
                return -ELOOP;
        if (!S_ISREG(st->st_mode))
                return -EINVAL;
        fd = openat(dirfd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
        if (fd < 0)
                return errno == ENXIO ? -EINVAL : -errno;
        if (fstat(fd, st) < 0)
                goto fail;
        if (!S_ISREG(st->st_mode)) {
                close(fd);
                return -EINVAL;
        }
        flags = fcntl(fd, F_GETFL);
        if (flags < 0 || fcntl(fd, F_SETFL, flags & ~O_NONBLOCK) < 0)
                goto fail;
        return fd;
fail:
        slots_close(fd);
        return -errno;
}

int slots_read_all(int fd, size_t max, char **buf, size_t *len)
{
        /* Room for max + 1 bytes: one byte more than max is what tells "too big" from "exactly max". */
        size_t size = max < 4096 ? max + 1 : 4096, n = 0;
        char *b = malloc(size + 1);

        if (!b)
                return -ENOMEM;
        for (;;) {
                ssize_t k;

                if (n == size) {
                        char *nb;
                        if (n > max) {
                                free(b);
                                return -EFBIG;
                        }
                        size = size * 2 - 1 > max ? max + 1 : size * 2;
                        nb = realloc(b, size + 1);
                        if (!nb) {
                                free(b);
                                return -ENOMEM;
                        }
                        b = nb;
                }
                k = read(fd, b + n, size - n);
                if (k < 0 && errno == EINTR)
                        continue;
                if (k < 0) {
                        int r = -errno;
                        free(b);
                        return r;
                }
                if (k == 0)
                        break;
                n += (size_t) k;
        }
        b[n] = '\0';
        *buf = b;
        *len = n;
        return 0;
}

/* "the config " before a reason, or nothing. */
static const char *subject(const struct slots_read *how, char *buf, size_t size)
{
        snprintf(buf, size, "%.200s%s", how->what ? how->what : "", how->what ? " " : "");
        return buf;
}

/* " the config" after a verb ("cannot read the config: ..."), or nothing. */
static const char *object(const struct slots_read *how, char *buf, size_t size)
{
        snprintf(buf, size, "%s%.200s", how->what ? " " : "", how->what ? how->what : "");
        return buf;
}

/* r, with e's kind a failure instead of invalid input when how says so. */
static int content_kind(const struct slots_read *how, struct slots_error *e, int r)
{
        if (how->content_fails && e)
                e->kind = SLOTS_ERR_FAILED;
        return r;
}

/* The policy, the read and the NUL check, on a regular file whose fstat is st. */
static int read_regular(int fd, const struct slots_read *how, const struct stat *st, char **text, size_t *len,
                        struct slots_error *e)
{
        char w[256];
        size_t n;
        int r;

        if (how->check && (r = how->check(st, how->data, e)) < 0)
                return r;
        r = slots_read_all(fd, how->max, text, &n);
        if (r == -EFBIG)
                return content_kind(how, e, slots_error_invalid(e, r, how->path, "%sis larger than %zu bytes",
                                                                subject(how, w, sizeof(w)), how->max));
        if (r < 0)
                return slots_error_set(e, r, how->path, "cannot read%s: %s", object(how, w, sizeof(w)),
                                       strerror(-r));
        if (memchr(*text, '\0', n)) {
                free(*text);
                *text = NULL;
                return content_kind(how, e, slots_error_invalid(e, -EBADMSG, how->path, "%scontains a NUL byte",
                                                                subject(how, w, sizeof(w))));
        }
        if (len)
                *len = n;
        return 0;
}

int slots_read_text_fd(int fd, const struct slots_read *how, struct stat *st, char **text, size_t *len,
                       struct slots_error *e)
{
        struct stat own;
        char w[256];

        if (!st)
                st = &own;
        if (fstat(fd, st) < 0)
                return slots_error_set(e, -errno, how->path, "cannot stat%s: %s", object(how, w, sizeof(w)),
                                       strerror(errno));
        if (!S_ISREG(st->st_mode))
                return slots_error_refuse(e, -EINVAL, how->path, "%sis not a regular file",
                                          subject(how, w, sizeof(w)));
        return read_regular(fd, how, st, text, len, e);
}

int slots_read_text(int dirfd, const char *name, const struct slots_read *how, struct stat *st, char **text,
                    size_t *len, struct slots_error *e)
{
        struct stat own;
        char w[256];
        int fd, r;

        if (!st)
                st = &own;
        fd = slots_open_regular(dirfd, name, st);
        if (fd == -ELOOP)
                return slots_error_refuse(e, fd, how->path, "%sis a symlink; refusing to follow it",
                                          subject(how, w, sizeof(w)));
        if (fd == -EINVAL)
                return slots_error_refuse(e, fd, how->path, "%sis not a regular file", subject(how, w, sizeof(w)));
        if (fd < 0)
                return slots_error_set(e, fd, how->path, "cannot open%s: %s", object(how, w, sizeof(w)),
                                       strerror(-fd));
        r = read_regular(fd, how, st, text, len, e);
        slots_close(fd);
        return r;
}

int slots_write_all(int fd, const void *buf, size_t len)
{
        const char *p = buf;

        while (len > 0) {
                ssize_t k = write(fd, p, len);
                if (k < 0 && errno == EINTR)
                        continue;
                if (k < 0)
                        return -errno;
                if (k == 0)
                        return -EIO;
                p += k;
                len -= (size_t) k;
        }
        return 0;
}

int slots_fsync_dir(int dirfd)
{
        if (fsync(dirfd) < 0 && errno != EINVAL)
                return -errno;
        return 0;
}

/*
 * Makes the folder, owned by root until the caller's fchown.  One that goes to
 * another owner is made with the owner bits of its mode: root's alone until the
 * chown hands them over, so nobody gains access early, and mostly no fchmod is
 * left to do for the slot folders.  A root-owned one is made with no
 * access at all: a root:root 0000 folder is how a run killed before its chmod
 * is told from an admin's (the resolver's SLOTS_CHASE_MKDIR finishes it).
 */
static int make_dir(int dirfd, const char *name, uid_t uid, mode_t mode, int *fdp, struct stat *st)
{
        bool made;
        int fd = slots_dir_make(dirfd, name, uid != 0 ? mode & S_IRWXU : 0, NULL, NULL, &made, NULL);

        if (fd < 0)
                return fd;
        if (!made || fstat(fd, st) < 0) {
                int r = made ? -errno : -EEXIST;

                slots_close(fd);
                return r;
        }
        *fdp = fd;
        return 0;
}

/*
 * Looks at what is at name without following a symlink: by name alone (fdp
 * NULL), or opened O_NOFOLLOW | O_DIRECTORY, which refuses a symlink, a file or
 * a FIFO before opening anything, and then by its fd.  0 for a folder, -ENOENT
 * for nothing there.
 */
static int look_dir(int dirfd, const char *name, int *fdp, struct stat *st)
{
        int fd;

        if (!fdp) {
                if (fstatat(dirfd, name, st, AT_SYMLINK_NOFOLLOW) < 0)
                        return -errno;
                return S_ISLNK(st->st_mode) ? -ELOOP : !S_ISDIR(st->st_mode) ? -ENOTDIR : 0;
        }
        fd = openat(dirfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (fd < 0)
                return errno == ENOENT ? -ENOENT : slots_not_dir(dirfd, name, errno);
        if (fstat(fd, st) < 0) {
                int r = -errno;

                slots_close(fd);
                return r;
        }
        *fdp = fd;
        return 0;
}

static void found_was(struct slots_dir_found *found, const struct stat *st)
{
        found->uid = st->st_uid;
        found->gid = st->st_gid;
        found->mode = st->st_mode & 07777;
}

int slots_ensure_dir(int dirfd, const char *name, uid_t uid, gid_t gid, mode_t mode, unsigned flags,
                     struct slots_dir_found *found)
{
        bool dry = flags & SLOTS_ENSURE_DRY_RUN, no_fd = flags & SLOTS_ENSURE_NO_FD;
        struct slots_dir_found none;
        struct stat st;
        int fd = -1, r;

        if (!found)
                found = &none;
        *found = (struct slots_dir_found) { .created = false };
        /*
         * A folder that is probably missing is made first, EEXIST when it is there
         * (a look before every mkdir costs a system call each); one that is
         * probably there is looked at first.  Either way
         * what is changed is changed through an fd opened without following.
         */
        if (!dry && (flags & SLOTS_ENSURE_MKDIR_FIRST)) {
                r = make_dir(dirfd, name, uid, mode, &fd, &st);
                if (r == 0)
                        found->created = found->changed = true;
                else if (r != -EEXIST)
                        return r;
        }
        if (!found->created) {
                r = look_dir(dirfd, name, no_fd ? NULL : &fd, &st);
                if (r == -ENOENT) {
                        found->created = found->changed = true;
                        if (dry)
                                return -ENOENT;
                        r = make_dir(dirfd, name, uid, mode, &fd, &st);
                        if (r < 0)
                                return r;
                } else if (r < 0) {
                        return r;
                } else {
                        bool right = st.st_uid == uid && st.st_gid == gid && (st.st_mode & 07777) == mode;

                        found_was(found, &st);
                        /* Looked at by name: nothing to change, or (dry run) nothing changed. */
                        if (fd < 0 && (right || dry)) {
                                found->changed = !right;
                                return 0;
                        }
                }
        }
        if (fd < 0) {
                fd = openat(dirfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
                if (fd < 0)
                        return slots_not_dir(dirfd, name, errno);
                if (fstat(fd, &st) < 0)
                        goto fail;
                /* What the fd shows decides, and is what was there before. */
                if (!found->created)
                        found_was(found, &st);
        }
        if (st.st_uid != uid || st.st_gid != gid) {
                found->changed = true;
                if (!dry && fchown(fd, uid, gid) < 0)
                        goto fail;
                /* chown may clear setuid and setgid (nothing else): compare and set the mode after it. */
                if (!dry && (st.st_mode & (S_ISUID | S_ISGID)) && fstat(fd, &st) < 0)
                        goto fail;
        }
        if ((st.st_mode & 07777) != mode) {
                found->changed = true;
                if (!dry && fchmod(fd, mode) < 0)
                        goto fail;
        }
        if (no_fd) {
                slots_close(fd);
                return 0;
        }
        return fd;
fail:
        slots_close(fd);
        return -errno;
}
