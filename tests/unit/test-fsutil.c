/*
 * Resolution inside a root: the openat2 path and the resolver agree, neither leaves the root,
 * and the resolver's flags refuse what they say, naming the component.
 */
#include <errno.h>
#include <stdbool.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/openat2.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/xattr.h>
#include <unistd.h>
#include <cmocka.h>

#include "fsutil.h"
#include "unit.h"

static char root[256];
static int rootfd = -1;
static bool acl_ok;             /* the file system of /tmp takes POSIX ACLs */

/*
 * Sets the access ACL of rootfd/path in the kernel's format: owner rwx, one named
 * entry (tag 0x02 user or 0x08 group, id, perm), group r-x, mask, other r-x.
 */
static int set_acl(const char *path, unsigned tag, unsigned id, unsigned perm, unsigned mask)
{
        unsigned entries[5][3] = { { 0x01, 7, (unsigned) -1 }, { tag, perm, id }, { 0x04, 5, (unsigned) -1 },
                                   { 0x10, mask, (unsigned) -1 }, { 0x20, 5, (unsigned) -1 } };
        unsigned char buf[4 + 5 * 8] = { 2, 0, 0, 0 };
        char full[600];

        if (tag == 0x08) {
                /* Entries go in tag order: the named group after the owning group. */
                unsigned t[3];

                memcpy(t, entries[1], sizeof(t));
                memcpy(entries[1], entries[2], sizeof(t));
                memcpy(entries[2], t, sizeof(t));
        }
        for (int i = 0; i < 5; i++) {
                unsigned char *p = buf + 4 + 8 * i;

                p[0] = (unsigned char) entries[i][0];
                p[1] = (unsigned char) (entries[i][0] >> 8);
                p[2] = (unsigned char) entries[i][1];
                p[3] = 0;
                for (int b = 0; b < 4; b++)
                        p[4 + b] = (unsigned char) (entries[i][2] >> (8 * b));
        }
        snprintf(full, sizeof(full), "%s/%s", root, path);
        return setxattr(full, "system.posix_acl_access", buf, sizeof(buf), 0);
}

/* A small image: a file inside, links that point out of it in every way a link can. */
static int setup(void **state)
{
        (void) state;
        snprintf(root, sizeof(root), "/tmp/slots-fsutil.XXXXXX");
        if (!mkdtemp(root))
                return -1;
        rootfd = slots_root_open(root);
        if (rootfd < 0)
                return -1;
        if (mkdirat(rootfd, "etc", 0755) < 0 || mkdirat(rootfd, "etc/slots", 0755) < 0 ||
            mkdirat(rootfd, "srv", 0755) < 0)
                return -1;
        int fd = openat(rootfd, "etc/hostname", O_WRONLY | O_CREAT | O_EXCL, 0644);
        if (fd < 0 || write(fd, "image\n", 6) != 6)
                return -1;
        close(fd);
        if (symlinkat("/etc/hostname", rootfd, "srv/abs") < 0 ||           /* absolute: inside the root */
            symlinkat("../../../../../etc/hostname", rootfd, "srv/up") < 0 || /* climbs: clamped at the root */
            symlinkat("/etc", rootfd, "srv/etcdir") < 0 ||
            symlinkat("loop2", rootfd, "srv/loop1") < 0 || symlinkat("loop1", rootfd, "srv/loop2") < 0)
                return -1;
        /* The owner chain: others-writable, root's sticky, another owner, another group writing. */
        if (mkdirat(rootfd, "srv/w", 0) < 0 || fchmodat(rootfd, "srv/w", 0777, 0) < 0 ||
            mkdirat(rootfd, "srv/t", 0) < 0 || fchmodat(rootfd, "srv/t", 01777, 0) < 0 ||
            mkdirat(rootfd, "srv/u", 0755) < 0 || mkdirat(rootfd, "srv/u/in", 0755) < 0 ||
            mkdirat(rootfd, "srv/g", 0) < 0 || fchmodat(rootfd, "srv/g", 0775, 0) < 0)
                return -1;
        if (geteuid() == 0 && (fchownat(rootfd, "srv/u", 4242, 4242, 0) < 0 || fchownat(rootfd, "srv/g", 0, 4243, 0) < 0))
                return -1;
        /*
         * Writers only an ACL shows: a named user, a named group, one the mask takes write
         * from, root's own entry; and a symlink another account owns.
         */
        if (mkdirat(rootfd, "srv/au", 0755) < 0 || mkdirat(rootfd, "srv/ag", 0755) < 0 ||
            mkdirat(rootfd, "srv/am", 0755) < 0 || mkdirat(rootfd, "srv/ar", 0755) < 0 ||
            mkdirat(rootfd, "srv/au/in", 0755) < 0)
                return -1;
        acl_ok = set_acl("srv/au", 0x02, 4244, 7, 7) == 0 && set_acl("srv/ag", 0x08, 4245, 7, 7) == 0 &&
                 set_acl("srv/am", 0x02, 4244, 7, 5) == 0 && set_acl("srv/ar", 0x02, 0, 7, 7) == 0;
        if (symlinkat("/etc", rootfd, "srv/theirs") < 0 ||
            (geteuid() == 0 && fchownat(rootfd, "srv/theirs", 4242, 4242, AT_SYMLINK_NOFOLLOW) < 0))
                return -1;
        return 0;
}

