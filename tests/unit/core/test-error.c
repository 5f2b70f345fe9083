/*
 * error.c as tables: slots_first_keep over a run of results (the first failure and its
 * record kept, what comes after it ignored, successes never kept), and the error record's
 * kinds and the text slots_error_format renders.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdbool.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "error.h"
#include "unit.h"

static void test_first_keep(void **state)
{
        static const struct {
                const char *what;
                int results[4];         /* the steps' results, in order; the list ends at the first 1 */
                int want;               /* first.r */
                int want_step;          /* whose record is kept (its index), -1: none */
        } rows[] = {
                { "nothing failed", { 0, 0, 0, 1 }, 0, -1 },
                { "positive results are no failure", { 2, 5, 1 }, 0, -1 },
                { "one failure", { 0, -EIO, 0, 1 }, -EIO, 1 },
                { "the first of two", { -EPERM, -EIO, 1 }, -EPERM, 0 },
                { "the first, after successes", { 0, 0, -ENOENT, -EIO }, -ENOENT, 2 },
                { "the last step", { 0, 0, 0, -EBUSY }, -EBUSY, 3 },
        };
        int failures = 0;

        (void) state;
        for (size_t i = 0; i < N_ELEM(rows); i++) {
                struct slots_error kept;
                struct slots_first first = { 0, &kept };
                struct slots_first bare = { 0, NULL };
                char want_reason[32];

                slots_error_clear(&kept);
                for (int s = 0; s < 4 && rows[i].results[s] != 1; s++) {
                        struct slots_error sub;
                        int r = rows[i].results[s];

                        slots_error_clear(&sub);
                        if (r < 0)
                                slots_error_set(&sub, r, "obj", "step %d", s);
                        slots_first_keep(&first, r, &sub);
                        slots_first_keep(&bare, r, r < 0 ? &sub : NULL);
                }
                snprintf(want_reason, sizeof(want_reason), "step %d", rows[i].want_step);
                if (first.r != rows[i].want || bare.r != rows[i].want ||
                    strcmp(kept.reason, rows[i].want_step < 0 ? "" : want_reason) != 0)
                        ROW_FAIL("%s: r %d (without a record %d), record \"%s\"; want %d, \"%s\"", rows[i].what,
                                 first.r, bare.r, kept.reason, rows[i].want,
                                 rows[i].want_step < 0 ? "" : want_reason);
        }
        if (failures)
                fail_msg("%d rows failed", failures);
}

/* A failure without a record (sub NULL) is kept as the first all the same, and keeps e as it was. */
static void test_first_keep_no_record(void **state)
{
        struct slots_error e;
        struct slots_first first = { 0, &e };
        struct slots_error later;

        (void) state;
        slots_error_set(&e, -EIO, "before", "set by the caller");
        slots_first_keep(&first, -ENOMEM, NULL);
        assert_int_equal(first.r, -ENOMEM);
        assert_string_equal(e.reason, "set by the caller");
        slots_error_set(&later, -EIO, "later", "a later failure");
        slots_first_keep(&first, -EIO, &later);
        assert_int_equal(first.r, -ENOMEM);
        assert_string_equal(e.object, "before");
}

static void test_kinds_and_format(void **state)
{
        static const struct {
                int (*set)(struct slots_error *e, int r, const char *object, const char *fmt, ...);
                enum slots_error_kind kind;
                const char *object;
                unsigned line, column;
                const char *text;
        } rows[] = {
                { slots_error_set, SLOTS_ERR_FAILED, "/etc/x", 0, 0, "/etc/x: it broke" },
                { slots_error_refuse, SLOTS_ERR_REFUSED, "/etc/x", 0, 0, "/etc/x: it broke" },
                { slots_error_invalid, SLOTS_ERR_INVALID, "/etc/x", 3, 14, "/etc/x:3:14: it broke" },
                { slots_error_set, SLOTS_ERR_FAILED, "", 0, 0, "it broke" },
        };
        int failures = 0;

        (void) state;
        for (size_t i = 0; i < N_ELEM(rows); i++) {
                struct slots_error e;
                char buf[128];
                int r = rows[i].set(&e, -EIO, rows[i].object, "it %s", "broke");

                if (rows[i].line)
                        slots_error_at(&e, rows[i].line, rows[i].column);
                slots_error_format(&e, buf, sizeof(buf));
                if (r != -EIO || e.kind != rows[i].kind || strcmp(buf, rows[i].text) != 0)
                        ROW_FAIL("row %zu: %d kind %d \"%s\", want kind %d \"%s\"", i, r, (int) e.kind, buf,
                                 (int) rows[i].kind, rows[i].text);
        }
        if (failures)
                fail_msg("%d rows failed", failures);
}

/*
 * A text longer than its field is cut with a mark: reason, object and fix each end in "..."
 * after exactly SLOTS_ERR_TEXT - 1 characters; a text that fits, to the last byte, keeps no mark;
 * slots_error_format marks its own cut too.
 */
static void test_cut_marked(void **state)
{
        static const size_t lens[] = { 10, SLOTS_ERR_TEXT - 1, SLOTS_ERR_TEXT, 3 * SLOTS_ERR_TEXT };
        static char text[3 * SLOTS_ERR_TEXT + 1];
        struct slots_error e;
        char small[16];

        (void) state;
        for (size_t i = 0; i < sizeof(lens) / sizeof(lens[0]); i++) {
                bool cut = lens[i] > SLOTS_ERR_TEXT - 1;
                size_t want = cut ? SLOTS_ERR_TEXT - 1 : lens[i];

                memset(text, 'x', lens[i]);
                text[lens[i]] = '\0';
                slots_error_refuse(&e, -EPERM, text, "%s", text);
                slots_error_fix(&e, "%s", text);
                print_message("length %zu\n", lens[i]);
                assert_int_equal(strlen(e.reason), want);
                assert_int_equal(strlen(e.object), want);
                assert_int_equal(strlen(e.fix), want);
                assert_int_equal(strcmp(e.reason + want - 3, "...") == 0, cut);
                assert_int_equal(strcmp(e.object + want - 3, "...") == 0, cut);
                assert_int_equal(strcmp(e.fix + want - 3, "...") == 0, cut);
        }
        slots_error_set(&e, -EIO, "/a/long/path", "a reason");
        assert_string_equal(slots_error_format(&e, small, sizeof(small)), "/a/long/path...");
        slots_error_set(&e, -EIO, "/p", "r");
        assert_string_equal(slots_error_format(&e, small, sizeof(small)), "/p: r");
}

int main(void)
{
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_first_keep),
                cmocka_unit_test(test_first_keep_no_record),
                cmocka_unit_test(test_kinds_and_format),
                cmocka_unit_test(test_cut_marked),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
