/*
 * A slot account's identity verdict (identity.c): for what is known of an account, the
 * problems of each kind with their fix; the subuid(5)/subgid(5) text as the ranges of one
 * account; the reader inside an image root.
 */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "identity.h"
#include "unit.h"

#define NOLOGIN "/usr/sbin/nologin"

static const struct slots_subid r100k = { 100000, 65536 }, r300k = { 300000, 10 };
static const struct slots_subids none = { 0 }, one_u = { (struct slots_subid *) &r100k, 1 },
                                 two_u[1] = { { (struct slots_subid[]) { { 100000, 65536 }, { 300000, 10 } }, 2 } };
static const struct slots_subids one_g = { (struct slots_subid *) &r300k, 1 };

#define G(...) (const struct slots_identity_group[]) { __VA_ARGS__ }
#define OWN { "slot03", true }
#define SHARED { "vsshared", false }

/* Each row: the facts, and for each kind the detail and the fix expected (NULL: no problem). */
static const struct {
        const char *what;
        const char *shell, *hash;
        const struct slots_identity_group *groups;
        size_t n_groups;
        const struct slots_subids *subuid, *subgid;
        bool directory;
        const char *want[SLOTS_IDENT_N][2];
} rows[] = {
        { "a good slot", NOLOGIN, "!", G(OWN, SHARED), 2, &none, &none, false, { { 0 } } },
        { "locked with a hash kept behind !", NOLOGIN, "!$6$salt$hash", G(OWN, SHARED), 2, &none, &none, false,
          { { 0 } } },
        { "locked with *", NOLOGIN, "*", G(OWN), 1, &none, &none, false, { { 0 } } },
        { "nothing known: no problem said", NULL, NULL, G(OWN), 1, NULL, NULL, false, { { 0 } } },
        { "a subordinate uid range", NOLOGIN, "!", G(OWN, SHARED), 2, &one_u, &none, false,
          { [SLOTS_IDENT_SUBIDS] = { "slot03 has subordinate uids 100000-165535 (/etc/subuid): in a user "
                                     "namespace of its own it runs processes under other ids",
                                     "usermod --del-subuids 100000-165535 slot03" } } },
        { "uid and gid ranges, two of uids", NOLOGIN, "!", G(OWN, SHARED), 2, two_u, &one_g, false,
          { [SLOTS_IDENT_SUBIDS] = { "slot03 has subordinate uids 100000-165535 300000-300009 (/etc/subuid) and "
                                     "gids 300000-300009 (/etc/subgid): in a user namespace of its own it runs "
                                     "processes under other ids",
                                     "usermod --del-subuids 100000-165535 --del-subuids 300000-300009 "
                                     "--del-subgids 300000-300009 slot03" } } },
        { "only a gid range", NOLOGIN, "!", G(OWN, SHARED), 2, &none, &one_g, false,
          { [SLOTS_IDENT_SUBIDS] = { "slot03 has subordinate gids 300000-300009 (/etc/subgid): in a user "
                                     "namespace of its own it runs processes under other ids",
                                     "usermod --del-subgids 300000-300009 slot03" } } },
        { "in sudo and the service's group", NOLOGIN, "!", G(OWN, SHARED, { "sudo", false }, { "vstudio", false }),
          4, &none, &none, false,
          { [SLOTS_IDENT_GROUPS] = { "slot03 is a member of sudo, vstudio: a slot belongs to no group but its own "
                                     "and vsshared",
                                     "gpasswd -d slot03 sudo && gpasswd -d slot03 vstudio" } } },
        { "listed as a member of its own group", NOLOGIN, "!", G(OWN, { "slot03", false }, SHARED), 3, &none, &none,
          false, { { 0 } } },
        { "a foreign primary group", NOLOGIN, "!", G({ "users", true }, SHARED), 2, &none, &none, false,
          { [SLOTS_IDENT_GROUPS] = { "primary group is users, not slot03", "usermod -g slot03 slot03" } } },
        { "in a group, in the directory", NOLOGIN, "!", G(OWN, { "adm", false }), 2, &none, &none, true,
          { [SLOTS_IDENT_GROUPS] = { "slot03 is a member of adm: a slot belongs to no group but its own and "
                                     "vsshared",
                                     "remove slot03 from the members of adm in the directory" } } },
        { "a usable hash", NOLOGIN, "$y$j9T$salt$hash", G(OWN, SHARED), 2, &none, &none, false,
          { [SLOTS_IDENT_PASSWORD] = { "slot03 has a usable password hash ($y$) in its shadow entry: it could "
                                       "log in with a password", "usermod -L slot03" } } },
        { "a field libxcrypt was not asked about", NOLOGIN, "x", G(OWN, SHARED), 2, &none, &none, false,
          { [SLOTS_IDENT_PASSWORD] = { "slot03 has a usable password hash (DES) in its shadow entry: it could "
                                       "log in with a password", "usermod -L slot03" } } },
        { "a long method name is cut", NOLOGIN, "$abcdefghijk$x", G(OWN, SHARED), 2, &none, &none, false,
          { [SLOTS_IDENT_PASSWORD] = { "slot03 has a usable password hash ($abcdefgh$) in its shadow entry: it "
                                       "could log in with a password", "usermod -L slot03" } } },
        { "an empty password field", NOLOGIN, "", G(OWN, SHARED), 2, &none, &none, false,
          { [SLOTS_IDENT_PASSWORD] = { "slot03 has an empty password field: it needs no password at all",
                                       "usermod -L slot03" } } },
        { "a password in the directory", NOLOGIN, "$6$a$b", G(OWN, SHARED), 2, &none, &none, true,
          { [SLOTS_IDENT_PASSWORD] = { "slot03 has a usable password hash ($6$) in its shadow entry: it could "
                                       "log in with a password", "lock the password of slot03 in the directory" } } },
        { "a shell drift in the directory", "/bin/bash", "!", G(OWN, SHARED), 2, &none, &none, true,
          { [SLOTS_IDENT_SHELL] = { "slot03 has shell /bin/bash, configured /usr/sbin/nologin",
                                    "set loginShell /usr/sbin/nologin on slot03 in the directory, or set "
                                    "\"shell\" in the config" } } },
        { "a shell drift", "/bin/bash", "!", G(OWN, SHARED), 2, &none, &none, false,
          { [SLOTS_IDENT_SHELL] = { "slot03 has shell /bin/bash, configured /usr/sbin/nologin",
                                    "usermod -s /usr/sbin/nologin slot03" } } },
        { "everything at once", "/bin/sh", "", G(OWN, { "sudo", false }), 2, &one_u, &none, false,
          { [SLOTS_IDENT_SUBIDS] = { "slot03 has subordinate uids 100000-165535 (/etc/subuid): in a user "
                                     "namespace of its own it runs processes under other ids",
                                     "usermod --del-subuids 100000-165535 slot03" },
            [SLOTS_IDENT_GROUPS] = { "slot03 is a member of sudo: a slot belongs to no group but its own and "
                                     "vsshared", "gpasswd -d slot03 sudo" },
            [SLOTS_IDENT_PASSWORD] = { "slot03 has an empty password field: it needs no password at all",
                                       "usermod -L slot03" },
            [SLOTS_IDENT_SHELL] = { "slot03 has shell /bin/sh, configured /usr/sbin/nologin",
                                    "usermod -s /usr/sbin/nologin slot03" } } },
};

