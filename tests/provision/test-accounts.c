/* The account files as text (accounts.c) and login.defs (logindefs.c): tables of input -> expected. */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "accounts.h"
#include "fsutil.h"
#include "logindefs.h"
#include "../unit/unit.h"

static char *render(struct slots_accounts *a, enum slots_acct_file f)
{
        size_t len;
        char *s = slots_accounts_render(a, f, &len);

        assert_non_null(s);
        assert_int_equal(strlen(s), len);
        return s;
}

/* Unchanged files come back byte for byte, whatever odd lines they hold. */
static const char *const roundtrip[] = {
        "",
        "\n",
        "root:x:0:0:root:/root:/bin/bash\n",
        "root:x:0:0:root:/root:/bin/bash",                         /* no final newline */
        "# comment\n\nroot:x:0:0::/:/bin/sh\n\n\n",                   /* blank lines kept */
        "root:x:0:0::/:/bin/sh\n+@netgroup::::::\n-baduser::::::\n",   /* NIS lines */
        "root:x:0:0::/:/bin/sh\r\n",                                  /* a CR stays */
        "not an entry at all\n::::::\nname-only\n",
        "a:x:notanumber:0::/:/bin/sh\nb:x:1:1::/:/bin/sh:extra\n",
};

static void test_roundtrip(void **state)
{
        (void) state;
        for (size_t i = 0; i < N_ELEM(roundtrip); i++)
                for (int f = 0; f < SLOTS_ACCT_NFILES; f++) {
                        struct slots_accounts *a = slots_accounts_new();
                        char *out;

                        assert_int_equal(slots_accounts_set_text(a, f, roundtrip[i], strlen(roundtrip[i]), true), 0);
                        assert_false(slots_accounts_changed(a, f));
                        out = render(a, f);
                        assert_string_equal(out, roundtrip[i]);
                        free(out);
                        slots_accounts_free(a);
                }
}

/* Where new lines go, and that every old line stays as it was. */
static const struct {
        const char *before, *after;
} inserts[] = {
        { "", "slot01:x:999:999::/h/slot01:/bin/sh\n" },
        { "root:x:0:0::/:/bin/sh", "root:x:0:0::/:/bin/sh\nslot01:x:999:999::/h/slot01:/bin/sh\n" },
        { "root:x:0:0::/:/bin/sh\n+::::::\n",
          "root:x:0:0::/:/bin/sh\nslot01:x:999:999::/h/slot01:/bin/sh\n+::::::\n" },
        { "root:x:0:0::/:/bin/sh\n+@a::::::\n-b::::::",
          "root:x:0:0::/:/bin/sh\nslot01:x:999:999::/h/slot01:/bin/sh\n+@a::::::\n-b::::::\n" },
        /* a NIS line in the middle is not a tail */
        { "+a::::::\nroot:x:0:0::/:/bin/sh\n",
          "+a::::::\nroot:x:0:0::/:/bin/sh\nslot01:x:999:999::/h/slot01:/bin/sh\n" },
        { "+::::::\n", "slot01:x:999:999::/h/slot01:/bin/sh\n+::::::\n" },
        { "# c\n\n", "# c\n\nslot01:x:999:999::/h/slot01:/bin/sh\n" },
};

static void test_insert(void **state)
{
        (void) state;
        for (size_t i = 0; i < N_ELEM(inserts); i++) {
                struct slots_accounts *a = slots_accounts_new();
                char *out;

                assert_int_equal(slots_accounts_set_text(a, SLOTS_ACCT_PASSWD, inserts[i].before,
                                                         strlen(inserts[i].before), true),
                                 0);
                assert_int_equal(slots_accounts_add_user(a, "slot01", 999, 999, "/h/slot01", "/bin/sh", 20454), 0);
                assert_true(slots_accounts_changed(a, SLOTS_ACCT_PASSWD));
                out = render(a, SLOTS_ACCT_PASSWD);
                assert_string_equal(out, inserts[i].after);
                free(out);
                out = render(a, SLOTS_ACCT_SHADOW);
                assert_string_equal(out, "slot01:!:20454::::::\n");
                free(out);
                slots_accounts_free(a);
        }
}

