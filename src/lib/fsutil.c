/* fd-based file handling: resolve inside a root, open without following, check what was opened, read it. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "acl.h"
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

/* ---- the resolver ---- */

#define CHASE_MAX_LINKS 40

/* The way so far: one O_PATH fd per folder, and the path it spells with symlinks replaced. */
struct chase_state {
        const struct slots_chase *how;
        struct slots_error *e;
        int *fds;               /* -1 where closed: only the root and the deepest stay open */
        size_t *lens;           /* length of path at each level */
        dev_t *devs;
        ino_t *inos;
        size_t n, cap;
        char *path;             /* "" for the root itself */
        size_t plen, pcap;
};

static const char *shown(const struct chase_state *c)
{
        return c->path[0] ? c->path : "/";
}

static int path_append(struct chase_state *c, const char *name)
{
        size_t n = strlen(name);

        if (c->plen + n + 2 > c->pcap) {
                size_t cap = (c->plen + n + 2) * 2;
                char *p = realloc(c->path, cap);

                if (!p)
                        return -ENOMEM;
                c->path = p;
                c->pcap = cap;
        }
        c->path[c->plen++] = '/';
        memcpy(c->path + c->plen, name, n + 1);
        c->plen += n;
        return 0;
}

static void path_cut(struct chase_state *c, size_t len)
{
        c->plen = len;
        c->path[len] = '\0';
}

static const char *what_of(const struct chase_state *c)
{
        return c->how->what ? c->how->what : "the path";
}

/* "docs_root: " before a reason, or nothing when the caller named no config key. */
static const char *what_colon(const struct chase_state *c, char *buf, size_t size)
{
        snprintf(buf, size, "%.200s%s", c->how->what ? c->how->what : "", c->how->what ? ": " : "");
        return buf;
}

/* Who may own or write a component: "root" or "root or the service". */
static const char *trusted_who(const struct chase_state *c)
{
        return c->how->trusted_uid == (uid_t) -1 ? "root" : "root or the service";
}

/*
 * The ACL's named writers: an ACL_USER or ACL_GROUP entry that grants write,
 * and that the mask lets through, to anyone but root or the trusted account
 * is a writer the mode bits do not show.  Only read when the mode's group
 * bits (the mask, when there is an ACL) allow write at all.
 */
static int check_acl(struct chase_state *c, int fd, const struct stat *st)
{
        const struct slots_chase *h = c->how;
        struct slots_acl acl;
        char w[256];
        int r;

        r = slots_acl_get(fd, SLOTS_ACL_ACCESS, &acl);
        if (r == -ENOMEM)
                return r;
        if (r < 0) {
                /* Fail closed: a writer may hide in an ACL that cannot be read. */
                r = slots_error_set(c->e, r, shown(c), "%sgroup-writable (mode %04o) and its ACL cannot be read: %s",
                                    what_colon(c, w, sizeof(w)), (unsigned) (st->st_mode & 07777),
                                    r == -EBADMSG ? "unknown format" : strerror(-r));
                slots_error_fix(c->e, "chmod g-w %s, or mount /proc so the ACL can be read", shown(c));
                return r;
        }
        r = 0;
        for (size_t i = 0; i < acl.n && r == 0; i++) {
                const struct slots_acl_entry *a = &acl.entries[i];
                bool user = a->tag == SLOTS_ACL_USER;

                if (!slots_acl_named_writer(&acl, i) || a->id == 0)
                        continue;
                if (user && h->trusted_uid != (uid_t) -1 && a->id == h->trusted_uid)
                        continue;
                if (!user && h->trusted_gid != (gid_t) -1 && a->id == h->trusted_gid)
                        continue;
                r = slots_error_set(c->e, -EPERM, shown(c),
                                    "%sits ACL lets %s %u write (%s:%u:%s%s%s), not %s: whoever can write a "
                                    "folder on the way can swap what is below it", what_colon(c, w, sizeof(w)),
                                    user ? "user" : "group", (unsigned) a->id, user ? "user" : "group",
                                    (unsigned) a->id, a->perm & 04 ? "r" : "-", "w", a->perm & 01 ? "x" : "-",
                                    trusted_who(c));
                slots_error_fix(c->e, "setfacl -x %s:%u %s", user ? "u" : "g", (unsigned) a->id, shown(c));
        }
        slots_acl_free(&acl);
        return r;
}

