/*
 * child.c as a table of what the child does and what the parent sees: its status clamped to
 * 0..125, a signal as -ECHILD, a child past its deadline killed and -ETIMEDOUT (its process
 * group too with SLOTS_CHILD_GROUP), no deadline as no limit; and slots_child_poll,
 * slots_child_left_ms as a pool and a pipe reader use them; slots_child_block sleeps until an
 * event (a child's end, the nearest deadline), never in short rounds; a pidfd of any process;
 * slots_run_program's status and output.
 */
#include <errno.h>
#include <setjmp.h>
#include <signal.h>
#include <stdbool.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <poll.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>

#include "child.h"
#include "unit.h"

static long now_ms(void)
{
        struct timespec ts;

        clock_gettime(CLOCK_MONOTONIC, &ts);
        return ts.tv_sec * 1000L + ts.tv_nsec / 1000000L;
}

/* What a child does: return a value, die by a signal, or sleep ms then return value. */
struct act {
        enum { RETURN, SIGNAL, SLEEP } what;
        int value, ms;
};

static int act(void *arg)
{
        const struct act *a = arg;

        if (a->what == SIGNAL)
                raise(SIGKILL);
        if (a->what == SLEEP)
                (void) usleep((useconds_t) a->ms * 1000);
        return a->value;
}

/* Gone, or a zombie nobody reaped yet (a container's PID 1 may never reap). */
static bool gone(pid_t pid)
{
        char path[64], state = '?';
        FILE *f;

        if (kill(pid, 0) < 0 && errno == ESRCH)
                return true;
        snprintf(path, sizeof(path), "/proc/%ld/stat", (long) pid);
        f = fopen(path, "r");
        if (!f)
                return true;
        if (fscanf(f, "%*d (%*[^)]) %c", &state) != 1)
                state = '?';
        fclose(f);
        return state == 'Z' || state == 'X';
}

/* Leaves a grandchild in the child's process group, its pid in *arg (shared memory), then hangs. */
static int leave_grandchild(void *arg)
{
        pid_t *pid = arg, g = fork();

        if (g == 0) {
                sleep(30);
                _exit(0);
        }
        *pid = g;
        sleep(30);
        return 0;
}

static void run_table(void **state)
{
        static const struct {
                const char *what;
                struct act act;
                int timeout_ms;
                int want;
                long max_ms;            /* how long the run may take at most */
        } rows[] = {
                { "0", { RETURN, 0, 0 }, 5000, 0, 4000 },
                { "7", { RETURN, 7, 0 }, 5000, 7, 4000 },
                { "125", { RETURN, 125, 0 }, 5000, 125, 4000 },
                { "126 is clamped", { RETURN, 126, 0 }, 5000, 125, 4000 },
                { "a negative result", { RETURN, -EPERM, 0 }, 5000, 125, 4000 },
                { "no deadline", { RETURN, 3, 0 }, 0, 3, 4000 },
                { "a short wait, no deadline", { SLEEP, 4, 300 }, 0, 4, 4000 },
                { "a short wait within the deadline", { SLEEP, 4, 300 }, 5000, 4, 4000 },
                { "a signal", { SIGNAL, 0, 0 }, 5000, -ECHILD, 4000 },
                { "past the deadline", { SLEEP, 0, 30000 }, 200, -ETIMEDOUT, 4000 },
        };
        int failures = 0;

        (void) state;
        for (size_t i = 0; i < N_ELEM(rows); i++) {
                long t0 = now_ms(), took;
                int r = slots_child_run(act, (void *) &rows[i].act, rows[i].timeout_ms, 0);

                took = now_ms() - t0;
                if (r != rows[i].want || took > rows[i].max_ms)
                        ROW_FAIL("%s: %d after %ld ms, want %d within %ld ms", rows[i].what, r, took, rows[i].want,
                                 rows[i].max_ms);
        }
        if (failures)
                fail_msg("%d rows failed", failures);
}

