/*
 * Probes run as another account: a forked child drops to it, tries each path, and leaves
 * the results in shared memory before its deadline.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "childexit.h"
#include "privdrop.h"
#include "probe.h"

int plan_add(struct probe_plan *p, const char *path, enum probe_op op)
{
        if (p->n == p->cap) {
                size_t cap = p->cap ? p->cap * 2 : 32;
                const char **paths = realloc(p->paths, cap * sizeof(*paths));
                enum probe_op *ops;

                if (!paths)
                        return -ENOMEM;
                p->paths = paths;
                ops = realloc(p->ops, cap * sizeof(*ops));
                if (!ops)
                        return -ENOMEM;
                p->ops = ops;
                p->cap = cap;
        }
        p->paths[p->n] = path;
        p->ops[p->n] = op;
        p->n++;
        return 0;
}

struct probe_job {
        const struct probe_plan *plan;
        size_t first, n;
        struct probe_res *res;
};

static int probe_open(const char *path, int flags)
{
        int fd = open(path, flags | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);

        if (fd < 0)
                return -errno;
        close(fd);
        return 0;
}

static void probe_one(const char *path, enum probe_op op, struct probe_res *res)
{
        struct stat st;
        DIR *d;
        char c;
        int fd;

        res->err = 0;
        res->got = 0;
#define REFUSED(e)                                                              \
        do {                                                                    \
                if (!res->err)                                                  \
                        res->err = (e);                                         \
        } while (0)
        switch (op) {
        case PROBE_SEARCH:
                if (faccessat(AT_FDCWD, path, X_OK, AT_EACCESS) == 0)
                        res->got |= GOT_SEARCH;
                else
                        REFUSED(errno);
                break;
        case PROBE_EXEC:
                if (faccessat(AT_FDCWD, path, X_OK, AT_EACCESS) == 0)
                        res->got |= GOT_EXEC;
                else
                        REFUSED(errno);
                if (probe_open(path, O_RDONLY) == 0)
                        res->got |= GOT_OPEN;
                else
                        REFUSED(errno);
                break;
        case PROBE_READ:
                fd = open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
                if (fd < 0) {
                        REFUSED(errno);
                        break;
                }
                res->got |= GOT_OPEN;
                if (read(fd, &c, 1) >= 0)
                        res->got |= GOT_READ;
                else
                        REFUSED(errno);
                close(fd);
                break;
        case PROBE_PRIVATE:
                if (probe_open(path, O_RDONLY) == 0)
                        res->got |= GOT_OPEN;
                else
                        REFUSED(errno);
                d = opendir(path);
                if (d) {
                        res->got |= GOT_LIST;
                        closedir(d);
                }
                if (faccessat(AT_FDCWD, path, W_OK, AT_EACCESS) == 0)
                        res->got |= GOT_WRITE;
                if (stat(path, &st) == 0 && S_ISDIR(st.st_mode) && faccessat(AT_FDCWD, path, X_OK, AT_EACCESS) == 0)
                        res->got |= GOT_SEARCH;
                break;
        case PROBE_LIST:
                d = opendir(path);
                if (d) {
                        res->got |= GOT_LIST;
                        closedir(d);
                } else {
                        REFUSED(errno);
                }
                break;
        }
#undef REFUSED
        res->got |= GOT_DONE;
}

static int probe_child(void *arg)
{
        struct probe_job *j = arg;

        for (size_t i = 0; i < j->n; i++)
                probe_one(j->plan->paths[j->first + i], j->plan->ops[j->first + i], &j->res[i]);
        return 0;
}

/*
 * Runs fn in a child as id: dropped from root, or as is when check already runs
 * as that account (the service; it cannot set its groups then).  -EPERM otherwise.
 */
int run_as_id(const struct slots_ident *id, int (*fn)(void *arg), void *arg, int timeout_ms)
{
        struct timespec t0, t;
        int status;
        pid_t pid, w;

        if (geteuid() == 0)
                return slots_run_as(id, fn, arg, timeout_ms);
        if (geteuid() != id->uid)
                return -EPERM;
        clock_gettime(CLOCK_MONOTONIC, &t0);
        pid = fork();
        if (pid < 0)
                return -errno;
        if (pid == 0) {
                int r = fn(arg);
                _exit(r < 0 ? 125 : r > 125 ? 125 : r);
        }
        for (;;) {
                w = waitpid(pid, &status, WNOHANG);
                if (w == pid)
                        break;
                if (w < 0 && errno != EINTR)
                        return -errno;
                clock_gettime(CLOCK_MONOTONIC, &t);
                if ((t.tv_sec - t0.tv_sec) * 1000L + (t.tv_nsec - t0.tv_nsec) / 1000000L >= timeout_ms) {
                        (void) kill(pid, SIGKILL);
                        (void) waitpid(pid, &status, 0);
                        return -ETIMEDOUT;
                }
                (void) poll(NULL, 0, 2);
        }
        return WIFEXITED(status) ? WEXITSTATUS(status) : -ECHILD;
}

