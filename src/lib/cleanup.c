/* Release hygiene for a slot account: every object the account can leave behind, one function each. */
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
#include "cleanup.h"
#include "fsutil.h"
#include "path.h"
#include "privdrop.h"
#include "tree.h"

/* Folders whose files of the slot, at any depth, go at release (/run/user/<uid> is added). */
static const char *const temp_dirs[] = { "/tmp", "/var/tmp", "/dev/shm", "/run/lock" };

#define CRONTABS "/var/spool/cron/crontabs"
static const char *const at_dirs[] = { "/var/spool/cron/atjobs", "/var/spool/cron/atspool" };
#define MAIL_DIR "/var/mail"
#define LINGER_DIR "/var/lib/systemd/linger"

/* ---- files ---- */

static int open_dir_in(int rootfd, const char *path)
{
        return slots_open_in(rootfd, path, O_RDONLY | O_DIRECTORY);
}

/*
 * A folder whose every entry root may remove or hand over (a temp folder, a shared
 * folder's way): through the owner chain, so no component on the way can have been
 * swapped by a slot.  Symlinks only when root (or trusted_uid) made them: /var/tmp may
 * be a link to /tmp.  -ENOENT quietly; any other refusal names the component and the fix.
 */
static int open_walk_root(int rootfd, const char *path, uid_t trusted_uid, gid_t trusted_gid, struct slots_error *e)
{
        struct slots_chase how = {
                .flags = SLOTS_CHASE_MUST_DIR | SLOTS_CHASE_TRUSTED,
                .trusted_uid = trusted_uid,
                .trusted_gid = trusted_gid,
                .open_flags = O_RDONLY | O_DIRECTORY,
        };

        return slots_chase(rootfd, path, &how, NULL, e);
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

/* Removes the entries of folder dir owned by uid: files and links themselves, folders with all they hold. */
static int clean_top(int rootfd, const char *dir, uid_t uid, struct slots_error *e)
{
        struct slots_first first = { 0, e };
        struct slots_error sub;
        struct statx top, sx;
        struct dirent *de;
        DIR *d;
        int fd;

        fd = open_dir_in(rootfd, dir);
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
                char path[4096];
                int cfd, r;

                if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
                        continue;
                slots_path_join_to(path, sizeof(path), dir, de->d_name);
                if (statx(fd, de->d_name, AT_SYMLINK_NOFOLLOW | AT_NO_AUTOMOUNT, STATX_BASIC_STATS, &sx) < 0) {
                        /* Gone is fine; an entry that cannot be looked at may be the slot's. */
                        if (errno != ENOENT)
                                slots_first_keep(&first, slots_error_set(&sub, -errno, path, "cannot stat: %s",
                                                                         strerror(errno)), &sub);
                        continue;
                }
                if (sx.stx_uid != uid)
                        continue;
                if (!S_ISDIR(sx.stx_mode)) {
                        if (unlinkat(fd, de->d_name, 0) < 0 && errno != ENOENT)
                                slots_first_keep(&first, slots_error_set(&sub, -errno, path, "cannot remove: %s",
                                                                         strerror(errno)), &sub);
                        continue;
                }
                if (sx.stx_dev_major != top.stx_dev_major || sx.stx_dev_minor != top.stx_dev_minor ||
                    (sx.stx_attributes & sx.stx_attributes_mask & STATX_ATTR_MOUNT_ROOT)) {
                        slots_error_set(&sub, -EBUSY, path, "is a mount point, never entered");
                        slots_error_fix(&sub, "unmount it");
                        slots_first_keep(&first, -EBUSY, &sub);
                        continue;
                }
                cfd = open_seen_dir(fd, de->d_name, &sx, true);
                if (cfd < 0) {
                        if (cfd != -ENOENT && cfd != -ESTALE)
                                slots_first_keep(&first, slots_error_set(&sub, cfd, path, "cannot open: %s",
                                                                         strerror(-cfd)), &sub);
                        continue;
                }
                r = slots_tree_empty(cfd, path, &sub);
                if (r == 0 && unlinkat(fd, de->d_name, AT_REMOVEDIR) < 0 && errno != ENOENT)
                        r = slots_error_set(&sub, -errno, path, "cannot remove the folder: %s", strerror(errno));
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
        int fd = open_dir_in(rootfd, CRONTABS), r = 0;

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
 * The mail spool file stays (owner, group and mode as the MTA expects) but loses its content:
 * only a regular file of the slot's with one link, opened without following and checked on
 * its fd.  Anything else of the slot's under its name (a symlink, a FIFO, a second name of
 * another file, where the spool lets the slot make one) loses the name, never its content.
 */
static int clean_mail(int rootfd, const struct slots_pw *slot, struct slots_error *e)
{
        struct stat st, fst;
        int dfd, fd, r = 0;

        dfd = open_dir_in(rootfd, MAIL_DIR);
        if (dfd == -ENOENT)
                return 0;
        if (dfd < 0)
                return slots_error_set(e, dfd, MAIL_DIR, "cannot open: %s", strerror(-dfd));
        if (fstatat(dfd, slot->name, &st, AT_SYMLINK_NOFOLLOW) < 0) {
                if (errno != ENOENT)
                        r = slots_error_set(e, -errno, MAIL_DIR, "cannot stat the mailbox %s: %s", slot->name,
                                            strerror(errno));
                goto out;
        }
        if (st.st_uid != slot->uid)
                goto out;       /* the MTA's or root's: not the slot's to lose */
        if (!S_ISREG(st.st_mode) || st.st_nlink != 1) {
                if (unlinkat(dfd, slot->name, 0) < 0 && errno != ENOENT)
                        r = slots_error_set(e, -errno, MAIL_DIR, "cannot remove %s (not a plain mailbox): %s",
                                            slot->name, strerror(errno));
                goto out;
        }
        fd = openat(dfd, slot->name, O_WRONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
        if (fd < 0) {
                if (errno != ENOENT && errno != ELOOP && errno != ENXIO)
                        r = slots_error_set(e, -errno, MAIL_DIR, "cannot open the mailbox %s: %s", slot->name,
                                            strerror(errno));
                goto out;
        }
        /* The name may have been swapped since the look: act only on what was looked at. */
        if (fstat(fd, &fst) < 0)
                r = slots_error_set(e, -errno, MAIL_DIR, "cannot stat the mailbox %s: %s", slot->name,
                                    strerror(errno));
        else if (S_ISREG(fst.st_mode) && fst.st_ino == st.st_ino && fst.st_dev == st.st_dev &&
                 fst.st_uid == slot->uid && fst.st_nlink == 1 && fst.st_size > 0 && ftruncate(fd, 0) < 0)
                r = slots_error_set(e, -errno, MAIL_DIR, "cannot empty the mailbox %s: %s", slot->name,
                                    strerror(errno));
        close(fd);
out:
        close(dfd);
        return r;
}

/* SysV IPC objects of one kind whose owner or creator is the slot, from /proc/sysvipc/<kind>. */
static int clean_ipc(const char *kind, uid_t uid, gid_t gid, struct slots_error *e)
{
        enum { ID, UID, GID, CUID, CGID, NCOL };
        static const char *const names[NCOL] = { NULL, "uid", "gid", "cuid", "cgid" };
        char file[64], *text = NULL, *line, *save = NULL;
        int col[NCOL] = { -1, -1, -1, -1, -1 };
        struct slots_first first = { 0, e };
        struct slots_error sub;
        size_t len;
        int fd, r;

        snprintf(file, sizeof(file), "/proc/sysvipc/%s", kind);
        fd = open(file, O_RDONLY | O_CLOEXEC);
        if (fd < 0)
                return errno == ENOENT ? 0 : slots_error_set(e, -errno, file, "cannot read: %s", strerror(errno));
        r = slots_read_all(fd, 64 << 20, &text, &len);
        close(fd);
        if (r < 0)
                return slots_error_set(e, r, file, "cannot read: %s", strerror(-r));

        /* The header names the columns: "key shmid perms ... uid gid cuid cgid ...". */
        line = strtok_r(text, "\n", &save);
        if (line) {
                char *tok, *tsave = NULL;

                tok = strtok_r(line, " \t", &tsave);
                for (int c = 0; tok; c++, tok = strtok_r(NULL, " \t", &tsave)) {
                        if (c == 1)
                                col[ID] = c;
                        for (int k = UID; k < NCOL; k++)
                                if (strcmp(tok, names[k]) == 0)
                                        col[k] = c;
                }
        }
        for (int k = 0; k < NCOL; k++) {
                if (col[k] < 0) {
                        r = slots_error_set(e, -EBADMSG, file, "unexpected format: no column %s",
                                            names[k] ? names[k] : "id");
                        goto out;
                }
        }
        while ((line = strtok_r(NULL, "\n", &save))) {
                unsigned long v[NCOL] = { 0 };
                char *tok, *tsave = NULL;
                bool mine;
                int c = 0, id;

                for (tok = strtok_r(line, " \t", &tsave); tok; tok = strtok_r(NULL, " \t", &tsave), c++)
                        for (int k = 0; k < NCOL; k++)
                                if (col[k] == c)
                                        v[k] = strtoul(tok, NULL, 10);
                if (c <= col[CGID] || c <= col[CUID])
                        continue;
                mine = v[UID] == uid || v[CUID] == uid || v[GID] == gid || v[CGID] == gid;
                if (!mine)
                        continue;
                id = (int) v[ID];
                if (strcmp(kind, "shm") == 0)
                        r = shmctl(id, IPC_RMID, NULL);
                else if (strcmp(kind, "sem") == 0)
                        r = semctl(id, 0, IPC_RMID);
                else
                        r = msgctl(id, IPC_RMID, NULL);
                if (r < 0 && errno != EINVAL && errno != EIDRM)
                        slots_first_keep(&first, slots_error_set(&sub, -errno, file, "cannot remove %s id %d: %s",
                                                                 kind, id, strerror(errno)), &sub);
        }
        r = first.r;
out:
        free(text);
        return r;
}


/* ---- scheduled jobs ---- */

/* The lingering flag systemd-logind keeps per account: with it, the user's manager starts at boot. */
static int clean_linger(int rootfd, const char *name, struct slots_error *e)
{
        int fd = open_dir_in(rootfd, LINGER_DIR), r = 0;

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
                return slots_error_set(e, -EINVAL, slot->name, "refusing to clean up after uid or gid 0");
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
                            bool create, char *path, size_t size, struct slots_error *e)
{
        char *parent = slots_path_join(c->slots_root, kind);
        int pfd, fd;

        if (!parent)
                return slots_error_set(e, -ENOMEM, c->slots_root, "out of memory");
        slots_path_join_to(path, size, parent, name);
        pfd = open_dir_in(rootfd, parent);
        if (pfd < 0) {
                slots_error_set(e, pfd, parent, "cannot open: %s", strerror(-pfd));
                if (pfd == -ENOENT)
                        slots_error_fix(e, "run slots-provision, which makes it");
                free(parent);
                return pfd;
        }
        free(parent);
        if (create && mkdirat(pfd, name, 0) == 0) {
                /* Made with mode 0; owner and mode follow through the fd. */
        }
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

int slots_cleanup_folders(int rootfd, const struct slots_config *c, const struct slots_pw *slot, gid_t slot_gid,
                          struct slots_error *e)
{
        struct slots_first first = { 0, e };
        struct slots_error sub;

        if (slot->uid == 0 || slot_gid == 0)
                return slots_error_set(e, -EINVAL, slot->name, "refusing to reset the folders of uid or gid 0");
        for (size_t i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++) {
                char path[4096];
                struct stat st;
                int fd, efd, r;

                fd = open_slot_folder(rootfd, c, kinds[i], slot->name, true, path, sizeof(path), &sub);
                if (fd < 0) {
                        slots_first_keep(&first, fd, &sub);
                        continue;
                }
                /* Emptied in place: no moment without the folder, and a killed run just goes on next time. */
                efd = dup(fd);
                r = efd < 0 ? slots_error_set(&sub, -errno, path, "cannot open: %s", strerror(errno))
                            : slots_tree_empty(efd, path, &sub);
                if (r == 0)
                        r = xattr_strip(fd, path, &sub);
                /* Whatever mode and group the old user gave it, it is the planned folder again. */
                if (r == 0 && fchown(fd, slot->uid, slot_gid) < 0)
                        r = slots_error_set(&sub, -errno, path, "cannot set the owner: %s", strerror(errno));
                if (r == 0 && fchmod(fd, 0700) < 0)
                        r = slots_error_set(&sub, -errno, path, "cannot set the mode: %s", strerror(errno));
                if (r == 0 && fstat(fd, &st) < 0)
                        r = slots_error_set(&sub, -errno, path, "cannot stat: %s", strerror(errno));
                if (r == 0 && (st.st_uid != slot->uid || st.st_gid != slot_gid || (st.st_mode & 07777) != 0700))
                        r = slots_error_set(&sub, -EPERM, path, "owner or mode did not change (%u:%u %04o)",
                                            (unsigned) st.st_uid, (unsigned) st.st_gid, st.st_mode & 07777);
                slots_first_keep(&first, r, &sub);
                close(fd);
        }
        return first.r;
}

int slots_check_folders(int rootfd, const struct slots_config *c, const char *name, uid_t uid, gid_t gid,
                        bool in_use, struct slots_error *e)
{
        for (size_t i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++) {
                char path[4096], attr[256];
                struct dirent *de;
                struct stat st;
                bool empty = true;
                DIR *d;
                int fd, r;

                fd = open_slot_folder(rootfd, c, kinds[i], name, false, path, sizeof(path), e);
                if (fd < 0) {
                        slots_error_fix(e, "slots-admin release --slot %s (it makes the folder again)", name);
                        return fd;
                }
                if (fstat(fd, &st) < 0) {
                        r = slots_error_set(e, -errno, path, "cannot stat: %s", strerror(errno));
                        close(fd);
                        return r;
                }
                r = xattr_first_foreign(fd, attr, sizeof(attr));
                if (r < 0) {
                        close(fd);
                        return slots_error_set(e, r, path, "cannot list extended attributes: %s", strerror(-r));
                }
                d = fdopendir(fd);
                if (!d) {
                        r = -errno;
                        close(fd);
                        return slots_error_set(e, r, path, "cannot read: %s", strerror(-r));
                }
                while (empty && (de = readdir(d)))
                        empty = strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0;
                closedir(d);
                r = -EPERM;
                if (st.st_uid != uid || st.st_gid != gid || (st.st_mode & 07777) != 0700)
                        slots_error_set(e, r, path, "is %u:%u %04o, not %s:%s 0700 (uid %u, gid %u)",
                                        (unsigned) st.st_uid, (unsigned) st.st_gid, st.st_mode & 07777, name, name,
                                        (unsigned) uid, (unsigned) gid);
                else if (!empty && !in_use)
                        slots_error_set(e, r, path, "is not empty: the last user's files are still there");
                else if (attr[0] && !in_use)
                        slots_error_set(e, r, path, "has the extended attribute %s (an ACL or the last user's data)",
                                        attr);
                else
                        continue;
                slots_error_fix(e, "slots-admin release --slot %s (it empties the folder and sets it back)", name);
                return r;
        }
        return 0;
}

/* ---- files of the slot at any depth of the temp folders and the shared folders ---- */

struct own {
        uid_t uid;
        gid_t gid;
        bool hand;                      /* hand to to_uid (shared folders), else remove (temp folders) */
        uid_t to_uid;
        gid_t to_gid;
        struct slots_first first;
        struct slots_error sub;
        char path[4096];
        size_t len;
        struct stat skip[3];            /* configured roots below a temp folder: never removed, never entered */
        size_t n_skip;
};

static void own_push(struct own *w, const char *name)
{
        int n = snprintf(w->path + w->len, sizeof(w->path) - w->len, "/%s", name);

        if (n < 0 || (size_t) n >= sizeof(w->path) - w->len)
                w->path[sizeof(w->path) - 1] = '\0';    /* cut: it only names the entry */
}

/* Keeps "<what>: <strerror>" about the entry the walk is at. */
static void own_fail(struct own *w, int r, const char *what)
{
        slots_error_set(&w->sub, r, w->path, "%s: %s", what, strerror(-r));
        slots_first_keep(&w->first, r, &w->sub);
}

static bool other_fs(const struct statx *top, const struct statx *sx)
{
        return sx->stx_dev_major != top->stx_dev_major || sx->stx_dev_minor != top->stx_dev_minor ||
               (sx->stx_attributes & sx->stx_attributes_mask & STATX_ATTR_MOUNT_ROOT);
}

static void own_remove(struct own *w, int dfd, const char *name, const struct statx *top, const struct statx *sx)
{
        int cfd, r;

        if (!S_ISDIR(sx->stx_mode)) {
                if (unlinkat(dfd, name, 0) < 0 && errno != ENOENT)
                        own_fail(w, -errno, "cannot remove");
                return;
        }
        if (other_fs(top, sx)) {
                slots_error_set(&w->sub, -EBUSY, w->path, "is a mount point, never entered");
                slots_error_fix(&w->sub, "unmount it (umount -l %s)", w->path);
                slots_first_keep(&w->first, -EBUSY, &w->sub);
                return;
        }
        /* Only the folder looked at: one renamed over it since (by an account still running) is not the slot's. */
        cfd = open_seen_dir(dfd, name, sx, true);
        if (cfd < 0) {
                if (cfd != -ENOENT && cfd != -ESTALE)
                        own_fail(w, cfd, "cannot open");
                return;
        }
        r = slots_tree_empty(cfd, w->path, &w->sub);
        if (r == 0 && unlinkat(dfd, name, AT_REMOVEDIR) < 0 && errno != ENOENT)
                r = slots_error_set(&w->sub, -errno, w->path, "cannot remove the folder: %s", strerror(errno));
        slots_first_keep(&w->first, r, &w->sub);
}

/* Gives one entry of the slot to the service, through an fd of the entry itself. */
static void own_hand(struct own *w, int dfd, const char *name, const struct statx *sx)
{
        bool data = S_ISREG(sx->stx_mode) || S_ISDIR(sx->stx_mode);
        struct stat st;
        gid_t gid;
        int fd;

        fd = openat(dfd, name, data ? O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC
                                    : O_PATH | O_NOFOLLOW | O_CLOEXEC);
        if (fd < 0) {
                if (errno != ENOENT)
                        own_fail(w, -errno, "cannot open");
                return;
        }
        if (fstat(fd, &st) < 0) {
                own_fail(w, -errno, "cannot stat");
                close(fd);
                return;
        }
        if (st.st_ino != sx->stx_ino || st.st_uid != w->uid) {
                close(fd);      /* replaced since it was listed: not the slot's entry any more */
                return;
        }
        if (!S_ISDIR(st.st_mode) && st.st_nlink > 1) {
                slots_error_set(&w->sub, -EMLINK, w->path, "has %lu links; a file with more than one name is "
                                "never changed", (unsigned long) st.st_nlink);
                slots_error_fix(&w->sub, "remove its other names (find / -xdev -samefile %s)", w->path);
                slots_first_keep(&w->first, -EMLINK, &w->sub);
                close(fd);
                return;
        }
        gid = st.st_gid == w->gid ? w->to_gid : st.st_gid;
        if (data) {
                static const char *const acls[] = { "system.posix_acl_access", "system.posix_acl_default" };
                mode_t mode = st.st_mode & 07777 & ~(mode_t) S_IRWXO;

                if (!S_ISDIR(st.st_mode))
                        mode &= ~(mode_t) (S_ISUID | S_ISGID);
                for (size_t i = 0; i < 2; i++)
                        if (fremovexattr(fd, acls[i]) < 0 && errno != ENODATA && errno != EOPNOTSUPP)
                                own_fail(w, -errno, "cannot remove its ACL");
                /*
                 * The mode narrows first: should the chown fail, the entry is still the slot's and
                 * the next release finds it again; the service's already, it would keep its old mode.
                 */
                if (fchmod(fd, mode) < 0)
                        own_fail(w, -errno, "cannot set its mode");
                else if (fchown(fd, w->to_uid, gid) < 0)
                        own_fail(w, -errno, "cannot give it to the service");
        } else if (fchownat(fd, "", w->to_uid, gid, AT_EMPTY_PATH) < 0) {
                own_fail(w, -errno, "cannot give it to the service");
        }
        close(fd);
}

static bool skipped(const struct own *w, const struct statx *sx)
{
        for (size_t i = 0; i < w->n_skip; i++)
                if (w->skip[i].st_ino == sx->stx_ino &&
                    w->skip[i].st_dev == makedev(sx->stx_dev_major, sx->stx_dev_minor))
                        return true;
        return false;
}

/* Walks folder fd (consumed) at depth; top is the walk's root, whose file system it never leaves. */
static void own_walk(struct own *w, int fd, const struct statx *top, unsigned depth)
{
        size_t len = w->len;
        struct dirent *de;
        DIR *d = fdopendir(fd);

        if (!d) {
                own_fail(w, -errno, "cannot read");
                close(fd);
                return;
        }
        while ((errno = 0, de = readdir(d))) {
                struct statx sx;
                int cfd;

                if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
                        continue;
                own_push(w, de->d_name);
                if (statx(dirfd(d), de->d_name, AT_SYMLINK_NOFOLLOW | AT_NO_AUTOMOUNT | AT_STATX_DONT_SYNC,
                          STATX_BASIC_STATS, &sx) < 0) {
                        /* Gone is fine; an entry that cannot be looked at may be the slot's. */
                        if (errno != ENOENT)
                                own_fail(w, -errno, "cannot stat");
                        goto next;
                }
                if (S_ISDIR(sx.stx_mode) && skipped(w, &sx))
                        goto next;
                if (sx.stx_uid == w->uid && !w->hand) {
                        own_remove(w, dirfd(d), de->d_name, top, &sx);
                        goto next;
                }
                if (sx.stx_uid == w->uid)
                        own_hand(w, dirfd(d), de->d_name, &sx);
                /* Others' folders may hold the slot's files too; a mount point is another host's matter. */
                if (!S_ISDIR(sx.stx_mode) || other_fs(top, &sx) || depth + 1 >= SLOTS_CLEANUP_MAX_DEPTH)
                        goto next;
                /* The owner may be the service's by now: own_hand above gave it over. */
                cfd = open_seen_dir(dirfd(d), de->d_name, &sx, false);
                if (cfd < 0) {
                        /* A folder that cannot be looked into may hold the slot's files. */
                        if (cfd != -ENOENT && cfd != -ESTALE)
                                own_fail(w, cfd, "cannot open");
                        goto next;
                }
                w->len = strlen(w->path);
                own_walk(w, cfd, top, depth + 1);
next:
                w->len = len;
                w->path[len] = '\0';
        }
        if (errno)
                own_fail(w, -errno, "cannot read");
        closedir(d);
}

/*
 * Walks dir.  Its way is checked with the owner chain; with slot_end the last
 * folder is one slots may write (/run/user/<uid>, a shared folder): its parent
 * is checked, and it is opened without following and must belong to the slot,
 * root or (handing over) the service.
 */
static int own_root(struct own *w, int rootfd, const char *dir, bool slot_end)
{
        uid_t tu = w->hand ? w->to_uid : (uid_t) -1;
        gid_t tg = w->hand ? w->to_gid : (gid_t) -1;
        struct statx top;
        int fd;

        if (slot_end) {
                struct slots_chase how = {
                        .flags = SLOTS_CHASE_PARENT | SLOTS_CHASE_TRUSTED,
                        .trusted_uid = tu,
                        .trusted_gid = tg,
                        .open_flags = O_RDONLY | O_DIRECTORY,
                };
                const char *base;
                struct stat st;
                int pfd = slots_chase(rootfd, dir, &how, &base, &w->sub);

                if (pfd == -ENOENT)
                        return 0;
                if (pfd < 0)
                        return pfd;
                fd = openat(pfd, base, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
                fd = fd < 0 ? -errno : fd;
                close(pfd);
                if (fd == -ENOENT)
                        return 0;
                if (fd < 0)
                        return slots_error_set(&w->sub, fd, dir, "cannot open: %s", strerror(-fd));
                if (fstat(fd, &st) < 0) {
                        int r = -errno;

                        close(fd);
                        return slots_error_set(&w->sub, r, dir, "cannot stat: %s", strerror(-r));
                }
                if (st.st_uid != w->uid && st.st_uid != 0 && st.st_uid != tu) {
                        close(fd);
                        return slots_error_set(&w->sub, -EPERM, dir, "belongs to uid %u, neither the slot, "
                                               "root nor the service: not walked", (unsigned) st.st_uid);
                }
        } else {
                fd = open_walk_root(rootfd, dir, tu, tg, &w->sub);
                if (fd == -ENOENT)
                        return 0;
                if (fd < 0)
                        return fd;
        }
        if (statx(fd, "", AT_EMPTY_PATH, STATX_BASIC_STATS, &top) < 0) {
                int r = -errno;
                close(fd);
                return slots_error_set(&w->sub, r, dir, "cannot stat: %s", strerror(-r));
        }
        snprintf(w->path, sizeof(w->path), "%s", strcmp(dir, "/") == 0 ? "" : dir);
        w->len = strlen(w->path);
        own_walk(w, fd, &top, 0);
        return 0;
}

int slots_cleanup_temp(int rootfd, const struct slots_config *c, const struct slots_pw *slot, struct slots_error *e)
{
        const char *roots[] = { c->docs_root, c->app_root, c->slots_root };
        struct own w = { .uid = slot->uid, .gid = slot->gid, .first = { 0, e } };
        struct slots_error sub;
        char runuser[64];
        int fd;

        if (slot->uid == 0 || slot->gid == 0)
                return slots_error_set(e, -EINVAL, slot->name, "refusing to remove the files of uid or gid 0");
        /*
         * A docs, app or slots root below /tmp (a demo, a test) is the service's, handled by its own
         * step.  One that cannot be looked at is no reason to walk into it: nothing is walked then.
         */
        for (size_t i = 0; i < sizeof(roots) / sizeof(roots[0]); i++) {
                int r = 0;

                if (!roots[i])
                        continue;
                fd = open_dir_in(rootfd, roots[i]);
                if (fd == -ENOENT || fd == -ENOTDIR)
                        continue;       /* no folder there: nothing to keep out of the walk */
                if (fd < 0)
                        r = fd;
                else if (fstat(fd, &w.skip[w.n_skip]) < 0)
                        r = -errno;
                else
                        w.n_skip++;
                slots_close(fd);
                if (r < 0)
                        return slots_error_set(e, r, roots[i], "cannot look at it, so the walk of the temp "
                                               "folders could not keep out of it: %s", strerror(-r));
        }
        for (size_t i = 0; i < sizeof(temp_dirs) / sizeof(temp_dirs[0]); i++)
                slots_first_keep(&w.first, own_root(&w, rootfd, temp_dirs[i], false), &w.sub);
        /* The runtime folder logind makes (often a mount of its own): what it holds, then itself. */
        snprintf(runuser, sizeof(runuser), "/run/user/%u", (unsigned) slot->uid);
        slots_first_keep(&w.first, own_root(&w, rootfd, runuser, true), &w.sub);
        fd = open_walk_root(rootfd, "/run/user", (uid_t) -1, (gid_t) -1, NULL);
        if (fd >= 0) {
                struct stat st;

                if (fstatat(fd, runuser + 10, &st, AT_SYMLINK_NOFOLLOW) < 0) {
                        if (errno != ENOENT)
                                slots_first_keep(&w.first, slots_error_set(&sub, -errno, runuser, "cannot stat: %s",
                                                                           strerror(errno)), &sub);
                } else if (S_ISDIR(st.st_mode) && st.st_uid == slot->uid && unlinkat(fd, runuser + 10, AT_REMOVEDIR) < 0 &&
                           errno != EBUSY && errno != ENOTEMPTY && errno != ENOENT) {
                        slots_first_keep(&w.first, slots_error_set(&sub, -errno, runuser, "cannot remove: %s",
                                                                   strerror(errno)), &sub);
                }
                close(fd);
        }
        slots_first_keep(&w.first, clean_mail(rootfd, slot, &sub), &sub);
        return w.first.r;
}

int slots_cleanup_shared(int rootfd, const struct slots_config *c, const struct slots_pw *slot, gid_t slot_gid,
                         uid_t svc_uid, gid_t svc_gid, struct slots_error *e)
{
        struct own w = { .uid = slot->uid, .gid = slot_gid, .hand = true, .to_uid = svc_uid, .to_gid = svc_gid,
                         .first = { 0, e } };

        if (slot->uid == 0 || slot_gid == 0)
                return slots_error_set(e, -EINVAL, slot->name, "refusing to hand over the files of uid or gid 0");
        if (!c->docs_root)
                return 0;
        for (size_t i = 0; i < c->n_shared_dirs; i++) {
                char *dir = slots_path_join(c->docs_root, c->shared_dirs[i]);

                if (!dir) {
                        slots_first_keep(&w.first, slots_error_set(&w.sub, -ENOMEM, c->docs_root, "out of memory"),
                                         &w.sub);
                        break;
                }
                slots_first_keep(&w.first, own_root(&w, rootfd, dir, true), &w.sub);
                free(dir);
        }
        return w.first.r;
}

/* ---- kernel objects: IPC, keys, mounts ---- */

/* What the mqueue child reports through its pipe. */
struct mq_result {
        int err;                        /* first -errno, 0 */
        char what[64];                  /* the step or queue it is about */
};

static void mq_child(int wfd, uid_t uid, gid_t gid)
{
        static const char *const spots[] = { "/dev/mqueue", "/tmp", "/" };
        struct mq_result res = { 0 };
        const char *at = NULL;
        struct dirent *de;
        DIR *d;
        int fd;

        /* A mount of our own, seen by nobody else: the host's mounts stay as they are. */
        if (unshare(CLONE_NEWNS) < 0 || mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0) {
                res.err = -errno;
                snprintf(res.what, sizeof(res.what), "a private mount namespace");
                goto out;
        }
        for (size_t i = 0; i < sizeof(spots) / sizeof(spots[0]) && !at; i++)
                if (mount("mqueue", spots[i], "mqueue", MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL) == 0)
                        at = spots[i];
        if (!at) {
                res.err = -errno;
                snprintf(res.what, sizeof(res.what), "a private mqueue mount");
                goto out;
        }
        fd = open(at, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        d = fd < 0 ? NULL : fdopendir(fd);
        if (!d) {
                res.err = -errno;
                snprintf(res.what, sizeof(res.what), "the private mqueue mount");
                goto out;
        }
        while ((de = readdir(d))) {
                struct stat st;

                if (de->d_name[0] == '.' || fstatat(dirfd(d), de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0)
                        continue;
                if ((st.st_uid == uid || st.st_gid == gid) && unlinkat(dirfd(d), de->d_name, 0) < 0 &&
                    errno != ENOENT && res.err == 0) {
                        res.err = -errno;
                        snprintf(res.what, sizeof(res.what), "/%.60s", de->d_name);
                }
        }
        closedir(d);
out:
        (void) !write(wfd, &res, sizeof(res));
        slots_exit_child(0);
}

static int clean_mqueues(uid_t uid, gid_t gid, struct slots_error *e)
{
        struct mq_result res = { .err = -ECHILD };
        struct slots_child c;
        ssize_t n;
        int p[2], r;

        if (pipe2(p, O_CLOEXEC) < 0)
                return slots_error_set(e, -errno, "POSIX message queues", "cannot make a pipe: %s", strerror(errno));
        r = slots_child_start(&c, 0, 0);
        if (r < 0) {
                close(p[0]);
                close(p[1]);
                return slots_error_set(e, r, "POSIX message queues", "cannot fork: %s", strerror(-r));
        }
        if (r == 0) {
                close(p[0]);
                mq_child(p[1], uid, gid);
        }
        close(p[1]);
        n = read(p[0], &res, sizeof(res));
        if (n < 0) {
                res.err = -errno;
                snprintf(res.what, sizeof(res.what), "reading the helper's answer");
        } else if (n != (ssize_t) sizeof(res)) {
                res.err = -ECHILD;
        }
        close(p[0]);
        (void) slots_child_wait(&c);
        res.what[sizeof(res.what) - 1] = '\0';
        if (res.err == 0)
                return 0;
        return slots_error_set(e, res.err, "POSIX message queues", "cannot remove the slot's queues (%s): %s",
                               res.err == -ECHILD ? "the helper died" : res.what, strerror(-res.err));
}

int slots_cleanup_ipc(const struct slots_pw *slot, struct slots_error *e)
{
        struct slots_first first = { 0, e };
        struct slots_error sub;

        if (slot->uid == 0 || slot->gid == 0)
                return slots_error_set(e, -EINVAL, slot->name, "refusing to remove the IPC objects of uid or gid 0");
        slots_first_keep(&first, clean_ipc("shm", slot->uid, slot->gid, &sub), &sub);
        slots_first_keep(&first, clean_ipc("sem", slot->uid, slot->gid, &sub), &sub);
        slots_first_keep(&first, clean_ipc("msg", slot->uid, slot->gid, &sub), &sub);
        slots_first_keep(&first, clean_mqueues(slot->uid, slot->gid, &sub), &sub);
        return first.r;
}

static long keyctl5(int op, long a, long b, long c, long d)
{
        return syscall(SYS_keyctl, op, a, b, c, d);
}

/* The owner's full rights back first: the old user may have taken their own "write" away. */
#define KEYRING_PERM 0x3f3f0000L

/* In the child, as the slot: 0, or which keyring failed (1 user, 2 user-session, 3 persistent). */
static int keys_child(void *arg)
{
        static const long rings[] = { KEY_SPEC_USER_KEYRING, KEY_SPEC_USER_SESSION_KEYRING };
        long pk;

        (void) arg;
        for (int i = 0; i < 2; i++) {
                (void) keyctl5(KEYCTL_SETPERM, rings[i], KEYRING_PERM, 0, 0);
                if (keyctl5(KEYCTL_CLEAR, rings[i], 0, 0, 0) < 0)
                        return i + 1;
        }
        pk = keyctl5(KEYCTL_GET_PERSISTENT, -1, KEY_SPEC_PROCESS_KEYRING, 0, 0);
        if (pk < 0)
                return errno == EOPNOTSUPP || errno == ENOSYS ? 0 : 3;
        (void) keyctl5(KEYCTL_SETPERM, pk, KEYRING_PERM, 0, 0);
        if (keyctl5(KEYCTL_CLEAR, pk, 0, 0, 0) < 0 || keyctl5(KEYCTL_INVALIDATE, pk, 0, 0, 0) < 0)
                return 3;
        return 0;
}

int slots_cleanup_keys(const struct slots_pw *slot, struct slots_error *e)
{
        static const char *const which[] = { "", "user keyring", "user-session keyring", "persistent keyring" };
        struct slots_ident id = { .uid = slot->uid, .gid = slot->gid };
        int r;

        if (slot->uid == 0 || slot->gid == 0)
                return slots_error_set(e, -EINVAL, slot->name, "refusing to clear the keys of uid or gid 0");
        r = slots_run_as(&id, keys_child, NULL, 5000);
        if (r == 0)
                return 0;
        if (r > 0 && r <= 3) {
                slots_error_set(e, -EPERM, slot->name, "cannot clear the slot's %s: the last holder took away "
                                "its own right to change it (keyctl setperm), and the kernel lets no one else, "
                                "root included, clear or invalidate it; its keys stay until the host reboots",
                                which[r]);
                slots_error_fix(e, "leave %s pending (it is never assigned, so no one reads those keys) until "
                                "the host reboots", slot->name);
                return -EPERM;
        }
        return slots_error_set(e, r < 0 ? r : -EPERM, slot->name, "cannot clear the slot's keyrings: %s",
                               r < 0 ? strerror(-r) : "the helper failed");
}

/* Undoes the \ooo escapes of a mountinfo field in place. */
static void unescape_octal(char *s)
{
        char *o = s;

        for (; *s; s++) {
                if (s[0] == '\\' && s[1] >= '0' && s[1] <= '3' && s[2] >= '0' && s[2] <= '7' && s[3] >= '0' &&
                    s[3] <= '7') {
                        *o++ = (char) ((s[1] - '0') << 6 | (s[2] - '0') << 3 | (s[3] - '0'));
                        s += 3;
                } else {
                        *o++ = *s;
                }
        }
        *o = '\0';
}

/* The mount id of fd, from /proc/self/fdinfo (no stat of the file itself). */
static int fd_mnt_id(int fd, unsigned long long *id)
{
        char path[64], *text = NULL, *p;
        size_t len;
        int f, r;

        snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", fd);
        f = open(path, O_RDONLY | O_CLOEXEC);
        if (f < 0)
                return -errno;
        r = slots_read_all(f, 4096, &text, &len);
        close(f);
        if (r < 0)
                return r;
        p = strstr(text, "\nmnt_id:");
        r = p ? 0 : -ENOENT;
        if (p)
                *id = strtoull(p + 8, NULL, 10);
        free(text);
        return r;
}

/*
 * Detaches the mount that mountinfo listed at path with mount id mnt_id.  The path is in
 * folders others may still change (a slot's folder in /tmp): it is resolved with no
 * symlink, the mount root reached must be that very mount, and the umount goes through
 * its fd, so a path swapped meanwhile never detaches another mount (-ESTALE).
 */
static int umount_seen(const char *path, unsigned long long mnt_id)
{
        struct slots_chase how = {
                .flags = SLOTS_CHASE_PARENT | SLOTS_CHASE_NO_SYMLINKS | SLOTS_CHASE_MUST_DIR,
                .open_flags = O_PATH,
        };
        unsigned long long got = 0, above = 0;
        const char *base;
        char proc[64];
        int pfd, fd, r = 0;

        pfd = slots_chase(AT_FDCWD, path, &how, &base, NULL);
        if (pfd < 0)
                return pfd == -ELOOP ? -ESTALE : pfd;
        /* O_PATH and fdinfo: a FUSE root whose server is gone answers no stat, even to root. */
        fd = openat(pfd, base, O_PATH | O_NOFOLLOW | O_CLOEXEC);
        if (fd < 0)
                r = -errno;
        else if (fd_mnt_id(fd, &got) < 0 || fd_mnt_id(pfd, &above) < 0)
                r = -EIO;
        else if (got != mnt_id || got == above)
                r = -ESTALE;    /* not that mount, or not a mount root at all */
        slots_close(pfd);
        snprintf(proc, sizeof(proc), "/proc/self/fd/%d", fd);
        if (r == 0 && umount2(proc, MNT_DETACH) < 0)
                r = -errno;
        slots_close(fd);
        return r;
}

int slots_cleanup_mounts(const struct slots_pw *slot, struct slots_error *e)
{
        struct slots_first first = { 0, e };
        struct slots_error sub;
        char *text = NULL, *line, *save = NULL, want[32];
        size_t len;
        int fd, r;

        if (slot->uid == 0 || slot->gid == 0)
                return slots_error_set(e, -EINVAL, slot->name, "refusing to unmount for uid or gid 0");
        fd = open("/proc/self/mountinfo", O_RDONLY | O_CLOEXEC);
        if (fd < 0)
                return slots_error_set(e, -errno, "/proc/self/mountinfo", "cannot read: %s", strerror(errno));
        r = slots_read_all(fd, 64 << 20, &text, &len);
        close(fd);
        if (r < 0)
                return slots_error_set(e, r, "/proc/self/mountinfo", "cannot read: %s", strerror(-r));
        snprintf(want, sizeof(want), "user_id=%u", (unsigned) slot->uid);
        for (line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
                char *f[5] = { 0 }, *dash, *fstype, *opts, *tsave = NULL, *tok;
                bool match = false;
                int n = 0;

                dash = strstr(line, " - ");
                if (!dash)
                        continue;
                *dash = '\0';
                for (tok = strtok_r(line, " ", &tsave); tok && n < 5; tok = strtok_r(NULL, " ", &tsave))
                        f[n++] = tok;
                fstype = strtok_r(dash + 3, " ", &tsave);
                (void) strtok_r(NULL, " ", &tsave);     /* source */
                opts = strtok_r(NULL, " ", &tsave);
                if (n < 5 || !fstype || !opts || strncmp(fstype, "fuse", 4) != 0)
                        continue;
                for (tok = strtok_r(opts, ",", &tsave); tok; tok = strtok_r(NULL, ",", &tsave))
                        match = match || strcmp(tok, want) == 0;
                if (!match)
                        continue;
                unescape_octal(f[4]);
                r = umount_seen(f[4], strtoull(f[0], NULL, 10));
                if (r < 0 && r != -EINVAL && r != -ENOENT && r != -ESTALE)
                        slots_first_keep(&first, slots_error_set(&sub, r, f[4],
                                                                 "cannot unmount the slot's FUSE mount: %s",
                                                                 strerror(-r)), &sub);
        }
        free(text);
        return first.r;
}
