/*
 * accountmap.c as tables: fake databases (the enumerations and the lookups by name wrapped at
 * link time, -Wl,--wrap=getpwent_r,...), each with nsswitch.conf's text, then queries with the
 * answer and how many NSS calls each made: an enumerated name asks NSS nothing, a name only a
 * directory holds is looked up by name, a failed lookup stays a failure, the first of two
 * entries of one name wins, and a slot's groups come from the group map only when it is all
 * there is (else from getgrouplist).
 */
#include <errno.h>
#include <grp.h>
#include <pwd.h>
#include <setjmp.h>
#include <shadow.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "accountmap.h"
#include "unit.h"

#define NONE ((size_t) -1)
#define MAXN 8

struct fpw {
        const char *name;
        uid_t uid;
        gid_t gid;
        bool big;               /* getpwent_r answers ERANGE below 4 KiB of buffer */
        const char *passwd;     /* the password field; NULL: "x" */
};

struct fgr {
        const char *name;
        gid_t gid;
        const char *mem[4];
};

struct fsp {
        const char *name, *hash;
};

/* One host: what the enumerations list, what only the lookups by name find (a directory). */
struct db {
        const char *nsswitch;
        struct fpw pw[MAXN];
        struct fgr gr[MAXN];
        struct fsp sp[MAXN];
        struct fpw dir_pw[MAXN];
        struct fgr dir_gr[MAXN];
        size_t pw_fail_at, gr_fail_at;  /* the enumeration fails (EIO) at this entry; NONE: never */
        const char *fail;               /* lookups by name (user or group) of this fail with EIO */
};

static const struct db *cur;
static size_t pw_pos, gr_pos, sp_pos;
static int nss_calls, grouplist_calls;

static size_t count_pw(const struct fpw *a)
{
        size_t n = 0;

        while (n < MAXN && a[n].name)
                n++;
        return n;
}

static size_t count_gr(const struct fgr *a)
{
        size_t n = 0;

        while (n < MAXN && a[n].name)
                n++;
        return n;
}

static void fill_pw(const struct fpw *f, struct passwd *pw)
{
        *pw = (struct passwd){ .pw_name = (char *) f->name, .pw_passwd = (char *) (f->passwd ? f->passwd : "x"),
                               .pw_uid = f->uid,
                               .pw_gid = f->gid, .pw_gecos = (char *) "", .pw_dir = (char *) "/home",
                               .pw_shell = (char *) "/usr/sbin/nologin" };
}

static void fill_gr(const struct fgr *f, struct group *gr)
{
        *gr = (struct group){ .gr_name = (char *) f->name, .gr_passwd = (char *) "x", .gr_gid = f->gid,
                              .gr_mem = (char **) f->mem };
}

void __wrap_setpwent(void);
void __wrap_endpwent(void);
void __wrap_setgrent(void);
void __wrap_endgrent(void);
void __wrap_setspent(void);
void __wrap_endspent(void);
int __wrap_getpwent_r(struct passwd *pw, char *buf, size_t size, struct passwd **res);
int __wrap_getgrent_r(struct group *gr, char *buf, size_t size, struct group **res);
int __wrap_getspent_r(struct spwd *sp, char *buf, size_t size, struct spwd **res);
int __wrap_getpwnam_r(const char *name, struct passwd *pw, char *buf, size_t size, struct passwd **res);
int __wrap_getgrnam_r(const char *name, struct group *gr, char *buf, size_t size, struct group **res);
int __wrap_getgrgid_r(gid_t gid, struct group *gr, char *buf, size_t size, struct group **res);
int __wrap_getgrouplist(const char *user, gid_t group, gid_t *groups, int *ngroups);

void __wrap_setpwent(void) { pw_pos = 0; }
void __wrap_endpwent(void) { }
void __wrap_setgrent(void) { gr_pos = 0; }
void __wrap_endgrent(void) { }
void __wrap_setspent(void) { sp_pos = 0; }
void __wrap_endspent(void) { }

int __wrap_getpwent_r(struct passwd *pw, char *buf, size_t size, struct passwd **res)
{
        (void) buf;
        *res = NULL;
        if (pw_pos == cur->pw_fail_at)
                return EIO;
        if (pw_pos >= count_pw(cur->pw))
                return ENOENT;
        if (cur->pw[pw_pos].big && size < 4096)
                return ERANGE;
        fill_pw(&cur->pw[pw_pos++], pw);
        *res = pw;
        return 0;
}

