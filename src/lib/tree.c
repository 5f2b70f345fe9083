/* User trees under docs_root: prepared for a slot at assign, given back at release; the unlink walk. */
#include <dirent.h>
#include <endian.h>
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "fsutil.h"
#include "ids.h"
#include "tree.h"

/* fchmodat2 (Linux 6.6) has the same number on every architecture; older headers lack it. */
#ifndef SYS_fchmodat2
#define SYS_fchmodat2 452
#endif

#define STATX_WANT (STATX_TYPE | STATX_MODE | STATX_UID | STATX_GID | STATX_INO | STATX_NLINK)
#define FILE_SPECIAL_BITS ((mode_t) (S_ISUID | S_ISGID | S_ISVTX))

/* The POSIX ACL extended attribute format (acl(5), the kernel's posix_acl_xattr.h). */
#define ACL_XATTR_VERSION 2
#define ACL_XATTR_USER 0x02
#define ACL_XATTR_GROUP 0x08
#define ACL_XATTR_ACCESS "system.posix_acl_access"
#define ACL_XATTR_DEFAULT "system.posix_acl_default"

enum walk_mode {
        PREPARE,                /* group slot, directories 2770, files g+rw, nothing for others */
        RELEASE_ALL,            /* the user's own tree: everything to the service group */
        RELEASE_SLOT,           /* any tree: only what names the slot goes to the service */
};

struct walk {
        enum walk_mode mode;
        uid_t slot_uid, svc_uid;
        gid_t slot_gid, svc_gid;
        uint32_t dev_major, dev_minor;  /* the tree's file system; nothing else is entered */
        struct slots_tree_stats *stats;
        struct slots_error *e;
        bool failed;                    /* e holds the first failure */
        bool have_chmodat2;             /* the kernel has fchmodat2 (Linux 6.6) */
        char *path;                     /* the folder being walked, for errors */
        size_t len, cap;
        size_t tree_len;                /* length of path at the tree's root: always shown in errors */
};

/* A directory entry read ahead when its folder had to be closed. */
struct ent {
        char *name;
        unsigned char type;
};

/*
 * One level of a walk; len is the path length to restore when it is left.  d is
 * NULL while the level is closed (deeper than SLOTS_TREE_OPEN_MAX levels below):
 * what it had left to read is in ents, and dev/ino tell it again when it is
 * opened through "..".
 */
struct frame {
        DIR *d;
        size_t len;
        char *name;                     /* its name in the parent (unlink walk only) */
        unsigned removed, passes;       /* unlink walk: entries removed in this pass, passes made */
        dev_t dev;
        ino_t ino;
        struct ent *ents;
        size_t nents, next;
};

/* The levels of a walk; [lo, n) are open. */
struct stack {
        struct frame *f;
        size_t n, cap, lo;
};

/*
 * The path of name in the folder being walked, for a message: a path too long
 * keeps the tree's root (which tree) and its end (where), "/.../" between.
 */
static void shown_path(const struct walk *w, const char *name, char *buf, size_t size)
{
        const char *path = w->path ? w->path : "";
        size_t n = strlen(path) + (name ? strlen(name) + 1 : 0), head = w->tree_len, tail;
        char *full;

        if (n < size) {
                snprintf(buf, size, "%s%s%s", path, name ? "/" : "", name ? name : "");
                return;
        }
        if (asprintf(&full, "%s%s%s", path, name ? "/" : "", name ? name : "") < 0) {
                snprintf(buf, size, "%s", path);
                return;
        }
        if (head > size / 2)
                head = size / 2;
        tail = size - head - 6;
        snprintf(buf, size, "%.*s/...%s", (int) head, full, full + n - tail);
        free(full);
}

/* Records the first failure only: later ones are usually its consequences. */
static int fail_as(struct walk *w, const char *name, int r, const char *what, bool with_errno)
{
        char shown[SLOTS_ERR_TEXT];

        if (w->failed)
                return r;
        w->failed = true;
        shown_path(w, name, shown, sizeof(shown));
        if (with_errno)
                return slots_error_set(w->e, r, shown, "%s: %s", what, strerror(-r));
        return slots_error_set(w->e, r, shown, "%s", what);
}

static int fail(struct walk *w, const char *name, int r, const char *what)
{
        return fail_as(w, name, r, what, true);
}

static int path_set(struct walk *w, const char *path)
{
        size_t n = strlen(path);

        w->cap = n + 256;
        w->path = malloc(w->cap);
        if (!w->path)
                return -ENOMEM;
        memcpy(w->path, path, n + 1);
        w->len = n;
        return 0;
}

static int path_push(struct walk *w, const char *name)
{
        size_t n = strlen(name);

        if (w->len + n + 2 > w->cap) {
                size_t cap = (w->len + n + 2) * 2;
                char *p = realloc(w->path, cap);
                if (!p)
                        return -ENOMEM;
                w->path = p;
                w->cap = cap;
        }
        w->path[w->len++] = '/';
        memcpy(w->path + w->len, name, n + 1);
        w->len += n;
        return 0;
}

static void path_pop(struct walk *w, size_t len)
{
        w->len = len;
        w->path[len] = '\0';
}

static bool is_dot(const char *name)
{
        return name[0] == '.' && (name[1] == '\0' || (name[1] == '.' && name[2] == '\0'));
}

/* On the tree's file system and not a mount point (a bind mount keeps st_dev but is a mount root). */
static bool same_fs(const struct walk *w, const struct statx *sx)
{
        if (sx->stx_dev_major != w->dev_major || sx->stx_dev_minor != w->dev_minor)
                return false;
        return !(sx->stx_attributes_mask & STATX_ATTR_MOUNT_ROOT) ||
               !(sx->stx_attributes & STATX_ATTR_MOUNT_ROOT);
}

