/* Escaping for the terminal and syslog, as a table: raw name in, what the admin sees out. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "escape.h"

static const struct {
        const char *what, *in, *out;
} rows[] = {
        { "plain", "Workflow/wf1/plan.txt", "Workflow/wf1/plan.txt" },
        { "empty", "", "" },
        { "space and punctuation stay", "a b,c;d'e\"f", "a b,c;d'e\"f" },
        { "backslash doubles", "a\\b", "a\\\\b" },
        { "ESC as octal", "x\033y", "x\\033y" },
        { "OSC title with BEL", "\033]0;owned\007", "\\033]0;owned\\a" },
        { "erase line and CR", "\033[2K\rY", "\\033[2K\\rY" },
        { "newline and tab", "a\nb\tc", "a\\nb\\tc" },
        { "DEL", "a\177", "a\\177" },
        { "valid UTF-8 stays", "caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x99\x82", "caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x99\x82" },
        { "C1 CSI as UTF-8 (U+009B)", "a\xc2\x9b" "2K", "a\\302\\2332K" },
        { "raw CSI byte", "a\x9b" "2K", "a\\2332K" },
        { "truncated UTF-8", "a\xe2\x82", "a\\342\\202" },
        { "overlong slash", "\xc0\xaf", "\\300\\257" },
        { "surrogate", "\xed\xa0\x80", "\\355\\240\\200" },
};

static void test_rows(void **state)
{
        (void) state;
        for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
                char *got = slots_escape(rows[i].in), buf[8];

                assert_non_null(got);
                if (strcmp(got, rows[i].out) != 0)
                        fail_msg("%s: got \"%s\", want \"%s\"", rows[i].what, got, rows[i].out);
                free(got);
                /* The fixed-size form cuts at a whole escape, never in the middle of one. */
                slots_escape_buf(rows[i].in, buf, sizeof(buf));
                if (strncmp(buf, rows[i].out, strlen(buf)) != 0)
                        fail_msg("%s: the cut form \"%s\" is not a prefix of \"%s\"", rows[i].what, buf, rows[i].out);
        }
}

int main(void)
{
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_rows),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
