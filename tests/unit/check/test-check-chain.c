/*
 * The pure parts of check's sudo rows: where the drop-in first differs, who sudo's listing grants
 * what, and the kill probe's reading of /proc (a stat line whose command holds anything, the
 * processes a run started at any depth), and the sudo-env verdict on the command's /proc/self/status.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "check-chain.h"
#include "check-int.h"
#include "check-report.h"
#include "config.h"
#include "unit.h"

/* check_text_first_diff(found, want): the line and column of the first difference, and each text's line there. */
static const struct {
        const char *what, *found, *want;
        bool differs;
        size_t line, column;
        const char *found_line, *want_line;     /* NULL: that text has no such line */
        bool found_nl, want_nl;
} diffs[] = {
        { "the same", "a\nb\n", "a\nb\n", false, 0, 0, NULL, NULL, false, false },
        { "both empty", "", "", false, 0, 0, NULL, NULL, false, false },
        { "a slot missing in line 2", "# x\n(slot01, slot03)\n", "# x\n(slot01, slot02, slot03)\n", true, 2, 15,
          "(slot01, slot03)", "(slot01, slot02, slot03)", true, true },
        { "the first byte", "x\n", "y\n", true, 1, 1, "x", "y", true, true },
        { "the file ends early", "a\n", "a\nb\n", true, 2, 1, NULL, "b", false, true },
        { "the file is longer", "a\nb\nc\n", "a\nb\n", true, 3, 1, "c", NULL, true, false },
        { "empty file", "", "a\n", true, 1, 1, NULL, "a", false, true },
        { "no final newline", "a\nb", "a\nb\n", true, 2, 2, "b", "b", false, true },
        { "a newline too many at the end", "a\n\n", "a\n", true, 2, 1, "", NULL, true, false },
        { "a carriage return", "a\r\nb\n", "a\nb\n", true, 1, 2, "a\r", "a", true, true },
};

static void test_first_diff(void **state)
{
        int failures = 0;

        (void) state;
        for (size_t i = 0; i < N_ELEM(diffs); i++) {
                struct text_diff d;
                bool r = check_text_first_diff(diffs[i].found, strlen(diffs[i].found), diffs[i].want,
                                               strlen(diffs[i].want), &d);

                if (r != diffs[i].differs) {
                        ROW_FAIL("%s: differs %d, want %d", diffs[i].what, r, diffs[i].differs);
                        continue;
                }
                if (!r)
                        continue;
                if (d.line != diffs[i].line || d.column != diffs[i].column)
                        ROW_FAIL("%s: line %zu column %zu, want %zu, %zu", diffs[i].what, d.line, d.column,
                                 diffs[i].line, diffs[i].column);
                if (!d.a != !diffs[i].found_line ||
                    (d.a && (d.alen != strlen(diffs[i].found_line) || memcmp(d.a, diffs[i].found_line, d.alen) != 0 ||
                             d.a_newline != diffs[i].found_nl)))
                        ROW_FAIL("%s: found line \"%.*s\" (newline %d), want \"%s\"", diffs[i].what, d.a ? (int) d.alen : 4,
                                 d.a ? d.a : "NULL", d.a_newline, diffs[i].found_line ? diffs[i].found_line : "NULL");
                if (!d.b != !diffs[i].want_line ||
                    (d.b && (d.blen != strlen(diffs[i].want_line) || memcmp(d.b, diffs[i].want_line, d.blen) != 0 ||
                             d.b_newline != diffs[i].want_nl)))
                        ROW_FAIL("%s: wanted line \"%.*s\" (newline %d), want \"%s\"", diffs[i].what,
                                 d.b ? (int) d.blen : 4, d.b ? d.b : "NULL", d.b_newline,
                                 diffs[i].want_line ? diffs[i].want_line : "NULL");
        }
        assert_int_equal(failures, 0);
}

/* What sudo 1.9.13 prints for the drop-in of a pool of 4 (trimmed to the parts that matter). */
#define HEAD "Matching Defaults entries for svc on vm:\n    env_reset, mail_badpass\n\n" \
        "Runas and Command-specific defaults for svc:\n" \
        "    Defaults!/usr/bin/true \"\", /usr/bin/kill ^-s [A-Z0-9]+ -- -([2-9]|[1-9][0-9]+)$ env_reset, !setenv\n\n" \
        "User svc may run the following commands on vm:\n"
