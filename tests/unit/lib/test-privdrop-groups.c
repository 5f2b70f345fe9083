/*
 * privdrop.c's groups: slots_ident_of for an account in more groups than its first guess
 * (16) holds, whether NSS says how many it needs or not (getgrouplist is wrapped at link time:
 * -Wl,--wrap=getgrouplist, answering for the account "many"); a drop asked for more groups
 * than the kernel takes is refused (-EPERM, fn never runs) by both ways of dropping; and the
 * unkillable drop refuses uid 0 (-EINVAL).
 */
#include <errno.h>
#include <grp.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "privdrop.h"
#include "unit.h"

static int groups_of_many;      /* how many groups "root" is in, as the fake NSS answers */
static bool tells_size;         /* whether it says how many it needs when the buffer is short */
static int calls;

int __real_getgrouplist(const char *user, gid_t group, gid_t *groups, int *ngroups);
int __wrap_getgrouplist(const char *user, gid_t group, gid_t *groups, int *ngroups);

int __wrap_getgrouplist(const char *user, gid_t group, gid_t *groups, int *ngroups)
{
        if (!groups_of_many)
                return __real_getgrouplist(user, group, groups, ngroups);
        calls++;
        if (*ngroups < groups_of_many) {
                if (tells_size)
                        *ngroups = groups_of_many;
                return -1;
        }
        groups[0] = group;
        for (int i = 1; i < groups_of_many; i++)
                groups[i] = (gid_t) (5000 + i);
        *ngroups = groups_of_many;
        return groups_of_many;
}

static void test_many_groups(void **state)
{
        static const struct {
                int n;
                bool tells_size;
                int calls;                      /* getgrouplist calls until the buffer fits */
        } rows[] = {
                { 3, true, 1 }, { 16, true, 1 }, { 17, true, 2 }, { 40, true, 2 },
                { 17, false, 2 }, { 40, false, 3 }, { 300, false, 6 },
        };
        int failures = 0;

        (void) state;
        for (size_t i = 0; i < N_ELEM(rows); i++) {
                struct slots_ident id = { 0 };
                gid_t *groups = NULL;
                int r;

                groups_of_many = rows[i].n;
                tells_size = rows[i].tells_size;
                calls = 0;
                r = slots_ident_of("root", &id, &groups);
                groups_of_many = 0;
                if (r != 0) {
                        ROW_FAIL("%d groups: %d", rows[i].n, r);
                        continue;
                }
                if (id.uid != 0 || id.n_groups != rows[i].n || id.groups != groups || groups[0] != id.gid ||
                    groups[rows[i].n - 1] != (gid_t) (5000 + rows[i].n - 1) || calls != rows[i].calls)
                        ROW_FAIL("%d groups (%s): uid %u, %d groups, %d calls (want %d)", rows[i].n,
                                 rows[i].tells_size ? "size told" : "size not told", (unsigned) id.uid, id.n_groups,
                                 calls, rows[i].calls);
                free(groups);
        }
        if (failures)
                fail_msg("%d failures", failures);
}

static int mark(void *arg)
{
        (void) arg;
        return 42;
}

/* More groups than setgroups takes: the drop fails in the child, fn never runs, the parent says -EPERM. */
static void test_too_many_groups(void **state)
{
        static gid_t groups[NGROUPS_MAX + 2];
        struct slots_ident id = { .uid = 65534, .gid = 65534, .groups = groups, .n_groups = NGROUPS_MAX + 2 };

        (void) state;
        if (geteuid() != 0) {
                print_message("skipped: a drop needs root (setgroups)\n");
                skip();
        }
        for (size_t i = 0; i < N_ELEM(groups); i++)
                groups[i] = 65534;
        assert_int_equal(slots_run_as(&id, mark, NULL, 5000), -EPERM);
        assert_int_equal(slots_run_as_unkillable(&id, mark, NULL, 5000), -EPERM);
        /* The same with a number of groups the kernel takes runs fn. */
        id.n_groups = 1;
        assert_int_equal(slots_run_as(&id, mark, NULL, 5000), 42);
        assert_int_equal(slots_run_as_unkillable(&id, mark, NULL, 5000), 42);
}

static void test_unkillable_refuses_root(void **state)
{
        struct slots_ident id = { .uid = 0, .gid = 0 };

        (void) state;
        assert_int_equal(slots_run_as_unkillable(&id, mark, NULL, 1000), -EINVAL);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_many_groups),
                cmocka_unit_test(test_too_many_groups),
                cmocka_unit_test(test_unkillable_refuses_root),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
