/*
 * A forked child of the library: started, waited for through its pidfd until its deadline,
 * ended (coverage counters written first); a helper program run with its output read.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "child.h"

#ifdef SLOTS_COVERAGE
/* libgcov (linked by --coverage): writes the counters of this process now. */
void __gcov_dump(void);
#endif

/* On a kernel without pidfd_open (before 5.3): how long a wait sleeps between two looks. */
#define POLL_MS 2

#ifndef SYS_pidfd_open
#define SYS_pidfd_open 434
#endif
#ifndef SYS_pidfd_send_signal
#define SYS_pidfd_send_signal 424
#endif

int slots_pidfd_open(pid_t pid)
{
        long fd = syscall(SYS_pidfd_open, pid, 0);

        return fd < 0 ? -errno : (int) fd;
}

int slots_pidfd_signal(int pidfd, int sig)
{
        return syscall(SYS_pidfd_send_signal, pidfd, sig, NULL, 0) < 0 ? -errno : 0;
}

void slots_exit_child(int status)
{
#ifdef SLOTS_COVERAGE
        __gcov_dump();
#endif
        /* Never counted: the counters were written just before, and nothing runs after it. */
        _exit(status); /* GCOVR_EXCL_LINE */
}

void slots_child_return(int r)
{
        slots_exit_child(r < 0 ? 125 : r > 125 ? 125 : r);
}

static long now_ms(void)
{
        struct timespec ts;

        clock_gettime(CLOCK_MONOTONIC, &ts);
        return ts.tv_sec * 1000L + ts.tv_nsec / 1000000L;
}

void slots_child_deadline(struct slots_child *c, int timeout_ms)
{
        c->deadline = timeout_ms > 0 ? now_ms() + timeout_ms : 0;
}

int slots_child_start(struct slots_child *c, int timeout_ms, unsigned flags)
{
        slots_child_deadline(c, timeout_ms);
        c->group = flags & SLOTS_CHILD_GROUP;
        c->pidfd = -1;
        c->pid = fork();
        if (c->pid < 0)
                return -errno;
        if (c->group)
                /* Both sides, so the group exists before either goes on. */
                (void) setpgid(c->pid, c->pid);
        if (c->pid == 0)
                return 0;
        /* The child is not reaped before a wait here, so the pid is still its own. */
        c->pidfd = slots_pidfd_open(c->pid);
        if (c->pidfd < 0)
                c->pidfd = -1;
        return 1;
}

/* The child was reaped: its pidfd goes too. */
static void reaped(struct slots_child *c)
{
        if (c->pidfd >= 0)
                close(c->pidfd);
        c->pidfd = -1;
}

static int exit_status(int wstatus)
{
        return WIFEXITED(wstatus) ? WEXITSTATUS(wstatus) : -ECHILD;
}

void slots_child_kill(struct slots_child *c)
{
        int wstatus;

        if (c->group)
                (void) kill(-c->pid, SIGKILL);
        (void) kill(c->pid, SIGKILL);
        while (waitpid(c->pid, &wstatus, 0) < 0 && errno == EINTR)
                ;
        reaped(c);
}

int slots_child_poll(struct slots_child *c, int *status)
{
        int wstatus;
        pid_t w;

        do
                w = waitpid(c->pid, &wstatus, WNOHANG);
        while (w < 0 && errno == EINTR);
        if (w < 0)
                return -errno;
        if (w == c->pid) {
                reaped(c);
                *status = exit_status(wstatus);
                return 1;
        }
        if (c->deadline && now_ms() >= c->deadline) {
                slots_child_kill(c);
                *status = -ETIMEDOUT;
                return 1;
        }
        return 0;
}

int slots_child_left_ms(const struct slots_child *c)
{
        long left;

        if (!c->deadline)
                return -1;
        left = c->deadline - now_ms();
        return left <= 0 ? 0 : left > 1000000000L ? 1000000000 : (int) left;
}

void slots_child_block(const struct slots_child *c, size_t n, size_t stride, int timeout_ms)
{
        struct pollfd fds[64];
        size_t k = 0;
        int wait = timeout_ms;

        for (size_t i = 0; i < n; i++) {
                const struct slots_child *ci = (const void *) ((const char *) c + i * stride);
                int left = slots_child_left_ms(ci);

                if (left >= 0 && (wait < 0 || left < wait))
                        wait = left;
                if (ci->pidfd < 0 || k == sizeof(fds) / sizeof(fds[0]))
                        /* No pidfd for it: look again soon. */
                        wait = wait < 0 || wait > POLL_MS ? POLL_MS : wait;
                else
                        fds[k++] = (struct pollfd){ .fd = ci->pidfd, .events = POLLIN };
        }
        (void) poll(fds, k, wait);
}

