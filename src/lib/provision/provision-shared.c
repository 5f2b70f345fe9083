/* The shared folders below docs_root: made, and what lies below them given the shared group. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fsutil.h"
#include "path.h"
#include "provision-int.h"
#include "walk.h"

/*
 * The mode an entry gets with the shared group.  The shared folder itself (top) gets
 * setgid and g+rwX, as the service's folder for the slots to share.  Below it nothing
 * is opened: a folder gets setgid, and an entry that leaves a slot's own group (private)
 * keeps no more for the shared group than others already had: the bits its owner gave
 * its own group were for itself alone.  chown drops the set-id bits of a file; they are
 * not put back.
 */
static mode_t share_mode(const struct stat *st, bool top, bool chgrp, bool private)
{
        bool dir = S_ISDIR(st->st_mode);
        mode_t old = st->st_mode & 07777, want = old;

        if (top)
                want |= S_ISGID | S_IRWXG;
        else if (dir)
                want |= S_ISGID;
        if (!top && chgrp && private)
                want &= ~(mode_t) S_IRWXG | (mode_t) ((old & S_IRWXO) << 3);
        if (!dir && chgrp)
                want &= ~(mode_t) (S_ISUID | S_ISGID);
        return want;
}

/* Group <prefix>shared and the mode of share_mode(); the owner and the bits of others stay. */
static void share_one(struct prov_run *x, int fd, const char *path, const struct stat *st, bool top)
{
        char b1[64], b2[64];
        bool chgrp = st->st_gid != x->shared_gid;
        mode_t old = st->st_mode & 07777, want = share_mode(st, top, chgrp, prov_slot_gid(x, st->st_gid));

        if (!chgrp && want == old)
                return;
        if (chgrp)
                prov_change(x, "share %s: group %s -> %s, mode %04o -> %04o", path,
                            prov_gid_str(x, st->st_gid, b1, sizeof(b1)), prov_gid_str(x, x->shared_gid, b2, sizeof(b2)),
                            old, want);
        else
                prov_change(x, "share %s: mode %04o -> %04o", path, old, want);
        if (x->dry)
                return;
        if ((chgrp && fchown(fd, (uid_t) -1, x->shared_gid) < 0) || fchmod(fd, want) < 0)
                FAILED(x, path, NULL, "cannot change group or mode: %s", strerror(errno));
}

/*
 * The platform's known app-private names: browser profiles and their socket
 * folders, which hold a session's cookies and a live control socket.  Matched as
 * the last components of a path below a shared folder.  slots-provision(8) lists them.
 */
static const char *const app_private[] = {
        ".agent-browser", ".chromium", ".mozilla", ".config/chromium", ".config/google-chrome",
        ".cache/ms-playwright",
};

const char *slots_shared_app_private(const struct slots_config *c, const char *path)
{
        size_t n = strlen(path);
        const char *hit = NULL;

        for (size_t i = 0; i < sizeof(app_private) / sizeof(app_private[0]) && !hit; i++) {
                size_t k = strlen(app_private[i]);

                if (n > k && path[n - k - 1] == '/' && strcmp(path + n - k, app_private[i]) == 0)
                        hit = app_private[i];
        }
        if (!hit || slots_config_is_private(c, path))
                return NULL;
        /* Named in shared_dirs: shared on purpose. */
        for (size_t i = 0; c->docs_root && i < c->n_shared_dirs; i++) {
                char *d = slots_path_join(c->docs_root, c->shared_dirs[i]);
                bool same = d && strcmp(d, path) == 0;

                free(d);
                if (same)
                        return NULL;
        }
        return hit;
}

static int find_visit(void *data, enum slots_walk_event ev, const struct slots_walk_entry *en,
                      struct slots_error *e)
{
        struct slots_app_private *a = data;
        const char *hit;

