/* Release hygiene in the kernel: the slot's System V and POSIX IPC objects, its keyrings, the mounts it holds. */
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
#include "cleanup.h"
#include "fsutil.h"
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
                return slots_error_refuse(e, -EINVAL, slot->name, "refusing to remove the IPC objects of uid or gid 0");
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
                return slots_error_refuse(e, -EINVAL, slot->name, "refusing to unmount for uid or gid 0");
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
