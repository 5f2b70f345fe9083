/*
 * The commands' boundary (src/cmdutil.c) and the NSS lookups under it (src/lib/nss.c), as
 * tables.  The four *_r lookups are wrapped at link time (-Wl,--wrap=getpwnam_r,...), so
 * each case decides what "the directory" answers: an entry, nothing, a failure (EIO, or
 * ENOENT from a directory that is down), or ERANGE until the buffer is big enough.
 * The events, their syslog lines and journal entries are src/emit.c's: tests/unit/test-emit.c.
 */
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <pwd.h>
#include <setjmp.h>
#include <stdbool.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>

#include "cmdutil.h"
#include "ids.h"
#include "service.h"
#include "nss.h"
#include "unit.h"

/* ---- the fake directory ---- */

enum answer { FOUND, NOTHING, FAIL_EIO, FAIL_ENOENT };

static struct {
        enum answer answer;     /* for every lookup */
        enum answer groups;     /* for the group lookups, when split */
        bool split;
        size_t need;            /* ERANGE while the caller's buffer is smaller than this */
        unsigned calls;         /* lookups made (ERANGE retries included) */
        size_t last_size;       /* the caller's buffer at the last call */
        unsigned members;       /* members of a group that is found */
} dir;

static char name_a[] = "svc", dir_a[] = "/srv/svc", shell_a[] = "/bin/sh";
static char *members_a[65];

static void dir_reset(enum answer a)
{
        static char names[64][16];

        memset(&dir, 0, sizeof(dir));
        dir.answer = a;
        for (size_t i = 0; i < 64; i++) {
                snprintf(names[i], sizeof(names[i]), "member%02zu", i);
                members_a[i] = names[i];
        }
        members_a[64] = NULL;
}

/* The common part of every wrap: 0 with *res set, 0 without, or an error number. */
static int answer(size_t size, void **res, void *ent, bool group)
{
        dir.calls++;
        dir.last_size = size;
        *res = NULL;
        if (size < dir.need)
                return ERANGE;
        switch (group && dir.split ? dir.groups : dir.answer) {
        case FOUND:
                *res = ent;
                return 0;
        case NOTHING:
                return 0;
        case FAIL_EIO:
                return EIO;
        case FAIL_ENOENT:
                return ENOENT;
        }
        return EINVAL;
}

static void fill_pw(struct passwd *pw, uid_t uid)
{
        memset(pw, 0, sizeof(*pw));
        pw->pw_name = name_a;
        pw->pw_uid = uid;
        pw->pw_gid = 4242;
        pw->pw_dir = uid == 7 ? NULL : dir_a;   /* uid 7: an entry with no home or shell */
        pw->pw_shell = uid == 7 ? NULL : shell_a;
}

static void fill_gr(struct group *gr, gid_t gid)
{
        static char gname[] = "svcgroup";

        memset(gr, 0, sizeof(*gr));
        gr->gr_name = gname;
        gr->gr_gid = gid;
        members_a[dir.members] = NULL;
        gr->gr_mem = gid == 8 ? NULL : members_a;       /* gid 8: no member list at all */
}

int __wrap_getpwnam_r(const char *name, struct passwd *pw, char *buf, size_t size, struct passwd **res);
int __wrap_getpwuid_r(uid_t uid, struct passwd *pw, char *buf, size_t size, struct passwd **res);
int __wrap_getgrnam_r(const char *name, struct group *gr, char *buf, size_t size, struct group **res);
int __wrap_getgrgid_r(gid_t gid, struct group *gr, char *buf, size_t size, struct group **res);

int __wrap_getpwnam_r(const char *name, struct passwd *pw, char *buf, size_t size, struct passwd **res)
{
        (void) name;
        (void) buf;
        fill_pw(pw, 4242);
        return answer(size, (void **) res, pw, false);
}

int __wrap_getpwuid_r(uid_t uid, struct passwd *pw, char *buf, size_t size, struct passwd **res)
{
        (void) buf;
        fill_pw(pw, uid);
        return answer(size, (void **) res, pw, false);
}

int __wrap_getgrnam_r(const char *name, struct group *gr, char *buf, size_t size, struct group **res)
{
        (void) name;
        (void) buf;
        fill_gr(gr, 4242);
        return answer(size, (void **) res, gr, true);
}

