/*
 * slice.c: unit names escaped as systemd-escape does (its outputs recorded from
 * systemd 252), the properties' syntax value by value, and the unit files' text.
 */
#include <errno.h>
#include <jansson.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "slice.h"
#include "unit.h"

/* `systemd-escape -- IN` on Debian 12 (systemd 252.39), each output copied as printed. */
static const struct {
        const char *in, *out;
} escapes[] = {
        { "video", "video" },
        { "video-studio", "video\\x2dstudio" },
        { "_svc", "_svc" },
        { "slot01", "slot01" },
        { "a b", "a\\x20b" },
        { ".hidden", "\\x2ehidden" },
        { "a.b", "a.b" },
        { "a/b", "a-b" },
        { "/lead", "-lead" },
        { "x\\y", "x\\x5cy" },
        { "\xc3\xa9", "\\xc3\\xa9" },
        { "a:b_c", "a:b_c" },
        { "-", "\\x2d" },
        { "a%b", "a\\x25b" },
        { "~", "\\x7e" },
        { "", "" },
};

static void test_escape(void **state)
{
        int failures = 0;

        (void) state;
        for (size_t i = 0; i < N_ELEM(escapes); i++) {
                char buf[64];
                int r = slots_unit_escape(escapes[i].in, buf, sizeof(buf));

                if (r < 0 || strcmp(buf, escapes[i].out) != 0 || (size_t) r != strlen(escapes[i].out))
                        ROW_FAIL("escape \"%s\": got %d \"%s\", expected \"%s\"", escapes[i].in, r, r < 0 ? "" : buf,
                                 escapes[i].out);
        }
        assert_int_equal(failures, 0);
}

/* A buffer one short of the escaped text and its NUL is refused; exactly enough is not. */
static void test_escape_size(void **state)
{
        char buf[16];

        (void) state;
        assert_int_equal(slots_unit_escape("a-b", buf, 6), -ENAMETOOLONG);
        assert_int_equal(slots_unit_escape("a-b", buf, 7), 6);
        assert_string_equal(buf, "a\\x2db");
        assert_int_equal(slots_unit_escape("abc", buf, 3), -ENAMETOOLONG);
        assert_int_equal(slots_unit_escape("abc", buf, 4), 3);
}

static void test_unit_names(void **state)
{
        char name[SLOTS_UNIT_NAME_MAX], longer[300];

        (void) state;
        assert_int_equal(slots_slice_pool_unit("video", name), 0);
        assert_string_equal(name, "slots-video.slice");
        assert_int_equal(slots_slice_slot_unit("video", "slot03", name), 0);
        assert_string_equal(name, "slots-video-slot03.slice");
        /* a "-" of the service is no level of the hierarchy: systemd would read slots-video-studio as two */
        assert_int_equal(slots_slice_pool_unit("video-studio", name), 0);
        assert_string_equal(name, "slots-video\\x2dstudio.slice");
        assert_int_equal(slots_slice_slot_unit("video-studio", "vs-12", name), 0);
        assert_string_equal(name, "slots-video\\x2dstudio-vs\\x2d12.slice");
        /* 62 dashes make 248 bytes escaped: with "slots-" and ".slice" past 255 */
        memset(longer, '-', 62);
        longer[62] = '\0';
        assert_int_equal(slots_slice_pool_unit(longer, name), -ENAMETOOLONG);
        longer[60] = '\0';
        assert_int_equal(slots_slice_pool_unit(longer, name), 0);
        assert_int_equal(strlen(name), 252);
}