/* Tells the admin about an entry left alone on purpose; the walk goes on. */
static void note(struct walk *w, const char *name, const char *why)
{
        char *full;

        if (!w->stats->note)
                return;
        if (asprintf(&full, "%s%s%s", w->path ? w->path : "", name ? "/" : "", name ? name : "") < 0)
                return;
        w->stats->note(w->stats->note_data, full, why);
        free(full);
}

/*
 * What an entry should become under the walk's rule.  Returns true when owner,
 * group or mode differ from what it is.
 */
static bool target(const struct walk *w, mode_t mode, uid_t uid, gid_t gid, uid_t *nu, gid_t *ng,
                   mode_t *nm)
{
        bool dir = S_ISDIR(mode);

        mode &= 07777;
        *nu = uid;
        *ng = gid;
        *nm = mode;
        if (w->mode == PREPARE) {
                *ng = w->slot_gid;
                *nm = dir ? 02770 : (mode | 0060) & ~(FILE_SPECIAL_BITS | 0007);
        } else {
                if (w->mode == RELEASE_SLOT && uid != w->slot_uid && gid != w->slot_gid)
                        return false;
                if (uid == w->slot_uid)
                        *nu = w->svc_uid;
                if (w->mode == RELEASE_ALL || gid == w->slot_gid)
                        *ng = w->svc_gid;
                *nm = dir ? mode & ~(mode_t) 0007 : mode & ~(FILE_SPECIAL_BITS | 0007);
        }
        return *nu != uid || *ng != gid || *nm != mode;
}

/*
 * Deletes the entries of one POSIX ACL (an xattr of fd) that name the slot's
 * uid or gid.  Returns 1 when the ACL changed, 0 when not, or -errno.
 */
static int acl_strip_one(const struct walk *w, int fd, const char *attr)
{
        unsigned char *buf;
        ssize_t n;
        size_t out = 4;
        int r = 0;

        n = fgetxattr(fd, attr, NULL, 0);
        if (n < 0)
                return errno == ENODATA || errno == EOPNOTSUPP ? 0 : -errno;
        buf = malloc((size_t) n + 1);
        if (!buf)
                return -ENOMEM;
        n = fgetxattr(fd, attr, buf, (size_t) n);
        if (n < 0) {
                r = errno == ENODATA ? 0 : -errno;
                goto out;
        }
        if (n < 4 || (n - 4) % 8 != 0 || le32toh(*(uint32_t *) (void *) buf) != ACL_XATTR_VERSION) {
                r = -EBADMSG;
                goto out;
        }
        for (size_t i = 4; i < (size_t) n; i += 8) {
                uint16_t tag;
                uint32_t id;

                memcpy(&tag, buf + i, 2);
                memcpy(&id, buf + i + 4, 4);
                tag = le16toh(tag);
                id = le32toh(id);
                if ((tag == ACL_XATTR_USER && id == w->slot_uid) || (tag == ACL_XATTR_GROUP && id == w->slot_gid))
                        continue;
                memmove(buf + out, buf + i, 8);
                out += 8;
        }
        /* What stays is still valid: sorted, and a mask without named entries is allowed. */
        if (out != (size_t) n) {
                r = fsetxattr(fd, attr, buf, out, XATTR_REPLACE) < 0 ? -errno : 1;
                if (r == -ENODATA)
                        r = 0;
        }
out:
        free(buf);
        return r;
}

/* Deletes ACL entries naming the slot (access ACL, and default ACL of a folder). */
static int acl_strip(const struct walk *w, int fd, bool dir)
{
        char names[1024];
        ssize_t n;
        bool access = true, def = dir;
        int r, changed = 0;

        /* One listxattr tells whether there is an ACL at all; most entries have none. */
        n = flistxattr(fd, names, sizeof(names));
        if (n < 0 && (errno == EOPNOTSUPP || errno == ENOTSUP))
                return 0;
        if (n >= 0) {
                access = def = false;
                for (ssize_t i = 0; i < n; i += (ssize_t) strlen(names + i) + 1) {
                        if (strcmp(names + i, ACL_XATTR_ACCESS) == 0)
                                access = true;
                        else if (dir && strcmp(names + i, ACL_XATTR_DEFAULT) == 0)
                                def = true;
                }
        } else if (errno != ERANGE) {
                return -errno;
        }
        if (access) {
                r = acl_strip_one(w, fd, ACL_XATTR_ACCESS);
                if (r < 0)
                        return r;
                changed |= r;
        }
        if (def) {
                r = acl_strip_one(w, fd, ACL_XATTR_DEFAULT);
                if (r < 0)
                        return r;
                changed |= r;
        }
        return changed;
}

/*
 * A file with more than one hard link is never changed: its other name may be a
 * shared file, another user's, or a private path, and the change would land there.
 */
static void linked(struct walk *w, const char *name, unsigned long nlink)
{
        char why[128];

        w->stats->linked++;
        snprintf(why, sizeof(why), "has %lu hard links: left alone (a walk never changes a file that "
                 "also has a name elsewhere)", nlink);
        note(w, name, why);
}