int __wrap_getgrgid_r(gid_t gid, struct group *gr, char *buf, size_t size, struct group **res)
{
        (void) buf;
        fill_gr(gr, gid);
        return answer(size, (void **) res, gr, true);
}

/* ---- nss.c ---- */

/* What each lookup returns for each answer: 1 found, 0 not there, -errno failed. */
static void test_nss_answers(void **state)
{
        static const struct {
                enum answer answer;
                int want;
        } rows[] = {
                { FOUND, 1 },
                { NOTHING, 0 },
                { FAIL_EIO, -EIO },
                /* A directory that is down answers ENOENT: a failure, never "not there". */
                { FAIL_ENOENT, -ENOENT },
        };

        (void) state;
        for (size_t i = 0; i < N_ELEM(rows); i++) {
                struct slots_pw pw = { 0 };
                struct slots_gr gr = { 0 };
                int r;

                dir_reset(rows[i].answer);
                r = slots_nss_user("svc", &pw);
                if (r != rows[i].want)
                        fail_msg("row %zu: slots_nss_user %d, want %d", i, r, rows[i].want);
                if (r == 1)
                        assert_string_equal(pw.name, "svc");
                slots_pw_clear(&pw);
                r = slots_nss_uid(4242, &pw);
                if (r != rows[i].want)
                        fail_msg("row %zu: slots_nss_uid %d, want %d", i, r, rows[i].want);
                slots_pw_clear(&pw);
                r = slots_nss_group("svcgroup", &gr);
                if (r != rows[i].want)
                        fail_msg("row %zu: slots_nss_group %d, want %d", i, r, rows[i].want);
                slots_gr_clear(&gr);
                r = slots_nss_gid(4242, &gr);
                if (r != rows[i].want)
                        fail_msg("row %zu: slots_nss_gid %d, want %d", i, r, rows[i].want);
                slots_gr_clear(&gr);
                assert_int_equal(dir.calls, 4);
        }
}

/* ERANGE: the buffer doubles until the entry fits; past 16 MiB the lookup fails with ERANGE. */
static void test_nss_erange(void **state)
{
        struct slots_gr gr = { 0 };
        struct slots_pw pw = { 0 };

        (void) state;
        dir_reset(FOUND);
        dir.need = 5000;        /* 1024, 2048, 4096: ERANGE; 8192 fits */
        assert_int_equal(slots_nss_gid(4242, &gr), 1);
        assert_int_equal(dir.calls, 4);
        assert_int_equal(dir.last_size, 8192);
        slots_gr_clear(&gr);

        dir_reset(FOUND);
        dir.need = (size_t) 1 << 25;
        assert_int_equal(slots_nss_user("svc", &pw), -ERANGE);
        assert_int_equal(dir.last_size, (size_t) 1 << 24);
        assert_null(pw.name);
}

/* A group's name by gid: the same answers, the buffer starting at the caller's size, never below 1024. */
static void test_nss_gid_name(void **state)
{
        static const struct {
                enum answer answer;
                int want;
        } rows[] = {
                { FOUND, 1 }, { NOTHING, 0 }, { FAIL_EIO, -EIO }, { FAIL_ENOENT, -ENOENT },
        };
        char *name = NULL;

        (void) state;
        for (size_t i = 0; i < N_ELEM(rows); i++) {
                dir_reset(rows[i].answer);
                if (slots_nss_gid_name(4242, 0, &name) != rows[i].want)
                        fail_msg("row %zu: slots_nss_gid_name, want %d", i, rows[i].want);
                if (rows[i].want == 1)
                        assert_string_equal(name, "svcgroup");
                else
                        assert_null(name);
                free(name);
                name = NULL;
        }
        dir_reset(FOUND);
        dir.need = 5000;        /* a line longer than the buffer: 1024, 2048, 4096 retried, 8192 fits */
        assert_int_equal(slots_nss_gid_name(4242, 16, &name), 1);
        assert_int_equal(dir.calls, 4);
        assert_int_equal(dir.last_size, 8192);
        free(name);
        dir_reset(FOUND);
        dir.need = 5000;        /* sized for it: one lookup */
        assert_int_equal(slots_nss_gid_name(4242, 6000, &name), 1);
        assert_int_equal(dir.calls, 1);
        assert_int_equal(dir.last_size, 6000);
        free(name);
        dir_reset(FOUND);
        dir.need = 7000;        /* sized too small: it still grows */
        assert_int_equal(slots_nss_gid_name(4242, 6000, &name), 1);
        assert_int_equal(dir.calls, 2);
        assert_int_equal(dir.last_size, 12000);
        free(name);
}