/* Each property's syntax: the value as JSON text, accepted or not, and what the unit file gets. */
static const struct {
        const char *key, *json;
        const char *rendered;   /* NULL: refused */
} values[] = {
        { "MemoryMax", "2147483648", "2147483648" },
        { "MemoryMax", "0", "0" },
        { "MemoryMax", "\"2G\"", "2147483648" },
        { "MemoryMax", "\"512K\"", "524288" },
        { "MemoryMax", "\"3M\"", "3145728" },
        { "MemoryMax", "\"1T\"", "1099511627776" },
        { "MemoryMax", "\"123\"", "123" },
        { "MemoryMax", "\"80%\"", "80%" },
        { "MemoryMax", "\"100%\"", "100%" },
        { "MemoryMax", "\"infinity\"", "infinity" },
        { "MemoryMax", "\"101%\"", NULL },
        { "MemoryMax", "\"0%\"", NULL },
        { "MemoryMax", "\"2GB\"", NULL },
        { "MemoryMax", "\"2g\"", NULL },
        { "MemoryMax", "\"2 G\"", NULL },
        { "MemoryMax", "\"+2G\"", NULL },
        { "MemoryMax", "\"1.5G\"", NULL },
        { "MemoryMax", "\"2E\"", NULL },
        { "MemoryMax", "\"\"", NULL },
        { "MemoryMax", "\"Infinity\"", NULL },
        { "MemoryMax", "\"max\"", NULL },
        { "MemoryMax", "\"16777216T\"", NULL },
        { "MemoryMax", "\"18446744073709551615\"", NULL },
        { "MemoryMax", "\"18446744073709551616\"", NULL },
        { "MemoryMax", "-1", NULL },
        { "MemoryMax", "1.5", NULL },
        { "MemoryMax", "null", NULL },
        { "MemoryHigh", "\"1%\"", "1%" },
        { "MemoryHigh", "\"1G\"", "1073741824" },
        { "MemorySwapMax", "0", "0" },
        { "MemorySwapMax", "\"1G\"", "1073741824" },
        { "MemorySwapMax", "\"infinity\"", "infinity" },
        { "MemorySwapMax", "\"50%\"", NULL },
        { "TasksMax", "512", "512" },
        { "TasksMax", "1", "1" },
        { "TasksMax", "\"512\"", "512" },
        { "TasksMax", "\"15%\"", "15%" },
        { "TasksMax", "\"infinity\"", "infinity" },
        { "TasksMax", "0", NULL },
        { "TasksMax", "\"0\"", NULL },
        { "TasksMax", "\"1K\"", NULL },
        { "TasksMax", "\"101%\"", NULL },
        { "CPUQuota", "\"20%\"", "20%" },
        { "CPUQuota", "\"150%\"", "150%" },
        { "CPUQuota", "\"1%\"", "1%" },
        { "CPUQuota", "\"100000%\"", "100000%" },
        { "CPUQuota", "\"100001%\"", NULL },
        { "CPUQuota", "\"0%\"", NULL },
        { "CPUQuota", "\"20\"", NULL },
        { "CPUQuota", "\"20.5%\"", NULL },
        { "CPUQuota", "\"20%%\"", NULL },
        { "CPUQuota", "\"infinity\"", NULL },
        { "CPUQuota", "20", NULL },
        { "CPUWeight", "1", "1" },
        { "CPUWeight", "100", "100" },
        { "CPUWeight", "10000", "10000" },
        { "CPUWeight", "0", NULL },
        { "CPUWeight", "10001", NULL },
        { "CPUWeight", "\"100\"", NULL },
        { "CPUWeight", "\"idle\"", NULL },
        { "CPUWeight", "\"infinity\"", NULL },
        { "IOWeight", "1", "1" },
        { "IOWeight", "10000", "10000" },
        { "IOWeight", "-5", NULL },
        { "IOWeight", "true", NULL },
};

static void test_values(void **state)
{
        int failures = 0;

        (void) state;
        for (size_t i = 0; i < N_ELEM(values); i++) {
                char text[128], got[24];
                struct slots_jsrc src = { .file = "t.conf", .text = text };
                struct slots_slice_props props;
                struct slots_error e;
                json_error_t jerr;
                json_t *obj;
                int k = slots_slice_key_from_name(values[i].key), r;

                snprintf(text, sizeof(text), "{\"%s\": %s}", values[i].key, values[i].json);
                src.len = strlen(text);
                obj = json_loadb(text, src.len, JSON_REJECT_DUPLICATES, &jerr);
                assert_non_null(obj);
                assert_true(k >= 0);
                slots_error_clear(&e);
                r = slots_slice_props_parse(obj, &src, NULL, 0, &props, &e);
                json_decref(obj);
                if (!values[i].rendered) {
                        if (r != -EBADMSG)
                                ROW_FAIL("%s %s: accepted, expected a refusal", values[i].key, values[i].json);
                        else if (!strstr(e.reason, values[i].key) || e.line != 1 || e.column != strlen(values[i].key) + 6)
                                ROW_FAIL("%s %s: error at %u:%u \"%s\"", values[i].key, values[i].json, e.line,
                                         e.column, e.reason);
                        continue;
                }
                if (r != 0) {
                        ROW_FAIL("%s %s: refused: %s", values[i].key, values[i].json, e.reason);
                        continue;
                }
                if (!props.v[k].set || strcmp(slots_slice_value_format(&props.v[k], got), values[i].rendered) != 0)
                        ROW_FAIL("%s %s: rendered \"%s\", expected \"%s\"", values[i].key, values[i].json, got,
                                 values[i].rendered);
                for (int j = 0; j < SLOTS_SLICE_MAX_KEY; j++)
                        if (j != k && props.v[j].set)
                                ROW_FAIL("%s %s: also set %s", values[i].key, values[i].json, slots_slice_key_name(j));
        }
        assert_int_equal(failures, 0);
}

