/* Path text (path.c): join (allocated or into a buffer) and under, as tables; all agree on a trailing '/'. */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "path.h"
#include "unit.h"

static const struct {
        const char *dir, *name, *joined;
} joins[] = {
        { "/", "etc", "/etc" },
        { "/etc", "slots", "/etc/slots" },
        { "/etc/", "slots", "/etc/slots" },
        { "/etc//", "slots", "/etc/slots" },
        { "//", "x", "/x" },
        { "/a/b", "c/d", "/a/b/c/d" },
};

static const struct {
        const char *path, *base;
        bool under;
} unders[] = {
        { "/a", "/a", true },
        { "/a/b", "/a", true },
        { "/a/b", "/a/", true },
        { "/a", "/a/", true },
        { "/ab", "/a", false },
        { "/ab", "/a/", false },
        { "/a", "/a/b", false },
        { "/anything", "/", true },
        { "/", "/", true },
        { "/srv/docs/_private/x", "/srv/docs/_private", true },
        { "/srv/docs/_privatex", "/srv/docs/_private", false },
};

static void test_join(void **state)
{
        int failures = 0;

        (void) state;
        for (size_t i = 0; i < N_ELEM(joins); i++) {
                char *s = slots_path_join(joins[i].dir, joins[i].name);

                if (!s || strcmp(s, joins[i].joined) != 0)
                        ROW_FAIL("\"%s\" + \"%s\": \"%s\", expected \"%s\"", joins[i].dir, joins[i].name,
                                 s ? s : "(null)", joins[i].joined);
                free(s);
        }
        if (failures)
                fail_msg("%d rows failed", failures);
}

/* The buffer form: the same text, cut to the buffer, always terminated. */
static void test_join_to(void **state)
{
        static const struct {
                size_t size;
                const char *dir, *name, *joined;
        } cuts[] = {
                { 16, "/etc", "slots", "/etc/slots" },
                { 11, "/etc", "slots", "/etc/slots" },
                { 10, "/etc", "slots", "/etc/slot" },
                { 2, "/", "x", "/" },
                { 1, "/etc", "slots", "" },
        };
        int failures = 0;

        (void) state;
        for (size_t i = 0; i < N_ELEM(joins); i++) {
                char buf[64];

                if (strcmp(slots_path_join_to(buf, sizeof(buf), joins[i].dir, joins[i].name), joins[i].joined) != 0)
                        ROW_FAIL("\"%s\" + \"%s\" into a buffer: \"%s\", expected \"%s\"", joins[i].dir,
                                 joins[i].name, buf, joins[i].joined);
        }
        for (size_t i = 0; i < N_ELEM(cuts); i++) {
                char buf[64];

                memset(buf, 'X', sizeof(buf));
                slots_path_join_to(buf, cuts[i].size, cuts[i].dir, cuts[i].name);
                if (strcmp(buf, cuts[i].joined) != 0 || buf[cuts[i].size] != 'X')
                        ROW_FAIL("\"%s\" + \"%s\" into %zu bytes: \"%.60s\", expected \"%s\"", cuts[i].dir,
                                 cuts[i].name, cuts[i].size, buf, cuts[i].joined);
        }
        if (failures)
                fail_msg("%d rows failed", failures);
}

static void test_under(void **state)
{
        int failures = 0;

        (void) state;
        for (size_t i = 0; i < N_ELEM(unders); i++)
                if (slots_path_under(unders[i].path, unders[i].base) != unders[i].under)
                        ROW_FAIL("\"%s\" under \"%s\": expected %s", unders[i].path, unders[i].base,
                                 unders[i].under ? "yes" : "no");
        if (failures)
                fail_msg("%d rows failed", failures);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_join),
                cmocka_unit_test(test_join_to),
                cmocka_unit_test(test_under),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