/* With SLOTS_CHILD_GROUP what the child started goes with it at the deadline; without, it stays. */
static void group_killed(void **state)
{
        pid_t *grandchild = mmap(NULL, sizeof(pid_t), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);

        (void) state;
        assert_true(grandchild != MAP_FAILED);
        for (int group = 0; group <= 1; group++) {
                bool ended = false;

                *grandchild = 0;
                assert_int_equal(slots_child_run(leave_grandchild, grandchild, 300, group ? SLOTS_CHILD_GROUP : 0),
                                 -ETIMEDOUT);
                assert_true(*grandchild > 0);
                /* A killed grandchild ends at once; one outside the group lives on. */
                for (int i = 0; i < 200 && !ended; i++) {
                        ended = gone(*grandchild);
                        if (!ended)
                                (void) usleep(10 * 1000);
                }
                if (group && !ended)
                        fail_msg("the grandchild %ld outlived its group's deadline", (long) *grandchild);
                if (!group) {
                        assert_false(ended);
                        (void) kill(*grandchild, SIGKILL);
                }
        }
        munmap(grandchild, sizeof(pid_t));
}

/* The parts a pool uses: poll says 0 while it runs, then 1 with the status; left_ms counts down. */
static void poll_and_left(void **state)
{
        struct slots_child c;
        int r, status = -1, looks = 0, left;

        (void) state;
        r = slots_child_start(&c, 5000, 0);
        assert_true(r >= 0);
        if (r == 0)
                slots_child_return(act(&(struct act){ SLEEP, 4, 300 }));
        left = slots_child_left_ms(&c);
        assert_true(left > 4000 && left <= 5000);
        while ((r = slots_child_poll(&c, &status)) == 0) {
                looks++;
                (void) usleep(10 * 1000);
        }
        assert_int_equal(r, 1);
        assert_int_equal(status, 4);
        assert_true(looks > 0);

        r = slots_child_start(&c, 0, 0);
        assert_true(r >= 0);
        if (r == 0)
                slots_child_return(0);
        assert_int_equal(slots_child_left_ms(&c), -1);
        assert_int_equal(slots_child_wait(&c), 0);

        /* Ended on purpose: reaped, so a second wait has no child. */
        r = slots_child_start(&c, 0, 0);
        assert_true(r >= 0);
        if (r == 0)
                slots_child_return(act(&(struct act){ SLEEP, 0, 30000 }));
        slots_child_kill(&c);
        assert_int_equal(slots_child_wait(&c), -ECHILD);
}

/* A new deadline counts from now: a stage's own limit, shorter or longer than the first, or none. */
static void deadline_reset(void **state)
{
        struct slots_child c;
        int r, left;

        (void) state;
        r = slots_child_start(&c, 60000, 0);
        assert_true(r >= 0);
        if (r == 0)
                slots_child_return(act(&(struct act){ SLEEP, 0, 30000 }));
        slots_child_deadline(&c, 200);
        left = slots_child_left_ms(&c);
        assert_true(left >= 0 && left <= 200);
        assert_int_equal(slots_child_wait(&c), -ETIMEDOUT);

        r = slots_child_start(&c, 100, 0);
        assert_true(r >= 0);
        if (r == 0)
                slots_child_return(act(&(struct act){ SLEEP, 5, 500 }));
        slots_child_deadline(&c, 0);
        assert_int_equal(slots_child_left_ms(&c), -1);
        assert_int_equal(slots_child_wait(&c), 5);
}

/*
 * slots_child_block as a table: children that end after ms each (0: never, within the test),
 * the block's own timeout; it returns when the first ends or a deadline passes, not before
 * (a sleep loop would come back within a few ms) and not long after.
 */
static void block_table(void **state)
{
        static const struct {
                const char *what;
                int ms[3];              /* how long each child sleeps (0: no such child) */
                int deadline_ms[3];     /* each one's deadline (0: none) */
                int timeout_ms;         /* the block's own (-1: none) */
                long min_ms, max_ms;    /* when the block returns */
        } rows[] = {
                { "one child, its end", { 300 }, { 0 }, -1, 250, 2000 },
                { "one child, its deadline first", { 30000 }, { 300 }, -1, 250, 2000 },
                { "one child, the block's timeout first", { 30000 }, { 0 }, 300, 250, 2000 },
                { "three children, the first end", { 30000, 300, 30000 }, { 0, 0, 0 }, -1, 250, 2000 },
                { "three children, the nearest deadline", { 30000, 30000, 30000 }, { 5000, 300, 0 }, 10000, 250,
                  2000 },
        };
        int failures = 0;

        (void) state;
        for (size_t i = 0; i < N_ELEM(rows); i++) {
                struct slots_child c[3];
                size_t n = 0;
                long t0, took;

                for (; n < 3 && rows[i].ms[n]; n++) {
                        int r = slots_child_start(&c[n], rows[i].deadline_ms[n], 0);

                        assert_true(r >= 0);
                        if (r == 0)
                                slots_child_return(act(&(struct act){ SLEEP, 0, rows[i].ms[n] }));
                        assert_true(c[n].pidfd >= 0);
                }
                t0 = now_ms();
                slots_child_block(c, n, sizeof(c[0]), rows[i].timeout_ms);
                took = now_ms() - t0;
                if (took < rows[i].min_ms || took > rows[i].max_ms)
                        ROW_FAIL("%s: returned after %ld ms, want %ld..%ld", rows[i].what, took, rows[i].min_ms,
                                 rows[i].max_ms);
                for (size_t j = 0; j < n; j++)
                        slots_child_kill(&c[j]);
        }
        if (failures)
                fail_msg("%d rows failed", failures);
}