#define CTL(runas) "    (" runas ") NOSETENV: NOPASSWD: /usr/bin/true \"\", /usr/bin/kill ^-s [A-Z0-9]+ -- " \
        "-([2-9]|[1-9][0-9]+)$, /bin/true \"\", /bin/kill ^-s [A-Z0-9]+ -- -([2-9]|[1-9][0-9]+)$\n"
#define RUN(runas) "    (" runas ") NOSETENV: NOPASSWD: /srv/app/releases/*/bin/run, /srv/app/current/bin/run\n"
#define DENY "    (svc : ALL) !/usr/bin/true \"\", !/usr/bin/kill ^-s [A-Z0-9]+ -- -([2-9]|[1-9][0-9]+)$, " \
        "!/srv/app/releases/*/bin/run\n"

/* check_sudo_list_grants(text, cmd, pool 4): each slot's state, "+" granted, "-" taken away, "." not named. */
static const struct {
        const char *what, *text, *cmd;
        const char *states;             /* slot01..slot04 */
        size_t lines;
} grants[] = {
        { "the drop-in: true", HEAD CTL("slot01, slot02, slot03, slot04") RUN("slot01, slot02, slot03, slot04") DENY,
          "/usr/bin/true", "++++", 3 },
        { "the drop-in: kill", HEAD CTL("slot01, slot02, slot03, slot04") RUN("slot01, slot02, slot03, slot04") DENY,
          "/usr/bin/kill", "++++", 3 },
        { "the drop-in: the launcher", HEAD CTL("slot01, slot02, slot03, slot04") RUN("slot01, slot02, slot03, slot04")
          DENY, "/srv/app/releases/*/bin/run", "++++", 3 },
        { "slot03 edited out of the first rule", HEAD CTL("slot01, slot02, slot04") RUN("slot01, slot02, slot03, slot04"),
          "/usr/bin/true", "++.+", 2 },
        { "the launcher rule names only slot01", HEAD CTL("slot01, slot02, slot03, slot04") RUN("slot01"),
          "/srv/app/releases/*/bin/run", "+...", 2 },
        { "a later rule takes slot02 back", HEAD CTL("slot01, slot02, slot03, slot04")
          "    (slot02) NOPASSWD: !/usr/bin/true\n", "/usr/bin/true", "+-++", 2 },
        { "an earlier denial, then the grant: the last match wins",
          HEAD "    (slot02) NOPASSWD: !/usr/bin/true\n" CTL("slot01, slot02, slot03, slot04"), "/usr/bin/true",
          "++++", 2 },
        { "ALL as the Runas list", HEAD "    (ALL : ALL) /usr/bin/true\n", "/usr/bin/true", "++++", 1 },
        { "ALL as the command", HEAD "    (slot02, slot03) NOPASSWD: ALL\n", "/usr/bin/true", ".++.", 1 },
        { "!ALL after the grant", HEAD CTL("slot01, slot02, slot03, slot04") "    (slot04) !ALL\n", "/usr/bin/kill",
          "+++-", 2 },
        { "ALL as an argument is not the command", HEAD "    (slot01) /usr/bin/foo ALL, /usr/bin/bar -x ALL\n",
          "/usr/bin/true", "....", 1 },
        { "a command without tags", HEAD "    (slot01) /usr/bin/true\n", "/usr/bin/true", "+...", 1 },
        { "ALL with slot03 left out", HEAD "    (ALL, !slot03) NOPASSWD: /usr/bin/true\n", "/usr/bin/true", "++-+", 1 },
        { "with a run_as_group", HEAD RUN("slot01, slot02, slot03, slot04 : agents"), "/srv/app/releases/*/bin/run",
          "++++", 1 },
        { "only -g: the service itself, no slot", HEAD "    (: slot01) NOPASSWD: /usr/bin/true\n", "/usr/bin/true",
          "....", 1 },
        { "a longer path is another command", HEAD "    (slot01) NOPASSWD: /usr/bin/truecrypt, /x/usr/bin/true, "
          "/usr/bin/env /usr/bin/true\n",
          "/usr/bin/true", "....", 1 },
        { "a slot outside the pool and other accounts", HEAD "    (slot05, root, slot1, slot02) NOPASSWD: /usr/bin/true\n",
          "/usr/bin/true", ".+..", 1 },
        { "no privilege at all", "User svc is not allowed to run sudo on vm.\n", "/usr/bin/true", "....", 0 },
        { "sudo's warnings around it", "sudo: unable to resolve host vm\n" HEAD CTL("slot04"), "/usr/bin/true", "...+",
          1 },
        { "no final newline", HEAD "    (slot01) NOPASSWD: /usr/bin/true", "/usr/bin/true", "+...", 1 },
};

