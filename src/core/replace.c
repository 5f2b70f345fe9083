/* Owner-preserving atomic replace of a file: temp, fchown, fchmod, ACL, fsync, renameat, fsync dir. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/acl.h>
#include <sys/file.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <acl/libacl.h>

#include "fsutil.h"
#include "replace.h"

int slots_lock_take(int dirfd, const char *lockname, const char *display, struct slots_error *e)
{
        struct stat st;
        int fd;

        /* Never open what is not a regular file: opening a device node can act on the device. */
        if (fstatat(dirfd, lockname, &st, AT_SYMLINK_NOFOLLOW) == 0 && !S_ISREG(st.st_mode) &&
            !S_ISLNK(st.st_mode))
                goto not_regular;
        fd = openat(dirfd, lockname, O_RDWR | O_CREAT | O_NOFOLLOW | O_NOCTTY | O_NONBLOCK | O_CLOEXEC,
                    0600);
        if (fd < 0 && errno == ENXIO)
                goto not_regular;
        if (fd < 0)
                return slots_error_set(e, -errno, display, "cannot open the lock file: %s",
                                       errno == ELOOP ? "it is a symlink" : strerror(errno));
        if (fstat(fd, &st) < 0) {
                int r = -errno;
                close(fd);
                return slots_error_set(e, r, display, "cannot stat the lock file: %s", strerror(-r));
        }
        if (!S_ISREG(st.st_mode)) {
                close(fd);
                goto not_regular;
        }
        /* flock is released by the kernel when the holder dies: a crash never leaves a stale lock. */
        while (flock(fd, LOCK_EX) < 0) {
                if (errno == EINTR)
                        continue;
                int r = slots_error_set(e, -errno, display, "cannot lock: %s", strerror(errno));
                close(fd);
                return r;
        }
        return fd;

not_regular:
        /* Refused (exit 1) like a symlink there, not an invalid table (exit 2). */
        return slots_error_refuse(e, -EPERM, display, "the lock file %s is not a regular file; remove it",
                                  lockname);
}

static int make_temp(int dirfd, const char *name, char *out, size_t size)
{
        for (int tries = 0; tries < 100; tries++) {
                unsigned char rnd[6];
                int fd;

                if (getrandom(rnd, sizeof(rnd), 0) != sizeof(rnd))
                        return -EIO;
                snprintf(out, size, ".%s.%02x%02x%02x%02x%02x%02x", name, rnd[0], rnd[1], rnd[2], rnd[3],
                         rnd[4], rnd[5]);
                fd = openat(dirfd, out, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_NOCTTY | O_CLOEXEC,
                            0600);
                if (fd >= 0)
                        return fd;
                if (errno != EEXIST)
                        return -errno;
        }
        return -EEXIST;
}

/* The content of a file as one buffer. */
struct bytes {
        const void *data;
        size_t len;
};

static int write_bytes(int fd, void *arg)
{
        const struct bytes *b = arg;

        return slots_write_all(fd, b->data, b->len);
}

/* Writes one temp file with the given owner, mode and ACL; on failure it is gone again. */
static int write_temp(int dirfd, const char *name, const char *display, slots_writer_fn *write, void *arg,
                      uid_t uid, gid_t gid, mode_t mode, acl_t acl, bool sync, char *tmp, size_t tmpsize,
                      struct slots_error *e)
{
        struct stat st;
        const char *step;
        int fd, r;

