/* The one path resolver: a path taken one component at a time from a root fd, each checked before the next. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "acl.h"
#include "resolve.h"

/* Closes fd when it is >= 0, keeping errno. */
static void close_keep(int fd)
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
        char *rest;             /* what is left to resolve: the caller's path, or a link's target and the rest */
        const char *p;          /* the next component in rest */
        char *name;             /* the component being resolved */
        int links;              /* symlinks followed so far */
        enum slots_chase_made made;     /* how the component being resolved came to be */
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
                                    strerror(-r));
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
                r = slots_error_refuse(c->e, -EPERM, shown(c),
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
                slots_error_refuse(c->e, -EPERM, shown(c),
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
                slots_error_refuse(c->e, -EPERM, shown(c), "%swritable by others (mode %04o)",
                                   what_colon(c, w, sizeof(w)), (unsigned) mode);
                slots_error_fix(c->e, "chmod o-w %s", shown(c));
                return -EPERM;
        }
        if ((mode & S_IWGRP) && !root_sticky && st->st_gid != 0 &&
            (h->trusted_gid == (gid_t) -1 || st->st_gid != h->trusted_gid)) {
                slots_error_refuse(c->e, -EPERM, shown(c), "%swritable by group %u (mode %04o), not %s group",
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
        struct slots_chase_step s = { .path = shown(c), .fd = fd, .st = st, .last = last, .made = c->made };
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
                close_keep(c->fds[c->n - 2]);
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
                        close_keep(fd);
                        r = chase_fail(c, -EAGAIN, "a folder on the way was moved while the path was resolved");
                } else {
                        c->fds[c->n - 2] = fd;
                }
        }
        c->n--;
        close_keep(c->fds[c->n]);
        path_cut(c, c->lens[c->n]);
        return r;
}

/* Back to the root (an absolute symlink target): level 0 is always open. */
static void level_reset(struct chase_state *c)
{
        while (c->n > 1) {
                c->n--;
                close_keep(c->fds[c->n]);
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
                close_keep(fd);
                return chase_fail(c, fl, NULL);
        }
        if (st.st_dev != end_st->st_dev || st.st_ino != end_st->st_ino) {
                close_keep(fd);
                return chase_fail(c, -EAGAIN, "changed while it was being opened");
        }
        if (added_nonblock && ((fl = fcntl(fd, F_GETFL)) < 0 || fcntl(fd, F_SETFL, fl & ~O_NONBLOCK) < 0)) {
                fl = -errno;
                close_keep(fd);
                return chase_fail(c, fl, NULL);
        }
        return fd;
}

/* SLOTS_CHASE_PARENT: the parent, with the caller's checks, as a folder; the end is left to the caller. */
static int chase_parent(int rootfd, const char *path, const struct slots_chase *how, const char **base,
                        struct slots_error *e)
{
        struct slots_chase h = *how;
        const char *slash = strrchr(path, '/');
        char *dir;
        int r;

        if (slash[1] == '\0' || strcmp(slash + 1, ".") == 0 || strcmp(slash + 1, "..") == 0)
                return slots_error_set(e, -EINVAL, path, "names no file");
        dir = slash == path ? strdup("/") : strndup(path, (size_t) (slash - path));
        if (!dir)
                return -ENOMEM;
        h.flags = (how->flags & ~(unsigned) (SLOTS_CHASE_PARENT | SLOTS_CHASE_MUST_REG)) | SLOTS_CHASE_MUST_DIR;
        r = slots_chase(rootfd, dir, &h, NULL, e);
        free(dir);
        if (r >= 0 && base)
                *base = slash + 1;
        return r;
}

/* The root opened as level 0, and checked: the root itself is a component too, its owner counts. */
static int chase_start(struct chase_state *c, int rootfd, const char *path)
{
        struct stat st;
        int fd, r;

        c->pcap = strlen(path) + 64;
        c->path = malloc(c->pcap);
        c->rest = strdup(path);
        if (!c->path || !c->rest)
                return -ENOMEM;
        c->p = c->rest;
        path_cut(c, 0);
        fd = rootfd == AT_FDCWD ? open("/", O_PATH | O_DIRECTORY | O_CLOEXEC)
                                : openat(rootfd, ".", O_PATH | O_DIRECTORY | O_CLOEXEC);
        if (fd < 0 || fstat(fd, &st) < 0) {
                r = chase_fail(c, -errno, NULL);
                close_keep(fd);
                return r;
        }
        r = level_push(c, fd);
        if (r < 0) {
                close_keep(fd);
                return r;
        }
        return step(c, c->fds[0], &st, false);
}

