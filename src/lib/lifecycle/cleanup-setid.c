/* The set-id sweep: files that carry a slot's uid or gid, in every folder a slot can write, found or cleared. */
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "cleanup-int.h"
#include "cleanup.h"
#include "fsutil.h"
#include "mounts.h"
#include "path.h"
#include "walk.h"

#define SETID_BITS ((mode_t) (S_ISUID | S_ISGID))

/* The temp folders a slot writes, walked whole (a slot's home, state and run, docs_root: see sweep_roots). */
static const char *const setid_temp[] = { "/tmp", "/var/tmp", "/dev/shm", "/run/lock", "/run/user" };

/* File systems whose mounts below the swept folders are walked: the kernel's own and local disks'. */
static const char *const sweep_types[] = { "tmpfs", "ramfs", "ext2", "ext3", "ext4", "xfs", "btrfs", "f2fs",
                                           "overlay", "vfat", "exfat", "zfs", "bcachefs" };
#define SWEEP_MOUNT_DEPTH 4

struct sweep {
        struct slots_setid_sweep *s;
        struct stat skip[2];            /* slots_root and docs_root when below a temp folder: walked on their own */
        size_t n_skip;
        struct cleanup_mounts mounts;   /* read once: the type of each mount met */
        unsigned depth;                 /* mounts entered on the way to the walk under way */
};

bool slots_setid_carries(const struct slots_setid_sweep *s, uid_t uid, gid_t gid, mode_t mode)
{
        if (!S_ISREG(mode) || !(mode & SETID_BITS))
                return false;
        for (size_t i = 0; i < s->n_uids; i++)
                if (uid == s->uids[i])
                        return true;
        for (size_t i = 0; i < s->n_gids; i++)
                if ((mode & S_ISGID) && gid == s->gids[i])
                        return true;
        return false;
}

static bool skipped(const struct sweep *w, const struct statx *sx)
{
        for (size_t i = 0; i < w->n_skip; i++)
                if (w->skip[i].st_ino == sx->stx_ino &&
                    w->skip[i].st_dev == makedev(sx->stx_dev_major, sx->stx_dev_minor))
                        return true;
        return false;
}

static int sweep_fail(const struct slots_walk_entry *en, struct slots_error *e, int r, const char *what)
{
        char shown[SLOTS_ERR_TEXT];

        slots_walk_shown(en->path, en->root_len, shown, sizeof(shown));
        return slots_error_set(e, r, shown, "%s: %s", what, strerror(-r));
}

/*
 * Clears the set-id bits of the file looked at, through its own fd: only what was
 * looked at (the same inode, still carrying the identity), whatever its link count
 * (only bits go: nothing is widened).  1 when cleared, 0 when it was gone or changed.
 */