static void test_list_grants(void **state)
{
        int failures = 0;

        (void) state;
        for (size_t i = 0; i < N_ELEM(grants); i++) {
                signed char st[5] = { 0 };
                char got[5];
                size_t lines = check_sudo_list_grants(grants[i].text, grants[i].cmd, 4, st);

                for (int n = 1; n <= 4; n++)
                        got[n - 1] = st[n] > 0 ? '+' : st[n] < 0 ? '-' : '.';
                got[4] = '\0';
                if (strcmp(got, grants[i].states) != 0 || lines != grants[i].lines)
                        ROW_FAIL("%s: %s, %zu lines; want %s, %zu", grants[i].what, got, lines, grants[i].states,
                                 grants[i].lines);
        }
        assert_int_equal(failures, 0);
}

/* check_kproc_parse: a command name holds anything, ')' and newlines too; the fields after its last ')'. */
static void test_kproc_parse(void **state)
{
        static const struct {
                const char *what, *line;
                bool ok;
                pid_t pid, ppid, pgrp, sid;
                char st;
                unsigned long long start;
                const char *comm;
        } rows[] = {
                { "plain", "42 (sleep) S 41 40 39 0 -1 4194560 1 0 0 0 0 0 0 0 20 0 1 0 123456 0 0", true, 42, 41, 40,
                  39, 'S', 123456, "sleep" },
                { "a ') ' in the name", "42 (a) Z 1 1 1 (b) R 41 40 39 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 77 0", true, 42,
                  41, 40, 39, 'R', 77, "a) Z 1 1 1 (b" },
                { "a newline in the name", "7 (x\ny) D 6 5 4 0 0 0 0 0 0 0 0 0 0 0 20 0 1 0 9 0", true, 7, 6, 5, 4,
                  'D', 9, "x\ny" },
                { "a zombie", "9 (sh) Z 8 8 8 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 5 0", true, 9, 8, 8, 8, 'Z', 5, "sh" },
                { "no ')'", "9 (sh Z 8 8 8", false, 0, 0, 0, 0, 0, 0, NULL },
                { "cut short", "9 (sh) S 8 8", false, 0, 0, 0, 0, 0, 0, NULL },
                { "no pid", "(sh) S 8 8 8 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 5 0", false, 0, 0, 0, 0, 0, 0, NULL },
                { "empty", "", false, 0, 0, 0, 0, 0, 0, NULL },
        };
        int failures = 0;

        (void) state;
        for (size_t i = 0; i < N_ELEM(rows); i++) {
                struct kproc p;
                bool ok = check_kproc_parse(rows[i].line, 7100, &p);

                if (ok != rows[i].ok)
                        ROW_FAIL("%s: %d, want %d", rows[i].what, ok, rows[i].ok);
                else if (ok && (p.pid != rows[i].pid || p.ppid != rows[i].ppid || p.pgrp != rows[i].pgrp ||
                                p.sid != rows[i].sid || p.state != rows[i].st || p.start != rows[i].start ||
                                p.uid != 7100 || strcmp(p.comm, rows[i].comm) != 0))
                        ROW_FAIL("%s: pid %d ppid %d pgrp %d sid %d state %c start %llu comm \"%s\"", rows[i].what,
                                 (int) p.pid, (int) p.ppid, (int) p.pgrp, (int) p.sid, p.state, p.start, p.comm);
        }
        if (failures)
                fail_msg("%d rows failed", failures);
}