        fd = make_temp(dirfd, name, tmp, tmpsize);
        if (fd < 0) {
                tmp[0] = '\0';
                return slots_error_set(e, fd, display, "cannot create a temporary file next to it: %s",
                                       strerror(-fd));
        }
        /* Owner first (a failure is fatal), mode after: chown clears set-id bits. */
        step = "fchown";
        if (fchown(fd, uid, gid) < 0)
                goto fail_errno;
        step = "fchmod";
        if (fchmod(fd, mode) < 0)
                goto fail_errno;
        step = "acl_set_fd";
        if (acl && acl_set_fd(fd, acl) < 0)
                goto fail_errno;
        r = write(fd, arg);
        if (r < 0) {
                step = "write";
                errno = -r;
                goto fail_errno;
        }
        step = "fsync";
        if (sync && fsync(fd) < 0)
                goto fail_errno;
        step = "fstat";
        if (fstat(fd, &st) < 0)
                goto fail_errno;
        if (st.st_uid != uid || st.st_gid != gid || (st.st_mode & 07777) != mode) {
                r = slots_error_set(e, -EPERM, display,
                                    "the new file came out as %u:%u %04o instead of %u:%u %04o",
                                    (unsigned) st.st_uid, (unsigned) st.st_gid, st.st_mode & 07777,
                                    (unsigned) uid, (unsigned) gid, mode);
                goto fail;
        }
        if (close(fd) < 0) {
                fd = -1;
                step = "close";
                goto fail_errno;
        }
        return 0;

fail_errno:
        r = slots_error_set(e, -errno, display, "%s of the new file failed: %s", step, strerror(errno));
fail:
        slots_close(fd);
        (void) unlinkat(dirfd, tmp, 0);
        tmp[0] = '\0';
        return r;
}

void slots_replace_abort(struct slots_staged *st)
{
        if (st->tmp[0])
                (void) unlinkat(st->dirfd, st->tmp, 0);
        if (st->backup_tmp[0])
                (void) unlinkat(st->dirfd, st->backup_tmp, 0);
        st->tmp[0] = st->backup_tmp[0] = '\0';
}

int slots_replace_stage(int dirfd, const char *name, const char *display, const void *data,
                        size_t len, const struct slots_file_mode *def, unsigned flags,
                        struct slots_staged *st, struct slots_error *e)
{
        struct bytes b = { data, len };

        return slots_replace_stage_with(dirfd, name, display, write_bytes, &b, def, flags, st, e);
}

int slots_replace_stage_with(int dirfd, const char *name, const char *display, slots_writer_fn *write,
                             void *arg, const struct slots_file_mode *def, unsigned flags,
                             struct slots_staged *st, struct slots_error *e)
{
        struct stat ost;
        acl_t acl = NULL;
        char *old = NULL;
        size_t oldlen = 0;
        uid_t uid = def->uid;
        gid_t gid = def->gid;
        mode_t mode = def->mode;
        int ofd, r;

        memset(st, 0, sizeof(*st));
        st->dirfd = dirfd;
        snprintf(st->name, sizeof(st->name), "%s", name);
        snprintf(st->display, sizeof(st->display), "%s", display);

        ofd = slots_open_regular(dirfd, name, &ost);
        if (ofd < 0 && ofd != -ENOENT) {
                if (ofd == -ELOOP)
                        return slots_error_refuse(e, ofd, display,
                                                  "is a symlink; refusing to replace it (make it a regular file)");
                if (ofd == -EINVAL)
                        return slots_error_set(e, ofd, display, "is not a regular file");
                return slots_error_set(e, ofd, display, "cannot open: %s", strerror(-ofd));
        }
        if (ofd >= 0 && !(flags & SLOTS_REPLACE_FORCE_MODE)) {
                uid = ost.st_uid;
                gid = ost.st_gid;
                mode = ost.st_mode & 07777;
                if (acl_extended_fd(ofd) == 1) {
                        acl = acl_get_fd(ofd);
                        if (!acl) {
                                r = slots_error_set(e, -errno, display, "cannot read its ACL: %s",
                                                    strerror(errno));
                                goto out;
                        }
                }
        }
        if (ofd >= 0 && (flags & SLOTS_REPLACE_BACKUP)) {
                char bname[300];
                struct bytes ob;

                r = slots_read_all(ofd, (size_t) 1 << 30, &old, &oldlen);
                if (r < 0) {
                        slots_error_set(e, r, display, "cannot read it for the backup: %s", strerror(-r));
                        goto out;
                }
                snprintf(bname, sizeof(bname), "%s-", name);
                ob = (struct bytes) { old, oldlen };
                r = write_temp(dirfd, bname, display, write_bytes, &ob, ost.st_uid, ost.st_gid,
                               ost.st_mode & 07777, acl, true, st->backup_tmp, sizeof(st->backup_tmp), e);
                if (r < 0)
                        goto out;
        }
        st->sync = !(flags & SLOTS_REPLACE_NO_SYNC);
        r = write_temp(dirfd, name, display, write, arg, uid, gid, mode, acl, st->sync, st->tmp,
                       sizeof(st->tmp), e);
        if (r < 0)
                slots_replace_abort(st);
out:
        if (acl)
                acl_free(acl);
        free(old);
        slots_close(ofd);
        return r;
}

