/*
 * Probes run as another account: a forked child drops to it, tries each path, and leaves
 * the results in shared memory before its deadline.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "child.h"
#include "clock.h"
#include "privdrop.h"
#include "probe.h"

int check_plan_add(struct probe_plan *p, const char *path, enum probe_op op)
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

/* In a lane of the fork server: its socket, which no probe child keeps (it closes it first). */
static int lane_fd = -1;

static int probe_child(void *arg)
{
        struct probe_job *j = arg;

        if (lane_fd >= 0)
                close(lane_fd);

        for (size_t i = 0; i < j->n; i++)
                probe_one(j->plan->paths[j->first + i], j->plan->ops[j->first + i], &j->res[i]);
        return 0;
}

/*
 * Runs fn in a child as id: dropped from root, or as is when check already runs
 * as that account (the service; it cannot set its groups then).  -EPERM otherwise.
 */
int check_run_as_id(const struct slots_ident *id, int (*fn)(void *arg), void *arg, int timeout_ms)
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
int check_run_probes(const struct slots_ident *id, const struct probe_plan *plan, size_t first, size_t n,
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
                                      : check_run_as_id(id, probe_child, &j, timeout_ms);
        memcpy(out, j.res, n * sizeof(*out));
        munmap(j.res, size);
        return r;
}

const char *check_probe_failure(int r)
{
        switch (r) {
        case -ETIMEDOUT:
                return "the probe did not finish in time (a hung network file system?)";
        case -EPERM:
                return "the probe could not drop to the account's groups and uid";
        case -ECHILD:
                return "the probe died from a signal";
        case -ECANCELED:
                return "the probe was stopped (SIGSTOP or the like): ended at once";
        default:
                return strerror(-r);
        }
}

void *check_probe_shared(size_t size)
{
        void *p = mmap(NULL, size ? size : 1, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);

        return p == MAP_FAILED ? NULL : p;
}

void check_probe_shared_free(void *p, size_t size)
{
        if (p)
                munmap(p, size ? size : 1);
}

unsigned check_probe_pool_width(void)
{
        long n = sysconf(_SC_NPROCESSORS_ONLN);

        /* Most of a probe's time is waiting (sudo, PAM, a slow mount): a few children per core. */
        return n < 2 ? 4 : n > 8 ? 16 : (unsigned) n * 2;
}

struct pool_child {
        struct slots_child c;
        size_t i;
};

int check_probe_pool(size_t n, unsigned width, int deadline_ms, int (*fn)(void *arg, size_t i), void *arg, int *status)
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

/* ---- the fork server ---- */

/* A request: the header, then n_groups gid_t, n ops (one byte each), then n paths, each ending in NUL (len bytes). */
struct req_hdr {
        uint64_t index;
        uint32_t uid, gid, n_groups;
        int32_t timeout_ms;
        uint32_t n, len;
};

/* A reply: the header, then n struct probe_res. */
struct rep_hdr {
        uint64_t index;
        int32_t r;
        uint32_t n;
};

#define GROUPS_MAX 65536u
#define STALL_MS 5000   /* past the probes' own timeout, with no reply: the server is stuck */

/* Splits a request into id and plan (pointing into msg); false when it is malformed. */
static bool req_decode(const char *msg, size_t len, struct req_hdr *h, struct slots_ident *id, gid_t *groups,
                       struct probe_plan *plan)
{
        const char *ops, *p, *end;

        if (len < sizeof(*h))
                return false;
        memcpy(h, msg, sizeof(*h));
        if (h->n_groups > GROUPS_MAX || h->n > len || h->len > len ||
            len != sizeof(*h) + (size_t) h->n_groups * sizeof(gid_t) + h->n + h->len)
                return false;
        memcpy(groups, msg + sizeof(*h), (size_t) h->n_groups * sizeof(gid_t));
        *id = (struct slots_ident) { .uid = h->uid, .gid = h->gid, .groups = groups, .n_groups = (int) h->n_groups };
        ops = msg + sizeof(*h) + (size_t) h->n_groups * sizeof(gid_t);
        p = ops + h->n;
        end = p + h->len;
        plan->n = 0;
        for (uint32_t i = 0; i < h->n; i++) {
                const char *nul = memchr(p, '\0', (size_t) (end - p));

                if (!nul || (unsigned char) ops[i] > PROBE_LIST || check_plan_add(plan, p, (enum probe_op) ops[i]) < 0)
                        return false;
                p = nul + 1;
        }
        return p == end;
}

