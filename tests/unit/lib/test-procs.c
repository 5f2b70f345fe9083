/*
 * Which processes release ends (procs.c): /proc/PID/status texts as a table of what each
 * carries of slot 4711's identity (uid 4711, group 4711) and whether the account is said to
 * own it; a live process of each identity found by one look; root refused.
 */
#include <errno.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <grp.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#ifndef SYS_pidfd_open
#define SYS_pidfd_open 434
#endif

#include "procs.h"
#include "unit.h"

#define UID 4711
#define GID 4711

#define ST(state, uids, gids, groups) "Name:\tx\nState:\t" state "\nUid:\t" uids "\nGid:\t" gids "\nGroups:\t" \
                                      groups "\nThreads:\t1\n"
#define OTHER "4712\t4712\t4712\t4712"

static const struct {
        const char *what, *status;
        int parse;
        bool signallable, of, dead, held;
} rows[] = {
        { "all four uids the slot's", ST("S (sleeping)", "4711\t4711\t4711\t4711", "4711\t4711\t4711\t4711", "4711"),
          0, true, true, false, false },
        { "a setuid-root program the slot started",
          ST("R (running)", "4711\t0\t0\t0", "4711\t4711\t4711\t4711", ""), 0, true, true, false, false },
        { "a root daemon acting as the slot: a survivor, never signalled",
          ST("S (sleeping)", "0\t4711\t0\t4711", "0\t0\t0\t0", ""), 0, false, true, false, false },
        { "saved uid only", ST("S (sleeping)", "0\t0\t4711\t0", "0\t0\t0\t0", ""), 0, true, true, false, false },
        { "another account", ST("R (running)", OTHER, OTHER, "4712 27"), 0, false, false, false, false },
        /* the group: a set-gid program of the slot's group run by another slot */
        { "effective gid the slot's", ST("S (sleeping)", OTHER, "4712\t4711\t4711\t4711", "4712"), 0, true, true,
          false, false },
        { "saved gid only", ST("S (sleeping)", OTHER, "4712\t4712\t4711\t4712", "4712"), 0, true, true, false,
          false },
        { "real gid only", ST("S (sleeping)", OTHER, "4711\t4712\t4712\t4712", ""), 0, true, true, false, false },
        { "file-system gid only", ST("S (sleeping)", OTHER, "4712\t4712\t4712\t4711", ""), 0, true, true, false,
          false },
        { "a supplementary group, last of several", ST("S (sleeping)", OTHER, OTHER, "4712 100 4711"), 0, true, true,
          false, false },
        { "a supplementary group, first", ST("S (sleeping)", OTHER, OTHER, "4711 100 "), 0, true, true, false,
          false },
        { "a group that only starts like the slot's", ST("S (sleeping)", OTHER, OTHER, "47110 471 14711"), 0, false,
          false, false, false },
        { "root in the slot's groups (the parent runuser keeps): not the slot's",
          ST("S (sleeping)", "0\t0\t0\t0", "4711\t4711\t4711\t4711", "4711"), 0, false, false, false, false },
        { "root's effective uid with the slot's group: not the slot's",
          ST("S (sleeping)", "4712\t0\t4712\t4712", "4711\t4711\t4711\t4711", ""), 0, false, false, false,
          false },
        { "root's file-system uid with the slot's group: not the slot's",
          ST("S (sleeping)", "4712\t4712\t4712\t0", "4712\t4711\t4712\t4712", ""), 0, false, false, false,
          false },
        /* how it runs */
        { "stopped", ST("T (stopped)", "4711\t4711\t4711\t4711", OTHER, ""), 0, true, true, false, true },
        { "traced", ST("t (tracing stop)", "4711\t4711\t4711\t4711", OTHER, ""), 0, true, true, false, true },
        { "in uninterruptible sleep", ST("D (disk sleep)", OTHER, "4711\t4711\t4711\t4711", ""), 0, true, true,
          false, true },
        { "a zombie", "Name:\tz\nState:\tZ (zombie)\nUid:\t4711\t4711\t4711\t4711\nGid:\t1\t1\t1\t1\nThreads:\t1\n", 0,
          true, true, true, true },
        { "a zombie leader whose threads run",
          "Name:\tz\nState:\tZ (zombie)\nUid:\t4711\t4711\t4711\t4711\nGid:\t1\t1\t1\t1\nThreads:\t3\n", 0, true,
          true, false, false },
        /* refused */
        { "no Uid line", "Name:\tq\nState:\tS (sleeping)\nGid:\t1\t1\t1\t1\n", -EBADMSG, false, false, false, false },
        { "no State line", "Name:\tq\nUid:\t1\t1\t1\t1\nGid:\t1\t1\t1\t1\n", -EBADMSG, false, false, false, false },
        { "no Gid line", "Name:\tq\nState:\tS (sleeping)\nUid:\t1\t1\t1\t1\n", -EBADMSG, false, false, false, false },
        { "three uids", ST("S (sleeping)", "1\t1\t1", "1\t1\t1\t1", ""), -EBADMSG, false, false, false, false },
};

