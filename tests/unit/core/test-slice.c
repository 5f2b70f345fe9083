/*
 * slice.c: unit names escaped as systemd-escape does (its outputs recorded from
 * systemd 252), the properties' syntax value by value, and the unit files' text.
 */
#include <errno.h>
#include <jansson.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "config.h"
#include "fsutil.h"
#include "provision-slice.h"
#include "sdmanager.h"
#include "slice.h"
#include "unit.h"

/* `systemd-escape -- IN` on Debian 12 (systemd 252.39), each output copied as printed. */
static const struct {
        const char *in, *out;
} escapes[] = {
        { "video", "video" },
        { "video-studio", "video\\x2dstudio" },
        { "_svc", "_svc" },
        { "slot01", "slot01" },
        { "a b", "a\\x20b" },
        { ".hidden", "\\x2ehidden" },
        { "a.b", "a.b" },
        { "a/b", "a-b" },
        { "/lead", "-lead" },
        { "x\\y", "x\\x5cy" },
        { "\xc3\xa9", "\\xc3\\xa9" },
        { "a:b_c", "a:b_c" },
        { "-", "\\x2d" },
        { "a%b", "a\\x25b" },
        { "~", "\\x7e" },
        { "", "" },
};

static void test_escape(void **state)
{
        int failures = 0;

        (void) state;
        for (size_t i = 0; i < N_ELEM(escapes); i++) {
                char buf[64];
                int r = slots_unit_escape(escapes[i].in, buf, sizeof(buf));

                if (r < 0 || strcmp(buf, escapes[i].out) != 0 || (size_t) r != strlen(escapes[i].out))
                        ROW_FAIL("escape \"%s\": got %d \"%s\", expected \"%s\"", escapes[i].in, r, r < 0 ? "" : buf,
                                 escapes[i].out);
        }
        assert_int_equal(failures, 0);
}

/* A buffer one short of the escaped text and its NUL is refused; exactly enough is not. */
static void test_escape_size(void **state)
{
        char buf[16];

        (void) state;
        assert_int_equal(slots_unit_escape("a-b", buf, 6), -ENAMETOOLONG);
        assert_int_equal(slots_unit_escape("a-b", buf, 7), 6);
        assert_string_equal(buf, "a\\x2db");
        assert_int_equal(slots_unit_escape("abc", buf, 3), -ENAMETOOLONG);
        assert_int_equal(slots_unit_escape("abc", buf, 4), 3);
}

static void test_unit_names(void **state)
{
        char name[SLOTS_UNIT_NAME_MAX], longer[300];

        (void) state;
        assert_int_equal(slots_slice_pool_unit("video", name), 0);
        assert_string_equal(name, "slots-video.slice");
        assert_int_equal(slots_slice_slot_unit("video", "slot03", name), 0);
        assert_string_equal(name, "slots-video-slot03.slice");
        /* a "-" of the service is no level of the hierarchy: systemd would read slots-video-studio as two */
        assert_int_equal(slots_slice_pool_unit("video-studio", name), 0);
        assert_string_equal(name, "slots-video\\x2dstudio.slice");
        assert_int_equal(slots_slice_slot_unit("video-studio", "vs-12", name), 0);
        assert_string_equal(name, "slots-video\\x2dstudio-vs\\x2d12.slice");
        /* 62 dashes make 248 bytes escaped: with "slots-" and ".slice" past 255 */
        memset(longer, '-', 62);
        longer[62] = '\0';
        assert_int_equal(slots_slice_pool_unit(longer, name), -ENAMETOOLONG);
        longer[60] = '\0';
        assert_int_equal(slots_slice_pool_unit(longer, name), 0);
        assert_int_equal(strlen(name), 252);
}

