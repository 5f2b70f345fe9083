/* The one directory walker: every tree walk of the project, its depth rule and its rule for what it cannot read. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "fsutil.h"
#include "strbuf.h"
#include "walk.h"

/* A directory entry read ahead when its folder had to be closed. */
struct ent {
        char *name;
};

/*
 * One level of the walk.  d is NULL while the level is closed: what it had
 * left to read is in ents (ahead), and sx tells it again when it is opened
 * through "..".  len is the path length to restore when it is left.
 */
struct frame {
        DIR *d;
        size_t len;
        char *name;             /* its name in the level above; NULL for the root */
        struct statx sx;
        unsigned depth;
        bool ahead;
        struct ent *ents;
        size_t nents, next;
};

struct walker {
        const struct slots_walk *how;
        unsigned open_max;
        struct slots_first first;
        uint32_t dev_major, dev_minor;  /* the root's file system, for SLOTS_WALK_ONE_FS */
        uint64_t mnt_id;                /* and its mount, where statx tells it (0: it does not) */
        struct strbuf path;             /* the entry being looked at, for messages */
        size_t root_len;
        struct frame *f;                /* the levels; [lo, n) are open */
        size_t n, cap_f, lo;
};

static bool is_dot(const char *name)
{
        return name[0] == '.' && (name[1] == '\0' || (name[1] == '.' && name[2] == '\0'));
}

void slots_walk_shown(const char *path, size_t root_len, char *buf, size_t size)
{
        size_t len = strlen(path), head = root_len < size / 2 ? root_len : size / 2, tail = size - head - 6;

        if (len < size)
                snprintf(buf, size, "%s", path);
        else
                snprintf(buf, size, "%.*s/...%s", (int) head, path, path + len - tail);
}

/* Records a failure of the walk at the current path (the first is kept). */
static int fail(struct walker *w, int r, const char *what, const char *fix)
{
        struct slots_error sub;
        char shown[SLOTS_ERR_TEXT];

        if (w->first.r < 0)
                return r;
        slots_walk_shown(w->path.s, w->root_len, shown, sizeof(shown));
        slots_error_clear(&sub);
        slots_error_set(&sub, r, shown, "%s: %s", what, strerror(-r));
        if (fix)
                slots_error_fix(&sub, "%s", fix);
        slots_first_keep(&w->first, r, &sub);
        return r;
}

static bool same_inode(const struct stat *st, const struct statx *sx)
{
        return st->st_ino == sx->stx_ino && (st->st_mode & S_IFMT) == (sx->stx_mode & S_IFMT) &&
               (uint32_t) major(st->st_dev) == sx->stx_dev_major && (uint32_t) minor(st->st_dev) == sx->stx_dev_minor;
}

/*
 * On the root's mount and not a mount point (a bind mount keeps st_dev but is a mount root).  The
 * mount id decides where statx gives it: an overlay's files show the device of the layer they
 * come from, yet belong to the overlay's mount.
 */
static bool other_fs(const struct walker *w, const struct statx *sx)
{
        if (!(w->how->flags & SLOTS_WALK_ONE_FS))
                return false;
        if (w->mnt_id && (sx->stx_mask & STATX_MNT_ID)) {
                if (sx->stx_mnt_id != w->mnt_id)
                        return true;
        } else if (sx->stx_dev_major != w->dev_major || sx->stx_dev_minor != w->dev_minor)
                return true;
        return (sx->stx_attributes_mask & STATX_ATTR_MOUNT_ROOT) && (sx->stx_attributes & STATX_ATTR_MOUNT_ROOT);
}

/* Calls the visitor; its failure is kept as the walk's (unless it is -EAGAIN, for the caller to retry). */
static int call(struct walker *w, enum slots_walk_event ev, const struct slots_walk_entry *en)
{
        struct slots_error sub;
        int r;

        slots_error_clear(&sub);
        r = w->how->visit(w->how->data, ev, en, &sub);
        if (r < 0 && !(r == -EAGAIN && !en->last_try))
                slots_first_keep(&w->first, r, &sub);
        return r;
}