/* sshd StrictModes for one component: owned by root or the trusted account, writable by nobody else. */
static int check_trusted(struct chase_state *c, int fd, const struct stat *st)
{
        const struct slots_chase *h = c->how;
        bool root_sticky = S_ISDIR(st->st_mode) && (st->st_mode & S_ISVTX) && st->st_uid == 0;
        mode_t mode = st->st_mode & 07777;

        char w[256];

        if (st->st_uid != 0 && (h->trusted_uid == (uid_t) -1 || st->st_uid != h->trusted_uid)) {
                slots_error_set(c->e, -EPERM, shown(c),
                                "%sowned by uid %u, not by %s: whoever owns a folder on the way can swap what "
                                "is below it", what_colon(c, w, sizeof(w)), (unsigned) st->st_uid, trusted_who(c));
                if (h->what)
                        slots_error_fix(c->e, "chown root %s%s, or point \"%s\" at a path that only %s %s",
                                        shown(c), h->trusted_uid == (uid_t) -1 ? "" : " (or the service account)",
                                        h->what, trusted_who(c), h->trusted_uid == (uid_t) -1 ? "controls" : "control");
                else
                        slots_error_fix(c->e, "chown root %s", shown(c));
                return -EPERM;
        }
        if ((mode & S_IWOTH) && !root_sticky) {
                slots_error_set(c->e, -EPERM, shown(c), "%swritable by others (mode %04o)",
                                what_colon(c, w, sizeof(w)), (unsigned) mode);
                slots_error_fix(c->e, "chmod o-w %s", shown(c));
                return -EPERM;
        }
        if ((mode & S_IWGRP) && !root_sticky && st->st_gid != 0 &&
            (h->trusted_gid == (gid_t) -1 || st->st_gid != h->trusted_gid)) {
                slots_error_set(c->e, -EPERM, shown(c), "%swritable by group %u (mode %04o), not %s group",
                                what_colon(c, w, sizeof(w)), (unsigned) st->st_gid, (unsigned) mode,
                                h->trusted_gid == (gid_t) -1 ? "root's" : "root's or the service's");
                slots_error_fix(c->e, "chmod g-w %s", shown(c));
                return -EPERM;
        }
        /* With an ACL the group bits are its mask: named writers can only be there when it has w. */
        if ((mode & S_IWGRP) && !root_sticky)
                return check_acl(c, fd, st);
        return 0;
}

static int step(struct chase_state *c, int fd, const struct stat *st, bool last)
{
        struct slots_chase_step s = { .path = shown(c), .fd = fd, .st = st, .last = last };
        int r;

        if ((c->how->flags & SLOTS_CHASE_TRUSTED) && (r = check_trusted(c, fd, st)) < 0)
                return r;
        return c->how->step ? c->how->step(c->how->data, &s) : 0;
}

static int chase_fail(struct chase_state *c, int r, const char *reason)
{
        slots_error_set(c->e, r, shown(c), "%s%s%s", c->how->what ? c->how->what : "",
                        c->how->what ? ": " : "", reason ? reason : strerror(-r));
        return r;
}

/*
 * Enters fd (consumed on success).  Only the root and the deepest level stay
 * open, so a path of any depth needs two descriptors; each level keeps its
 * device and inode to be found again through "..".
 */
static int level_push(struct chase_state *c, int fd)
{
        struct stat st;

        if (fstat(fd, &st) < 0)
                return chase_fail(c, -errno, NULL);
        if (c->n == c->cap) {
                size_t cap = c->cap ? c->cap * 2 : 16;
                int *fds = realloc(c->fds, cap * sizeof(*fds));
                size_t *lens;
                dev_t *devs;
                ino_t *inos;

                if (!fds)
                        return -ENOMEM;
                c->fds = fds;
                lens = realloc(c->lens, cap * sizeof(*lens));
                if (!lens)
                        return -ENOMEM;
                c->lens = lens;
                devs = realloc(c->devs, cap * sizeof(*devs));
                if (!devs)
                        return -ENOMEM;
                c->devs = devs;
                inos = realloc(c->inos, cap * sizeof(*inos));
                if (!inos)
                        return -ENOMEM;
                c->inos = inos;
                c->cap = cap;
        }
        c->fds[c->n] = fd;
        c->lens[c->n] = c->plen;
        c->devs[c->n] = st.st_dev;
        c->inos[c->n] = st.st_ino;
        c->n++;
        if (c->n >= 3) {
                slots_close(c->fds[c->n - 2]);
                c->fds[c->n - 2] = -1;
        }
        return 0;
}