/* Each property's syntax: the value as JSON text, accepted or not, and what the unit file gets. */
static const struct {
        const char *key, *json;
        const char *rendered;   /* NULL: refused */
} values[] = {
        { "MemoryMax", "2147483648", "2147483648" },
        { "MemoryMax", "0", "0" },
        { "MemoryMax", "\"2G\"", "2147483648" },
        { "MemoryMax", "\"512K\"", "524288" },
        { "MemoryMax", "\"3M\"", "3145728" },
        { "MemoryMax", "\"1T\"", "1099511627776" },
        { "MemoryMax", "\"123\"", "123" },
        { "MemoryMax", "\"80%\"", "80%" },
        { "MemoryMax", "\"100%\"", "100%" },
        { "MemoryMax", "\"infinity\"", "infinity" },
        { "MemoryMax", "\"101%\"", NULL },
        { "MemoryMax", "\"0%\"", NULL },
        { "MemoryMax", "\"2GB\"", NULL },
        { "MemoryMax", "\"2g\"", NULL },
        { "MemoryMax", "\"2 G\"", NULL },
        { "MemoryMax", "\"+2G\"", NULL },
        { "MemoryMax", "\"1.5G\"", NULL },
        { "MemoryMax", "\"2E\"", NULL },
        { "MemoryMax", "\"\"", NULL },
        { "MemoryMax", "\"Infinity\"", NULL },
        { "MemoryMax", "\"max\"", NULL },
        { "MemoryMax", "\"16777216T\"", NULL },
        { "MemoryMax", "\"18446744073709551615\"", NULL },
        { "MemoryMax", "\"18446744073709551616\"", NULL },
        { "MemoryMax", "-1", NULL },
        { "MemoryMax", "1.5", NULL },
        { "MemoryMax", "null", NULL },
        { "MemoryHigh", "\"1%\"", "1%" },
        { "MemoryHigh", "\"1G\"", "1073741824" },
        { "MemorySwapMax", "0", "0" },
        { "MemorySwapMax", "\"1G\"", "1073741824" },
        { "MemorySwapMax", "\"infinity\"", "infinity" },
        { "MemorySwapMax", "\"50%\"", NULL },
        { "TasksMax", "512", "512" },
        { "TasksMax", "1", "1" },
        { "TasksMax", "\"512\"", "512" },
        { "TasksMax", "\"15%\"", "15%" },
        { "TasksMax", "\"infinity\"", "infinity" },
        { "TasksMax", "0", NULL },
        { "TasksMax", "\"0\"", NULL },
        { "TasksMax", "\"1K\"", NULL },
        { "TasksMax", "\"101%\"", NULL },
        { "CPUQuota", "\"20%\"", "20%" },
        { "CPUQuota", "\"150%\"", "150%" },
        { "CPUQuota", "\"1%\"", "1%" },
        { "CPUQuota", "\"100000%\"", "100000%" },
        { "CPUQuota", "\"100001%\"", NULL },
        { "CPUQuota", "\"0%\"", NULL },
        { "CPUQuota", "\"20\"", NULL },
        { "CPUQuota", "\"20.5%\"", NULL },
        { "CPUQuota", "\"20%%\"", NULL },
        { "CPUQuota", "\"infinity\"", NULL },
        { "CPUQuota", "20", NULL },
        { "CPUWeight", "1", "1" },
        { "CPUWeight", "100", "100" },
        { "CPUWeight", "10000", "10000" },
        { "CPUWeight", "0", NULL },
        { "CPUWeight", "10001", NULL },
        { "CPUWeight", "\"100\"", NULL },
        { "CPUWeight", "\"idle\"", NULL },
        { "CPUWeight", "\"infinity\"", NULL },
        { "IOWeight", "1", "1" },
        { "IOWeight", "10000", "10000" },
        { "IOWeight", "-5", NULL },
        { "IOWeight", "true", NULL },
};