/* A lane: one request at a time, check_run_probes, the reply; until the caller closes its end. */
static void lane_run(int fd, size_t msg_max)
{
        char *msg = malloc(msg_max + 1);
        gid_t *groups = malloc(GROUPS_MAX * sizeof(gid_t));
        struct probe_plan plan = { 0 };
        char *rep = NULL;
        size_t rep_cap = 0;
        int failed = 0;

        lane_fd = fd;
        while (msg && groups) {
                ssize_t len = recv(fd, msg, msg_max + 1, MSG_TRUNC);
                struct req_hdr h = { 0 };
                struct rep_hdr rh = { 0 };
                struct slots_ident id;
                size_t size;

                if (len < 0 && errno == EINTR)
                        continue;
                /* A failed receive took no request: try again, but not for ever. */
                if (len < 0 && ++failed < 3)
                        continue;
                if (len <= 0)
                        break;
                failed = 0;
                memcpy(&rh.index, msg, len >= (ssize_t) sizeof(rh.index) ? sizeof(rh.index) : 0);
                if ((size_t) len > msg_max || !req_decode(msg, (size_t) len, &h, &id, groups, &plan))
                        rh.r = -EPROTO;
                else
                        rh.n = h.n;
                size = sizeof(rh) + rh.n * sizeof(struct probe_res);
                if (size > rep_cap) {
                        char *b = realloc(rep, size);

                        if (!b)
                                break;
                        rep = b;
                        rep_cap = size;
                }
                if (rh.r == 0) {
                        memset(rep + sizeof(rh), 0, rh.n * sizeof(struct probe_res));
                        rh.r = check_run_probes(&id, &plan, 0, plan.n, (struct probe_res *) (void *) (rep + sizeof(rh)),
                                                h.timeout_ms);
                }
                memcpy(rep, &rh, sizeof(rh));
                while ((len = send(fd, rep, size, MSG_NOSIGNAL)) < 0 && errno == EINTR)
                        ;
                if (len < 0 && errno != EPIPE) {
                        /* The reply did not go: the request's answer is then that failure. */
                        rh = (struct rep_hdr) { .index = rh.index, .r = -errno };
                        len = send(fd, &rh, sizeof(rh), MSG_NOSIGNAL);
                }
                if (len < 0)
                        break;
        }
        free(msg);
        free(groups);
        free(plan.paths);
        free(plan.ops);
        free(rep);
}

/* The server's process: width - 1 more lanes, its own, then their ends. */
__attribute__((noreturn)) static void server_main(int fd, unsigned width, size_t msg_max, pid_t caller)
{
        /* Dies with the caller, and so do its lanes (each with its parent); without it, at the socket's end. */
        (void) prctl(PR_SET_PDEATHSIG, SIGKILL);
        if (getppid() != caller)
                slots_exit_child(1);
        for (unsigned i = 1; i < width; i++) {
                pid_t me = getpid(), p = fork();

                if (p == 0) {
                        (void) prctl(PR_SET_PDEATHSIG, SIGKILL);
                        if (getppid() != me)
                                slots_exit_child(1);
                        lane_run(fd, msg_max);
                        slots_exit_child(0);
                }
                if (p < 0)
                        break;
        }
        lane_run(fd, msg_max);
        close(fd);
        while (wait(NULL) > 0 || errno == EINTR)
                ;
        slots_exit_child(0);
}

