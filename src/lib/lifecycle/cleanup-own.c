/* Release hygiene in the folders every slot may write: the slot's files at any depth of the temp folders go, of the shared folders go to the service. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "acl.h"
#include "cleanup-int.h"
#include "cleanup.h"
#include "fsutil.h"
#include "mounts.h"
#include "path.h"
#include "tree.h"
#include "walk.h"

#define SETID_BITS ((mode_t) (S_ISUID | S_ISGID))

/* Folders whose files of the slot, at any depth, go at release (/run/user/<uid> is added). */
static const char *const temp_dirs[] = { "/tmp", "/var/tmp", "/dev/shm", "/run/lock" };

struct own {
        uid_t uid;
        gid_t gid;
        bool hand;                      /* hand to to_uid (shared folders), else remove (temp folders) */
        uid_t to_uid;
        gid_t to_gid;
        struct stat *skip;              /* configured roots and overlay layers below a temp folder: never entered */
        size_t n_skip;
};

/* "<what>: <strerror>" about the entry the walk is at. */
static int own_fail(const struct slots_walk_entry *en, struct slots_error *e, int r, const char *what)
{
        char shown[SLOTS_ERR_TEXT];

        slots_walk_shown(en->path, en->root_len, shown, sizeof(shown));
        return slots_error_set(e, r, shown, "%s: %s", what, strerror(-r));
}

static bool skipped(const struct own *w, const struct statx *sx)
{
        for (size_t i = 0; i < w->n_skip; i++)
                if (w->skip[i].st_ino == sx->stx_ino &&
                    w->skip[i].st_dev == makedev(sx->stx_dev_major, sx->stx_dev_minor))
                        return true;
        return false;
}

/*
 * A file that names the slot (its owner, or its group) loses its set-id bits
 * through its fd, whatever its link count: its other names must not keep them.
 */
