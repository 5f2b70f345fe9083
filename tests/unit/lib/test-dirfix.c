/*
 * The directory fix (dirfix.c), as a table: the changes asked for and the shell line printed;
 * then each line is run by sh with $BASE set, and what it prints must be the LDIF for ldapmodify.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "dirfix.h"

/* After the changes: each word printed as it is (printf %s, not echo), a line each. */
#define LOOP "; do printf %s \"$l\"; echo; done"
#define TAIL " | ldapmodify -H \"$URI\" -D \"$ADMIN\" -W"

static const struct {
        const char *what;
        bool group;
        const char *name;
        struct slots_dirfix_change ch[2];
        size_t n;
        const char *line;       /* the printed line up to LOOP " | ldapmodify" */
        const char *ldif;       /* what sh makes of it, BASE=ou=p */
} rows[] = {
        { "an account's home", false, "slot02", { { SLOTS_DIRFIX_REPLACE, "homeDirectory", "/var/lib/s/home/slot02" } },
          1,
          "in the directory, not on this host: for l in 'dn: uid=slot02'\",$BASE\" 'changetype: modify' "
          "'replace: homeDirectory' 'homeDirectory: /var/lib/s/home/slot02'",
          "dn: uid=slot02,ou=p\nchangetype: modify\nreplace: homeDirectory\nhomeDirectory: /var/lib/s/home/slot02\n" },
        { "two attributes: a - between", false, "slot02",
          { { SLOTS_DIRFIX_REPLACE, "uidNumber", "60002" }, { SLOTS_DIRFIX_REPLACE, "gidNumber", "60002" } }, 2,
          "in the directory, not on this host: for l in 'dn: uid=slot02'\",$BASE\" 'changetype: modify' "
          "'replace: uidNumber' 'uidNumber: 60002' '-' 'replace: gidNumber' 'gidNumber: 60002'",
          "dn: uid=slot02,ou=p\nchangetype: modify\nreplace: uidNumber\nuidNumber: 60002\n-\nreplace: gidNumber\n"
          "gidNumber: 60002\n" },
        { "a group's member deleted", true, "slotshared", { { SLOTS_DIRFIX_DELETE, "memberUid", "svc" } }, 1,
          "in the directory, not on this host: for l in 'dn: cn=slotshared'\",$BASE\" 'changetype: modify' "
          "'delete: memberUid' 'memberUid: svc'",
          "dn: cn=slotshared,ou=p\nchangetype: modify\ndelete: memberUid\nmemberUid: svc\n" },
        { "a quote and a $ in a value stay as they are", false, "slot01",
          { { SLOTS_DIRFIX_REPLACE, "homeDirectory", "/srv/it's $HOME" } }, 1,
          "in the directory, not on this host: for l in 'dn: uid=slot01'\",$BASE\" 'changetype: modify' "
          "'replace: homeDirectory' 'homeDirectory: /srv/it'\\''s $HOME'",
          "dn: uid=slot01,ou=p\nchangetype: modify\nreplace: homeDirectory\nhomeDirectory: /srv/it's $HOME\n" },
        { "a backslash stays one backslash", false, "slot01",
          { { SLOTS_DIRFIX_REPLACE, "loginShell", "/opt/a\\nb\\\\c" } }, 1,
          "in the directory, not on this host: for l in 'dn: uid=slot01'\",$BASE\" 'changetype: modify' "
          "'replace: loginShell' 'loginShell: /opt/a\\nb\\\\c'",
          "dn: uid=slot01,ou=p\nchangetype: modify\nreplace: loginShell\nloginShell: /opt/a\\nb\\\\c\n" },
        { "a quote, a backslash and a double quote together", false, "slot01",
          { { SLOTS_DIRFIX_REPLACE, "loginShell", "/o'\\\"`x`" } }, 1,
          "in the directory, not on this host: for l in 'dn: uid=slot01'\",$BASE\" 'changetype: modify' "
          "'replace: loginShell' 'loginShell: /o'\\''\\\"`x`'",
          "dn: uid=slot01,ou=p\nchangetype: modify\nreplace: loginShell\nloginShell: /o'\\\"`x`\n" },
        { "a leading space: base64", false, "slot01", { { SLOTS_DIRFIX_REPLACE, "loginShell", " /bin/sh" } }, 1,
          "in the directory, not on this host: for l in 'dn: uid=slot01'\",$BASE\" 'changetype: modify' "
          "'replace: loginShell' 'loginShell:: IC9iaW4vc2g='",
          "dn: uid=slot01,ou=p\nchangetype: modify\nreplace: loginShell\nloginShell:: IC9iaW4vc2g=\n" },
        { "a newline or a non-ASCII byte: base64", false, "slot01",
          { { SLOTS_DIRFIX_REPLACE, "loginShell", "/a\nb\xc3\xa9" } }, 1,
          "in the directory, not on this host: for l in 'dn: uid=slot01'\",$BASE\" 'changetype: modify' "
          "'replace: loginShell' 'loginShell:: L2EKYsOp'",
          "dn: uid=slot01,ou=p\nchangetype: modify\nreplace: loginShell\nloginShell:: L2EKYsOp\n" },
        { "a delete of every value", false, "slot04", { { SLOTS_DIRFIX_DELETE, "userPassword", NULL } }, 1,
          "in the directory, not on this host: for l in 'dn: uid=slot04'\",$BASE\" 'changetype: modify' "
          "'delete: userPassword'",
          "dn: uid=slot04,ou=p\nchangetype: modify\ndelete: userPassword\n" },
};

