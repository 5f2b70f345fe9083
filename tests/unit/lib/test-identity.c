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

static const struct slots_subid r100k = { 100000, 65536, NULL, 0 }, r300k = { 300000, 10, NULL, 0 };
static const struct slots_subids none = { 0 }, one_u = { (struct slots_subid *) &r100k, 1 },
                                 two_u[1] = { { (struct slots_subid[]) { { 100000, 65536, NULL, 0 }, { 300000, 10, NULL, 0 } }, 2 } };
static const struct slots_subids one_g = { (struct slots_subid *) &r300k, 1 };
/* ops1's range of useradd's defaults, holding slot03's uid and gid 100003. */
static const struct slots_subids ops1_u = { (struct slots_subid[]) { { 100000, 65536, (char *) "ops1", 4 } }, 1 },
                                 uid_g = { (struct slots_subid[]) { { 100000, 65536, (char *) "1000", 2 } }, 1 };
#define NAMES(...) (const struct slots_identity_name[]) { __VA_ARGS__ }

#define G(...) (const struct slots_identity_group[]) { __VA_ARGS__ }
#define OWN { "slot03", true, false }
#define SHARED { "vsshared", false, false }
#define LOCAL(g) { g, false, false }
#define DIRGROUP(g) { g, false, true }
/* dirfix.c's ldapmodify line for the entry dn with the changes ch (shell words). */
#define LDIF(dn, ch)                                                                                    \
        "in the directory, not on this host: for l in '" dn "'\",$BASE\" 'changetype: modify' " ch          \
        "; do printf %s \"$l\"; echo; done | ldapmodify -H \"$URI\" -D \"$ADMIN\" -W ($BASE: the base the "      \
        "pool was loaded under (slots-provision --ldif $BASE); $URI, $ADMIN: the directory's address and a DN "  \
        "that may write it)"

