/*
 * faultshim.so: an LD_PRELOAD library that counts the system calls a command makes
 * (by default the file-changing ones) and, at the Nth one, kills or stops the command with
 * SIGKILL or SIGSTOP, or makes the call fail with a chosen errno.  The reliability tests
 * (tests/reliability) drive it through the environment:
 *
 *   FAULT_LOG=FILE        append one line per counted call: "N call target"
 *   FAULT_AT=N            act at the Nth counted call (1-based); unset: only count
 *   FAULT_ACTION=A        kill (SIGKILL before the call), kill-after (the call
 *                         runs, then SIGKILL), stop (SIGSTOP before the call: the
 *                         command goes on at SIGCONT, so a test can act between
 *                         two of its steps), or an errno name: ENOSPC, EIO,
 *                         EPERM, EDQUOT, EACCES, EROFS, EINTR, EAGAIN, EMFILE,
 *                         ENOMEM, and for races and odd file systems ENOENT,
 *                         ELOOP, EEXIST, ENODATA, EOPNOTSUPP, ERANGE, ESRCH,
 *                         ENOSYS (the call is not made, it fails with that errno)
 *   FAULT_CALLS=a,b       only these calls count: names of calls, or of groups of
 *                         them: "change" (the default: write, fsync, fdatasync,
 *                         fchown, fchownat, fchmod, fchmodat, rename, renameat,
 *                         renameat2, unlink, unlinkat, ftruncate, fsetxattr),
 *                         "look" (opens, stats, reads, directory reads, links,
 *                         extended attributes and ACLs looked at), "nss" (account
 *                         and group lookups), "proc" (fork, pipes, dup, shared
 *                         memory, pidfds, locks), "more" (changes outside the
 *                         default: mkdirat, fremovexattr, acl_set_fd, umount2,
 *                         fchmodat2, IPC removal) and "all"
 *   FAULT_CALLER=program  count only calls made by the program's own code (not
 *                         by a library it uses, such as nss_wrapper or libacl)
 *   FAULT_LOG_SITES=1     log "N call @SITE target", SITE being the offset of the
 *                         calling instruction in its object: one line of code,
 *                         so a sweep can fault each call site once
 *   FAULT_SITE=@0x1a2b    count only the calls made from that site of the program
 *                         (FAULT_AT=2: its second call), so that a run whose other
 *                         calls vary (a walk of /proc) still fails the same call
 *   FAULT_TARGET=TEXT     count only the calls whose target (the path, or the file
 *                         behind the fd) ends with TEXT: a test names the one call
 *                         it means ("the fstat of /var/mail/slot02")
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
 * is the command's own.  Nothing is counted once main() has returned or exit()
 * was called: what runs then (coverage counters being written) is not the
 * command's work.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <link.h>
#include <pwd.h>
#include <shadow.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/file.h>
#include <sys/ipc.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/msg.h>
#include <sys/random.h>
#include <sys/sem.h>
#include <sys/shm.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/types.h>
#include <sys/xattr.h>

enum call_group { G_CHANGE = 1, G_LOOK = 2, G_NSS = 4, G_PROC = 8, G_MORE = 16 };

enum call {
        /* change: the default */
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
        /* look: opens change nothing, so a test names them to learn what a command opens */
        C_OPENAT,
        C_OPEN,
        C_OPENDIR,
        C_FDOPENDIR,
        C_SCANDIR,
        C_READDIR,
        C_READ,
        C_STAT,
        C_LSTAT,
        C_FSTAT,
        C_FSTATAT,
        C_STATX,
        C_READLINK,
        C_READLINKAT,
        C_REALPATH,
        C_FACCESSAT,
        C_GETXATTR,
        C_FGETXATTR,
        C_FLISTXATTR,
        C_ACL_GET_FD,
        C_ACL_GET_FILE,
        C_ACL_EXTENDED_FD,
        /* nss */
        C_GETPWNAM_R,
        C_GETPWUID_R,
        C_GETGRNAM_R,
        C_GETGRGID_R,
        C_GETSPNAM_R,
        C_GETPWENT,
        /* proc */
        C_FORK,
        C_PIPE2,
        C_DUP,
        C_MMAP,
        C_PIDFD_OPEN,
        C_PIDFD_SEND_SIGNAL,
        C_FLOCK,
        C_FCNTL_LOCK,
        /* more */
        C_MKDIRAT,
        C_FREMOVEXATTR,
        C_ACL_SET_FD,
        C_UMOUNT2,
        C_FCHMODAT2,
        C_IPC_RMID,
        C_MAX,
};