int slots_child_wait(struct slots_child *c)
{
        int wstatus, status, r;

        if (!c->deadline) {
                while (waitpid(c->pid, &wstatus, 0) < 0)
                        if (errno != EINTR)
                                return -errno;
                reaped(c);
                return exit_status(wstatus);
        }
        while ((r = slots_child_poll(c, &status)) == 0)
                slots_child_block(c, 1, sizeof(*c), -1);
        return r < 0 ? r : status;
}

/* ---- a program run with its output read ---- */

/* The one environment of every program the library runs, before a caller's own names. */
static const char *const base_env[] = { "PATH=/usr/sbin:/usr/bin:/sbin:/bin", "LC_ALL=C" };

/* The child's side of slots_prog_start: its fds, nothing else of ours, the exec; a failure to ex. */
__attribute__((noreturn)) static void proc_exec(const char *const argv[], const char *const *envp, int in, int out,
                                                int err, int ex)
{
        int e;

        if (in < 0 || dup2(in, 0) < 0 || dup2(out, 1) < 0 || dup2(err, 2) < 0)
                goto fail;
        /* Nothing of ours (lock fds, directory fds, a terminal's master) leaks into the program. */
        if (ex > 3)
                (void) close_range(3, (unsigned) ex - 1, 0);
        (void) close_range((unsigned) ex + 1, ~0U, 0);
        /* execve's prototype predates const; it changes neither array. */
        execve(argv[0], (char *const *) argv, (char *const *) envp);
fail:
        e = errno;
        (void) !write(ex, &e, sizeof(e));
        slots_exit_child(127);
}

static void close_pair(int fd[2])
{
        for (int i = 0; i < 2; i++)
                if (fd[i] >= 0)
                        close(fd[i]);
}

int slots_prog_start(struct slots_prog *p, const char *const argv[], const char *const env[], int stdin_fd,
                     int timeout_ms, unsigned flags)
{
        int o[2] = { -1, -1 }, e[2] = { -1, -1 }, ex[2] = { -1, -1 }, r = -ENOMEM, err;
        size_t n = 0, k = 2;
        const char **envp;
        ssize_t got;

        while (env && env[n])
                n++;
        envp = malloc((n + 3) * sizeof(*envp));
        p->fd[0] = p->fd[1] = -1;
        p->rerr = 0;
        p->stop_ends = flags & SLOTS_PROG_STOP_ENDS;
        p->len[0] = p->len[1] = 0;
        for (int i = 0; i < 2; i++)
                if (p->head[i] && p->size[i])
                        p->head[i][0] = '\0';
        if (!envp)
                return r;
        memcpy(envp, base_env, sizeof(base_env));
        for (size_t i = 0; i < n; i++)
                envp[k++] = env[i];
        envp[k] = NULL;
        if (pipe2(o, O_CLOEXEC) < 0 || (!(flags & SLOTS_PROG_MERGE) && pipe2(e, O_CLOEXEC) < 0) ||
            pipe2(ex, O_CLOEXEC) < 0 || fcntl(o[0], F_SETFL, O_NONBLOCK) < 0 ||
            (e[0] >= 0 && fcntl(e[0], F_SETFL, O_NONBLOCK) < 0))
                r = -errno;
        else
                r = slots_child_start(&p->c, timeout_ms, flags);
        if (r < 0)
                goto out;
        if (r == 0)
                proc_exec(argv, envp, stdin_fd >= 0 ? stdin_fd : open("/dev/null", O_RDONLY | O_CLOEXEC), o[1],
                          e[1] >= 0 ? e[1] : o[1], ex[1]);
        close(ex[1]);
        ex[1] = -1;
        /* EOF at its exec (close-on-exec), or the errno of what failed before it. */
        while ((got = read(ex[0], &err, sizeof(err))) < 0 && errno == EINTR)
                ;
        r = 0;
        if (got == (ssize_t) sizeof(err)) {
                slots_child_kill(&p->c);
                r = -ENOEXEC;
        } else {
                p->fd[0] = o[0];
                p->fd[1] = e[0];
                o[0] = e[0] = -1;
        }
out:
        close_pair(o);
        close_pair(e);
        close_pair(ex);
        free(envp);
        return r;
}

