/* Release hygiene for a slot account: its processes, IPC objects, temp files, crontab, home/state/run. */
#include <ctype.h>
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
#include <sys/msg.h>
#include <sys/sem.h>
#include <sys/shm.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "cleanup.h"
#include "fsutil.h"
#include "privdrop.h"
#include "tree.h"

/* kill(-1) rounds before a survivor is reported, and the pause between them (about 2 s in all). */
#define KILL_ROUNDS 50
#define KILL_PAUSE_MS 40

/* Folders whose top level may hold the slot's files (POSIX shm is /dev/shm, mqueues /dev/mqueue). */
static const char *const temp_dirs[] = { "/tmp", "/var/tmp", "/dev/shm", "/dev/mqueue" };

#define CRONTABS "/var/spool/cron/crontabs"
static const char *const at_dirs[] = { "/var/spool/cron/atjobs", "/var/spool/cron/atspool" };
#define MAIL_DIR "/var/mail"

/* Keeps the first failure of a step that goes on after one. */
struct first {
        int r;
        struct slots_error *e;
};

static void keep(struct first *f, int r, const struct slots_error *sub)
{
        if (r >= 0 || f->r < 0)
                return;
        f->r = r;
        if (f->e && sub)
                *f->e = *sub;
}

/* ---- processes ---- */

/* In the child, as the slot: kill(-1) reaches exactly the processes whose real or saved uid is the slot's. */
static int kill_all(void *arg)
{
        (void) arg;
        if (kill(-1, SIGKILL) < 0 && errno != ESRCH)
                return 1;
        return 0;
}

/*
 * A live (not zombie) process whose real or effective uid is uid, from /proc;
 * its pid, 0 when none, or -errno.  name gets its command name.
 */