/* check_kproc_descendants: what self started at any depth (orphans come back to it), no zombie, no loop. */
static void test_kproc_descendants(void **state)
{
        /* pid, ppid, state */
        static const struct {
                const char *what;
                int procs[8][3];
                size_t n;
                const char *want;       /* the pids found, in order */
        } rows[] = {
                { "children and grandchildren", { { 1, 0, 'S' }, { 10, 1, 'S' }, { 11, 10, 'S' }, { 12, 11, 'S' },
                                                  { 13, 12, 'R' }, { 20, 1, 'S' } }, 6, "11 12 13" },
                { "self not among them", { { 10, 1, 'S' } }, 1, "" },
                { "a zombie is not live", { { 10, 1, 'S' }, { 11, 10, 'Z' }, { 12, 11, 'S' } }, 3, "12" },
                { "the parent gone: not ours", { { 10, 1, 'S' }, { 12, 99, 'S' } }, 2, "" },
                { "a loop of parents ends", { { 10, 1, 'S' }, { 30, 31, 'S' }, { 31, 30, 'S' }, { 11, 10, 'S' } }, 4,
                  "11" },
        };
        int failures = 0;

        (void) state;
        for (size_t i = 0; i < N_ELEM(rows); i++) {
                struct kproc all[8], out[8];
                char got[64] = "";
                size_t n;

                for (size_t j = 0; j < rows[i].n; j++)
                        all[j] = (struct kproc){ .pid = rows[i].procs[j][0], .ppid = rows[i].procs[j][1],
                                                 .state = (char) rows[i].procs[j][2] };
                n = check_kproc_descendants(all, rows[i].n, 10, out);
                for (size_t j = 0; j < n; j++)
                        snprintf(got + strlen(got), sizeof(got) - strlen(got), "%s%d", j ? " " : "", (int) out[j].pid);
                if (strcmp(got, rows[i].want) != 0)
                        ROW_FAIL("%s: \"%s\", want \"%s\"", rows[i].what, got, rows[i].want);
        }
        if (failures)
                fail_msg("%d rows failed", failures);
}

/*
 * check_sudo_env_verdict: the command of a good session has no_new_privs and the seccomp
 * filter (Seccomp: 2); either missing is a FAIL that says which.
 */
static void test_env_verdict(void **state)
{
        static const struct {
                const char *what, *status;
                enum slots_check_status want;
                const char *detail;     /* a part of the row's detail */
        } rows[] = {
                { "both", "Name:\tcat\nNoNewPrivs:\t1\nSeccomp:\t2\nSeccomp_filters:\t1\n", SLOTS_CHECK_PASS,
                  "no_new_privs and a seccomp filter" },
                { "no filter", "NoNewPrivs:\t1\nSeccomp:\t0\n", SLOTS_CHECK_FAIL, "without a seccomp filter (Seccomp: 0" },
                { "strict mode is not the filter", "NoNewPrivs:\t1\nSeccomp:\t1\n", SLOTS_CHECK_FAIL, "(Seccomp: 1" },
                { "no Seccomp line", "NoNewPrivs:\t1\n", SLOTS_CHECK_FAIL, "(Seccomp: -1" },
                { "Seccomp_filters is not Seccomp", "NoNewPrivs:\t1\nSeccomp_filters:\t2\n", SLOTS_CHECK_FAIL,
                  "(Seccomp: -1" },
                { "no no_new_privs", "NoNewPrivs:\t0\nSeccomp:\t2\n", SLOTS_CHECK_FAIL, "NoNewPrivs: 0" },
        };
        int failures = 0;

        (void) state;
        for (size_t i = 0; i < N_ELEM(rows); i++) {
                struct slots_check_report rep = { 0 };
                struct slots_config cfg = { 0 };
                struct check_run k = { .rep = &rep, .cfg = &cfg };
                struct slotinfo s = { .n = 1, .name = "slot01" };

                if (!check_sudo_env_verdict(&k, &s, 0, rows[i].status, "", "/srv/docs") || rep.n != 1)
                        ROW_FAIL("%s: %zu rows", rows[i].what, rep.n);
                else if (rep.rows[0].status != rows[i].want || !strstr(rep.rows[0].detail, rows[i].detail))
                        ROW_FAIL("%s: %s \"%s\", want %s with \"%s\"", rows[i].what,
                                 slots_check_status_name(rep.rows[0].status), rep.rows[0].detail,
                                 slots_check_status_name(rows[i].want), rows[i].detail);
                slots_check_report_free(&rep);
        }
        assert_int_equal(failures, 0);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_first_diff),
                cmocka_unit_test(test_list_grants),
                cmocka_unit_test(test_kproc_parse),
                cmocka_unit_test(test_kproc_descendants),
                cmocka_unit_test(test_env_verdict),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
