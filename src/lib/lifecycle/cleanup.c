/* Release hygiene for a slot account in files: scheduled jobs, the mailbox, home, state and run. */
#include <ctype.h>
#include <sched.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ipc.h>
#include <sys/mount.h>
#include <sys/syscall.h>
#include <linux/keyctl.h>
#include <sys/msg.h>
#include <sys/sem.h>
#include <sys/shm.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "child.h"
#include "cleanup-int.h"
#include "cleanup.h"
#include "fsutil.h"
#include "ids.h"
#include "path.h"
#include "privdrop.h"
#include "tree.h"

#define CRONTABS "/var/spool/cron/crontabs"
static const char *const at_dirs[] = { "/var/spool/cron/atjobs", "/var/spool/cron/atspool" };
#define MAIL_DIR "/var/mail"
#define LINGER_DIR "/var/lib/systemd/linger"

/* ---- files ---- */

int cleanup_open_dir_in(int rootfd, const char *path)
{
        return slots_open_in(rootfd, path, O_RDONLY | O_DIRECTORY);
}

/*
 * A folder whose every entry root may remove or hand over (a temp folder, a shared
 * folder's way): through the owner chain, so no component on the way can have been
 * swapped by a slot.  Symlinks only when root (or trusted_uid) made them: /var/tmp may
 * be a link to /tmp.  -ENOENT quietly; any other refusal names the component and the fix.
 */
int cleanup_open_walk_root(int rootfd, const char *path, uid_t trusted_uid, gid_t trusted_gid, struct slots_error *e)
{
        struct slots_chase how = {
                .flags = SLOTS_CHASE_MUST_DIR | SLOTS_CHASE_TRUSTED,
                .trusted_uid = trusted_uid,
                .trusted_gid = trusted_gid,
                .open_flags = O_RDONLY | O_DIRECTORY,
        };

        return slots_chase(rootfd, path, &how, NULL, e);
}

int cleanup_open_slot_end(int rootfd, const char *dir, uid_t slot_uid, uid_t trusted_uid, gid_t trusted_gid,
                          struct slots_error *e)
{
        struct slots_chase how = {
                .flags = SLOTS_CHASE_PARENT | SLOTS_CHASE_TRUSTED,
                .trusted_uid = trusted_uid,
                .trusted_gid = trusted_gid,
                .open_flags = O_RDONLY | O_DIRECTORY,
        };
        const char *base;
        struct stat st;
        int pfd = slots_chase(rootfd, dir, &how, &base, e), fd;

        if (pfd < 0)
                return pfd;
        fd = openat(pfd, base, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
        fd = fd < 0 ? -errno : fd;
        close(pfd);
        if (fd == -ENOENT)
                return fd;
        if (fd < 0)
                return slots_error_set(e, fd, dir, "cannot open: %s", strerror(-fd));
        if (fstat(fd, &st) < 0) {
                int r = -errno;

                close(fd);
                return slots_error_set(e, r, dir, "cannot stat: %s", strerror(-r));
        }
        if (st.st_uid != slot_uid && st.st_uid != 0 && st.st_uid != trusted_uid) {
                close(fd);
                return slots_error_refuse(e, -EPERM, dir, "belongs to uid %u, neither the slot, root nor the service: "
                                          "not walked", (unsigned) st.st_uid);
        }
        return fd;
}

/*
 * Opens the folder dfd/name that statx showed as *sx, never following a link: -ESTALE when
 * what opened is not that folder (renamed over since the look; with same_owner, or now of
 * another owner), -errno when it cannot be opened or looked at, else an fd.
 */
static int open_seen_dir(int dfd, const char *name, const struct statx *sx, bool same_owner)
{
        struct stat st;
        int fd = openat(dfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC), r;

        if (fd < 0)
                return -errno;
        if (fstat(fd, &st) < 0) {
                r = -errno;
                close(fd);
                return r;
        }
        if (st.st_ino != sx->stx_ino || (same_owner && st.st_uid != sx->stx_uid) ||
            st.st_dev != makedev(sx->stx_dev_major, sx->stx_dev_minor)) {
                close(fd);
                return -ESTALE;
        }
        return fd;
}

/* One entry of a top folder: removed when uid owns it (a folder with all it holds); 0 or -errno with e set. */
static int clean_top_entry(int fd, const char *name, const char *path, uid_t uid, const struct statx *top,
                           struct slots_error *e)
{
        struct statx sx;
        int cfd, r;

