/* Probes run as another account: forked children that drop to it, try, and report by a deadline. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "child.h"
#include "privdrop.h"

enum probe_op {
        PROBE_SEARCH,           /* faccessat X_OK on a folder */
        PROBE_EXEC,             /* faccessat X_OK and open O_RDONLY on the launcher */
        PROBE_READ,             /* open and read one byte */
        PROBE_PRIVATE,          /* open, list, write access, search: all must be refused */
        PROBE_LIST,             /* opendir */
};

enum {
        GOT_OPEN = 1 << 0,
        GOT_LIST = 1 << 1,
        GOT_WRITE = 1 << 2,
        GOT_SEARCH = 1 << 3,
        GOT_EXEC = 1 << 4,
        GOT_READ = 1 << 5,
        GOT_DONE = 1 << 6,      /* the child reached this item */
};

struct probe_res {
        int err;                /* errno of the first refused attempt, 0 when none was refused */
        unsigned got;           /* GOT_* bits for what succeeded */
};

struct probe_plan {
        const char **paths;
        enum probe_op *ops;
        size_t n, cap;
};


/* Appends one item; path is borrowed and must outlive the plan. */
int check_plan_add(struct probe_plan *p, const char *path, enum probe_op op);

/*
 * Runs fn in a child as id: dropped from root, or as is when check already runs
 * as that account (the service; it cannot set its groups then).  -EPERM otherwise.
 */
int check_run_as_id(const struct slots_ident *id, int (*fn)(void *arg), void *arg, int timeout_ms);

/*
 * Runs plan items [first, first+n) as id.  out[i] gets each result; an item
 * the child never reached keeps got == 0 (no GOT_DONE).  Returns the
 * slots_run_as result: 0, or -errno (-ETIMEDOUT, -EPERM: the drop failed).
 */
int check_run_probes(const struct slots_ident *id, const struct probe_plan *plan, size_t first, size_t n,
                     struct probe_res *out, int timeout_ms);

/* A probe's failure (a check_run_probes result < 0) in words. */
const char *check_probe_failure(int r);

/* Memory a forked child writes and the caller reads: MAP_SHARED, zeroed.  NULL when it cannot be had. */
void *check_probe_shared(size_t size);
void check_probe_shared_free(void *p, size_t size);

/* How many children check_probe_pool runs at once on this machine. */
unsigned check_probe_pool_width(void);

/*
 * Runs fn(arg, i) for each i in [0, n), each in a forked child of the caller
 * (which keeps the caller's ids; fn drops them itself, e.g. with check_run_probes),
 * at most width at a time.  What a child finds it leaves in memory from
 * check_probe_shared().  A child still running after deadline_ms (<= 0: no limit) is
 * killed with its process group.  status[i] gets fn's result (0..125), or
 * -ETIMEDOUT, -ECHILD (killed by a signal).  Returns 0, or -errno when a fork
 * failed (the tasks not started then get that in status).
 */
int check_probe_pool(size_t n, unsigned width, int deadline_ms, int (*fn)(void *arg, size_t i), void *arg, int *status);

/*
 * The fork server: a small process forked before the caller builds its per-slot data, so
 * that each slot's probes fork from it, not from a parent of a hundred megabytes.  It runs
 * width lanes (the same process and width - 1 forks of it), each taking one request at a
 * time off a socketpair and running it with check_run_probes (one forked child that drops, as
 * root would drop it in the caller).  It runs as the caller (root) and never as an account;
 * it dies with the caller.
 */
struct probe_server {
        struct slots_child c;   /* the server; c.pid 0: not running */
        int fd;                 /* the caller's end of the socketpair */
        size_t msg_max;         /* the largest request the socket carries */
};

/* One check_run_probes for the server: plan's items as id, into res (plan->n of them); r gets its result. */
struct probe_task {
        const struct slots_ident *id;   /* NULL: nothing to run, r stays as the caller set it */
        const struct probe_plan *plan;
        struct probe_res *res;
        int r;
};

/* Starts the server with width lanes (0: 1).  0, or -errno (then s->c.pid is 0 and nothing runs). */
int check_probe_server_start(struct probe_server *s, unsigned width);

/*
 * Runs every task through the server, each with timeout_ms, and waits for them: replies are
 * read as they come (poll on the socket, no sleeping).  A task too large for one message runs
 * here, with check_run_probes.  When no reply has come for timeout_ms + 5 s while tasks are out, the
 * server is killed with its lanes and probes, and the tasks not done get -ETIMEDOUT; when the
 * server ended (or its socket failed), it is killed and the tasks not done run here.  Returns
 * 0, or -errno when the server could not be used at all (no task was run then).
 */
int check_probe_server_run(struct probe_server *s, struct probe_task *tasks, size_t n, int timeout_ms);

/* Ends the server (its lanes finish the request they hold) and reaps it. */
void check_probe_server_stop(struct probe_server *s);