void slots_prog_read(struct slots_prog *p)
{
        for (int i = 0; i < 2; i++) {
                char tmp[512];
                ssize_t n = 0;

                while (p->fd[i] >= 0 && ((n = read(p->fd[i], tmp, sizeof(tmp))) > 0 || (n < 0 && errno == EINTR))) {
                        for (ssize_t j = 0; j < n && p->head[i] && p->len[i] + 1 < p->size[i]; j++)
                                p->head[i][p->len[i]++] = tmp[j];
                        if (p->head[i] && p->size[i])
                                p->head[i][p->len[i]] = '\0';
                }
                if (p->fd[i] < 0 || (n < 0 && errno == EAGAIN))
                        continue;
                if (n < 0)
                        p->rerr = -errno;
                close(p->fd[i]);
                p->fd[i] = -1;
        }
}

void slots_prog_close(struct slots_prog *p)
{
        close_pair(p->fd);
        p->fd[0] = p->fd[1] = -1;
}

/* Whether c stopped (waited for without reaping it). */
static bool stopped(const struct slots_child *c)
{
        siginfo_t w = { 0 };

        return waitid(P_PID, (id_t) c->pid, &w, WSTOPPED | WNOHANG | WNOWAIT) == 0 && w.si_pid == c->pid &&
               w.si_code == CLD_STOPPED;
}

int slots_prog_wait(struct slots_prog *p)
{
        sigset_t set;
        int sfd = -1, st = 0;

        /* SIGCHLD, also sent for a stop, wakes the wait through a signalfd beside the pidfd. */
        sigemptyset(&set);
        sigaddset(&set, SIGCHLD);
        if (p->stop_ends && sigprocmask(SIG_BLOCK, &set, NULL) == 0)
                sfd = signalfd(-1, &set, SFD_CLOEXEC | SFD_NONBLOCK);
        for (;;) {
                struct pollfd fds[4] = { { .fd = p->c.pidfd, .events = POLLIN }, { .fd = sfd, .events = POLLIN },
                                         { .fd = p->fd[0], .events = POLLIN }, { .fd = p->fd[1], .events = POLLIN } };
                struct signalfd_siginfo si;
                int left = slots_child_left_ms(&p->c);

                slots_prog_read(p);
                if (slots_child_poll(&p->c, &st) != 0)
                        break;
                if (p->stop_ends && stopped(&p->c)) {
                        /* A stopped run never ends by itself: it need not wait out its deadline. */
                        slots_child_kill(&p->c);
                        st = -ECANCELED;
                        break;
                }
                /* Without a pidfd (or a signalfd for a stop), a look every POLL_MS. */
                if ((p->c.pidfd < 0 || (p->stop_ends && sfd < 0)) && (left < 0 || left > POLL_MS))
                        left = POLL_MS;
                (void) poll(fds, 4, left);
                while (sfd >= 0 && read(sfd, &si, sizeof(si)) > 0)
                        ;
        }
        if (sfd >= 0)
                close(sfd);
        /* What the caller runs next starts with SIGCHLD as it was. */
        if (p->stop_ends)
                (void) sigprocmask(SIG_UNBLOCK, &set, NULL);
        slots_prog_read(p);
        return st;
}

int slots_run_program(const char *const argv[], int stdin_fd, int timeout_ms, char *out, size_t outsize)
{
        struct slots_prog p = { .head = { out }, .size = { out ? outsize : 0 } };
        int r;

        if (out && outsize)
                out[0] = '\0';
        if (access(argv[0], X_OK) < 0)
                return -errno;
        r = slots_prog_start(&p, argv, NULL, stdin_fd, timeout_ms, SLOTS_PROG_MERGE);
        if (r == 0)
                r = slots_prog_wait(&p);
        slots_prog_close(&p);
        /* A failed read of the output is the reason, even when the program then died of it (SIGPIPE). */
        return r == 127 || r == -ENOEXEC ? -ENOENT : p.rerr ? p.rerr : r;
}

int slots_child_run(int (*fn)(void *arg), void *arg, int timeout_ms, unsigned flags)
{
        struct slots_child c;
        int r = slots_child_start(&c, timeout_ms, flags);

        if (r < 0)
                return r;
        if (r == 0)
                slots_child_return(fn(arg));
        return slots_child_wait(&c);
}