        (void) e;
        if (ev == SLOTS_WALK_LEAVE || en->depth == 0)
                return 0;
        if (en->other_fs || slots_config_is_private(a->c, en->path))
                return ev == SLOTS_WALK_ENTER ? SLOTS_WALK_SKIP : 0;
        hit = slots_shared_app_private(a->c, en->path);
        if (!hit)
                return 0;
        if (++a->n <= SLOTS_APP_PRIVATE_SHOWN) {
                strbuf_sep(&a->found, ", ");
                strbuf_addf(&a->found, "%s (%s)", en->path, hit);
        }
        return ev == SLOTS_WALK_ENTER ? SLOTS_WALK_SKIP : 0;
}

int slots_shared_app_private_find(int docsfd, const struct slots_config *c, struct slots_app_private *a)
{
        *a = (struct slots_app_private){ .c = c };
        for (size_t i = 0; i < c->n_shared_dirs; i++) {
                struct slots_chase how = { .flags = SLOTS_CHASE_NO_SYMLINKS | SLOTS_CHASE_MUST_DIR,
                                           .open_flags = O_RDONLY | O_DIRECTORY | O_NONBLOCK };
                char *shown = slots_path_join(c->docs_root, c->shared_dirs[i]), *rel = NULL;
                struct slots_walk walk = { .flags = SLOTS_WALK_ONE_FS, .path = shown, .visit = find_visit,
                                           .data = a };
                struct slots_error e;
                int fd;

                if (!shown || asprintf(&rel, "/%s", c->shared_dirs[i]) < 0) {
                        free(shown);
                        return -ENOMEM;
                }
                slots_error_clear(&e);
                fd = slots_chase(docsfd, rel, &how, NULL, NULL);
                if (fd >= 0 && slots_walk(fd, &walk, &e) < 0 && !a->unread.len)
                        strbuf_addf(&a->unread, "%s: %s", e.object[0] ? e.object : shown, e.reason);
                else if (fd < 0 && fd != -ENOENT && !a->unread.len)
                        strbuf_addf(&a->unread, "%s: %s", shown, strerror(-fd));
                slots_close(fd);
                free(rel);
                free(shown);
        }
        return a->found.oom || a->unread.oom ? -ENOMEM : 0;
}

void slots_app_private_free(struct slots_app_private *a)
{
        strbuf_free(&a->found);
        strbuf_free(&a->unread);
}

/* An app-private name below a shared folder is left as it is, with a warning naming the fix. */
static bool share_app_private(struct prov_run *x, const char *path)
{
        const char *hit = slots_shared_app_private(x->c, path), *rel = path;
        size_t dl = strlen(x->c->docs_root);

        if (!hit)
                return false;
        /* shared_dirs entries are relative to docs_root: the fix names it so. */
        if (strncmp(path, x->c->docs_root, dl) == 0)
                rel = path + dl + (path[dl] == '/');
        WARN(x, path,
             prov_fmt_fix(x, "move it out of the shared folder (it is one program's own state), or add \"%s\" to "
                             "shared_dirs to share it on purpose", rel),
             "is an app-private name (%s) inside a shared folder: its group and mode are left alone", hit);
        return true;
}

/* A file below a shared folder: opened without following, checked to be the one looked at, shared. */
static int share_file(struct prov_run *x, const struct slots_walk_entry *en)
{
        struct stat st;
        int fd;

        /* A hard link could be any file of this file system (/etc/shadow): leave it. */
        if (en->sx->stx_nlink > 1) {
                WARN(x, en->path, NULL, "has %lu hard links: its group and mode are left alone",
                     (unsigned long) en->sx->stx_nlink);
                return 0;
        }
        fd = openat(en->parent_fd, en->name, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_NOFOLLOW | O_CLOEXEC);
        if (fd < 0) {
                /* Gone or swapped since the look: not ours to repair.  Unreadable: said so. */
                if (errno != ENOENT && errno != ELOOP && errno != ENXIO)
                        FAILED(x, en->path, NULL, "cannot open: %s", strerror(errno));
                return 0;
        }
        if (fstat(fd, &st) < 0) {
                FAILED(x, en->path, NULL, "cannot inspect: %s", strerror(errno));
        } else if (st.st_ino != en->sx->stx_ino || !S_ISREG(st.st_mode) || st.st_nlink != 1) {
                slots_close(fd);
                return en->last_try ? 0 : -EAGAIN;     /* replaced since the look: look again */
        } else {
                share_one(x, fd, en->path, &st, false);
        }
        slots_close(fd);
        return 0;
}

