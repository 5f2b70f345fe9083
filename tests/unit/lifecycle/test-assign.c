/*
 * Assign's decision table (slots-admin(8) "assign"): for a table, a user and the
 * slot asked for, the verdict and the slot it is about; the refusal each verdict
 * prints, with its fix; and slots_assign's sequence: no change and both locks
 * free after a repeat or a refusal, and a held slot lock waited for without the
 * table lock.
 */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <signal.h>
#include <stdbool.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "assign.h"
#include "fsutil.h"
#include "release.h"
#include "unit.h"

#define TBL(entries) "{\"version\": 1, \"slots\": {" entries "}}"

/* Pool of 3: slot01 held by alice, slot02 pending, slot03 free -- unless the row brings its own. */
#define WORLD TBL("\"slot01\": {\"user\": \"alice\"}, \"slot02\": {\"cleanup\": \"pending\"}")
#define FULL_WORLD TBL("\"slot01\": {\"user\": \"alice\"}, \"slot02\": {\"cleanup\": \"pending\"}, " \
                       "\"slot03\": {\"user\": \"carol\"}")

static const struct {
        const char *what;
        const char *table;
        const char *user;
        unsigned want;                  /* 0: the lowest free slot */
        enum slots_assign_verdict verdict;
        unsigned slot;
} rows[] = {
        { "a new user gets the lowest free slot", WORLD, "bob", 0, SLOTS_ASSIGN_GIVE, 3 },
        { "a new user gets the free slot asked for", WORLD, "bob", 3, SLOTS_ASSIGN_GIVE, 3 },
        { "the empty table: slot01", TBL(""), "bob", 0, SLOTS_ASSIGN_GIVE, 1 },
        { "the same user again, no slot asked", WORLD, "alice", 0, SLOTS_ASSIGN_AGAIN, 1 },
        { "the same user again, her slot asked", WORLD, "alice", 1, SLOTS_ASSIGN_AGAIN, 1 },
        { "the user holds another slot", WORLD, "alice", 3, SLOTS_ASSIGN_HELD_ELSEWHERE, 1 },
        { "held elsewhere comes before out of pool", WORLD, "alice", 9, SLOTS_ASSIGN_HELD_ELSEWHERE, 1 },
        { "a slot outside the pool", WORLD, "bob", 4, SLOTS_ASSIGN_OUT_OF_POOL, 4 },
        { "slot9999 outside the pool", WORLD, "bob", 9999, SLOTS_ASSIGN_OUT_OF_POOL, 9999 },
        { "every slot held or pending", FULL_WORLD, "bob", 0, SLOTS_ASSIGN_FULL, 0 },
        { "a slot held by another user", WORLD, "bob", 1, SLOTS_ASSIGN_TAKEN, 1 },
        { "a pending slot", WORLD, "bob", 2, SLOTS_ASSIGN_PENDING, 2 },
        { "a pending slot is never the lowest free", TBL("\"slot01\": {\"cleanup\": \"pending\"}"), "bob", 0,
          SLOTS_ASSIGN_GIVE, 2 },
        { "full, yet the holder gets hers again", FULL_WORLD, "carol", 0, SLOTS_ASSIGN_AGAIN, 3 },
};

static void test_choose(void **state)
{
        int failures = 0;

        (void) state;
        for (size_t i = 0; i < N_ELEM(rows); i++) {
                struct slots_table *t = NULL;
                struct slots_error e;
                enum slots_assign_verdict v;
                unsigned n = 12345;

                slots_error_clear(&e);
                if (slots_table_parse(rows[i].table, strlen(rows[i].table), "slots.json", 3, &t, &e) != 0) {
                        ROW_FAIL("%s: the table does not parse: %s", rows[i].what, e.reason);
                        continue;
                }
                v = slots_assign_choose(t, 3, rows[i].user, rows[i].want, &n);
                if (v != rows[i].verdict || n != rows[i].slot)
                        ROW_FAIL("%s: verdict %d about slot %u, expected %d about slot %u", rows[i].what, (int) v, n,
                                 (int) rows[i].verdict, rows[i].slot);
                slots_table_free(t);
        }
        if (failures)
                fail_msg("%d of %zu rows failed", failures, N_ELEM(rows));
}

