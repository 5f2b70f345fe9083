/*
 * slots_run_as, as a table of what the child does and what the parent reports: fn's status
 * passed through (clamped to 0..125), a negative one as 125, a child killed by a signal as
 * -ECHILD, one that takes too long killed and -ETIMEDOUT, a drop that cannot happen -EPERM;
 * and as root, the child really is the other account with exactly its groups, and cannot
 * become root again; a setresuid that lies (only the effective uid changes) is caught before fn
 * runs; a probe child (real and saved uid 0) holds no capability.  slots_ident_of for an
 * account that does not exist: -ENOENT.  setresuid is wrapped at link time.  The channel: a
 * child's exit status, 125, 126 and 127 included, is its own; a failed step of its setup its
 * -errno; and a child started in a folder (slots_run_in) is there, as root before the drop too.
 */
#include <errno.h>
#include <grp.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>
#include <fcntl.h>
#include <sys/stat.h>

#include "child.h"
#include "privdrop.h"

/* When set (before the fork, so the child has it): setresuid changes the effective uid only. */
static int lying_setresuid;

int __real_setresuid(uid_t r, uid_t e, uid_t s);
int __wrap_setresuid(uid_t r, uid_t e, uid_t s);
int __wrap_setresuid(uid_t r, uid_t e, uid_t s)
{
        if (lying_setresuid)
                return __real_setresuid((uid_t) -1, e, (uid_t) -1);
        return __real_setresuid(r, e, s);
}

static int ret_value(void *arg)
{
        return (int) (intptr_t) arg;
}

static int die_by_signal(void *arg)
{
        (void) arg;
        raise(SIGKILL);
        return 0;
}

static int sleep_long(void *arg)
{
        (void) arg;
        sleep(30);
        return 0;
}

/* 0 when the child is exactly uid/gid 65534 with no supplementary group and cannot regain root. */
static int is_nobody(void *arg)
{
        gid_t g[4];

        (void) arg;
        if (getuid() != 65534 || geteuid() != 65534 || getgid() != 65534 || getegid() != 65534)
                return 1;
        if (getgroups(4, g) != 0)
                return 2;
        if (setuid(0) == 0 || seteuid(0) == 0)
                return 3;
        return 0;
}

/* 0 when no capability is left in any set (/proc/self/status), the uids those of a probe child. */
static int no_capability(void *arg)
{
        char line[256];
        int found = 0, bad = 0;
        FILE *f;

        (void) arg;
        if (getuid() != 0 || geteuid() != 65534 || getgid() != 65534)
                return 1;
        f = fopen("/proc/self/status", "r");
        if (!f)
                return 2;
        while (fgets(line, sizeof(line), f)) {
                unsigned long long v;

                if (strncmp(line, "Cap", 3) != 0 || sscanf(strchr(line, ':') + 1, "%llx", &v) != 1)
                        continue;
                found++;
                if (strncmp(line, "CapBnd:", 7) != 0 && v != 0)
                        bad++;
        }
        fclose(f);
        return found < 4 ? 3 : bad ? 4 : 0;
}

/* The child always calls setgroups, which needs root: unprivileged, every drop is -EPERM. */
static void need_root(void)
{
        if (getuid() != 0) {
                print_message("skipped: slots_run_as needs root (setgroups); run make check as root\n");
                skip();
        }
}

static struct slots_ident self(void)
{
        struct slots_ident id = { getuid(), getgid(), NULL, 0 };

        return id;
}

static void statuses(void **state)
{
        static const struct {
                int value, want;
        } rows[] = {
                { 0, 0 }, { 1, 1 }, { 7, 7 }, { 125, 125 }, { 126, 125 }, { 200, 125 }, { -1, 125 }, { -EPERM, 125 },
        };
        struct slots_ident id = self();

        (void) state;
        need_root();
        id.groups = (const gid_t[]){ 0 };
        id.n_groups = 1;
        for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++)
                assert_int_equal(slots_run_as(&id, ret_value, (void *) (intptr_t) rows[i].value, 5000), rows[i].want);
        /* No time limit at all. */
        assert_int_equal(slots_run_as(&id, ret_value, (void *) (intptr_t) 3, 0), 3);
}

static void signal_and_timeout(void **state)
{
        struct slots_ident id = self();

        (void) state;
        need_root();
        id.groups = (const gid_t[]){ 0 };
        id.n_groups = 1;
        assert_int_equal(slots_run_as(&id, die_by_signal, NULL, 5000), -ECHILD);
        assert_int_equal(slots_run_as(&id, sleep_long, NULL, 200), -ETIMEDOUT);
}

static void drop_refused(void **state)
{
        /* More supplementary groups than the kernel takes: setgroups fails, the child never runs fn. */
        static gid_t many[70000];
        struct slots_ident id = self();

        (void) state;
        id.groups = many;
        id.n_groups = (int) (sizeof(many) / sizeof(many[0]));
        assert_int_equal(slots_run_as(&id, ret_value, (void *) 0, 5000), -EPERM);
        if (getuid() != 0) {
                /* Unprivileged: becoming root is refused. */
                struct slots_ident root = { 0, 0, NULL, 0 };
                assert_int_equal(slots_run_as(&root, ret_value, (void *) 0, 5000), -EPERM);
        }
}

