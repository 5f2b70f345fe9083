/*
 * The fd-based opens and reads (fsutil.c): what slots_read_text reads and refuses, with which
 * errno, kind and words, and what slots_ensure_dir makes, changes and refuses.
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
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>

#include "fsutil.h"
#include "unit.h"

static char root[256];
static int rootfd = -1;

/* A scratch root with one folder, srv, for each test to make its objects in. */
static int setup(void **state)
{
        (void) state;
        snprintf(root, sizeof(root), "/tmp/slots-fsutil.XXXXXX");
        if (!mkdtemp(root))
                return -1;
        rootfd = slots_root_open(root);
        if (rootfd < 0)
                return -1;
        return mkdirat(rootfd, "srv", 0755);
}

static int teardown(void **state)
{
        char cmd[300];

        (void) state;
        close(rootfd);
        snprintf(cmd, sizeof(cmd), "rm -rf '%s'", root);
        return system(cmd) == 0 ? 0 : -1;
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
                cmocka_unit_test(test_read_text),
                cmocka_unit_test(test_ensure_dir),
        };

        return cmocka_run_group_tests(tests, setup, teardown);
}
