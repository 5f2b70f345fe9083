/*
 * Release hygiene in the kernel: the slot's System V and POSIX IPC objects, its keyrings, the mounts
 * it holds; and what system services record per uid: its journal files and coredumps.
 */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ipc.h>
#include <sys/mount.h>
#include <sys/msg.h>
#include <sys/sem.h>
#include <sys/shm.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <linux/keyctl.h>
#include <unistd.h>

#include "child.h"
#include "cleanup-int.h"
#include "cleanup.h"
#include "fsutil.h"
#include "mounts.h"
#include "path.h"
#include "privdrop.h"

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

/* What the mqueue child reports through its pipe. */
struct mq_result {
        int err;                        /* first -errno, 0 */
        bool note;                      /* no mqueue could be mounted: a note, not a failure */
        char what[64];                  /* the step or queue it is about */
};

/*
 * A detached mqueue mount of this IPC namespace (the new mount API): attached
 * nowhere, so it needs neither a mount namespace of its own nor a "/" that is a
 * mount point (a plain chroot has none to make private).  A readable fd of its
 * root, or -errno.
 */
static int mq_detached(void)
{
#ifdef FSOPEN_CLOEXEC
        int fs = fsopen("mqueue", FSOPEN_CLOEXEC), m, fd;

        if (fs < 0)
                return -errno;
        if (fsconfig(fs, FSCONFIG_CMD_CREATE, NULL, NULL, 0) < 0) {
                fd = -errno;
                close(fs);
                return fd;
        }
        m = fsmount(fs, FSMOUNT_CLOEXEC, MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV | MOUNT_ATTR_NOEXEC);
        fd = m < 0 ? -errno : openat(m, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (m >= 0 && fd < 0)
                fd = -errno;
        slots_close(m);
        close(fs);
        return fd;
#else
        return -ENOSYS;
#endif
}

/* The older way: a private mount namespace and a mount on a spot of it; -errno with res set. */
static int mq_mounted(struct mq_result *res)
{
        static const char *const spots[] = { "/dev/mqueue", "/tmp", "/" };
        const char *at = NULL;
        int fd;

        /* A mount of our own, seen by nobody else: the host's mounts stay as they are. */
        if (unshare(CLONE_NEWNS) < 0 || mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0) {
                snprintf(res->what, sizeof(res->what), "a private mount namespace");
                return -errno;
        }
        for (size_t i = 0; i < sizeof(spots) / sizeof(spots[0]) && !at; i++)
                if (mount("mqueue", spots[i], "mqueue", MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL) == 0)
                        at = spots[i];
        if (!at) {
                snprintf(res->what, sizeof(res->what), "a private mqueue mount");
                return -errno;
        }
        fd = open(at, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (fd < 0)
                snprintf(res->what, sizeof(res->what), "the private mqueue mount");
        return fd < 0 ? -errno : fd;
}

static void mq_child(int wfd, uid_t uid, gid_t gid)
{
        struct mq_result res = { 0 };
        struct dirent *de;
        DIR *d;
        int fd = mq_detached();

        if (fd < 0)
                fd = mq_mounted(&res);
        if (fd < 0) {
                /* Nowhere to see the queues (no mqueue in this kernel, no right to mount one). */
                res.err = fd;
                res.note = true;
                goto out;
        }
        d = fdopendir(fd);
        if (!d) {
                res.err = -errno;
                close(fd);
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

static int clean_mqueues(uid_t uid, gid_t gid, slots_cleanup_note_fn note, void *note_data, struct slots_error *e)
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
                res.note = false;
        }
        close(p[0]);
        (void) slots_child_wait(&c);
        res.what[sizeof(res.what) - 1] = '\0';
        if (res.err == 0)
                return 0;
        if (res.note) {
                char why[256];

                snprintf(why, sizeof(why), "no mqueue file system could be mounted to look for the slot's queues "
                         "(%s: %s); none are removed (where the kernel has them: mount -t mqueue none /dev/mqueue, "
                         "then remove those of the slot)", res.what[0] ? res.what : "a detached mount",
                         strerror(-res.err));
                if (note)
                        note(note_data, "POSIX message queues", why);
                return 0;
        }
        return slots_error_set(e, res.err, "POSIX message queues", "cannot remove the slot's queues (%s): %s",
                               res.err == -ECHILD ? "the helper died" : res.what, strerror(-res.err));
}

int slots_cleanup_ipc(const struct slots_pw *slot, slots_cleanup_note_fn note, void *note_data, struct slots_error *e)
{
        struct slots_first first = { 0, e };
        struct slots_error sub;

        if (slot->uid == 0 || slot->gid == 0)
                return slots_error_refuse(e, -EINVAL, slot->name, "refusing to remove the IPC objects of uid or gid 0");
        slots_first_keep(&first, clean_ipc("shm", slot->uid, slot->gid, &sub), &sub);
        slots_first_keep(&first, clean_ipc("sem", slot->uid, slot->gid, &sub), &sub);
        slots_first_keep(&first, clean_ipc("msg", slot->uid, slot->gid, &sub), &sub);
        slots_first_keep(&first, clean_mqueues(slot->uid, slot->gid, note, note_data, &sub), &sub);
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
                return slots_error_refuse(e, -EINVAL, slot->name, "refusing to clear the keys of uid or gid 0");
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
        struct cleanup_mounts t;
        char want[32], got[32];
        int r;

        if (slot->uid == 0 || slot->gid == 0)
                return slots_error_refuse(e, -EINVAL, slot->name, "refusing to unmount for uid or gid 0");
        r = cleanup_mounts_read(&t);
        if (r < 0)
                return slots_error_set(e, r, "/proc/self/mountinfo", "cannot read: %s", strerror(-r));
        snprintf(want, sizeof(want), "%u", (unsigned) slot->uid);
        for (size_t i = 0; i < t.n; i++) {
                const struct cleanup_mount *m = &t.m[i];

                if (strncmp(m->fstype, "fuse", 4) != 0 || !cleanup_mount_option(m, "user_id", got, sizeof(got)) ||
                    strcmp(got, want) != 0)
                        continue;
                r = umount_seen(m->point, m->id);
                if (r < 0 && r != -EINVAL && r != -ENOENT && r != -ESTALE)
                        slots_first_keep(&first, slots_error_set(&sub, r, m->point,
                                                                 "cannot unmount the slot's FUSE mount: %s",
                                                                 strerror(-r)), &sub);
        }
        cleanup_mounts_free(&t);
        return first.r;
}

/* ---- the records system services keep per uid: journald's per-user files, systemd-coredump's dumps ---- */

static const char *const journal_dirs[] = { "/var/log/journal", "/run/log/journal" };
#define COREDUMP_DIR "/var/lib/systemd/coredump"

/* journald's file of uid: user-<uid>.journal, archived user-<uid>@<ids>.journal, and their "~" forms. */
static bool journal_of(const char *name, uid_t uid)
{
        char pre[32];
        size_t n = (size_t) snprintf(pre, sizeof(pre), "user-%u", (unsigned) uid);
        const char *dot;

        if (strncmp(name, pre, n) != 0 || (name[n] != '.' && name[n] != '@'))
                return false;
        dot = strstr(name + n, ".journal");
        return dot && (strcmp(dot, ".journal") == 0 || strcmp(dot, ".journal~") == 0);
}

static bool all_of(const char *s, const char *set, size_t want)
{
        size_t n = strspn(s, set);

        return n > 0 && s[n] == '\0' && (want == 0 || n == want);
}

/*
 * systemd-coredump's dump of uid: core.<comm>.<uid>.<boot id>.<pid>.<usec>[.zst|.xz|.lz4], read
 * from the right, since the command name may hold dots.
 */
static bool coredump_of(const char *name, uid_t uid)
{
        char buf[NAME_MAX + 1], *field[4], *dot;
        char want[16];

        if (strncmp(name, "core.", 5) != 0 || strlen(name) > NAME_MAX)
                return false;
        snprintf(buf, sizeof(buf), "%s", name);
        dot = strrchr(buf, '.');
        if (dot && (strcmp(dot, ".zst") == 0 || strcmp(dot, ".xz") == 0 || strcmp(dot, ".lz4") == 0))
                *dot = '\0';
        for (int i = 0; i < 4; i++) {
                dot = strrchr(buf, '.');
                if (!dot || dot < buf + 5)
                        return false;
                field[i] = dot + 1;
                *dot = '\0';
        }
        snprintf(want, sizeof(want), "%u", (unsigned) uid);
        return all_of(field[0], "0123456789", 0) && all_of(field[1], "0123456789", 0) &&
               all_of(field[2], "0123456789abcdef", 32) && strcmp(field[3], want) == 0;
}

/* Removes the entries of folder fd (path: for messages) that match(uid); counts them in *n. */
static int remove_matching(int fd, const char *path, bool (*match)(const char *, uid_t), uid_t uid,
                           unsigned long *n, struct slots_error *e)
{
        struct slots_first first = { 0, e };
        struct slots_error sub;
        struct dirent *de;
        DIR *d = fdopendir(fd);

        if (!d) {
                close(fd);
                return slots_error_set(e, -errno, path, "cannot read: %s", strerror(errno));
        }
        while ((errno = 0, de = readdir(d)))
                if (match(de->d_name, uid)) {
                        if (unlinkat(dirfd(d), de->d_name, 0) == 0)
                                (*n)++;
                        else if (errno != ENOENT)
                                slots_first_keep(&first, slots_error_set(&sub, -errno, path, "cannot remove %s: %s",
                                                                         de->d_name, strerror(errno)), &sub);
                }
        if (errno)
                slots_first_keep(&first, slots_error_set(&sub, -errno, path, "cannot read: %s", strerror(errno)), &sub);
        closedir(d);
        return first.r;
}

/* Each journal folder's machine folders (<machine-id>, <machine-id>.<namespace>): uid's files in them. */
static int clean_journal(int rootfd, const char *dir, uid_t uid, unsigned long *n, struct slots_error *e)
{
        struct slots_first first = { 0, e };
        struct slots_error sub;
        struct dirent *de;
        int fd = cleanup_open_dir_in(rootfd, dir);
        DIR *d;

        if (fd == -ENOENT)
                return 0;
        if (fd < 0 || !(d = fdopendir(fd))) {
                int r = fd < 0 ? fd : -errno;

                slots_close(fd);
                return slots_error_set(e, r, dir, "cannot open: %s", strerror(-r));
        }
        while ((errno = 0, de = readdir(d))) {
                int mfd;

                if (de->d_name[0] == '.')
                        continue;
                mfd = openat(dirfd(d), de->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
                if (mfd >= 0)
                        slots_first_keep(&first, remove_matching(mfd, dir, journal_of, uid, n, &sub), &sub);
        }
        closedir(d);
        return first.r;
}

int slots_cleanup_records(int rootfd, const struct slots_pw *slot, slots_cleanup_note_fn note, void *note_data,
                          struct slots_error *e)
{
        struct slots_first first = { 0, e };
        struct slots_error sub;
        unsigned long journals = 0, dumps = 0;
        int fd;

        if (slot->uid == 0)
                return slots_error_refuse(e, -EINVAL, slot->name, "refusing to clean up after uid 0");
        for (size_t i = 0; i < sizeof(journal_dirs) / sizeof(journal_dirs[0]); i++)
                slots_first_keep(&first, clean_journal(rootfd, journal_dirs[i], slot->uid, &journals, &sub), &sub);
        fd = cleanup_open_dir_in(rootfd, COREDUMP_DIR);
        if (fd >= 0)
                slots_first_keep(&first, remove_matching(fd, COREDUMP_DIR, coredump_of, slot->uid, &dumps, &sub), &sub);
        else if (fd != -ENOENT)
                slots_first_keep(&first, slots_error_set(&sub, fd, COREDUMP_DIR, "cannot open: %s", strerror(-fd)),
                                 &sub);
        if (note && journals + dumps) {
                char why[128];

                snprintf(why, sizeof(why), "%lu journal file%s and %lu coredump%s of %s removed", journals,
                         journals == 1 ? "" : "s", dumps, dumps == 1 ? "" : "s", slot->name);
                note(note_data, "journal and coredumps", why);
        }
        return first.r;
}
