/*
 * The resolver (resolve.c): the openat2 path and the resolver agree, neither leaves the root,
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

#include "resolve.h"
#include "unit.h"

static char root[256];
static int rootfd = -1;
static int acl_err;             /* 0, or why the ACLs of setup could not be set (EOPNOTSUPP: /tmp takes none) */

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

/*
 * A folder whose access ACL holds n named users that only read and, last, one
 * that writes (id writer): larger than the resolver's first read of the attribute.
 */
static int set_big_acl(const char *path, unsigned n, unsigned writer)
{
        size_t len = 4 + 8 * (n + 5);
        unsigned char *buf = calloc(1, len), *p;
        char full[600];
        int r;

        if (!buf)
                return -1;
        buf[0] = 2;
        p = buf + 4;
        for (unsigned i = 0; i < n + 5; i++, p += 8) {
                unsigned tag, perm, id = (unsigned) -1;

                if (i == 0)
                        tag = 0x01, perm = 7;                           /* user:: */
                else if (i <= n + 1)
                        tag = 0x02, perm = i == n + 1 ? 6 : 4, id = i == n + 1 ? writer : 5000 + i;
                else if (i == n + 2)
                        tag = 0x04, perm = 5;                           /* group:: */
                else if (i == n + 3)
                        tag = 0x10, perm = 7;                           /* mask:: */
                else
                        tag = 0x20, perm = 5;                           /* other:: */
                p[0] = (unsigned char) tag;
                p[2] = (unsigned char) perm;
                for (int b = 0; b < 4; b++)
                        p[4 + b] = (unsigned char) (id >> (8 * b));
        }
        snprintf(full, sizeof(full), "%s/%s", root, path);
        r = setxattr(full, "system.posix_acl_access", buf, len, 0);
        free(buf);
        return r;
}

/* A small image: a file inside, links that point out of it in every way a link can. */
static int setup(void **state)
{
        (void) state;
        snprintf(root, sizeof(root), "/tmp/slots-resolve.XXXXXX");
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
            mkdirat(rootfd, "srv/au/in", 0755) < 0 || mkdirat(rootfd, "srv/abig", 0755) < 0)
                return -1;
        if (set_acl("srv/au", 0x02, 4244, 7, 7) < 0 || set_acl("srv/ag", 0x08, 4245, 7, 7) < 0 ||
            set_acl("srv/am", 0x02, 4244, 7, 5) < 0 || set_acl("srv/ar", 0x02, 0, 7, 7) < 0 ||
            set_big_acl("srv/abig", 200, 4246) < 0)
                acl_err = errno;
        /* In the way of SLOTS_CHASE_MKDIR: a symlink, a FIFO, a folder a killed run left half made. */
        if (mkdirat(rootfd, "srv/mk", 0755) < 0 || symlinkat("/etc", rootfd, "srv/mk/link") < 0 ||
            mkfifoat(rootfd, "srv/mk/fifo", 0600) < 0 || mkdirat(rootfd, "srv/mk/half", 0) < 0)
                return -1;
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

/* What a row of the resolver's table needs to run. */
enum needs {
        ANY,                    /* nothing */
        OWNERS,                 /* root: setup's chown to other owners */
        ACLS,                   /* root, and ACLs on /tmp */
};