static void test_groups_and_members(void **state)
{
        static const char group[] = "root:x:0:\nteam:x:2000:\nfull:x:2001:a,b\n+:::\n";
        static const char gshadow[] = "root:*::\nteam:!::\nfull:!:adm:a,b\n";
        struct slots_accounts *a = slots_accounts_new();
        char *out;

        (void) state;
        assert_int_equal(slots_accounts_set_text(a, SLOTS_ACCT_GROUP, group, strlen(group), true), 0);
        assert_int_equal(slots_accounts_set_text(a, SLOTS_ACCT_GSHADOW, gshadow, strlen(gshadow), true), 0);
        assert_false(slots_accounts_is_member(a, "team", "slot01"));
        assert_true(slots_accounts_is_member(a, "full", "b"));
        assert_false(slots_accounts_is_member(a, "full", "ab"));
        assert_int_equal(slots_accounts_add_member(a, "team", "slot01"), 0);
        assert_int_equal(slots_accounts_add_member(a, "team", "slot02"), 0);
        assert_int_equal(slots_accounts_add_member(a, "team", "slot01"), 0);   /* already there */
        assert_int_equal(slots_accounts_add_member(a, "full", "slot01"), 0);
        assert_int_equal(slots_accounts_add_member(a, "nosuch", "slot01"), -ENOENT);
        assert_true(slots_accounts_is_member(a, "team", "slot02"));
        assert_int_equal(slots_accounts_add_group(a, "slot01", 999), 0);
        assert_int_equal(slots_accounts_add_group(a, "slot01", 998), -EEXIST);
        assert_non_null(slots_accounts_group_by_gid(a, 999));
        assert_string_equal(slots_accounts_group_by_gid(a, 2001)->name, "full");
        out = render(a, SLOTS_ACCT_GROUP);
        assert_string_equal(out, "root:x:0:\nteam:x:2000:slot01,slot02\nfull:x:2001:a,b,slot01\nslot01:x:999:\n+:::\n");
        free(out);
        out = render(a, SLOTS_ACCT_GSHADOW);
        assert_string_equal(out, "root:*::\nteam:!::slot01,slot02\nfull:!:adm:a,b,slot01\nslot01:!::\n");
        free(out);
        /* A gshadow line added for a group that has none takes the group's members. */
        assert_int_equal(slots_accounts_add_gshadow(a, "full"), -EEXIST);
        assert_int_equal(slots_accounts_set_text(a, SLOTS_ACCT_GSHADOW, "", 0, false), 0);
        assert_int_equal(slots_accounts_add_gshadow(a, "full"), 0);
        out = render(a, SLOTS_ACCT_GSHADOW);
        assert_string_equal(out, "full:!::a,b,slot01\n");
        free(out);
        /* Untouched files stay untouched. */
        assert_false(slots_accounts_changed(a, SLOTS_ACCT_PASSWD));
        slots_accounts_free(a);
}

/*
 * A member list of 256 bytes or more is asked as a set (issue 18): the same answers as the
 * scan of a short list, for whole names only, and it follows the members added.
 */
