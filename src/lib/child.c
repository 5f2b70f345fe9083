/* A forked child of the library: started, waited for until its deadline, ended (coverage counters written first). */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "child.h"

#ifdef SLOTS_COVERAGE
/* libgcov (linked by --coverage): writes the counters of this process now. */
void __gcov_dump(void);
#endif

/* How long a wait sleeps between two looks at a child that has a deadline. */
#define POLL_MS 2

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
        c->pid = fork();
        if (c->pid < 0)
                return -errno;
        if (c->group)
                /* Both sides, so the group exists before either goes on. */
                (void) setpgid(c->pid, c->pid);
        return c->pid == 0 ? 0 : 1;
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

int slots_child_wait(struct slots_child *c)
{
        int wstatus, status, r;

        if (!c->deadline) {
                while (waitpid(c->pid, &wstatus, 0) < 0)
                        if (errno != EINTR)
                                return -errno;
                return exit_status(wstatus);
        }
        while ((r = slots_child_poll(c, &status)) == 0)
                (void) poll(NULL, 0, POLL_MS);
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