        if (statx(fd, name, AT_SYMLINK_NOFOLLOW | AT_NO_AUTOMOUNT, STATX_BASIC_STATS, &sx) < 0)
                /* Gone is fine; an entry that cannot be looked at may be the slot's. */
                return errno == ENOENT ? 0 : slots_error_set(e, -errno, path, "cannot stat: %s", strerror(errno));
        if (sx.stx_uid != uid)
                return 0;
        if (!S_ISDIR(sx.stx_mode)) {
                if (unlinkat(fd, name, 0) < 0 && errno != ENOENT)
                        return slots_error_set(e, -errno, path, "cannot remove: %s", strerror(errno));
                return 0;
        }
        if (sx.stx_dev_major != top->stx_dev_major || sx.stx_dev_minor != top->stx_dev_minor ||
            (sx.stx_attributes & sx.stx_attributes_mask & STATX_ATTR_MOUNT_ROOT)) {
                slots_error_refuse(e, -EBUSY, path, "is a mount point, never entered");
                slots_error_fix(e, "unmount it");
                return -EBUSY;
        }
        cfd = open_seen_dir(fd, name, &sx, true);
        if (cfd < 0)
                return cfd == -ENOENT || cfd == -ESTALE ? 0 : slots_error_set(e, cfd, path, "cannot open: %s",
                                                                              strerror(-cfd));
        r = slots_tree_empty(cfd, path, e);
        if (r == 0 && unlinkat(fd, name, AT_REMOVEDIR) < 0 && errno != ENOENT)
                r = slots_error_set(e, -errno, path, "cannot remove the folder: %s", strerror(errno));
        return r;
}

/* Removes the entries of folder dir owned by uid: files and links themselves, folders with all they hold. */
static int clean_top(int rootfd, const char *dir, uid_t uid, struct slots_error *e)
{
        struct slots_first first = { 0, e };
        struct slots_error sub;
        struct statx top;
        struct dirent *de;
        DIR *d;
        int fd;

        fd = cleanup_open_dir_in(rootfd, dir);
        if (fd == -ENOENT)
                return 0;
        if (fd < 0)
                return slots_error_set(e, fd, dir, "cannot open: %s", strerror(-fd));
        if (statx(fd, "", AT_EMPTY_PATH, STATX_BASIC_STATS, &top) < 0 || !(d = fdopendir(fd))) {
                int r = -errno;
                close(fd);
                return slots_error_set(e, r, dir, "cannot read: %s", strerror(-r));
        }
        while ((errno = 0, de = readdir(d))) {
                char *path;
                int r;

                if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
                        continue;
                path = slots_path_join(dir, de->d_name);
                if (!path) {
                        slots_first_keep(&first, slots_error_set(&sub, -ENOMEM, dir, "out of memory"), &sub);
                        break;
                }
                r = clean_top_entry(fd, de->d_name, path, uid, &top, &sub);
                free(path);
                slots_first_keep(&first, r, &sub);
        }
        if (errno)
                slots_first_keep(&first, slots_error_set(&sub, -errno, dir, "cannot read: %s", strerror(errno)), &sub);
        closedir(d);
        return first.r;
}

/* The slot's crontab (Debian's spool), whatever its owner: the file is named after the account. */
static int clean_crontab(int rootfd, const char *name, struct slots_error *e)
{
        int fd = cleanup_open_dir_in(rootfd, CRONTABS), r = 0;

        if (fd == -ENOENT)
                return 0;
        if (fd < 0)
                return slots_error_set(e, fd, CRONTABS, "cannot open: %s", strerror(-fd));
        if (unlinkat(fd, name, 0) < 0 && errno != ENOENT)
                r = slots_error_set(e, -errno, CRONTABS, "cannot remove the crontab %s: %s", name, strerror(errno));
        close(fd);
        return r;
}

/*
 * A new empty mailbox in place of the one looked at (*st): made under a name of
 * release's own, exactly slot:mail 0660 through its fd (never the old one's
 * owner, group or mode: the holder chose those), and renamed over the name, so
 * a descriptor kept on the old one never sees the next user's mail.  Only when
 * the name still holds what was looked at.
 */
static int replace_mail(int dfd, const char *name, const struct stat *st, uid_t uid, gid_t mail_gid,
                        struct slots_error *e)
{
        char tmp[SLOTS_NAME_MAX + 16];
        struct stat now;
        int fd, r = 0;