/*
 * The visitor of the walk below a shared folder (the folder itself at depth 0):
 * folders and regular files get the shared group; never a symlink, a device or a
 * FIFO, never another file system, never a private path or what lies below it,
 * never an app-private name (reported).
 */
static int share_visit(void *data, enum slots_walk_event ev, const struct slots_walk_entry *en,
                       struct slots_error *e)
{
        struct prov_run *x = data;
        struct stat st;

        (void) e;
        if (en->other_fs || (en->depth > 0 && slots_config_is_private(x->c, en->path)))
                return ev == SLOTS_WALK_ENTER ? SLOTS_WALK_SKIP : 0;
        if (ev != SLOTS_WALK_LEAVE && en->depth > 0 && share_app_private(x, en->path))
                return ev == SLOTS_WALK_ENTER ? SLOTS_WALK_SKIP : 0;
        if (ev == SLOTS_WALK_ENTRY)
                return S_ISREG(en->sx->stx_mode) ? share_file(x, en) : 0;
        if (ev != SLOTS_WALK_ENTER)
                return 0;
        if (fstat(en->fd, &st) < 0) {
                FAILED(x, en->path, NULL, "cannot inspect: %s", strerror(errno));
                return SLOTS_WALK_SKIP;
        }
        share_one(x, en->fd, en->path, &st, en->depth == 0);
        return 0;
}

/*
 * The shared folder fd and all below it, at any depth (walk.c).  What the walk
 * cannot read is a failed step, reported: the run ends with exit 1, never as if
 * the whole folder had been shared.
 */
static int share_walk(struct prov_run *x, int fd, const char *path)
{
        const struct slots_walk how = { .flags = SLOTS_WALK_ONE_FS, .path = path, .visit = share_visit, .data = x };
        struct slots_error e;
        int r;

        slots_error_clear(&e);
        r = slots_walk(fd, &how, &e);
        if (r == -ENOMEM)
                return r;
        if (r < 0)
                FAILED(x, e.object[0] ? e.object : path, e.fix[0] ? e.fix : NULL, "%s; the rest was shared",
                       e.reason[0] ? e.reason : strerror(-r));
        return 0;
}

/*
 * Opens the parent of the shared folder rel below docfd through the resolver, no symlink
 * followed; *comp is set to its last component (in rel).  -1 when reported.
 */
static int share_parent(struct prov_run *x, int docfd, const char *path, char *rel, char **comp)
{
        const struct slots_chase how = { .flags = SLOTS_CHASE_NO_SYMLINKS | SLOTS_CHASE_MUST_DIR,
                                         .open_flags = O_RDONLY | O_DIRECTORY };
        char *slash = strrchr(rel, '/'), *way = NULL;
        struct slots_error e;
        int dfd;

        *comp = slash ? slash + 1 : rel;
        if (slash)
                *slash = '\0';
        slots_error_clear(&e);
        if (slash && asprintf(&way, "/%s", rel) < 0)
                way = NULL;
        dfd = slash && !way ? -ENOMEM : slots_chase(docfd, slash ? way : "/", &how, NULL, &e);
        free(way);
        if (dfd < 0)
                WARN(x, path, NULL, "a folder on the way (%s) %s: not shared", slash ? rel : ".",
                     dfd == -ENOENT ? "does not exist" :
                     dfd == -ELOOP || dfd == -ENOTDIR ? "is not a folder (or is a symlink)" :
                                                        strerror(-dfd));
        return dfd < 0 ? -1 : dfd;
}