int __wrap_getgrent_r(struct group *gr, char *buf, size_t size, struct group **res)
{
        (void) buf;
        (void) size;
        *res = NULL;
        if (gr_pos == cur->gr_fail_at)
                return EIO;
        if (gr_pos >= count_gr(cur->gr))
                return ENOENT;
        fill_gr(&cur->gr[gr_pos++], gr);
        *res = gr;
        return 0;
}

int __wrap_getspent_r(struct spwd *sp, char *buf, size_t size, struct spwd **res)
{
        (void) buf;
        (void) size;
        *res = NULL;
        if (sp_pos >= MAXN || !cur->sp[sp_pos].name)
                return ENOENT;
        *sp = (struct spwd){ .sp_namp = (char *) cur->sp[sp_pos].name, .sp_pwdp = (char *) cur->sp[sp_pos].hash };
        sp_pos++;
        *res = sp;
        return 0;
}

/* By name: the enumerated entries first, then the directory's; the first match wins. */
int __wrap_getpwnam_r(const char *name, struct passwd *pw, char *buf, size_t size, struct passwd **res)
{
        (void) buf;
        (void) size;
        nss_calls++;
        *res = NULL;
        if (cur->fail && strcmp(name, cur->fail) == 0)
                return EIO;
        for (int d = 0; d < 2; d++) {
                const struct fpw *a = d ? cur->dir_pw : cur->pw;
                for (size_t i = 0; i < count_pw(a); i++)
                        if (strcmp(a[i].name, name) == 0) {
                                fill_pw(&a[i], pw);
                                *res = pw;
                                return 0;
                        }
        }
        return 0;
}

static int group_by(const char *name, gid_t gid, struct group *gr, struct group **res)
{
        nss_calls++;
        *res = NULL;
        if (name && cur->fail && strcmp(name, cur->fail) == 0)
                return EIO;
        for (int d = 0; d < 2; d++) {
                const struct fgr *a = d ? cur->dir_gr : cur->gr;
                for (size_t i = 0; i < count_gr(a); i++)
                        if (name ? strcmp(a[i].name, name) == 0 : a[i].gid == gid) {
                                fill_gr(&a[i], gr);
                                *res = gr;
                                return 0;
                        }
        }
        return 0;
}

int __wrap_getgrnam_r(const char *name, struct group *gr, char *buf, size_t size, struct group **res)
{
        (void) buf;
        (void) size;
        return group_by(name, 0, gr, res);
}

int __wrap_getgrgid_r(gid_t gid, struct group *gr, char *buf, size_t size, struct group **res)
{
        (void) buf;
        (void) size;
        return group_by(NULL, gid, gr, res);
}

/* What glibc answers: the primary group, then every group (enumerated or not) naming user. */
int __wrap_getgrouplist(const char *user, gid_t group, gid_t *groups, int *ngroups)
{
        gid_t all[2 * MAXN + 1];
        int n = 0;

        grouplist_calls++;
        all[n++] = group;
        for (int d = 0; d < 2; d++) {
                const struct fgr *a = d ? cur->dir_gr : cur->gr;
                for (size_t i = 0; i < count_gr(a); i++)
                        for (const char *const *m = a[i].mem; *m; m++) {
                                bool have = false;

                                for (int j = 0; j < n; j++)
                                        have |= all[j] == a[i].gid;
                                if (strcmp(*m, user) == 0 && !have)
                                        all[n++] = a[i].gid;
                        }
        }
        if (*ngroups < n) {
                *ngroups = n;
                return -1;
        }
        memcpy(groups, all, (size_t) n * sizeof(gid_t));
        *ngroups = n;
        return n;
}

/* ---- the hosts ---- */

#define FILES "passwd: files systemd\ngroup: files systemd\nshadow: files\n"
#define LDAP_LAST "passwd: files ldap\ngroup: files ldap\nshadow: files\n"
#define SSS_FIRST "passwd: sss files\ngroup: sss files\nshadow: sss files\n"
#define INIT_LDAP "passwd: files\ngroup: files\ninitgroups: files ldap\nshadow: files\n"
#define ACTIONS "passwd: files [NOTFOUND=return] ldap\ngroup: files [NOTFOUND=return] ldap\n"