int check_probe_server_start(struct probe_server *s, unsigned width)
{
        int sv[2], want = 4 << 20, got[2] = { 0, 0 };
        pid_t caller = getpid();
        int r;

        memset(s, 0, sizeof(*s));
        s->fd = -1;
        if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0)
                return -errno;
        for (int i = 0; i < 2; i++) {
                socklen_t l = sizeof(got[i]);

                /* Root may pass net.core.wmem_max; others get what it allows. */
                if (setsockopt(sv[i], SOL_SOCKET, SO_SNDBUFFORCE, &want, sizeof(want)) < 0)
                        (void) setsockopt(sv[i], SOL_SOCKET, SO_SNDBUF, &want, sizeof(want));
                if (getsockopt(sv[i], SOL_SOCKET, SO_SNDBUF, &got[i], &l) < 0)
                        got[i] = 0;
        }
        /* A message must fit the sender's buffer, less the kernel's own share of it. */
        s->msg_max = (size_t) (got[0] < got[1] ? got[0] : got[1]);
        s->msg_max = s->msg_max > 8192 ? s->msg_max - 4096 : 0;
        if (s->msg_max < sizeof(struct req_hdr) + 4096) {
                close(sv[0]);
                close(sv[1]);
                return -ENOBUFS;
        }
        r = slots_child_start(&s->c, 0, SLOTS_CHILD_GROUP);
        if (r < 0) {
                close(sv[0]);
                close(sv[1]);
                s->c.pid = 0;
                return r;
        }
        if (r == 0) {
                close(sv[0]);
                server_main(sv[1], width ? width : 1, s->msg_max, caller);
        }
        close(sv[1]);
        s->fd = sv[0];
        return 0;
}

/* Task i as a request in buf; 0 when it does not fit in max bytes. */
static size_t req_encode(char *buf, size_t max, size_t i, const struct probe_task *t, int timeout_ms)
{
        const struct probe_plan *p = t->plan;
        struct req_hdr h = {
                .index = i,
                .uid = t->id->uid,
                .gid = t->id->gid,
                .n_groups = t->id->n_groups > 0 ? (uint32_t) t->id->n_groups : 0,
                .timeout_ms = timeout_ms,
                .n = (uint32_t) p->n,
        };
        size_t off;

        if (h.n_groups > GROUPS_MAX || p->n > UINT32_MAX)
                return 0;
        off = sizeof(h) + (size_t) h.n_groups * sizeof(gid_t) + p->n;
        if (off > max)
                return 0;
        if (h.n_groups)
                memcpy(buf + sizeof(h), t->id->groups, (size_t) h.n_groups * sizeof(gid_t));
        for (size_t j = 0; j < p->n; j++) {
                size_t l = strlen(p->paths[j]) + 1;

                buf[sizeof(h) + (size_t) h.n_groups * sizeof(gid_t) + j] = (char) p->ops[j];
                if (l > max - off)
                        return 0;
                memcpy(buf + off, p->paths[j], l);
                off += l;
        }
        h.len = (uint32_t) (off - sizeof(h) - (size_t) h.n_groups * sizeof(gid_t) - p->n);
        memcpy(buf, &h, sizeof(h));
        return off;
}

enum { T_NONE, T_OUT, T_DONE, T_LOCAL };

/* Reads the replies that are there; false when the server is gone. */
static bool server_read(struct probe_server *s, struct probe_task *t, unsigned char *st, size_t n, char *buf,
                        size_t *out, long *last)
{
        for (;;) {
                ssize_t len = recv(s->fd, buf, s->msg_max + 1, MSG_DONTWAIT | MSG_TRUNC);
                struct rep_hdr h;

                if (len < 0 && errno == EINTR)
                        continue;
                if (len < 0)
                        return errno == EAGAIN || errno == EWOULDBLOCK;
                if (len == 0)
                        return false;
                if ((size_t) len < sizeof(h) || (size_t) len > s->msg_max)
                        return false;
                memcpy(&h, buf, sizeof(h));
                if (h.index >= n || st[h.index] != T_OUT ||
                    (h.r == 0 && (h.n != t[h.index].plan->n || (size_t) len != sizeof(h) + h.n * sizeof(struct probe_res))))
                        return false;
                if (h.r == 0)
                        memcpy(t[h.index].res, buf + sizeof(h), h.n * sizeof(struct probe_res));
                t[h.index].r = h.r == -EPROTO ? -EIO : h.r;
                st[h.index] = T_DONE;
                (*out)--;
                *last = slots_now_ms();
        }
}