/*
 * The shared folder itself: made (or finished, after a run killed between its
 * mkdir and its chmod) as the service's 2770 in the shared group.  Only adding
 * g+rwX to a half-made one would leave the service's own folder closed to it.
 */
static void share_make(struct prov_run *x, int dfd, const char *comp, const char *path, bool finish)
{
        char b1[64], b2[64];
        bool made = true;
        int fd, err = 0;

        prov_change(x, "%s shared folder %s (%s:%s 2770)", finish ? "finish" : "create", path,
                    prov_uid_str(x, x->svc_uid, b1, sizeof(b1)), prov_gid_str(x, x->shared_gid, b2, sizeof(b2)));
        if (x->dry)
                return;
        /* Made with no access at all; a folder someone put there meanwhile is not ours to change. */
        fd = finish ? openat(dfd, comp, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
                    : slots_dir_make(dfd, comp, 0, NULL, NULL, &made, NULL);
        if (fd < 0)
                err = finish ? errno : -fd;
        else if (!made)
                err = EEXIST;
        else if (fchown(fd, x->svc_uid, x->shared_gid) < 0 || fchmod(fd, 02770) < 0)
                err = errno;
        if (err)
                FAILED(x, path, NULL, "cannot %s the shared folder: %s", finish ? "finish" : "create",
                       strerror(err));
        slots_close(fd);
}

/* One entry of shared_dirs: made when missing, else walked.  -errno only when memory ran out. */
static int share_dir(struct prov_run *x, int docfd, const char *entry)
{
        char *path = slots_path_join(x->c->docs_root, entry), *rel = strdup(entry), *comp;
        int dfd = -1, fd = -1, r = 0;
        struct stat st;

        if (!path || !rel) {
                r = -ENOMEM;
                goto out;
        }
        dfd = share_parent(x, docfd, path, rel, &comp);
        if (dfd < 0)
                goto out;
        if (fstatat(dfd, comp, &st, AT_SYMLINK_NOFOLLOW) < 0) {
                if (errno != ENOENT)
                        FAILED(x, path, NULL, "cannot inspect: %s", strerror(errno));
                else
                        share_make(x, dfd, comp, path, false);
                goto out;
        }
        if (S_ISDIR(st.st_mode) && (st.st_mode & 07777) == 0 && (st.st_uid == 0 || st.st_uid == x->svc_uid)) {
                share_make(x, dfd, comp, path, true);
                goto out;
        }
        if (S_ISLNK(st.st_mode) || !S_ISDIR(st.st_mode)) {
                WARN(x, path, NULL, "is %s: not followed and not shared",
                     S_ISLNK(st.st_mode) ? "a symlink" : "not a folder");
                goto out;
        }
        fd = openat(dfd, comp, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (fd < 0)
                FAILED(x, path, NULL, "cannot open: %s", strerror(errno));
        else
                r = share_walk(x, fd, path);
out:
        slots_close(fd);
        slots_close(dfd);
        free(rel);
        free(path);
        return r;
}

int prov_shared_dirs(struct prov_run *x)
{
        const struct slots_config *c = x->c;
        int docfd, r = 0;

        if (!c->docs_root || c->n_shared_dirs == 0)
                return 0;
        docfd = prov_open_root(x, c->docs_root, "docs_root", true);
        if (docfd < 0 && docfd != -ENOENT)
                return 0;       /* reported */
        if (docfd < 0) {
                WARN(x, c->docs_root, "create docs_root, then run slots-provision again",
                     "docs_root cannot be opened (%s): shared folders skipped", strerror(-docfd));
                return 0;
        }
        for (size_t i = 0; i < c->n_shared_dirs && r == 0; i++)
                r = share_dir(x, docfd, c->shared_dirs[i]);
        slots_close(docfd);
        if (r < 0)
                slots_error_set(x->e, r, c->docs_root, "out of memory");
        return r;
}