/* The copies: members in order, an entry without home, shell or member list. */
static void test_nss_copies(void **state)
{
        struct slots_pw pw = { 0 };
        struct slots_gr gr = { 0 };

        (void) state;
        dir_reset(FOUND);
        dir.members = 64;
        assert_int_equal(slots_nss_group("svcgroup", &gr), 1);
        assert_int_equal(gr.gid, 4242);
        assert_string_equal(gr.members[0], "member00");
        assert_string_equal(gr.members[63], "member63");
        assert_null(gr.members[64]);
        assert_true(slots_gr_has_member(&gr, "member17"));
        assert_false(slots_gr_has_member(&gr, "member64"));
        slots_gr_clear(&gr);
        assert_null(gr.members);
        assert_false(slots_gr_has_member(&gr, "member00"));     /* cleared: no list */

        assert_int_equal(slots_nss_gid(8, &gr), 1);             /* gr_mem NULL */
        assert_non_null(gr.members);
        assert_null(gr.members[0]);
        assert_false(slots_gr_has_member(&gr, "member00"));
        slots_gr_clear(&gr);

        assert_int_equal(slots_nss_uid(7, &pw), 1);             /* no home, no shell */
        assert_int_equal(pw.uid, 7);
        assert_int_equal(pw.gid, 4242);
        assert_string_equal(pw.dir, "");
        assert_string_equal(pw.shell, "");
        slots_pw_clear(&pw);
        assert_null(pw.name);
}

/* ---- cmdutil.c ---- */

/* Runs fn with stderr going to a file; returns what it printed (static buffer). */
static const char *stderr_of(void (*fn)(void *), void *arg)
{
        static char out[8192];
        char path[] = "/tmp/slots-cmdutil.XXXXXX";
        int fd = mkstemp(path), saved;
        ssize_t n;

        assert_true(fd >= 0);
        unlink(path);
        fflush(stderr);
        saved = dup(2);
        assert_true(saved >= 0);
        assert_int_equal(dup2(fd, 2), 2);
        fn(arg);
        fflush(stderr);
        assert_int_equal(dup2(saved, 2), 2);
        close(saved);
        n = pread(fd, out, sizeof(out) - 1, 0);
        assert_true(n >= 0);
        out[n] = '\0';
        close(fd);
        return out;
}

struct group_case {
        const char *service_group;      /* NULL: the service account's primary group */
        enum answer answer;
        int want;                       /* cmd_service_group's return */
        const char *want_name;          /* the group's name when found */
        const char *want_reason;        /* a part of the error's reason or fix */
};

static void test_service_group(void **state)
{
        static const struct group_case rows[] = {
                { "svcgroup", FOUND, 0, "svcgroup", NULL },
                { "svcgroup", NOTHING, -ENOENT, NULL, "fix \"service_group\" in /etc/slots.conf" },
                { "svcgroup", FAIL_EIO, -EIO, NULL, "group lookup failed" },
                { "svcgroup", FAIL_ENOENT, -ENOENT, NULL, "group lookup failed" },
                { NULL, FOUND, 0, "svcgroup", NULL },
                { NULL, NOTHING, -ENOENT, NULL, "fix \"service\" in /etc/slots.conf" },
                { NULL, FAIL_EIO, -EIO, NULL, "account lookup failed" },
        };
        char path[] = "/etc/slots.conf", service[] = "svc";

        (void) state;
        for (size_t i = 0; i < N_ELEM(rows); i++) {
                struct slots_config c = { 0 };
                struct slots_error e;
                char *name = NULL, text[2048];
                gid_t gid = 0;
                int r;

                c.path = path;
                c.service = service;
                c.service_group = (char *) rows[i].service_group;
                dir_reset(rows[i].answer);
                slots_error_clear(&e);
                r = slots_service_group(&c, &gid, &name, &e);
                snprintf(text, sizeof(text), "%s: %s / %s", e.object, e.reason, e.fix);
                if (r != rows[i].want)
                        fail_msg("row %zu: %d, want %d (%s)", i, r, rows[i].want, text);
                if (rows[i].want_name) {
                        assert_non_null(name);
                        assert_string_equal(name, rows[i].want_name);
                        assert_int_equal(gid, 4242);
                } else {
                        assert_null(name);
                        if (!strstr(text, rows[i].want_reason))
                                fail_msg("row %zu: error '%s' lacks '%s'", i, text, rows[i].want_reason);
                }
                free(name);
        }
}