/*
 * Runs plan items [first, first+n) as id.  out[i] gets each result; an item
 * the child never reached keeps got == 0 (no GOT_DONE).  Returns the
 * slots_run_as result: 0, or -errno (-ETIMEDOUT, -EPERM: the drop failed).
 */
int run_probes(const struct slots_ident *id, const struct probe_plan *plan, size_t first, size_t n,
               struct probe_res *out, int timeout_ms)
{
        struct probe_job j = { .plan = plan, .first = first, .n = n };
        size_t size = (n ? n : 1) * sizeof(struct probe_res);
        int r;

        j.res = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
        if (j.res == MAP_FAILED)
                return -errno;
        memset(j.res, 0, size);
        /* A slot's own kill(-1) loop cannot end a probe that keeps real and saved uid 0. */
        r = id->uid && geteuid() == 0 ? slots_run_as_unkillable(id, probe_child, &j, timeout_ms)
                                       : run_as_id(id, probe_child, &j, timeout_ms);
        memcpy(out, j.res, n * sizeof(*out));
        munmap(j.res, size);
        return r;
}

const char *probe_failure(int r)
{
        switch (r) {
        case -ETIMEDOUT:
                return "the probe did not finish in time (a hung network file system?)";
        case -EPERM:
                return "the probe could not drop to the account's groups and uid";
        case -ECHILD:
                return "the probe died from a signal";
        default:
                return strerror(-r);
        }
}

void *probe_shared(size_t size)
{
        void *p = mmap(NULL, size ? size : 1, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);

        return p == MAP_FAILED ? NULL : p;
}

void probe_shared_free(void *p, size_t size)
{
        if (p)
                munmap(p, size ? size : 1);
}

unsigned probe_pool_width(void)
{
        long n = sysconf(_SC_NPROCESSORS_ONLN);

        /* Most of a probe's time is waiting (sudo, PAM, a slow mount): a few children per core. */
        return n < 2 ? 4 : n > 8 ? 16 : (unsigned) n * 2;
}

static long ms_since(const struct timespec *t0)
{
        struct timespec t;

        clock_gettime(CLOCK_MONOTONIC, &t);
        return (t.tv_sec - t0->tv_sec) * 1000L + (t.tv_nsec - t0->tv_nsec) / 1000000L;
}

struct pool_child {
        pid_t pid;
        size_t i;
        struct timespec t0;
};

int probe_pool(size_t n, unsigned width, int deadline_ms, int (*fn)(void *arg, size_t i), void *arg, int *status)
{
        struct pool_child *run;
        size_t next = 0, running = 0;
        int err = 0;

        if (width == 0)
                width = 1;
        run = calloc(width, sizeof(*run));
        if (!run)
                return -ENOMEM;
        while (next < n || running) {
                bool reaped = false;

                while (next < n && running < width && !err) {
                        pid_t pid = fork();

                        if (pid < 0) {
                                err = -errno;
                                break;
                        }
                        if (pid == 0) {
                                /* Its own process group: a child past its deadline goes with what it started. */
                                (void) setpgid(0, 0);
                                int r = fn(arg, next);
                                slots_exit_child(r < 0 ? 125 : r > 125 ? 125 : r);
                        }
                        (void) setpgid(pid, pid);
                        run[running].pid = pid;
                        run[running].i = next;
                        clock_gettime(CLOCK_MONOTONIC, &run[running].t0);
                        running++;
                        next++;
                }
                if (err && running == 0) {
                        /* Tasks never started keep what the caller gave them. */
                        for (size_t i = next; i < n; i++)
                                status[i] = err;
                        break;
                }
                for (size_t c = 0; c < running;) {
                        int st;
                        pid_t w = waitpid(run[c].pid, &st, WNOHANG);

                        if (w == 0 && deadline_ms > 0 && ms_since(&run[c].t0) >= deadline_ms) {
                                (void) kill(-run[c].pid, SIGKILL);
                                (void) kill(run[c].pid, SIGKILL);
                                (void) waitpid(run[c].pid, &st, 0);
                                status[run[c].i] = -ETIMEDOUT;
                        } else if (w == run[c].pid) {
                                status[run[c].i] = WIFEXITED(st) ? WEXITSTATUS(st) : -ECHILD;
                        } else if (w < 0 && errno != EINTR) {
                                status[run[c].i] = -errno;
                        } else {
                                c++;
                                continue;
                        }
                        run[c] = run[--running];
                        reaped = true;
                }
                if (!reaped && running)
                        (void) poll(NULL, 0, 1);
        }
        free(run);
        return err;
}