/* The resolver as a table: path and flags in, what opened (or the error and the component it names) out. */
static const struct {
        const char *path;
        unsigned flags;
        uid_t uid;              /* trusted_uid, 0 for root only */
        gid_t gid;
        const char *want;       /* content, "dir", or "error N" */
        const char *object;     /* the component a refusal names (NULL: not checked) */
        enum needs needs;
} rows[] = {
        { "/etc/hostname", NOSYM | SLOTS_CHASE_MUST_REG, 0, 0, "image\n", NULL, ANY },
        { "/etc/slots", NOSYM | SLOTS_CHASE_MUST_DIR, 0, 0, "dir", NULL, ANY },
        { "/srv/abs", 0, 0, 0, "image\n", NULL, ANY },
        { "/srv/abs", NOSYM, 0, 0, "error -40", "/srv/abs", ANY },
        { "/srv/etcdir/hostname", 0, 0, 0, "image\n", NULL, ANY },
        { "/srv/etcdir/hostname", NOSYM, 0, 0, "error -40", "/srv/etcdir", ANY },
        { "/srv/up", 0, 0, 0, "image\n", NULL, ANY },
        { "/srv/loop1", 0, 0, 0, "error -40", NULL, ANY },
        { "/etc", SLOTS_CHASE_MUST_REG, 0, 0, "error -22", "/etc", ANY },
        { "/etc/hostname", SLOTS_CHASE_MUST_DIR, 0, 0, "error -20", "/etc/hostname", ANY },
        { "/etc/missing/x", NOSYM, 0, 0, "error -2", "/etc/missing", ANY },
        { "/etc/hostname/x", NOSYM, 0, 0, "error -20", "/etc/hostname", ANY },
        { "/srv/../etc/./hostname", NOSYM, 0, 0, "image\n", NULL, ANY },
        { "/srv/u/in/../../../etc/hostname", NOSYM, 0, 0, "image\n", NULL, ANY },
        /* owner chain, both sides of each rule */
        { "/srv", NOSYM | TRUST, 0, 0, "dir", NULL, OWNERS },
        { "/srv/w", NOSYM | TRUST, 0, 0, "error -1", "/srv/w", OWNERS },
        { "/srv/t", NOSYM | TRUST, 0, 0, "dir", NULL, OWNERS },
        { "/srv/u/in", NOSYM | TRUST, 0, 0, "error -1", "/srv/u", OWNERS },
        { "/srv/u/in", NOSYM | TRUST, 4242, 0, "dir", NULL, OWNERS },
        { "/srv/g", NOSYM | TRUST, 0, 0, "error -1", "/srv/g", OWNERS },
        { "/srv/g", NOSYM | TRUST, 0, 4243, "dir", NULL, OWNERS },
        /* a symlink is followed under TRUST only when root or the trusted account owns it */
        { "/srv/etcdir/slots", TRUST, 0, 0, "dir", NULL, OWNERS },
        { "/srv/theirs/slots", TRUST, 0, 0, "error -1", "/srv/theirs", OWNERS },
        { "/srv/theirs/slots", TRUST, 4242, 0, "dir", NULL, OWNERS },
        /* writers in an ACL, both sides: the entry's id trusted, the mask without w */
        { "/srv/au/in", NOSYM | TRUST, 0, 0, "error -1", "/srv/au", ACLS },
        { "/srv/au/in", NOSYM | TRUST, 4244, 0, "dir", NULL, ACLS },
        { "/srv/ag", NOSYM | TRUST, 0, 0, "error -1", "/srv/ag", ACLS },
        { "/srv/ag", NOSYM | TRUST, 0, 4245, "dir", NULL, ACLS },
        { "/srv/am", NOSYM | TRUST, 0, 0, "dir", NULL, ACLS },
        { "/srv/ar", NOSYM | TRUST, 0, 0, "dir", NULL, ACLS },
        /* 200 readers before the writer: an attribute larger than the first read finds it all the same */
        { "/srv/abig", NOSYM | TRUST, 0, 0, "error -1", "/srv/abig", ACLS },
        { "/srv/abig", NOSYM | TRUST, 4246, 0, "dir", NULL, ACLS },
};

/* Runs the rows that need `needs`; returns how many failed. */
static int chase_rows(enum needs needs)
{
        int failures = 0, ran = 0;

        for (size_t i = 0; i < N_ELEM(rows); i++) {
                struct slots_chase how = {
                        .flags = rows[i].flags,
                        .trusted_uid = rows[i].uid ? rows[i].uid : (uid_t) -1,
                        .trusted_gid = rows[i].gid ? rows[i].gid : (gid_t) -1,
                        .open_flags = O_RDONLY,
                };
                struct slots_error e;
                char got[64];
                int fd;

                if (rows[i].needs != needs)
                        continue;
                ran++;
                slots_error_clear(&e);
                fd = slots_chase(rootfd, rows[i].path, &how, NULL, &e);
                describe(fd, got, sizeof(got));
                if (strncmp(got, "dir ", 4) == 0)
                        got[3] = '\0';
                if (strcmp(got, rows[i].want) != 0)
                        ROW_FAIL("row %zu %s: got \"%s\", want \"%s\" (%s: %s)", i, rows[i].path, got, rows[i].want,
                                 e.object, e.reason);
                if (rows[i].object && strcmp(e.object, rows[i].object) != 0)
                        ROW_FAIL("row %zu %s: the error names \"%s\", want \"%s\"", i, rows[i].path, e.object,
                                 rows[i].object);
                if (fd < 0 && fd != -ENOENT && !e.reason[0])
                        ROW_FAIL("row %zu %s: no reason given", i, rows[i].path);
        }
        assert_true(ran > 0);
        return failures;
}

static void test_chase_table(void **state)
{
        int failures;

        (void) state;
        failures = chase_rows(ANY);
        if (failures)
                fail_msg("%d rows failed", failures);
}

/* The owner chain's rows: other owners need root's chown in setup, else the test is a skip. */
static void test_chase_owners(void **state)
{
        int failures;

        (void) state;
        if (geteuid() != 0) {
                print_message("skipped: the owner chain's rows need files of other owners (root only)\n");
                skip();
        }
        failures = chase_rows(OWNERS);
        if (failures)
                fail_msg("%d rows failed", failures);
}