static const struct {
        const char *name;
        enum call_group group;
} calls[C_MAX] = {
        [C_WRITE] = { "write", G_CHANGE },             [C_FSYNC] = { "fsync", G_CHANGE },
        [C_FDATASYNC] = { "fdatasync", G_CHANGE },     [C_FCHOWN] = { "fchown", G_CHANGE },
        [C_FCHOWNAT] = { "fchownat", G_CHANGE },       [C_FCHMOD] = { "fchmod", G_CHANGE },
        [C_FCHMODAT] = { "fchmodat", G_CHANGE },       [C_RENAME] = { "rename", G_CHANGE },
        [C_RENAMEAT] = { "renameat", G_CHANGE },       [C_RENAMEAT2] = { "renameat2", G_CHANGE },
        [C_UNLINK] = { "unlink", G_CHANGE },           [C_UNLINKAT] = { "unlinkat", G_CHANGE },
        [C_FTRUNCATE] = { "ftruncate", G_CHANGE },     [C_FSETXATTR] = { "fsetxattr", G_CHANGE },
        [C_OPENAT] = { "openat", G_LOOK },             [C_OPEN] = { "open", G_LOOK },
        [C_OPENDIR] = { "opendir", G_LOOK },           [C_FDOPENDIR] = { "fdopendir", G_LOOK },
        [C_SCANDIR] = { "scandir", G_LOOK },           [C_READDIR] = { "readdir", G_LOOK },
        [C_READ] = { "read", G_LOOK },                 [C_STAT] = { "stat", G_LOOK },
        [C_LSTAT] = { "lstat", G_LOOK },               [C_FSTAT] = { "fstat", G_LOOK },
        [C_FSTATAT] = { "fstatat", G_LOOK },           [C_STATX] = { "statx", G_LOOK },
        [C_READLINK] = { "readlink", G_LOOK },         [C_READLINKAT] = { "readlinkat", G_LOOK },
        [C_REALPATH] = { "realpath", G_LOOK },         [C_FACCESSAT] = { "faccessat", G_LOOK },
        [C_GETXATTR] = { "getxattr", G_LOOK },         [C_FGETXATTR] = { "fgetxattr", G_LOOK },
        [C_FLISTXATTR] = { "flistxattr", G_LOOK },     [C_ACL_GET_FD] = { "acl_get_fd", G_LOOK },
        [C_ACL_GET_FILE] = { "acl_get_file", G_LOOK }, [C_ACL_EXTENDED_FD] = { "acl_extended_fd", G_LOOK },
        [C_GETPWNAM_R] = { "getpwnam_r", G_NSS },      [C_GETPWUID_R] = { "getpwuid_r", G_NSS },
        [C_GETGRNAM_R] = { "getgrnam_r", G_NSS },      [C_GETGRGID_R] = { "getgrgid_r", G_NSS },
        [C_GETSPNAM_R] = { "getspnam_r", G_NSS },      [C_GETPWENT] = { "getpwent", G_NSS },
        [C_FORK] = { "fork", G_PROC },                 [C_PIPE2] = { "pipe2", G_PROC },
        [C_DUP] = { "dup", G_PROC },                   [C_MMAP] = { "mmap", G_PROC },
        [C_PIDFD_OPEN] = { "pidfd_open", G_PROC },     [C_PIDFD_SEND_SIGNAL] = { "pidfd_send_signal", G_PROC },
        [C_FLOCK] = { "flock", G_PROC },               [C_FCNTL_LOCK] = { "fcntl_lock", G_PROC },
        [C_MKDIRAT] = { "mkdirat", G_MORE },           [C_FREMOVEXATTR] = { "fremovexattr", G_MORE },
        [C_ACL_SET_FD] = { "acl_set_fd", G_MORE },     [C_UMOUNT2] = { "umount2", G_MORE },
        [C_FCHMODAT2] = { "fchmodat2", G_MORE },       [C_IPC_RMID] = { "ipc_rmid", G_MORE },
};