/* Runs cmd with sh, BASE=ou=p, into out (at most size - 1 bytes). */
static void run_sh(const char *cmd, char *out, size_t size)
{
        char *full;
        FILE *p;
        size_t n;

        assert_true(asprintf(&full, "BASE=ou=p; %s", cmd) > 0);
        p = popen(full, "r");
        assert_non_null(p);
        n = fread(out, 1, size - 1, p);
        out[n] = '\0';
        assert_int_equal(pclose(p), 0);
        free(full);
}

static void test_rows(void **state)
{
        (void) state;
        for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
                struct strbuf f = { 0 };
                const char *s, *cut;
                char *cmd, *want, out[512];

                slots_dirfix(&f, rows[i].group, rows[i].name, rows[i].ch, rows[i].n);
                assert_false(f.oom);
                s = strbuf_str(&f);
                cut = strstr(s, TAIL);
                if (!cut)
                        fail_msg("%s: no \"%s\" in %s", rows[i].what, TAIL, s);
                cmd = strndup(s, (size_t) (cut - s));
                assert_true(asprintf(&want, "%s%s", rows[i].line, LOOP) > 0);
                if (strcmp(cmd, want) != 0)
                        fail_msg("%s: got\n%s\nwant\n%s", rows[i].what, cmd, want);
                /* Nothing but the values holds a backslash: the commands' output escapes it. */
                if (!strchr(rows[i].line, '\\'))
                        assert_null(strchr(s, '\\'));
                assert_non_null(strstr(cut, "$BASE: the base the pool was loaded under"));
                run_sh(strstr(cmd, "for l in "), out, sizeof(out));
                if (strcmp(out, rows[i].ldif) != 0)
                        fail_msg("%s: sh printed\n%s\nwant\n%s", rows[i].what, out, rows[i].ldif);
                free(cmd);
                free(want);
                strbuf_free(&f);
        }
}

static void test_load(void **state)
{
        struct strbuf f = { 0 };

        (void) state;
        slots_dirfix_load(&f);
        assert_non_null(strstr(strbuf_str(&f), "slots-provision --ldif \"$BASE\" | ldapadd"));
        strbuf_free(&f);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_rows),
                cmocka_unit_test(test_load),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