/*
 * slots_service_lookup, the one rule for the service group (service_group, else the
 * account's primary group, named or as its number), through NSS (users answer as
 * `users`, groups as `groups`) and the lookups it makes.
 */
static void test_service_lookup(void **state)
{
        static const struct {
                const char *service_group;
                unsigned what;
                enum answer users, groups;
                int user, group, named;
                const char *name;       /* group_name; NULL: none */
                unsigned calls;
        } rows[] = {
                { NULL, SLOTS_SERVICE_USER | SLOTS_SERVICE_GROUP, FOUND, FOUND, 1, 1, 1, "svcgroup", 2 },
                { NULL, SLOTS_SERVICE_USER | SLOTS_SERVICE_GROUP, FOUND, NOTHING, 1, 1, 0, "4242", 2 },
                { NULL, SLOTS_SERVICE_USER | SLOTS_SERVICE_GROUP, FOUND, FAIL_EIO, 1, 1, -EIO, "4242", 2 },
                { NULL, SLOTS_SERVICE_USER | SLOTS_SERVICE_GROUP, NOTHING, FOUND, 0, 0, 0, NULL, 1 },
                { NULL, SLOTS_SERVICE_USER | SLOTS_SERVICE_GROUP, FAIL_EIO, FOUND, -EIO, -EIO, 0, NULL, 1 },
                { NULL, SLOTS_SERVICE_GROUP, FOUND, FOUND, 1, 1, 1, "svcgroup", 2 },
                { NULL, SLOTS_SERVICE_USER, FOUND, FOUND, 1, 0, 0, NULL, 1 },
                { "svcgroup", SLOTS_SERVICE_USER | SLOTS_SERVICE_GROUP, FOUND, FOUND, 1, 1, 0, "svcgroup", 2 },
                { "svcgroup", SLOTS_SERVICE_USER | SLOTS_SERVICE_GROUP, FAIL_EIO, FOUND, -EIO, 1, 0, "svcgroup", 2 },
                { "svcgroup", SLOTS_SERVICE_USER | SLOTS_SERVICE_GROUP, FOUND, NOTHING, 1, 0, 0, NULL, 2 },
                { "svcgroup", SLOTS_SERVICE_GROUP, FOUND, FAIL_ENOENT, 0, -ENOENT, 0, NULL, 1 },
        };
        char path[] = "/etc/slots.conf", service[] = "svc";
        int failures = 0;

        (void) state;
        for (size_t i = 0; i < N_ELEM(rows); i++) {
                struct slots_config c = { .path = path, .service = service,
                                          .service_group = (char *) rows[i].service_group };
                struct slots_service sv;
                bool name_ok;

                dir_reset(rows[i].users);
                dir.split = true;
                dir.groups = rows[i].groups;
                assert_int_equal(slots_service_lookup(&c, NULL, rows[i].what, &sv), 0);
                name_ok = rows[i].name ? sv.group_name && strcmp(sv.group_name, rows[i].name) == 0 : !sv.group_name;
                if (sv.user != rows[i].user || sv.group != rows[i].group || sv.named != rows[i].named || !name_ok ||
                    (sv.group > 0 && sv.gid != 4242) || dir.calls != rows[i].calls)
                        ROW_FAIL("row %zu: user %d group %d named %d name %s gid %u after %u lookups", i, sv.user,
                                 sv.group, sv.named, sv.group_name ? sv.group_name : "(none)", (unsigned) sv.gid,
                                 dir.calls);
                slots_service_clear(&sv);
        }
        if (failures)
                fail_msg("%d rows failed", failures);
}

