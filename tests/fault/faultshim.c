/*
 * faultshim.so: an LD_PRELOAD library that counts the file-changing system calls
 * a command makes and, at the Nth one, kills the command with SIGKILL or makes
 * the call fail with a chosen errno.  The reliability tests (tests/reliability)
 * drive it through the environment:
 *
 *   FAULT_LOG=FILE        append one line per counted call: "N call target"
 *   FAULT_AT=N            act at the Nth counted call (1-based); unset: only count
 *   FAULT_ACTION=A        kill (SIGKILL before the call), kill-after (the call
 *                         runs, then SIGKILL), or an errno name: ENOSPC, EIO,
 *                         EPERM, EDQUOT, EACCES, EROFS (the call is not made,
 *                         it returns -1 with that errno)
 *   FAULT_CALLS=a,b       only these calls count (default: all of them below but
 *                         openat, which a test names to learn what a command opens)
 *   FAULT_PROG=a,b        only act in a program of one of these names
 *   FAULT_NOW=SECONDS     time() and gettimeofday() return this fixed time, so
 *                         "since"/"released" and shadow dates are reproducible
 *                         (clock_gettime is left alone: file times stay real)
 *   FAULT_RANDOM=counter  getrandom() returns a predictable sequence (temp names)
 *   FAULT_COMMIT_NAME=N   after each successful rename onto a file named N ...
 *   FAULT_COMMIT_LOG=F    ... append "TAG BEFORE AFTER" to F (CLOCK_MONOTONIC
 *                         seconds.nanoseconds around the rename),
 *   FAULT_TAG=TAG         so a harness learns the order in which commits happened
 *   FAULT_LOG_DIRS=1      log the target of renameat/renameat2 with its folder
 *                         ("/etc/slots/slots.json", not "slots.json"), so a test can
 *                         pair each rename with the fsync of that folder
 *
 * Only the first process that loads the library (and whose name FAULT_PROG
 * lists, when set) acts: a forked child or a program it executes passes every
 * call through untouched (the pid is pinned in FAULT_PINNED_PID), so the count
 * is the command's own.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/xattr.h>
#include <sys/types.h>
#include <time.h>
#include <unistd.h>

enum call {
        C_WRITE,
        C_FSYNC,
        C_FDATASYNC,
        C_FCHOWN,
        C_FCHOWNAT,
        C_FCHMOD,
        C_FCHMODAT,
        C_RENAME,
        C_RENAMEAT,
        C_RENAMEAT2,
        C_UNLINK,
        C_UNLINKAT,
        C_FTRUNCATE,
        C_FSETXATTR,
        C_OPENAT,               /* only when FAULT_CALLS names it: opens change nothing */
        C_MAX,
};

static const char *const call_names[C_MAX] = {
        [C_WRITE] = "write",         [C_FSYNC] = "fsync",         [C_FDATASYNC] = "fdatasync",
        [C_FCHOWN] = "fchown",       [C_FCHOWNAT] = "fchownat",   [C_FCHMOD] = "fchmod",
        [C_FCHMODAT] = "fchmodat",   [C_RENAME] = "rename",       [C_RENAMEAT] = "renameat",
        [C_RENAMEAT2] = "renameat2", [C_UNLINK] = "unlink",       [C_UNLINKAT] = "unlinkat",
        [C_FTRUNCATE] = "ftruncate", [C_FSETXATTR] = "fsetxattr",   [C_OPENAT] = "openat",
};

static const struct {
        const char *name;
        int value;
} errnos[] = {
        { "ENOSPC", ENOSPC }, { "EIO", EIO }, { "EPERM", EPERM }, { "EDQUOT", EDQUOT },
        { "EACCES", EACCES }, { "EROFS", EROFS }, { "EINTR", EINTR },
};

enum action { A_NONE, A_KILL, A_KILL_AFTER, A_ERRNO };

static struct {
        bool active;                    /* this is the pinned process and the program matches */
        pid_t pid;                      /* the pinned process */
        bool enabled[C_MAX];
        unsigned long count;
        unsigned long at;
        enum action action;
        int err;
        int logfd;
        bool fixed_now;
        time_t now;
        bool counter_random;
        unsigned long random_seq;
        const char *commit_name;
        int commitfd;
        const char *tag;
        bool log_dirs;
} S = { .logfd = -1, .commitfd = -1 };

static void *real(const char *name)
{
        void *f = dlsym(RTLD_NEXT, name);

        if (!f) {
                static const char msg[] = "faultshim: a real function is missing\n";
                (void) syscall(SYS_write, 2, msg, sizeof(msg) - 1);
                abort();
        }
        return f;
}