/* Sends requests until the socket is full; tasks too large for a message are left to the caller. */
static bool server_send(struct probe_server *s, struct probe_task *t, unsigned char *st, size_t n, char *buf,
                        size_t *next, size_t *out, int timeout_ms)
{
        for (; *next < n; (*next)++) {
                size_t len;
                ssize_t w;

                if (!t[*next].id)
                        continue;
                len = req_encode(buf, s->msg_max, *next, &t[*next], timeout_ms);
                if (len == 0) {
                        st[*next] = T_LOCAL;
                        continue;
                }
                while ((w = send(s->fd, buf, len, MSG_DONTWAIT | MSG_NOSIGNAL)) < 0 && errno == EINTR)
                        ;
                if (w < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
                        return true;
                if (w < 0 && errno == EMSGSIZE) {
                        st[*next] = T_LOCAL;
                        continue;
                }
                if (w < 0)
                        return false;
                st[*next] = T_OUT;
                (*out)++;
        }
        return true;
}

int check_probe_server_run(struct probe_server *s, struct probe_task *t, size_t n, int timeout_ms)
{
        unsigned char *st;
        char *buf;
        size_t next = 0, out = 0;
        long last = slots_now_ms();
        int lost = 0;

        if (!s->c.pid)
                return -ESRCH;
        st = calloc(n + 1, 1);
        buf = malloc(s->msg_max + 1);
        if (!st || !buf) {
                free(st);
                free(buf);
                return -ENOMEM;
        }
        while (!lost && (next < n || out)) {
                struct pollfd p = { .fd = s->fd, .events = POLLIN | (next < n ? POLLOUT : 0) };
                long left = last + timeout_ms + STALL_MS - slots_now_ms();
                int r = poll(&p, 1, !out ? -1 : left <= 0 ? 0 : (int) left);

                if (r < 0 && errno == EINTR)
                        continue;
                if (r <= 0) {
                        lost = r == 0 ? -ETIMEDOUT : -ECHILD;
                        break;
                }
                if (!server_read(s, t, st, n, buf, &out, &last))
                        lost = -ECHILD;
                else if ((p.revents & (POLLHUP | POLLERR)) && !(p.revents & POLLIN))
                        lost = -ECHILD;
                else if ((p.revents & POLLOUT) && !server_send(s, t, st, n, buf, &next, &out, timeout_ms))
                        lost = -ECHILD;
        }
        free(buf);
        if (lost) {
                /* Its lanes and their probes with it: they share its process group. */
                slots_child_kill(&s->c);
                s->c.pid = 0;
                close(s->fd);
                s->fd = -1;
                /* Stuck: what it held did not finish in time.  Gone: the caller runs the rest itself. */
                for (size_t i = 0; i < n; i++)
                        if (st[i] == T_OUT || (st[i] == T_NONE && t[i].id)) {
                                if (lost == -ETIMEDOUT)
                                        t[i].r = lost;
                                else
                                        st[i] = T_LOCAL;
                        }
        }
        for (size_t i = 0; i < n; i++)
                if (st[i] == T_LOCAL)
                        t[i].r = check_run_probes(t[i].id, t[i].plan, 0, t[i].plan->n, t[i].res, timeout_ms);
        free(st);
        return 0;
}

void check_probe_server_stop(struct probe_server *s)
{
        if (!s->c.pid)
                return;
        /* The socket itself, not this fd: a child forked since then may hold a copy of it. */
        (void) shutdown(s->fd, SHUT_RDWR);
        close(s->fd);
        s->fd = -1;
        /* Its lanes see the end of the socket and leave; none holds a request now. */
        (void) slots_child_wait(&s->c);
        s->c.pid = 0;
}