static int clear_setid(const struct own *w, const struct slots_walk_entry *en, struct slots_error *e)
{
        const struct statx *sx = en->sx;
        struct stat st;
        int fd, r = 0;

        if (!S_ISREG(sx->stx_mode) || !(sx->stx_mode & SETID_BITS) || (sx->stx_uid != w->uid && sx->stx_gid != w->gid))
                return 0;
        fd = openat(en->parent_fd, en->name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
        if (fd < 0)
                return errno == ENOENT ? 0 : own_fail(en, e, -errno, "cannot open");
        if (fstat(fd, &st) < 0)
                r = own_fail(en, e, -errno, "cannot stat");
        else if (st.st_ino == sx->stx_ino && (st.st_mode & SETID_BITS) &&
                 fchmod(fd, st.st_mode & 07777 & ~SETID_BITS) < 0)
                r = own_fail(en, e, -errno, "cannot clear its set-id bits");
        close(fd);
        return r;
}

/* A temp folder: the slot's entry goes (a folder with all it holds); its set-id bits first. */
static int own_remove(const struct own *w, const struct slots_walk_entry *en, struct slots_error *e)
{
        struct stat st;
        int r;

        if (en->other_fs && S_ISDIR(en->sx->stx_mode)) {
                char shown[SLOTS_ERR_TEXT];

                slots_walk_shown(en->path, en->root_len, shown, sizeof(shown));
                slots_error_refuse(e, -EBUSY, shown, "is a mount point, never entered");
                slots_error_fix(e, "unmount it (umount -l %s)", en->path);
                return -EBUSY;
        }
        if (en->fd < 0) {
                r = clear_setid(w, en, e);
                if (r < 0)
                        return r;
                if (unlinkat(en->parent_fd, en->name, 0) < 0 && errno != ENOENT)
                        return own_fail(en, e, -errno, "cannot remove");
                return 0;
        }
        /* Only the folder looked at: one renamed over it since (by an account still running) is not the slot's. */
        if (fstat(en->fd, &st) < 0)
                return own_fail(en, e, -errno, "cannot stat");
        if (st.st_uid != w->uid)
                return SLOTS_WALK_SKIP;
        r = fcntl(en->fd, F_DUPFD_CLOEXEC, 3);
        if (r < 0)
                return own_fail(en, e, -errno, "cannot open");
        r = slots_tree_empty(r, en->path, e);
        if (r == 0 && unlinkat(en->parent_fd, en->name, AT_REMOVEDIR) < 0 && errno != ENOENT)
                r = own_fail(en, e, -errno, "cannot remove the folder");
        return r < 0 ? r : SLOTS_WALK_SKIP;
}

/* Narrows an entry handed over: others lose access, a file its set-id bits, ACLs go. */
static int hand_mode(const struct slots_walk_entry *en, int fd, const struct stat *st, struct slots_error *e)
{
        mode_t mode = st->st_mode & 07777 & ~(mode_t) S_IRWXO;
        int r;

        if (!S_ISDIR(st->st_mode))
                mode &= ~SETID_BITS;
        r = slots_acl_remove(fd, SLOTS_ACL_ACCESS, false);
        if (r >= 0 && S_ISDIR(st->st_mode))
                r = slots_acl_remove(fd, SLOTS_ACL_DEFAULT, false);
        r = r < 0 ? own_fail(en, e, r, "cannot remove its ACL") : 0;
        if (fchmod(fd, mode) < 0 && r == 0)
                r = own_fail(en, e, -errno, "cannot set its mode");
        return r;
}

/*
 * A shared folder: the slot's entry goes to the service, through an fd of the
 * entry itself; a set-gid file of the slot's group, whatever its owner, loses
 * the bit and the group.  A file with more than one name is never widened: it
 * only loses its set-id bits, and names the step's failure when it is the slot's.
 */
static int own_hand(const struct own *w, const struct slots_walk_entry *en, struct slots_error *e)
{
        const struct statx *sx = en->sx;
        bool data = S_ISREG(sx->stx_mode) || S_ISDIR(sx->stx_mode), mine = sx->stx_uid == w->uid;
        struct stat st;
        gid_t gid;
        int fd, r = 0;

        if (!mine && !(S_ISREG(sx->stx_mode) && sx->stx_gid == w->gid && (sx->stx_mode & S_ISGID)))
                return 0;
        fd = en->fd >= 0 ? fcntl(en->fd, F_DUPFD_CLOEXEC, 3)
                         : openat(en->parent_fd, en->name, data ? O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC
                                                                 : O_PATH | O_NOFOLLOW | O_CLOEXEC);
        if (fd < 0)
                return errno == ENOENT ? 0 : own_fail(en, e, -errno, "cannot open");
        if (fstat(fd, &st) < 0) {
                r = own_fail(en, e, -errno, "cannot stat");
                goto out;
        }
        /* Replaced since it was listed: not the slot's entry any more. */
        if (st.st_ino != sx->stx_ino || st.st_uid != sx->stx_uid)
                goto out;
        if (!S_ISDIR(st.st_mode) && st.st_nlink > 1) {
                if ((st.st_mode & SETID_BITS) && fchmod(fd, st.st_mode & 07777 & ~SETID_BITS) < 0)
                        r = own_fail(en, e, -errno, "cannot clear its set-id bits");
                else if (mine) {
                        char shown[SLOTS_ERR_TEXT];

                        slots_walk_shown(en->path, en->root_len, shown, sizeof(shown));
                        r = slots_error_refuse(e, -EMLINK, shown, "has %lu links; a file with more than one name "
                                               "is never widened (its set-id bits are cleared)",
                                               (unsigned long) st.st_nlink);
                        slots_error_fix(e, "remove its other names (find / -xdev -samefile %s)", en->path);
                }
                goto out;
        }
        gid = st.st_gid == w->gid ? w->to_gid : st.st_gid;
        /*
         * The mode narrows first: should the chown fail, the entry is still the slot's and
         * the next release finds it again; the service's already, it would keep its old mode.
         */
        if (data)
                r = hand_mode(en, fd, &st, e);
        if (r == 0 && fchownat(fd, "", mine ? w->to_uid : (uid_t) -1, gid, AT_EMPTY_PATH) < 0)
                r = own_fail(en, e, -errno, "cannot give it to the service");
out:
        close(fd);
        return r;
}

/*
 * The walker's visitor: each entry below a temp or shared folder, at any depth.
 * Others' folders are entered (they may hold the slot's files); a mount point
 * never is.
 */
static int own_visit(void *data, enum slots_walk_event ev, const struct slots_walk_entry *en, struct slots_error *e)
{
        const struct own *w = data;
        const struct statx *sx = en->sx;
        int r;

        if (ev == SLOTS_WALK_LEAVE || ev == SLOTS_WALK_CHANGING || en->depth == 0)
                return 0;
        if (S_ISDIR(sx->stx_mode) && skipped(w, sx))
                return SLOTS_WALK_SKIP;
        if (!w->hand) {
                /* A set-gid file of the slot's group, whoever made it, carries the slot's gid on. */
                if (sx->stx_uid == w->uid ||
                    (S_ISREG(sx->stx_mode) && sx->stx_gid == w->gid && (sx->stx_mode & S_ISGID)))
                        return own_remove(w, en, e);
                return 0;
        }
        if (en->other_fs)
                return 0;
        r = own_hand(w, en, e);
        return r < 0 ? r : 0;
}

/*
 * Walks dir.  Its way is checked with the owner chain; with slot_end the last
 * folder is one slots may write (/run/user/<uid>, a shared folder): its parent
 * is checked, and it is opened without following and must belong to the slot,
 * root or (handing over) the service.
 */
static int own_root(struct own *w, int rootfd, const char *dir, bool slot_end, struct slots_error *e)
{
        struct slots_walk how = { .flags = SLOTS_WALK_ONE_FS, .path = strcmp(dir, "/") == 0 ? "" : dir,
                                  .visit = own_visit, .data = w };
        uid_t tu = w->hand ? w->to_uid : (uid_t) -1;
        gid_t tg = w->hand ? w->to_gid : (gid_t) -1;
        int fd, r;

        fd = slot_end ? cleanup_open_slot_end(rootfd, dir, w->uid, tu, tg, e) : cleanup_open_walk_root(rootfd, dir, tu, tg, e);
        if (fd == -ENOENT) {
                slots_error_clear(e);
                return 0;
        }
        if (fd < 0)
                return fd;
        r = slots_walk(fd, &how, e);
        close(fd);
        return r;
}

/* Keeps the folder path out of the walk; a missing one is fine. */
static int skip_add(struct own *w, int rootfd, const char *path, struct slots_error *e)
{
        struct stat *skip = reallocarray(w->skip, w->n_skip + 1, sizeof(*skip));
        int fd, r = 0;

        if (!skip)
                return slots_error_set(e, -ENOMEM, path, "out of memory");
        w->skip = skip;
        fd = cleanup_open_dir_in(rootfd, path);
        if (fd == -ENOENT || fd == -ENOTDIR)
                return 0;
        if (fd < 0)
                r = fd;
        else if (fstat(fd, &w->skip[w->n_skip]) < 0)
                r = -errno;
        else
                w->n_skip++;
        slots_close(fd);
        return r < 0 ? slots_error_set(e, r, path, "cannot look at it, so the walk of the temp folders could "
                                       "not keep out of it: %s", strerror(-r)) : 0;
}

/*
 * The layers of each mounted overlay that lie below a temp folder: they are the overlay's, which
 * must not be changed beneath it (the slot's files there are the overlay's files, seen where it
 * is mounted).  Only root makes such a mount in release's own mount namespace.
 */
static int skip_layers(struct own *w, int rootfd, const struct cleanup_mount *m, struct slots_error *e)
{
        static const char *const keys[] = { "upperdir", "workdir", "lowerdir" };
        char val[PATH_MAX], *save = NULL;
        int r = 0;

        for (size_t k = 0; k < sizeof(keys) / sizeof(keys[0]) && r == 0; k++) {
                if (!cleanup_mount_option(m, keys[k], val, sizeof(val)))
                        continue;
                /* Several lower folders are joined by ':', which inside a folder's name is escaped. */
                for (char *p = strtok_r(val, ":", &save); p && r == 0; p = strtok_r(NULL, ":", &save)) {
                        cleanup_mount_unescape(p);
                        for (size_t i = 0; i < sizeof(temp_dirs) / sizeof(temp_dirs[0]) && r == 0; i++)
                                if (p[0] == '/' && slots_path_under(p, temp_dirs[i]))
                                        r = skip_add(w, rootfd, p, e);
                }
        }
        return r;
}

/* Keeps configured roots and overlay layers that lie below a temp folder out of the walk; -errno (e set) when one cannot be looked at. */
static int own_skips(struct own *w, int rootfd, const struct slots_config *c, struct slots_error *e)
{
        const char *roots[] = { c->docs_root, c->app_root, c->slots_root };
        struct cleanup_mounts t = { 0 };
        int r = 0;

        for (size_t i = 0; i < sizeof(roots) / sizeof(roots[0]) && r == 0; i++)
                r = roots[i] ? skip_add(w, rootfd, roots[i], e) : 0;
        if (r == 0 && (r = cleanup_mounts_read(&t)) < 0)
                return slots_error_set(e, r, "/proc/self/mountinfo", "cannot read: %s", strerror(-r));
        for (size_t i = 0; i < t.n && r == 0; i++)
                r = strcmp(t.m[i].fstype, "overlay") == 0 ? skip_layers(w, rootfd, &t.m[i], e) : 0;
        cleanup_mounts_free(&t);
        return r;
}

/* /run/user/<uid> itself, once emptied, when it is the slot's (logind may hold it: busy is fine). */
static int remove_runuser(int rootfd, const char *runuser, uid_t uid, struct slots_error *e)
{
        int fd = cleanup_open_walk_root(rootfd, "/run/user", (uid_t) -1, (gid_t) -1, NULL), r = 0;
        struct stat st;

        if (fd < 0)
                return 0;
        if (fstatat(fd, runuser + 10, &st, AT_SYMLINK_NOFOLLOW) < 0) {
                if (errno != ENOENT)
                        r = slots_error_set(e, -errno, runuser, "cannot stat: %s", strerror(errno));
        } else if (S_ISDIR(st.st_mode) && st.st_uid == uid && unlinkat(fd, runuser + 10, AT_REMOVEDIR) < 0 &&
                   errno != EBUSY && errno != ENOTEMPTY && errno != ENOENT) {
                r = slots_error_set(e, -errno, runuser, "cannot remove: %s", strerror(errno));
        }
        close(fd);
        return r;
}

int slots_cleanup_temp(int rootfd, const struct slots_config *c, const struct slots_pw *slot, struct slots_error *e)
{
        struct own w = { .uid = slot->uid, .gid = slot->gid };
        struct slots_first first = { 0, e };
        struct slots_error sub;
        char runuser[64];
        int r;

        if (slot->uid == 0 || slot->gid == 0)
                return slots_error_refuse(e, -EINVAL, slot->name, "refusing to remove the files of uid or gid 0");
        /*
         * A docs, app or slots root below /tmp (a demo, a test) is the service's, handled by its own
         * step.  One that cannot be looked at is no reason to walk into it: nothing is walked then.
         */
        r = own_skips(&w, rootfd, c, e);
        if (r < 0) {
                free(w.skip);
                return r;
        }
        for (size_t i = 0; i < sizeof(temp_dirs) / sizeof(temp_dirs[0]); i++) {
                slots_error_clear(&sub);
                slots_first_keep(&first, own_root(&w, rootfd, temp_dirs[i], false, &sub), &sub);
        }
        /* The runtime folder logind makes (often a mount of its own): what it holds, then itself. */
        snprintf(runuser, sizeof(runuser), "/run/user/%u", (unsigned) slot->uid);
        slots_error_clear(&sub);
        slots_first_keep(&first, own_root(&w, rootfd, runuser, true, &sub), &sub);
        slots_first_keep(&first, remove_runuser(rootfd, runuser, slot->uid, &sub), &sub);
        slots_first_keep(&first, cleanup_clean_mail(rootfd, slot, &sub), &sub);
        free(w.skip);
        return first.r;
}

int slots_cleanup_shared(int rootfd, const struct slots_config *c, const struct slots_pw *slot, gid_t slot_gid,
                         uid_t svc_uid, gid_t svc_gid, struct slots_error *e)
{
        struct own w = { .uid = slot->uid, .gid = slot_gid, .hand = true, .to_uid = svc_uid, .to_gid = svc_gid };
        struct slots_first first = { 0, e };
        struct slots_error sub;

        if (slot->uid == 0 || slot_gid == 0)
                return slots_error_refuse(e, -EINVAL, slot->name, "refusing to hand over the files of uid or gid 0");
        if (!c->docs_root)
                return 0;
        for (size_t i = 0; i < c->n_shared_dirs; i++) {
                char *dir = slots_path_join(c->docs_root, c->shared_dirs[i]);

                slots_error_clear(&sub);
                if (!dir) {
                        slots_first_keep(&first, slots_error_set(&sub, -ENOMEM, c->docs_root, "out of memory"), &sub);
                        break;
                }
                slots_first_keep(&first, own_root(&w, rootfd, dir, true, &sub), &sub);
                free(dir);
        }
        return first.r;
}
