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

/* A reset empties the text and keeps the memory: the next text is written into it, whole. */
/* A walk's path: names pushed one level deeper, cut back to a level left. */
static void test_push_name(void **state)
{
        struct strbuf b = { 0 };
        char name[300];
        size_t top;

        (void) state;
        assert_int_equal(strbuf_push_name(&b, "srv"), 0);
        assert_string_equal(strbuf_str(&b), "/srv");
        top = b.len;
        memset(name, 'n', sizeof(name) - 1);
        name[sizeof(name) - 1] = '\0';
        for (int i = 0; i < 40; i++)            /* grows past its first allocation many times */
                assert_int_equal(strbuf_push_name(&b, name), 0);
        assert_int_equal(b.len, top + 40 * sizeof(name));
        assert_int_equal(strlen(b.s), b.len);
        strbuf_truncate(&b, top);
        assert_string_equal(strbuf_str(&b), "/srv");
        strbuf_truncate(&b, top + 1);           /* beyond the text: nothing changes */
        assert_string_equal(strbuf_str(&b), "/srv");
        assert_int_equal(strbuf_push_name(&b, ""), 0);
        assert_string_equal(strbuf_str(&b), "/srv/");
        strbuf_free(&b);
}

static void test_reset(void **state)
{
        struct strbuf b = { 0 };
        const char *mem;

        (void) state;
        strbuf_addf(&b, "%s", "a longer first text");
        mem = b.s;
        strbuf_reset(&b);
        assert_string_equal(strbuf_str(&b), "");
        assert_int_equal(b.len, 0);
        strbuf_addf(&b, "%d", 42);
        assert_ptr_equal(b.s, mem);
        assert_string_equal(strbuf_str(&b), "42");
        b.oom = true;           /* as after a failed append */
        strbuf_reset(&b);
        strbuf_addf(&b, "x");
        assert_false(b.oom);
        assert_string_equal(strbuf_str(&b), "x");
        strbuf_free(&b);
        strbuf_reset(&b);       /* on an empty one: still "" */
        assert_string_equal(strbuf_str(&b), "");
}

int main(void)
{
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_rows),
                cmocka_unit_test(test_grows),
                cmocka_unit_test(test_reset),
                cmocka_unit_test(test_push_name),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