/* A pidfd of a process that is not our child: signalled through it, readable once it ended. */
static void pidfd_any(void **state)
{
        struct slots_child c;
        pid_t *grandchild = mmap(NULL, sizeof(pid_t), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
        struct pollfd p;
        int fd, r;

        (void) state;
        assert_true(grandchild != MAP_FAILED);
        *grandchild = 0;
        r = slots_child_start(&c, 10000, 0);
        assert_true(r >= 0);
        if (r == 0)
                slots_child_return(leave_grandchild(grandchild));
        for (int i = 0; i < 500 && !*grandchild; i++)
                (void) usleep(10 * 1000);
        assert_true(*grandchild > 0);
        fd = slots_pidfd_open(*grandchild);
        assert_true(fd >= 0);
        p = (struct pollfd){ .fd = fd, .events = POLLIN };
        assert_int_equal(poll(&p, 1, 0), 0);
        assert_int_equal(slots_pidfd_signal(fd, SIGKILL), 0);
        assert_int_equal(poll(&p, 1, 5000), 1);
        close(fd);
        assert_int_equal(slots_pidfd_open(-1), -EINVAL);
        slots_child_kill(&c);
        munmap(grandchild, sizeof(pid_t));
}

/*
 * slots_run_program: the helper's exit status and its output, a helper that cannot be run,
 * one killed by a signal, and the deadline whether the helper keeps its output open or
 * closes it and goes on running.
 */
static void run_program(void **state)
{
        static const struct {
                const char *script;     /* for /bin/sh -c; NULL: a program that does not exist */
                int timeout_ms;
                int want;
                const char *out;
        } rows[] = {
                { "echo hello; exit 3", 5000, 3, "hello\n" },
                { "echo err >&2", 5000, 0, "err\n" },
                { "printf 0123456789abcdef", 5000, 0, "0123456" },     /* cut to the buffer */
                { NULL, 5000, -ENOENT, "" },
                { "kill -9 $$", 5000, -ECHILD, "" },
                { "echo start; sleep 30", 300, -ETIMEDOUT, NULL },
                { "exec >&- 2>&-; sleep 30", 300, -ETIMEDOUT, "" },
        };
        int failures = 0;

        (void) state;
        for (size_t i = 0; i < N_ELEM(rows); i++) {
                const char *const sh[] = { "/bin/sh", "-c", rows[i].script, NULL };
                const char *const none[] = { "/nonexistent/slots-helper", NULL };
                char out[8];
                int r = slots_run_program(rows[i].script ? sh : none, -1, rows[i].timeout_ms, out, sizeof(out));

                if (r != rows[i].want || (rows[i].out && strcmp(out, rows[i].out) != 0))
                        ROW_FAIL("row %zu (%s): %d \"%s\", want %d \"%s\"", i, rows[i].script, r, out,
                                 rows[i].want, rows[i].out ? rows[i].out : "(any)");
        }
        if (failures)
                fail_msg("%d rows failed", failures);
        /* A folder passes access(X_OK); its exec fails, told through the engine's pipe, not a status. */
        assert_int_equal(slots_run_program((const char *const[]){ "/", NULL }, -1, 5000, NULL, 0), -ENOENT);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(run_table),
                cmocka_unit_test(group_killed),
                cmocka_unit_test(poll_and_left),
                cmocka_unit_test(deadline_reset),
                cmocka_unit_test(block_table),
                cmocka_unit_test(pidfd_any),
                cmocka_unit_test(run_program),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