static void test_long_member_list(void **state)
{
        static const struct {
                const char *user;
                bool member;
        } ask[] = {
                { "m000", true }, { "m099", true }, { "m09", false }, { "m0990", false }, { "slot1", true },
                { "slot10", false }, { "lot1", false }, { "", true /* the list holds an empty name */ },
                { "x", false },
        };
        struct slots_accounts *a = slots_accounts_new();
        char group[2048], gshadow[2048], *out;
        size_t n = 0;

        (void) state;
        n += (size_t) snprintf(group + n, sizeof(group) - n, "root:x:0:\nbig:x:3000:slot1,");
        for (int i = 0; i < 100; i++)
                n += (size_t) snprintf(group + n, sizeof(group) - n, "m%03d,", i);
        n += (size_t) snprintf(group + n, sizeof(group) - n, ",last\n");
        /* gshadow: the same members on the line of "big". */
        snprintf(gshadow, sizeof(gshadow), "root:*::\nbig:!::%s", strstr(group, "slot1,"));
        assert_int_equal(slots_accounts_set_text(a, SLOTS_ACCT_GROUP, group, strlen(group), true), 0);
        assert_int_equal(slots_accounts_set_text(a, SLOTS_ACCT_GSHADOW, gshadow, strlen(gshadow), true), 0);
        for (size_t i = 0; i < N_ELEM(ask); i++) {
                if (slots_accounts_is_member(a, "big", ask[i].user) != ask[i].member)
                        fail_msg("is_member(\"%s\") should be %d", ask[i].user, ask[i].member);
                if (slots_accounts_gshadow_lists(a, "big", ask[i].user) != ask[i].member)
                        fail_msg("gshadow_lists(\"%s\") should be %d", ask[i].user, ask[i].member);
        }
        /* Added once, found at once; one already there is not added again. */
        assert_int_equal(slots_accounts_add_member(a, "big", "slot10"), 0);
        assert_int_equal(slots_accounts_add_member(a, "big", "slot10"), 0);
        assert_int_equal(slots_accounts_add_member(a, "big", "m050"), 0);
        assert_true(slots_accounts_is_member(a, "big", "slot10"));
        assert_true(slots_accounts_gshadow_lists(a, "big", "slot10"));
        assert_true(slots_accounts_is_member(a, "big", "slot1"));
        out = render(a, SLOTS_ACCT_GROUP);
        assert_non_null(strstr(out, ",,last,slot10\n"));
        assert_null(strstr(out, "slot10,slot10"));
        free(out);
        out = render(a, SLOTS_ACCT_GSHADOW);
        assert_non_null(strstr(out, ",,last,slot10\n"));
        free(out);
        slots_accounts_free(a);
}

static void test_lookups(void **state)
{
        static const char passwd[] = "a:x:10:10::/a:/bin/sh\n"
                                     "a:x:11:11::/a2:/bin/sh\n"          /* the first name wins */
                                     "b:x:10:12::/b:/bin/sh\n"           /* the first uid wins */
                                     "c:x:4294967295:1::/c:/bin/sh\n"     /* (uid_t) -1 is no uid */
                                     "d:x:12::::\n"                       /* too few fields */
                                     "+e::::::\n";
        static const char shadow[] = "a:!:1::::::\n+b::::::::\n";
        struct slots_accounts *a = slots_accounts_new();
        const struct slots_acct_user *u;

        (void) state;
        assert_int_equal(slots_accounts_set_text(a, SLOTS_ACCT_PASSWD, passwd, strlen(passwd), true), 0);
        assert_int_equal(slots_accounts_set_text(a, SLOTS_ACCT_SHADOW, shadow, strlen(shadow), true), 0);
        u = slots_accounts_user(a, "a");
        assert_non_null(u);
        assert_int_equal(u->uid, 10);
        assert_string_equal(u->dir, "/a");
        assert_string_equal(u->shell, "/bin/sh");
        assert_int_equal(u->line, 1);
        assert_string_equal(slots_accounts_user_by_uid(a, 10)->name, "a");
        assert_false(slots_accounts_user(a, "c")->valid);
        assert_false(slots_accounts_user(a, "d")->valid);
        assert_null(slots_accounts_user(a, "+e"));
        assert_null(slots_accounts_user(a, "e"));
        assert_null(slots_accounts_user_by_uid(a, 12));
        assert_true(slots_accounts_has_shadow(a, "a"));
        assert_false(slots_accounts_has_shadow(a, "b"));
        /* Names already there are refused; so are fields the format cannot hold. */
        assert_int_equal(slots_accounts_add_user(a, "a", 20, 20, "/x", "/bin/sh", 1), -EEXIST);
        assert_int_equal(slots_accounts_add_user(a, "x", 20, 20, "/x:y", "/bin/sh", 1), -EINVAL);
        assert_int_equal(slots_accounts_add_user(a, "x", 20, 20, "/x", "/bin/sh\n", 1), -EINVAL);
        assert_int_equal(slots_accounts_add_user(a, "x,y", 20, 20, "/x", "/bin/sh", 1), -EINVAL);
        assert_int_equal(slots_accounts_add_user(a, "", 20, 20, "/x", "/bin/sh", 1), -EINVAL);
        assert_false(slots_accounts_changed(a, SLOTS_ACCT_PASSWD));
        /* An added account is found by name and id at once. */
        assert_int_equal(slots_accounts_add_user(a, "x", 20, 20, "/x", "/bin/sh", -1), 0);
        assert_int_equal(slots_accounts_user_by_uid(a, 20)->line, 0);
        assert_true(slots_accounts_has_shadow(a, "x"));
        {
                char *out = render(a, SLOTS_ACCT_SHADOW);
                assert_string_equal(out, "a:!:1::::::\nx:!:::::::\n+b::::::::\n");
                free(out);
        }
        slots_accounts_free(a);
}