/* Why a symlink is not followed (-ELOOP, -EPERM, e set), or 0 when it may be. */
static int symlink_refused(struct chase_state *c, const struct stat *st, const char *target)
{
        const struct slots_chase *how = c->how;
        char w[256];

        if (how->flags & (SLOTS_CHASE_NO_SYMLINKS | SLOTS_CHASE_MKDIR)) {
                slots_error_refuse(c->e, -ELOOP, shown(c), "%sis a symbolic link (to %s), and %s is never reached "
                                   "through one", what_colon(c, w, sizeof(w)), target, what_of(c));
                if (how->what)
                        slots_error_fix(c->e, "point \"%s\" at the real folder, or replace the link %s with what "
                                        "it points at", how->what, shown(c));
                else
                        slots_error_fix(c->e, "replace the link %s with what it points at", shown(c));
                return -ELOOP;
        }
        /* Only a link root or the trusted account made is followed: in a root-owned sticky folder anyone may have. */
        if ((how->flags & SLOTS_CHASE_TRUSTED) && st->st_uid != 0 &&
            (how->trusted_uid == (uid_t) -1 || st->st_uid != how->trusted_uid)) {
                slots_error_refuse(c->e, -EPERM, shown(c), "%sis a symbolic link (to %s) owned by uid %u, not by %s",
                                   what_colon(c, w, sizeof(w)), target, (unsigned) st->st_uid, trusted_who(c));
                slots_error_fix(c->e, "remove the link %s, or use the path it points at", shown(c));
                return -EPERM;
        }
        if (++c->links > CHASE_MAX_LINKS)
                return chase_fail(c, -ELOOP, NULL);
        return 0;
}

/*
 * A symlink (fd, O_PATH) in place of the component: its target takes the
 * component's place in what is left to resolve, an absolute one from the root.
 */
static int chase_symlink(struct chase_state *c, int fd, const struct stat *st)
{
        char target[PATH_MAX], *joined;
        ssize_t n = readlinkat(fd, "", target, sizeof(target) - 1);
        int r;

        if (n < 0)
                return chase_fail(c, -errno, NULL);
        target[n] = '\0';
        r = symlink_refused(c, st, target);
        if (r < 0)
                return r;
        path_cut(c, c->lens[c->n - 1]);
        if (target[0] == '/')
                level_reset(c);
        if (asprintf(&joined, "%s/%s", target, c->p) < 0)
                return -ENOMEM;
        free(c->rest);
        c->rest = joined;
        c->p = joined;
        return 0;
}

/*
 * A component that names no new file: "" (the path ends), "." or "..", which
 * goes back up a level but never above the root.  At the end of the path the
 * folder reached is the end.  Returns 0 to go on, 1 with *end, or -errno.
 */
static int chase_dots(struct chase_state *c, size_t len, bool last, int *end)
{
        int fd, r;
        struct stat st;

        if (len == 2 && c->n > 1 && (r = level_pop(c)) < 0)
                return r;
        if (len && !last)
                return 0;
        fd = c->fds[c->n - 1];
        if (fstat(fd, &st) < 0)
                return chase_fail(c, -errno, NULL);
        r = step(c, fd, &st, true);
        if (r >= 0)
                r = open_end(c, fd, &st, -1, NULL);
        if (r < 0)
                return r;
        *end = r;
        return 1;
}

/*
 * A component that is not a symlink (fd, O_PATH): checked, then entered (fd
 * becomes the deepest level) or opened as the end.  Returns 0 when entered, 1
 * with *end, or -errno.
 */
static int chase_enter(struct chase_state *c, int fd, const struct stat *st, bool last, int *end)
{
        int r = step(c, fd, st, last);

        if (r < 0)
                return r;
        if (last) {
                *end = open_end(c, fd, st, c->fds[c->n - 1], c->name);
                return *end < 0 ? *end : 1;
        }
        if (!S_ISDIR(st->st_mode))
                return chase_fail(c, -ENOTDIR, "is not a folder");
        return level_push(c, fd);
}

/*
 * SLOTS_CHASE_MKDIR: the missing component made a folder (mode 0); one another made in
 * between is judged as found.  Returns its fd, or -1 with errno.
 */
static int chase_mkdir(struct chase_state *c)
{
        bool made;
        int fd = slots_dir_make(c->fds[c->n - 1], c->name, 0, NULL, NULL, &made, NULL);

        if (fd < 0) {
                errno = -fd;
                return -1;
        }
        c->made = made ? SLOTS_CHASE_MADE : SLOTS_CHASE_FOUND;
        return fd;
}