/* ---- the levels: any depth, at most open_max folders open ---- */

static void frame_free(struct frame *f)
{
        if (f->d)
                closedir(f->d);
        /* The names handed out are the level's until it is left. */
        for (size_t i = 0; i < f->nents; i++)
                free(f->ents[i].name);
        free(f->ents);
        free(f->name);
        memset(f, 0, sizeof(*f));
}

/* Reads what is left of an open level into memory and closes it. */
static int frame_close_ahead(struct walker *w, struct frame *f)
{
        size_t cap = f->nents;

        /* Read ahead before and opened again: all it has left is in ents already. */
        while (!f->ahead) {
                struct dirent *de;

                errno = 0;
                de = readdir(f->d);
                if (!de) {
                        if (errno)
                                return fail(w, -errno, "cannot read the folder", NULL);
                        f->ahead = true;
                        break;
                }
                if (is_dot(de->d_name))
                        continue;
                if (f->nents == cap) {
                        struct ent *e = realloc(f->ents, (cap ? cap * 2 : 16) * sizeof(*e));

                        if (!e)
                                return -ENOMEM;
                        f->ents = e;
                        cap = cap ? cap * 2 : 16;
                }
                f->ents[f->nents].name = strdup(de->d_name);
                if (!f->ents[f->nents].name)
                        return -ENOMEM;
                f->nents++;
        }
        closedir(f->d);
        f->d = NULL;
        return 0;
}

/*
 * Enters the folder fd (consumed), whose entry is sx, named name one level up
 * (NULL: the root); len is the path's length without it.
 */
static int push(struct walker *w, int fd, const char *name, const struct statx *sx, unsigned depth, size_t len)
{
        struct frame *f;
        DIR *d;

        if (w->n == w->cap_f) {
                size_t c = w->cap_f ? w->cap_f * 2 : 16;

                f = realloc(w->f, c * sizeof(*f));
                if (!f) {
                        close(fd);
                        return -ENOMEM;
                }
                w->f = f;
                w->cap_f = c;
        }
        d = fdopendir(fd);
        if (!d) {
                int r = -errno;

                close(fd);
                return fail(w, r, "cannot read the folder", NULL);
        }
        f = &w->f[w->n];
        *f = (struct frame) { .d = d, .len = len, .sx = *sx, .depth = depth };
        if (name && !(f->name = strdup(name))) {
                closedir(d);
                f->d = NULL;
                return -ENOMEM;
        }
        w->n++;
        /* Too many open: the shallowest open level is read ahead and closed. */
        if (w->n - w->lo > w->open_max) {
                int r = frame_close_ahead(w, &w->f[w->lo]);

                if (r < 0)
                        return r;
                w->lo++;
        }
        return 0;
}

/* The next entry of the deepest level: 1 with *name set, 0 at its end, or -errno (kept). */
static int next(struct walker *w, const char **name)
{
        struct frame *f = &w->f[w->n - 1];
        struct dirent *de;

        if (f->ahead) {
                if (f->next >= f->nents)
                        return 0;
                *name = f->ents[f->next++].name;
                return 1;
        }
        do {
                errno = 0;
                de = readdir(f->d);
                if (!de)
                        return errno ? fail(w, -errno, "cannot read the folder; what was left of it was not walked",
                                            NULL)
                                     : 0;
        } while (is_dot(de->d_name));
        *name = de->d_name;
        return 1;
}