/* Another source (an image's account files): asked instead of NSS, with the same rule. */
static int image_user(void *data, const char *name, struct slots_pw *out)
{
        (void) data;
        if (strcmp(name, "svc") != 0)
                return 0;
        *out = (struct slots_pw){ .uid = 990, .gid = 991 };
        return 1;
}

static int image_group(void *data, const char *name, struct slots_gr *out)
{
        (void) data;
        (void) name;
        (void) out;
        return 0;
}

static int image_gid(void *data, gid_t gid, struct slots_gr *out)
{
        (void) data;
        if (gid != 991)
                return 0;
        *out = (struct slots_gr){ .gid = gid, .name = strdup("imagesvc") };
        return out->name ? 1 : -ENOMEM;
}

static void test_service_lookup_source(void **state)
{
        const struct slots_service_source image = { image_user, image_group, image_gid, NULL };
        char path[] = "/etc/slots.conf", service[] = "svc", group[] = "nosuch";
        struct slots_config c = { .path = path, .service = service };
        struct slots_service sv;

        (void) state;
        dir_reset(FOUND);
        assert_int_equal(slots_service_lookup(&c, &image, SLOTS_SERVICE_USER | SLOTS_SERVICE_GROUP, &sv), 0);
        assert_int_equal(sv.user, 1);
        assert_int_equal(sv.pw.uid, 990);
        assert_int_equal(sv.group, 1);
        assert_int_equal(sv.gid, 991);
        assert_string_equal(sv.group_name, "imagesvc");
        slots_service_clear(&sv);
        c.service_group = group;
        assert_int_equal(slots_service_lookup(&c, &image, SLOTS_SERVICE_USER | SLOTS_SERVICE_GROUP, &sv), 0);
        assert_int_equal(sv.user, 1);
        assert_int_equal(sv.group, 0);
        assert_null(sv.group_name);
        slots_service_clear(&sv);
        assert_int_equal(dir.calls, 0);
}

/* The service account is found; its primary group: an entry (its name), none (its number
 * stands for the name), or a failed lookup (an error). */
static void test_service_group_by_gid(void **state)
{
        static const struct {
                enum answer groups;
                int want;
                const char *want_name;
        } rows[] = {
                { FOUND, 0, "svcgroup" },
                { NOTHING, 0, "4242" },
                { FAIL_EIO, -EIO, NULL },
        };
        char service[] = "svc", path[] = "/etc/slots.conf";

        (void) state;
        for (size_t i = 0; i < N_ELEM(rows); i++) {
                struct slots_config c = { 0 };
                struct slots_error e;
                char *name = NULL;
                gid_t gid = 0;
                int r;

                c.service = service;
                c.path = path;
                dir_reset(FOUND);
                dir.split = true;
                dir.groups = rows[i].groups;
                slots_error_clear(&e);
                r = slots_service_group(&c, &gid, &name, &e);
                if (r != rows[i].want)
                        fail_msg("row %zu: %d, want %d (%s: %s)", i, r, rows[i].want, e.object, e.reason);
                assert_int_equal(dir.calls, 2);
                if (rows[i].want_name) {
                        assert_int_equal(gid, 4242);
                        assert_string_equal(name, rows[i].want_name);
                } else {
                        assert_null(name);
                        assert_string_equal(e.object, "svc");
                        assert_non_null(strstr(e.reason, "group lookup failed"));
                }
                free(name);
        }
}

static void report_plain(void *arg)
{
        struct slots_error e;

        (void) arg;
        slots_error_clear(&e);
        slots_error_set(&e, -EPERM, "/srv/app/\x1b[2Jname", "owned by uid %u", 1234u);
        cmd_report("cannot assign", &e, "chown root /srv/app");
}

static void report_own_fix(void *arg)
{
        struct slots_error e;

        (void) arg;
        slots_error_clear(&e);
        slots_error_set(&e, -EBADMSG, "/etc/slots.conf", "unknown key \"x\"");
        slots_error_at(&e, 3, 5);
        slots_error_fix(&e, "remove \"x\"\a from the file");
        cmd_report("invalid config", &e, "not this one");
}

static void report_no_fix(void *arg)
{
        struct slots_error e;

        (void) arg;
        slots_error_clear(&e);
        slots_error_set(&e, -EIO, "slot03", "lookup failed");
        cmd_report("cannot release", &e, NULL);
}