/* login.defs: defaults, shadow's number syntax, the last definition, refusals. */
static const struct {
        const char *text;
        int r;
        unsigned min, max;
} defs[] = {
        { "", 0, 100, 999 },
        { "# nothing set\n#SYS_UID_MIN 5\n", 0, 100, 999 },
        { "SYS_UID_MIN 200\nSYS_UID_MAX 299\n", 0, 200, 299 },
        { "  SYS_UID_MIN\t\t201  \n\tSYS_UID_MAX 300\r\n", 0, 201, 300 },
        { "UID_MIN 500\n", 0, 100, 499 },                   /* SYS_UID_MAX falls back to UID_MIN - 1 */
        { "UID_MIN 500\nSYS_UID_MAX 450\n", 0, 100, 450 },
        { "SYS_UID_MIN 0x100\nSYS_UID_MAX 0777\n", 0, 256, 511 },
        { "SYS_UID_MIN \"150\"\n", 0, 150, 999 },
        { "SYS_UID_MIN 150\nSYS_UID_MIN 160\n", 0, 160, 999 },       /* the last one wins, as in shadow */
        { "SYS_UID_MINX 5\nXSYS_UID_MIN 6\n", 0, 100, 999 },
        { "SYS_UID_MIN 999\nSYS_UID_MAX 999\n", 0, 999, 999 },
        { "SYS_UID_MIN 1000\nSYS_UID_MAX 999\n", -EBADMSG, 0, 0 },
        { "SYS_UID_MIN 0\n", -EBADMSG, 0, 0 },
        { "SYS_UID_MIN ten\n", -EBADMSG, 0, 0 },
        { "SYS_UID_MIN -5\n", -EBADMSG, 0, 0 },
        { "SYS_UID_MAX 99999999999\n", -EBADMSG, 0, 0 },
        { "SYS_UID_MAX\n", 0, 100, 999 },                    /* no value: skipped, as in shadow */
};

static void test_logindefs(void **state)
{
        (void) state;
        for (size_t i = 0; i < N_ELEM(defs); i++) {
                struct slots_error e;
                uid_t min = 0, max = 0;
                int r = slots_logindefs_parse(defs[i].text, strlen(defs[i].text), "login.defs", &min, &max, &e);

                if (r != defs[i].r)
                        fail_msg("case %zu: got %d, want %d", i, r, defs[i].r);
                if (r == 0) {
                        assert_int_equal(min, defs[i].min);
                        assert_int_equal(max, defs[i].max);
                } else {
                        assert_string_equal(e.object, "login.defs");
                        assert_true(e.fix[0] != '\0');
                }
        }
}

/* ---- the transaction on disk ---- */