/* A pool of two on files: slot02 also in "extra"; the directory holds slot09 and a group naming slot01. */
#define POOL(ns, pwfail, grfail)                                                                   \
        {                                                                                          \
                .nsswitch = ns,                                                                    \
                .pw = { { "root", 0, 0 }, { "slot01", 2001, 2001 }, { "slot02", 2002, 2002 },      \
                        { "slot01", 3001, 3001 }, { "long", 4000, 4000, true },                    \
                        { "inpasswd", 4001, 4001, false, "$6$s$h" } },                             \
                .gr = { { "root", 0, { NULL } }, { "slot01", 2001, { NULL } }, { "slot02", 2002, { NULL } }, \
                        { "slotshared", 1999, { "slot01", "slot02", NULL } },                      \
                        { "extra", 1500, { "slot02", NULL } }, { "again", 1999, { "slot02", NULL } }, \
                        { "slotshared", 1998, { "slot02", NULL } } },                              \
                .sp = { { "slot01", "!" }, { "slot02", "$y$j9T$hash" }, { "slot01", "*second" } }, \
                .dir_pw = { { "slot09", 2009, 2009 } },                                            \
                .dir_gr = { { "slot09", 2009, { NULL } }, { "dirgroup", 1600, { "slot01", NULL } } }, \
                .pw_fail_at = pwfail, .gr_fail_at = grfail, .fail = "slot08",                     \
        }

enum db_id { D_FILES, D_LDAP_LAST, D_SSS_FIRST, D_INIT_LDAP, D_ACTIONS, D_PW_FAILS, D_GR_FAILS, D_N };

static const struct db dbs[D_N] = {
        [D_FILES] = POOL(FILES, NONE, NONE),
        [D_LDAP_LAST] = POOL(LDAP_LAST, NONE, NONE),
        [D_SSS_FIRST] = POOL(SSS_FIRST, NONE, NONE),
        [D_INIT_LDAP] = POOL(INIT_LDAP, NONE, NONE),
        [D_ACTIONS] = POOL(ACTIONS, NONE, NONE),
        [D_PW_FAILS] = POOL(FILES, 2, NONE),        /* lists root and slot01, then EIO */
        [D_GR_FAILS] = POOL(FILES, NONE, 4),        /* lists root .. slotshared, then EIO */
};

enum q_kind { Q_USER, Q_UID, Q_GROUP, Q_GID, Q_GROUPS, Q_SHADOW, Q_PASSWD };

