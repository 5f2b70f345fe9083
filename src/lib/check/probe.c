/*
 * Probes run as another account: a forked child drops to it, tries each path, and leaves
 * the results in shared memory before its deadline.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "child.h"
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
        if (geteuid() == 0)
                return slots_run_as(id, fn, arg, timeout_ms);
        if (geteuid() != id->uid)
                return -EPERM;
        return slots_child_run(fn, arg, timeout_ms, 0);
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

struct pool_child {
        struct slots_child c;
        size_t i;
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
                        /* Its own process group: a child past its deadline goes with what it started. */
                        int r = slots_child_start(&run[running].c, deadline_ms, SLOTS_CHILD_GROUP);

                        if (r < 0) {
                                err = r;
                                break;
                        }
                        if (r == 0)
                                slots_child_return(fn(arg, next));
                        run[running].i = next;
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
                        int r = slots_child_poll(&run[c].c, &status[run[c].i]);

                        if (r == 0) {
                                c++;
                                continue;
                        }
                        if (r < 0)
                                status[run[c].i] = r;
                        run[c] = run[--running];
                        reaped = true;
                }
                if (!reaped && running)
                        /* Until one of them ends or reaches its deadline: their pidfds, no sleep. */
                        slots_child_block(&run[0].c, running, sizeof(*run), -1);
        }
        free(run);
        return err;
}