static int make_etc(char *dir)
{
        static const char *const files[][2] = {
                { "passwd", "root:x:0:0::/:/bin/sh\n" },
                { "group", "root:x:0:\n" },
                { "shadow", "root:*:1::::::\n" },
                { "gshadow", "root:*::\n" },
        };
        int fd = -1;

        strcpy(dir, "/tmp/test-accounts.XXXXXX");
        assert_non_null(mkdtemp(dir));
        fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        assert_true(fd >= 0);
        for (size_t i = 0; i < N_ELEM(files); i++) {
                int f = openat(fd, files[i][0], O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
                assert_true(f >= 0);
                assert_int_equal(slots_write_all(f, files[i][1], strlen(files[i][1])), 0);
                /* shadow-like modes that a rewrite must keep */
                assert_int_equal(fchmod(f, strstr(files[i][0], "shadow") ? 0640 : 0644), 0);
                close(f);
        }
        return fd;
}

static void cleanup_etc(const char *dir, int fd)
{
        char cmd[256];

        close(fd);
        snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
        assert_int_equal(system(cmd), 0);
}

static char *slurp(int dirfd, const char *name)
{
        struct stat st;
        char *buf;
        size_t len;
        int fd = slots_open_regular(dirfd, name, &st);

        if (fd < 0)
                return NULL;
        assert_int_equal(slots_read_all(fd, 1 << 20, &buf, &len), 0);
        close(fd);
        return buf;
}

static size_t count_entries(const char *dir)
{
        char cmd[256], buf[32] = "";
        FILE *p;

        snprintf(cmd, sizeof(cmd), "ls -A '%s' | wc -l", dir);
        p = popen(cmd, "r");
        assert_non_null(p);
        assert_non_null(fgets(buf, sizeof(buf), p));
        pclose(p);
        return (size_t) strtoul(buf, NULL, 10);
}

static void test_write_all_four(void **state)
{
        struct slots_accounts *a;
        struct slots_error e;
        struct stat st;
        char dir[64], *s;
        int fd = make_etc(dir);

        (void) state;
        assert_int_equal(slots_accounts_load(fd, dir, &a, &e), 0);
        assert_int_equal(slots_accounts_add_group(a, "slot01", 999), 0);
        assert_int_equal(slots_accounts_add_user(a, "slot01", 999, 999, "/h", "/bin/sh", 5), 0);
        assert_int_equal(slots_accounts_write(a, fd, dir, &e), 0);
        s = slurp(fd, "passwd");
        assert_string_equal(s, "root:x:0:0::/:/bin/sh\nslot01:x:999:999::/h:/bin/sh\n");
        free(s);
        s = slurp(fd, "passwd-");
        assert_string_equal(s, "root:x:0:0::/:/bin/sh\n");
        free(s);
        s = slurp(fd, "gshadow");
        assert_string_equal(s, "root:*::\nslot01:!::\n");
        free(s);
        assert_int_equal(fstatat(fd, "shadow", &st, 0), 0);
        assert_int_equal(st.st_mode & 07777, 0640);
        assert_int_equal(fstatat(fd, "shadow-", &st, 0), 0);
        assert_int_equal(st.st_mode & 07777, 0640);
        assert_int_equal(fstatat(fd, "group", &st, 0), 0);
        assert_int_equal(st.st_mode & 07777, 0644);
        /* four files, four backups, nothing else left behind */
        assert_int_equal(count_entries(dir), 8);
        slots_accounts_free(a);
        cleanup_etc(dir, fd);
}

/* One file that cannot be staged (shadow is a folder): not one file changes, no temp is left. */
static void test_write_is_all_or_nothing(void **state)
{
        struct slots_accounts *a;
        struct slots_error e;
        char dir[64], *s;
        int fd = make_etc(dir);

        (void) state;
        assert_int_equal(slots_accounts_load(fd, dir, &a, &e), 0);
        assert_int_equal(unlinkat(fd, "shadow", 0), 0);
        assert_int_equal(mkdirat(fd, "shadow", 0700), 0);
        assert_int_equal(slots_accounts_add_group(a, "slot01", 999), 0);
        assert_int_equal(slots_accounts_add_user(a, "slot01", 999, 999, "/h", "/bin/sh", 5), 0);
        assert_true(slots_accounts_write(a, fd, dir, &e) < 0);
        assert_non_null(strstr(e.object, "shadow"));
        s = slurp(fd, "passwd");
        assert_string_equal(s, "root:x:0:0::/:/bin/sh\n");
        free(s);
        s = slurp(fd, "group");
        assert_string_equal(s, "root:x:0:\n");
        free(s);
        assert_null(slurp(fd, "passwd-"));
        assert_null(slurp(fd, "group-"));
        assert_int_equal(count_entries(dir), 4);
        slots_accounts_free(a);
        cleanup_etc(dir, fd);
}

/* An account file that is not plain text is never read through: what load says, with its kind and fix. */
enum bad_passwd { AS_SYMLINK, AS_FIFO, AS_FOLDER, WITH_NUL, MISSING };
static const struct {
        enum bad_passwd how;
        int r;                          /* what load returns */
        enum slots_error_kind kind;     /* the exit status follows it: refused and failed are 1 */
        const char *reason, *fix;       /* parts of e's reason and fix ("": none) */
} bad_loads[] = {
        { AS_SYMLINK, -ELOOP, SLOTS_ERR_REFUSED, "is a symlink; refusing to follow it", "put the account file itself" },
        { AS_FIFO, -EINVAL, SLOTS_ERR_REFUSED, "is not a regular file", "put the account file itself" },
        { AS_FOLDER, -EINVAL, SLOTS_ERR_REFUSED, "is not a regular file", "put the account file itself" },
        { WITH_NUL, -EBADMSG, SLOTS_ERR_FAILED, "contains a NUL byte", "repair it (vipw, vigr)" },
        { MISSING, 0, SLOTS_ERR_FAILED, NULL, NULL },
};

static void test_load_refuses_odd_files(void **state)
{
        (void) state;
        for (size_t i = 0; i < N_ELEM(bad_loads); i++) {
                struct slots_accounts *a = NULL;
                struct slots_error e;
                char dir[64], *s;
                int fd = make_etc(dir), r;

                assert_int_equal(unlinkat(fd, "passwd", 0), 0);
                switch (bad_loads[i].how) {
                case AS_SYMLINK:
                        assert_int_equal(symlinkat("group", fd, "passwd"), 0);
                        break;
                case AS_FIFO:
                        assert_int_equal(mkfifoat(fd, "passwd", 0644), 0);
                        break;
                case AS_FOLDER:
                        assert_int_equal(mkdirat(fd, "passwd", 0755), 0);
                        break;
                case WITH_NUL: {
                        int f = openat(fd, "passwd", O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
                        assert_true(f >= 0);
                        assert_int_equal(slots_write_all(f, "root:x:0:0::/:/bin/sh\n\0x\n", 25), 0);
                        close(f);
                        break;
                }
                case MISSING:
                        break;
                }
                r = slots_accounts_load(fd, dir, &a, &e);
                assert_int_equal(r, bad_loads[i].r);
                if (r == 0) {
                        /* a missing file is an empty one: no user at all, the others as they were */
                        assert_null(slots_accounts_user(a, "root"));
                        s = render(a, SLOTS_ACCT_GROUP);
                        assert_string_equal(s, "root:x:0:\n");
                        free(s);
                        slots_accounts_free(a);
                } else {
                        assert_int_equal(e.kind, bad_loads[i].kind);
                        assert_non_null(strstr(e.object, "/passwd"));
                        assert_non_null(strstr(e.reason, bad_loads[i].reason));
                        assert_non_null(strstr(e.fix, bad_loads[i].fix));
                }
                cleanup_etc(dir, fd);
        }
}

/* The image lock: a second taker waits; the holder's close releases it. */
static void test_lock_in_tree(void **state)
{
        struct slots_error e;
        char dir[64];
        int fd = make_etc(dir), lock = -1;

        (void) state;
        assert_int_equal(slots_accounts_lock(fd, false, &lock, &e), 0);
        assert_true(lock >= 0);
        {
                /* fcntl locks belong to the process: probe from a child. */
                pid_t pid = fork();
                int status;

                assert_true(pid >= 0);
                if (pid == 0) {
                        struct flock fl = { .l_type = F_WRLCK, .l_whence = SEEK_SET };
                        int f = openat(fd, ".pwd.lock", O_RDWR | O_CLOEXEC);
                        _exit(f >= 0 && fcntl(f, F_SETLK, &fl) < 0 && (errno == EAGAIN || errno == EACCES) ? 0 : 1);
                }
                assert_int_equal(waitpid(pid, &status, 0), pid);
                assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
        }
        slots_accounts_unlock(false, lock);
        cleanup_etc(dir, fd);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_roundtrip),
                cmocka_unit_test(test_insert),
                cmocka_unit_test(test_groups_and_members),
                cmocka_unit_test(test_long_member_list),
                cmocka_unit_test(test_lookups),
                cmocka_unit_test(test_logindefs),
                cmocka_unit_test(test_write_all_four),
                cmocka_unit_test(test_write_is_all_or_nothing),
                cmocka_unit_test(test_load_refuses_odd_files),
                cmocka_unit_test(test_lock_in_tree),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