static int teardown(void **state)
{
        char cmd[300];

        (void) state;
        close(rootfd);
        snprintf(cmd, sizeof(cmd), "rm -rf '%s'", root);
        return system(cmd) == 0 ? 0 : -1;
}

/* Reads what fd holds ("" for a directory), or the negative errno. */
static void describe(int fd, char *buf, size_t size)
{
        struct stat st;
        ssize_t n;

        if (fd < 0) {
                snprintf(buf, size, "error %d", fd);
                return;
        }
        fstat(fd, &st);
        if (S_ISDIR(st.st_mode)) {
                snprintf(buf, size, "dir %lu", (unsigned long) st.st_ino);
        } else {
                n = read(fd, buf, size - 1);
                buf[n < 0 ? 0 : n] = '\0';
        }
        close(fd);
}

static void test_walk_matches_openat2(void **state)
{
        static const struct {
                const char *path;
                int flags;
                const char *want; /* NULL: compare only with openat2 */
        } cases[] = {
                { "/etc/hostname", O_RDONLY, "image\n" },
                { "/srv/abs", O_RDONLY, "image\n" },
                { "/srv/up", O_RDONLY, "image\n" },
                { "/srv/etcdir/hostname", O_RDONLY, "image\n" },
                { "/../../etc/hostname", O_RDONLY, "image\n" },
                { "/srv/../etc/./hostname", O_RDONLY, "image\n" },
                { "//etc//hostname", O_RDONLY, "image\n" },
                { "/etc/missing", O_RDONLY, "error -2" },
                { "/etc/hostname/x", O_RDONLY, "error -20" },
                { "/srv/loop1", O_RDONLY, "error -40" },
                { "/", O_RDONLY | O_DIRECTORY, NULL },
                { "/etc/slots", O_RDONLY | O_DIRECTORY, NULL },
                { "/srv/etcdir", O_RDONLY | O_DIRECTORY, NULL },
        };

        (void) state;
        for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
                char a[64], b[64];

                struct open_how how = {
                        .flags = (unsigned long long) (cases[i].flags | O_CLOEXEC),
                        .resolve = RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS,
                };
                int k = (int) syscall(SYS_openat2, rootfd, cases[i].path + 1, &how, sizeof(how));

                /* The kernel's own resolution in a root is the reference ("/" itself: the root). */
                if (k < 0 && errno == ENOENT && cases[i].path[1] == '\0')
                        k = openat(rootfd, ".", cases[i].flags | O_CLOEXEC);
                describe(k < 0 ? -errno : k, a, sizeof(a));
                describe(slots_open_in(rootfd, cases[i].path, cases[i].flags), b, sizeof(b));
                if (strcmp(a, b) != 0)
                        if (strcmp(a, "error -38") != 0)
                                fail_msg("%s: openat2 gives \"%s\", the resolver \"%s\"", cases[i].path, a, b);
                if (cases[i].want && strcmp(b, cases[i].want) != 0)
                        fail_msg("%s: got \"%s\", want \"%s\"", cases[i].path, a, cases[i].want);
        }
}

#define NOSYM SLOTS_CHASE_NO_SYMLINKS
#define TRUST SLOTS_CHASE_TRUSTED