/* Each row: the facts, and for each kind the detail and the fix expected (NULL: no problem). */
static const struct {
        const char *what;
        const char *shell, *hash;       /* the shadow entry's field, beside "x" in passwd */
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
        { "another owner's ranges hold its uid and gid", NOLOGIN, "!", G(OWN, SHARED), 2, &ops1_u, &uid_g, false,
          { [SLOTS_IDENT_SUBIDS] = { "ops1's subordinate uids 100000-165535 (/etc/subuid line 4) hold slot03's uid "
                                     "100003: through newuidmap ops1 runs as slot03; 1000's subordinate gids "
                                     "100000-165535 (/etc/subgid line 2) hold slot03's gid 100003: through newgidmap "
                                     "1000 runs as slot03",
                                     "usermod --del-subuids 100000-165535 ops1 && "
                                     "sed -i '2d' /etc/subgid (the range of uid 1000)" } } },
        { "in sudo and the service's group", NOLOGIN, "!", G(OWN, SHARED, LOCAL("sudo"), LOCAL("vstudio")),
          4, &none, &none, false,
          { [SLOTS_IDENT_GROUPS] = { "slot03 is a member of sudo, vstudio: a slot belongs to no group but its own "
                                     "and vsshared",
                                     "gpasswd -d slot03 sudo && gpasswd -d slot03 vstudio" } } },
        { "listed as a member of its own group", NOLOGIN, "!", G(OWN, LOCAL("slot03"), SHARED), 3, &none, &none,
          false, { { 0 } } },
        { "a foreign primary group", NOLOGIN, "!", G({ "users", true, false }, SHARED), 2, &none, &none, false,
          { [SLOTS_IDENT_GROUPS] = { "primary group is users, not slot03", "usermod -g slot03 slot03" } } },
        { "in a directory's group, in the directory", NOLOGIN, "!", G(OWN, DIRGROUP("adm")), 2, &none, &none, true,
          { [SLOTS_IDENT_GROUPS] = { "slot03 is a member of adm: a slot belongs to no group but its own and "
                                     "vsshared",
                                     LDIF("dn: cn=adm", "'delete: memberUid' 'memberUid: slot03'") } } },
        { "local, in a directory's group: removed there", NOLOGIN, "!", G(OWN, SHARED, DIRGROUP("staff")), 3, &none,
          &none, false,
          { [SLOTS_IDENT_GROUPS] = { "slot03 is a member of staff: a slot belongs to no group but its own and "
                                     "vsshared",
                                     LDIF("dn: cn=staff", "'delete: memberUid' 'memberUid: slot03'") } } },
        { "in the directory, in a local group: gpasswd", NOLOGIN, "!", G(OWN, LOCAL("sudo")), 2, &none, &none, true,
          { [SLOTS_IDENT_GROUPS] = { "slot03 is a member of sudo: a slot belongs to no group but its own and "
                                     "vsshared", "gpasswd -d slot03 sudo" } } },
        { "a local and a directory's group: each where it lives", NOLOGIN, "!",
          G(OWN, LOCAL("sudo"), DIRGROUP("it's")), 3, &none, &none, false,
          { [SLOTS_IDENT_GROUPS] = { "slot03 is a member of sudo, it's: a slot belongs to no group but its own and "
                                     "vsshared",
                                     "gpasswd -d slot03 sudo && "
                                     LDIF("dn: cn=it'\\''s", "'delete: memberUid' 'memberUid: slot03'") } } },
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
          { [SLOTS_IDENT_PASSWORD] = { "slot03 has an empty password field in its shadow entry: it needs no password at all",
                                       "usermod -L slot03" } } },
        { "a password in the directory", NOLOGIN, "$6$a$b", G(OWN, SHARED), 2, &none, &none, true,
          { [SLOTS_IDENT_PASSWORD] = { "slot03 has a usable password hash ($6$) in its shadow entry: it could "
                                       "log in with a password", LDIF("dn: uid=slot03", "'delete: userPassword'") } } },
        { "a shell drift in the directory", "/bin/bash", "!", G(OWN, SHARED), 2, &none, &none, true,
          { [SLOTS_IDENT_SHELL] = { "slot03 has shell /bin/bash, configured /usr/sbin/nologin",
                                    LDIF("dn: uid=slot03", "'replace: loginShell' 'loginShell: /usr/sbin/nologin'")
                                    ", or set \"shell\" in the config" } } },
        { "a shell drift", "/bin/bash", "!", G(OWN, SHARED), 2, &none, &none, false,
          { [SLOTS_IDENT_SHELL] = { "slot03 has shell /bin/bash, configured /usr/sbin/nologin",
                                    "usermod -s /usr/sbin/nologin slot03" } } },
        { "everything at once", "/bin/sh", "", G(OWN, LOCAL("sudo")), 2, &one_u, &none, false,
          { [SLOTS_IDENT_SUBIDS] = { "slot03 has subordinate uids 100000-165535 (/etc/subuid): in a user "
                                     "namespace of its own it runs processes under other ids",
                                     "usermod --del-subuids 100000-165535 slot03" },
            [SLOTS_IDENT_GROUPS] = { "slot03 is a member of sudo: a slot belongs to no group but its own and "
                                     "vsshared", "gpasswd -d slot03 sudo" },
            [SLOTS_IDENT_PASSWORD] = { "slot03 has an empty password field in its shadow entry: it needs no password at all",
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
                        .name = "slot03", .shell = rows[i].shell, .want_shell = NOLOGIN,
                        .passwd_field = rows[i].hash ? "x" : NULL, .shadow_field = rows[i].hash,
                        .shadow_known = rows[i].hash != NULL,
                        .groups = rows[i].groups, .n_groups = rows[i].n_groups, .shared = "vsshared",
                        .subuid = rows[i].subuid, .subgid = rows[i].subgid, .directory = rows[i].directory,
                        .uid = 100003, .gid = 100003, .member_ok = "vstudio",
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

/* The other names of a slot's ids and its group's members: each row the names, and the verdict's two kinds. */
static const struct {
        const char *what;
        const char *want[SLOTS_IDENT_N][2];
        const struct slots_identity_name *uid_names, *gid_names, *members;
        size_t n_uid_names, n_gid_names, n_members;
} name_rows[] = {
        { "its own names only; the service a member", { { 0 } }, NAMES({ "slot03", "/etc/passwd" }, { "slot03", NULL }), NAMES({ "slot03", "/etc/group" }),
          NAMES({ "vstudio", "/etc/group" }, { "vstudio", "/etc/gshadow" }, { "slot03", "/etc/gshadow" }), 2, 1, 3 },
        { "another name of its uid and of its gid", { [SLOTS_IDENT_ALIASES] = { "account ops2 has slot03's uid 100003 too (/etc/passwd): to the kernel it is "
                                      "slot03; account dirops has slot03's uid 100003 too (the name service): to the "
                                      "kernel it is slot03; group g2 has slot03's gid 100003 too (/etc/group): to "
                                      "the kernel it is slot03",
                                      "userdel ops2 && set uidNumber of dirops to a free uid in the directory && "
                                      "groupdel -f g2" } },
          NAMES({ "slot03", "/etc/passwd" }, { "ops2", "/etc/passwd" }, { "dirops", NULL }),
          NAMES({ "g2", "/etc/group" }, { "slot03", "/etc/group" }), NULL, 3, 2, 0 },
        { "a member only gshadow lists, and one of the directory", { [SLOTS_IDENT_MEMBERS] = { "ops1 is a member of the group slot03 (/etc/gshadow): through sg or newgrp it "
                                      "runs as slot03's group; eve is a member of the group slot03 (the directory): "
                                      "through sg or newgrp it runs as slot03's group",
                                      "gpasswd -d ops1 slot03 && "
                                      LDIF("dn: cn=slot03", "'delete: memberUid' 'memberUid: eve'") } },
          NULL, NULL, NAMES({ "vstudio", "/etc/group" }, { "ops1", "/etc/gshadow" }, { "eve", NULL }), 0, 0, 3 },
};

static void test_judge_names(void **state)
{
        int failures = 0;

        (void) state;
        for (size_t i = 0; i < N_ELEM(name_rows); i++) {
                const struct slots_identity id = {
                        .name = "slot03", .shared = "vsshared", .uid = 100003, .gid = 100003, .member_ok = "vstudio",
                        .uid_names = name_rows[i].uid_names, .n_uid_names = name_rows[i].n_uid_names,
                        .gid_names = name_rows[i].gid_names, .n_gid_names = name_rows[i].n_gid_names,
                        .members = name_rows[i].members, .n_members = name_rows[i].n_members,
                };
                struct slots_identity_verdict v;

                if (slots_identity_judge(&id, &v) != 0) {
                        ROW_FAIL("%s: no verdict", name_rows[i].what);
                        continue;
                }
                for (int k = 0; k < SLOTS_IDENT_N; k++)
                        if (!same(v.p[k].detail, name_rows[i].want[k][0]) || !same(v.p[k].fix, name_rows[i].want[k][1]))
                                ROW_FAIL("%s: kind %d: \"%s\" / \"%s\"", name_rows[i].what, k,
                                         v.p[k].detail ? v.p[k].detail : "(none)", v.p[k].fix ? v.p[k].fix : "(none)");
                slots_identity_verdict_free(&v);
        }
        if (failures)
                fail_msg("%d of %zu rows failed", failures, N_ELEM(name_rows));
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
                { "ab01234567890", M, true }, { "ab01234567890", N, true },
                /* pam_unix's own DES and bigcrypt: 13 + 11k characters of the alphabet, libxcrypt not asked. */
                { "ab01234567890cdefghijklm", N, true }, { "ab01234567890c", N, false },
                { "ab-1234567890", U, false }, { "ab01234567890,B.22", N, true },
                { "ab01234567890cdefghijklm,x", N, true }, { "ab01234567890c,x", N, false },
                /* pam_unix's own MD5. */
                { "$1$salt$hash", N, true }, { "$5$salt$hash", N, false },
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

/* Which field pam_unix checks: the passwd field unless it says shadow, whatever shadow holds. */
static void test_password_source(void **state)
{
        static const struct {
                const char *what, *pw, *sp;
                bool sp_known;
                enum slots_hash_method method;
                enum slots_pw_source src;
                const char *detail;
        } p[] = {
                { "a hash in passwd beside ! in shadow", "abJnggxhB/yWI", "!", true, SLOTS_HASH_METHOD, SLOTS_PW_PASSWD,
                  "slot03 has a usable password hash (DES) in its passwd entry: it could log in with a password "
                  "(pam_unix reads the passwd field, not the shadow entry, unless it is x)" },
                { "a $6$ hash in passwd, shadow not known", "$6$s$h", NULL, false, SLOTS_HASH_UNASKED, SLOTS_PW_PASSWD,
                  "slot03 has a usable password hash ($6$) in its passwd entry: it could log in with a password" },
                { "an empty passwd field beside !", "", "!", true, SLOTS_HASH_UNASKED, SLOTS_PW_PASSWD,
                  "slot03 has an empty password field in its passwd entry: it needs no password at all (pam_unix "
                  "reads the passwd field, not the shadow entry, unless it is x)" },
                { "! in passwd beside a hash in shadow", "!", "$6$s$h", true, SLOTS_HASH_UNASKED, SLOTS_PW_PASSWD, NULL },
                { "x and a locked shadow entry", "x", "!", true, SLOTS_HASH_UNASKED, SLOTS_PW_SHADOW, NULL },
                { "x and no shadow entry", "x", NULL, true, SLOTS_HASH_UNASKED, SLOTS_PW_NO_SHADOW, NULL },
                { "x, shadow not known", "x", NULL, false, SLOTS_HASH_UNASKED, SLOTS_PW_UNKNOWN, NULL },
                { "##slot03 says shadow", "##slot03", "$6$s$h", true, SLOTS_HASH_METHOD, SLOTS_PW_SHADOW,
                  "slot03 has a usable password hash ($6$) in its shadow entry: it could log in with a password" },
                { "##other is a password field", "##other", "$6$s$h", true, SLOTS_HASH_NO_METHOD, SLOTS_PW_PASSWD, NULL },
                { "*NP* says shadow", "*NP*", "", true, SLOTS_HASH_UNASKED, SLOTS_PW_SHADOW,
                  "slot03 has an empty password field in its shadow entry: it needs no password at all" },
                { "passwd not known: shadow", NULL, "$6$s$h", true, SLOTS_HASH_UNASKED, SLOTS_PW_SHADOW,
                  "slot03 has a usable password hash ($6$) in its shadow entry: it could log in with a password" },
                { "x, libxcrypt knows no method", "x", "abc", true, SLOTS_HASH_NO_METHOD, SLOTS_PW_SHADOW, NULL },
        };
        int failures = 0;

        (void) state;
        for (size_t i = 0; i < N_ELEM(p); i++) {
                const struct slots_identity id = { .name = "slot03", .passwd_field = p[i].pw, .shadow_field = p[i].sp,
                                                   .shadow_known = p[i].sp_known, .hash_method = p[i].method };
                struct slots_identity_verdict v;
                enum slots_pw_source src;

                slots_identity_password(&id, &src);
                if (src != p[i].src)
                        ROW_FAIL("%s: source %d, expected %d", p[i].what, (int) src, (int) p[i].src);
                if (slots_identity_judge(&id, &v) != 0) {
                        ROW_FAIL("%s: no verdict", p[i].what);
                        continue;
                }
                if (!same(v.p[SLOTS_IDENT_PASSWORD].detail, p[i].detail) || v.n != (p[i].detail != NULL))
                        ROW_FAIL("%s: \"%s\"", p[i].what, v.p[SLOTS_IDENT_PASSWORD].detail ?
                                 v.p[SLOTS_IDENT_PASSWORD].detail : "(none)");
                if (v.p[SLOTS_IDENT_PASSWORD].detail && (strstr(v.p[SLOTS_IDENT_PASSWORD].detail, "abJ") ||
                                                         strstr(v.p[SLOTS_IDENT_PASSWORD].detail, "$s$h")))
                        ROW_FAIL("%s: the hash is printed", p[i].what);
                slots_identity_verdict_free(&v);
        }
        if (failures)
                fail_msg("%d of %zu rows failed", failures, N_ELEM(p));
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

                if (slots_subid_parse(texts[i].text, "slot03", 1003, -1, &s) != 0) {
                        ROW_FAIL("%s: no result", texts[i].what);
                        continue;
                }
                if (s.n != texts[i].n)
                        ROW_FAIL("%s: %zu ranges, expected %zu", texts[i].what, s.n, texts[i].n);
                for (size_t j = 0; j < s.n && j < texts[i].n; j++)
                        if (s.r[j].start != texts[i].start[j] || s.r[j].count != texts[i].count[j] || s.r[j].owner)
                                ROW_FAIL("%s: range %zu is %lu+%lu", texts[i].what, j, s.r[j].start, s.r[j].count);
                slots_subids_free(&s);
        }
        if (failures)
                fail_msg("%d of %zu rows failed", failures, N_ELEM(texts));
}

/* Another owner's range is kept when it holds the id asked about (the slot's uid or gid), with its owner and line. */
static const struct {
        const char *what, *text;
        size_t n;
        unsigned long start[2], count[2];
        long cover;
        const char *owner[2];
        unsigned line[2];
} foreign[] = {
        { "another owner's range holding the id", "ops1:100000:65536\nops2:200000:65536\nslot03:5:6\n", 2,
          { 100000, 5 }, { 65536, 6 }, 100003, { "ops1", NULL }, { 1, 3 } },
        { "one short of the id, and the id its last", "ops1:100000:3\nops2:100003:1\n", 1, { 100003 }, { 1 }, 100003,
          { "ops2" }, { 2 } },
        { "an owner by its uid", "1000:100000:65536\n", 1, { 100000 }, { 65536 }, 165535, { "1000" }, { 1 } },
};

static void test_subid_foreign(void **state)
{
        int failures = 0;

        (void) state;
        for (size_t i = 0; i < N_ELEM(foreign); i++) {
                struct slots_subids s;

                if (slots_subid_parse(foreign[i].text, "slot03", 1003, foreign[i].cover, &s) != 0) {
                        ROW_FAIL("%s: no result", foreign[i].what);
                        continue;
                }
                if (s.n != foreign[i].n)
                        ROW_FAIL("%s: %zu ranges, expected %zu", foreign[i].what, s.n, foreign[i].n);
                for (size_t j = 0; j < s.n && j < foreign[i].n; j++)
                        if (s.r[j].start != foreign[i].start[j] || s.r[j].count != foreign[i].count[j] ||
                            !same(s.r[j].owner, foreign[i].owner[j]) || s.r[j].line != foreign[i].line[j])
                                ROW_FAIL("%s: range %zu is %lu+%lu of %s on line %u", foreign[i].what, j, s.r[j].start,
                                         s.r[j].count, s.r[j].owner ? s.r[j].owner : "(own)", s.r[j].line);
                slots_subids_free(&s);
        }
        if (failures)
                fail_msg("%d of %zu rows failed", failures, N_ELEM(foreign));
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
        assert_int_equal(slots_subid_read(rootfd, "/etc/subuid", "slot03", 1003, -1, &s, &e), 0);
        assert_int_equal(s.n, 0);
        snprintf(path, sizeof(path), "%s/etc", dir);
        assert_int_equal(mkdir(path, 0755), 0);
        snprintf(path, sizeof(path), "%s/etc/subuid", dir);
        f = fopen(path, "w");
        assert_non_null(f);
        fputs("root:1:2\nslot03:100000:65536\n", f);
        fclose(f);
        assert_int_equal(slots_subid_read(rootfd, "/etc/subuid", "slot03", 1003, -1, &s, &e), 0);
        assert_int_equal(s.n, 1);
        assert_int_equal(s.r[0].start, 100000);
        slots_subids_free(&s);
        /* A folder where the file should be: a failure that names it, no ranges. */
        snprintf(path, sizeof(path), "%s/etc/subgid", dir);
        assert_int_equal(mkdir(path, 0755), 0);
        assert_true(slots_subid_read(rootfd, "/etc/subgid", "slot03", 1003, -1, &s, &e) < 0);
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
                cmocka_unit_test(test_judge_names),
                cmocka_unit_test(test_subid_parse),
                cmocka_unit_test(test_subid_foreign),
                cmocka_unit_test(test_subid_read),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
