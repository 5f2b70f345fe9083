/*
 * The replace checks the temp's owner and mode on its fd before the rename (issue 19): a file
 * system can accept fchown or fchmod and not do it (vfat, a FUSE mount, NFS with root
 * squashed), and the table must then not go into place with the wrong owner or mode.  Both
 * calls are wrapped at link time (--wrap=fchown,--wrap=fchmod) to lie: they return 0 and
 * change nothing.  The replace must fail with -EPERM, name what the file came out as, and
 * leave the old file as it was, content, owner and mode.
 */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>

#include "fsutil.h"
#include "replace.h"

static bool lie_chown, lie_chmod;

int __real_fchown(int fd, uid_t uid, gid_t gid);
int __wrap_fchown(int fd, uid_t uid, gid_t gid);
int __real_fchmod(int fd, mode_t mode);
int __wrap_fchmod(int fd, mode_t mode);

int __wrap_fchown(int fd, uid_t uid, gid_t gid)
{
        return lie_chown ? 0 : __real_fchown(fd, uid, gid);
}

int __wrap_fchmod(int fd, mode_t mode)
{
        return lie_chmod ? 0 : __real_fchmod(fd, mode);
}

static char dir[256];
static int dfd = -1;

static int setup(void **state)
{
        (void) state;
        snprintf(dir, sizeof(dir), "/tmp/slots-verify.XXXXXX");
        if (!mkdtemp(dir))
                return -1;
        dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        return dfd < 0 ? -1 : 0;
}

static int teardown(void **state)
{
        char cmd[300];

        (void) state;
        close(dfd);
        snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
        return system(cmd) == 0 ? 0 : -1;
}

/* The old file: "old\n", 0640 (the mode the replace keeps). */
static void old_file(void)
{
        int fd;

        (void) unlinkat(dfd, "t.json", 0);
        fd = openat(dfd, "t.json", O_WRONLY | O_CREAT | O_EXCL, 0600);
        assert_true(fd >= 0);
        assert_int_equal(write(fd, "old\n", 4), 4);
        assert_int_equal(fchmod(fd, 0640), 0);
        close(fd);
}

static void assert_old_file(void)
{
        struct stat st;
        char buf[16] = "";
        int fd = openat(dfd, "t.json", O_RDONLY);

        assert_true(fd >= 0);
        assert_int_equal(fstat(fd, &st), 0);
        assert_int_equal(st.st_mode & 07777, 0640);
        assert_int_equal(st.st_uid, getuid());
        assert_int_equal(read(fd, buf, sizeof(buf) - 1), 4);
        assert_string_equal(buf, "old\n");
        close(fd);
}

/* No temp of the replace is left next to the file (the stale-temp sweep finds none). */
static void assert_no_temp(void)
{
        assert_int_equal(slots_replace_clean_stale(dfd, "t.json"), 0);
}

static void lying(bool chown_lies, bool chmod_lies, uid_t uid)
{
        const struct slots_file_mode def = { uid, getgid(), 0640 };
        struct slots_error e;
        int r;

        old_file();
        slots_error_clear(&e);
        lie_chown = chown_lies;
        lie_chmod = chmod_lies;
        /* FORCE_MODE: owner and mode are the ones given, as when slots-provision repairs the table. */
        r = slots_replace(dfd, "t.json", "t.json", "new\n", 4, &def, SLOTS_REPLACE_FORCE_MODE, &e);
        lie_chown = lie_chmod = false;
        assert_int_equal(r, -EPERM);
        assert_non_null(strstr(e.reason, "came out as"));
        assert_old_file();
        assert_no_temp();
}

/* fchmod lies: the temp stays 0600, wanted 0640. */
static void chmod_lies(void **state)
{
        (void) state;
        lying(false, true, getuid());
}

/* fchown lies: the temp stays the creator's, wanted another owner (root only can ask). */
static void chown_lies(void **state)
{
        (void) state;
        if (getuid() != 0) {
                print_message("skipped: giving a file away needs root\n");
                skip();
        }
        lying(true, false, 4321);
}

/* The control: nobody lies, the replace goes through. */
static void honest(void **state)
{
        const struct slots_file_mode def = { getuid(), getgid(), 0640 };
        struct slots_error e;

        (void) state;
        old_file();
        slots_error_clear(&e);
        assert_int_equal(slots_replace(dfd, "t.json", "t.json", "new\n", 4, &def, SLOTS_REPLACE_FORCE_MODE, &e), 0);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(chmod_lies),
                cmocka_unit_test(chown_lies),
                cmocka_unit_test(honest),
        };

        return cmocka_run_group_tests(tests, setup, teardown);
}
