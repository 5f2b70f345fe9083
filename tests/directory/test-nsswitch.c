/*
 * nsswitch.conf as two tables: which lines hide a down directory (slots_nss_masked_source), and
 * what an enumeration of a database answers (slots_nss_enumerable); whether a database is
 * served from a directory (slots_nss_network).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "nss.h"
#include "../unit/unit.h"

static const struct {
        const char *text;
        const char *db;
        const char *src, *next;         /* NULL: no warning */
} rows[] = {
        { "passwd: files ldap extrausers\n", "passwd", "ldap", "extrausers" },
        { "passwd: files ldap\n", "passwd", NULL, NULL },
        { "passwd: files systemd\n", "passwd", NULL, NULL },
        { "passwd: files extrausers ldap\n", "passwd", NULL, NULL },
        { "passwd: files ldap [UNAVAIL=return] extrausers\n", "passwd", NULL, NULL },
        { "passwd: files ldap [unavail=return] extrausers\n", "passwd", NULL, NULL },
        { "passwd: files ldap [ !SUCCESS=return ] extrausers\n", "passwd", NULL, NULL },
        { "passwd: files ldap [NOTFOUND=return] extrausers\n", "passwd", "ldap", "extrausers" },
        { "passwd: files sss systemd\n", "passwd", "sss", "systemd" },
        { "passwd:files winbind[UNAVAIL=continue]nis\n", "passwd", "winbind", "nis" },
        { "passwd: files ldap # extrausers\n", "passwd", NULL, NULL },
        { "# passwd: files ldap extrausers\npasswd: files\n", "passwd", NULL, NULL },
        { "passwd: files\ngroup: files ldap extrausers\n", "passwd", NULL, NULL },
        { "passwd: files\ngroup: files ldap extrausers\n", "group", "ldap", "extrausers" },
        { "passwdx: files ldap extrausers\n", "passwd", NULL, NULL },
        { "  passwd  :  files  ldap  extrausers", "passwd", "ldap", "extrausers" },
        { "passwd: files ldap [UNAVAIL=return\n", "passwd", NULL, NULL },
        { "", "passwd", NULL, NULL },
};

static void test_rows(void **state)
{
        (void) state;
        for (size_t i = 0; i < N_ELEM(rows); i++) {
                char src[32] = "", next[32] = "";
                int r = slots_nss_masked_source(rows[i].text, rows[i].db, src, sizeof(src), next, sizeof(next));

                if (!rows[i].src) {
                        if (r != 0)
                                fail_msg("row %zu (%s): warned of %s before %s", i, rows[i].text, src, next);
                        continue;
                }
                if (r != 1 || strcmp(src, rows[i].src) != 0 || strcmp(next, rows[i].next) != 0)
                        fail_msg("row %zu (%s): got %d %s %s, want %s %s", i, rows[i].text, r, src, next,
                                 rows[i].src, rows[i].next);
        }
}

static const struct {
        const char *text;
        const char *db;
        enum slots_nss_enum want;
} enum_rows[] = {
        { "passwd: files\n", "passwd", SLOTS_NSS_ENUM_ALL },
        { "passwd:         files systemd\n", "passwd", SLOTS_NSS_ENUM_ALL },
        { "passwd: files ldap\n", "passwd", SLOTS_NSS_ENUM_NAMES },
        { "passwd: files systemd sss\n", "passwd", SLOTS_NSS_ENUM_NAMES },
        { "passwd: sss files\n", "passwd", SLOTS_NSS_ENUM_NONE },
        { "passwd: files sss ldap\n", "passwd", SLOTS_NSS_ENUM_NONE },
        { "passwd: ldap\n", "passwd", SLOTS_NSS_ENUM_NAMES },
        { "passwd: compat\n", "passwd", SLOTS_NSS_ENUM_NAMES },
        { "passwd: compat files\n", "passwd", SLOTS_NSS_ENUM_NONE },
        { "passwd: files [NOTFOUND=return] ldap\n", "passwd", SLOTS_NSS_ENUM_NONE },
        { "passwd: files [ NOTFOUND=return ]\n", "passwd", SLOTS_NSS_ENUM_NONE },
        { "passwd:files winbind[UNAVAIL=continue]nis\n", "passwd", SLOTS_NSS_ENUM_NONE },
        { "passwd: files # ldap\n", "passwd", SLOTS_NSS_ENUM_ALL },
        { "# passwd: sss files\npasswd: files\n", "passwd", SLOTS_NSS_ENUM_ALL },
        { "passwd: files\npasswd: sss files\n", "passwd", SLOTS_NSS_ENUM_ALL },
        { "passwd: files\ngroup: files ldap\n", "group", SLOTS_NSS_ENUM_NAMES },
        { "passwd: files\n", "group", SLOTS_NSS_ENUM_NO_LINE },
        { "passwd: files\n", "initgroups", SLOTS_NSS_ENUM_NO_LINE },
        { "group: files\ninitgroups: files ldap\n", "initgroups", SLOTS_NSS_ENUM_NAMES },
        { "passwdx: files\n", "passwd", SLOTS_NSS_ENUM_NO_LINE },
        { "passwd:\n", "passwd", SLOTS_NSS_ENUM_NONE },
        { "passwd: filesx\n", "passwd", SLOTS_NSS_ENUM_NAMES },
        { "passwd: files filesx\n", "passwd", SLOTS_NSS_ENUM_NAMES },
        { "passwd: filesx files\n", "passwd", SLOTS_NSS_ENUM_NONE },
        { "shadow: files systemd", "shadow", SLOTS_NSS_ENUM_ALL },
        { "", "passwd", SLOTS_NSS_ENUM_NO_LINE },
};

/* Whether a database is served from a directory: provision's fail-closed rule with "accounts" unset. */
static const struct {
        const char *text, *db;
        bool want;
} net_rows[] = {
        { "passwd: files systemd\ngroup: files systemd\n", "passwd", false },
        { "passwd: files sss\n", "passwd", true },
        { "passwd:files ldap [NOTFOUND=return]\n", "passwd", true },
        { "passwd: files\ngroup: files winbind\n", "group", true },
        { "passwd: files\ngroup: files winbind\n", "passwd", false },
        { "passwd: compat\n# group: sss\n", "group", false },
        { "passwd: files extrausers\n", "passwd", false },
        { "passwd: files nis\n", "passwd", true },
        { "passwd: files\n", "group", false },
};

static void test_network(void **state)
{
        int failures = 0;

        (void) state;
        for (size_t i = 0; i < N_ELEM(net_rows); i++)
                if (slots_nss_network(net_rows[i].text, net_rows[i].db) != net_rows[i].want)
                        ROW_FAIL("network row %zu (%s, %s): want %d", i, net_rows[i].text, net_rows[i].db,
                                 net_rows[i].want);
        assert_int_equal(failures, 0);
}

static void test_enumerable(void **state)
{
        int failures = 0;

        (void) state;
        for (size_t i = 0; i < N_ELEM(enum_rows); i++) {
                enum slots_nss_enum got = slots_nss_enumerable(enum_rows[i].text, enum_rows[i].db);

                if (got != enum_rows[i].want)
                        ROW_FAIL("enum row %zu (%s, %s): got %d, want %d", i, enum_rows[i].text, enum_rows[i].db,
                                 (int) got, (int) enum_rows[i].want);
        }
        assert_int_equal(failures, 0);
}

int main(void)
{
        const struct CMUnitTest tests[] = { cmocka_unit_test(test_rows), cmocka_unit_test(test_enumerable),
                                            cmocka_unit_test(test_network) };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