static void really_nobody(void **state)
{
        const struct slots_ident nobody = { 65534, 65534, NULL, 0 };

        (void) state;
        need_root();
        assert_int_equal(slots_run_as(&nobody, is_nobody, NULL, 5000), 0);
}

/* setresuid returns 0 but only the effective uid changed: real and saved stay root. */
static void lying_drop_caught(void **state)
{
        const struct slots_ident nobody = { 65534, 65534, NULL, 0 };
        int r;

        (void) state;
        need_root();
        lying_setresuid = 1;
        r = slots_run_as(&nobody, is_nobody, NULL, 5000);
        lying_setresuid = 0;
        assert_int_equal(r, -EPERM);
}

static void probe_without_capabilities(void **state)
{
        const struct slots_ident nobody = { 65534, 65534, NULL, 0 };

        (void) state;
        need_root();
        assert_int_equal(slots_run_as_unkillable(&nobody, no_capability, NULL, 5000), 0);
}

/* Exits N (arg), as a program it ran would, with no record on the channel. */
static int run_program(void *arg)
{
        slots_exit_child((int) (intptr_t) arg);
}

static int fail_setup(void *arg)
{
        slots_run_fail((int) (intptr_t) arg);
}

/* What the parent reports, as is (id NULL) and dropped to itself as root. */
static void program_statuses(void **state)
{
        static const struct {
                const char *what;
                int (*fn)(void *arg);
                int arg, want;
        } rows[] = {
                { "exit 0", run_program, 0, 0 },
                { "exit 1", run_program, 1, 1 },
                { "exit 124", run_program, 124, 124 },
                { "exit 125", run_program, 125, 125 },
                { "exit 126 is the program's, not a failed drop", run_program, 126, 126 },
                { "exit 127", run_program, 127, 127 },
                { "exit 255", run_program, 255, 255 },
                { "a step before the exec fails", fail_setup, EMFILE, -EMFILE },
        };
        struct slots_ident id = self();

        (void) state;
        id.groups = (const gid_t[]){ 0 };
        id.n_groups = 1;
        for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
                int r = slots_run_in(NULL, -1, rows[i].fn, (void *) (intptr_t) rows[i].arg, 5000);

                if (r != rows[i].want)
                        fail_msg("%s, as is: %d, want %d", rows[i].what, r, rows[i].want);
                if (getuid() != 0)
                        continue;
                r = slots_run_as(&id, rows[i].fn, (void *) (intptr_t) rows[i].arg, 5000);
                if (r != rows[i].want)
                        fail_msg("%s, dropped: %d, want %d", rows[i].what, r, rows[i].want);
        }
}

/* Set before the drop to nobody: the folder is root's 0700, so nobody cannot list it. */
static bool dropped_to_nobody;

/* 0 when the working folder is arg (and, after the drop to nobody, it cannot be listed: entered before it). */
static int in_folder(void *arg)
{
        char cwd[4096];

        if (!getcwd(cwd, sizeof(cwd)) || strcmp(cwd, arg) != 0)
                return 1;
        if (dropped_to_nobody && access(".", R_OK | X_OK) == 0)
                return 2;
        return 0;
}

static void started_in_folder(void **state)
{
        const struct slots_ident nobody = { 65534, 65534, NULL, 0 };
        char dir[] = "/tmp/test-privdrop.XXXXXX";
        int fd;

        (void) state;
        assert_non_null(mkdtemp(dir));
        assert_int_equal(chmod(dir, 0700), 0);
        fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        assert_true(fd >= 0);
        assert_int_equal(slots_run_in(NULL, fd, in_folder, dir, 5000), 0);
        if (getuid() == 0) {
                /* A folder nobody cannot enter: entered as root, before the drop. */
                dropped_to_nobody = true;
                assert_int_equal(slots_run_in(&nobody, fd, in_folder, dir, 5000), 0);
                dropped_to_nobody = false;
        }
        /* A folder that cannot be entered: the change's errno, fn never runs. */
        assert_int_equal(slots_run_in(NULL, 9999, in_folder, dir, 5000), -EBADF);
        close(fd);
        rmdir(dir);
}

static void ident_of_missing(void **state)
{
        struct slots_ident id;
        gid_t *groups = NULL;

        (void) state;
        assert_int_equal(slots_ident_of("slots-no-such-account", &id, &groups), -ENOENT);
        assert_null(groups);
        assert_int_equal(slots_ident_of("root", &id, &groups), 0);
        assert_int_equal(id.uid, 0);
        assert_true(id.n_groups >= 1);
        free(groups);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(statuses),
                cmocka_unit_test(signal_and_timeout),
                cmocka_unit_test(drop_refused),
                cmocka_unit_test(really_nobody),
                cmocka_unit_test(lying_drop_caught),
                cmocka_unit_test(probe_without_capabilities),
                cmocka_unit_test(ident_of_missing),
                cmocka_unit_test(program_statuses),
                cmocka_unit_test(started_in_folder),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
