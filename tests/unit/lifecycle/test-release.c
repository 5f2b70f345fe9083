/* The release protocol's parts on their own: the step order, the slot lock, the folders. */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <unistd.h>
#include <cmocka.h>

#include "cleanup.h"
#include "release.h"

/* ---- the order of the steps ---- */

static void test_step_order(void **state)
{
        static const char *const want[] = {
                "step 2 of 5, looking up the accounts",
                "step 2 of 5, ending the slot's processes",
                "step 3 of 5, giving the user's tree back",
                "step 4 of 5, removing the slot's crontab",
                "step 4 of 5, unmounting the slot's FUSE mounts",
                "step 4 of 5, replacing home, state and run with fresh folders",
                "step 4 of 5, removing the slot's files below /tmp",
                "step 4 of 5, handing the slot's files in the shared folders",
                "step 4 of 5, clearing the slot's set-id files",
                "step 4 of 5, removing the slot's IPC objects",
                "step 4 of 5, clearing the slot's kernel keyrings",
                "step 4 of 5, removing the slot's journal files and coredumps",
                "step 4 of 5, checking that nothing of the slot runs",
        };
        size_t n = 0;

        (void) state;
        for (const struct slots_release_step *s = slots_release_steps; s->name; s++, n++) {
                assert_true(n < sizeof(want) / sizeof(want[0]));
                assert_int_equal(strncmp(s->name, want[n], strlen(want[n])), 0);
                assert_non_null(s->run);
                /* Only the steps before the user's code is gone stop the release. */
                assert_int_equal(s->stops, n < 2);
        }
        assert_int_equal(n, sizeof(want) / sizeof(want[0]));
}

/* ---- the slot's own lock ---- */

static char dir[256];

static void test_slot_lock(void **state)
{
        struct slots_error e;
        int dfd, a, b, c;

        (void) state;
        snprintf(dir, sizeof(dir), "/tmp/slots-release.XXXXXX");
        assert_non_null(mkdtemp(dir));
        dfd = open(dir, O_RDONLY | O_DIRECTORY);
        assert_true(dfd >= 0);
        a = slots_release_lock(dfd, "slots.json", 3, false, &e);
        assert_true(a >= 0);
        /* A second release of slot03 waits (here: is told it would). */
        assert_int_equal(slots_release_lock(dfd, "slots.json", 3, false, &e), -EWOULDBLOCK);
        /* Another slot's release goes on. */
        b = slots_release_lock(dfd, "slots.json", 4, false, &e);
        assert_true(b >= 0);
        close(a);
        c = slots_release_lock(dfd, "slots.json", 3, false, &e);
        assert_true(c >= 0);
        close(b);
        close(c);
        /* A symlink in the lock file's place is never followed. */
        assert_int_equal(unlinkat(dfd, "slots.json.lock", 0), 0);
        assert_int_equal(symlinkat("/etc/passwd", dfd, "slots.json.lock"), 0);
        assert_true(slots_release_lock(dfd, "slots.json", 3, false, &e) < 0);
        assert_int_equal(unlinkat(dfd, "slots.json.lock", 0), 0);
        close(dfd);
        assert_int_equal(rmdir(dir), 0);
}

/* ---- home, state and run: checked at assign, reset at release ---- */

static struct slots_config *cfg;
static int rootdfd = -1;

static int folders_setup(void **state)
{
        char text[512];
        struct slots_error e;

        (void) state;
        snprintf(dir, sizeof(dir), "/tmp/slots-release.XXXXXX");
        if (!mkdtemp(dir))
                return -1;
        snprintf(text, sizeof(text), "{\"service\": \"svc\", \"slots\": 2, \"slots_root\": \"%s\"}", dir);
        if (slots_config_parse(text, strlen(text), "test.conf", &cfg, &e) < 0)
                return -1;
        rootdfd = open(dir, O_RDONLY | O_DIRECTORY);
        if (rootdfd < 0)
                return -1;
        for (int i = 0; i < 3; i++) {
                static const char *const k[] = { "home", "state", "run" };
                char p[64];

                snprintf(p, sizeof(p), "%s/slot01", k[i]);
                if (mkdirat(rootdfd, k[i], 0755) < 0 || mkdirat(rootdfd, p, 0700) < 0)
                        return -1;
        }
        return 0;
}

static int folders_teardown(void **state)
{
        char cmd[300];

        (void) state;
        slots_config_free(cfg);
        close(rootdfd);
        snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
        return system(cmd) == 0 ? 0 : -1;
}

static int check_now(const char *want_reason)
{
        struct slots_error e;
        int r;

        slots_error_clear(&e);
        r = slots_check_folders(AT_FDCWD, cfg, "slot01", getuid(), getgid(), false, &e);
        if (want_reason) {
                print_message("got: %s: %s -- fix: %s\n", e.object, e.reason, e.fix);
                assert_non_null(strstr(e.reason, want_reason));
                assert_non_null(strstr(e.fix, "slots-admin release --slot slot01"));
        }
        return r;
}

