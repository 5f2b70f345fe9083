/* The growing string (strbuf.c), as a table: the pieces appended and the text that results. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "strbuf.h"

static const struct {
        const char *what;
        const char *pieces[4];  /* appended with strbuf_sep(", ") before each */
        const char *out;
} rows[] = {
        { "nothing added", { NULL }, "" },
        { "one piece, no separator", { "a" }, "a" },
        { "separator only between", { "a", "b", "c" }, "a, b, c" },
        { "empty first piece: no separator after it", { "", "b" }, "b" },
};

static void test_rows(void **state)
{
        (void) state;
        for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
                struct strbuf b = { 0 };

                for (size_t j = 0; j < 4 && rows[i].pieces[j]; j++) {
                        strbuf_sep(&b, ", ");
                        strbuf_addf(&b, "%s", rows[i].pieces[j]);
                }
                assert_false(b.oom);
                if (strcmp(strbuf_str(&b), rows[i].out) != 0)
                        fail_msg("%s: got \"%s\", want \"%s\"", rows[i].what, strbuf_str(&b), rows[i].out);
                assert_int_equal(b.len, strlen(rows[i].out));
                strbuf_free(&b);
                assert_null(b.s);
        }
}

/* Growth past the first allocation keeps every byte, and the length matches the text. */
static void test_grows(void **state)
{
        struct strbuf b = { 0 };

        (void) state;
        for (int i = 0; i < 1000; i++)
                strbuf_addf(&b, "%03d", i);
        assert_false(b.oom);
        assert_int_equal(b.len, 3000);
        assert_int_equal(strlen(strbuf_str(&b)), 3000);
        assert_memory_equal(strbuf_str(&b), "000001002", 9);
        assert_string_equal(strbuf_str(&b) + 2997, "999");
        strbuf_free(&b);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_rows),
                cmocka_unit_test(test_grows),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