/* The resolver as a table: path and flags in, what opened (or the error and the component it names) out. */
static void test_chase_table(void **state)
{
        static const struct {
                const char *path;
                unsigned flags;
                uid_t uid;              /* trusted_uid, 0 for root only */
                gid_t gid;
                const char *want;       /* content, "dir", or "error N" */
                const char *object;     /* the component a refusal names (NULL: not checked) */
                bool root_only;         /* needs the chown of setup */
        } rows[] = {
                { "/etc/hostname", NOSYM | SLOTS_CHASE_MUST_REG, 0, 0, "image\n", NULL, false },
                { "/etc/slots", NOSYM | SLOTS_CHASE_MUST_DIR, 0, 0, "dir", NULL, false },
                { "/srv/abs", 0, 0, 0, "image\n", NULL, false },
                { "/srv/abs", NOSYM, 0, 0, "error -40", "/srv/abs", false },
                { "/srv/etcdir/hostname", 0, 0, 0, "image\n", NULL, false },
                { "/srv/etcdir/hostname", NOSYM, 0, 0, "error -40", "/srv/etcdir", false },
                { "/srv/up", 0, 0, 0, "image\n", NULL, false },
                { "/srv/loop1", 0, 0, 0, "error -40", NULL, false },
                { "/etc", SLOTS_CHASE_MUST_REG, 0, 0, "error -22", "/etc", false },
                { "/etc/hostname", SLOTS_CHASE_MUST_DIR, 0, 0, "error -20", "/etc/hostname", false },
                { "/etc/missing/x", NOSYM, 0, 0, "error -2", "/etc/missing", false },
                { "/etc/hostname/x", NOSYM, 0, 0, "error -20", "/etc/hostname", false },
                { "/srv/../etc/./hostname", NOSYM, 0, 0, "image\n", NULL, false },
                { "/srv/u/in/../../../etc/hostname", NOSYM, 0, 0, "image\n", NULL, false },
                /* owner chain, both sides of each rule */
                { "/srv", NOSYM | TRUST, 0, 0, "dir", NULL, true },
                { "/srv/w", NOSYM | TRUST, 0, 0, "error -1", "/srv/w", true },
                { "/srv/t", NOSYM | TRUST, 0, 0, "dir", NULL, true },
                { "/srv/u/in", NOSYM | TRUST, 0, 0, "error -1", "/srv/u", true },
                { "/srv/u/in", NOSYM | TRUST, 4242, 0, "dir", NULL, true },
                { "/srv/g", NOSYM | TRUST, 0, 0, "error -1", "/srv/g", true },
                { "/srv/g", NOSYM | TRUST, 0, 4243, "dir", NULL, true },
                /* writers in an ACL (acl_ok), both sides: the entry's id trusted, the mask without w */
                { "/srv/au/in", NOSYM | TRUST, 0, 0, "error -1", "/srv/au", true },
                { "/srv/au/in", NOSYM | TRUST, 4244, 0, "dir", NULL, true },
                { "/srv/ag", NOSYM | TRUST, 0, 0, "error -1", "/srv/ag", true },
                { "/srv/ag", NOSYM | TRUST, 0, 4245, "dir", NULL, true },
                { "/srv/am", NOSYM | TRUST, 0, 0, "dir", NULL, true },
                { "/srv/ar", NOSYM | TRUST, 0, 0, "dir", NULL, true },
                /* a symlink is followed under TRUST only when root or the trusted account owns it */
                { "/srv/etcdir/slots", TRUST, 0, 0, "dir", NULL, true },
                { "/srv/theirs/slots", TRUST, 0, 0, "error -1", "/srv/theirs", true },
                { "/srv/theirs/slots", TRUST, 4242, 0, "dir", NULL, true },
        };

        (void) state;
        if (geteuid() != 0)
                print_message("skipped: the rows that need other owners (root only)\n");
        if (!acl_ok)
                print_message("skipped: the ACL rows (/tmp takes no POSIX ACLs here)\n");
        for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
                struct slots_chase how = {
                        .flags = rows[i].flags,
                        .trusted_uid = rows[i].uid ? rows[i].uid : (uid_t) -1,
                        .trusted_gid = rows[i].gid ? rows[i].gid : (gid_t) -1,
                        .open_flags = O_RDONLY,
                };
                struct slots_error e;
                char got[64];
                int fd;

                if (rows[i].root_only && geteuid() != 0)
                        continue;
                if (strncmp(rows[i].path, "/srv/a", 6) == 0 && !acl_ok)
                        continue;
                slots_error_clear(&e);
                fd = slots_chase(rootfd, rows[i].path, &how, NULL, &e);
                describe(fd, got, sizeof(got));
                if (strncmp(got, "dir ", 4) == 0)
                        got[3] = '\0';
                if (strcmp(got, rows[i].want) != 0)
                        fail_msg("row %zu %s: got \"%s\", want \"%s\" (%s: %s)", i, rows[i].path, got, rows[i].want,
                                 e.object, e.reason);
                if (rows[i].object && strcmp(e.object, rows[i].object) != 0)
                        fail_msg("row %zu %s: the error names \"%s\", want \"%s\"", i, rows[i].path, e.object,
                                 rows[i].object);
                if (fd < 0 && fd != -ENOENT && !e.reason[0])
                        fail_msg("row %zu %s: no reason given", i, rows[i].path);
        }
}