static void test_parse(void **state)
{
        int failures = 0;

        (void) state;
        for (size_t i = 0; i < N_ELEM(rows); i++) {
                struct slots_proc p = { 0 };
                int r = slots_proc_parse(rows[i].status, GID, &p);

                if (r != rows[i].parse) {
                        ROW_FAIL("%s: parse %d, expected %d", rows[i].what, r, rows[i].parse);
                        continue;
                }
                if (r < 0)
                        continue;
                if (slots_proc_signallable(&p, UID, GID) != rows[i].signallable || slots_proc_of(&p, UID, GID) !=
                    rows[i].of || slots_proc_dead(&p) != rows[i].dead || slots_proc_held(&p) != rows[i].held)
                        ROW_FAIL("%s: signallable %d of %d dead %d held %d", rows[i].what,
                                 slots_proc_signallable(&p, UID, GID), slots_proc_of(&p, UID, GID),
                                 slots_proc_dead(&p), slots_proc_held(&p));
        }
        if (failures)
                fail_msg("%d of %zu rows failed", failures, N_ELEM(rows));
}

/* A user namespace the account owns makes any uid in it the account's. */
static void test_userns(void **state)
{
        struct slots_proc p = { 0 };

        (void) state;
        assert_int_equal(slots_proc_parse(ST("S (sleeping)", "200999\t200999\t200999\t200999",
                                             "200999\t200999\t200999\t200999", ""), GID, &p), 0);
        assert_false(slots_proc_of(&p, UID, GID));
        p.userns = true;
        assert_true(slots_proc_of(&p, UID, GID));
        assert_true(slots_proc_signallable(&p, UID, GID));
}

/* A Groups line far longer than one read: the group at its end is still seen. */
static void test_long_groups(void **state)
{
        size_t n = 70000 * 8 + 256;
        char *text = malloc(n), *w = text;
        struct slots_proc p = { 0 };

        (void) state;
        assert_non_null(text);
        w += sprintf(w, "Name:\tx\nState:\tS\nUid:\t1\t1\t1\t1\nGid:\t1\t1\t1\t1\nGroups:\t");
        for (int g = 100000; g < 165535; g++)
                w += sprintf(w, "%d ", g);
        sprintf(w, "4711\n");
        assert_int_equal(slots_proc_parse(text, GID, &p), 0);
        assert_true(p.in_group);
        free(text);
}

