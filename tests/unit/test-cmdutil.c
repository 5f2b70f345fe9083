/*
 * The commands' boundary (src/cmdutil.c) and the NSS lookups under it (src/lib/nss.c), as
 * tables.  The four *_r lookups are wrapped at link time (-Wl,--wrap=getpwnam_r,...), so
 * each case decides what "the directory" answers: an entry, nothing, a failure (EIO, or
 * ENOENT from a directory that is down), or ERANGE until the buffer is big enough.
 * openlog and syslog (and __syslog_chk, what a _FORTIFY_SOURCE build calls) are wrapped too,
 * and so are sd_booted and sd_journal_sendv: the events' lines and journal entries are read
 * back as they would reach syslog and journald.
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

/* ---- syslog, as cmd_log reaches it ---- */

static struct {
        int opens, facility, lines, priority;
        char ident[64], last[4096];
} logged;

void __wrap_openlog(const char *ident, int option, int facility);
void __wrap_syslog(int priority, const char *fmt, ...);
void __wrap___syslog_chk(int priority, int flag, const char *fmt, ...);

void __wrap_openlog(const char *ident, int option, int facility)
{
        (void) option;
        logged.opens++;
        logged.facility = facility;
        snprintf(logged.ident, sizeof(logged.ident), "%s", ident);
}

static void record(int priority, const char *fmt, va_list ap)
{
        logged.lines++;
        logged.priority = priority;
        vsnprintf(logged.last, sizeof(logged.last), fmt, ap);
}

void __wrap_syslog(int priority, const char *fmt, ...)
{
        va_list ap;

        va_start(ap, fmt);
        record(priority, fmt, ap);
        va_end(ap);
}

