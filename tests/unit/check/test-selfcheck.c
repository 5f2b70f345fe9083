/* The self-check's run: its choice of the slots that get the real sudo rows. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <cmocka.h>

#include "check-int.h"
#include "selfcheck.h"
#include "unit.h"

/* check_sample: n assigned slots, a sample of at most max; the positions picked, in order. */
static const struct {
        size_t n, max;
        const char *picked;
} samples[] = {
        { 0, 8, "" },
        { 1, 8, "0" },
        { 3, 8, "0 1 2" },
        { 8, 8, "0 1 2 3 4 5 6 7" },                    /* at the sample's size: every slot */
        { 9, 8, "0 1 2 3 4 5 6 8" },
        { 20, 8, "0 2 5 8 10 13 16 19" },               /* tests/integration/check-sample.sh */
        { 1000, 8, "0 142 285 428 570 713 856 999" },   /* bench/run 6: slot01 ... slot1000 */
        { 9999, 8, "0 1428 2856 4284 5713 7141 8569 9998" },
        { 5, 2, "0 4" },
        { 5, 1, "0" },
        { 5, 0, "" },
};

static void test_sample(void **state)
{
        int failures = 0;

        (void) state;
        for (size_t i = 0; i < N_ELEM(samples); i++) {
                bool pick[10000] = { false };
                char got[256] = "";
                size_t len = 0, count = 0, n;

                n = check_sample(samples[i].n, samples[i].max, pick);
                for (size_t j = 0; j < samples[i].n; j++)
                        if (pick[j]) {
                                count++;
                                len += (size_t) snprintf(got + len, sizeof(got) - len, "%s%zu", len ? " " : "", j);
                        }
                if (strcmp(got, samples[i].picked) != 0 || n != count)
                        ROW_FAIL("check_sample(%zu, %zu): picked \"%s\" (returned %zu), want \"%s\"", samples[i].n,
                                 samples[i].max, got, n, samples[i].picked);
        }
        assert_int_equal(failures, 0);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_sample),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