/* One look finds a live child of each identity it carries; root and gid 0 are refused. */
static void test_find(void **state)
{
        struct slots_procs_report rep;
        struct slots_error e;
        pid_t child;

        (void) state;
        assert_int_equal(slots_end_processes(0, 4711, 1000, &rep, &e), -EINVAL);
        assert_int_equal(slots_end_processes(4711, 0, 1000, &rep, &e), -EINVAL);
        /* An identity that runs nothing: done at once, nothing signalled. */
        assert_int_equal(slots_end_processes(3999999, 3999999, 1000, &rep, &e), 0);
        assert_int_equal(rep.stopped + rep.killed, 0);
        assert_int_equal(slots_find_processes(3999999, 3999999, SLOTS_FIND_ANY, &rep, &e), 0);
        assert_int_equal(rep.survivors, 0);
        /* Processes are looked at through pidfds: without pidfd_open (valgrind has none) nothing is seen. */
        int probe = (int) syscall(SYS_pidfd_open, getpid(), 0);

        if (probe < 0) {
                print_message("skipped: pidfd_open fails here (%s): no process can be looked at\n", strerror(errno));
                skip();
                return;
        }
        close(probe);
        /* A child of uid U and group G (as root: 4711; else this test's own): found by either. */
        uid_t u = geteuid() == 0 ? 4711 : getuid();
        gid_t g = geteuid() == 0 ? 4711 : getgid();
        int ready[2];
        char c;

        assert_int_equal(pipe(ready), 0);
        child = fork();
        assert_true(child >= 0);
        if (child == 0) {
                if (geteuid() == 0 && (setgroups(0, NULL) < 0 || setresgid(g, g, g) < 0 || setresuid(u, u, u) < 0))
                        _exit(1);
                /* Set after the uid change, which clears it: the child never outlives the test. */
                if (prctl(PR_SET_PDEATHSIG, SIGKILL) < 0 || getppid() == 1)
                        _exit(1);
                if (write(ready[1], "x", 1) != 1)
                        _exit(1);
                pause();
                _exit(0);
        }
        close(ready[1]);
        if (read(ready[0], &c, 1) != 1) {
                close(ready[0]);
                kill(child, SIGKILL);
                waitpid(child, NULL, 0);
                fail_msg("the child did not start as %u:%u", (unsigned) u, (unsigned) g);
        }
        close(ready[0]);
        /* Every look first, the child ended after: a failed assertion never leaves it behind. */
        struct slots_procs_report by_uid, uid_borrowed, by_gid, gid_borrowed, ended = { 0 };
        int r_uid = slots_find_processes(u, 3999999, SLOTS_FIND_ANY, &by_uid, &e);
        int r_ub = slots_find_processes(u, g, SLOTS_FIND_BORROWED, &uid_borrowed, &e);
        int r_gid = slots_find_processes(3999999, g, SLOTS_FIND_ANY, &by_gid, &e);
        int r_gb = slots_find_processes(3999999, g, SLOTS_FIND_BORROWED, &gid_borrowed, &e);
        /* The snapshot check takes once answers the same from memory. */
        struct slots_proc_table *t = NULL;
        struct slots_procs_report snap_gid = { 0 }, snap_none = { 0 };
        int r_snap = slots_procs_snapshot(&t, &e);

        if (r_snap == 0) {
                slots_procs_table_find(t, 3999999, g, SLOTS_FIND_BORROWED, &snap_gid);
                slots_procs_table_find(t, 3999999, 3999999, SLOTS_FIND_ANY, &snap_none);
                slots_procs_table_free(t);
        }
        /* As root, ended by its group alone: it is signalled, and gone. */
        int r_end = geteuid() == 0 ? slots_end_processes(3999999, g, 2000, &ended, &e) : 0;
        pid_t reaped = waitpid(child, NULL, WNOHANG);

        if (reaped == 0) {
                kill(child, SIGKILL);
                waitpid(child, NULL, 0);
        }
        assert_int_equal(r_uid, 0);
        assert_true(by_uid.survivors >= 1);
        /* Through its uid: not borrowed (as root, no other process has group 4711). */
        assert_int_equal(r_ub, 0);
        if (geteuid() == 0)
                assert_int_equal(uid_borrowed.survivors, 0);
        assert_int_equal(r_gid, 0);
        assert_true(by_gid.survivors >= 1);
        /* Through its group alone: borrowed. */
        assert_int_equal(r_gb, 0);
        assert_true(gid_borrowed.survivors >= 1);
        assert_int_equal(r_snap, 0);
        assert_true(snap_gid.survivors >= 1);
        assert_int_equal(snap_none.survivors, 0);
        if (geteuid() == 0) {
                /* Group 4711 runs the child alone; this test's own group runs others that come and go. */
                assert_int_equal(snap_gid.survivors, gid_borrowed.survivors);
                assert_int_equal(snap_gid.shown[0].pid, child);
                assert_int_equal(by_gid.survivors, 1);
                assert_int_equal(by_gid.shown[0].pid, child);
                assert_int_equal(r_end, 0);
                assert_int_equal(ended.killed + ended.stopped > 0, 1);
        }
}