static void test_names(void **state)
{
        (void) state;
        for (int i = 0; i < SLOTS_SLICE_MAX_KEY; i++)
                assert_int_equal(slots_slice_key_from_name(slots_slice_key_name(i)), i);
        assert_int_equal(slots_slice_key_from_name("memorymax"), -1);
        assert_int_equal(slots_slice_key_from_name("MemoryLimit"), -1);
        assert_null(slots_slice_key_name(SLOTS_SLICE_MAX_KEY));
}

static void test_overlay(void **state)
{
        struct slots_slice_props base = { 0 }, top = { 0 };

        (void) state;
        base.v[SLOTS_SLICE_MEMORY_MAX] = (struct slots_slice_value){ true, SLOTS_SLICE_NUMBER, 100 };
        base.v[SLOTS_SLICE_TASKS_MAX] = (struct slots_slice_value){ true, SLOTS_SLICE_NUMBER, 5 };
        top.v[SLOTS_SLICE_MEMORY_MAX] = (struct slots_slice_value){ true, SLOTS_SLICE_INFINITY, 0 };
        top.v[SLOTS_SLICE_IO_WEIGHT] = (struct slots_slice_value){ true, SLOTS_SLICE_NUMBER, 7 };
        slots_slice_overlay(&base, &top);
        assert_int_equal(base.v[SLOTS_SLICE_MEMORY_MAX].kind, SLOTS_SLICE_INFINITY);
        assert_int_equal(base.v[SLOTS_SLICE_TASKS_MAX].n, 5);
        assert_int_equal(base.v[SLOTS_SLICE_IO_WEIGHT].n, 7);
        assert_false(base.v[SLOTS_SLICE_CPU_QUOTA].set);
}

static void test_render(void **state)
{
        struct slots_slice_props p = { 0 };
        char *text;

        (void) state;
        text = slots_slice_render("the pool of the service video", &p);
        assert_non_null(text);
        assert_string_equal(text,
                            "# Written by slots-provision from the \"slice\" key of slots.conf(5); it replaces any edit.\n"
                            "[Unit]\n"
                            "Description=slots: the pool of the service video\n"
                            "\n"
                            "[Slice]\n");
        free(text);
        p.v[SLOTS_SLICE_IO_WEIGHT] = (struct slots_slice_value){ true, SLOTS_SLICE_NUMBER, 50 };
        p.v[SLOTS_SLICE_MEMORY_MAX] = (struct slots_slice_value){ true, SLOTS_SLICE_NUMBER, UINT64_C(2) << 30 };
        p.v[SLOTS_SLICE_CPU_QUOTA] = (struct slots_slice_value){ true, SLOTS_SLICE_PERCENT, 150 };
        p.v[SLOTS_SLICE_TASKS_MAX] = (struct slots_slice_value){ true, SLOTS_SLICE_INFINITY, 0 };
        text = slots_slice_render("slot03 of the service video", &p);
        assert_non_null(text);
        /* the properties in one fixed order, whatever the config's */
        assert_string_equal(text,
                            "# Written by slots-provision from the \"slice\" key of slots.conf(5); it replaces any edit.\n"
                            "[Unit]\n"
                            "Description=slots: slot03 of the service video\n"
                            "\n"
                            "[Slice]\n"
                            "MemoryMax=2147483648\n"
                            "TasksMax=infinity\n"
                            "CPUQuota=150%\n"
                            "IOWeight=50\n");
        free(text);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_escape),
                cmocka_unit_test(test_escape_size),
                cmocka_unit_test(test_unit_names),
                cmocka_unit_test(test_values),
                cmocka_unit_test(test_names),
                cmocka_unit_test(test_overlay),
                cmocka_unit_test(test_render),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
