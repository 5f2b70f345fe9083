/* The pure parts of check's sudo rows: where the drop-in first differs, and who sudo's listing grants what. */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "check-int.h"
#include "unit.h"

/* text_first_diff(found, want): the line and column of the first difference, and each text's line there. */
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
                bool r = text_first_diff(diffs[i].found, strlen(diffs[i].found), diffs[i].want, strlen(diffs[i].want),
                                         &d);

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

/* sudo_list_grants(text, cmd, pool 4): each slot's state, "+" granted, "-" taken away, "." not named. */
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
                size_t lines = sudo_list_grants(grants[i].text, grants[i].cmd, 4, st);

                for (int n = 1; n <= 4; n++)
                        got[n - 1] = st[n] > 0 ? '+' : st[n] < 0 ? '-' : '.';
                got[4] = '\0';
                if (strcmp(got, grants[i].states) != 0 || lines != grants[i].lines)
                        ROW_FAIL("%s: %s, %zu lines; want %s, %zu", grants[i].what, got, lines, grants[i].states,
                                 grants[i].lines);
        }
        assert_int_equal(failures, 0);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_first_diff),
                cmocka_unit_test(test_list_grants),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