/* Each refusal: refused (exit 1), names the table, and says what to do. */
static const struct {
        enum slots_assign_verdict verdict;
        unsigned slot;
        const char *reason;
        const char *fix;
} refusals[] = {
        { SLOTS_ASSIGN_HELD_ELSEWHERE, 1, "the user already holds slot01",
          "release it first: slots-admin release --slot slot01" },
        { SLOTS_ASSIGN_OUT_OF_POOL, 4, "slot04 is outside the pool of 3 slots",
          "choose slot01 to slot03, or raise \"slots\" in /etc/slots/slots.conf and run slots-provision" },
        { SLOTS_ASSIGN_FULL, 0, "the pool is full: all 3 slots are held or pending",
          "release a slot, or raise \"slots\" in /etc/slots/slots.conf and run slots-provision" },
        { SLOTS_ASSIGN_TAKEN, 1, "the slot is held by another user",
          "release it first: slots-admin release --slot slot01" },
        { SLOTS_ASSIGN_PENDING, 2, "the slot's last release did not finish (cleanup pending)",
          "finish the release: slots-admin release --slot slot02" },
};

static void test_refusal(void **state)
{
        struct slots_config c = { .path = (char *) "/etc/slots/slots.conf", .table = (char *) "/t/slots.json",
                                  .slots = 3 };
        struct slots_error e;
        int failures = 0;

        (void) state;
        for (size_t i = 0; i < N_ELEM(refusals); i++) {
                slots_error_clear(&e);
                if (slots_assign_refusal(refusals[i].verdict, refusals[i].slot, &c, &e) != -EPERM)
                        ROW_FAIL("verdict %d: not refused", (int) refusals[i].verdict);
                else if (e.kind != SLOTS_ERR_REFUSED || strcmp(e.object, "/t/slots.json") != 0)
                        ROW_FAIL("verdict %d: kind %d about \"%s\"", (int) refusals[i].verdict, (int) e.kind,
                                 e.object);
                else if (strcmp(e.reason, refusals[i].reason) != 0 || strcmp(e.fix, refusals[i].fix) != 0)
                        ROW_FAIL("verdict %d: \"%s\" / \"%s\"", (int) refusals[i].verdict, e.reason, e.fix);
        }
        for (enum slots_assign_verdict v = SLOTS_ASSIGN_GIVE; v <= SLOTS_ASSIGN_AGAIN; v++)
                if (slots_assign_refusal(v, 1, &c, &e) != 0)
                        ROW_FAIL("verdict %d is not a refusal", (int) v);
        if (failures)
                fail_msg("%d refusals wrong", failures);
}

/* ---- slots_assign: the sequence, on a table in a scratch folder (no docs_root: no tree) ---- */

static const char seq_table[] =
        "{\"version\": 1, \"slots\": {\"slot01\": {\"user\": \"alice\", \"since\": \"2026-10-01T09:12:00Z\"}, "
        "\"slot02\": {\"cleanup\": \"pending\", \"released\": \"2026-10-02T10:00:00Z\"}}}\n";

struct seq {
        char dir[64], table[96], lock[104];
        struct slots_config *cfg;
        struct slots_table_policy policy;
};

static void seq_setup(struct seq *q)
{
        char conf[256];
        struct slots_error e;
        FILE *f;

        snprintf(q->dir, sizeof(q->dir), "/tmp/test-assign.XXXXXX");
        assert_non_null(mkdtemp(q->dir));
        snprintf(q->table, sizeof(q->table), "%s/slots.json", q->dir);
        snprintf(q->lock, sizeof(q->lock), "%s.lock", q->table);
        f = fopen(q->table, "w");
        assert_non_null(f);
        fputs(seq_table, f);
        assert_int_equal(fclose(f), 0);
        snprintf(conf, sizeof(conf), "{\"service\": \"svc\", \"slots\": 3, \"table\": \"%s\"}", q->table);
        slots_error_clear(&e);
        if (slots_config_parse(conf, strlen(conf), "test.conf", &q->cfg, &e) < 0)
                fail_msg("config: %s", e.reason);
        q->policy = (struct slots_table_policy){ .group = getgid(), .group_name = "svc" };
}

static void seq_teardown(struct seq *q)
{
        unlink(q->lock);
        unlink(q->table);
        rmdir(q->dir);
        slots_config_free(q->cfg);
}

/* The table lock is free: another open of the lock file gets it at once. */
static bool table_lock_free(const struct seq *q)
{
        int fd = open(q->lock, O_RDONLY | O_CLOEXEC);
        bool free_ = fd >= 0 && flock(fd, LOCK_EX | LOCK_NB) == 0;

        if (fd >= 0)
                close(fd);
        return free_;
}

static char *read_all(const char *path)
{
        static char buf[4096];
        FILE *f = fopen(path, "r");
        size_t n;

        assert_non_null(f);
        n = fread(buf, 1, sizeof(buf) - 1, f);
        buf[n] = '\0';
        fclose(f);
        return buf;
}

