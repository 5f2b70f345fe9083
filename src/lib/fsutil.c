/* fd-based file handling: resolve inside a root, open without following, check what was opened. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/openat2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "fsutil.h"

void slots_close(int fd)
{
        int saved = errno;

        if (fd >= 0)
                (void) close(fd);
        errno = saved;
}

int slots_root_open(const char *dir)
{
        int fd = open(dir ? dir : "/", O_PATH | O_DIRECTORY | O_CLOEXEC);

        return fd < 0 ? -errno : fd;
}

#define WALK_DEPTH 128
#define WALK_LINKS 40

/*
 * What openat2(RESOLVE_IN_ROOT) does, one component at a time, for kernels (and
 * valgrind) without it: every component opened O_NOFOLLOW from its parent's fd;
 * a symlink is read and resolved by hand, an absolute target from rootfd, and
 * ".." never climbs above rootfd.
 */
int slots_open_in_walk(int rootfd, const char *path, int flags)
{
        int stack[WALK_DEPTH], depth = 0, links = 0, r;
        char *rest = strdup(path), *p;

        if (!rest)
                return -ENOMEM;
        stack[0] = openat(rootfd, ".", O_PATH | O_DIRECTORY | O_CLOEXEC);
        if (stack[0] < 0) {
                r = -errno;
                goto out;
        }
        p = rest;
        for (;;) {
                char *comp, target[PATH_MAX];
                struct stat st;
                ssize_t n;

                while (*p == '/')
                        p++;
                if (*p == '\0') {
                        r = openat(stack[depth], ".", flags | O_CLOEXEC);
                        r = r < 0 ? -errno : r;
                        goto out;
                }
                comp = p;
                p += strcspn(p, "/");
                if (*p)
                        *p++ = '\0';
                if (strcmp(comp, ".") == 0)
                        continue;
                if (strcmp(comp, "..") == 0) {
                        if (depth > 0)
                                close(stack[depth--]);
                        continue;
                }
                if (fstatat(stack[depth], comp, &st, AT_SYMLINK_NOFOLLOW) < 0) {
                        r = -errno;
                        goto out;
                }
                if (S_ISLNK(st.st_mode)) {
                        char *joined;

                        n = readlinkat(stack[depth], comp, target, sizeof(target) - 1);
                        if (n < 0 || ++links > WALK_LINKS) {
                                r = n < 0 ? -errno : -ELOOP;
                                goto out;
                        }
                        target[n] = '\0';
                        if (target[0] == '/')
                                while (depth > 0)
                                        close(stack[depth--]);
                        if (asprintf(&joined, "%s/%s", target, p) < 0) {
                                r = -ENOMEM;
                                goto out;
                        }
                        free(rest);
                        rest = p = joined;
                        continue;
                }
                while (*p == '/')
                        p++;
                if (*p == '\0') {
                        r = openat(stack[depth], comp, flags | O_NOFOLLOW | O_CLOEXEC);
                        r = r < 0 ? -errno : r;
                        goto out;
                }
                if (depth + 1 >= WALK_DEPTH) {
                        r = -ENAMETOOLONG;
                        goto out;
                }
                r = openat(stack[depth], comp, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
                if (r < 0) {
                        r = -errno;
                        goto out;
                }
                stack[++depth] = r;
        }
out:
        for (int i = 0; i <= depth; i++)
                slots_close(stack[i]);
        free(rest);
        return r;
}

int slots_open_in(int rootfd, const char *path, int flags)
{
        struct open_how how = {
                .flags = (unsigned long long) (flags | O_CLOEXEC),
                .resolve = RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS,
        };
        int fd;

        if (!path || path[0] != '/')
                return -EINVAL;
        if (rootfd == AT_FDCWD) {
                fd = open(path, flags | O_CLOEXEC);
                return fd < 0 ? -errno : fd;
        }
        /* openat2 refuses O_CREAT's mode argument when absent; we never create through here. */
        if (flags & O_CREAT)
                return -EINVAL;
        fd = (int) syscall(SYS_openat2, rootfd, path + 1, &how, sizeof(how));
        if (fd < 0 && errno == ENOSYS)
                return slots_open_in_walk(rootfd, path, flags);
        if (fd < 0 && errno == ENOENT && path[1] == '\0')
                fd = openat(rootfd, ".", flags | O_CLOEXEC);
        return fd < 0 ? -errno : fd;
}

int slots_open_parent_in(int rootfd, const char *path, const char **base)
{
        const char *slash;
        char *dir;
        int fd;

        if (!path || path[0] != '/')
                return -EINVAL;
        slash = strrchr(path, '/');
        if (slash[1] == '\0' || strcmp(slash + 1, ".") == 0 || strcmp(slash + 1, "..") == 0)
                return -EINVAL;
        dir = slash == path ? strdup("/") : strndup(path, (size_t) (slash - path));
        if (!dir)
                return -ENOMEM;
        fd = slots_open_in(rootfd, dir, O_RDONLY | O_DIRECTORY);
        free(dir);
        if (fd >= 0)
                *base = slash + 1;
        return fd;
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

int slots_ensure_dir(int dirfd, const char *name, uid_t uid, gid_t gid, mode_t mode, bool dry_run,
                     bool *changed)
{
        struct stat st;
        bool ch = false;
        int fd;

        if (changed)
                *changed = false;
        if (!dry_run) {
                /*
                 * mkdir first, EEXIST when it is there (issue 18: a stat before every
                 * mkdir was a tenth of provisioning's system calls).  Created with no
                 * access at all; owner and mode follow through the fd.  Whatever is
                 * there is opened with O_NOFOLLOW | O_DIRECTORY, which refuses a
                 * symlink or a file; only then is it looked at to tell which.
                 */
                if (mkdirat(dirfd, name, 0) == 0)
                        ch = true;
                else if (errno != EEXIST)
                        return -errno;
        } else if (fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0) {
                if (errno != ENOENT)
                        return -errno;
                if (changed)
                        *changed = true;
                return -ENOENT;
        } else if (S_ISLNK(st.st_mode)) {
                return -ELOOP;
        } else if (!S_ISDIR(st.st_mode)) {
                return -ENOTDIR;
        }

        fd = openat(dirfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (fd < 0) {
                int err = errno;

                if ((err == ENOTDIR || err == ELOOP) && fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) == 0)
                        return S_ISLNK(st.st_mode) ? -ELOOP : -ENOTDIR;
                if (ch && changed)
                        *changed = true;
                return err == ENOTDIR ? -ENOTDIR : -err;
        }
        if (fstat(fd, &st) < 0)
                goto fail;
        if (st.st_uid != uid || st.st_gid != gid) {
                ch = true;
                if (!dry_run && fchown(fd, uid, gid) < 0)
                        goto fail;
                /* chown may clear setuid and setgid (nothing else): compare and set the mode after it. */
                if (!dry_run && (st.st_mode & (S_ISUID | S_ISGID)) && fstat(fd, &st) < 0)
                        goto fail;
        }
        if ((st.st_mode & 07777) != mode) {
                ch = true;
                if (!dry_run && fchmod(fd, mode) < 0)
                        goto fail;
        }
        if (changed)
                *changed = ch;
        return fd;
fail:
        slots_close(fd);
        return -errno;
}