static int find_process(uid_t uid, char *name, size_t size)
{
        struct dirent *de;
        DIR *d;
        int procfd, found = 0;

        procfd = open("/proc", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (procfd < 0)
                return -errno;
        d = fdopendir(procfd);
        if (!d) {
                close(procfd);
                return -errno;
        }
        while (!found && (errno = 0, de = readdir(d))) {
                char path[NAME_MAX + 16], buf[4096], comm[64] = "?", state = '?';
                unsigned long ruid = (unsigned long) -1, euid = (unsigned long) -1;
                const char *p;
                ssize_t n;
                int fd;

                if (!isdigit((unsigned char) de->d_name[0]))
                        continue;
                snprintf(path, sizeof(path), "%s/status", de->d_name);
                fd = openat(procfd, path, O_RDONLY | O_CLOEXEC);
                if (fd < 0)
                        continue;       /* gone already */
                n = read(fd, buf, sizeof(buf) - 1);
                close(fd);
                if (n <= 0)
                        continue;
                buf[n] = '\0';
                for (p = buf; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL) {
                        if (strncmp(p, "Name:", 5) == 0)
                                sscanf(p + 5, " %63[^\n]", comm);
                        else if (strncmp(p, "State:", 6) == 0)
                                sscanf(p + 6, " %c", &state);
                        else if (strncmp(p, "Uid:", 4) == 0)
                                sscanf(p + 4, " %lu %lu", &ruid, &euid);
                }
                /* A zombie runs nothing: it only waits for its parent to collect it. */
                if (state == 'Z' || state == 'X')
                        continue;
                if (ruid == (unsigned long) uid || euid == (unsigned long) uid) {
                        found = atoi(de->d_name);
                        snprintf(name, size, "%s", comm);
                }
        }
        if (!found && errno) {
                int r = -errno;
                closedir(d);
                return r;
        }
        closedir(d);
        return found;
}

int slots_cleanup_processes(const struct slots_pw *slot, struct slots_error *e)
{
        struct slots_ident id = { 0 };
        gid_t *groups = NULL;
        char comm[64] = "";
        int r, pid = 0;

        if (slot->uid == 0 || slot->gid == 0)
                return slots_error_set(e, -EINVAL, slot->name, "refusing to end the processes of uid or gid 0");
        r = slots_ident_of(slot->name, &id, &groups);
        if (r < 0)
                return slots_error_set(e, r, slot->name, "cannot look up the account's groups: %s", strerror(-r));
        if (id.uid != slot->uid) {
                free(groups);
                return slots_error_set(e, -ESTALE, slot->name, "the account's uid changed during the release");
        }
        for (int round = 0; round < KILL_ROUNDS; round++) {
                r = slots_run_as(&id, kill_all, NULL, 5000);
                if (r != 0) {
                        r = slots_error_set(e, r < 0 ? r : -EPERM, slot->name,
                                            "cannot signal the processes as the slot: %s",
                                            r < 0 ? strerror(-r) : "kill(-1) failed");
                        goto out;
                }
                pid = find_process(slot->uid, comm, sizeof(comm));
                if (pid < 0) {
                        r = slots_error_set(e, pid, "/proc", "cannot list processes: %s", strerror(-pid));
                        goto out;
                }
                if (pid == 0)
                        goto out;
                (void) poll(NULL, 0, KILL_PAUSE_MS);
        }
        r = slots_error_set(e, -EBUSY, slot->name,
                            "process %d (%s) of uid %u still runs after %d rounds of kill(-1, SIGKILL) as the slot",
                            pid, comm, (unsigned) slot->uid, KILL_ROUNDS);
        slots_error_fix(e, "see why it cannot be ended (ps -o pid,stat,ruid,euid,cmd -p %d: a process in "
                           "uninterruptible sleep, or one whose real uid is not the slot's) and end it", pid);
out:
        free(groups);
        return r;
}

/* ---- files ---- */

/* "a/b" into buf, cut at size (names in error messages only). */
static const char *join(char *buf, size_t size, const char *a, const char *b)
{
        int n = snprintf(buf, size, "%s/%s", strcmp(a, "/") == 0 ? "" : a, b);

        if (n < 0 || (size_t) n >= size)
                buf[size - 1] = '\0';  /* cut: it only names the file */
        return buf;
}

static int open_dir_in(int rootfd, const char *path)
{
        return slots_open_in(rootfd, path, O_RDONLY | O_DIRECTORY);
}

/*
 * Drops what the previous user may have set on a folder they owned, besides
 * its content: POSIX ACLs (a default ACL would open the next user's new files
 * to others) and user.* extended attributes (data of their own).
 */
static int strip_xattrs(int fd, const char *path, struct slots_error *e)
{
        char names[4096];
        ssize_t n = flistxattr(fd, names, sizeof(names));

        if (n < 0)
                return errno == EOPNOTSUPP ? 0
                                           : slots_error_set(e, -errno, path, "cannot list extended attributes: %s",
                                                             strerror(errno));
        for (ssize_t i = 0; i < n; i += (ssize_t) strlen(names + i) + 1) {
                const char *a = names + i;

                if (strncmp(a, "user.", 5) != 0 && strcmp(a, "system.posix_acl_access") != 0 &&
                    strcmp(a, "system.posix_acl_default") != 0)
                        continue;
                if (fremovexattr(fd, a) < 0 && errno != ENODATA)
                        return slots_error_set(e, -errno, path, "cannot remove the extended attribute %s: %s", a,
                                               strerror(errno));
        }
        return 0;
}

/*
 * Empties folder parent/name in place and leaves it as a new one would be:
 * its owner and mode kept, ACLs and user.* attributes gone.  Emptying in place
 * (not rmdir and mkdir) leaves no moment without the folder and nothing half
 * made when the run is killed; the next run just goes on.  A missing folder is
 * nothing to do.
 */
static int clean_folder(int rootfd, const char *parent, const char *name, struct slots_error *e)
{
        char path[4096];
        struct stat st, now;
        int pfd, fd = -1, efd, r;

        join(path, sizeof(path), parent, name);
        pfd = open_dir_in(rootfd, parent);
        if (pfd == -ENOENT)
                return 0;
        if (pfd < 0)
                return slots_error_set(e, pfd, parent, "cannot open: %s", strerror(-pfd));
        fd = openat(pfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
        if (fd < 0) {
                int err = errno;
                struct stat ls;

                if (err == ENOTDIR && fstatat(pfd, name, &ls, AT_SYMLINK_NOFOLLOW) == 0 && S_ISLNK(ls.st_mode))
                        err = ELOOP;
                r = err == ENOENT ? 0 : slots_error_set(e, -err, path, "cannot open: %s%s", strerror(err),
                                                          err == ELOOP ? " (a symbolic link)" : "");
                goto out;
        }
        if (fstat(fd, &st) < 0) {
                r = slots_error_set(e, -errno, path, "cannot stat: %s", strerror(errno));
                goto out;
        }
        efd = dup(fd);
        if (efd < 0) {
                r = slots_error_set(e, -errno, path, "cannot open: %s", strerror(errno));
                goto out;
        }
        r = slots_tree_empty(efd, path, e);
        if (r == 0)
                r = strip_xattrs(fd, path, e);
        /* The folder's own owner and mode as they were (removing an access ACL may change the mode). */
        if (r == 0 && fstat(fd, &now) == 0 && (now.st_mode & 07777) != (st.st_mode & 07777) &&
            fchmod(fd, st.st_mode & 07777) < 0)
                r = slots_error_set(e, -errno, path, "cannot restore the mode: %s", strerror(errno));
out:
        slots_close(fd);
        close(pfd);
        return r;
}

/* Removes the entries of folder dir owned by uid: files and links themselves, folders with all they hold. */
static int clean_top(int rootfd, const char *dir, uid_t uid, struct slots_error *e)
{
        struct first first = { 0, e };
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
                if (statx(fd, de->d_name, AT_SYMLINK_NOFOLLOW | AT_NO_AUTOMOUNT, STATX_BASIC_STATS, &sx) < 0 ||
                    sx.stx_uid != uid)
                        continue;
                join(path, sizeof(path), dir, de->d_name);
                if (!S_ISDIR(sx.stx_mode)) {
                        if (unlinkat(fd, de->d_name, 0) < 0 && errno != ENOENT)
                                keep(&first, slots_error_set(&sub, -errno, path, "cannot remove: %s", strerror(errno)),
                                     &sub);
                        continue;
                }
                if (sx.stx_dev_major != top.stx_dev_major || sx.stx_dev_minor != top.stx_dev_minor ||
                    (sx.stx_attributes & sx.stx_attributes_mask & STATX_ATTR_MOUNT_ROOT)) {
                        slots_error_set(&sub, -EBUSY, path, "is a mount point, never entered");
                        slots_error_fix(&sub, "unmount it");
                        keep(&first, -EBUSY, &sub);
                        continue;
                }
                cfd = openat(fd, de->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
                if (cfd < 0) {
                        if (errno != ENOENT)
                                keep(&first, slots_error_set(&sub, -errno, path, "cannot open: %s", strerror(errno)),
                                     &sub);
                        continue;
                }
                r = slots_tree_empty(cfd, path, &sub);
                if (r == 0 && unlinkat(fd, de->d_name, AT_REMOVEDIR) < 0 && errno != ENOENT)
                        r = slots_error_set(&sub, -errno, path, "cannot remove the folder: %s", strerror(errno));
                keep(&first, r, &sub);
        }
        if (errno)
                keep(&first, slots_error_set(&sub, -errno, dir, "cannot read: %s", strerror(errno)), &sub);
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

/* The mail spool file stays (owner, group and mode as the MTA expects) but loses its content. */
static int clean_mail(int rootfd, const struct slots_pw *slot, struct slots_error *e)
{
        struct stat st;
        int dfd, fd, r = 0;

        dfd = open_dir_in(rootfd, MAIL_DIR);
        if (dfd == -ENOENT)
                return 0;
        if (dfd < 0)
                return slots_error_set(e, dfd, MAIL_DIR, "cannot open: %s", strerror(-dfd));
        fd = openat(dfd, slot->name, O_WRONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
        if (fd < 0) {
                if (errno != ENOENT && errno != ELOOP)
                        r = slots_error_set(e, -errno, MAIL_DIR, "cannot open the mailbox %s: %s", slot->name,
                                            strerror(errno));
        } else {
                if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_uid == slot->uid && st.st_size > 0 &&
                    ftruncate(fd, 0) < 0)
                        r = slots_error_set(e, -errno, MAIL_DIR, "cannot empty the mailbox %s: %s", slot->name,
                                            strerror(errno));
                close(fd);
        }
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
        struct first first = { 0, e };
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
                        keep(&first,
                             slots_error_set(&sub, -errno, file, "cannot remove %s id %d: %s", kind, id, strerror(errno)),
                             &sub);
        }
        r = first.r;
out:
        free(text);
        return r;
}

int slots_cleanup_files(int rootfd, const struct slots_config *c, const struct slots_pw *slot,
                        struct slots_error *e)
{
        static const char *const kinds[] = { "home", "state", "run" };
        struct first first = { 0, e };
        struct slots_error sub;
        char parent[4096];
        int r;

        if (slot->uid == 0 || slot->gid == 0)
                return slots_error_set(e, -EINVAL, slot->name, "refusing to remove the files of uid or gid 0");

        /* Scheduled jobs first, so that nothing of the old user starts again while the rest goes. */
        keep(&first, clean_crontab(rootfd, slot->name, &sub), &sub);
        for (size_t i = 0; i < sizeof(at_dirs) / sizeof(at_dirs[0]); i++)
                keep(&first, clean_top(rootfd, at_dirs[i], slot->uid, &sub), &sub);

        for (size_t i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++) {
                snprintf(parent, sizeof(parent), "%s/%s", c->slots_root, kinds[i]);
                keep(&first, clean_folder(rootfd, parent, slot->name, &sub), &sub);
        }

        /* IPC objects live in the kernel of the host, whatever rootfd is. */
        keep(&first, clean_ipc("shm", slot->uid, slot->gid, &sub), &sub);
        keep(&first, clean_ipc("sem", slot->uid, slot->gid, &sub), &sub);
        keep(&first, clean_ipc("msg", slot->uid, slot->gid, &sub), &sub);

        for (size_t i = 0; i < sizeof(temp_dirs) / sizeof(temp_dirs[0]); i++)
                keep(&first, clean_top(rootfd, temp_dirs[i], slot->uid, &sub), &sub);

        keep(&first, clean_mail(rootfd, slot, &sub), &sub);
        r = first.r;
        return r;
}
