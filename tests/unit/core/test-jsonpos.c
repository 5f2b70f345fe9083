/* Where a JSON value or key sits (jsonpos.c): line and column for a path, and jansson's load errors, as tables. */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <errno.h>

#include <cmocka.h>
#include <jansson.h>

#include "error.h"
#include "jsonpos.h"
#include "unit.h"

#define K(k) { .key = (k) }
#define I(i) { .key = NULL, .index = (i) }

static const char doc[] =
        "{\n"
        "  \"version\": 1,\n"
        "  \"slots\": {\n"
        "    \"slot01\": { \"user\": \"u1\", \"state\": \"assigned\" },\n"
        "    \"slot02\": {\"user\":\"a\\\"b\"}\n"
        "  },\n"
        "\t\"list\": [ 10, [20, 21], {\"x\": \"y\"} ]\n"
        "}\n";

static const struct {
        const char *what;
        struct slots_jpath path[3];
        size_t n;
        bool want_key;
        unsigned line, column;
} locates[] = {
        { "the document", { K("") }, 0, false, 1, 1 },
        { "a value", { K("version") }, 1, false, 2, 14 },
        { "its key", { K("version") }, 1, true, 2, 3 },
        { "a nested value", { K("slots"), K("slot01"), K("state") }, 3, false, 4, 40 },
        { "a nested key", { K("slots"), K("slot01"), K("state") }, 3, true, 4, 31 },
        { "past an escaped quote", { K("slots"), K("slot02"), K("user") }, 3, false, 5, 23 },
        { "the next member after a string with an escape", { K("list") }, 1, false, 7, 10 },
        { "a column counts a tab as one byte", { K("list") }, 1, true, 7, 2 },
        { "an array element", { K("list"), I(1) }, 2, false, 7, 16 },
        { "inside a nested array", { K("list"), I(1), I(1) }, 3, false, 7, 21 },
        { "an object in an array", { K("list"), I(2), K("x") }, 3, false, 7, 32 },
        /* a path not in the text: the deepest element found */
        { "a missing key", { K("slots"), K("slot09") }, 2, false, 3, 12 },
        { "an index past the end", { K("list"), I(3) }, 2, false, 7, 10 },
        { "a key into an array", { K("list"), K("x") }, 2, false, 7, 10 },
};

static void test_locate(void **state)
{
        const struct slots_jsrc src = { .file = "/etc/slots/slots.json", .text = doc, .len = sizeof(doc) - 1 };
        int failures = 0;

        (void) state;
        for (size_t i = 0; i < N_ELEM(locates); i++) {
                struct slots_error e;
                int r;

                slots_error_clear(&e);
                r = slots_json_fail(&e, &src, locates[i].path, locates[i].n, locates[i].want_key, "bad %s", "thing");
                if (r != -EBADMSG || e.kind != SLOTS_ERR_INVALID)
                        ROW_FAIL("%s: returned %d with kind %d, expected -EBADMSG, invalid", locates[i].what, r,
                                 (int) e.kind);
                if (e.line != locates[i].line || e.column != locates[i].column)
                        ROW_FAIL("%s: at %u:%u, expected %u:%u", locates[i].what, e.line, e.column, locates[i].line,
                                 locates[i].column);
                if (strcmp(e.object, src.file) != 0 || strcmp(e.reason, "bad thing") != 0)
                        ROW_FAIL("%s: names \"%s\" with \"%s\"", locates[i].what, e.object, e.reason);
        }
        if (failures)
                fail_msg("%d rows failed", failures);
}

/* What json_loadb reports about bad text becomes invalid input at jansson's line and column. */
static const struct {
        const char *text;
        unsigned line, column;
} loads[] = {
        { "{\"a\": }", 1, 7 },
        { "{\n  \"a\": 1,\n  \"b\" 2\n}", 3, 7 },
        { "[1, 2", 1, 5 },
};

static void test_load_error(void **state)
{
        int failures = 0;

        (void) state;
        for (size_t i = 0; i < N_ELEM(loads); i++) {
                struct slots_error e;
                json_error_t jerr;
                json_t *j = json_loadb(loads[i].text, strlen(loads[i].text), 0, &jerr);
                int r;

                if (j) {
                        ROW_FAIL("\"%s\": jansson accepted it", loads[i].text);
                        json_decref(j);
                        continue;
                }
                slots_error_clear(&e);
                r = slots_json_load_error(&e, "t.json", &jerr);
                if (r != -EBADMSG || e.kind != SLOTS_ERR_INVALID || e.line != loads[i].line ||
                    e.column != loads[i].column || !e.reason[0])
                        ROW_FAIL("\"%s\": %d kind %d at %u:%u (%s), expected -EBADMSG invalid at %u:%u", loads[i].text,
                                 r, (int) e.kind, e.line, e.column, e.reason, loads[i].line, loads[i].column);
        }
        if (failures)
                fail_msg("%d rows failed", failures);
}

/* jansson out of memory (its code, or no text at all): a failure, not bad input. */
static void test_load_oom(void **state)
{
        struct slots_error e;
        json_error_t jerr;

        (void) state;
        memset(&jerr, 0, sizeof(jerr));
        slots_error_clear(&e);
        assert_int_equal(slots_json_load_error(&e, "t.json", &jerr), -ENOMEM);
        assert_int_equal(e.kind, SLOTS_ERR_FAILED);
        assert_string_equal(e.object, "t.json");
}

int main(void)
{
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_locate),
                cmocka_unit_test(test_load_error),
                cmocka_unit_test(test_load_oom),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