static const struct row {
        enum db_id db;
        enum q_kind q;
        const char *name;
        gid_t gid;              /* Q_GID: the gid asked; Q_GROUPS: the primary gid */
        int r;                  /* the answer: 1, 0, -errno (Q_GROUPS: 0) */
        unsigned long id;       /* Q_USER, Q_UID: uid; Q_GROUP: gid */
        const char *text;       /* Q_GID: the name; Q_SHADOW, Q_PASSWD: the field; Q_GROUPS: the gids, "2002 1999" */
        int calls;              /* lookups by name and getgrouplist calls the query made */
} rows[] = {
        /* files: every answer from the map, no NSS call */
        { D_FILES, Q_USER, "slot01", 0, 1, 2001, NULL, 0 },     /* the first of two slot01 lines */
        { D_FILES, Q_USER, "long", 0, 1, 4000, NULL, 0 },       /* an entry larger than the first buffer */
        { D_FILES, Q_USER, "slot09", 0, 1, 2009, NULL, 1 },     /* only the directory has it: by name */
        { D_FILES, Q_USER, "slot07", 0, 0, 0, NULL, 1 },        /* nowhere: NSS says not found */
        { D_FILES, Q_USER, "slot08", 0, -EIO, 0, NULL, 1 },     /* a failed lookup stays one */
        { D_FILES, Q_UID, "slot01", 0, 1, 2001, NULL, 0 },      /* the uid alone: as Q_USER */
        { D_FILES, Q_UID, "slot09", 0, 1, 2009, NULL, 1 },
        { D_FILES, Q_UID, "slot07", 0, 0, 0, NULL, 1 },
        { D_FILES, Q_UID, "slot08", 0, -EIO, 0, NULL, 1 },
        { D_SSS_FIRST, Q_UID, "slot01", 0, 1, 2001, NULL, 1 },
        { D_FILES, Q_GROUP, "slotshared", 0, 1, 1999, NULL, 0 },        /* the first of two */
        { D_FILES, Q_GROUP, "dirgroup", 0, 1, 1600, NULL, 1 },
        { D_FILES, Q_GROUP, "slot08", 0, -EIO, 0, NULL, 1 },
        { D_FILES, Q_GROUP, "nogroup", 0, 0, 0, NULL, 1 },
        { D_FILES, Q_GID, NULL, 1999, 1, 0, "slotshared", 0 },  /* "again" has 1999 too, later */
        { D_FILES, Q_GID, NULL, 1600, 1, 0, "dirgroup", 1 },
        { D_FILES, Q_GID, NULL, 4242, 0, 0, NULL, 1 },
        { D_FILES, Q_GROUPS, "slot01", 2001, 0, 0, "2001 1999", 0 },
        /* every group naming it, once a gid, in the order listed: extra and the second slotshared too */
        { D_FILES, Q_GROUPS, "slot02", 2002, 0, 0, "2002 1999 1500 1998", 0 },
        { D_FILES, Q_GROUPS, "slot02", 1500, 0, 0, "1500 1999 1998", 0 },  /* the primary not twice */
        { D_FILES, Q_GROUPS, "nobody", 65534, 0, 0, "65534", 0 },
        { D_FILES, Q_SHADOW, "slot01", 0, 1, 0, "!", 0 },
        { D_FILES, Q_SHADOW, "slot02", 0, 1, 0, "$y$j9T$hash", 0 },
        { D_FILES, Q_SHADOW, "slot09", 0, 0, 0, NULL, 0 },      /* not listed: the caller asks by name */
        /* the passwd entry's password field, the first entry's */
        { D_FILES, Q_PASSWD, "slot01", 0, 1, 0, "x", 0 },
        { D_FILES, Q_PASSWD, "inpasswd", 0, 1, 0, "$6$s$h", 0 },
        { D_FILES, Q_PASSWD, "slot09", 0, 0, 0, NULL, 0 },      /* not listed: the caller asks by name */
        { D_SSS_FIRST, Q_PASSWD, "slot01", 0, 0, 0, NULL, 0 },
        /* a directory after files: names from the map, groups from getgrouplist (dirgroup) */
        { D_LDAP_LAST, Q_USER, "slot02", 0, 1, 2002, NULL, 0 },
        { D_LDAP_LAST, Q_GROUPS, "slot01", 2001, 0, 0, "2001 1999 1600", 1 },
        { D_INIT_LDAP, Q_USER, "slot02", 0, 1, 2002, NULL, 0 },
        { D_INIT_LDAP, Q_GROUPS, "slot01", 2001, 0, 0, "2001 1999 1600", 1 },
        /* a directory first, or actions: the map answers nothing */
        { D_SSS_FIRST, Q_USER, "slot01", 0, 1, 2001, NULL, 1 },
        { D_SSS_FIRST, Q_GROUP, "slotshared", 0, 1, 1999, NULL, 1 },
        { D_SSS_FIRST, Q_GROUPS, "slot01", 2001, 0, 0, "2001 1999 1600", 1 },
        { D_SSS_FIRST, Q_SHADOW, "slot01", 0, 0, 0, NULL, 0 },
        { D_ACTIONS, Q_USER, "slot02", 0, 1, 2002, NULL, 1 },
        { D_ACTIONS, Q_GID, NULL, 1999, 1, 0, "slotshared", 1 },
        /* an enumeration that fails part-way: what it listed stands, the rest by name */
        { D_PW_FAILS, Q_USER, "slot01", 0, 1, 2001, NULL, 0 },
        { D_PW_FAILS, Q_USER, "slot02", 0, 1, 2002, NULL, 1 },
        { D_GR_FAILS, Q_GROUP, "slotshared", 0, 1, 1999, NULL, 0 },
        { D_GR_FAILS, Q_GROUP, "extra", 0, 1, 1500, NULL, 1 },
        /* a group enumeration that did not end answers no one's groups: extra is still seen */
        { D_GR_FAILS, Q_GROUPS, "slot02", 2002, 0, 0, "2002 1999 1500 1998", 1 },
};

static void groups_text(const gid_t *g, int n, char *buf, size_t size)
{
        size_t off = 0;

        buf[0] = '\0';
        for (int i = 0; i < n && off < size; i++)
                off += (size_t) snprintf(buf + off, size - off, "%s%u", i ? " " : "", (unsigned) g[i]);
}