int slots_replace_commit(struct slots_staged *st, struct slots_error *e)
{
        int r;

        if (st->backup_tmp[0]) {
                char bname[300];

                snprintf(bname, sizeof(bname), "%s-", st->name);
                if (renameat(st->dirfd, st->backup_tmp, st->dirfd, bname) < 0) {
                        r = slots_error_set(e, -errno, st->display, "cannot put the backup %s- in place: %s",
                                            st->name, strerror(errno));
                        slots_replace_abort(st);
                        return r;
                }
                st->backup_tmp[0] = '\0';
        }
        if (renameat(st->dirfd, st->tmp, st->dirfd, st->name) < 0) {
                r = slots_error_set(e, -errno, st->display, "cannot rename the new file into place: %s",
                                    strerror(errno));
                slots_replace_abort(st);
                return r;
        }
        st->tmp[0] = '\0';
        if (!st->sync)
                return 0;
        r = slots_fsync_dir(st->dirfd);
        if (r < 0)
                return slots_error_set(e, r, st->display,
                                       "the new content is in place, but fsync of its directory failed: %s; "
                                       "it may not survive a crash",
                                       strerror(-r));
        return 0;
}

/* ".<name>." or ".<name>-." followed by exactly 12 lower-case hex digits. */
static bool is_temp_of(const char *entry, const char *name)
{
        size_t n = strlen(name);

        if (entry[0] != '.' || strncmp(entry + 1, name, n) != 0)
                return false;
        entry += 1 + n;
        if (entry[0] == '-')
                entry++;
        if (entry[0] != '.')
                return false;
        entry++;
        for (int i = 0; i < 12; i++)
                if (!((entry[i] >= '0' && entry[i] <= '9') || (entry[i] >= 'a' && entry[i] <= 'f')))
                        return false;
        return entry[12] == '\0';
}

int slots_replace_clean_stale(int dirfd, const char *name)
{
        struct timespec now;
        struct dirent *de;
        DIR *d;
        int fd, removed = 0;

        clock_gettime(CLOCK_REALTIME, &now);
        /* A fresh open file description: reading it never moves dirfd's offset. */
        fd = openat(dirfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (fd < 0)
                return -errno;
        d = fdopendir(fd);
        if (!d) {
                int r = -errno;
                close(fd);
                return r;
        }
        while ((de = readdir(d))) {
                struct stat st;

                if (!is_temp_of(de->d_name, name))
                        continue;
                if (fstatat(dirfd, de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0 || !S_ISREG(st.st_mode))
                        continue;
                if (st.st_mtim.tv_sec > now.tv_sec ||
                    (st.st_mtim.tv_sec == now.tv_sec && st.st_mtim.tv_nsec > now.tv_nsec))
                        continue;
                if (unlinkat(dirfd, de->d_name, 0) == 0)
                        removed++;
        }
        closedir(d);
        return removed;
}

int slots_replace(int dirfd, const char *name, const char *display, const void *data, size_t len,
                  const struct slots_file_mode *def, unsigned flags, struct slots_error *e)
{
        struct bytes b = { data, len };

        return slots_replace_with(dirfd, name, display, write_bytes, &b, def, flags, e);
}

int slots_replace_with(int dirfd, const char *name, const char *display, slots_writer_fn *write, void *arg,
                       const struct slots_file_mode *def, unsigned flags, struct slots_error *e)
{
        struct slots_staged st;
        int r;

        r = slots_replace_stage_with(dirfd, name, display, write, arg, def, flags, &st, e);
        if (r < 0)
                return r;
        return slots_replace_commit(&st, e);
}