        snprintf(tmp, sizeof(tmp), ".%s.slots-new", name);
        if (unlinkat(dfd, tmp, 0) < 0 && errno != ENOENT)
                return slots_error_set(e, -errno, MAIL_DIR, "cannot remove %s (left by an earlier release): %s", tmp,
                                       strerror(errno));
        fd = openat(dfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC, 0);
        if (fd < 0)
                return slots_error_set(e, -errno, MAIL_DIR, "cannot make a new mailbox %s: %s", tmp, strerror(errno));
        if (fchown(fd, uid, mail_gid) < 0 || fchmod(fd, 0660) < 0)
                r = slots_error_set(e, -errno, MAIL_DIR, "cannot set the new mailbox's owner and mode: %s",
                                    strerror(errno));
        close(fd);
        /* The name may have been swapped since the look: act only on what was looked at. */
        if (r == 0 && fstatat(dfd, name, &now, AT_SYMLINK_NOFOLLOW) < 0)
                r = errno == ENOENT ? 0 : slots_error_set(e, -errno, MAIL_DIR, "cannot stat the mailbox %s: %s",
                                                          name, strerror(errno));
        else if (r == 0 && now.st_ino == st->st_ino && now.st_dev == st->st_dev &&
                 (renameat(dfd, tmp, dfd, name) < 0 || fsync(dfd) < 0))
                r = slots_error_set(e, -errno, MAIL_DIR, "cannot put the new mailbox %s in place: %s", name,
                                    strerror(errno));
        if (unlinkat(dfd, tmp, 0) < 0 && errno != ENOENT && r == 0)
                r = slots_error_set(e, -errno, MAIL_DIR, "cannot remove %s: %s", tmp, strerror(errno));
        return r;
}

/*
 * The mail spool file is replaced by an empty one, exactly slot:mail 0660, whoever
 * owned the old one and whatever its group and mode: only a regular file with one
 * link.  Anything else under the slot's name (a symlink, a FIFO, a second name of
 * another file), and the mailbox itself on a host without a mail group (the MTA
 * makes the next one), loses the name, never its content.
 */
int cleanup_clean_mail(int rootfd, const struct slots_pw *slot, struct slots_error *e)
{
        struct slots_gr mail = { 0 };
        struct stat st;
        int dfd, r = 0, found = 0;

        dfd = cleanup_open_dir_in(rootfd, MAIL_DIR);
        if (dfd == -ENOENT)
                return 0;
        if (dfd < 0)
                return slots_error_set(e, dfd, MAIL_DIR, "cannot open: %s", strerror(-dfd));
        if (fstatat(dfd, slot->name, &st, AT_SYMLINK_NOFOLLOW) < 0) {
                if (errno != ENOENT)
                        r = slots_error_set(e, -errno, MAIL_DIR, "cannot stat the mailbox %s: %s", slot->name,
                                            strerror(errno));
        } else if (!S_ISREG(st.st_mode) || st.st_nlink != 1 || (found = slots_nss_group("mail", &mail)) == 0) {
                if (unlinkat(dfd, slot->name, 0) < 0 && errno != ENOENT)
                        r = slots_error_set(e, -errno, MAIL_DIR, "cannot remove %s (not a plain mailbox): %s",
                                            slot->name, strerror(errno));
        } else if (found < 0) {
                r = slots_error_set(e, found, "mail", "group lookup failed: %s", strerror(-found));
        } else {
                r = replace_mail(dfd, slot->name, &st, slot->uid, mail.gid, e);
        }
        slots_gr_clear(&mail);
        close(dfd);
        return r;
}

/* ---- scheduled jobs ---- */

/* The lingering flag systemd-logind keeps per account: with it, the user's manager starts at boot. */
static int clean_linger(int rootfd, const char *name, struct slots_error *e)
{
        int fd = cleanup_open_dir_in(rootfd, LINGER_DIR), r = 0;

        if (fd == -ENOENT)
                return 0;
        if (fd < 0)
                return slots_error_set(e, fd, LINGER_DIR, "cannot open: %s", strerror(-fd));
        if (unlinkat(fd, name, 0) < 0 && errno != ENOENT)
                r = slots_error_set(e, -errno, LINGER_DIR, "cannot remove the lingering flag %s: %s", name,
                                    strerror(errno));
        close(fd);
        return r;
}

int slots_cleanup_jobs(int rootfd, const struct slots_pw *slot, struct slots_error *e)
{
        struct slots_first first = { 0, e };
        struct slots_error sub;

        if (slot->uid == 0 || slot->gid == 0)
                return slots_error_refuse(e, -EINVAL, slot->name, "refusing to clean up after uid or gid 0");
        slots_first_keep(&first, clean_crontab(rootfd, slot->name, &sub), &sub);
        for (size_t i = 0; i < sizeof(at_dirs) / sizeof(at_dirs[0]); i++)
                slots_first_keep(&first, clean_top(rootfd, at_dirs[i], slot->uid, &sub), &sub);
        slots_first_keep(&first, clean_linger(rootfd, slot->name, &sub), &sub);
        return first.r;
}

/* ---- home, state, run: empty, and exactly slot:slot 0700 without ACL or xattr ---- */

static const char *const kinds[] = { "home", "state", "run" };

/* LSM labels are the policy's, not the user's; every other attribute (user.*, ACLs, trusted.*) goes. */
static bool xattr_kept(const char *name)
{
        return strncmp(name, "security.", 9) == 0 && strcmp(name, "security.capability") != 0;
}

/* The attribute names of fd (malloc'ed, *len bytes), or NULL with *len 0 when none or not supported. */
static int xattr_names(int fd, char **names, ssize_t *len)
{
        *names = NULL;
        *len = 0;
        for (;;) {
                ssize_t n = flistxattr(fd, NULL, 0);
                char *buf;

                if (n < 0)
                        return errno == EOPNOTSUPP || errno == ENOTSUP ? 0 : -errno;
                if (n == 0)
                        return 0;
                buf = malloc((size_t) n);
                if (!buf)
                        return -ENOMEM;
                *len = flistxattr(fd, buf, (size_t) n);
                if (*len >= 0) {
                        *names = buf;
                        return 0;
                }
                free(buf);
                if (errno != ERANGE)
                        return -errno;
        }
}

/* The first attribute of fd that release removes, copied into out, or "" when none. */
static int xattr_first_foreign(int fd, char *out, size_t size)
{
        char *names;
        ssize_t len;
        int r = xattr_names(fd, &names, &len);

        out[0] = '\0';
        for (ssize_t i = 0; r == 0 && i < len; i += (ssize_t) strlen(names + i) + 1)
                if (!xattr_kept(names + i)) {
                        snprintf(out, size, "%s", names + i);
                        break;
                }
        free(names);
        return r;
}

static int xattr_strip(int fd, const char *path, struct slots_error *e)
{
        char *names;
        ssize_t len;
        int r = xattr_names(fd, &names, &len);

        if (r < 0)
                return slots_error_set(e, r, path, "cannot list extended attributes: %s", strerror(-r));
        for (ssize_t i = 0; i < len; i += (ssize_t) strlen(names + i) + 1) {
                if (xattr_kept(names + i))
                        continue;
                if (fremovexattr(fd, names + i) < 0 && errno != ENODATA) {
                        r = slots_error_set(e, -errno, path, "cannot remove the extended attribute %s: %s",
                                            names + i, strerror(errno));
                        break;
                }
        }
        free(names);
        return r;
}

/* Opens <slots_root>/<kind>/<name> (never a symlink) with its parent; -ENOENT when either is missing. */
static int open_slot_folder(int rootfd, const struct slots_config *c, const char *kind, const char *name,
                            char **pathp, struct slots_error *e)
{
        char *parent = slots_path_join(c->slots_root, kind), *path;
        int pfd, fd;

        *pathp = NULL;
        path = parent ? slots_path_join(parent, name) : NULL;
        if (!path) {
                free(parent);
                return slots_error_set(e, -ENOMEM, c->slots_root, "out of memory");
        }
        *pathp = path;
        pfd = cleanup_open_dir_in(rootfd, parent);
        if (pfd < 0) {
                slots_error_set(e, pfd, parent, "cannot open: %s", strerror(-pfd));
                if (pfd == -ENOENT)
                        slots_error_fix(e, "run slots-provision, which makes it");
                free(parent);
                return pfd;
        }
        free(parent);
        fd = openat(pfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
        if (fd < 0) {
                int err = errno;
                struct stat ls;

                if (err == ENOTDIR && fstatat(pfd, name, &ls, AT_SYMLINK_NOFOLLOW) == 0 && S_ISLNK(ls.st_mode))
                        err = ELOOP;
                slots_error_set(e, -err, path, "cannot open: %s%s", strerror(err),
                                err == ELOOP ? " (a symbolic link)" : "");
                if (err == ENOENT)
                        slots_error_fix(e, "run slots-provision, which makes it");
                else if (err == ELOOP || err == ENOTDIR)
                        slots_error_fix(e, "remove it (rm %s), then: slots-admin release --slot %s", path, name);
                close(pfd);
                return -err;
        }
        close(pfd);
        return fd;
}

/*
 * The parent of the slot folders of one kind, <slots_root>/<kind>: the fresh
 * folder is made and swapped in there, so it must be root's and writable by
 * root alone (-EPERM with the fix otherwise: anyone else could plant the name).
 */
static int open_kind_parent(int rootfd, const struct slots_config *c, const char *kind, struct slots_error *e)
{
        char *parent = slots_path_join(c->slots_root, kind);
        struct stat st;
        int pfd;

        if (!parent)
                return slots_error_set(e, -ENOMEM, c->slots_root, "out of memory");
        pfd = cleanup_open_dir_in(rootfd, parent);
        if (pfd < 0) {
                slots_error_set(e, pfd, parent, "cannot open: %s", strerror(-pfd));
                if (pfd == -ENOENT)
                        slots_error_fix(e, "run slots-provision, which makes it");
        } else if (fstat(pfd, &st) < 0) {
                pfd = slots_error_set(e, -errno, parent, "cannot stat: %s", strerror(errno));
        } else if (st.st_uid != 0 || (st.st_mode & (S_IWGRP | S_IWOTH))) {
                slots_error_set(e, -EPERM, parent, "is uid %u mode %04o: release makes the slots' fresh folders "
                                "only in a folder of root's that root alone may write", (unsigned) st.st_uid,
                                st.st_mode & 07777);
                slots_error_fix(e, "chown root:root %s && chmod 0755 %s (as slots-provision makes it)", parent,
                                parent);
                close(pfd);
                pfd = -EPERM;
        }
        free(parent);
        return pfd;
}

/* Takes the folder fd from everyone but root: no name can be added to it any more, through any fd. */
static int lock_folder(int fd, const char *path, struct slots_error *e)
{
        if (fchown(fd, 0, 0) < 0 || fchmod(fd, 0) < 0)
                return slots_error_set(e, -errno, path, "cannot take it from the slot: %s", strerror(errno));
        return 0;
}

/*
 * Removes the folder name of pfd (a fresh folder or an old one an earlier run
 * left under a name of release's own; only root writes in pfd): locked,
 * emptied, removed.  Missing is fine.
 */
static int discard_folder(int pfd, const char *name, const char *path, struct slots_error *e)
{
        int fd = openat(pfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC), r;

        if (fd < 0 && (errno == ENOTDIR || errno == ELOOP))
                return unlinkat(pfd, name, 0) < 0 && errno != ENOENT
                               ? slots_error_set(e, -errno, path, "cannot remove: %s", strerror(errno)) : 0;
        if (fd < 0)
                return errno == ENOENT ? 0 : slots_error_set(e, -errno, path, "cannot open: %s", strerror(errno));
        r = lock_folder(fd, path, e);
        if (r < 0) {
                close(fd);
                return r;
        }
        r = slots_tree_empty(fd, path, e);
        if (r == 0 && unlinkat(pfd, name, AT_REMOVEDIR) < 0 && errno != ENOENT)
                r = slots_error_set(e, -errno, path, "cannot remove the folder: %s", strerror(errno));
        return r;
}

/* A new folder name in pfd, made mode 0, then exactly slot:gid 0700 with no ACL or attribute, through its fd. */
static int make_fresh(int pfd, const char *name, const char *path, uid_t uid, gid_t gid, struct slots_error *e)
{
        struct stat st;
        bool made;
        int fd, r = 0;

        fd = slots_dir_make(pfd, name, 0, NULL, path, &made, e);
        if (fd >= 0 && !made) {
                close(fd);
                fd = -EEXIST;
        }
        if (fd < 0)
                return slots_error_set(e, fd, path, "cannot make the fresh folder: %s", strerror(-fd));
        /* A default ACL of the parent is inherited: it goes with every other attribute. */
        r = xattr_strip(fd, path, e);
        if (r == 0 && fchown(fd, uid, gid) < 0)
                r = slots_error_set(e, -errno, path, "cannot set the owner: %s", strerror(errno));
        if (r == 0 && fchmod(fd, 0700) < 0)
                r = slots_error_set(e, -errno, path, "cannot set the mode: %s", strerror(errno));
        if (r == 0 && fstat(fd, &st) < 0)
                r = slots_error_set(e, -errno, path, "cannot stat: %s", strerror(errno));
        if (r == 0 && (st.st_uid != uid || st.st_gid != gid || (st.st_mode & 07777) != 0700))
                r = slots_error_set(e, -EPERM, path, "owner or mode did not change (%u:%u %04o)",
                                    (unsigned) st.st_uid, (unsigned) st.st_gid, st.st_mode & 07777);
        close(fd);
        return r;
}

/* Puts the fresh folder fresh in the place of name (the old one ends at fresh, or at old where the exchange is not supported). */
static int swap_in(int pfd, const char *name, const char *fresh, const char *old, bool had_old, const char *path,
                   struct slots_error *e)
{
        if (!had_old)
                return renameat(pfd, fresh, pfd, name) < 0
                               ? slots_error_set(e, -errno, path, "cannot put the fresh folder in place: %s",
                                                 strerror(errno)) : 0;
        if (renameat2(pfd, fresh, pfd, name, RENAME_EXCHANGE) == 0)
                return 0;
        if (errno != EINVAL && errno != ENOSYS && errno != EXDEV)
                return slots_error_set(e, -errno, path, "cannot swap in the fresh folder: %s", strerror(errno));
        /*
         * A file system without the exchange: two renames, a moment without the folder (nobody runs
         * as the slot).  An overlay's lower folder cannot move at all (EXDEV): it is emptied and
         * removed where it is, already taken from everyone, before the fresh one takes its name.
         */
        if (renameat(pfd, name, pfd, old) < 0) {
                int r = errno == EXDEV ? discard_folder(pfd, name, path, e)
                                       : slots_error_set(e, -errno, path, "cannot move the old folder aside: %s",
                                                         strerror(errno));
                if (r < 0)
                        return r;
        }
        if (renameat(pfd, fresh, pfd, name) < 0)
                return slots_error_set(e, -errno, path, "cannot put the fresh folder in place: %s", strerror(errno));
        return 0;
}

/* Whether the folder fd is a mount of its own (another file system than pfd's, or a bind mount's root). */
static bool is_mount_root(int pfd, int fd)
{
        struct statx p, f;

        if (statx(pfd, "", AT_EMPTY_PATH, STATX_BASIC_STATS, &p) < 0 ||
            statx(fd, "", AT_EMPTY_PATH, STATX_BASIC_STATS, &f) < 0)
                return false;   /* the swap will tell */
        return p.stx_dev_major != f.stx_dev_major || p.stx_dev_minor != f.stx_dev_minor ||
               (f.stx_attributes_mask & f.stx_attributes & STATX_ATTR_MOUNT_ROOT);
}

/*
 * A folder that is a mount point itself cannot be swapped: it is emptied where
 * it is and set back to exactly slot:gid 0700 without ACL or attribute (fd consumed).
 */
static int reset_in_place(int fd, const char *path, uid_t uid, gid_t gid, struct slots_error *e)
{
        struct stat st;
        int efd = fcntl(fd, F_DUPFD_CLOEXEC, 3), r;

        r = efd < 0 ? slots_error_set(e, -errno, path, "cannot open: %s", strerror(errno))
                    : slots_tree_empty(efd, path, e);
        if (r == 0)
                r = xattr_strip(fd, path, e);
        if (r == 0 && (fchown(fd, uid, gid) < 0 || fchmod(fd, 0700) < 0))
                r = slots_error_set(e, -errno, path, "cannot set the owner and mode: %s", strerror(errno));
        if (r == 0 && fstat(fd, &st) < 0)
                r = slots_error_set(e, -errno, path, "cannot stat: %s", strerror(errno));
        if (r == 0 && (st.st_uid != uid || st.st_gid != gid || (st.st_mode & 07777) != 0700))
                r = slots_error_set(e, -EPERM, path, "owner or mode did not change (%u:%u %04o)",
                                    (unsigned) st.st_uid, (unsigned) st.st_gid, st.st_mode & 07777);
        close(fd);
        return r;
}

/*
 * One of home, state and run: the old folder (if any) is taken from everyone,
 * a fresh one is made beside it and swapped in, and only then is the old one
 * emptied (each folder taken from everyone as the walk enters it) and removed.
 * Every part is safe to repeat: what a killed run left under release's own
 * names (.<slot>.slots-fresh, .<slot>.slots-old) goes first.  A folder that is
 * a mount point of its own is reset in place instead.
 */
static int fresh_folder(int pfd, const char *name, const char *path, uid_t uid, gid_t gid, struct slots_error *e)
{
        char fresh[SLOTS_NAME_MAX + 16], old[SLOTS_NAME_MAX + 16], fpath[PATH_MAX], opath[PATH_MAX];
        int plen = (int) (strlen(path) - strlen(name)), ofd, r;

        snprintf(fresh, sizeof(fresh), ".%s.slots-fresh", name);
        snprintf(old, sizeof(old), ".%s.slots-old", name);
        snprintf(fpath, sizeof(fpath), "%.*s%s", plen, path, fresh);
        snprintf(opath, sizeof(opath), "%.*s%s", plen, path, old);
        if ((r = discard_folder(pfd, fresh, fpath, e)) < 0 || (r = discard_folder(pfd, old, opath, e)) < 0)
                return r;
        ofd = openat(pfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
        if (ofd < 0 && errno != ENOENT) {
                int err = errno;
                struct stat ls;

                if (err == ENOTDIR && fstatat(pfd, name, &ls, AT_SYMLINK_NOFOLLOW) == 0 && S_ISLNK(ls.st_mode))
                        err = ELOOP;
                slots_error_set(e, -err, path, "cannot open: %s%s", strerror(err),
                                err == ELOOP ? " (a symbolic link)" : "");
                if (err == ELOOP || err == ENOTDIR)
                        slots_error_fix(e, "remove it (rm %s), then: slots-admin release --slot %s", path, name);
                return -err;
        }
        if (ofd >= 0 && is_mount_root(pfd, ofd))
                return reset_in_place(ofd, path, uid, gid, e);
        /* Taken from everyone, then swapped out before it is emptied: a neighbour busy inside holds nothing up. */
        if (ofd >= 0) {
                r = lock_folder(ofd, path, e);
                close(ofd);
                if (r < 0)
                        return r;
        }
        r = make_fresh(pfd, fresh, fpath, uid, gid, e);
        if (r == 0)
                r = swap_in(pfd, name, fresh, old, ofd >= 0, path, e);
        /* The swap on disk before anything else is: a power loss must not bring the old folder back. */
        if (r == 0 && fsync(pfd) < 0)
                r = slots_error_set(e, -errno, path, "cannot sync its folder: %s", strerror(errno));
        /*
         * The old one, now under the fresh name, shown by the path it had.  What cannot be
         * emptied (a mount inside) goes back where the admin knows it; the slot stays pending.
         */
        if (r == 0 && (r = discard_folder(pfd, fresh, ofd >= 0 ? path : fpath, e)) < 0 && ofd >= 0)
                (void) renameat2(pfd, fresh, pfd, name, RENAME_EXCHANGE);
        if (r == 0)
                r = discard_folder(pfd, old, opath, e);
        return r;
}

int slots_cleanup_folders(int rootfd, const struct slots_config *c, const struct slots_pw *slot, gid_t slot_gid,
                          struct slots_error *e)
{
        struct slots_first first = { 0, e };
        struct slots_error sub;

        if (slot->uid == 0 || slot_gid == 0)
                return slots_error_refuse(e, -EINVAL, slot->name, "refusing to reset the folders of uid or gid 0");
        for (size_t i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++) {
                char *parent = slots_path_join(c->slots_root, kinds[i]), *path;
                int pfd;

                path = parent ? slots_path_join(parent, slot->name) : NULL;
                free(parent);
                slots_error_clear(&sub);
                if (!path) {
                        slots_first_keep(&first, slots_error_set(&sub, -ENOMEM, c->slots_root, "out of memory"), &sub);
                        break;
                }
                pfd = open_kind_parent(rootfd, c, kinds[i], &sub);
                if (pfd >= 0) {
                        slots_first_keep(&first, fresh_folder(pfd, slot->name, path, slot->uid, slot_gid, &sub), &sub);
                        close(pfd);
                } else {
                        slots_first_keep(&first, pfd, &sub);
                }
                free(path);
        }
        return first.r;
}

/* One of home, state and run as slots_check_folders() wants it: 0, or -errno with e set. */
static int check_folder(int rootfd, const struct slots_config *c, const char *kind, const char *name, uid_t uid,
                        gid_t gid, bool in_use, struct slots_error *e)
{
        char *path, attr[256];
        struct dirent *de;
        struct stat st;
        bool empty = true;
        DIR *d;
        int fd, r;

        fd = open_slot_folder(rootfd, c, kind, name, &path, e);
        if (fd < 0) {
                slots_error_fix(e, "slots-admin release --slot %s (it makes the folder again)", name);
                free(path);
                return fd;
        }
        if (fstat(fd, &st) < 0) {
                r = slots_error_set(e, -errno, path, "cannot stat: %s", strerror(errno));
                close(fd);
                goto out;
        }
        r = xattr_first_foreign(fd, attr, sizeof(attr));
        if (r < 0) {
                close(fd);
                r = slots_error_set(e, r, path, "cannot list extended attributes: %s", strerror(-r));
                goto out;
        }
        d = fdopendir(fd);
        if (!d) {
                r = -errno;
                close(fd);
                r = slots_error_set(e, r, path, "cannot read: %s", strerror(-r));
                goto out;
        }
        while (empty && (de = readdir(d)))
                empty = strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0;
        closedir(d);
        r = -EPERM;
        if (st.st_uid != uid || st.st_gid != gid || (st.st_mode & 07777) != 0700)
                slots_error_set(e, r, path, "is %u:%u %04o, not %s:%s 0700 (uid %u, gid %u)", (unsigned) st.st_uid,
                                (unsigned) st.st_gid, st.st_mode & 07777, name, name, (unsigned) uid, (unsigned) gid);
        else if (!empty && !in_use)
                slots_error_set(e, r, path, "is not empty: the last user's files are still there");
        else if (attr[0] && !in_use)
                slots_error_set(e, r, path, "has the extended attribute %s (an ACL or the last user's data)", attr);
        else
                r = 0;
        if (r < 0)
                slots_error_fix(e, "slots-admin release --slot %s (it empties the folder and sets it back)", name);
out:
        free(path);
        return r;
}

int slots_check_folders(int rootfd, const struct slots_config *c, const char *name, uid_t uid, gid_t gid,
                        bool in_use, struct slots_error *e)
{
        for (size_t i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++) {
                int r = check_folder(rootfd, c, kinds[i], name, uid, gid, in_use, e);

                if (r < 0)
                        return r;
        }
        return 0;
}