/* One query of row w against map m; returns false with why in msg when the answer is not w's. */
static bool ask(const struct slots_accountmap *m, const struct row *w, char *msg, size_t size)
{
        struct slots_pw pw = { 0 };
        char *text = NULL, got[128] = "";
        gid_t gid = 0, *groups = NULL;
        unsigned long id = 0;
        int r = 0, n = 0;

        switch (w->q) {
        case Q_USER:
                r = slots_amap_user(m, w->name, &pw);
                id = pw.uid;
                slots_pw_clear(&pw);
                break;
        case Q_UID: {
                uid_t uid = 0;

                r = slots_amap_uid(m, w->name, &uid);
                id = uid;
                break;
        }
        case Q_GROUP:
                r = slots_amap_group(m, w->name, &gid);
                id = gid;
                break;
        case Q_GID:
                r = slots_amap_gid(m, w->gid, &text);
                break;
        case Q_GROUPS:
                r = slots_amap_grouplist(m, w->name, w->gid, &groups, &n);
                groups_text(groups, n, got, sizeof(got));
                free(groups);
                break;
        case Q_SHADOW:
                r = slots_amap_shadow(m, w->name, &text);
                break;
        case Q_PASSWD:
                r = slots_amap_passwd_field(m, w->name, &text);
                break;
        }
        if (text)
                snprintf(got, sizeof(got), "%s", text);
        free(text);
        snprintf(msg, size, "got %d id %lu \"%s\" calls %d", r, id, got, nss_calls + grouplist_calls);
        if (r != w->r || nss_calls + grouplist_calls != w->calls)
                return false;
        if (r > 0 && (w->q == Q_USER || w->q == Q_UID || w->q == Q_GROUP) && id != w->id)
                return false;
        return !w->text || strcmp(got, w->text) == 0;
}

static void test_rows(void **state)
{
        int failures = 0;

        (void) state;
        for (size_t i = 0; i < N_ELEM(rows); i++) {
                struct slots_accountmap *m = NULL;
                struct slots_error e;
                char msg[256];

                cur = &dbs[rows[i].db];
                nss_calls = grouplist_calls = 0;
                assert_int_equal(slots_accountmap_read(cur->nsswitch, SLOTS_AMAP_PASSWD | SLOTS_AMAP_GROUP |
                                                       SLOTS_AMAP_SHADOW, &m, &e), 0);
                if (nss_calls + grouplist_calls != 0)
                        ROW_FAIL("row %zu: reading the map made %d lookups by name", i, nss_calls + grouplist_calls);
                nss_calls = grouplist_calls = 0;
                if (!ask(m, &rows[i], msg, sizeof(msg)))
                        ROW_FAIL("row %zu (%s %s %u): %s; want %d id %lu \"%s\" calls %d", i, rows[i].name ? rows[i].name : "-",
                                 cur->nsswitch, (unsigned) rows[i].gid, msg, rows[i].r, rows[i].id,
                                 rows[i].text ? rows[i].text : "", rows[i].calls);
                slots_accountmap_free(m);
        }
        assert_int_equal(failures, 0);
}

/* Without a map (NULL) every query is NSS's own; a map of nothing asked enumerates nothing. */
static void test_no_map(void **state)
{
        struct slots_accountmap *m = NULL;
        struct slots_error e;
        struct slots_pw pw;
        gid_t *g = NULL;
        int n = 0;

        (void) state;
        cur = &dbs[D_FILES];
        nss_calls = grouplist_calls = 0;
        assert_int_equal(slots_amap_user(NULL, "slot02", &pw), 1);
        assert_int_equal(pw.uid, 2002);
        slots_pw_clear(&pw);
        assert_int_equal(slots_amap_grouplist(NULL, "slot02", 2002, &g, &n), 0);
        assert_int_equal(n, 4);
        free(g);
        assert_int_equal(nss_calls, 1);
        assert_int_equal(grouplist_calls, 1);
        assert_int_equal(slots_accountmap_read(FILES, 0, &m, &e), 0);
        assert_false(slots_amap_listed(m, "slot01"));
        assert_int_equal(slots_amap_user(m, "slot01", &pw), 1);
        assert_int_equal(nss_calls, 2);
        slots_pw_clear(&pw);
        slots_accountmap_free(m);
        slots_accountmap_free(NULL);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_rows),
                cmocka_unit_test(test_no_map),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