static bool same(const char *a, const char *b)
{
        return (!a && !b) || (a && b && strcmp(a, b) == 0);
}

static void test_judge(void **state)
{
        int failures = 0;

        (void) state;
        for (size_t i = 0; i < N_ELEM(rows); i++) {
                const struct slots_identity id = {
                        .name = "slot03", .shell = rows[i].shell, .want_shell = NOLOGIN, .hash = rows[i].hash,
                        .groups = rows[i].groups, .n_groups = rows[i].n_groups, .shared = "vsshared",
                        .subuid = rows[i].subuid, .subgid = rows[i].subgid, .directory = rows[i].directory,
                };
                struct slots_identity_verdict v;
                size_t n = 0;

                if (slots_identity_judge(&id, &v) != 0) {
                        ROW_FAIL("%s: no verdict", rows[i].what);
                        continue;
                }
                for (int k = 0; k < SLOTS_IDENT_N; k++) {
                        n += rows[i].want[k][0] != NULL;
                        if (!same(v.p[k].detail, rows[i].want[k][0]) || !same(v.p[k].fix, rows[i].want[k][1]))
                                ROW_FAIL("%s: kind %d: \"%s\" / \"%s\"", rows[i].what, k,
                                         v.p[k].detail ? v.p[k].detail : "(none)", v.p[k].fix ? v.p[k].fix : "(none)");
                }
                if (v.n != n)
                        ROW_FAIL("%s: %zu problems, expected %zu", rows[i].what, v.n, n);
                slots_identity_verdict_free(&v);
        }
        if (failures)
                fail_msg("%d of %zu rows failed", failures, N_ELEM(rows));
}