/* Applies the rule to an open folder or file; st describes fd. */
static int fix_fd(struct walk *w, int fd, const struct stat *st, const char *name)
{
        bool changed = false;
        uid_t nu;
        gid_t ng;
        mode_t nm;
        int r;

        if (target(w, st->st_mode, st->st_uid, st->st_gid, &nu, &ng, &nm)) {
                /*
                 * At release the mode narrows first: should the chown fail, the entry still names
                 * the slot, so the next release finds it again (given to the service first, a
                 * failed chmod would leave others' bits on an entry no walk looks at any more).
                 */
                if (w->mode != PREPARE && nm != (st->st_mode & 07777) && fchmod(fd, nm) < 0)
                        return fail(w, name, -errno, "cannot change mode");
                if ((nu != st->st_uid || ng != st->st_gid) &&
                    fchown(fd, nu == st->st_uid ? (uid_t) -1 : nu, ng == st->st_gid ? (gid_t) -1 : ng) < 0)
                        return fail(w, name, -errno, "cannot change owner or group");
                /*
                 * At assign the group is the slot's before it gets g+rw.  chown may have cleared
                 * setuid/setgid of a file; the target never has them.
                 */
                if (w->mode == PREPARE && nm != (st->st_mode & 07777) && fchmod(fd, nm) < 0)
                        return fail(w, name, -errno, "cannot change mode");
                changed = true;
                /* A link made meanwhile: put the old owner and mode back. */
                if (!S_ISDIR(st->st_mode)) {
                        struct stat now;

                        if (fstat(fd, &now) < 0)
                                return fail(w, name, -errno, "cannot stat");
                        if (now.st_nlink > 1) {
                                if (fchown(fd, st->st_uid, st->st_gid) < 0 || fchmod(fd, st->st_mode & 07777) < 0)
                                        return fail(w, name, -errno, "cannot undo a change to a file linked "
                                                                     "meanwhile");
                                linked(w, name, (unsigned long) now.st_nlink);
                                return 0;
                        }
                }
        }
        if (w->mode != PREPARE) {
                r = acl_strip(w, fd, S_ISDIR(st->st_mode));
                if (r < 0)
                        return fail(w, name, r, "cannot remove the slot's ACL entries");
                if (r > 0)
                        changed = true;
        }
        if (changed)
                w->stats->changed++;
        return 0;
}

static bool same_inode(const struct stat *st, const struct statx *sx)
{
        return st->st_ino == sx->stx_ino && (st->st_mode & S_IFMT) == (sx->stx_mode & S_IFMT) &&
               (uint32_t) major(st->st_dev) == sx->stx_dev_major && (uint32_t) minor(st->st_dev) == sx->stx_dev_minor;
}

/*
 * The fast way at assign, without opening the file: fchownat and fchmodat2
 * with AT_SYMLINK_NOFOLLOW act on the entry itself and never follow a
 * symlink (one swapped in meanwhile gets a harmless group change and refuses
 * the chmod with EOPNOTSUPP, and is looked at again).  -ENOSYS on kernels
 * before 6.6: the caller opens the file instead.
 */
static int fix_at(struct walk *w, int dfd, const char *name, const struct statx *sx, uid_t nu, gid_t ng,
                  mode_t nm)
{
        if (!w->have_chmodat2)
                return -ENOSYS;
        if ((nu != sx->stx_uid || ng != sx->stx_gid) &&
            fchownat(dfd, name, nu == sx->stx_uid ? (uid_t) -1 : nu, ng == sx->stx_gid ? (gid_t) -1 : ng,
                     AT_SYMLINK_NOFOLLOW) < 0)
                return errno == ENOENT ? 0 : fail(w, name, -errno, "cannot change owner or group");
        /* chown may have cleared setuid/setgid; the target never has them, so compare with the old mode. */
        if (nm != (sx->stx_mode & 07777) &&
            syscall(SYS_fchmodat2, dfd, name, (unsigned) nm, AT_SYMLINK_NOFOLLOW) < 0) {
                if (errno == ENOSYS) {
                        w->have_chmodat2 = false;
                        return -ENOSYS;
                }
                if (errno == ENOENT)
                        return 0;
                if (errno == EOPNOTSUPP)
                        return -EAGAIN;
                return fail(w, name, -errno, "cannot change mode");
        }
        /* A link made meanwhile: put the old owner and mode back. */
        {
                struct statx now;

                if (statx(dfd, name, AT_SYMLINK_NOFOLLOW | AT_NO_AUTOMOUNT, STATX_WANT, &now) == 0 &&
                    now.stx_ino == sx->stx_ino && now.stx_nlink > 1) {
                        if (fchownat(dfd, name, sx->stx_uid, sx->stx_gid, AT_SYMLINK_NOFOLLOW) < 0 ||
                            syscall(SYS_fchmodat2, dfd, name, (unsigned) (sx->stx_mode & 07777),
                                    AT_SYMLINK_NOFOLLOW) < 0)
                                return fail(w, name, -errno, "cannot undo a change to a file linked meanwhile");
                        linked(w, name, (unsigned long) now.stx_nlink);
                        return 0;
                }
        }
        w->stats->changed++;
        return 0;
}