static const struct {
        const char *name;
        enum call_group groups;
} group_names[] = {
        { "change", G_CHANGE }, { "look", G_LOOK }, { "nss", G_NSS }, { "proc", G_PROC }, { "more", G_MORE },
        { "all", G_CHANGE | G_LOOK | G_NSS | G_PROC | G_MORE },
};

static const struct {
        const char *name;
        int value;
} errnos[] = {
        { "ENOSPC", ENOSPC }, { "EIO", EIO },       { "EPERM", EPERM },   { "EDQUOT", EDQUOT },
        { "EACCES", EACCES }, { "EROFS", EROFS },   { "EINTR", EINTR },   { "EAGAIN", EAGAIN },
        { "EMFILE", EMFILE }, { "ENOMEM", ENOMEM }, { "ENOENT", ENOENT }, { "ELOOP", ELOOP },
        { "EEXIST", EEXIST }, { "ENODATA", ENODATA }, { "EOPNOTSUPP", EOPNOTSUPP }, { "ERANGE", ERANGE },
        { "ESRCH", ESRCH },   { "ENOSYS", ENOSYS },
};

enum action { A_NONE, A_KILL, A_KILL_AFTER, A_STOP, A_ERRNO };

static struct {
        bool active;                    /* this is the pinned process and the program matches */
        bool done;                      /* main() returned or exit() was called: nothing counts */
        pid_t pid;                      /* the pinned process */
        bool enabled[C_MAX];
        bool program_only;              /* FAULT_CALLER=program */
        uintptr_t prog_base, prog_lo, prog_hi;  /* the program's load bias and its mapped range */
        bool log_sites;
        bool one_site;                  /* FAULT_SITE: only calls from program offset site count */
        uintptr_t site;
        const char *target;             /* FAULT_TARGET */
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

static void *real(const char *name);

/*
 * The real syscall(2): the shim's own raw calls (its log, SIGKILL) must not pass
 * through its syscall() below.
 */
static long sys(long number, long a, long b, long c, long d)
{
        static long (*f)(long, ...);

        if (!f)
                f = (long (*)(long, ...)) dlsym(RTLD_NEXT, "syscall");
        if (!f)
                abort();
        return f(number, a, b, c, d);
}

static void *real(const char *name)
{
        void *f = dlsym(RTLD_NEXT, name);

        if (!f) {
                static const char msg[] = "faultshim: a real function is missing\n";
                (void) sys(SYS_write, 2, (long) msg, sizeof(msg) - 1, 0);
                abort();
        }
        return f;
}

/* The log is written with the raw system call so it never counts itself. */
static void raw_append(int fd, const char *buf, size_t len)
{
        while (len > 0) {
                long n = sys(SYS_write, fd, (long) buf, (long) len, 0);
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

/* The first object dl_iterate_phdr reports is the program: its load bias and mapped range. */
static int find_program(struct dl_phdr_info *info, size_t size, void *data)
{
        uintptr_t lo = UINTPTR_MAX, hi = 0;

        (void) size;
        (void) data;
        for (int i = 0; i < info->dlpi_phnum; i++) {
                const ElfW(Phdr) *ph = &info->dlpi_phdr[i];

                if (ph->p_type != PT_LOAD)
                        continue;
                if (info->dlpi_addr + ph->p_vaddr < lo)
                        lo = info->dlpi_addr + ph->p_vaddr;
                if (info->dlpi_addr + ph->p_vaddr + ph->p_memsz > hi)
                        hi = info->dlpi_addr + ph->p_vaddr + ph->p_memsz;
        }
        S.prog_base = info->dlpi_addr;
        S.prog_lo = lo;
        S.prog_hi = hi;
        return 1;
}

static bool enabled_by(const char *list, enum call c)
{
        if (!list || !*list)
                return calls[c].group == G_CHANGE;
        if (in_list(list, calls[c].name))
                return true;
        for (size_t i = 0; i < sizeof(group_names) / sizeof(group_names[0]); i++)
                if ((group_names[i].groups & calls[c].group) && in_list(list, group_names[i].name))
                        return true;
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
                S.enabled[c] = enabled_by(v, (enum call) c);
        v = getenv("FAULT_CALLER");
        S.program_only = v && strcmp(v, "program") == 0;
        v = getenv("FAULT_LOG_SITES");
        S.log_sites = v && strcmp(v, "1") == 0;
        v = getenv("FAULT_TARGET");
        S.target = v && *v ? v : NULL;
        v = getenv("FAULT_SITE");
        if (v && v[0] == '@') {
                S.one_site = true;
                S.site = (uintptr_t) strtoull(v + 1, NULL, 16);
        }
        dl_iterate_phdr(find_program, NULL);
        v = getenv("FAULT_AT");
        S.at = v ? strtoul(v, NULL, 10) : 0;
        v = getenv("FAULT_ACTION");
        if (!v || !*v || strcmp(v, "kill") == 0) {
                S.action = A_KILL;
        } else if (strcmp(v, "kill-after") == 0) {
                S.action = A_KILL_AFTER;
        } else if (strcmp(v, "stop") == 0) {
                S.action = A_STOP;
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
                S.logfd = (int) sys(SYS_openat, AT_FDCWD, (long) v,
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
                S.commitfd = (int) sys(SYS_openat, AT_FDCWD, (long) v,
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
        return S.active && !S.done && S.pid == getpid();
}

/* ---- the end of the command's own work: main() returns or exit() is called ---- */

int __libc_start_main(int (*main)(int, char **, char **), int argc, char **argv, void (*init)(void),
                      void (*fini)(void), void (*rtld_fini)(void), void *stack_end);

static int (*real_main)(int, char **, char **);

static int counted_main(int argc, char **argv, char **envp)
{
        int r = real_main(argc, argv, envp);

        S.done = true;
        return r;
}

int __libc_start_main(int (*main)(int, char **, char **), int argc, char **argv, void (*init)(void),
                      void (*fini)(void), void (*rtld_fini)(void), void *stack_end)
{
        int (*f)(int (*)(int, char **, char **), int, char **, void (*)(void), void (*)(void), void (*)(void),
                 void *) = real("__libc_start_main");

        real_main = main;
        return f(counted_main, argc, argv, init, fini, rtld_fini, stack_end);
}

void exit(int status)
{
        void (*f)(int) = real("exit");

        S.done = true;
        f(status);
        abort();
}

static void describe_fd(int fd, char *buf, size_t size)
{
        char link[64];
        long n;

        snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
        n = sys(SYS_readlinkat, AT_FDCWD, (long) link, (long) buf, (long) size - 1);
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

static bool from_program(const void *ret)
{
        return (uintptr_t) ret >= S.prog_lo && (uintptr_t) ret < S.prog_hi;
}

/* "@0x1a2b" (an offset in the program) or "@libfoo.so+0x1a2b": the line of code that called. */
static void describe_site(const void *ret, char *buf, size_t size)
{
        Dl_info info;

        if (from_program(ret)) {
                snprintf(buf, size, "@0x%lx", (unsigned long) ((uintptr_t) ret - S.prog_base));
        } else if (dladdr(ret, &info) && info.dli_fname) {
                const char *base = strrchr(info.dli_fname, '/');

                snprintf(buf, size, "@%s+0x%lx", base ? base + 1 : info.dli_fname,
                         (unsigned long) ((uintptr_t) ret - (uintptr_t) info.dli_fbase));
        } else {
                snprintf(buf, size, "@%p", ret);
        }
}

/*
 * Called before each interposed call, with the address the call returns to.
 * Returns true when the call must fail with S.err instead of running;
 * *kill_after asks the caller to die after the call.
 */
static bool before(enum call c, int fd, const char *name, bool *kill_after, const void *ret)
{
        char target[512], site[160], line[800];
        int saved = errno;
        unsigned long n;

        *kill_after = false;
        if (!mine() || !S.enabled[c])
                return false;
        if ((S.program_only || S.one_site) && !from_program(ret))
                return false;
        if (S.one_site && (uintptr_t) ret - S.prog_base != S.site)
                return false;
        if (name)
                snprintf(target, sizeof(target), "%s", name);
        else if (S.logfd >= 0 || S.target)
                describe_fd(fd, target, sizeof(target));
        if (S.target) {
                size_t tl = strlen(target), wl = strlen(S.target);

                if (tl < wl || strcmp(target + tl - wl, S.target) != 0) {
                        errno = saved;
                        return false;
                }
        }
        n = ++S.count;
        if (S.logfd >= 0) {
                site[0] = '\0';
                if (S.log_sites) {
                        site[0] = ' ';
                        describe_site(ret, site + 1, sizeof(site) - 1);
                }
                int len = snprintf(line, sizeof(line), "%lu %s%s %s\n", n, calls[c].name, site, target);
                if (len > 0)
                        raw_append(S.logfd, line, (size_t) len < sizeof(line) ? (size_t) len : sizeof(line) - 1);
        }
        errno = saved;
        if (n != S.at)
                return false;
        switch (S.action) {
        case A_KILL:
                (void) sys(SYS_kill, getpid(), SIGKILL, 0, 0);
                break;
        case A_KILL_AFTER:
                *kill_after = true;
                break;
        case A_STOP:
                (void) sys(SYS_kill, getpid(), SIGSTOP, 0, 0);
                break;
        case A_ERRNO:
                return true;
        case A_NONE:
                break;
        }
        return false;
}

#define BEFORE(c, fd, name, ka) before(c, fd, name, ka, __builtin_return_address(0))

static void after(bool kill_after)
{
        if (kill_after)
                (void) sys(SYS_kill, getpid(), SIGKILL, 0, 0);
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
        if (BEFORE(C_WRITE, fd, NULL, &ka))
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
        if (BEFORE(C_FSYNC, fd, NULL, &ka))
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
        if (BEFORE(C_FDATASYNC, fd, NULL, &ka))
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
        if (BEFORE(C_FCHOWN, fd, NULL, &ka))
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
        if (BEFORE(C_FCHOWNAT, dirfd, *path ? path : NULL, &ka))
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
        if (BEFORE(C_FCHMOD, fd, NULL, &ka))
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
        if (BEFORE(C_FCHMODAT, dirfd, *path ? path : NULL, &ka))
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
        if (BEFORE(C_RENAME, -1, newpath, &ka))
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
        if (BEFORE(C_RENAMEAT, -1, at_name(newdirfd, newpath, full, sizeof(full)), &ka))
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
        if (BEFORE(C_RENAMEAT2, -1, at_name(newdirfd, newpath, full, sizeof(full)), &ka))
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
        if (BEFORE(C_UNLINK, -1, path, &ka))
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
        if (BEFORE(C_UNLINKAT, dirfd, path, &ka))
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
        if (BEFORE(C_FTRUNCATE, fd, NULL, &ka))
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
        if (BEFORE(C_FSETXATTR, fd, NULL, &ka))
                FAIL_WITH_ERRNO();
        r = f(fd, name, value, size, flags);
        after(ka);
        return r;
}

/* The mode an open passes only with O_CREAT or O_TMPFILE. */
#define OPEN_MODE(flags, mode)                           \
        do {                                             \
                if ((flags) & (O_CREAT | O_TMPFILE)) {   \
                        va_list ap;                      \
                                                         \
                        va_start(ap, flags);             \
                        mode = (mode_t) va_arg(ap, int); \
                        va_end(ap);                      \
                }                                        \
        } while (0)

int openat(int dirfd, const char *path, int flags, ...)
{
        static int (*f)(int, const char *, int, ...);
        mode_t mode = 0;
        bool ka;
        int r;

        OPEN_MODE(flags, mode);
        if (!f)
                f = real("openat");
        if (BEFORE(C_OPENAT, dirfd, path, &ka))
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

/*
 * The calls below, one line each: WRAP(type, name, call, fd, target, on_failure, (params),
 * (args)) defines name() to count as call (acting on fd, or on the file target names) and,
 * when it is the one to fail, to return on_failure with errno set; WRAP_WHEN counts only
 * when its condition holds; WRAP_CHANGE also kills after the call for FAULT_ACTION=kill-after.
 */
#define WRAP_WHEN(type, name, call, when, fd, target, failure, params, args) \
        type name params                                                     \
        {                                                                    \
                static type(*f) params;                                      \
                bool ka;                                                     \
                                                                             \
                if (!f)                                                      \
                        f = real(#name);                                     \
                if ((when) && BEFORE(call, fd, target, &ka)) {               \
                        errno = S.err;                                       \
                        return failure;                                      \
                }                                                            \
                return f args;                                               \
        }
#define WRAP(type, name, call, fd, target, failure, params, args) \
        WRAP_WHEN(type, name, call, true, fd, target, failure, params, args)
#define WRAP_CHANGE(name, call, fd, target, params, args) \
        int name params                                   \
        {                                                 \
                static int(*f) params;                    \
                bool ka;                                  \
                int r;                                    \
                                                          \
                if (!f)                                   \
                        f = real(#name);                  \
                if (BEFORE(call, fd, target, &ka)) {      \
                        errno = S.err;                    \
                        return -1;                        \
                }                                         \
                r = f args;                               \
                after(ka);                                \
                return r;                                 \
        }
/* An empty path (AT_EMPTY_PATH) acts on the fd itself. */
#define AT_TARGET(path) (*(path) ? (path) : NULL)

/* ---- look: opens, stats, reads, links, attributes ---- */

int open(const char *path, int flags, ...)
{
        static int (*f)(const char *, int, ...);
        mode_t mode = 0;
        bool ka;

        OPEN_MODE(flags, mode);
        if (!f)
                f = real("open");
        if (BEFORE(C_OPEN, -1, path, &ka))
                FAIL_WITH_ERRNO();
        return f(path, flags, mode);
}

WRAP(DIR *, opendir, C_OPENDIR, -1, path, NULL, (const char *path), (path))
WRAP(DIR *, fdopendir, C_FDOPENDIR, fd, NULL, NULL, (int fd), (fd))
WRAP(int, scandir, C_SCANDIR, -1, dir, -1,
     (const char *dir, struct dirent ***list, int (*filter)(const struct dirent *),
      int (*compar)(const struct dirent **, const struct dirent **)),
     (dir, list, filter, compar))
WRAP(struct dirent *, readdir, C_READDIR, dirfd(d), NULL, NULL, (DIR *d), (d))
WRAP(ssize_t, read, C_READ, fd, NULL, -1, (int fd, void *buf, size_t count), (fd, buf, count))
WRAP(int, stat, C_STAT, -1, path, -1, (const char *path, struct stat *st), (path, st))
WRAP(int, lstat, C_LSTAT, -1, path, -1, (const char *path, struct stat *st), (path, st))
WRAP(int, fstat, C_FSTAT, fd, NULL, -1, (int fd, struct stat *st), (fd, st))
WRAP(int, fstatat, C_FSTATAT, dirfd, AT_TARGET(path), -1, (int dirfd, const char *path, struct stat *st, int flags),
     (dirfd, path, st, flags))
WRAP(int, statx, C_STATX, dirfd, AT_TARGET(path), -1,
     (int dirfd, const char *path, int flags, unsigned int mask, struct statx *sx), (dirfd, path, flags, mask, sx))
WRAP(ssize_t, readlink, C_READLINK, -1, path, -1, (const char *path, char *buf, size_t size), (path, buf, size))
WRAP(ssize_t, readlinkat, C_READLINKAT, dirfd, AT_TARGET(path), -1,
     (int dirfd, const char *path, char *buf, size_t size), (dirfd, path, buf, size))
/* _FORTIFY_SOURCE (as Debian's build flags set it) turns some of these calls into glibc's
 * checking entry points: the same calls, counted and failed under the same names. */
int __openat_2(int dirfd, const char *path, int flags);
int __open_2(const char *path, int flags);
ssize_t __read_chk(int fd, void *buf, size_t count, size_t size);
ssize_t __readlink_chk(const char *path, char *buf, size_t len, size_t size);
ssize_t __readlinkat_chk(int dirfd, const char *path, char *buf, size_t len, size_t size);
int __openat_2(int dirfd, const char *path, int flags)
{
        static int (*f)(int, const char *, int);
        bool ka;
        int r;

        if (!f)
                f = real("__openat_2");
        if (BEFORE(C_OPENAT, dirfd, path, &ka))
                FAIL_WITH_ERRNO();
        r = f(dirfd, path, flags);
        after(ka);
        return r;
}
WRAP(int, __open_2, C_OPEN, -1, path, -1, (const char *path, int flags), (path, flags))
WRAP(ssize_t, __read_chk, C_READ, fd, NULL, -1, (int fd, void *buf, size_t count, size_t size),
     (fd, buf, count, size))
WRAP(ssize_t, __readlink_chk, C_READLINK, -1, path, -1, (const char *path, char *buf, size_t len, size_t size),
     (path, buf, len, size))
WRAP(ssize_t, __readlinkat_chk, C_READLINKAT, dirfd, AT_TARGET(path), -1,
     (int dirfd, const char *path, char *buf, size_t len, size_t size), (dirfd, path, buf, len, size))
WRAP(char *, realpath, C_REALPATH, -1, path, NULL, (const char *path, char *resolved), (path, resolved))
WRAP(int, faccessat, C_FACCESSAT, dirfd, AT_TARGET(path), -1, (int dirfd, const char *path, int mode, int flags),
     (dirfd, path, mode, flags))
WRAP(ssize_t, getxattr, C_GETXATTR, -1, path, -1, (const char *path, const char *name, void *value, size_t size),
     (path, name, value, size))
WRAP(ssize_t, fgetxattr, C_FGETXATTR, fd, NULL, -1, (int fd, const char *name, void *value, size_t size),
     (fd, name, value, size))
WRAP(ssize_t, flistxattr, C_FLISTXATTR, fd, NULL, -1, (int fd, char *list, size_t size), (fd, list, size))

/* libacl's calls, by name: the shim needs no libacl headers (an acl_t is a pointer). */
void *acl_get_fd(int fd);
void *acl_get_file(const char *path, unsigned int type);
int acl_extended_fd(int fd);
int acl_set_fd(int fd, void *acl);
WRAP(void *, acl_get_fd, C_ACL_GET_FD, fd, NULL, NULL, (int fd), (fd))
WRAP(void *, acl_get_file, C_ACL_GET_FILE, -1, path, NULL, (const char *path, unsigned int type), (path, type))
WRAP(int, acl_extended_fd, C_ACL_EXTENDED_FD, fd, NULL, -1, (int fd), (fd))

/* ---- nss: the lookups fail the way a directory that is down makes them fail ---- */

/* The *_r lookups return the error number and set *result to NULL; shown names the key. */
#define WRAP_NSS(name, call, type, key_t, shown)                                            \
        int name(key_t key, struct type *ent, char *buf, size_t size, struct type **result) \
        {                                                                                   \
                static int (*f)(key_t, struct type *, char *, size_t, struct type **);      \
                char what[48];                                                              \
                bool ka;                                                                    \
                                                                                            \
                if (!f)                                                                     \
                        f = real(#name);                                                    \
                if (BEFORE(call, -1, shown, &ka)) {                                         \
                        *result = NULL;                                                     \
                        errno = S.err;                                                      \
                        return S.err;                                                       \
                }                                                                           \
                return f(key, ent, buf, size, result);                                      \
        }
#define ID_SHOWN(kind) (snprintf(what, sizeof(what), kind " %u", (unsigned) key), what)
#define NAME_SHOWN ((void) what, key)
WRAP_NSS(getpwnam_r, C_GETPWNAM_R, passwd, const char *, NAME_SHOWN)
WRAP_NSS(getpwuid_r, C_GETPWUID_R, passwd, uid_t, ID_SHOWN("uid"))
WRAP_NSS(getgrnam_r, C_GETGRNAM_R, group, const char *, NAME_SHOWN)
WRAP_NSS(getgrgid_r, C_GETGRGID_R, group, gid_t, ID_SHOWN("gid"))
WRAP_NSS(getspnam_r, C_GETSPNAM_R, spwd, const char *, NAME_SHOWN)
WRAP(struct passwd *, getpwent, C_GETPWENT, -1, "the account list", NULL, (void), ())

/* ---- proc: processes, pipes, descriptors, shared memory, pidfds, locks ---- */

WRAP(pid_t, fork, C_FORK, -1, "fork", -1, (void), ())
WRAP(int, pipe2, C_PIPE2, -1, "pipe", -1, (int fds[2], int flags), (fds, flags))
WRAP(int, dup, C_DUP, fd, NULL, -1, (int fd), (fd))
WRAP(void *, mmap, C_MMAP, -1, flags & MAP_ANONYMOUS ? "anonymous memory" : "a file's memory", MAP_FAILED,
     (void *addr, size_t len, int prot, int flags, int fd, off_t off), (addr, len, prot, flags, fd, off))
WRAP(int, flock, C_FLOCK, fd, NULL, -1, (int fd, int op), (fd, op))

/*
 * A call whose last argument is optional (an int or a pointer: passed on as one word),
 * counted only when its condition holds.
 */
#define WRAP_VARARG(name, call, when, fd, target, params, last, args) \
        int name params                                               \
        {                                                             \
                static int(*f) params;                                \
                va_list ap;                                           \
                void *arg;                                            \
                bool ka;                                              \
                                                                      \
                va_start(ap, last);                                   \
                arg = va_arg(ap, void *);                             \
                va_end(ap);                                           \
                if (!f)                                               \
                        f = real(#name);                              \
                if ((when) && BEFORE(call, fd, target, &ka)) {        \
                        errno = S.err;                                \
                        return -1;                                    \
                }                                                     \
                return f args;                                        \
        }

/* Only the lock commands count; every other command passes through. */
WRAP_VARARG(fcntl, C_FCNTL_LOCK, cmd == F_SETLK || cmd == F_SETLKW || cmd == F_OFD_SETLK || cmd == F_OFD_SETLKW, fd,
            NULL, (int fd, int cmd, ...), cmd, (fd, cmd, arg))

/* ---- more: changes outside the default set ---- */

WRAP_CHANGE(mkdirat, C_MKDIRAT, dirfd, path, (int dirfd, const char *path, mode_t mode), (dirfd, path, mode))
WRAP_CHANGE(fremovexattr, C_FREMOVEXATTR, fd, NULL, (int fd, const char *name), (fd, name))
WRAP_CHANGE(acl_set_fd, C_ACL_SET_FD, fd, NULL, (int fd, void *acl), (fd, acl))
WRAP_CHANGE(umount2, C_UMOUNT2, -1, path, (const char *path, int flags), (path, flags))
/* IPC objects count only when removed. */
WRAP_WHEN(int, shmctl, C_IPC_RMID, cmd == IPC_RMID, -1, "shm", -1, (int id, int cmd, struct shmid_ds *buf),
          (id, cmd, buf))
WRAP_WHEN(int, msgctl, C_IPC_RMID, cmd == IPC_RMID, -1, "msg", -1, (int id, int cmd, struct msqid_ds *buf),
          (id, cmd, buf))

WRAP_VARARG(semctl, C_IPC_RMID, cmd == IPC_RMID, -1, "sem", (int id, int num, int cmd, ...), cmd, (id, num, cmd, arg))

/*
 * syscall(2) itself, for the calls glibc 2.36 has no wrapper of: pidfd_open,
 * pidfd_send_signal and fchmodat2.  Six arguments are passed on whatever the
 * number (the kernel reads only the ones it needs).
 */
#ifndef SYS_fchmodat2
#define SYS_fchmodat2 452
#endif
long syscall(long number, ...)
{
        enum call c = number == SYS_pidfd_open           ? C_PIDFD_OPEN
                      : number == SYS_pidfd_send_signal ? C_PIDFD_SEND_SIGNAL
                      : number == SYS_fchmodat2         ? C_FCHMODAT2
                                                        : C_MAX;
        static long (*f)(long, ...);
        va_list ap;
        long a[6];
        bool ka = false;
        long r;

        va_start(ap, number);
        for (int i = 0; i < 6; i++)
                a[i] = va_arg(ap, long);
        va_end(ap);
        if (!f)
                f = real("syscall");
        if (c == C_PIDFD_OPEN || c == C_PIDFD_SEND_SIGNAL) {
                char what[48];

                snprintf(what, sizeof(what), "pid %ld", a[0]);
                if (BEFORE(c, -1, what, &ka))
                        FAIL_WITH_ERRNO();
        } else if (c == C_FCHMODAT2 && BEFORE(c, (int) a[0], (const char *) a[1], &ka)) {
                FAIL_WITH_ERRNO();
        }
        r = f(number, a[0], a[1], a[2], a[3], a[4], a[5]);
        after(ka);
        return r;
}
