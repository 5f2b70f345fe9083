/*
 * The scratch folder the replace and store tests work in, and failure injection at
 * write, fsync, fchown, fchmod and renameat for tests linked with
 * -Wl,--wrap=write,--wrap=fsync,--wrap=fchown,--wrap=renameat,--wrap=fchmod.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "scratch.h"
#include "unit.h"

/* ---- failure injection: "the Nth call of fn fails with err" ---- */

struct inj inj;

void inj_arm(const char *fn, int at, int err)
{
        memset(&inj, 0, sizeof(inj));
        inj.fn = fn;
        inj.at = at;
        inj.err = err;
}

void inj_reset(void)
{
        memset(&inj, 0, sizeof(inj));
}

static bool inject(const char *fn)
{
        if (!inj.fn || strcmp(inj.fn, fn) != 0)
                return false;
        if (++inj.calls != inj.at)
                return false;
        inj.fired++;
        errno = inj.err;
        return true;
}

ssize_t __wrap_write(int fd, const void *buf, size_t n);
int __real_fsync(int fd);
int __wrap_fsync(int fd);
int __real_fchown(int fd, uid_t uid, gid_t gid);
int __wrap_fchown(int fd, uid_t uid, gid_t gid);
int __real_fchmod(int fd, mode_t mode);
int __wrap_fchmod(int fd, mode_t mode);
int __real_renameat(int olddirfd, const char *oldpath, int newdirfd, const char *newpath);
int __wrap_renameat(int olddirfd, const char *oldpath, int newdirfd, const char *newpath);

ssize_t __wrap_write(int fd, const void *buf, size_t n)
{
        if (inject("write"))
                return -1;
        if (inj.short_write && n > inj.short_write)
                n = inj.short_write;
        return __real_write(fd, buf, n);
}

int __wrap_fsync(int fd)
{
        return inject("fsync") ? -1 : __real_fsync(fd);
}

int __wrap_fchown(int fd, uid_t uid, gid_t gid)
{
        return inject("fchown") ? -1 : __real_fchown(fd, uid, gid);
}

int __wrap_fchmod(int fd, mode_t mode)
{
        return inject("fchmod") ? -1 : __real_fchmod(fd, mode);
}

int __wrap_renameat(int olddirfd, const char *oldpath, int newdirfd, const char *newpath)
{
        return inject("renameat") ? -1 : __real_renameat(olddirfd, oldpath, newdirfd, newpath);
}

/* ---- the scratch folder ---- */

char dir[256];
int dfd = -1;

static int rm_one(const char *path, const struct stat *st, int type, struct FTW *ftw)
{
        (void) st;
        (void) type;
        (void) ftw;
        return remove(path);
}

int setup(void **state)
{
        const char *base = getenv("TMPDIR");

        (void) state;
        inj_reset();
        snprintf(dir, sizeof(dir), "%s/test-unit.XXXXXX", base && base[0] ? base : "/tmp");
        if (!mkdtemp(dir) || chmod(dir, 0755) < 0)
                return -1;
        dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        return dfd < 0 ? -1 : 0;
}

int teardown(void **state)
{
        (void) state;
        inj_reset();
        if (dfd >= 0)
                close(dfd);
        dfd = -1;
        chmod(dir, 0700);
        return nftw(dir, rm_one, 16, FTW_DEPTH | FTW_PHYS);
}

bool is_root(void)
{
        return geteuid() == 0;
}

/* Some other owner when root (4242:4243), else ourselves. */
uid_t owner_uid(void)
{
        return is_root() ? 4242 : geteuid();
}

gid_t owner_gid(void)
{
        return is_root() ? 4243 : getegid();
}

void make_file(const char *name, const char *text, uid_t uid, gid_t gid, mode_t mode)
{
        int fd = openat(dfd, name, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
        size_t len = strlen(text);

        assert_true(fd >= 0);
        assert_int_equal(write(fd, text, len), (ssize_t) len);
        assert_int_equal(fchown(fd, uid, gid), 0);
        assert_int_equal(fchmod(fd, mode), 0);
        assert_int_equal(close(fd), 0);
}

void snapshot(const char *name, struct snap *s)
{
        int fd = openat(dfd, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);

        if (fd < 0)
                fail_msg("cannot open %s: %s", name, strerror(errno));
        assert_int_equal(fstat(fd, &s->st), 0);
        s->len = read(fd, s->data, sizeof(s->data));
        assert_true(s->len >= 0);
        close(fd);
}

/* Same bytes, same inode (never renamed over), same owner, group and mode. */
bool unchanged(const char *name, const struct snap *before, char *why, size_t size)
{
        struct snap now;

        snapshot(name, &now);
        if (now.len != before->len || memcmp(now.data, before->data, (size_t) now.len) != 0)
                snprintf(why, size, "content changed: \"%.*s\"", (int) now.len, now.data);
        else if (now.st.st_ino != before->st.st_ino)
                snprintf(why, size, "the file was replaced (inode %lu -> %lu)", (unsigned long) before->st.st_ino,
                         (unsigned long) now.st.st_ino);
        else if (now.st.st_uid != before->st.st_uid || now.st.st_gid != before->st.st_gid ||
                 now.st.st_mode != before->st.st_mode)
                snprintf(why, size, "now %u:%u %o, was %u:%u %o", (unsigned) now.st.st_uid,
                         (unsigned) now.st.st_gid, now.st.st_mode, (unsigned) before->st.st_uid,
                         (unsigned) before->st.st_gid, before->st.st_mode);
        else
                return true;
        return false;
}

void assert_file(const char *name, const char *text, uid_t uid, gid_t gid, mode_t mode)
{
        struct snap s;

        snapshot(name, &s);
        assert_true(S_ISREG(s.st.st_mode));
        if (s.len != (ssize_t) strlen(text) || memcmp(s.data, text, strlen(text)) != 0)
                fail_msg("%s: content \"%.*s\", expected \"%s\"", name, (int) s.len, s.data, text);
        if (s.st.st_uid != uid || s.st.st_gid != gid || (s.st.st_mode & 07777) != mode)
                fail_msg("%s: %u:%u %04o, expected %u:%u %04o", name, (unsigned) s.st.st_uid,
                         (unsigned) s.st.st_gid, s.st.st_mode & 07777, (unsigned) uid, (unsigned) gid, mode);
}

static int cmp_name(const void *a, const void *b)
{
        return strcmp(a, b);
}

/* The names in the folder, sorted, comma-separated: temp files show up here. */
void dir_names(char *out, size_t size)
{
        char names[32][256];
        size_t n = 0, off = 0;
        struct dirent *d;
        DIR *dp;
        int fd = dup(dfd);

        assert_true(fd >= 0);
        dp = fdopendir(fd);
        assert_non_null(dp);
        rewinddir(dp);
        while ((d = readdir(dp)) && n < N_ELEM(names)) {
                if (strcmp(d->d_name, ".") == 0 || strcmp(d->d_name, "..") == 0)
                        continue;
                snprintf(names[n++], sizeof(names[0]), "%s", d->d_name);
        }
        closedir(dp);
        qsort(names, n, sizeof(names[0]), cmp_name);
        out[0] = '\0';
        for (size_t i = 0; i < n; i++)
                off += (size_t) snprintf(out + off, size - off, "%s%s", i ? "," : "", names[i]);
}

void assert_dir(const char *expected)
{
        char got[4096];

        dir_names(got, sizeof(got));
        if (strcmp(got, expected) != 0)
                fail_msg("folder holds [%s], expected [%s]", got, expected);
}