static int clear_bits(const struct sweep *w, const struct slots_walk_entry *en, struct slots_error *e)
{
        struct stat st;
        int fd, r = 0;

        fd = openat(en->parent_fd, en->name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
        if (fd < 0)
                return errno == ENOENT || errno == ELOOP ? 0 : sweep_fail(en, e, -errno, "cannot open");
        if (fstat(fd, &st) < 0)
                r = sweep_fail(en, e, -errno, "cannot stat");
        else if (st.st_ino == en->sx->stx_ino && slots_setid_carries(w->s, st.st_uid, st.st_gid, st.st_mode))
                r = fchmod(fd, st.st_mode & 07777 & ~SETID_BITS) < 0 ? sweep_fail(en, e, -errno,
                                                                            "cannot clear its set-id bits")
                                                                   : 1;
        close(fd);
        return r;
}

static int sweep_mount(struct sweep *w, const struct slots_walk_entry *en, struct slots_error *e);

static int sweep_visit(void *data, enum slots_walk_event ev, const struct slots_walk_entry *en, struct slots_error *e)
{
        struct sweep *w = data;
        const struct statx *sx = en->sx;
        int r = 1;

        if (ev == SLOTS_WALK_LEAVE || ev == SLOTS_WALK_CHANGING || en->depth == 0)
                return 0;
        if (S_ISDIR(sx->stx_mode) && skipped(w, sx))
                return SLOTS_WALK_SKIP;
        if (S_ISDIR(sx->stx_mode))
                return en->other_fs ? sweep_mount(w, en, e) : 0;
        if (!slots_setid_carries(w->s, sx->stx_uid, sx->stx_gid, sx->stx_mode))
                return 0;
        if (w->s->clear)
                r = clear_bits(w, en, e);
        if (r <= 0)
                return r;
        w->s->files++;
        if (w->s->seen)
                w->s->seen(w->s->data, en->path, sx->stx_uid, sx->stx_gid, sx->stx_mode & 07777);
        return 0;
}

/* The type of the mount the walk met at sx (by its mount id, else its device); "unknown" when not listed. */
static const char *mount_type(const struct sweep *w, const struct statx *sx)
{
        for (size_t i = 0; i < w->mounts.n; i++) {
                const struct cleanup_mount *m = &w->mounts.m[i];

                if ((sx->stx_mask & STATX_MNT_ID) ? m->id == sx->stx_mnt_id
                                                  : m->major == sx->stx_dev_major && m->minor == sx->stx_dev_minor)
                        return m->fstype;
        }
        return "unknown";
}

/*
 * A mount below a swept folder (the walker shows it unopened): walked as a place of its own when
 * its type is one of sweep_types and it lies less than SWEEP_MOUNT_DEPTH mounts deep, else
 * shown to s->skipped.  Opened where the walk saw it, and walked only if it is still that folder.
 */
static int sweep_mount(struct sweep *w, const struct slots_walk_entry *en, struct slots_error *e)
{
        struct slots_walk how = { .flags = SLOTS_WALK_ONE_FS, .path = en->path, .visit = sweep_visit, .data = w };
        const char *type = mount_type(w, en->sx);
        bool walk = false;
        struct statx sx;
        int fd, r;

        for (size_t i = 0; i < sizeof(sweep_types) / sizeof(sweep_types[0]); i++)
                walk |= strcmp(type, sweep_types[i]) == 0;
        if (!walk || w->depth >= SWEEP_MOUNT_DEPTH) {
                w->s->mounts_skipped++;
                if (w->s->skipped)
                        w->s->skipped(w->s->data, en->path, type);
                return 0;
        }
        fd = openat(en->parent_fd, en->name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
        if (fd < 0)
                return errno == ENOENT ? 0 : sweep_fail(en, e, -errno, "cannot open the mount");
        if (statx(fd, "", AT_EMPTY_PATH, STATX_INO, &sx) < 0 || sx.stx_ino != en->sx->stx_ino ||
            sx.stx_dev_major != en->sx->stx_dev_major || sx.stx_dev_minor != en->sx->stx_dev_minor) {
                close(fd);
                return -EAGAIN;
        }
        w->depth++;
        r = slots_walk(fd, &how, e);
        w->depth--;
        close(fd);
        return r;
}

/* One place, walked to its end on its own file system; a missing one is fine. */
static int sweep_root(struct sweep *w, int rootfd, const char *dir, struct slots_error *e)
{
        struct slots_walk how = { .flags = SLOTS_WALK_ONE_FS, .path = dir, .visit = sweep_visit, .data = w };
        int fd = cleanup_open_walk_root(rootfd, dir, w->s->svc_uid, w->s->svc_gid, e), r;

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

/* slots_root and docs_root, when they lie below a temp folder, are left to their own walks. */
static void sweep_skips(struct sweep *w, int rootfd, const struct slots_config *c)
{
        const char *roots[] = { c->slots_root, c->docs_root };

        for (size_t i = 0; i < sizeof(roots) / sizeof(roots[0]); i++) {
                int fd = roots[i] ? cleanup_open_dir_in(rootfd, roots[i]) : -ENOENT;

                if (fd >= 0 && fstat(fd, &w->skip[w->n_skip]) == 0)
                        w->n_skip++;
                slots_close(fd);
        }
}

int slots_cleanup_setid(int rootfd, const struct slots_config *c, struct slots_setid_sweep *s, struct slots_error *e)
{
        static const char *const kinds[] = { "home", "state", "run" };
        struct sweep w = { .s = s };
        struct slots_first first = { 0, e };
        struct slots_error sub;

        for (size_t i = 0; i < s->n_uids; i++)
                if (s->uids[i] == 0)
                        return slots_error_set(e, -EINVAL, "set-id sweep", "refusing to sweep for uid 0");
        for (size_t i = 0; i < s->n_gids; i++)
                if (s->gids[i] == 0)
                        return slots_error_set(e, -EINVAL, "set-id sweep", "refusing to sweep for gid 0");
        s->files = 0;
        s->mounts_skipped = 0;
        sweep_skips(&w, rootfd, c);
        if (cleanup_mounts_read(&w.mounts) < 0)
                w.mounts.n = 0;         /* every mount met is then of unknown type: named, not walked */
        for (size_t i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++) {
                char *dir = slots_path_join(c->slots_root, kinds[i]);

                slots_error_clear(&sub);
                if (!dir) {
                        slots_first_keep(&first, slots_error_set(&sub, -ENOMEM, c->slots_root, "out of memory"), &sub);
                        break;
                }
                slots_first_keep(&first, sweep_root(&w, rootfd, dir, &sub), &sub);
                free(dir);
        }
        if (c->docs_root) {
                slots_error_clear(&sub);
                slots_first_keep(&first, sweep_root(&w, rootfd, c->docs_root, &sub), &sub);
        }
        for (size_t i = 0; i < sizeof(setid_temp) / sizeof(setid_temp[0]); i++) {
                slots_error_clear(&sub);
                slots_first_keep(&first, sweep_root(&w, rootfd, setid_temp[i], &sub), &sub);
        }
        cleanup_mounts_free(&w.mounts);
        return first.r;
}
