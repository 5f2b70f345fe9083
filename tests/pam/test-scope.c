/*
 * pam/scope.c without systemd: the scope's name and properties, and every way
 * a placement is refused before systemd or when it cannot be reached.
 */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "config.h"
#include "scope.h"
#include "unit.h"

static const struct {
        const char *service, *slot;
        pid_t pid;
        const char *name;
} names[] = {
        { "video", "slot03", 1234, "slots-video-slot03-1234.scope" },
        { "video-studio", "slot01", 1, "slots-video\\x2dstudio-slot01-1.scope" },
        { "_svc", "slot9999", 4194304, "slots-_svc-slot9999-4194304.scope" },
};

static void test_names(void **state)
{
        int failures = 0;

        (void) state;
        for (size_t i = 0; i < N_ELEM(names); i++) {
                char buf[SLOTS_UNIT_NAME_MAX];
                int r = slots_scope_name(names[i].service, names[i].slot, names[i].pid, buf);

                if (r != 0 || strcmp(buf, names[i].name) != 0)
                        ROW_FAIL("%s %s %d: %d \"%s\", expected \"%s\"", names[i].service, names[i].slot,
                                 (int) names[i].pid, r, r ? "" : buf, names[i].name);
        }
        assert_int_equal(failures, 0);
}

static void test_props(void **state)
{
        struct slots_scope_prop p[SLOTS_SCOPE_NPROPS];
        char desc[160];
        size_t n;

        (void) state;
        n = slots_scope_props("slots-video-slot03.slice", "slot03", 4321, desc, p);
        assert_int_equal(n, 5);
        assert_string_equal(p[0].name, "Description");
        assert_string_equal(p[0].s, "slots: a session of slot03");
        assert_string_equal(p[1].name, "Slice");
        assert_int_equal(p[1].type, 's');
        assert_string_equal(p[1].s, "slots-video-slot03.slice");
        assert_string_equal(p[2].name, "PIDs");
        assert_int_equal(p[2].type, 'u');
        assert_int_equal(p[2].u, 4321);
        assert_string_equal(p[3].name, "KillSignal");
        assert_int_equal(p[3].type, 'i');
        assert_int_equal(p[3].i, SIGKILL);
        assert_string_equal(p[4].name, "CollectMode");
        assert_string_equal(p[4].s, "inactive-or-failed");
}

static struct slots_config *conf(const char *text)
{
        struct slots_config *c = NULL;
        struct slots_error e;

        if (slots_config_parse(text, strlen(text), "t.conf", &c, &e) != 0)
                fail_msg("config: %s", e.reason);
        return c;
}

static void test_place(void **state)
{
        struct slots_config *with = conf("{\"service\": \"video\", \"slots\": 4, \"slice\": {\"default\": {\"TasksMax\": 9}}}");
        struct slots_config *without = conf("{\"service\": \"video\", \"slots\": 4}");
        char dir[] = "/tmp/test-scope.XXXXXX", cmd[64];
        struct slots_scope_env env = { .booted = false, .unitdirfd = -1, .timeout_usec = 1000000 };
        struct slots_error e;
        int fd;

        (void) state;
        assert_non_null(mkdtemp(dir));
        env.unitdirfd = open(dir, O_RDONLY | O_DIRECTORY);
        assert_true(env.unitdirfd >= 0);

        /* nothing to do: no slice key, or no systemd */
        slots_error_clear(&e);
        assert_int_equal(slots_scope_place(with, 2, getpid(), &env, &e), 1);
        env.booted = true;
        assert_int_equal(slots_scope_place(without, 2, getpid(), &env, &e), 1);

        /* systemd runs, the slot's unit is not provisioned: refused, never an unbounded slice */
        slots_error_clear(&e);
        assert_int_equal(slots_scope_place(with, 2, getpid(), &env, &e), -ENOENT);
        assert_int_equal(e.kind, SLOTS_ERR_REFUSED);
        assert_string_equal(e.object, "slots-video-slot02.slice");
        assert_non_null(strstr(e.fix, "slots-provision"));

        /* a masked unit (a symlink to /dev/null) is refused too */
        assert_int_equal(symlinkat("/dev/null", env.unitdirfd, "slots-video-slot02.slice"), 0);
        slots_error_clear(&e);
        assert_int_equal(slots_scope_place(with, 2, getpid(), &env, &e), -EPERM);
        assert_non_null(strstr(e.reason, "masked"));
        assert_int_equal(unlinkat(env.unitdirfd, "slots-video-slot02.slice", 0), 0);

        /* the unit is there, but no systemd answers: refused with the reason */
        fd = openat(env.unitdirfd, "slots-video-slot02.slice", O_WRONLY | O_CREAT | O_EXCL, 0644);
        assert_true(fd >= 0);
        close(fd);
        if (geteuid() == 0) {
                slots_error_clear(&e);
                assert_true(slots_scope_place(with, 2, getpid(), &env, &e) < 0);
                assert_true(e.reason[0] != '\0');
        } else {
                print_message("skipped: not root, so a placement past the unit's checks is not tried\n");
        }

        close(env.unitdirfd);
        snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
        assert_int_equal(system(cmd), 0);
        slots_config_free(with);
        slots_config_free(without);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_names),
                cmocka_unit_test(test_props),
                cmocka_unit_test(test_place),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
