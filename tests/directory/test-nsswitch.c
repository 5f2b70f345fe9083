/* slots_nss_masked_source: which nsswitch.conf lines hide a down directory, as a table. */
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

int main(void)
{
        const struct CMUnitTest tests[] = { cmocka_unit_test(test_rows) };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