static void test_check_folders(void **state)
{
        (void) state;
        /* Exactly as planned (owned by whoever runs the test). */
        assert_int_equal(check_now(NULL), 0);
        /* One bit off: refused, naming the mode. */
        assert_int_equal(fchmodat(rootdfd, "state/slot01", 0750, 0), 0);
        assert_int_equal(check_now("0750"), -EPERM);
        assert_int_equal(fchmodat(rootdfd, "state/slot01", 0700, 0), 0);
        /* Not empty: refused. */
        int fd = openat(rootdfd, "run/slot01/.profile", O_WRONLY | O_CREAT | O_EXCL, 0600);
        assert_true(fd >= 0);
        close(fd);
        assert_int_equal(check_now("not empty"), -EPERM);
        /* An assigned slot's holder works there: content is no fault then. */
        struct slots_error e;
        assert_int_equal(slots_check_folders(AT_FDCWD, cfg, "slot01", getuid(), getgid(), true, &e), 0);
        assert_int_equal(unlinkat(rootdfd, "run/slot01/.profile", 0), 0);
        /* A symlink in the folder's place: refused, never followed. */
        assert_int_equal(renameat(rootdfd, "home/slot01", rootdfd, "home/real"), 0);
        assert_int_equal(symlinkat("real", rootdfd, "home/slot01"), 0);
        assert_int_equal(check_now("symbolic link"), -ELOOP);
        assert_int_equal(unlinkat(rootdfd, "home/slot01", 0), 0);
        /* Missing: refused. */
        assert_int_equal(check_now(NULL), -ENOENT);
        assert_int_equal(renameat(rootdfd, "home/real", rootdfd, "home/slot01"), 0);
        assert_int_equal(check_now(NULL), 0);
}

/* Plants user.planted on the home; skips the test, with the reason, where the file system takes none. */
static int plant_user_xattr(void)
{
        int fd = openat(rootdfd, "home/slot01", O_RDONLY | O_DIRECTORY);

        assert_true(fd >= 0);
        if (fsetxattr(fd, "user.planted", "x", 1, 0) < 0) {
                int err = errno;

                close(fd);
                if (err != EOPNOTSUPP)
                        fail_msg("setting user.planted: %s", strerror(err));
                print_message("skipped: %s takes no user.* attributes\n", dir);
                skip();
        }
        return fd;
}

/* A user attribute a holder left on a slot folder: refused. */
static void test_check_folders_xattr(void **state)
{
        int fd;

        (void) state;
        fd = plant_user_xattr();
        assert_int_equal(check_now("user.planted"), -EPERM);
        assert_int_equal(fremovexattr(fd, "user.planted"), 0);
        close(fd);
        assert_int_equal(check_now(NULL), 0);
}

static void test_cleanup_folders(void **state)
{
        struct slots_pw slot = { .name = (char *) "slot01", .uid = 4711, .gid = 4711 };
        struct slots_error e;
        int fd;

        (void) state;
        /* uid or gid 0 are refused outright. */
        struct slots_pw root = { .name = (char *) "slot01", .uid = 0, .gid = 0 };
        assert_int_equal(slots_cleanup_folders(AT_FDCWD, cfg, &root, 0, &e), -EINVAL);
        if (geteuid() != 0) {
                print_message("skipped: resetting another account's folders needs root\n");
                skip();
                return;
        }
        /* What a hostile holder leaves: modes, group, content, a user attribute. */
        assert_int_equal(fchmodat(rootdfd, "home/slot01", 0777, 0), 0);
        assert_int_equal(fchownat(rootdfd, "run/slot01", 4711, 4712, 0), 0);
        assert_int_equal(fchmodat(rootdfd, "run/slot01", 02770, 0), 0);
        assert_int_equal(mkdirat(rootdfd, "state/slot01/deep", 0700), 0);
        fd = openat(rootdfd, "state/slot01/deep/secret", O_WRONLY | O_CREAT | O_EXCL, 0600);
        assert_true(fd >= 0);
        close(fd);
        fd = openat(rootdfd, "home/slot01", O_RDONLY | O_DIRECTORY);
        assert_true(fd >= 0);
        /* The part about the attribute cannot run where the file system takes none: say so. */
        if (fsetxattr(fd, "user.planted", "x", 1, 0) < 0) {
                if (errno != EOPNOTSUPP)
                        fail_msg("setting user.planted: %s", strerror(errno));
                print_message("skipped: the user attribute part (%s takes no user.* attributes)\n", dir);
        }
        close(fd);
        assert_int_equal(slots_cleanup_folders(AT_FDCWD, cfg, &slot, 4711, &e), 0);
        slots_error_clear(&e);
        assert_int_equal(slots_check_folders(AT_FDCWD, cfg, "slot01", 4711, 4711, false, &e), 0);
        /* Again: nothing to do, same result (every step is safe to repeat). */
        assert_int_equal(slots_cleanup_folders(AT_FDCWD, cfg, &slot, 4711, &e), 0);
        assert_int_equal(slots_check_folders(AT_FDCWD, cfg, "slot01", 4711, 4711, false, &e), 0);
        /* Back to the test's own ids for the other tests. */
        for (int i = 0; i < 3; i++) {
                static const char *const k[] = { "home/slot01", "state/slot01", "run/slot01" };
                assert_int_equal(fchownat(rootdfd, k[i], getuid(), getgid(), 0), 0);
        }
}

int main(void)
{
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_step_order),
                cmocka_unit_test(test_slot_lock),
                cmocka_unit_test_setup_teardown(test_check_folders, folders_setup, folders_teardown),
                cmocka_unit_test_setup_teardown(test_check_folders_xattr, folders_setup, folders_teardown),
                cmocka_unit_test_setup_teardown(test_cleanup_folders, folders_setup, folders_teardown),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