/* A regular file or FIFO: opened only when something may change.  -EAGAIN: it changed under us. */
static int visit_file(struct walk *w, int dfd, const char *name, const struct statx *sx)
{
        struct stat st;
        uid_t nu;
        gid_t ng;
        mode_t nm;
        int fd, r;

        if (w->mode == PREPARE) {
                if (!target(w, sx->stx_mode, sx->stx_uid, sx->stx_gid, &nu, &ng, &nm))
                        return 0;
                r = fix_at(w, dfd, name, sx, nu, ng, nm);
                if (r != -ENOSYS)
                        return r;
        }
        fd = openat(dfd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
        if (fd < 0) {
                if (errno == ENOENT)
                        return 0;
                if (errno == ELOOP || errno == ENXIO)
                        return -EAGAIN;
                return fail(w, name, -errno, "cannot open");
        }
        if (fstat(fd, &st) < 0) {
                r = fail(w, name, -errno, "cannot stat");
        } else if (!same_inode(&st, sx)) {
                r = -EAGAIN;
        } else if (st.st_nlink > 1) {
                linked(w, name, (unsigned long) st.st_nlink);
                r = 0;
        } else {
                r = fix_fd(w, fd, &st, name);
        }
        close(fd);
        return r;
}

/* A folder: opened, checked to be the one seen, fixed; *child is its fd for the walk to enter. */
static int visit_dir(struct walk *w, int dfd, const char *name, const struct statx *sx, int *child)
{
        struct stat st;
        int fd, r;

        fd = openat(dfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
        if (fd < 0) {
                if (errno == ENOENT)
                        return 0;
                if (errno == ELOOP || errno == ENOTDIR)
                        return -EAGAIN;
                return fail(w, name, -errno, "cannot open the folder");
        }
        if (fstat(fd, &st) < 0) {
                r = fail(w, name, -errno, "cannot stat");
                goto fail;
        }
        if (!same_inode(&st, sx)) {
                r = -EAGAIN;
                goto fail;
        }
        r = fix_fd(w, fd, &st, name);
        if (r < 0)
                goto fail;
        *child = fd;
        return 0;
fail:
        close(fd);
        return r;
}

/* Symlinks, sockets, devices: never opened or followed; at release the slot's ones change owner. */
static int visit_other(struct walk *w, int dfd, const char *name, const struct statx *sx)
{
        uid_t nu = sx->stx_uid;
        gid_t ng = sx->stx_gid;

        if (w->mode == PREPARE || (sx->stx_uid != w->slot_uid && sx->stx_gid != w->slot_gid)) {
                w->stats->skipped++;
                return 0;
        }
        if (nu == w->slot_uid)
                nu = w->svc_uid;
        if (ng == w->slot_gid)
                ng = w->svc_gid;
        if (fchownat(dfd, name, nu, ng, AT_SYMLINK_NOFOLLOW) < 0)
                return errno == ENOENT ? 0 : fail(w, name, -errno, "cannot change owner or group");
        w->stats->changed++;
        return 0;
}

/* One directory entry; *child is set to a folder's fd when the walk should enter it. */
static int visit(struct walk *w, int dfd, const char *name, unsigned char d_type, int *child)
{
        struct statx sx;
        int r;

        *child = -1;
        /* A symlink is never touched at assign: no system call at all. */
        if (d_type == DT_LNK && w->mode == PREPARE) {
                w->stats->skipped++;
                return 0;
        }
        /* An entry replaced between stat and open is looked at again, a few times. */
        for (int tries = 0; tries < 3; tries++) {
                if (statx(dfd, name, AT_SYMLINK_NOFOLLOW | AT_NO_AUTOMOUNT, STATX_WANT, &sx) < 0) {
                        if (errno == ENOENT)
                                return 0;
                        return fail(w, name, -errno, "cannot stat");
                }
                if (!same_fs(w, &sx)) {
                        w->stats->skipped++;
                        return 0;
                }
                if (!S_ISDIR(sx.stx_mode) && sx.stx_nlink > 1) {
                        uid_t nu;
                        gid_t ng;
                        mode_t nm;

                        /* Reported only when the walk would have changed it. */
                        if (target(w, sx.stx_mode, sx.stx_uid, sx.stx_gid, &nu, &ng, &nm) &&
                            (w->mode != PREPARE || S_ISREG(sx.stx_mode) || S_ISFIFO(sx.stx_mode)))
                                linked(w, name, (unsigned long) sx.stx_nlink);
                        else
                                w->stats->skipped++;
                        return 0;
                }
                if (S_ISDIR(sx.stx_mode))
                        r = visit_dir(w, dfd, name, &sx, child);
                else if (S_ISREG(sx.stx_mode) || S_ISFIFO(sx.stx_mode))
                        r = visit_file(w, dfd, name, &sx);
                else
                        r = visit_other(w, dfd, name, &sx);
                if (r != -EAGAIN)
                        return r;
        }
        if (w->mode == RELEASE_SLOT) {
                /* Someone who still holds a slot is busy there: never let that block this release. */
                w->stats->refused++;
                note(w, name, "kept changing during the walk: left alone");
                return 0;
        }
        return fail(w, name, -EAGAIN, "the entry kept changing during the walk");
}

/* ---- the levels of a walk: any depth, at most SLOTS_TREE_OPEN_MAX folders open ---- */

static void frame_free(struct frame *f)
{
        if (f->d)
                closedir(f->d);
        for (size_t i = f->next; i < f->nents; i++)
                free(f->ents[i].name);
        free(f->ents);
        free(f->name);
        memset(f, 0, sizeof(*f));
}

static void stack_free(struct stack *st)
{
        while (st->n > 0)
                frame_free(&st->f[--st->n]);
        free(st->f);
        st->f = NULL;
        st->cap = st->lo = 0;
}

/* Reads what is left of an open level into memory and closes it. */
static int frame_close_ahead(struct walk *w, struct frame *f)
{
        struct dirent *de;
        size_t cap = 0;

        /*
         * Read ahead before and opened again through "..": all it has left is in ents already.
         * Reading the new stream would list the level again from its start.
         */
        if (f->ents) {
                closedir(f->d);
                f->d = NULL;
                return 0;
        }
        for (;;) {
                errno = 0;
                de = readdir(f->d);
                if (!de) {
                        if (errno)
                                return fail(w, NULL, -errno, "cannot read the folder");
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
                f->ents[f->nents++].type = de->d_type;
        }
        closedir(f->d);
        f->d = NULL;
        /* An empty list still marks the level as read ahead. */
        if (!f->ents) {
                f->ents = malloc(sizeof(*f->ents));
                if (!f->ents)
                        return -ENOMEM;
        }
        return 0;
}

/* Enters the folder fd (consumed), named name in the level above (NULL for the tree's root). */
static int stack_push(struct walk *w, struct stack *st, int fd, const char *name)
{
        struct frame *f;
        struct stat s;
        size_t len = w->len;
        DIR *d;
        int r;

        if (st->n == st->cap) {
                size_t c = st->cap ? st->cap * 2 : 16;

                f = realloc(st->f, c * sizeof(*f));
                if (!f) {
                        close(fd);
                        return fail(w, name, -ENOMEM, "out of memory");
                }
                st->f = f;
                st->cap = c;
        }
        if (fstat(fd, &s) < 0) {
                r = -errno;
                close(fd);
                return fail(w, name, r, "cannot stat");
        }
        d = fdopendir(fd);
        if (!d) {
                r = -errno;
                close(fd);
                return fail(w, name, r, "cannot read the folder");
        }
        f = &st->f[st->n];
        *f = (struct frame) { .d = d, .len = len, .dev = s.st_dev, .ino = s.st_ino };
        if (name) {
                r = path_push(w, name);
                if (r < 0) {
                        closedir(d);
                        f->d = NULL;
                        return fail(w, NULL, r, "out of memory");
                }
        }
        st->n++;
        /* Too many open: the shallowest open level is read ahead and closed. */
        if (st->n - st->lo > SLOTS_TREE_OPEN_MAX) {
                r = frame_close_ahead(w, &st->f[st->lo]);
                if (r < 0)
                        return r == -ENOMEM ? fail(w, NULL, r, "out of memory") : r;
                st->lo++;
        }
        return 0;
}

/* The next entry of the deepest level: 1 with *name and *type set, 0 at its end, or -errno. */
static int stack_next(struct walk *w, struct stack *st, const char **name, unsigned char *type)
{
        struct frame *f = &st->f[st->n - 1];
        struct dirent *de;

        if (f->ents) {
                if (f->next < f->nents) {
                        /* The name stays valid until the level is left: freed with it. */
                        *name = f->ents[f->next].name;
                        *type = f->ents[f->next].type;
                        f->next++;
                        return 1;
                }
                for (size_t i = 0; i < f->nents; i++)
                        free(f->ents[i].name);
                free(f->ents);
                f->ents = NULL;
                f->nents = f->next = 0;
                return 0;
        }
        errno = 0;
        de = readdir(f->d);
        if (!de)
                return errno ? fail(w, NULL, -errno, "cannot read the folder") : 0;
        *name = de->d_name;
        *type = de->d_type;
        return 1;
}

/*
 * Leaves the deepest level.  A closed level above is opened again through ".."
 * and must be the folder it was (dev and inode): a folder moved meanwhile ends
 * the walk of this tree (-ESTALE), since what is left of it cannot be found safely.
 */
static int stack_pop(struct walk *w, struct stack *st)
{
        struct frame *f = &st->f[st->n - 1];
        int r = 0;

        if (st->n >= 2 && !st->f[st->n - 2].d) {
                struct frame *p = &st->f[st->n - 2];
                struct stat s;
                int fd = openat(dirfd(f->d), "..", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);

                if ((fd < 0 && errno != ENOENT) || (fd >= 0 && fstat(fd, &s) < 0)) {
                        r = -errno;
                        slots_close(fd);
                        path_pop(w, f->len);
                        r = fail(w, NULL, r, "cannot open the folder above again; what was left of it was not walked");
                        slots_error_fix(w->e, "run the same command again");
                } else if (fd < 0 || s.st_dev != p->dev || s.st_ino != p->ino) {
                        r = fd < 0 ? -ENOENT : -ESTALE;
                        slots_close(fd);
                        path_pop(w, f->len);
                        r = fail_as(w, NULL, r, "the folder was moved during the walk; what was left of it "
                                                "was not walked", false);
                        slots_error_fix(w->e, "run the same command again");
                } else {
                        p->d = fdopendir(fd);
                        if (!p->d) {
                                r = -errno;
                                close(fd);
                                path_pop(w, f->len);
                                r = fail(w, NULL, r, "cannot read the folder");
                        }
                }
                if (r == 0)
                        st->lo = st->n - 2;
        }
        path_pop(w, f->len);
        frame_free(f);
        st->n--;
        if (st->lo > st->n)
                st->lo = st->n;
        return r;
}

/*
 * Walks the tree whose root folder is fd (consumed): the root first, then every
 * entry below it, at any depth.  A bad entry is recorded and the walk goes on;
 * returns 0 or the first failure.
 */
static int walk(struct walk *w, int fd)
{
        struct slots_first first = { 0, NULL };
        struct stack st = { 0 };
        struct statx sx;
        struct stat s;
        int r;

        if (statx(fd, "", AT_EMPTY_PATH, STATX_WANT, &sx) < 0 || fstat(fd, &s) < 0) {
                r = fail(w, NULL, -errno, "cannot stat");
                close(fd);
                return r;
        }
        w->dev_major = sx.stx_dev_major;
        w->dev_minor = sx.stx_dev_minor;
        w->tree_len = w->len;
        w->stats->entries++;
        r = fix_fd(w, fd, &s, NULL);
        if (r < 0) {
                close(fd);
                return r;
        }
        r = stack_push(w, &st, fd, NULL);
        while (r == 0 && st.n > 0) {
                const char *name;
                unsigned char type;
                int child, k;

                k = stack_next(w, &st, &name, &type);
                if (k <= 0) {
                        slots_first_keep(&first, k, NULL);
                        r = stack_pop(w, &st);
                        continue;
                }
                if (is_dot(name))
                        continue;
                w->stats->entries++;
                k = visit(w, dirfd(st.f[st.n - 1].d), name, type, &child);
                if (k == 0 && child >= 0)
                        k = stack_push(w, &st, child, name);
                if (k == -ENOMEM)
                        r = k;
                else
                        slots_first_keep(&first, k, NULL);
        }
        stack_free(&st);
        return r < 0 ? r : first.r;
}

/*
 * Opens (or, with create, makes) each folder of rel below docs_fd without
 * following a symlink.  Made folders: service:service 0711 on the way, the
 * last one service:<last_gid> <last_mode>.  Returns the last folder's fd,
 * -ENOENT when one is missing and create is false, or -errno.
 */
static int open_rel(struct walk *w, int docs_fd, const char *rel, bool create, gid_t last_gid,
                    mode_t last_mode)
{
        char *copy = strdup(rel), *save = NULL, *comp, *next;
        int cur = docs_fd, r = 0;

        if (!copy)
                return fail(w, NULL, -ENOMEM, "out of memory");
        for (comp = strtok_r(copy, "/", &save); comp; comp = next) {
                bool last, made = false;
                struct stat st;
                int fd;

                next = strtok_r(NULL, "/", &save);
                last = next == NULL;
                fd = openat(cur, comp, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
                if (fd < 0 && errno == ENOENT && create) {
                        /* No access at all until owner and mode are set through the fd. */
                        if (mkdirat(cur, comp, 0) == 0)
                                made = true;
                        else if (errno != EEXIST) {
                                r = fail(w, comp, -errno, "cannot create the folder");
                                break;
                        }
                        fd = openat(cur, comp, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
                }
                if (fd < 0) {
                        bool first = !w->failed;
                        struct stat ls;

                        r = -errno;
                        /* O_DIRECTORY | O_NOFOLLOW reports a symlink as ENOTDIR: tell them apart. */
                        if (r == -ENOTDIR && fstatat(cur, comp, &ls, AT_SYMLINK_NOFOLLOW) == 0 &&
                            S_ISLNK(ls.st_mode))
                                r = -ELOOP;
                        /*
                         * At release a symlink or file where a folder should be is no tree:
                         * assign never prepared anything through it, and it is not followed.
                         */
                        if (!create && (r == -ENOENT || r == -ELOOP || r == -ENOTDIR)) {
                                r = -ENOENT;
                                break;
                        }
                        r = fail_as(w, comp, r,
                                    r == -ELOOP ? "is a symbolic link" : r == -ENOTDIR ? "is not a folder"
                                                                                        : "cannot open the folder",
                                    r != -ELOOP && r != -ENOTDIR);
                        if (r == -ELOOP && first)
                                slots_error_fix(w->e, "replace the symbolic link with a folder: symlinks "
                                                      "on the way to a user's tree are never followed");
                        break;
                }
                /*
                 * A folder of ours that a killed run left half made (root's, mode 0: only
                 * root makes such a folder) is finished like a new one.
                 */
                if (!made && create && fstat(fd, &st) == 0 && st.st_uid == geteuid() && (st.st_mode & 07777) == 0)
                        made = true;
                if (made) {
                        /* It must be the folder just made (root's, mode 0) before anyone gets access. */
                        r = fstat(fd, &st) < 0 ? -errno : st.st_uid != geteuid() ? -EPERM : 0;
                        if (r == 0 && fchown(fd, w->svc_uid, last ? last_gid : w->svc_gid) < 0)
                                r = -errno;
                        if (r == 0 && fchmod(fd, last ? last_mode : 0711) < 0)
                                r = -errno;
                        if (r < 0) {
                                r = fail(w, comp, r, "cannot set owner and mode of the new folder");
                                close(fd);
                                break;
                        }
                }
                if (cur != docs_fd)
                        close(cur);
                cur = fd;
                r = path_push(w, comp);
                if (r < 0) {
                        r = fail(w, NULL, r, "out of memory");
                        break;
                }
        }
        free(copy);
        if (r < 0) {
                if (cur != docs_fd)
                        close(cur);
                return r;
        }
        return cur;
}

/* Opens docs_root inside rootfd; -ENOENT is left to the caller to judge. */
static int open_docs(struct walk *w, int rootfd, const struct slots_config *c)
{
        /* No symlink on the way, and nobody but root and the service could have swapped a folder. */
        int fd = slots_open_root_dir(rootfd, c->docs_root, "docs_root", w->svc_uid, w->svc_gid, w->e);

        if (fd >= 0)
                return fd;
        if (fd == -ENOENT) {
                slots_error_set(w->e, fd, c->docs_root, "docs_root does not exist");
                slots_error_fix(w->e, "create the service's document folder, or fix \"docs_root\" in %s",
                                c->path ? c->path : "the config");
                w->failed = true;
                return fd;
        }
        w->failed = true;
        return fd;
}

int slots_tree_prepare(int rootfd, const struct slots_config *c, const char *user, gid_t slot_gid,
                       uid_t service_uid, gid_t service_gid, struct slots_tree_stats *stats,
                       struct slots_error *e)
{
        struct slots_tree_stats dummy = { 0 };
        struct walk w = {
                .mode = PREPARE,
                .have_chmodat2 = true,
                .slot_uid = (uid_t) -1,
                .slot_gid = slot_gid,
                .svc_uid = service_uid,
                .svc_gid = service_gid,
                .stats = stats ? stats : &dummy,
                .e = e,
        };
        char *rel = NULL;
        int docs = -1, fd, r;

        if (!c->docs_root)
                return 0;
        if (!slots_user_valid(user))
                return slots_error_set(e, -EINVAL, "user", "invalid user id");
        r = path_set(&w, c->docs_root);
        if (r < 0)
                return slots_error_set(e, r, c->docs_root, "out of memory");
        rel = slots_config_user_tree(c, user);
        if (!rel) {
                r = fail(&w, NULL, -ENOMEM, "out of memory");
                goto out;
        }
        docs = open_docs(&w, rootfd, c);
        if (docs < 0) {
                r = docs;
                goto out;
        }
        fd = open_rel(&w, docs, rel, true, slot_gid, 02770);
        if (fd < 0) {
                r = fd;
                goto out;
        }
        r = walk(&w, fd);
out:
        slots_close(docs);
        free(rel);
        free(w.path);
        return r;
}

/* Releases docs_fd/rel; a tree that does not exist is nothing to do. */
static int release_one(struct walk *w, int docs_fd, const char *rel, const char *docs_root)
{
        int fd;

        /* Errors name paths from docs_root: the walk starts there again for each tree. */
        path_pop(w, strlen(docs_root));
        fd = open_rel(w, docs_fd, rel, false, 0, 0);
        if (fd == -ENOENT && !w->failed)
                return 0;
        if (fd < 0)
                return fd;
        return walk(w, fd);
}

/*
 * Whether name is the component pattern pat with some valid user id in place
 * of {user}; that user id goes to user (SLOTS_USER_MAX + 1 bytes).
 */
static bool pattern_match(const char *pat, const char *name, char *user)
{
        const char *brace = strstr(pat, "{user}");
        size_t pre = (size_t) (brace - pat), nlen = strlen(name);

        if (!brace || strncmp(pat, name, pre) != 0)
                return false;
        for (size_t len = 1; len <= SLOTS_USER_MAX && pre + len <= nlen; len++) {
                char buf[NAME_MAX + 1], *o = buf;
                const char *p = pat;
                bool fits = true;

                memcpy(user, name + pre, len);
                user[len] = '\0';
                if (!slots_user_valid(user))
                        continue;
                while (*p && fits) {
                        if (strncmp(p, "{user}", 6) == 0) {
                                fits = (size_t) (o - buf) + len < sizeof(buf);
                                if (fits) {
                                        memcpy(o, user, len);
                                        o += len;
                                }
                                p += 6;
                        } else {
                                fits = (size_t) (o - buf) + 1 < sizeof(buf);
                                if (fits)
                                        *o++ = *p++;
                        }
                }
                *o = '\0';
                if (fits && strcmp(buf, name) == 0)
                        return true;
        }
        return false;
}

/* A pending slot: every user tree, found by matching the user_tree pattern at its {user} level. */
static int release_all_trees(struct walk *w, int docs_fd, const struct slots_config *c)
{
        char *tmpl = strdup(c->user_tree), *pat, *slash, *end;
        char user[SLOTS_USER_MAX + 1];
        struct slots_first first = { 0, NULL };
        DIR *d = NULL;
        struct dirent *de;
        int fd = docs_fd, r = 0, k;

        if (!tmpl)
                return fail(w, NULL, -ENOMEM, "out of memory");
        /* The folders before the first {user} component are fixed names. */
        pat = strstr(tmpl, "{user}");
        while (pat > tmpl && pat[-1] != '/')
                pat--;
        end = strchr(pat, '/');
        if (end)
                *end = '\0';
        if (pat > tmpl) {
                pat[-1] = '\0';
                fd = open_rel(w, docs_fd, tmpl, false, 0, 0);
                if (fd < 0) {
                        r = fd == -ENOENT && !w->failed ? 0 : fd;
                        goto out;
                }
        } else {
                fd = dup(docs_fd);
                if (fd < 0) {
                        r = fail(w, NULL, -errno, "cannot open docs_root");
                        goto out;
                }
        }
        d = fdopendir(fd);
        if (!d) {
                r = fail(w, NULL, -errno, "cannot read the folder");
                close(fd);
                goto out;
        }
        for (;;) {
                errno = 0;
                de = readdir(d);
                if (!de) {
                        if (errno)
                                r = fail(w, NULL, -errno, "cannot read the folder");
                        break;
                }
                if (is_dot(de->d_name) || !pattern_match(pat, de->d_name, user))
                        continue;
                slash = slots_config_user_tree(c, user);
                if (!slash) {
                        r = fail(w, NULL, -ENOMEM, "out of memory");
                        break;
                }
                /* One tree's failure never keeps the others from being given back. */
                k = release_one(w, docs_fd, slash, c->docs_root);
                free(slash);
                if (k == -ENOMEM) {
                        r = k;
                        break;
                }
                slots_first_keep(&first, k, NULL);
        }
        closedir(d);
out:
        free(tmpl);
        return r < 0 ? r : first.r;
}

int slots_tree_release(int rootfd, const struct slots_config *c, const char *user, uid_t slot_uid,
                       gid_t slot_gid, uid_t service_uid, gid_t service_gid,
                       struct slots_tree_stats *stats, struct slots_error *e)
{
        struct slots_tree_stats dummy = { 0 };
        struct walk w = {
                .mode = user ? RELEASE_ALL : RELEASE_SLOT,
                .slot_uid = slot_uid,
                .slot_gid = slot_gid,
                .svc_uid = service_uid,
                .svc_gid = service_gid,
                .stats = stats ? stats : &dummy,
                .e = e,
        };
        char *rel = NULL;
        int docs = -1, r;

        if (!c->docs_root)
                return 0;
        if (slot_uid == 0 || slot_gid == 0)
                return slots_error_set(e, -EINVAL, "slot", "refusing to release a tree from uid or gid 0");
        if (user && !slots_user_valid(user))
                return slots_error_set(e, -EINVAL, "user", "invalid user id");
        r = path_set(&w, c->docs_root);
        if (r < 0)
                return slots_error_set(e, r, c->docs_root, "out of memory");
        docs = slots_open_root_dir(rootfd, c->docs_root, "docs_root", service_uid, service_gid, e);
        if (docs == -ENOENT) {
                slots_error_clear(e);
                r = 0;  /* no document tree, so no user tree either */
                goto out;
        }
        if (docs < 0) {
                r = docs;
                goto out;
        }
        if (user) {
                rel = slots_config_user_tree(c, user);
                r = rel ? release_one(&w, docs, rel, c->docs_root) : fail(&w, NULL, -ENOMEM, "out of memory");
        } else {
                r = release_all_trees(&w, docs, c);
        }
out:
        slots_close(docs);
        free(rel);
        free(w.path);
        return r;
}

/* ---- the unlink walk ---- */

/* fail() for an entry of a walk that goes on: only the walk's first failure is kept (and worded). */
static void fail_on(struct walk *w, struct slots_first *first, const char *name, int r, const char *what)
{
        if (first->r == 0)
                slots_first_keep(first, fail(w, name, r, what), NULL);
}

static void unlink_entry(struct walk *w, struct frame *f, const char *name, int flags, struct slots_first *first)
{
        if (unlinkat(dirfd(f->d), name, flags) == 0) {
                f->removed++;
                return;
        }
        if (errno != ENOENT)
                fail_on(w, first, name, -errno, flags ? "cannot remove the folder" : "cannot remove");
}

int slots_tree_empty(int fd, const char *path, struct slots_error *e)
{
        struct slots_tree_stats dummy = { 0 };
        struct walk w = { .stats = &dummy, .e = e };
        struct slots_first first = { 0, NULL };
        struct stack st = { 0 };
        struct statx sx;
        int r;

        r = path_set(&w, path);
        if (r < 0) {
                close(fd);
                return slots_error_set(e, r, path, "out of memory");
        }
        w.tree_len = w.len;
        if (statx(fd, "", AT_EMPTY_PATH, STATX_WANT, &sx) < 0) {
                r = fail(&w, NULL, -errno, "cannot stat");
                close(fd);
                free(w.path);
                return r;
        }
        w.dev_major = sx.stx_dev_major;
        w.dev_minor = sx.stx_dev_minor;
        r = stack_push(&w, &st, fd, NULL);
        while (r == 0 && st.n > 0) {
                struct frame *f = &st.f[st.n - 1];
                const char *name;
                unsigned char type;
                struct stat cs;
                int cfd, dfd = dirfd(f->d), k;

                k = stack_next(&w, &st, &name, &type);
                if (k < 0) {
                        slots_first_keep(&first, k, NULL);
                        k = 0;
                        f->removed = 0;
                }
                if (k == 0) {
                        char *done;

                        /* Entries removed while reading: read once more to be sure none was missed. */
                        if (f->removed > 0 && f->passes < 3) {
                                f->removed = 0;
                                f->passes++;
                                rewinddir(f->d);
                                continue;
                        }
                        done = f->name;
                        f->name = NULL;
                        r = stack_pop(&w, &st);
                        if (r == 0 && done)
                                unlink_entry(&w, &st.f[st.n - 1], done, AT_REMOVEDIR, &first);
                        free(done);
                        continue;
                }
                if (is_dot(name))
                        continue;
                if (type != DT_DIR && type != DT_UNKNOWN) {
                        unlink_entry(&w, f, name, 0, &first);
                        continue;
                }
                if (statx(dfd, name, AT_SYMLINK_NOFOLLOW | AT_NO_AUTOMOUNT, STATX_WANT, &sx) < 0) {
                        if (errno != ENOENT)
                                fail_on(&w, &first, name, -errno, "cannot stat");
                        continue;
                }
                if (!S_ISDIR(sx.stx_mode)) {
                        unlink_entry(&w, f, name, 0, &first);
                        continue;
                }
                if (!same_fs(&w, &sx)) {
                        if (first.r == 0) {
                                fail_on(&w, &first, name, -EBUSY,
                                        "is a mount point or another file system, never entered");
                                slots_error_fix(e, "unmount it");
                        }
                        continue;
                }
                cfd = openat(dfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
                if (cfd < 0) {
                        if (errno == ELOOP || errno == ENOTDIR)
                                unlink_entry(&w, f, name, 0, &first);
                        else if (errno != ENOENT)
                                fail_on(&w, &first, name, -errno, "cannot open the folder");
                        continue;
                }
                if (fstat(cfd, &cs) < 0) {
                        k = -errno;
                        close(cfd);
                        fail_on(&w, &first, name, k, "cannot stat");
                        continue;
                }
                if (!same_inode(&cs, &sx)) {
                        close(cfd);
                        fail_on(&w, &first, name, -EAGAIN, "the folder changed during the walk");
                        continue;
                }
                {
                        char *copy = strdup(name);

                        if (!copy) {
                                close(cfd);
                                r = fail(&w, name, -ENOMEM, "out of memory");
                                break;
                        }
                        /* stack_push may move st.f: f is not used after it. */
                        r = stack_push(&w, &st, cfd, copy);
                        if (r < 0) {
                                free(copy);
                                if (r != -ENOMEM) {
                                        slots_first_keep(&first, r, NULL);
                                        r = 0;
                                }
                                continue;
                        }
                        st.f[st.n - 1].name = copy;
                }
        }
        stack_free(&st);
        free(w.path);
        return r < 0 ? r : first.r;
}