/* Opens the closed level above the deepest through ".." and checks it is the folder it was. */
static int reopen_parent(struct walker *w)
{
        struct frame *f = &w->f[w->n - 1], *p = &w->f[w->n - 2];
        struct stat s;
        int fd, r;

        fd = openat(dirfd(f->d), "..", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (fd < 0 || fstat(fd, &s) < 0) {
                r = -errno;
                slots_close(fd);
                strbuf_truncate(&w->path, f->len);
                return fail(w, r, "cannot open the folder above again; what was left of it was not walked",
                            "run the same command again");
        }
        if (!same_inode(&s, &p->sx)) {
                close(fd);
                strbuf_truncate(&w->path, f->len);
                return fail(w, -ESTALE, "the folder was moved during the walk; what was left of it was not walked",
                            "run the same command again");
        }
        p->d = fdopendir(fd);
        if (!p->d) {
                r = -errno;
                close(fd);
                strbuf_truncate(&w->path, f->len);
                return fail(w, r, "cannot read the folder", NULL);
        }
        w->lo = w->n - 2;
        return 0;
}

/* Leaves the deepest level: the level above opened again if it was closed, then LEAVE. */
static int pop(struct walker *w)
{
        struct frame *f = &w->f[w->n - 1];
        int r = 0;

        if (w->n >= 2 && !w->f[w->n - 2].d)
                r = reopen_parent(w);
        if (r == 0 && (w->how->flags & SLOTS_WALK_POST)) {
                struct slots_walk_entry en = {
                        .parent_fd = w->n >= 2 ? dirfd(w->f[w->n - 2].d) : -1,
                        .name = f->name,
                        .fd = dirfd(f->d),
                        .sx = &f->sx,
                        .depth = f->depth,
                        .path = w->path.s,
                        .root_len = w->root_len,
                        .last_try = true,
                };

                (void) call(w, SLOTS_WALK_LEAVE, &en);
        }
        strbuf_truncate(&w->path, f->len);
        frame_free(f);
        w->n--;
        if (w->lo > w->n)
                w->lo = w->n;
        return r;
}

/* ---- one entry ---- */

/* Opens the folder name in dfd and checks it is the one looked at: fd, -ENOENT when gone, -EAGAIN, -errno. */
static int open_dir(struct walker *w, int dfd, const char *name, const struct statx *sx)
{
        struct stat st;
        int fd = openat(dfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);

        if (fd < 0) {
                if (errno == ENOENT)
                        return -ENOENT;
                if (errno == ELOOP || errno == ENOTDIR)
                        return -EAGAIN;
                return fail(w, -errno, "cannot open the folder; what it holds was not walked", NULL);
        }
        if (fstat(fd, &st) < 0) {
                int r = -errno;

                close(fd);
                return fail(w, r, "cannot stat", NULL);
        }
        if (!same_inode(&st, sx)) {
                close(fd);
                return -EAGAIN;
        }
        return fd;
}

/* A folder that kept changing: a failure, unless the visitor leaves it alone on purpose. */
static int changing(struct walker *w, int dfd, const char *name, unsigned depth)
{
        struct statx sx = { 0 };
        struct slots_walk_entry en = { .parent_fd = dfd, .name = name, .fd = -1, .sx = &sx, .depth = depth,
                                       .path = w->path.s, .root_len = w->root_len, .last_try = true };
        struct slots_error sub;

        slots_error_clear(&sub);
        if (w->how->visit(w->how->data, SLOTS_WALK_CHANGING, &en, &sub) == SLOTS_WALK_SKIP)
                return 0;
        return fail(w, -EAGAIN, "the entry kept changing during the walk", "run the same command again");
}

/*
 * Looks at the entry name of the deepest level (w->path.s names it) and shows it
 * to the visitor; a folder to enter is pushed.  An entry replaced between the
 * look and the open is looked at again, a few times.
 */
static int look(struct walker *w, const char *name, size_t len)
{
        struct frame *top = &w->f[w->n - 1];
        int dfd = dirfd(top->d);

        for (int tries = 0; tries < 3; tries++) {
                struct slots_walk_entry en = { .parent_fd = dfd, .name = name, .fd = -1, .depth = top->depth + 1,
                                               .path = w->path.s, .root_len = w->root_len, .last_try = tries == 2 };
                struct statx sx;
                int r;

                if (statx(dfd, name, AT_SYMLINK_NOFOLLOW | AT_NO_AUTOMOUNT, SLOTS_WALK_STATX, &sx) < 0)
                        return errno == ENOENT ? 0 : fail(w, -errno, "cannot stat", NULL);
                en.sx = &sx;
                en.other_fs = other_fs(w, &sx);
                if (!S_ISDIR(sx.stx_mode) || en.other_fs) {
                        r = call(w, SLOTS_WALK_ENTRY, &en);
                        if (r == -EAGAIN && !en.last_try)
                                continue;
                        return r;
                }
                r = open_dir(w, dfd, name, &sx);
                if (r == -EAGAIN)
                        continue;
                if (r == -ENOENT)
                        return 0;
                if (r < 0)
                        return r;
                en.fd = r;
                r = call(w, SLOTS_WALK_ENTER, &en);
                if (r == -EAGAIN && !en.last_try) {
                        close(en.fd);
                        continue;
                }
                if (r != 0) {
                        close(en.fd);
                        return r == SLOTS_WALK_SKIP ? 0 : r;
                }
                return push(w, en.fd, name, &sx, en.depth, len);
        }
        return changing(w, dfd, name, top->depth + 1);
}

/* The root: looked at through fd, shown, and entered through a fresh open of its own. */
static int root(struct walker *w, int fd)
{
        struct slots_walk_entry en = { .parent_fd = -1, .path = w->path.s, .root_len = w->root_len, .last_try = true };
        struct statx sx;
        int dfd, r;

        dfd = openat(fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (dfd < 0)
                return fail(w, -errno, "cannot open the folder; what it holds was not walked", NULL);
        if (statx(dfd, "", AT_EMPTY_PATH, SLOTS_WALK_STATX, &sx) < 0) {
                r = fail(w, -errno, "cannot stat", NULL);
                close(dfd);
                return r;
        }
        w->dev_major = sx.stx_dev_major;
        w->dev_minor = sx.stx_dev_minor;
        w->mnt_id = sx.stx_mask & STATX_MNT_ID ? sx.stx_mnt_id : 0;
        en.fd = dfd;
        en.sx = &sx;
        r = call(w, SLOTS_WALK_ENTER, &en);
        if (r != 0) {
                close(dfd);
                return r == SLOTS_WALK_SKIP ? 0 : r;
        }
        return push(w, dfd, NULL, &sx, 0, w->path.len);
}

int slots_walk(int fd, const struct slots_walk *how, struct slots_error *e)
{
        struct walker w = { .how = how, .open_max = how->open_max ? how->open_max : SLOTS_WALK_OPEN_MAX,
                            .first = { 0, e } };
        const char *start = how->path ? how->path : ".";
        int r;

        strbuf_addf(&w.path, "%s", start);
        if (w.path.oom) {
                strbuf_free(&w.path);
                return slots_error_set(e, -ENOMEM, start, "out of memory");
        }
        w.root_len = w.path.len;
        r = root(&w, fd);
        while (r != -ENOMEM && w.n > 0) {
                const char *name = NULL;
                size_t len = w.path.len, n = w.n;

                r = next(&w, &name);
                if (r <= 0) {
                        r = pop(&w);
                        if (r < 0)
                                break;
                        continue;
                }
                r = strbuf_push_name(&w.path, name);
                if (r == 0)
                        r = look(&w, name, len);
                /* A folder entered keeps its name on the path until it is left. */
                if (w.n == n)
                        strbuf_truncate(&w.path, len);
        }
        while (w.n > 0) {
                frame_free(&w.f[w.n - 1]);
                w.n--;
        }
        free(w.f);
        strbuf_free(&w.path);
        if (r == -ENOMEM)
                return slots_error_set(e, r, start, "out of memory; the walk stopped");
        return w.first.r;
}