/* SLOTS_CHASE_PARENT: the folder and the last name; a symlink on the way is refused all the same. */
static void test_chase_parent(void **state)
{
        struct slots_chase how = { .flags = SLOTS_CHASE_PARENT | NOSYM, .open_flags = O_RDONLY | O_DIRECTORY };
        const char *base = NULL;
        struct stat st;
        int fd;

        (void) state;
        fd = slots_chase(rootfd, "/etc/hostname", &how, &base, NULL);
        assert_true(fd >= 0);
        assert_string_equal(base, "hostname");
        assert_int_equal(fstatat(fd, base, &st, AT_SYMLINK_NOFOLLOW), 0);
        assert_true(S_ISREG(st.st_mode));
        close(fd);
        assert_int_equal(slots_chase(rootfd, "/srv/etcdir/hostname", &how, &base, NULL), -ELOOP);
        assert_int_equal(slots_chase(rootfd, "/etc/", &how, &base, NULL), -EINVAL);
}

/* A path of 3,000 components: no fixed stack in the resolver. */
static void test_chase_deep(void **state)
{
        struct slots_chase how = { .flags = NOSYM | SLOTS_CHASE_MUST_DIR, .open_flags = O_RDONLY };
        char *path = malloc(3000 * 2 + 16);
        struct rlimit was, low;
        int dfd, fd;

        (void) state;
        assert_non_null(path);
        strcpy(path, "/srv");
        dfd = openat(rootfd, "srv", O_RDONLY | O_DIRECTORY);
        for (int i = 0; i < 3000; i++) {
                int nfd;

                assert_int_equal(mkdirat(dfd, "d", 0755), 0);
                nfd = openat(dfd, "d", O_RDONLY | O_DIRECTORY);
                close(dfd);
                dfd = nfd;
                strcat(path + strlen(path), "/d");
        }
        close(dfd);
        /* Two folders open at any depth: 3,000 components within 256 descriptors. */
        assert_int_equal(getrlimit(RLIMIT_NOFILE, &was), 0);
        low = was;
        low.rlim_cur = 256;
        assert_int_equal(setrlimit(RLIMIT_NOFILE, &low), 0);
        fd = slots_chase(rootfd, path, &how, NULL, NULL);
        assert_int_equal(setrlimit(RLIMIT_NOFILE, &was), 0);
        if (fd < 0)
                fail_msg("a path of 3,000 components with 256 descriptors: error %d", fd);
        close(fd);
        free(path);
}

/* A policy for slots_read's check: refuses a file whose mode lets others write. */
static int no_other_write(const struct stat *st, void *data, struct slots_error *e)
{
        (void) data;
        if (st->st_mode & S_IWOTH)
                return slots_error_refuse(e, -EPERM, "f", "writable by others");
        return 0;
}

/*
 * slots_read_text and slots_read_text_fd: what is read, what is refused, with which
 * errno, kind and words.  A FIFO is never opened (the read would block), a symlink
 * never followed.
 */