static void test_values(void **state)
{
        int failures = 0;

        (void) state;
        for (size_t i = 0; i < N_ELEM(values); i++) {
                char text[128], got[24];
                struct slots_jsrc src = { .file = "t.conf", .text = text };
                struct slots_slice_props props;
                struct slots_error e;
                json_error_t jerr;
                json_t *obj;
                int k = slots_slice_key_from_name(values[i].key), r;

                snprintf(text, sizeof(text), "{\"%s\": %s}", values[i].key, values[i].json);
                src.len = strlen(text);
                obj = json_loadb(text, src.len, JSON_REJECT_DUPLICATES, &jerr);
                assert_non_null(obj);
                assert_true(k >= 0);
                slots_error_clear(&e);
                r = slots_slice_props_parse(obj, &src, NULL, 0, &props, &e);
                json_decref(obj);
                if (!values[i].rendered) {
                        if (r != -EBADMSG)
                                ROW_FAIL("%s %s: accepted, expected a refusal", values[i].key, values[i].json);
                        else if (!strstr(e.reason, values[i].key) || e.line != 1 || e.column != strlen(values[i].key) + 6)
                                ROW_FAIL("%s %s: error at %u:%u \"%s\"", values[i].key, values[i].json, e.line,
                                         e.column, e.reason);
                        continue;
                }
                if (r != 0) {
                        ROW_FAIL("%s %s: refused: %s", values[i].key, values[i].json, e.reason);
                        continue;
                }
                if (!props.v[k].set || strcmp(slots_slice_value_format(&props.v[k], got), values[i].rendered) != 0)
                        ROW_FAIL("%s %s: rendered \"%s\", expected \"%s\"", values[i].key, values[i].json, got,
                                 values[i].rendered);
                for (int j = 0; j < SLOTS_SLICE_MAX_KEY; j++)
                        if (j != k && props.v[j].set)
                                ROW_FAIL("%s %s: also set %s", values[i].key, values[i].json, slots_slice_key_name(j));
        }
        assert_int_equal(failures, 0);
}

static void test_names(void **state)
{
        (void) state;
        for (int i = 0; i < SLOTS_SLICE_MAX_KEY; i++)
                assert_int_equal(slots_slice_key_from_name(slots_slice_key_name(i)), i);
        assert_int_equal(slots_slice_key_from_name("memorymax"), -1);
        assert_int_equal(slots_slice_key_from_name("MemoryLimit"), -1);
        assert_null(slots_slice_key_name(SLOTS_SLICE_MAX_KEY));
}

static void test_overlay(void **state)
{
        struct slots_slice_props base = { 0 }, top = { 0 };

        (void) state;
        base.v[SLOTS_SLICE_MEMORY_MAX] = (struct slots_slice_value){ true, SLOTS_SLICE_NUMBER, 100 };
        base.v[SLOTS_SLICE_TASKS_MAX] = (struct slots_slice_value){ true, SLOTS_SLICE_NUMBER, 5 };
        top.v[SLOTS_SLICE_MEMORY_MAX] = (struct slots_slice_value){ true, SLOTS_SLICE_INFINITY, 0 };
        top.v[SLOTS_SLICE_IO_WEIGHT] = (struct slots_slice_value){ true, SLOTS_SLICE_NUMBER, 7 };
        slots_slice_overlay(&base, &top);
        assert_int_equal(base.v[SLOTS_SLICE_MEMORY_MAX].kind, SLOTS_SLICE_INFINITY);
        assert_int_equal(base.v[SLOTS_SLICE_TASKS_MAX].n, 5);
        assert_int_equal(base.v[SLOTS_SLICE_IO_WEIGHT].n, 7);
        assert_false(base.v[SLOTS_SLICE_CPU_QUOTA].set);
}

