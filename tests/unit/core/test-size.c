/* Whole numbers with a binary suffix (size.c): each rule on both sides of its limit. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <cmocka.h>

#include "size.h"
#include "unit.h"

static const struct {
        const char *text;
        bool suffix;
        int r;
        uint64_t value;
} rows[] = {
        { "0", true, 0, 0 },
        { "123", false, 0, 123 },
        { "512K", true, 0, 512ULL << 10 },
        { "2M", true, 0, 2ULL << 20 },
        { "2G", true, 0, 2ULL << 30 },
        { "3T", true, 0, 3ULL << 40 },
        /* a suffix only where one is allowed, one letter, upper case, the four only */
        { "512K", false, -EINVAL, 0 },
        { "1KK", true, -EINVAL, 0 },
        { "1k", true, -EINVAL, 0 },
        { "1P", true, -EINVAL, 0 },
        /* nothing but digits before it: no sign, space, fraction or empty text */
        { "", true, -EINVAL, 0 },
        { "K", true, -EINVAL, 0 },
        { "-1", true, -EINVAL, 0 },
        { "+1", true, -EINVAL, 0 },
        { " 1", true, -EINVAL, 0 },
        { "1 ", true, -EINVAL, 0 },
        { "1.5G", true, -EINVAL, 0 },
        /* 64 bits: the largest number, one past it, and a suffix that takes it past */
        { "18446744073709551615", false, 0, UINT64_MAX },
        { "18446744073709551616", false, -ERANGE, 0 },
        { "16777215T", true, 0, 16777215ULL << 40 },
        { "16777216T", true, -ERANGE, 0 },
};

static void test_size_parse(void **state)
{
        int failures = 0;

        (void) state;
        for (size_t i = 0; i < N_ELEM(rows); i++) {
                uint64_t v = 0;
                int r = slots_size_parse(rows[i].text, rows[i].suffix, &v);

                if (r != rows[i].r || (r == 0 && v != rows[i].value))
                        ROW_FAIL("\"%s\" (suffix %s): %d %llu, expected %d %llu", rows[i].text,
                                 rows[i].suffix ? "allowed" : "not allowed", r, (unsigned long long) v, rows[i].r,
                                 (unsigned long long) rows[i].value);
        }
        if (failures)
                fail_msg("%d failures", failures);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_size_parse),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