/* The log is written with the raw system call so it never counts itself. */
static void raw_append(int fd, const char *buf, size_t len)
{
        while (len > 0) {
                long n = syscall(SYS_write, fd, buf, len);
                if (n < 0 && errno == EINTR)
                        continue;
                if (n <= 0)
                        return;
                buf += n;
                len -= (size_t) n;
        }
}

static bool in_list(const char *list, const char *word)
{
        size_t n = strlen(word);

        for (const char *p = list; p && *p;) {
                const char *end = strchr(p, ',');
                size_t len = end ? (size_t) (end - p) : strlen(p);

                if (len == n && strncmp(p, word, n) == 0)
                        return true;
                p = end ? end + 1 : NULL;
        }
        return false;
}

__attribute__((constructor)) static void faultshim_init(void)
{
        const char *v, *pinned = getenv("FAULT_PINNED_PID");
        char pid[32];
        int saved = errno;

        v = getenv("FAULT_PROG");
        if (v && *v && !in_list(v, program_invocation_short_name))
                goto out;
        /* Pin the first matching process; everything it starts passes through. */
        if (pinned) {
                if (strtol(pinned, NULL, 10) != (long) getpid())
                        goto out;
        } else {
                snprintf(pid, sizeof(pid), "%ld", (long) getpid());
                setenv("FAULT_PINNED_PID", pid, 1);
        }
        S.active = true;
        S.pid = getpid();

        v = getenv("FAULT_CALLS");
        for (int c = 0; c < C_MAX; c++)
                S.enabled[c] = v && *v ? in_list(v, call_names[c]) : c != C_OPENAT;
        v = getenv("FAULT_AT");
        S.at = v ? strtoul(v, NULL, 10) : 0;
        v = getenv("FAULT_ACTION");
        if (!v || !*v || strcmp(v, "kill") == 0) {
                S.action = A_KILL;
        } else if (strcmp(v, "kill-after") == 0) {
                S.action = A_KILL_AFTER;
        } else {
                S.action = A_NONE;
                for (size_t i = 0; i < sizeof(errnos) / sizeof(errnos[0]); i++)
                        if (strcmp(v, errnos[i].name) == 0) {
                                S.action = A_ERRNO;
                                S.err = errnos[i].value;
                        }
                if (S.action == A_NONE) {
                        static const char msg[] = "faultshim: unknown FAULT_ACTION\n";
                        raw_append(2, msg, sizeof(msg) - 1);
                        abort();
                }
        }
        if (S.at == 0)
                S.action = A_NONE;
        v = getenv("FAULT_LOG");
        if (v && *v)
                S.logfd = (int) syscall(SYS_openat, AT_FDCWD, v,
                                        O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC | O_NOFOLLOW, 0600);
        v = getenv("FAULT_NOW");
        if (v && *v) {
                S.fixed_now = true;
                S.now = (time_t) strtoll(v, NULL, 10);
        }
        v = getenv("FAULT_RANDOM");
        S.counter_random = v && strcmp(v, "counter") == 0;
        S.commit_name = getenv("FAULT_COMMIT_NAME");
        v = getenv("FAULT_COMMIT_LOG");
        if (S.commit_name && v && *v)
                S.commitfd = (int) syscall(SYS_openat, AT_FDCWD, v,
                                           O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC | O_NOFOLLOW, 0600);
        v = getenv("FAULT_LOG_DIRS");
        S.log_dirs = v && strcmp(v, "1") == 0;
        S.tag = getenv("FAULT_TAG");
        if (!S.tag)
                S.tag = "-";
out:
        errno = saved;
}

static bool mine(void)
{
        /* A forked child keeps S.active from its parent: compare the pid each time. */
        return S.active && S.pid == getpid();
}

static void describe_fd(int fd, char *buf, size_t size)
{
        char link[64];
        ssize_t n;

        snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
        n = readlink(link, buf, size - 1);
        if (n < 0)
                snprintf(buf, size, "fd %d", fd);
        else
                buf[n] = '\0';
}

/* The name a *at call acts on, with its folder when FAULT_LOG_DIRS asks for it. */
static const char *at_name(int dirfd, const char *name, char *buf, size_t size)
{
        char dir[400];

        if (!S.log_dirs || !mine() || S.logfd < 0 || name[0] == '/')
                return name;
        if (dirfd == AT_FDCWD) {
                if (!getcwd(dir, sizeof(dir)))
                        return name;
        } else {
                describe_fd(dirfd, dir, sizeof(dir));
        }
        snprintf(buf, size, "%s/%s", dir, name);
        return buf;
}

/*
 * Called before each interposed call.  Returns true when the call must fail with
 * S.err instead of running; *kill_after asks the caller to die after the call.
 */