/* Writers only an ACL shows: a skip where /tmp takes no POSIX ACL, a failure where setting one failed else. */
static void test_chase_acls(void **state)
{
        int failures;

        (void) state;
        if (geteuid() != 0) {
                print_message("skipped: the ACL rows need root (their folders' owner chain)\n");
                skip();
        }
        if (acl_err == EOPNOTSUPP) {
                print_message("skipped: the ACL rows (%s takes no POSIX ACLs)\n", root);
                skip();
        }
        if (acl_err)
                fail_msg("setting the ACLs of setup: %s", strerror(acl_err));
        failures = chase_rows(ACLS);
        if (failures)
                fail_msg("%d rows failed", failures);
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

/*
 * SLOTS_CHASE_MKDIR as a table: the path, what is in the way, and each folder made (or
 * finished) with the asked mode, owned as asked; what it refuses is not made.
 */
static const struct {
        const char *path;
        unsigned flags;
        uid_t uid;              /* mkdir_uid; 0: the caller */
        const char *want;       /* "dir" or "error N" */
        const char *object;     /* the component a refusal names */
        const char *made[3];    /* folders now there with mode 0750 (in the root) */
        const char *absent;     /* what must not be there after */
        bool root;              /* needs setup's chown, or a chown of its own */
} mkdir_rows[] = {
        { "/srv/mk/new/a/b", SLOTS_CHASE_MUST_DIR, 0, "dir", NULL,
          { "srv/mk/new", "srv/mk/new/a", "srv/mk/new/a/b" }, NULL, false },
        { "/srv/mk/half/c", 0, 0, "dir", NULL, { "srv/mk/half", "srv/mk/half/c" }, NULL, false },
        { "/srv/mk/ok/x", TRUST, 0, "dir", NULL, { "srv/mk/ok", "srv/mk/ok/x" }, NULL, true },
        { "/srv/mk/link/x", 0, 0, "error -40", "/srv/mk/link", { NULL }, "etc/x", false },
        { "/srv/mk/fifo/x", 0, 0, "error -20", "/srv/mk/fifo", { NULL }, NULL, false },
        { "/srv/mk/fifo", SLOTS_CHASE_MUST_DIR, 0, "error -20", "/srv/mk/fifo", { NULL }, NULL, false },
        /* a step another owns is refused before anything is made below it */
        { "/srv/u/new", TRUST, 0, "error -1", "/srv/u", { NULL }, "srv/u/new", true },
        /* a made step is checked too: one made for an owner the chain does not trust is refused */
        { "/srv/mk/theirs/x", TRUST, 4242, "error -1", "/srv/mk/theirs", { NULL }, "srv/mk/theirs/x", true },
};

static void test_chase_mkdir(void **state)
{
        int failures = 0;

        (void) state;
        if (geteuid() != 0) {
                print_message("skipped: the mkdir rows need root (they make folders of uid 65534)\n");
                skip();
        }
        for (size_t i = 0; i < N_ELEM(mkdir_rows); i++) {
                const uid_t uid = mkdir_rows[i].uid ? mkdir_rows[i].uid : geteuid();
                struct slots_chase how = {
                        .flags = SLOTS_CHASE_MKDIR | mkdir_rows[i].flags, .trusted_uid = (uid_t) -1,
                        .trusted_gid = (gid_t) -1, .open_flags = O_RDONLY, .mkdir_uid = uid,
                        .mkdir_gid = getegid(), .mkdir_mode = 0750,
                };
                struct slots_error e;
                struct stat st;
                char got[64];

                if (mkdir_rows[i].root && geteuid() != 0)
                        continue;
                slots_error_clear(&e);
                describe(slots_chase(rootfd, mkdir_rows[i].path, &how, NULL, &e), got, sizeof(got));
                if (strncmp(got, "dir ", 4) == 0)
                        got[3] = '\0';
                if (strcmp(got, mkdir_rows[i].want) != 0)
                        ROW_FAIL("mkdir row %zu %s: got \"%s\", want \"%s\" (%s: %s)", i, mkdir_rows[i].path, got,
                                 mkdir_rows[i].want, e.object, e.reason);
                if (mkdir_rows[i].object && strcmp(e.object, mkdir_rows[i].object) != 0)
                        ROW_FAIL("mkdir row %zu %s: the error names \"%s\", want \"%s\"", i, mkdir_rows[i].path,
                                 e.object, mkdir_rows[i].object);
                for (size_t k = 0; k < N_ELEM(mkdir_rows[i].made) && mkdir_rows[i].made[k]; k++)
                        if (fstatat(rootfd, mkdir_rows[i].made[k], &st, AT_SYMLINK_NOFOLLOW) < 0 ||
                            !S_ISDIR(st.st_mode) || (st.st_mode & 07777) != 0750 || st.st_uid != uid)
                                ROW_FAIL("mkdir row %zu: %s is not a folder of uid %u with mode 0750", i,
                                         mkdir_rows[i].made[k], (unsigned) uid);
                if (mkdir_rows[i].absent && fstatat(rootfd, mkdir_rows[i].absent, &st, AT_SYMLINK_NOFOLLOW) == 0)
                        ROW_FAIL("mkdir row %zu: %s was made", i, mkdir_rows[i].absent);
        }
        if (failures)
                fail_msg("%d rows failed", failures);
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

int main(void)
{
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_walk_matches_openat2),
                cmocka_unit_test(test_chase_table),
                cmocka_unit_test(test_chase_owners),
                cmocka_unit_test(test_chase_acls),
                cmocka_unit_test(test_chase_parent),
                cmocka_unit_test(test_chase_mkdir),
                cmocka_unit_test(test_chase_deep),
        };

        return cmocka_run_group_tests(tests, setup, teardown);
}