void __wrap___syslog_chk(int priority, int flag, const char *fmt, ...)
{
        va_list ap;

        (void) flag;
        va_start(ap, fmt);
        record(priority, fmt, ap);
        va_end(ap);
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

/* ---- the journal, as cmd_event reaches it ---- */

static struct {
        int booted;             /* what sd_booted answers */
        int entries;
        char fields[512][128];  /* the last entry's fields, "NAME=value" */
        int n;
} journal;

int __wrap_sd_booted(void);
int __wrap_sd_journal_sendv(const struct iovec *iov, int n);

int __wrap_sd_booted(void)
{
        return journal.booted;
}

int __wrap_sd_journal_sendv(const struct iovec *iov, int n)
{
        journal.entries++;
        journal.n = n < 512 ? n : 512;
        for (int i = 0; i < journal.n; i++)
                snprintf(journal.fields[i], sizeof(journal.fields[i]), "%.*s", (int) iov[i].iov_len,
                         (const char *) iov[i].iov_base);
        return 0;
}

/* How many fields of the last entry are exactly `field`. */
static int has_field(const char *field)
{
        int k = 0;

        for (int i = 0; i < journal.n; i++)
                k += strcmp(journal.fields[i], field) == 0;
        return k;
}

/* The value of the last entry's field `name`, or NULL. */
static const char *field_value(const char *name)
{
        size_t n = strlen(name);

        for (int i = 0; i < journal.n; i++)
                if (strncmp(journal.fields[i], name, n) == 0 && journal.fields[i][n] == '=')
                        return journal.fields[i] + n + 1;
        return NULL;
}

static void write_file(const char *path, const char *text)
{
        FILE *f = fopen(path, "w");

        assert_non_null(f);
        fputs(text, f);
        assert_int_equal(fclose(f), 0);
}

/*
 * Who the admin is, as a table: SUDO_USER when root runs it, else the login uid (by
 * name, or the number when NSS has none), else the uid.  The test runs as root.
 */
static void test_event_admin(void **state)
{
        static const struct {
                const char *sudo_user;  /* NULL: unset */
                const char *loginuid;   /* the file's content; NULL: no file */
                enum answer dir;
                const char *by, *admin;
        } rows[] = {
                { "alice", "1000\n", FOUND, "by alice (via sudo)", "alice" },
                { "", "1000\n", FOUND, "by svc (login uid 1000)", "svc" },
                { NULL, "1000", NOTHING, "by 1000 (login uid 1000)", "1000" },
                { NULL, "4294967295", FOUND, "by svc (uid 0)", "svc" },
                { NULL, NULL, NOTHING, "by 0 (uid 0)", "0" },
                { NULL, "12x", FOUND, "by svc (uid 0)", "svc" },
                /* A name with a terminal escape reaches neither syslog nor the journal raw. */
                { "ev\x1b[1mil", NULL, FOUND, "by ev\\033[1mil (via sudo)", "ev\\033[1mil" },
        };
        char path[] = "/tmp/slots-loginuid.XXXXXX";
        int fd = mkstemp(path), failures = 0;

        (void) state;
        assert_true(fd >= 0);
        close(fd);
        if (getuid() != 0)
                skip();
        cmd_name = "slots-admin";
        cmd_loginuid_file = path;
        journal.booted = 1;
        for (size_t i = 0; i < N_ELEM(rows); i++) {
                char want[256];

                dir_reset(rows[i].dir);
                if (rows[i].sudo_user)
                        setenv("SUDO_USER", rows[i].sudo_user, 1);
                else
                        unsetenv("SUDO_USER");
                if (rows[i].loginuid)
                        write_file(path, rows[i].loginuid);
                else
                        unlink(path);
                cmd_event(CMD_EV_ASSIGNED, "slot01", "u1", "assigned %s to user %s", "slot01", "u1");
                snprintf(want, sizeof(want), "assigned slot01 to user u1; %s", rows[i].by);
                snprintf(want + 200, 56, "SLOTS_ADMIN=%s", rows[i].admin);
                if (strcmp(logged.last, want) != 0 || has_field(want + 200) != 1)
                        ROW_FAIL("row %zu: syslog '%s', want '%s'; admin %s", i, logged.last, want,
                                 field_value("SLOTS_ADMIN") ? field_value("SLOTS_ADMIN") : "(none)");
        }
        unlink(path);
        unsetenv("SUDO_USER");
        cmd_loginuid_file = "/nonexistent/loginuid";
        if (failures)
                fail_msg("%d rows failed", failures);
}

/* Each kind: one syslog line at its priority and one journal entry with its fields. */
static void test_event_fields(void **state)
{
        static const struct {
                enum cmd_event ev;
                const char *action, *result;
                int priority;
        } rows[] = {
                { CMD_EV_ASSIGNED, "assign", "done", LOG_NOTICE },
                { CMD_EV_ASSIGN_REFUSED, "assign", "refused", LOG_WARNING },
                { CMD_EV_ASSIGN_UNFINISHED, "assign", "unfinished", LOG_WARNING },
                { CMD_EV_RELEASED, "release", "done", LOG_NOTICE },
                { CMD_EV_RELEASE_REFUSED, "release", "refused", LOG_WARNING },
                { CMD_EV_RELEASE_PENDING, "release", "pending", LOG_WARNING },
                { CMD_EV_PROVISIONED, "provision", "done", LOG_NOTICE },
                { CMD_EV_PROVISION_REFUSED, "provision", "refused", LOG_WARNING },
                { CMD_EV_CHECK_PASSED, "check", "passed", LOG_INFO },
                { CMD_EV_CHECK_FAILED, "check", "failed", LOG_WARNING },
                { CMD_EV_CHECK_REFUSED, "check", "refused", LOG_WARNING },
        };
        int failures = 0;

        (void) state;
        assert_int_equal(N_ELEM(rows), CMD_EV_N);
        cmd_name = "slots-admin";
        cmd_loginuid_file = "/nonexistent/loginuid";
        setenv("SUDO_USER", "admin", 1);
        cmd_log_service("svc");
        journal.booted = 1;
        for (size_t i = 0; i < N_ELEM(rows); i++) {
                char f[9][128];
                int lines = logged.lines, entries = journal.entries;

                cmd_event(rows[i].ev, "slot03", "carol", "event %zu", i);
                snprintf(f[0], sizeof(f[0]), "MESSAGE=event %zu; by admin (via sudo)", i);
                snprintf(f[1], sizeof(f[1]), "MESSAGE_ID=%s", cmd_event_id(rows[i].ev));
                snprintf(f[2], sizeof(f[2]), "SLOTS_ACTION=%s", rows[i].action);
                snprintf(f[3], sizeof(f[3]), "SLOTS_RESULT=%s", rows[i].result);
                snprintf(f[4], sizeof(f[4]), "PRIORITY=%d", rows[i].priority);
                snprintf(f[5], sizeof(f[5]), "SLOTS_SLOT=slot03");
                snprintf(f[6], sizeof(f[6]), "SLOTS_USER=carol");
                snprintf(f[7], sizeof(f[7]), "SLOTS_SERVICE=svc");
                snprintf(f[8], sizeof(f[8]), "SYSLOG_FACILITY=10");
                if (logged.lines != lines + 1 || journal.entries != entries + 1 || logged.priority != rows[i].priority)
                        ROW_FAIL("row %zu: %d lines, %d entries, priority %d", i, logged.lines - lines,
                                 journal.entries - entries, logged.priority);
                for (size_t k = 0; k < N_ELEM(f); k++)
                        if (has_field(f[k]) != 1)
                                ROW_FAIL("row %zu: no field %s", i, f[k]);
                /* One MESSAGE_ID per kind: 32 hex digits, none the same as another's. */
                if (strlen(cmd_event_id(rows[i].ev)) != 32 ||
                    strspn(cmd_event_id(rows[i].ev), "0123456789abcdef") != 32)
                        ROW_FAIL("row %zu: MESSAGE_ID %s", i, cmd_event_id(rows[i].ev));
                for (size_t k = 0; k < i; k++)
                        if (strcmp(cmd_event_id(rows[i].ev), cmd_event_id(rows[k].ev)) == 0)
                                ROW_FAIL("rows %zu and %zu share a MESSAGE_ID", k, i);
        }
        unsetenv("SUDO_USER");
        if (failures)
                fail_msg("%d rows failed", failures);
}

/*
 * A provision's summary names every slot it changed, one SLOTS_SLOT field each; fields
 * without a value are left out; where journald does not run, syslog alone has the line;
 * syslog is opened once, with "name[pid]" and LOG_AUTHPRIV.
 */
static void test_event_journal(void **state)
{
        const char *slots[] = { "slot01", "slot02", "slot07" };
        char want[64];
        int entries;

        (void) state;
        cmd_name = "slots-provision";
        cmd_loginuid_file = "/nonexistent/loginuid";
        cmd_log_service("svc");
        journal.booted = 1;
        cmd_event_slots(CMD_EV_PROVISIONED, slots, 3, NULL, "provisioned: %d changes", 9);
        assert_int_equal(has_field("SLOTS_SLOT=slot01") + has_field("SLOTS_SLOT=slot02") +
                         has_field("SLOTS_SLOT=slot07"), 3);
        assert_null(field_value("SLOTS_USER"));
        assert_string_equal(field_value("SYSLOG_IDENTIFIER"), "slots-provision");
        assert_string_equal(field_value("SLOTS_SLOT_COUNT"), "3");
        {
                /* Up to CMD_EVENT_MAX_SLOTS a field each; beyond, the count alone (libsystemd's iovec limit). */
                static char names[CMD_EVENT_MAX_SLOTS + 1][SLOTS_NAME_MAX];
                static const char *many[CMD_EVENT_MAX_SLOTS + 1];
                char one[32];

                for (unsigned i = 0; i <= CMD_EVENT_MAX_SLOTS; i++) {
                        snprintf(names[i], sizeof(names[i]), "slot%02u", i + 1);
                        many[i] = names[i];
                }
                cmd_event_slots(CMD_EV_PROVISIONED, many, CMD_EVENT_MAX_SLOTS, NULL, "many");
                snprintf(one, sizeof(one), "SLOTS_SLOT=slot%u", CMD_EVENT_MAX_SLOTS);
                assert_int_equal(has_field(one), 1);
                assert_int_equal(has_field("SLOTS_SLOT=slot01"), 1);
                cmd_event_slots(CMD_EV_PROVISIONED, many, CMD_EVENT_MAX_SLOTS + 1, NULL, "more");
                assert_null(field_value("SLOTS_SLOT"));
                snprintf(one, sizeof(one), "%u", CMD_EVENT_MAX_SLOTS + 1);
                assert_string_equal(field_value("SLOTS_SLOT_COUNT"), one);
        }
        cmd_event(CMD_EV_CHECK_PASSED, NULL, NULL, "self-check: %d passed", 3);
        assert_null(field_value("SLOTS_SLOT"));
        assert_null(field_value("SLOTS_USER"));
        /* A user id with control bytes (never valid; the escape still holds) */
        cmd_event(CMD_EV_RELEASE_REFUSED, "slot01", "x\ny", "refused: %s", "x\ny");
        assert_string_equal(field_value("SLOTS_USER"), "x\\ny");
        assert_null(strchr(logged.last, '\n'));

        journal.booted = 0;
        cmd_journal_socket = "/nonexistent/journal/socket";
        entries = journal.entries;
        cmd_event(CMD_EV_ASSIGNED, "slot01", "u1", "assigned");
        assert_int_equal(journal.entries, entries);
        assert_non_null(strstr(logged.last, "assigned; by "));
        cmd_journal_socket = "/run/systemd/journal/socket";

        assert_int_equal(logged.opens, 1);
        assert_int_equal(logged.facility, LOG_AUTHPRIV);
        snprintf(want, sizeof(want), "slots-admin[%ld]", (long) getpid());
        assert_string_equal(logged.ident, want);
}

/* cmd_report keeps what it printed, for the refusal's log line. */
static void test_last_error(void **state)
{
        (void) state;
        cmd_name = "slots-test";
        (void) stderr_of(report_no_fix, NULL);
        assert_string_equal(cmd_last_error(), "cannot release: slot03: lookup failed");
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
                cmocka_unit_test(test_event_admin),
                cmocka_unit_test(test_event_fields),
                cmocka_unit_test(test_event_journal),
                cmocka_unit_test(test_last_error),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