static bool before(enum call c, int fd, const char *name, bool *kill_after)
{
        char target[512], line[700];
        int saved = errno;
        unsigned long n;

        *kill_after = false;
        if (!mine() || !S.enabled[c])
                return false;
        n = ++S.count;
        if (S.logfd >= 0) {
                if (name)
                        snprintf(target, sizeof(target), "%s", name);
                else
                        describe_fd(fd, target, sizeof(target));
                int len = snprintf(line, sizeof(line), "%lu %s %s\n", n, call_names[c], target);
                if (len > 0)
                        raw_append(S.logfd, line, (size_t) len < sizeof(line) ? (size_t) len : sizeof(line) - 1);
        }
        errno = saved;
        if (n != S.at)
                return false;
        switch (S.action) {
        case A_KILL:
                (void) syscall(SYS_kill, getpid(), SIGKILL);
                break;
        case A_KILL_AFTER:
                *kill_after = true;
                break;
        case A_ERRNO:
                return true;
        case A_NONE:
                break;
        }
        return false;
}

static void after(bool kill_after)
{
        if (kill_after)
                (void) syscall(SYS_kill, getpid(), SIGKILL);
}

/* The monotonic clock before a rename: the new file may be visible from then on. */
static struct timespec rename_start(void)
{
        struct timespec ts = { 0, 0 };

        if (S.commitfd >= 0)
                clock_gettime(CLOCK_MONOTONIC, &ts);
        return ts;
}

static void committed(const char *newpath, struct timespec before)
{
        const char *base;
        struct timespec ts;
        char line[256];
        int len;

        if (S.commitfd < 0 || !mine() || !newpath)
                return;
        base = strrchr(newpath, '/');
        base = base ? base + 1 : newpath;
        if (strcmp(base, S.commit_name) != 0)
                return;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        len = snprintf(line, sizeof(line), "%s %lld.%09ld %lld.%09ld\n", S.tag, (long long) before.tv_sec,
                       before.tv_nsec, (long long) ts.tv_sec, ts.tv_nsec);
        if (len > 0 && (size_t) len < sizeof(line))
                raw_append(S.commitfd, line, (size_t) len);
}

#define FAIL_WITH_ERRNO()              \
        do {                           \
                errno = S.err;         \
                return -1;             \
        } while (0)

ssize_t write(int fd, const void *buf, size_t count)
{
        static ssize_t (*f)(int, const void *, size_t);
        bool ka;
        ssize_t r;

        if (!f)
                f = real("write");
        if (before(C_WRITE, fd, NULL, &ka))
                FAIL_WITH_ERRNO();
        r = f(fd, buf, count);
        after(ka);
        return r;
}

int fsync(int fd)
{
        static int (*f)(int);
        bool ka;
        int r;

        if (!f)
                f = real("fsync");
        if (before(C_FSYNC, fd, NULL, &ka))
                FAIL_WITH_ERRNO();
        r = f(fd);
        after(ka);
        return r;
}

int fdatasync(int fd)
{
        static int (*f)(int);
        bool ka;
        int r;

        if (!f)
                f = real("fdatasync");
        if (before(C_FDATASYNC, fd, NULL, &ka))
                FAIL_WITH_ERRNO();
        r = f(fd);
        after(ka);
        return r;
}

int fchown(int fd, uid_t uid, gid_t gid)
{
        static int (*f)(int, uid_t, gid_t);
        bool ka;
        int r;

        if (!f)
                f = real("fchown");
        if (before(C_FCHOWN, fd, NULL, &ka))
                FAIL_WITH_ERRNO();
        r = f(fd, uid, gid);
        after(ka);
        return r;
}

int fchownat(int dirfd, const char *path, uid_t uid, gid_t gid, int flags)
{
        static int (*f)(int, const char *, uid_t, gid_t, int);
        bool ka;
        int r;

        if (!f)
                f = real("fchownat");
        if (before(C_FCHOWNAT, dirfd, *path ? path : NULL, &ka))
                FAIL_WITH_ERRNO();
        r = f(dirfd, path, uid, gid, flags);
        after(ka);
        return r;
}

int fchmod(int fd, mode_t mode)
{
        static int (*f)(int, mode_t);
        bool ka;
        int r;

        if (!f)
                f = real("fchmod");
        if (before(C_FCHMOD, fd, NULL, &ka))
                FAIL_WITH_ERRNO();
        r = f(fd, mode);
        after(ka);
        return r;
}

int fchmodat(int dirfd, const char *path, mode_t mode, int flags)
{
        static int (*f)(int, const char *, mode_t, int);
        bool ka;
        int r;

        if (!f)
                f = real("fchmodat");
        if (before(C_FCHMODAT, dirfd, *path ? path : NULL, &ka))
                FAIL_WITH_ERRNO();
        r = f(dirfd, path, mode, flags);
        after(ka);
        return r;
}