static void test_read_text(void **state)
{
        static const struct {
                const char *name;       /* in srv/r */
                const char *what;
                size_t max;
                bool policy;
                int want;               /* the return */
                enum slots_error_kind kind;
                const char *reason;     /* the whole reason, or the content read */
        } rows[] = {
                { "ok", NULL, 4, false, 0, 0, "1234" },
                { "ok", NULL, 3, false, -EFBIG, SLOTS_ERR_INVALID, "is larger than 3 bytes" },
                { "ok", "the config", 3, false, -EFBIG, SLOTS_ERR_INVALID, "the config is larger than 3 bytes" },
                { "empty", NULL, 0, false, 0, 0, "" },
                { "nul", NULL, 100, false, -EBADMSG, SLOTS_ERR_INVALID, "contains a NUL byte" },
                { "nul", "the table", 100, false, -EBADMSG, SLOTS_ERR_INVALID, "the table contains a NUL byte" },
                { "link", NULL, 100, false, -ELOOP, SLOTS_ERR_REFUSED, "is a symlink; refusing to follow it" },
                { "fifo", NULL, 100, false, -EINVAL, SLOTS_ERR_REFUSED, "is not a regular file" },
                { "dir", "the config", 100, false, -EINVAL, SLOTS_ERR_REFUSED, "the config is not a regular file" },
                { "missing", NULL, 100, false, -ENOENT, SLOTS_ERR_FAILED, "cannot open: No such file or directory" },
                { "missing", "the config", 100, false, -ENOENT, SLOTS_ERR_FAILED,
                  "cannot open the config: No such file or directory" },
                { "open", NULL, 100, true, -EPERM, SLOTS_ERR_REFUSED, "writable by others" },
                { "ok", NULL, 100, true, 0, 0, "1234" },
        };
        int dfd, failures = 0;

        (void) state;
        assert_int_equal(mkdirat(rootfd, "srv/r", 0755), 0);
        dfd = openat(rootfd, "srv/r", O_RDONLY | O_DIRECTORY);
        assert_true(dfd >= 0);
        for (int i = 0; i < 4; i++) {
                static const char *const names[] = { "ok", "empty", "nul", "open" };
                static const char *const texts[] = { "1234", "", "a\0b", "x" };
                int fd = openat(dfd, names[i], O_WRONLY | O_CREAT | O_EXCL, 0644);
                size_t n = i == 2 ? 3 : strlen(texts[i]);

                assert_true(fd >= 0);
                assert_int_equal(write(fd, texts[i], n), (ssize_t) n);
                close(fd);
        }
        assert_int_equal(fchmodat(dfd, "open", 0666, 0), 0);
        assert_int_equal(symlinkat("ok", dfd, "link"), 0);
        assert_int_equal(mkfifoat(dfd, "fifo", 0644), 0);
        assert_int_equal(mkdirat(dfd, "dir", 0755), 0);

        for (size_t i = 0; i < N_ELEM(rows); i++) {
                const struct slots_read how = { .path = "f", .what = rows[i].what, .max = rows[i].max,
                                                .check = rows[i].policy ? no_other_write : NULL };
                const char *got;
                struct slots_error e;
                char *text = NULL;
                size_t len = 99;
                int r;

                slots_error_clear(&e);
                r = slots_read_text(dfd, rows[i].name, &how, NULL, &text, &len, &e);
                got = r == 0 ? text : e.reason;
                if (r != rows[i].want || (r < 0 && e.kind != rows[i].kind) || strcmp(got, rows[i].reason) != 0 ||
                    (r == 0 && len != strlen(rows[i].reason)) || (r < 0 && (text || strcmp(e.object, "f") != 0)))
                        ROW_FAIL("row %zu (%s): %d kind %d \"%s\", want %d kind %d \"%s\"", i, rows[i].name, r,
                                 (int) e.kind, got, rows[i].want, (int) rows[i].kind, rows[i].reason);
                free(text);
                text = NULL;

                /* The same through an fd already open, where one can be opened without harm. */
                if (strcmp(rows[i].name, "fifo") == 0 || strcmp(rows[i].name, "link") == 0 ||
                    strcmp(rows[i].name, "missing") == 0)
                        continue;
                int fd = openat(dfd, rows[i].name, O_RDONLY | O_CLOEXEC);

                assert_true(fd >= 0);
                slots_error_clear(&e);
                r = slots_read_text_fd(fd, &how, NULL, &text, &len, &e);
                got = r == 0 ? text : e.reason;
                if (r != rows[i].want || (r < 0 && e.kind != rows[i].kind) || strcmp(got, rows[i].reason) != 0)
                        ROW_FAIL("row %zu (%s) by fd: %d kind %d \"%s\", want %d \"%s\"", i, rows[i].name, r,
                                 (int) e.kind, got, rows[i].want, rows[i].reason);
                assert_true(fcntl(fd, F_GETFD) >= 0);   /* left open for the caller */
                close(fd);
                free(text);
        }
        close(dfd);
        if (failures)
                fail_msg("%d rows failed", failures);
}