static void test_render(void **state)
{
        struct slots_slice_props p = { 0 };
        char *text;

        (void) state;
        text = slots_slice_render("the pool of the service video", &p);
        assert_non_null(text);
        assert_string_equal(text,
                            "# Written by slots-provision from the \"slice\" key of slots.conf(5); it replaces any edit.\n"
                            "[Unit]\n"
                            "Description=slots: the pool of the service video\n"
                            "\n"
                            "[Slice]\n");
        free(text);
        p.v[SLOTS_SLICE_IO_WEIGHT] = (struct slots_slice_value){ true, SLOTS_SLICE_NUMBER, 50 };
        p.v[SLOTS_SLICE_MEMORY_MAX] = (struct slots_slice_value){ true, SLOTS_SLICE_NUMBER, UINT64_C(2) << 30 };
        p.v[SLOTS_SLICE_CPU_QUOTA] = (struct slots_slice_value){ true, SLOTS_SLICE_PERCENT, 150 };
        p.v[SLOTS_SLICE_TASKS_MAX] = (struct slots_slice_value){ true, SLOTS_SLICE_INFINITY, 0 };
        text = slots_slice_render("slot03 of the service video", &p);
        assert_non_null(text);
        /* the properties in one fixed order, whatever the config's */
        assert_string_equal(text,
                            "# Written by slots-provision from the \"slice\" key of slots.conf(5); it replaces any edit.\n"
                            "[Unit]\n"
                            "Description=slots: slot03 of the service video\n"
                            "\n"
                            "[Slice]\n"
                            "MemoryMax=2147483648\n"
                            "TasksMax=infinity\n"
                            "CPUQuota=150%\n"
                            "IOWeight=50\n");
        free(text);
}

/* sdmanager.c: a slice's cgroup folder, each "-" of its name a level, as systemd lays them out. */
static const struct {
        const char *unit, *dir;
} cgroups[] = {
        { "slots-video.slice", "/sys/fs/cgroup/slots.slice/slots-video.slice" },
        { "slots-video-slot03.slice", "/sys/fs/cgroup/slots.slice/slots-video.slice/slots-video-slot03.slice" },
        { "slots-video\\x2dstudio-slot01.slice",
          "/sys/fs/cgroup/slots.slice/slots-video\\x2dstudio.slice/slots-video\\x2dstudio-slot01.slice" },
        { "slots.slice", "/sys/fs/cgroup/slots.slice" },
        { "slots-video.scope", NULL },
        { ".slice", NULL },
};

static void test_cgroup(void **state)
{
        int failures = 0;

        (void) state;
        for (size_t i = 0; i < N_ELEM(cgroups); i++) {
                char buf[512];
                int r = slots_slice_cgroup(cgroups[i].unit, buf, sizeof(buf));

                if (!cgroups[i].dir ? r != -EINVAL : r != 0 || strcmp(buf, cgroups[i].dir) != 0)
                        ROW_FAIL("%s: %d \"%s\"", cgroups[i].unit, r, r ? "" : buf);
        }
        assert_int_equal(failures, 0);
}

/* cgroup.events as the kernel writes it; a folder that is gone is empty. */
static void test_populated(void **state)
{
        char dir[] = "/tmp/test-slice-cg.XXXXXX", path[64];
        FILE *f;

        (void) state;
        assert_non_null(mkdtemp(dir));
        assert_int_equal(slots_cgroup_populated(dir), 0);
        snprintf(path, sizeof(path), "%s/cgroup.events", dir);
        f = fopen(path, "w");
        fputs("populated 1\nfrozen 0\n", f);
        fclose(f);
        assert_int_equal(slots_cgroup_populated(dir), 1);
        f = fopen(path, "w");
        fputs("populated 0\nfrozen 0\n", f);
        fclose(f);
        assert_int_equal(slots_cgroup_populated(dir), 0);
        f = fopen(path, "w");
        fputs("frozen 0\n", f);
        fclose(f);
        assert_int_equal(slots_cgroup_populated(dir), -EBADMSG);
        unlink(path);
        rmdir(dir);
}

/* ---- provision-slice.c in a scratch image (no systemd is asked: host is false) ---- */

struct lines {
        char text[16][160];
        unsigned n, warnings;
};

static void collect(void *arg, const struct slots_prov_msg *m)
{
        struct lines *l = arg;

        if (m->kind != SLOTS_PROV_CHANGE) {
                l->warnings++;
                return;
        }
        if (l->n < N_ELEM(l->text))
                snprintf(l->text[l->n++], sizeof(l->text[0]), "%s", m->text);
}