static void test_report(void **state)
{
        const char *out;

        (void) state;
        cmd_name = "slots-test";
        out = stderr_of(report_plain, NULL);
        /* The name a slot chose is escaped: no ESC byte reaches the terminal. */
        assert_null(strchr(out, '\x1b'));
        assert_non_null(strstr(out, "slots-test: cannot assign: /srv/app/"));
        assert_non_null(strstr(out, "owned by uid 1234\n"));
        assert_non_null(strstr(out, "slots-test: fix: chown root /srv/app\n"));

        out = stderr_of(report_own_fix, NULL);
        assert_non_null(strstr(out, "slots-test: invalid config: /etc/slots.conf:3:5: unknown key"));
        assert_non_null(strstr(out, "slots-test: fix: remove \"x\""));
        assert_null(strchr(out, '\a'));
        assert_null(strstr(out, "not this one"));       /* the error's own fix wins */

        out = stderr_of(report_no_fix, NULL);
        assert_string_equal(out, "slots-test: cannot release: slot03: lookup failed\n");
}

static void test_exit_for(void **state)
{
        /* The exit status follows the kind the library gave the error, never the errno. */
        static const struct {
                int r;
                enum slots_error_kind kind;
                int want;
        } rows[] = {
                { 0, SLOTS_ERR_FAILED, EXIT_DONE },
                { 3, SLOTS_ERR_INVALID, EXIT_DONE },
                { -EBADMSG, SLOTS_ERR_INVALID, EXIT_USAGE },
                { -EINVAL, SLOTS_ERR_INVALID, EXIT_USAGE },
                { -EBADMSG, SLOTS_ERR_REFUSED, EXIT_REFUSED },
                { -EINVAL, SLOTS_ERR_FAILED, EXIT_REFUSED },
                { -EPERM, SLOTS_ERR_REFUSED, EXIT_REFUSED },
                { -EIO, SLOTS_ERR_FAILED, EXIT_REFUSED },
                { -ENOENT, SLOTS_ERR_FAILED, EXIT_REFUSED },
        };

        (void) state;
        for (size_t i = 0; i < N_ELEM(rows); i++) {
                struct slots_error e;

                slots_error_clear(&e);
                e.kind = rows[i].kind;
                if (cmd_exit_for(rows[i].r, &e) != rows[i].want)
                        fail_msg("row %zu: cmd_exit_for(%d, kind %d) = %d, want %d", i, rows[i].r,
                                 (int) rows[i].kind, cmd_exit_for(rows[i].r, &e), rows[i].want);
        }
}

struct load_case {
        const char *text;       /* the config's content; NULL: no file at all */
        int want;
        const char *want_out;   /* a part of what is printed */
};

static int load_status;

static void load_one(void *arg)
{
        struct slots_config *c = NULL;

        load_status = cmd_load_config(arg, &c);
        if (c)
                slots_config_free(c);
}

static void test_load_config(void **state)
{
        static const struct load_case rows[] = {
                { NULL, EXIT_USAGE, "cannot read the config: " },
                { "{ not json", EXIT_USAGE, "invalid config: " },
                { "[]", EXIT_USAGE, "invalid config: " },
        };
        char d[] = "/tmp/slots-cmdutil-conf.XXXXXX", path[64];

        (void) state;
        assert_non_null(mkdtemp(d));
        snprintf(path, sizeof(path), "%s/slots.conf", d);
        for (size_t i = 0; i < N_ELEM(rows); i++) {
                const char *out;

                unlink(path);
                if (rows[i].text) {
                        FILE *f = fopen(path, "w");

                        assert_non_null(f);
                        fputs(rows[i].text, f);
                        fclose(f);
                }
                out = stderr_of(load_one, path);
                if (load_status != rows[i].want || !strstr(out, rows[i].want_out) || !strstr(out, path))
                        fail_msg("row %zu: exit %d, printed '%s'; want %d and '%s' with the path", i,
                                 load_status, out, rows[i].want, rows[i].want_out);
        }
        unlink(path);
        rmdir(d);
}