/* The password field's rule on both sides: '!' and '*' lock, a field no method reads too. */
#define U SLOTS_HASH_UNASKED
#define M SLOTS_HASH_METHOD
#define N SLOTS_HASH_NO_METHOD
static void test_password_usable(void **state)
{
        static const struct {
                const char *hash;
                enum slots_hash_method method;
                bool usable;
        } p[] = {
                { "!", U, false }, { "!!", U, false }, { "*", U, false }, { "!*", U, false },
                { "*LK*", U, false }, { "!$6$a$b", M, false }, { "*", M, false },
                { "", U, true }, { "", N, true }, { "$6$a$b", U, true }, { "$6$a$b", M, true },
                { "x", U, true }, { "x", N, false }, { "NP", N, false }, { " !", U, true },
                { "ab01234567890", M, true },
        };
        int failures = 0;

        (void) state;
        for (size_t i = 0; i < N_ELEM(p); i++)
                if (slots_identity_password_usable(p[i].hash, p[i].method) != p[i].usable)
                        ROW_FAIL("\"%s\" (method %d): usable %d, expected %d", p[i].hash, (int) p[i].method, !p[i].usable,
                                 p[i].usable);
        if (failures)
                fail_msg("%d rows failed", failures);
}

/* The password's source and libxcrypt's word: the passwd field is named, a field no method reads passes. */
static void test_password_source(void **state)
{
        struct slots_identity id = { .name = "slot03", .hash = "abJnggxhB/yWI", .hash_in_passwd = true,
                                     .hash_method = SLOTS_HASH_METHOD };
        struct slots_identity_verdict v;

        (void) state;
        assert_int_equal(slots_identity_judge(&id, &v), 0);
        assert_string_equal(v.p[SLOTS_IDENT_PASSWORD].detail, "slot03 has a usable password hash (DES) in its passwd "
                            "entry: it could log in with a password");
        assert_null(strstr(v.p[SLOTS_IDENT_PASSWORD].detail, "abJ"));
        slots_identity_verdict_free(&v);
        id.hash = "x";
        id.hash_method = SLOTS_HASH_NO_METHOD;
        assert_int_equal(slots_identity_judge(&id, &v), 0);
        assert_int_equal(v.n, 0);
        assert_null(v.p[SLOTS_IDENT_PASSWORD].detail);
        slots_identity_verdict_free(&v);
}