static struct slots_config *conf(const char *text)
{
        struct slots_config *c = NULL;
        struct slots_error e;

        slots_error_clear(&e);
        if (slots_config_parse(text, strlen(text), "t.conf", &c, &e) != 0)
                fail_msg("config: %s", e.reason);
        return c;
}

static int run_as(int rootfd, const struct slots_config *c, bool host, bool dry, struct lines *l)
{
        struct slots_prov_slice_opts o = { .rootfd = rootfd, .host = host, .dry_run = dry, .report = collect, .arg = l };
        struct slots_error e;
        unsigned changes = 0;
        int r;

        memset(l, 0, sizeof(*l));
        slots_error_clear(&e);
        r = slots_provision_slices(c, &o, &changes, &e);
        if (r == 0)
                assert_int_equal(changes, l->n);
        return r;
}

static int run(int rootfd, const struct slots_config *c, bool dry, struct lines *l)
{
        return run_as(rootfd, c, false, dry, l);
}

static char *slurp(int rootfd, const char *path)
{
        int fd = slots_open_in(rootfd, path, O_RDONLY);
        char *buf = NULL;
        size_t len;

        if (fd < 0)
                return NULL;
        assert_int_equal(slots_read_all(fd, 1 << 16, &buf, &len), 0);
        close(fd);
        return buf;
}

static void remove_tree(int rootfd, const char *dir)
{
        char cmd[64];

        close(rootfd);
        snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
        assert_int_equal(system(cmd), 0);
}