/* Leaves the deepest level for its parent, opened again through ".." and checked to be the same folder. */
static int level_pop(struct chase_state *c)
{
        int r = 0;

        if (c->n >= 2 && c->fds[c->n - 2] < 0) {
                struct stat st;
                int fd = openat(c->fds[c->n - 1], "..", O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);

                if (fd < 0 || fstat(fd, &st) < 0 || st.st_dev != c->devs[c->n - 2] ||
                    st.st_ino != c->inos[c->n - 2]) {
                        slots_close(fd);
                        r = chase_fail(c, -EAGAIN, "a folder on the way was moved while the path was resolved");
                } else {
                        c->fds[c->n - 2] = fd;
                }
        }
        c->n--;
        slots_close(c->fds[c->n]);
        path_cut(c, c->lens[c->n]);
        return r;
}

/* Back to the root (an absolute symlink target): level 0 is always open. */
static void level_reset(struct chase_state *c)
{
        while (c->n > 1) {
                c->n--;
                slots_close(c->fds[c->n]);
        }
        path_cut(c, 0);
}

/* Opens the end (O_PATH fd, end_st) the way the caller asked; parent is the folder it is in. */
static int open_end(struct chase_state *c, int end, const struct stat *end_st, int parent, const char *name)
{
        int flags = c->how->open_flags, fd, fl;
        bool added_nonblock = false;
        struct stat st;

        if ((c->how->flags & SLOTS_CHASE_MUST_DIR) && !S_ISDIR(end_st->st_mode))
                return chase_fail(c, -ENOTDIR, "is not a folder");
        if ((c->how->flags & SLOTS_CHASE_MUST_REG) && !S_ISREG(end_st->st_mode))
                return chase_fail(c, -EINVAL, "is not a regular file");
        if (flags & O_PATH) {
                fd = fcntl(end, F_DUPFD_CLOEXEC, 3);
                return fd < 0 ? chase_fail(c, -errno, NULL) : fd;
        }
        if (S_ISDIR(end_st->st_mode) || !name) {
                fd = openat(end, ".", flags | O_CLOEXEC);
        } else {
                /* A FIFO swapped in after the fstat must not block the open. */
                if (!(flags & O_NONBLOCK)) {
                        flags |= O_NONBLOCK;
                        added_nonblock = true;
                }
                fd = openat(parent, name, flags | O_NOFOLLOW | O_NOCTTY | O_CLOEXEC);
        }
        if (fd < 0)
                return chase_fail(c, -errno, NULL);
        if (fstat(fd, &st) < 0) {
                fl = -errno;
                slots_close(fd);
                return chase_fail(c, fl, NULL);
        }
        if (st.st_dev != end_st->st_dev || st.st_ino != end_st->st_ino) {
                slots_close(fd);
                return chase_fail(c, -EAGAIN, "changed while it was being opened");
        }
        if (added_nonblock && ((fl = fcntl(fd, F_GETFL)) < 0 || fcntl(fd, F_SETFL, fl & ~O_NONBLOCK) < 0)) {
                fl = -errno;
                slots_close(fd);
                return chase_fail(c, fl, NULL);
        }
        return fd;
}

int slots_chase(int rootfd, const char *path, const struct slots_chase *how, const char **base,
                struct slots_error *e)
{
        struct chase_state c = { .how = how, .e = e };
        char *rest = NULL, *p, *last_name = NULL;
        int links = 0, r, fd = -1;
        struct stat st;