/* JSON text of names a slot made: UTF-8 as it is, every other byte as \xHH. */
static void test_json_text(void **state)
{
        static const struct {
                const char *in, *want;
        } rows[] = {
                { "plain", "plain" },
                { "caf\xc3\xa9", "caf\xc3\xa9" },                       /* 2 bytes */
                { "\xe2\x82\xac", "\xe2\x82\xac" },                     /* 3 bytes: euro */
                { "\xf0\x9f\x98\x80", "\xf0\x9f\x98\x80" },             /* 4 bytes */
                { "a\xffz", "a\\xffz" },                                /* never a lead byte */
                { "\xc0\xaf", "\\xc0\\xaf" },                           /* overlong '/' */
                { "\xc3", "\\xc3" },                                    /* cut short */
                { "\xe0\x80\xaf", "\\xe0\\x80\\xaf" },                  /* overlong, 3 bytes */
                { "\xed\xa0\x80", "\\xed\\xa0\\x80" },                  /* a surrogate */
                { "\xf0\x80\x80\x80", "\\xf0\\x80\\x80\\x80" },         /* overlong, 4 bytes */
                { "\xf4\x90\x80\x80", "\\xf4\\x90\\x80\\x80" },         /* above U+10FFFF */
                { "\xf5\x80", "\\xf5\\x80" },                           /* never a lead byte */
                { "\xe2\x82x", "\\xe2\\x82x" },                         /* bad third byte */
                { "\xf4\x8f\xbf\xbf", "\xf4\x8f\xbf\xbf" },             /* U+10FFFF itself */
                { "\xed\x9f\xbf", "\xed\x9f\xbf" },                     /* U+D7FF */
        };

        (void) state;
        for (size_t i = 0; i < N_ELEM(rows); i++) {
                json_t *j = cmd_json_text(rows[i].in);

                assert_non_null(j);
                if (strcmp(json_string_value(j), rows[i].want) != 0)
                        fail_msg("row %zu: got '%s', want '%s'", i, json_string_value(j), rows[i].want);
                json_decref(j);
        }
}

/*
 * cmd_fds_guard: in a child, each set of closed fds among 0-2 comes back as the mask, each
 * of them open on /dev/null afterwards, and a file opened next gets fd 3 or above.
 */
static void test_fds_guard(void **state)
{
        static const unsigned masks[] = { 0, 1, 2, 4, 3, 6, 5, 7 };

        (void) state;
        for (size_t i = 0; i < sizeof(masks) / sizeof(masks[0]); i++) {
                pid_t pid = fork();
                int status;

                assert_true(pid >= 0);
                if (pid == 0) {
                        struct stat null, st;
                        int fd;

                        if (stat("/dev/null", &null) < 0)
                                _exit(10);
                        for (int k = 0; k <= 2; k++)
                                if (masks[i] & (1u << k))
                                        close(k);
                        if (cmd_fds_guard() != masks[i] || cmd_fds_closed != masks[i])
                                _exit(11);
                        for (int k = 0; k <= 2; k++)
                                if ((masks[i] & (1u << k)) &&
                                    (fstat(k, &st) < 0 || st.st_rdev != null.st_rdev || !S_ISCHR(st.st_mode)))
                                        _exit(12);
                        fd = open("/dev/null", O_RDONLY);
                        if (fd < 3)
                                _exit(13);
                        /* stdout closed at start: what was printed reached nobody. */
                        _exit((masks[i] & 2) ? (cmd_stdout_done() == -EBADF ? 0 : 14) : (cmd_stdout_done() == 0 ? 0 : 15));
                }
                assert_int_equal(waitpid(pid, &status, 0), pid);
                print_message("mask %u: exit %d\n", masks[i], WEXITSTATUS(status));
                assert_true(WIFEXITED(status));
                assert_int_equal(WEXITSTATUS(status), 0);
        }
}

int main(void)
{
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_nss_answers),
                cmocka_unit_test(test_nss_erange),
                cmocka_unit_test(test_nss_gid_name),
                cmocka_unit_test(test_nss_copies),
                cmocka_unit_test(test_service_group),
                cmocka_unit_test(test_service_group_by_gid),
                cmocka_unit_test(test_service_lookup),
                cmocka_unit_test(test_service_lookup_source),
                cmocka_unit_test(test_report),
                cmocka_unit_test(test_exit_for),
                cmocka_unit_test(test_load_config),
                cmocka_unit_test(test_fds_guard),
                cmocka_unit_test(test_json_text),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