/* A folder of ours with mode 0 (made just now, or half made by a killed run): the asked owner and mode, through an fd. */
static int chase_own(struct chase_state *c, int fd, struct stat *st)
{
        const struct slots_chase *h = c->how;
        int dfd = openat(fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC), r = 0;
        char why[128];

        if (dfd < 0 || fchown(dfd, h->mkdir_uid, h->mkdir_gid) < 0 || fchmod(dfd, h->mkdir_mode) < 0 ||
            fstat(dfd, st) < 0) {
                r = -errno;
                snprintf(why, sizeof(why), "cannot give the folder its owner and mode: %s", strerror(-r));
                r = chase_fail(c, r, why);
        }
        close_keep(dfd);
        if (r == 0 && c->made == SLOTS_CHASE_FOUND)
                c->made = SLOTS_CHASE_FINISHED;
        return r;
}

/* The next component of c->p: entered, followed, or opened as the end.  Returns 0 to go on, 1 with *end, or -errno. */
static int chase_next(struct chase_state *c, int *end)
{
        const char *p = c->p + strspn(c->p, "/");
        size_t len = strcspn(p, "/");
        bool last = p[len + strspn(p + len, "/")] == '\0';
        struct stat st;
        int fd, r;

        c->p = p + len;
        if (len == 0 || (len == 1 && p[0] == '.') || (len == 2 && p[0] == '.' && p[1] == '.'))
                return chase_dots(c, len, last, end);
        free(c->name);
        c->name = strndup(p, len);
        if (!c->name || path_append(c, c->name) < 0)
                return -ENOMEM;
        c->made = SLOTS_CHASE_FOUND;
        fd = openat(c->fds[c->n - 1], c->name, O_PATH | O_NOFOLLOW | O_CLOEXEC);
        if (fd < 0 && errno == ENOENT && (c->how->flags & SLOTS_CHASE_MKDIR))
                fd = chase_mkdir(c);
        if (fd < 0 || fstat(fd, &st) < 0) {
                r = chase_fail(c, -errno, errno == ENOENT ? "does not exist" : NULL);
                close_keep(fd);
                return r;
        }
        if ((c->how->flags & SLOTS_CHASE_MKDIR) && S_ISDIR(st.st_mode) && st.st_uid == geteuid() &&
            !(st.st_mode & 07777) && (r = chase_own(c, fd, &st)) < 0) {
                close_keep(fd);
                return r;
        }
        r = S_ISLNK(st.st_mode) ? chase_symlink(c, fd, &st) : chase_enter(c, fd, &st, last, end);
        /* Entered: fd is the deepest level now. */
        if (r == 0 && !S_ISLNK(st.st_mode))
                return 0;
        close_keep(fd);
        return r;
}

int slots_chase(int rootfd, const char *path, const struct slots_chase *how, const char **base,
                struct slots_error *e)
{
        struct chase_state c = { .how = how, .e = e };
        int r, end = -1;

        if (!path || path[0] != '/')
                return slots_error_set(e, -EINVAL, path ? path : "", "%s: not an absolute path",
                                       how->what ? how->what : "the path");
        if (how->flags & SLOTS_CHASE_PARENT)
                return chase_parent(rootfd, path, how, base, e);
        for (r = chase_start(&c, rootfd, path); r == 0;)
                r = chase_next(&c, &end);
        while (c.n > 0)
                close_keep(c.fds[--c.n]);
        free(c.fds);
        free(c.lens);
        free(c.devs);
        free(c.inos);
        free(c.path);
        free(c.rest);
        free(c.name);
        return r < 0 ? r : end;
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

int slots_not_dir(int dirfd, const char *name, int err)
{
        struct stat st;

        if ((err == ENOTDIR || err == ELOOP) && fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) == 0)
                return S_ISLNK(st.st_mode) ? -ELOOP : -ENOTDIR;
        return -err;
}

int slots_dir_make(int dirfd, const char *name, mode_t mode, const struct slots_chase *how, const char *display,
                   bool *made, struct slots_error *e)
{
        struct chase_state c = { .how = how, .e = e, .path = (char *) (display ? display : name) };
        struct stat st;
        int fd, r;

        *made = mkdirat(dirfd, name, mode) == 0;
        if (!*made && errno != EEXIST)
                return -errno;
        fd = openat(dirfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
        if (fd < 0)
                return slots_not_dir(dirfd, name, errno);
        if (fstat(fd, &st) < 0) {
                r = -errno;
                close(fd);
                return r;
        }
        if (*made && st.st_uid != geteuid())
                *made = false;
        if (!*made && how && (how->flags & SLOTS_CHASE_TRUSTED) && (r = check_trusted(&c, fd, &st)) < 0) {
                close(fd);
                return r;
        }
        return fd;
}