        if (!path || path[0] != '/')
                return slots_error_set(e, -EINVAL, path ? path : "", "%s: not an absolute path",
                                       how->what ? how->what : "the path");
        if (how->flags & SLOTS_CHASE_PARENT) {
                /* The parent with the caller's checks, as a folder; the end is left to the caller. */
                struct slots_chase h = *how;
                const char *slash = strrchr(path, '/');
                char *dir;

                if (slash[1] == '\0' || strcmp(slash + 1, ".") == 0 || strcmp(slash + 1, "..") == 0)
                        return slots_error_set(e, -EINVAL, path, "names no file");
                dir = slash == path ? strdup("/") : strndup(path, (size_t) (slash - path));
                if (!dir)
                        return -ENOMEM;
                h.flags = (how->flags & ~(unsigned) (SLOTS_CHASE_PARENT | SLOTS_CHASE_MUST_REG)) |
                          SLOTS_CHASE_MUST_DIR;
                r = slots_chase(rootfd, dir, &h, NULL, e);
                free(dir);
                if (r >= 0 && base)
                        *base = slash + 1;
                return r;
        }
        c.pcap = strlen(path) + 64;
        c.path = malloc(c.pcap);
        rest = strdup(path);
        if (!c.path || !rest) {
                r = -ENOMEM;
                goto out;
        }
        path_cut(&c, 0);
        fd = rootfd == AT_FDCWD ? open("/", O_PATH | O_DIRECTORY | O_CLOEXEC)
                                : openat(rootfd, ".", O_PATH | O_DIRECTORY | O_CLOEXEC);
        if (fd < 0 || fstat(fd, &st) < 0) {
                r = chase_fail(&c, -errno, NULL);
                goto out;
        }
        r = level_push(&c, fd);
        if (r < 0)
                goto out;
        fd = -1;
        /* The root itself is a component too: its owner counts. */
        r = step(&c, c.fds[0], &st, false);
        if (r < 0)
                goto out;
        p = rest;
        for (;;) {
                size_t len;
                bool last;

                while (*p == '/')
                        p++;
                len = strcspn(p, "/");
                last = p[len + strspn(p + len, "/")] == '\0';
                if (len == 0 || (len == 1 && p[0] == '.') || (len == 2 && p[0] == '.' && p[1] == '.')) {
                        if (len == 2 && c.n > 1 && (r = level_pop(&c)) < 0)
                                goto out;
                        p += len;
                        if (len && !last)
                                continue;
                        /* The path ends on a folder already passed: that folder is the end. */
                        free(last_name);
                        last_name = NULL;
                        if (fstat(c.fds[c.n - 1], &st) < 0) {
                                r = chase_fail(&c, -errno, NULL);
                                goto out;
                        }
                        r = step(&c, c.fds[c.n - 1], &st, true);
                        if (r >= 0)
                                r = open_end(&c, c.fds[c.n - 1], &st, -1, NULL);
                        goto out;
                }
                free(last_name);
                last_name = strndup(p, len);
                if (!last_name) {
                        r = -ENOMEM;
                        goto out;
                }
                p += len;
                r = path_append(&c, last_name);
                if (r < 0)
                        goto out;
                fd = openat(c.fds[c.n - 1], last_name, O_PATH | O_NOFOLLOW | O_CLOEXEC);
                if (fd < 0 || fstat(fd, &st) < 0) {
                        r = chase_fail(&c, -errno, errno == ENOENT ? "does not exist" : NULL);
                        goto out;
                }
                if (S_ISLNK(st.st_mode)) {
                        char target[PATH_MAX], *joined;
                        ssize_t n = readlinkat(fd, "", target, sizeof(target) - 1);

                        if (n < 0) {
                                r = chase_fail(&c, -errno, NULL);
                                goto out;
                        }
                        target[n] = '\0';
                        if (how->flags & SLOTS_CHASE_NO_SYMLINKS) {
                                char w[256];

                                r = slots_error_set(e, -ELOOP, shown(&c),
                                                    "%sis a symbolic link (to %s), and %s is never reached "
                                                    "through one", what_colon(&c, w, sizeof(w)), target, what_of(&c));
                                if (how->what)
                                        slots_error_fix(e, "point \"%s\" at the real folder, or replace the link "
                                                        "%s with what it points at", how->what, shown(&c));
                                else
                                        slots_error_fix(e, "replace the link %s with what it points at",
                                                        shown(&c));
                                goto out;
                        }
                        /*
                         * Only a link root or the trusted account made is followed: in a
                         * root-owned sticky folder (/tmp) anyone may have made it.
                         */
                        if ((how->flags & SLOTS_CHASE_TRUSTED) && st.st_uid != 0 &&
                            (how->trusted_uid == (uid_t) -1 || st.st_uid != how->trusted_uid)) {
                                char w[256];

                                r = slots_error_set(e, -EPERM, shown(&c),
                                                    "%sis a symbolic link (to %s) owned by uid %u, not by %s",
                                                    what_colon(&c, w, sizeof(w)), target, (unsigned) st.st_uid,
                                                    trusted_who(&c));
                                slots_error_fix(e, "remove the link %s, or use the path it points at", shown(&c));
                                goto out;
                        }
                        if (++links > CHASE_MAX_LINKS) {
                                r = chase_fail(&c, -ELOOP, NULL);
                                goto out;
                        }
                        slots_close(fd);
                        fd = -1;
                        path_cut(&c, c.lens[c.n - 1]);
                        if (target[0] == '/')
                                level_reset(&c);
                        if (asprintf(&joined, "%s/%s", target, p) < 0) {
                                r = -ENOMEM;
                                goto out;
                        }
                        free(rest);
                        rest = p = joined;
                        continue;
                }
                r = step(&c, fd, &st, last);
                if (r < 0)
                        goto out;
                if (last) {
                        r = open_end(&c, fd, &st, c.fds[c.n - 1], last_name);
                        goto out;
                }
                if (!S_ISDIR(st.st_mode)) {
                        r = chase_fail(&c, -ENOTDIR, "is not a folder");
                        goto out;
                }
                r = level_push(&c, fd);
                if (r < 0)
                        goto out;
                fd = -1;
        }
out:
        slots_close(fd);
        while (c.n > 0)
                slots_close(c.fds[--c.n]);
        free(c.fds);
        free(c.lens);
        free(c.devs);
        free(c.inos);
        free(c.path);
        free(rest);
        free(last_name);
        return r;
}

