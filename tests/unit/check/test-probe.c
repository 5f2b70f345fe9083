/*
 * probe.c's outcomes as tables: each kind of probe against files and folders the account can
 * and cannot use (what it got, and the errno of the first refusal); check_run_as_id as the account
 * itself (its status, a child past its deadline, a child killed by a signal, another account
 * refused); the words for a probe's failure; and check_probe_pool: its order (each task's status at
 * its own index), statuses clamped to 0..125, a task killed by a signal, a task past its
 * deadline killed together with the process it started, width 0 as 1; and the fork server:
 * the same probes through its lanes at several widths, a task too large for a message run by
 * the caller, tasks without an account left alone, a server that is gone (the caller runs the
 * tasks) or stuck (they fail in time, nothing hangs), and the account's kill(-1) loop beside it (nothing lost).
 */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "probe.h"
#include "unit.h"

#define NOBODY 65534

static char dir[256];

static int setup(void **state)
{
        const char *tmp = getenv("TMPDIR");
        char p[512];
        int fd;

        (void) state;
        snprintf(dir, sizeof(dir), "%s/test-probe.XXXXXX", tmp && tmp[0] ? tmp : "/tmp");
        if (!mkdtemp(dir) || chmod(dir, 0755) < 0)
                return -1;
        /* open: 0755 folder; closed: 0700 folder; readable 0644, private 0600, writable-only 0622 files. */
        snprintf(p, sizeof(p), "%s/open", dir);
        if (mkdir(p, 0755) < 0 || chmod(p, 0755) < 0)
                return -1;
        snprintf(p, sizeof(p), "%s/closed", dir);
        if (mkdir(p, 0700) < 0)
                return -1;
        snprintf(p, sizeof(p), "%s/all", dir);
        if (mkdir(p, 0777) < 0 || chmod(p, 0777) < 0)
                return -1;
        static const struct {
                const char *name;
                mode_t mode;
        } files[] = { { "readable", 0644 }, { "private", 0600 }, { "writable", 0622 }, { "prog", 0755 } };
        for (size_t i = 0; i < N_ELEM(files); i++) {
                snprintf(p, sizeof(p), "%s/%s", dir, files[i].name);
                fd = open(p, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
                if (fd < 0 || write(fd, "x\n", 2) != 2 || fchmod(fd, files[i].mode) < 0)
                        return -1;
                close(fd);
        }
        return 0;
}

static int teardown(void **state)
{
        char cmd[600];

        (void) state;
        snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
        return system(cmd) == 0 ? 0 : -1;
}

/* ---- check_run_probes: each kind of probe, as nobody ---- */

static const struct {
        const char *name;               /* below dir */
        enum probe_op op;
        unsigned got;                   /* without GOT_DONE, which every reached item has */
        int err;                        /* the first refusal */
} probes[] = {
        { "open", PROBE_SEARCH, GOT_SEARCH, 0 },
        { "closed", PROBE_SEARCH, 0, EACCES },
        { "prog", PROBE_EXEC, GOT_EXEC | GOT_OPEN, 0 },
        { "private", PROBE_EXEC, 0, EACCES },
        { "readable", PROBE_EXEC, GOT_OPEN, EACCES },   /* readable, not executable */
        { "readable", PROBE_READ, GOT_OPEN | GOT_READ, 0 },
        { "private", PROBE_READ, 0, EACCES },
        { "open", PROBE_READ, GOT_OPEN, EISDIR },       /* a folder opens, but read() refuses */
        { "private", PROBE_PRIVATE, 0, EACCES },
        { "closed", PROBE_PRIVATE, 0, EACCES },
        { "writable", PROBE_PRIVATE, GOT_WRITE, EACCES },
        { "all", PROBE_PRIVATE, GOT_OPEN | GOT_LIST | GOT_WRITE | GOT_SEARCH, 0 },
        { "open", PROBE_LIST, GOT_LIST, 0 },
        { "closed", PROBE_LIST, 0, EACCES },
        { "missing", PROBE_LIST, 0, ENOENT },
};

static void test_probes(void **state)
{
        struct slots_ident nobody = { .uid = NOBODY, .gid = NOBODY };
        struct probe_plan plan = { 0 };
        struct probe_res res[N_ELEM(probes) * 3];
        char paths[N_ELEM(probes)][512];
        int failures = 0;

        (void) state;
        if (geteuid() != 0) {
                print_message("skipped: the probes drop to nobody (needs root)\n");
                skip();
        }
        /* Three times over: more items than the plan's first allocation (32) holds. */
        for (size_t k = 0; k < 3; k++)
                for (size_t i = 0; i < N_ELEM(probes); i++) {
                        snprintf(paths[i], sizeof(paths[i]), "%s/%s", dir, probes[i].name);
                        assert_int_equal(check_plan_add(&plan, paths[i], probes[i].op), 0);
                }
        assert_int_equal(plan.n, N_ELEM(probes) * 3);
        assert_int_equal(check_run_probes(&nobody, &plan, 0, plan.n, res, 10000), 0);
        for (size_t i = 0; i < plan.n; i++) {
                const size_t r = i % N_ELEM(probes);

                if (!(res[i].got & GOT_DONE) || (res[i].got & ~GOT_DONE) != probes[r].got || res[i].err != probes[r].err)
                        ROW_FAIL("%s op %d: got %#x err %d, want %#x err %d", probes[r].name, (int) probes[r].op,
                                 res[i].got, res[i].err, probes[r].got | GOT_DONE, probes[r].err);
        }
        /* A part of the plan, and none of it. */
        memset(res, 0, sizeof(res));
        assert_int_equal(check_run_probes(&nobody, &plan, 5, 1, res, 10000), 0);
        assert_int_equal(res[0].got, GOT_DONE | GOT_READ | GOT_OPEN);
        assert_int_equal(check_run_probes(&nobody, &plan, 0, 0, res, 10000), 0);
        /* As root the same probes get through everywhere. */
        memset(res, 0, sizeof(res));
        assert_int_equal(check_run_probes(&(struct slots_ident){ .uid = 0, .gid = 0 }, &plan, 1, 1, res, 10000), 0);
        assert_int_equal(res[0].got, GOT_DONE | GOT_SEARCH);
        free(plan.paths);
        free(plan.ops);
        if (failures)
                fail_msg("%d failures", failures);
}

/* ---- check_run_as_id as the account itself (check run by the service) ---- */

static int ret_seven(void *arg)
{
        (void) arg;
        return 7;
}

static int ret_negative(void *arg)
{
        (void) arg;
        return -5;
}

static int dies(void *arg)
{
        (void) arg;
        raise(SIGKILL);
        return 0;
}

static int hangs(void *arg)
{
        (void) arg;
        pause();
        return 0;
}

static void test_run_as_self(void **state)
{
        static const struct {
                int (*fn)(void *);
                bool other;                     /* ask for another account than the caller */
                int want;
        } rows[] = {
                { ret_seven, false, 7 },
                { ret_negative, false, 125 },
                { dies, false, -ECHILD },
                { hangs, false, -ETIMEDOUT },
                { ret_seven, true, -EPERM },
        };
        int failures = 0;

        (void) state;
        for (size_t i = 0; i < N_ELEM(rows); i++) {
                int status;
                pid_t pid = fork();

                assert_true(pid >= 0);
                if (pid == 0) {
                        /* As an account that is not root, the way check runs as the service. */
                        uid_t me;
                        int r;

                        if (geteuid() == 0 && (setgid(NOBODY) < 0 || setuid(NOBODY) < 0))
                                _exit(200);
                        me = geteuid();
                        r = check_run_as_id(
                                &(struct slots_ident){ .uid = rows[i].other ? me + 1 : me, .gid = getegid() },
                                rows[i].fn, NULL, 300);
                        _exit(r < 0 ? 128 - r : r);
                }
                assert_int_equal(waitpid(pid, &status, 0), pid);
                if (!WIFEXITED(status))
                        ROW_FAIL("row %zu: the test child died", i);
                else if (WEXITSTATUS(status) != (rows[i].want < 0 ? 128 - rows[i].want : rows[i].want))
                        ROW_FAIL("row %zu: %d, want %d", i, WEXITSTATUS(status) > 128 ? 128 - WEXITSTATUS(status)
                                                                                     : WEXITSTATUS(status),
                                 rows[i].want);
        }
        if (failures)
                fail_msg("%d failures", failures);
}

static void test_failure_words(void **state)
{
        (void) state;
        assert_string_equal(check_probe_failure(-ETIMEDOUT),
                            "the probe did not finish in time (a hung network file system?)");
        assert_string_equal(check_probe_failure(-EPERM), "the probe could not drop to the account's groups and uid");
        assert_string_equal(check_probe_failure(-ECHILD), "the probe died from a signal");
        assert_string_equal(check_probe_failure(-ENOENT), strerror(ENOENT));
}

/* ---- check_probe_pool ---- */

static int *seen;               /* shared: each task writes its index + 1 at its own place */

static int task(void *arg, size_t i)
{
        (void) arg;
        seen[i] = (int) i + 1;
        switch (i % 5) {
        case 1:
                return 200;                     /* clamped to 125 */
        case 2:
                return -3;                      /* 125 too */
        case 3:
                raise(SIGKILL);
                return 0;
        default:
                return (int) i % 100;
        }
}

static void test_pool_order(void **state)
{
        static const unsigned widths[] = { 0, 1, 3, 64 };
        const size_t n = 23;
        int failures = 0;

        (void) state;
        seen = check_probe_shared(n * sizeof(int));
        assert_non_null(seen);
        for (size_t w = 0; w < N_ELEM(widths); w++) {
                int status[23];

                memset(seen, 0, n * sizeof(int));
                for (size_t i = 0; i < n; i++)
                        status[i] = -9999;
                assert_int_equal(check_probe_pool(n, widths[w], 0, task, NULL, status), 0);
                for (size_t i = 0; i < n; i++) {
                        int want = i % 5 == 1 || i % 5 == 2 ? 125 : i % 5 == 3 ? -ECHILD : (int) i % 100;

                        if (status[i] != want || seen[i] != (int) i + 1)
                                ROW_FAIL("width %u task %zu: status %d (want %d), ran as task %d", widths[w], i,
                                         status[i], want, seen[i] - 1);
                }
        }
        check_probe_shared_free(seen, n * sizeof(int));
        check_probe_shared_free(NULL, 0);
        assert_true(check_probe_pool_width() >= 4 && check_probe_pool_width() <= 16);
        /* Nothing to run: nothing started, 0. */
        assert_int_equal(check_probe_pool(0, 4, 100, task, NULL, NULL), 0);
        if (failures)
                fail_msg("%d failures", failures);
}

/* A task past its deadline goes with the process it started; the others finish. */
static int hang_with_child(void *arg, size_t i)
{
        pid_t *grandchild = arg;

        if (i == 0)
                return 0;
        {
                pid_t p = fork();

                if (p == 0) {
                        pause();
                        _exit(0);
                }
                grandchild[0] = p;
        }
        pause();
        return 0;
}

static void test_pool_deadline(void **state)
{
        pid_t *grandchild = check_probe_shared(sizeof(pid_t));
        int status[2] = { -9999, -9999 };

        (void) state;
        assert_non_null(grandchild);
        assert_int_equal(check_probe_pool(2, 2, 300, hang_with_child, grandchild, status), 0);
        assert_int_equal(status[0], 0);
        assert_int_equal(status[1], -ETIMEDOUT);
        assert_true(grandchild[0] > 0);
        /* The grandchild got SIGKILL with its process group (reaped by init: it is not ours). */
        for (int i = 0; i < 100 && kill(grandchild[0], 0) == 0; i++)
                usleep(10000);
        {
                char p[64], st[256] = "";
                FILE *f;

                snprintf(p, sizeof(p), "/proc/%d/stat", (int) grandchild[0]);
                f = fopen(p, "r");
                if (f) {
                        if (!fgets(st, sizeof(st), f))
                                st[0] = '\0';
                        fclose(f);
                }
                /* Gone, or a zombie waiting for its reaper. */
                assert_true(!f || strstr(st, ") Z ") != NULL);
        }
        check_probe_shared_free(grandchild, sizeof(pid_t));
}

/* ---- the fork server ---- */

#define SRV_TASKS 40

struct srv_run {
        struct probe_plan plan;
        char paths[N_ELEM(probes)][512];
        struct probe_res res[SRV_TASKS][N_ELEM(probes)];
        struct probe_task t[SRV_TASKS];
        char *big;                      /* a path longer than any message */
        struct probe_plan big_plan;
        struct probe_res big_res;
};

static const struct slots_ident nobody_id = { .uid = NOBODY, .gid = NOBODY };

/* Task i: the probes table as nobody; every 7th has no account; the last is too large for a message. */
static void srv_tasks(struct srv_run *x, size_t msg_max)
{
        memset(x, 0, sizeof(*x));
        for (size_t i = 0; i < N_ELEM(probes); i++) {
                snprintf(x->paths[i], sizeof(x->paths[i]), "%s/%s", dir, probes[i].name);
                assert_int_equal(check_plan_add(&x->plan, x->paths[i], probes[i].op), 0);
        }
        for (size_t i = 0; i < SRV_TASKS; i++)
                x->t[i] = (struct probe_task) { .id = i % 7 == 3 ? NULL : &nobody_id, .plan = &x->plan,
                                                .res = x->res[i], .r = -9999 };
        x->big = malloc(msg_max + 2);
        assert_non_null(x->big);
        memset(x->big, 'a', msg_max + 1);
        x->big[0] = '/';
        x->big[msg_max + 1] = '\0';
        assert_int_equal(check_plan_add(&x->big_plan, x->big, PROBE_LIST), 0);
        x->t[SRV_TASKS - 1].plan = &x->big_plan;
        x->t[SRV_TASKS - 1].res = &x->big_res;
}

static void srv_free(struct srv_run *x)
{
        free(x->plan.paths);
        free(x->plan.ops);
        free(x->big_plan.paths);
        free(x->big_plan.ops);
        free(x->big);
}

static int srv_check(const struct srv_run *x)
{
        int failures = 0;

        for (size_t i = 0; i < SRV_TASKS - 1; i++) {
                if (!x->t[i].id) {
                        if (x->t[i].r != -9999)
                                ROW_FAIL("task %zu without an account: r %d, want it untouched", i, x->t[i].r);
                        continue;
                }
                if (x->t[i].r != 0)
                        ROW_FAIL("task %zu: r %d, want 0", i, x->t[i].r);
                for (size_t j = 0; j < N_ELEM(probes); j++)
                        if (x->res[i][j].got != (probes[j].got | GOT_DONE) || x->res[i][j].err != probes[j].err)
                                ROW_FAIL("task %zu, %s op %d: got %#x err %d, want %#x err %d", i, probes[j].name,
                                         (int) probes[j].op, x->res[i][j].got, x->res[i][j].err,
                                         probes[j].got | GOT_DONE, probes[j].err);
        }
        /* Run by the caller: the name is too long for the kernel, and the probe says so. */
        if (x->t[SRV_TASKS - 1].r != 0 || x->big_res.got != GOT_DONE || x->big_res.err != ENAMETOOLONG)
                ROW_FAIL("the large task: r %d got %#x err %d, want 0, %#x, ENAMETOOLONG", x->t[SRV_TASKS - 1].r,
                         x->big_res.got, x->big_res.err, GOT_DONE);
        return failures;
}

static void test_server(void **state)
{
        static const unsigned widths[] = { 0, 1, 4 };
        struct srv_run *x = malloc(sizeof(*x));
        int failures = 0;

        (void) state;
        assert_non_null(x);
        if (geteuid() != 0) {
                free(x);
                print_message("skipped: the probes drop to nobody (needs root)\n");
                skip();
        }
        for (size_t w = 0; w < N_ELEM(widths); w++) {
                struct probe_server s;

                assert_int_equal(check_probe_server_start(&s, widths[w]), 0);
                assert_true(s.c.pid > 0 && s.msg_max > 4096);
                srv_tasks(x, s.msg_max);
                assert_int_equal(check_probe_server_run(&s, x->t, SRV_TASKS, 10000), 0);
                failures += srv_check(x);
                /* A second batch through the same server. */
                srv_free(x);
                srv_tasks(x, s.msg_max);
                assert_int_equal(check_probe_server_run(&s, x->t, SRV_TASKS, 10000), 0);
                failures += srv_check(x);
                check_probe_server_stop(&s);
                assert_int_equal(s.c.pid, 0);
                /* Stopped: nothing runs, the caller is told. */
                assert_int_equal(check_probe_server_run(&s, x->t, SRV_TASKS, 10000), -ESRCH);
                check_probe_server_stop(&s);
                srv_free(x);
        }
        free(x);
        if (failures)
                fail_msg("%d failures", failures);
}

/* A server that is gone: the tasks run in the caller; stuck: they fail (-ETIMEDOUT) and the run returns. */
static void test_server_lost(void **state)
{
        /* A killed server's tasks run again within an ample deadline (valgrind, a loaded host); a stopped one's time out. */
        static const struct {
                int sig;
                int want;
                int deadline_ms;
        } rows[] = { { SIGKILL, 0, 10000 }, { SIGSTOP, -ETIMEDOUT, 200 } };
        struct srv_run *x = malloc(sizeof(*x));
        int failures = 0;

        (void) state;
        assert_non_null(x);
        if (geteuid() != 0) {
                free(x);
                print_message("skipped: the probes drop to nobody (needs root)\n");
                skip();
        }
        for (size_t r = 0; r < N_ELEM(rows); r++) {
                struct probe_server s;
                pid_t pid;

                assert_int_equal(check_probe_server_start(&s, 2), 0);
                pid = s.c.pid;
                srv_tasks(x, s.msg_max);
                assert_int_equal(kill(-pid, rows[r].sig), 0);
                assert_int_equal(check_probe_server_run(&s, x->t, SRV_TASKS, rows[r].deadline_ms), 0);
                if (rows[r].want == 0)
                        failures += srv_check(x);
                for (size_t i = 0; i < SRV_TASKS - 1; i++)
                        if (x->t[i].id && x->t[i].r != rows[r].want)
                                ROW_FAIL("signal %d, task %zu: r %d, want %d", rows[r].sig, i, x->t[i].r, rows[r].want);
                /* Killed and reaped by the run. */
                if (s.c.pid != 0 || kill(pid, 0) == 0)
                        ROW_FAIL("signal %d: the server %d is still there", rows[r].sig, (int) pid);
                check_probe_server_stop(&s);
                srv_free(x);
        }
        free(x);
        if (failures)
                fail_msg("%d failures", failures);
}

/* The account's kill(-1) loop while its probes run through the server: the lanes and probes keep uid 0 as real uid. */
static void test_server_kill_loop(void **state)
{
        struct srv_run *x = malloc(sizeof(*x));
        struct probe_server s;
        int failures = 0, st;
        pid_t killer;

        (void) state;
        assert_non_null(x);
        if (geteuid() != 0) {
                free(x);
                print_message("skipped: the probes drop to nobody (needs root)\n");
                skip();
        }
        assert_int_equal(check_probe_server_start(&s, 4), 0);
        killer = fork();
        assert_true(killer >= 0);
        if (killer == 0) {
                if (setgid(NOBODY) < 0 || setuid(NOBODY) < 0)
                        _exit(1);
                for (;;)
                        (void) kill(-1, SIGKILL);
        }
        for (int round = 0; round < 5; round++) {
                srv_tasks(x, s.msg_max);
                assert_int_equal(check_probe_server_run(&s, x->t, SRV_TASKS, 10000), 0);
                failures += srv_check(x);
                srv_free(x);
        }
        assert_true(s.c.pid > 0);
        check_probe_server_stop(&s);
        kill(killer, SIGKILL);
        assert_int_equal(waitpid(killer, &st, 0), killer);
        free(x);
        if (failures)
                fail_msg("%d failures", failures);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
                cmocka_unit_test_setup_teardown(test_probes, setup, teardown),
                cmocka_unit_test(test_run_as_self),
                cmocka_unit_test(test_failure_words),
                cmocka_unit_test(test_pool_order),
                cmocka_unit_test(test_pool_deadline),
                cmocka_unit_test_setup_teardown(test_server, setup, teardown),
                cmocka_unit_test_setup_teardown(test_server_lost, setup, teardown),
                cmocka_unit_test_setup_teardown(test_server_kill_loop, setup, teardown),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
