/*
 * A forked child of the library: started, waited for through its pidfd until its deadline,
 * ended (coverage counters written first).
 */
#include <errno.h>
#include <poll.h>
#include <signal.h>
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