int rename(const char *oldpath, const char *newpath)
{
        struct timespec t0;
        static int (*f)(const char *, const char *);
        bool ka;
        int r;

        if (!f)
                f = real("rename");
        if (before(C_RENAME, -1, newpath, &ka))
                FAIL_WITH_ERRNO();
        t0 = rename_start();
        r = f(oldpath, newpath);
        if (r == 0)
                committed(newpath, t0);
        after(ka);
        return r;
}

int renameat(int olddirfd, const char *oldpath, int newdirfd, const char *newpath)
{
        char full[512];
        struct timespec t0;
        static int (*f)(int, const char *, int, const char *);
        bool ka;
        int r;

        if (!f)
                f = real("renameat");
        if (before(C_RENAMEAT, -1, at_name(newdirfd, newpath, full, sizeof(full)), &ka))
                FAIL_WITH_ERRNO();
        t0 = rename_start();
        r = f(olddirfd, oldpath, newdirfd, newpath);
        if (r == 0)
                committed(newpath, t0);
        after(ka);
        return r;
}

int renameat2(int olddirfd, const char *oldpath, int newdirfd, const char *newpath, unsigned int flags)
{
        char full[512];
        struct timespec t0;
        static int (*f)(int, const char *, int, const char *, unsigned int);
        bool ka;
        int r;

        if (!f)
                f = real("renameat2");
        if (before(C_RENAMEAT2, -1, at_name(newdirfd, newpath, full, sizeof(full)), &ka))
                FAIL_WITH_ERRNO();
        t0 = rename_start();
        r = f(olddirfd, oldpath, newdirfd, newpath, flags);
        if (r == 0)
                committed(newpath, t0);
        after(ka);
        return r;
}

int unlink(const char *path)
{
        static int (*f)(const char *);
        bool ka;
        int r;

        if (!f)
                f = real("unlink");
        if (before(C_UNLINK, -1, path, &ka))
                FAIL_WITH_ERRNO();
        r = f(path);
        after(ka);
        return r;
}

int unlinkat(int dirfd, const char *path, int flags)
{
        static int (*f)(int, const char *, int);
        bool ka;
        int r;

        if (!f)
                f = real("unlinkat");
        if (before(C_UNLINKAT, dirfd, path, &ka))
                FAIL_WITH_ERRNO();
        r = f(dirfd, path, flags);
        after(ka);
        return r;
}

int ftruncate(int fd, off_t length)
{
        static int (*f)(int, off_t);
        bool ka;
        int r;

        if (!f)
                f = real("ftruncate");
        if (before(C_FTRUNCATE, fd, NULL, &ka))
                FAIL_WITH_ERRNO();
        r = f(fd, length);
        after(ka);
        return r;
}

int fsetxattr(int fd, const char *name, const void *value, size_t size, int flags)
{
        static int (*f)(int, const char *, const void *, size_t, int);
        bool ka;
        int r;

        if (!f)
                f = real("fsetxattr");
        if (before(C_FSETXATTR, fd, NULL, &ka))
                FAIL_WITH_ERRNO();
        r = f(fd, name, value, size, flags);
        after(ka);
        return r;
}

int openat(int dirfd, const char *path, int flags, ...)
{
        static int (*f)(int, const char *, int, ...);
        mode_t mode = 0;
        bool ka;
        int r;

        if (flags & (O_CREAT | O_TMPFILE)) {
                va_list ap;

                va_start(ap, flags);
                mode = (mode_t) va_arg(ap, int);
                va_end(ap);
        }
        if (!f)
                f = real("openat");
        if (before(C_OPENAT, dirfd, path, &ka))
                FAIL_WITH_ERRNO();
        r = f(dirfd, path, flags, mode);
        after(ka);
        return r;
}

/* A fixed clock, so that the timestamps a command writes are known in advance. */
time_t time(time_t *t)
{
        static time_t (*f)(time_t *);

        if (S.fixed_now) {
                if (t)
                        *t = S.now;
                return S.now;
        }
        if (!f)
                f = real("time");
        return f(t);
}

/* Predictable "random" bytes: temp names become known, so a test can plant something there. */
ssize_t getrandom(void *buf, size_t len, unsigned int flags)
{
        static ssize_t (*f)(void *, size_t, unsigned int);

        if (S.counter_random && mine()) {
                unsigned char *p = buf;
                unsigned long v = S.random_seq++;

                for (size_t i = 0; i < len; i++) {
                        p[len - 1 - i] = (unsigned char) (v & 0xff);
                        v >>= 8;
                }
                return (ssize_t) len;
        }
        if (!f)
                f = real("getrandom");
        return f(buf, len, flags);
}
