/*
 * The slot lock's refusals on their own: what stands at the table's lock file decides
 * whether slots_release_lock opens it.  The commands never get that far with a FIFO (the
 * table's own lock refuses it first), so only this test reaches these refusals.
 */
#include <errno.h>
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

#include "release.h"
#include "unit.h"

enum what { REGULAR, FIFO, FOLDER, TWO_NAMES };

static const struct {
        const char *desc;
        enum what what;
        int r;                  /* 0: a lock fd */
        const char *reason;
} rows[] = {
        { "a regular file of one name", REGULAR, 0, NULL },
        { "a FIFO: never opened", FIFO, -EPERM, "the lock file is not a regular file" },
        { "a folder", FOLDER, -EPERM, "the lock file is not a regular file" },
        { "a file with a second name", TWO_NAMES, -EPERM, "the lock file is not a plain file" },
};

static void make(int dfd, enum what w)
{
        int fd;

        switch (w) {
        case FIFO:
                assert_int_equal(mkfifoat(dfd, "t.json.lock", 0600), 0);
                break;
        case FOLDER:
                assert_int_equal(mkdirat(dfd, "t.json.lock", 0700), 0);
                break;
        case REGULAR:
        case TWO_NAMES:
                fd = openat(dfd, "t.json.lock", O_WRONLY | O_CREAT | O_EXCL, 0600);
                assert_true(fd >= 0);
                close(fd);
                if (w == TWO_NAMES)
                        assert_int_equal(linkat(dfd, "t.json.lock", dfd, "second", 0), 0);
                break;
        }
}

static void test_lock_file(void **state)
{
        char dir[] = "/tmp/test-release-lock.XXXXXX";
        int failures = 0, dfd;

        (void) state;
        assert_non_null(mkdtemp(dir));
        dfd = open(dir, O_RDONLY | O_DIRECTORY);
        assert_true(dfd >= 0);
        for (size_t i = 0; i < N_ELEM(rows); i++) {
                struct slots_error e;
                int r;

                slots_error_clear(&e);
                make(dfd, rows[i].what);
                r = slots_release_lock(dfd, "t.json", 2, false, &e);
                if (rows[i].r == 0 && r < 0)
                        ROW_FAIL("%s: %d (%s), expected a lock", rows[i].desc, r, e.reason);
                else if (rows[i].r != 0 && (r != rows[i].r || e.kind != SLOTS_ERR_REFUSED ||
                                            strcmp(e.reason, rows[i].reason) != 0))
                        ROW_FAIL("%s: %d kind %d \"%s\", expected %d refused \"%s\"", rows[i].desc, r,
                                 (int) e.kind, e.reason, rows[i].r, rows[i].reason);
                if (r >= 0)
                        close(r);
                unlinkat(dfd, "second", 0);
                if (unlinkat(dfd, "t.json.lock", 0) < 0)
                        assert_int_equal(unlinkat(dfd, "t.json.lock", AT_REMOVEDIR), 0);
        }
        close(dfd);
        assert_int_equal(rmdir(dir), 0);
        assert_int_equal(failures, 0);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_lock_file),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