static void test_provision(void **state)
{
        char dir[] = "/tmp/test-slice.XXXXXX", *text;
        struct slots_config *c2, *c1, *c0;
        struct lines l;
        struct stat st;
        int rootfd;

        (void) state;
        assert_non_null(mkdtemp(dir));
        rootfd = open(dir, O_RDONLY | O_DIRECTORY);
        assert_true(rootfd >= 0);
        assert_int_equal(mkdirat(rootfd, "etc", 0755), 0);
        c2 = conf("{\"service\": \"video-studio\", \"slots\": 2, \"slice\": {\"pool\": {\"MemoryMax\": \"4G\"}, "
                  "\"default\": {\"TasksMax\": 64}, \"slot02\": {\"CPUQuota\": \"50%\"}}}");
        c1 = conf("{\"service\": \"video-studio\", \"slots\": 1, \"slice\": {}}");
        c0 = conf("{\"service\": \"video-studio\", \"slots\": 1}");

        /* a host without systemd as PID 1: one warning, nothing written */
        if (!slots_systemd_booted()) {
                assert_int_equal(run_as(rootfd, c2, true, false, &l), 0);
                assert_int_equal(l.n, 0);
                assert_int_equal(l.warnings, 1);
                assert_int_equal(fstatat(rootfd, "etc/systemd", &st, AT_SYMLINK_NOFOLLOW), -1);
        }

        /* a dry run reports the folders and the three units, and makes nothing */
        assert_int_equal(run(rootfd, c2, true, &l), 0);
        assert_int_equal(l.n, 5);
        assert_string_equal(l.text[0], "create folder /etc/systemd (root:root 0755)");
        assert_string_equal(l.text[1], "create folder /etc/systemd/system (root:root 0755)");
        assert_string_equal(l.text[2], "write slice unit /etc/systemd/system/slots-video\\x2dstudio.slice (root:root 0644)");
        assert_string_equal(l.text[4],
                            "write slice unit /etc/systemd/system/slots-video\\x2dstudio-slot02.slice (root:root 0644)");
        assert_int_equal(fstatat(rootfd, "etc/systemd", &st, AT_SYMLINK_NOFOLLOW), -1);

        if (geteuid() != 0) {
                slots_config_free(c2);
                slots_config_free(c1);
                slots_config_free(c0);
                remove_tree(rootfd, dir);
                print_message("skipped: writing the units needs root (a folder is made 0000, then root:root 0755)\n");
                skip();
        }
        assert_int_equal(run(rootfd, c2, false, &l), 0);
        assert_int_equal(l.n, 5);
        text = slurp(rootfd, "/etc/systemd/system/slots-video\\x2dstudio-slot02.slice");
        assert_non_null(text);
        assert_non_null(strstr(text, "\n[Slice]\nTasksMax=64\nCPUQuota=50%\n"));
        free(text);
        text = slurp(rootfd, "/etc/systemd/system/slots-video\\x2dstudio.slice");
        assert_non_null(strstr(text, "\n[Slice]\nMemoryMax=4294967296\n"));
        free(text);
        assert_int_equal(fstatat(rootfd, "etc/systemd/system/slots-video\\x2dstudio-slot01.slice", &st, 0), 0);
        assert_int_equal(st.st_mode & 07777, 0644);

        /* again: nothing to do */
        assert_int_equal(run(rootfd, c2, false, &l), 0);
        assert_int_equal(l.n, 0);

        /* a unit mode an admin changed is put back */
        assert_int_equal(fchmodat(rootfd, "etc/systemd/system/slots-video\\x2dstudio-slot01.slice", 0600, 0), 0);
        assert_int_equal(run(rootfd, c2, false, &l), 0);
        assert_int_equal(l.n, 1);

        /* the pool shrinks to one slot: slot02's unit goes, an admin's unit of the same pattern stays */
        {
                static const char admin[] = "[Slice]\nMemoryMax=1G\n";
                int fd = openat(rootfd, "etc/systemd/system/slots-video\\x2dstudio-extra.slice", O_WRONLY | O_CREAT, 0644);
                assert_true(fd >= 0);
                assert_int_equal(write(fd, admin, strlen(admin)), (ssize_t) strlen(admin));
                close(fd);
        }
        assert_int_equal(run(rootfd, c1, false, &l), 0);
        assert_int_equal(l.n, 3);
        assert_string_equal(l.text[2], "remove slice unit /etc/systemd/system/slots-video\\x2dstudio-slot02.slice");
        assert_int_equal(fstatat(rootfd, "etc/systemd/system/slots-video\\x2dstudio-slot02.slice", &st, 0), -1);

        /* no slice key at all: every unit of the pool goes, the admin's stays */
        assert_int_equal(run(rootfd, c0, false, &l), 0);
        assert_int_equal(l.n, 2);
        assert_int_equal(fstatat(rootfd, "etc/systemd/system/slots-video\\x2dstudio.slice", &st, 0), -1);
        assert_int_equal(fstatat(rootfd, "etc/systemd/system/slots-video\\x2dstudio-extra.slice", &st, 0), 0);
        assert_int_equal(run(rootfd, c0, false, &l), 0);
        assert_int_equal(l.n, 0);

        /* a symlink where a unit goes (a masked unit) is refused, neither followed nor replaced */
        assert_int_equal(symlinkat("/dev/null", rootfd, "etc/systemd/system/slots-video\\x2dstudio.slice"), 0);
        assert_int_equal(run(rootfd, c1, false, &l), -ELOOP);
        assert_int_equal(fstatat(rootfd, "etc/systemd/system/slots-video\\x2dstudio.slice", &st, AT_SYMLINK_NOFOLLOW), 0);
        assert_true(S_ISLNK(st.st_mode));

        slots_config_free(c2);
        slots_config_free(c1);
        slots_config_free(c0);
        remove_tree(rootfd, dir);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_escape),
                cmocka_unit_test(test_escape_size),
                cmocka_unit_test(test_unit_names),
                cmocka_unit_test(test_values),
                cmocka_unit_test(test_names),
                cmocka_unit_test(test_overlay),
                cmocka_unit_test(test_render),
                cmocka_unit_test(test_cgroup),
                cmocka_unit_test(test_populated),
                cmocka_unit_test(test_provision),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