/*
 * slots_ensure_dir as a table: what is at the name before, the flags, what comes
 * back, what found says, and the folder after.  Every row runs twice, with and
 * without SLOTS_ENSURE_MKDIR_FIRST: the order of mkdir and look changes no result.
 */
enum { NONE, DIR_RIGHT, DIR_0755, DIR_OTHER_GID, LINK, LINK_RIGHT, FILE_, FIFO };

static void make_thing(int dfd, const char *name, int what, gid_t other)
{
        int fd;

        switch (what) {
        case DIR_RIGHT:
        case DIR_0755:
        case DIR_OTHER_GID:
                assert_int_equal(mkdirat(dfd, name, 0700), 0);
                assert_int_equal(fchmodat(dfd, name, what == DIR_0755 ? 0755 : 0700, 0), 0);
                if (what == DIR_OTHER_GID)
                        assert_int_equal(fchownat(dfd, name, (uid_t) -1, other, 0), 0);
                break;
        case LINK:
        case LINK_RIGHT:
                assert_int_equal(symlinkat(what == LINK ? "target" : "right", dfd, name), 0);
                break;
        case FILE_:
                fd = openat(dfd, name, O_WRONLY | O_CREAT | O_EXCL, 0600);
                assert_true(fd >= 0);
                close(fd);
                break;
        case FIFO:
                assert_int_equal(mkfifoat(dfd, name, 0600), 0);
                break;
        }
}