/* A child of uid 4711, with no_new_privs when nnp; its pid, or -1. */
static pid_t start_child(bool nnp, int ready[2])
{
        pid_t child;
        char c;

        if (pipe(ready) < 0 || (child = fork()) < 0)
                return -1;
        if (child == 0) {
                if (setgroups(0, NULL) < 0 || setresgid(4711, 4711, 4711) < 0 || setresuid(4711, 4711, 4711) < 0 ||
                    prctl(PR_SET_PDEATHSIG, SIGKILL) < 0 || getppid() == 1 ||
                    (nnp && prctl(PR_SET_NO_NEW_PRIVS, 1L, 0L, 0L, 0L) < 0) || write(ready[1], "x", 1) != 1)
                        _exit(1);
                pause();
                _exit(0);
        }
        close(ready[1]);
        if (read(ready[0], &c, 1) != 1) {
                kill(child, SIGKILL);
                waitpid(child, NULL, 0);
                child = -1;
        }
        close(ready[0]);
        return child;
}

/* SLOTS_FIND_NO_NNP: of the account's processes, exactly those without no_new_privs (check's account row). */
static void test_no_nnp(void **state)
{
        struct slots_proc_table *t = NULL;
        struct slots_procs_report rep = { 0 };
        struct slots_proc p = { 0 };
        struct slots_error e;
        int ready[2], r;
        pid_t with, without;

        (void) state;
        assert_int_equal(slots_proc_parse("State:\tS\nUid:\t1 1 1 1\nGid:\t1 1 1 1\nNoNewPrivs:\t1\n", GID, &p), 0);
        assert_int_equal(p.nnp, 1);
        assert_int_equal(slots_proc_parse("State:\tS\nUid:\t1 1 1 1\nGid:\t1 1 1 1\nNoNewPrivs:\t0\n", GID, &p), 0);
        assert_int_equal(p.nnp, 0);
        assert_int_equal(slots_proc_parse("State:\tS\nUid:\t1 1 1 1\nGid:\t1 1 1 1\n", GID, &p), 0);
        assert_int_equal(p.nnp, -1);
        if (geteuid() != 0) {
                print_message("skipped: needs root (children of another uid)\n");
                skip();
                return;
        }
        with = start_child(true, ready);
        without = start_child(false, ready);
        r = with > 0 && without > 0 ? slots_procs_snapshot(&t, &e) : -1;
        if (r == 0) {
                slots_procs_table_find(t, 4711, 4711, SLOTS_FIND_NO_NNP, &rep);
                slots_procs_table_free(t);
        }
        for (int i = 0; i < 2; i++)
                if ((i ? with : without) > 0) {
                        kill(i ? with : without, SIGKILL);
                        waitpid(i ? with : without, NULL, 0);
                }
        assert_int_equal(r, 0);
        assert_int_equal(rep.survivors, 1);
        assert_int_equal(rep.shown[0].pid, without);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_parse),
                cmocka_unit_test(test_userns),
                cmocka_unit_test(test_long_groups),
                cmocka_unit_test(test_find),
                cmocka_unit_test(test_no_nnp),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