int slots_open_root_dir(int rootfd, const char *path, const char *what, uid_t trusted_uid, gid_t trusted_gid,
                        struct slots_error *e)
{
        struct slots_chase how = {
                .flags = SLOTS_CHASE_NO_SYMLINKS | SLOTS_CHASE_MUST_DIR | SLOTS_CHASE_TRUSTED,
                .what = what,
                .trusted_uid = trusted_uid,
                .trusted_gid = trusted_gid,
                .open_flags = O_RDONLY | O_DIRECTORY,
        };

        return slots_chase(rootfd, path, &how, NULL, e);
}

int slots_open_in_walk(int rootfd, const char *path, int flags)
{
        return slots_open_in(rootfd, path, flags);
}

int slots_open_in(int rootfd, const char *path, int flags)
{
        struct slots_chase how = { .open_flags = flags };

        if (!path || path[0] != '/' || (flags & O_CREAT))
                return -EINVAL;
        return slots_chase(rootfd, path, &how, NULL, NULL);
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
 * left to do (issue 18: the 3n slot folders).  A root-owned one is made with no
 * access at all: a root:root 0000 folder is how a run killed before its chmod
 * is told from an admin's (provision.c's finish_dirs).
 */
static int make_dir(int dirfd, const char *name, uid_t uid, mode_t mode)
{
        return mkdirat(dirfd, name, uid != 0 ? mode & S_IRWXU : 0) == 0 ? 0 : -errno;
}

/* Why name cannot be opened as a folder: -ELOOP for a symlink, -ENOTDIR for another file, else err. */
static int not_a_dir(int dirfd, const char *name, int err)
{
        struct stat st;

        if ((err == ENOTDIR || err == ELOOP) && fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) == 0)
                return S_ISLNK(st.st_mode) ? -ELOOP : -ENOTDIR;
        return err == ENOTDIR ? -ENOTDIR : -err;
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
                return errno == ENOENT ? -ENOENT : not_a_dir(dirfd, name, errno);
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
         * (issue 18: a look before every mkdir was a tenth of provisioning's
         * system calls); one that is probably there is looked at first.  Either way
         * what is changed is changed through an fd opened without following.
         */
        if (!dry && (flags & SLOTS_ENSURE_MKDIR_FIRST)) {
                r = make_dir(dirfd, name, uid, mode);
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
                        r = make_dir(dirfd, name, uid, mode);
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
                        return not_a_dir(dirfd, name, errno);
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