static void test_ensure_dir(void **state)
{
        enum { DRY = SLOTS_ENSURE_DRY_RUN, NOFD = SLOTS_ENSURE_NO_FD };
        static const struct {
                int before;
                unsigned flags;
                int want;               /* 1: an fd; else the return */
                bool created, changed;
                mode_t old_mode;        /* found->mode when it was there */
                mode_t after;           /* the folder's mode afterwards; 0: no folder */
                bool root_only;
                bool theirs;            /* for 4242:4243 (root only), not for ourselves */
                mode_t mode;            /* the mode asked for; 0: 0700 */
        } rows[] = {
                { NONE, 0, 1, true, true, 0, 0700, false, false, 0 },
                { NONE, NOFD, 0, true, true, 0, 0700, false, false, 0 },
                { NONE, DRY, -ENOENT, true, true, 0, 0, false, false, 0 },
                { NONE, DRY | NOFD, -ENOENT, true, true, 0, 0, false, false, 0 },
                /* made for another owner: root's until the chown, the mode set where it still differs */
                { NONE, 0, 1, true, true, 0, 0700, true, true, 0 },
                { NONE, NOFD, 0, true, true, 0, 0700, true, true, 0 },
                { NONE, NOFD, 0, true, true, 0, 02750, true, true, 02750 },
                { NONE, NOFD, 0, true, true, 0, 0755, false, false, 0755 },
                { DIR_RIGHT, 0, 1, false, false, 0700, 0700, false, false, 0 },
                { DIR_RIGHT, NOFD, 0, false, false, 0700, 0700, false, false, 0 },
                { DIR_RIGHT, DRY | NOFD, 0, false, false, 0700, 0700, false, false, 0 },
                { DIR_0755, 0, 1, false, true, 0755, 0700, false, false, 0 },
                { DIR_0755, NOFD, 0, false, true, 0755, 0700, false, false, 0 },
                { DIR_0755, DRY, 1, false, true, 0755, 0755, false, false, 0 },
                { DIR_0755, DRY | NOFD, 0, false, true, 0755, 0755, false, false, 0 },
                /* the group alone is wrong: a look by name must see it too */
                { DIR_OTHER_GID, NOFD, 0, false, true, 0700, 0700, true, false, 0 },
                { DIR_OTHER_GID, DRY | NOFD, 0, false, true, 0700, 0700, true, false, 0 },
                /* never followed, never replaced, never opened */
                { LINK, 0, -ELOOP, false, false, 0, 0, false, false, 0 },
                { LINK, NOFD, -ELOOP, false, false, 0, 0, false, false, 0 },
                { LINK, DRY | NOFD, -ELOOP, false, false, 0, 0, false, false, 0 },
                /* a link to a folder that is right: a look by name that followed would see nothing to do */
                { LINK_RIGHT, NOFD, -ELOOP, false, false, 0, 0, false, false, 0 },
                { LINK_RIGHT, DRY | NOFD, -ELOOP, false, false, 0, 0, false, false, 0 },
                { LINK_RIGHT, 0, -ELOOP, false, false, 0, 0, false, false, 0 },
                { FILE_, 0, -ENOTDIR, false, false, 0, 0, false, false, 0 },
                { FILE_, NOFD, -ENOTDIR, false, false, 0, 0, false, false, 0 },
                { FIFO, 0, -ENOTDIR, false, false, 0, 0, false, false, 0 },
                { FIFO, DRY, -ENOTDIR, false, false, 0, 0, false, false, 0 },
        };
        uid_t uid = geteuid();
        gid_t gid = getegid(), other = 4243;
        int failures = 0, dfd, n = 0;
        struct stat target;

        (void) state;
        assert_int_equal(mkdirat(rootfd, "ens", 0755), 0);
        dfd = openat(rootfd, "ens", O_RDONLY | O_DIRECTORY);
        assert_true(dfd >= 0);
        /* Links to folders of ours: following one would change that folder, or take it for the folder. */
        assert_int_equal(mkdirat(dfd, "target", 0755), 0);
        assert_int_equal(mkdirat(dfd, "right", 0700), 0);
        for (size_t i = 0; i < N_ELEM(rows); i++) {
                for (int first = 0; first < 2; first++) {
                        unsigned flags = rows[i].flags | (first ? SLOTS_ENSURE_MKDIR_FIRST : 0);
                        struct slots_dir_found f;
                        struct stat st;
                        char name[32];
                        int r;

                        uid_t wu = rows[i].theirs ? 4242 : uid;
                        gid_t wg = rows[i].theirs ? other : gid;

                        if (rows[i].root_only && uid != 0)
                                continue;
                        snprintf(name, sizeof(name), "e%d", n++);
                        make_thing(dfd, name, rows[i].before, other);
                        memset(&f, 0x5a, sizeof(f));
                        r = slots_ensure_dir(dfd, name, wu, wg, rows[i].mode ? rows[i].mode : 0700, flags, &f);
                        if (rows[i].want == 1 ? r <= 0 : r != rows[i].want)
                                ROW_FAIL("row %zu (flags %#x): returned %d, want %s%d", i, flags, r,
                                         rows[i].want == 1 ? "an fd, not " : "", rows[i].want == 1 ? r : rows[i].want);
                        if (rows[i].want == 1 && r > 0)
                                close(r);
                        if (r >= 0 || r == -ENOENT) {
                                if (f.created != rows[i].created || f.changed != rows[i].changed)
                                        ROW_FAIL("row %zu (flags %#x): created %d changed %d, want %d %d", i, flags,
                                                 f.created, f.changed, rows[i].created, rows[i].changed);
                                if (!f.created && (f.mode != rows[i].old_mode || f.uid != uid ||
                                                   f.gid != (rows[i].before == DIR_OTHER_GID ? other : gid)))
                                        ROW_FAIL("row %zu (flags %#x): found %u:%u %04o, want %04o", i, flags,
                                                 (unsigned) f.uid, (unsigned) f.gid, (unsigned) f.mode,
                                                 (unsigned) rows[i].old_mode);
                        }
                        if (fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
                                st.st_mode = 0;
                        if (rows[i].after ? !S_ISDIR(st.st_mode) || (st.st_mode & 07777) != rows[i].after ||
                                                    st.st_uid != wu || (!(flags & DRY) && st.st_gid != wg)
                                          : S_ISDIR(st.st_mode))
                                ROW_FAIL("row %zu (flags %#x): afterwards %u:%u mode %06o, want a folder %04o", i,
                                         flags, (unsigned) st.st_uid, (unsigned) st.st_gid, (unsigned) st.st_mode,
                                         (unsigned) rows[i].after);
                }
        }
        /* The links' target is as it was. */
        assert_int_equal(fstatat(dfd, "target", &target, 0), 0);
        assert_int_equal(target.st_mode & 07777, 0755);
        close(dfd);
        assert_int_equal(failures, 0);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_walk_matches_openat2),
                cmocka_unit_test(test_chase_table),
                cmocka_unit_test(test_chase_parent),
                cmocka_unit_test(test_chase_deep),
                cmocka_unit_test(test_read_text),
                cmocka_unit_test(test_ensure_dir),
        };

        return cmocka_run_group_tests(tests, setup, teardown);
}