/*
 * The same assignment again is done (changed false), each refusal is refused with the
 * table byte for byte as it was, and after every one both the table lock and the slot's
 * own lock are free again.
 */
static void test_assign_sequence(void **state)
{
        static const struct {
                const char *user;
                unsigned want;
                int r;
                enum slots_assign_verdict verdict;
                unsigned slot;
        } seq_rows[] = {
                { "alice", 0, 0, SLOTS_ASSIGN_AGAIN, 1 },
                { "alice", 1, 0, SLOTS_ASSIGN_AGAIN, 1 },
                { "bob", 1, -EPERM, SLOTS_ASSIGN_TAKEN, 1 },
                { "bob", 2, -EPERM, SLOTS_ASSIGN_PENDING, 2 },
                { "bob", 5, -EPERM, SLOTS_ASSIGN_OUT_OF_POOL, 5 },
                { "alice", 3, -EPERM, SLOTS_ASSIGN_HELD_ELSEWHERE, 1 },
        };
        struct seq q;

        (void) state;
        seq_setup(&q);
        for (size_t i = 0; i < sizeof(seq_rows) / sizeof(seq_rows[0]); i++) {
                struct slots_assign_report rep = { 0 };
                struct slots_error e;
                const char *name;
                int dfd, lk;

                print_message("row %zu: %s %u\n", i, seq_rows[i].user, seq_rows[i].want);
                slots_error_clear(&e);
                assert_int_equal(slots_assign(q.cfg, &q.policy, seq_rows[i].user, seq_rows[i].want, &rep, &e), seq_rows[i].r);
                assert_int_equal(rep.verdict, seq_rows[i].verdict);
                assert_int_equal(rep.slot, seq_rows[i].slot);
                assert_false(rep.changed);
                assert_false(rep.tree_prepared);
                if (seq_rows[i].r < 0)
                        assert_int_equal(e.kind, SLOTS_ERR_REFUSED);
                assert_string_equal(read_all(q.table), seq_table);
                assert_true(table_lock_free(&q));
                dfd = slots_open_parent_in(AT_FDCWD, q.table, &name);
                assert_true(dfd >= 0);
                lk = slots_release_lock(dfd, name, 1, false, &e);
                assert_true(lk >= 0);
                close(lk);
                close(dfd);
        }
        seq_teardown(&q);
}

/*
 * A held slot lock (a release of the slot, or another assign of its user walking the
 * tree) is waited for without the table lock: while assign waits, the table lock is free;
 * once the slot lock is let go, assign ends.  The wait is seen in the child's syscall (an
 * fcntl lock), not timed.
 */
static void test_assign_waits_without_table_lock(void **state)
{
        struct slots_error e;
        const char *name;
        char path[64], line[128];
        bool waiting = false;
        struct seq q;
        int dfd, lk, status;
        pid_t pid;

        (void) state;
        seq_setup(&q);
        dfd = slots_open_parent_in(AT_FDCWD, q.table, &name);
        assert_true(dfd >= 0);
        lk = slots_release_lock(dfd, name, 1, false, &e);
        assert_true(lk >= 0);
        pid = fork();
        assert_true(pid >= 0);
        if (pid == 0) {
                struct slots_assign_report rep = { 0 };

                /* The lock belongs to the open file description, which fork shares: not the child's. */
                close(lk);
                _exit(slots_assign(q.cfg, &q.policy, "alice", 0, &rep, &e) == 0 && rep.slot == 1 ? 0 : 1);
        }
        snprintf(path, sizeof(path), "/proc/%d/syscall", (int) pid);
        for (int i = 0; i < 20000 && !waiting; i++) {
                FILE *f = fopen(path, "r");

                if (f && fgets(line, sizeof(line), f))
                        waiting = strncmp(line, "72 ", 3) == 0;     /* fcntl: F_OFD_SETLKW */
                if (f)
                        fclose(f);
                if (!waiting)
                        usleep(1000);
        }
        if (!waiting) {
                kill(pid, SIGKILL);
                waitpid(pid, &status, 0);
                close(lk);
                close(dfd);
                seq_teardown(&q);
                print_message("skipped: the child's syscall cannot be read from /proc\n");
                skip();
        }
        assert_true(table_lock_free(&q));
        close(lk);
        assert_int_equal(waitpid(pid, &status, 0), pid);
        assert_true(WIFEXITED(status));
        assert_int_equal(WEXITSTATUS(status), 0);
        close(dfd);
        seq_teardown(&q);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_choose),
                cmocka_unit_test(test_refusal),
                cmocka_unit_test(test_assign_sequence),
                cmocka_unit_test(test_assign_waits_without_table_lock),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