/* subuid(5) text: the account's lines by name or by uid, in order; everything else skipped. */
static const struct {
        const char *what, *text;
        size_t n;
        unsigned long start[2], count[2];
} texts[] = {
        { "empty", "", 0, { 0 }, { 0 } },
        { "by name", "slot03:100000:65536\n", 1, { 100000 }, { 65536 } },
        { "by uid, no newline at the end", "1003:200000:10", 1, { 200000 }, { 10 } },
        { "name and uid, others skipped", "alice:1:2\nslot03:5:6\nslot030:7:8\nslot0:9:9\n1003:11:12\n", 2,
          { 5, 11 }, { 6, 12 } },
        { "count 0 is no range", "slot03:100000:0\n", 0, { 0 }, { 0 } },
        { "bad numbers skipped", "slot03:x:1\nslot03:1:\nslot03::1\nslot03:1:-1\nslot03:99999999999:1\n", 0,
          { 0 }, { 0 } },
        { "too few fields, comments", "slot03:1\n# slot03:1:2\nslot03\n\n", 0, { 0 }, { 0 } },
        { "a prefix of the uid is not the uid", "10030:1:2\n100:3:4\n", 0, { 0 }, { 0 } },
        { "the highest count", "slot03:0:4294967295\n", 1, { 0 }, { 4294967295UL } },
};

static void test_subid_parse(void **state)
{
        int failures = 0;

        (void) state;
        for (size_t i = 0; i < N_ELEM(texts); i++) {
                struct slots_subids s;

                if (slots_subid_parse(texts[i].text, "slot03", 1003, &s) != 0) {
                        ROW_FAIL("%s: no result", texts[i].what);
                        continue;
                }
                if (s.n != texts[i].n)
                        ROW_FAIL("%s: %zu ranges, expected %zu", texts[i].what, s.n, texts[i].n);
                for (size_t j = 0; j < s.n && j < texts[i].n; j++)
                        if (s.r[j].start != texts[i].start[j] || s.r[j].count != texts[i].count[j])
                                ROW_FAIL("%s: range %zu is %lu+%lu", texts[i].what, j, s.r[j].start, s.r[j].count);
                slots_subids_free(&s);
        }
        if (failures)
                fail_msg("%d of %zu rows failed", failures, N_ELEM(texts));
}

/* The reader inside an image root: a missing file is no range; a symlink out of the root is not followed. */
static void test_subid_read(void **state)
{
        char dir[] = "/tmp/test-identity.XXXXXX", path[256];
        struct slots_subids s;
        struct slots_error e;
        int rootfd;
        FILE *f;

        (void) state;
        assert_non_null(mkdtemp(dir));
        rootfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        assert_true(rootfd >= 0);
        slots_error_clear(&e);
        assert_int_equal(slots_subid_read(rootfd, "/etc/subuid", "slot03", 1003, &s, &e), 0);
        assert_int_equal(s.n, 0);
        snprintf(path, sizeof(path), "%s/etc", dir);
        assert_int_equal(mkdir(path, 0755), 0);
        snprintf(path, sizeof(path), "%s/etc/subuid", dir);
        f = fopen(path, "w");
        assert_non_null(f);
        fputs("root:1:2\nslot03:100000:65536\n", f);
        fclose(f);
        assert_int_equal(slots_subid_read(rootfd, "/etc/subuid", "slot03", 1003, &s, &e), 0);
        assert_int_equal(s.n, 1);
        assert_int_equal(s.r[0].start, 100000);
        slots_subids_free(&s);
        /* A folder where the file should be: a failure that names it, no ranges. */
        snprintf(path, sizeof(path), "%s/etc/subgid", dir);
        assert_int_equal(mkdir(path, 0755), 0);
        assert_true(slots_subid_read(rootfd, "/etc/subgid", "slot03", 1003, &s, &e) < 0);
        assert_int_equal(s.n, 0);
        assert_string_equal(e.object, "/etc/subgid");
        rmdir(path);
        snprintf(path, sizeof(path), "%s/etc/subuid", dir);
        unlink(path);
        snprintf(path, sizeof(path), "%s/etc", dir);
        rmdir(path);
        rmdir(dir);
        close(rootfd);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_judge),
                cmocka_unit_test(test_password_usable),
                cmocka_unit_test(test_password_source),
                cmocka_unit_test(test_subid_parse),
                cmocka_unit_test(test_subid_read),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
