/*
 * What the table store (store.c) refuses, as a table of the file on disk and the error: a NUL
 * byte (invalid: it is not a slot table), a file one byte over SLOTS_TABLE_MAX (failed: too
 * big to read), a table folder that is not there for a reader and for a writer, a table the
 * reader may not open (as nobody: the fix names root and the table's group); each leaves the
 * file as it was.
 */
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

#include "fstree.h"
#include "store.h"
#include "unit.h"

#define TEST(f) cmocka_unit_test_setup_teardown(f, fstree_setup, fstree_teardown)

static void write_table(const char *data, size_t len, off_t size)
{
        int fd = openat(bfd, "slots.json", O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0640);

        assert_true(fd >= 0);
        assert_int_equal(write(fd, data, len), (ssize_t) len);
        if (size)
                assert_int_equal(ftruncate(fd, size), 0);
        close(fd);
}

static void test_content_refused(void **state)
{
        static const char nul[] = "{\"version\": 1, \"slots\": {}}\0\n";
        static const struct {
                const char *what;
                const char *data;
                size_t len;
                off_t size;                     /* ftruncate to this (0: as written) */
                int err;
                enum slots_error_kind kind;
                const char *reason;
        } rows[] = {
                { "a NUL byte after the JSON", nul, sizeof(nul) - 1, 0, -EBADMSG, SLOTS_ERR_INVALID,
                  "contains a NUL byte" },
                { "one byte over SLOTS_TABLE_MAX", "{", 1, (off_t) SLOTS_TABLE_MAX + 1, -EFBIG, SLOTS_ERR_INVALID,
                  "is larger than 67108864 bytes" },
        };
        int failures = 0;

        (void) state;
        for (size_t i = 0; i < N_ELEM(rows); i++) {
                for (unsigned flags = 0; flags <= SLOTS_STORE_WRITE; flags += SLOTS_STORE_WRITE) {
                        struct slots_store s;
                        struct slots_error e;
                        struct stat before, after;
                        char path[512];
                        int r;

                        if (flags && geteuid() != 0) {
                                /* A writer's folder must be root's: the writer's side is not run, and says so. */
                                print_message("skipped: %s as the writer (needs root)\n", rows[i].what);
                                continue;
                        }
                        write_table(rows[i].data, rows[i].len, rows[i].size);
                        before = st_of("slots.json");
                        snprintf(path, sizeof(path), "%s/slots.json", base);
                        slots_error_clear(&e);
                        r = slots_store_open(&s, AT_FDCWD, path, 8, getegid(), flags, &e);
                        after = st_of("slots.json");
                        if (r != rows[i].err || e.kind != rows[i].kind || strcmp(e.reason, rows[i].reason) != 0 ||
                            strcmp(e.object, path) != 0)
                                ROW_FAIL("%s (%s): %d kind %d: %s: %s", rows[i].what, flags ? "writer" : "reader", r,
                                         (int) e.kind, e.object, e.reason);
                        if (after.st_size != before.st_size || after.st_mtim.tv_nsec != before.st_mtim.tv_nsec ||
                            after.st_ino != before.st_ino)
                                ROW_FAIL("%s: the table changed", rows[i].what);
                        assert_int_equal(unlinkat(bfd, "slots.json", 0), 0);
                }
        }
        if (failures)
                fail_msg("%d failures", failures);
}

/* No folder for the table: the reader and the writer both say so, naming the table. */
static void test_no_folder(void **state)
{
        char path[512];

        (void) state;
        snprintf(path, sizeof(path), "%s/gone/slots.json", base);
        for (unsigned flags = 0; flags <= SLOTS_STORE_WRITE; flags += SLOTS_STORE_WRITE) {
                struct slots_store s;
                struct slots_error e;

                if (flags && geteuid() != 0) {
                        print_message("skipped: the writer without a folder (needs root)\n");
                        continue;
                }
                slots_error_clear(&e);
                assert_int_equal(slots_store_open(&s, AT_FDCWD, path, 8, 0, flags, &e), -ENOENT);
                assert_string_equal(e.object, path);
                assert_string_equal(e.reason, "cannot open its directory: No such file or directory");
                assert_int_equal(faccessat(bfd, "gone", F_OK, 0), -1);
        }
}

/* A reader without access (nobody, the table root:root 0600): EACCES and the fix. */
static void test_reader_without_access(void **state)
{
        int p[2], status;
        char buf[2 * SLOTS_ERR_TEXT + 16] = "";
        pid_t pid;

        (void) state;
        if (geteuid() != 0) {
                print_message("skipped: the table is made root's and read as nobody (needs root)\n");
                skip();
        }
        write_table("{\"version\": 1, \"slots\": {}}\n", 28, 0);
        assert_int_equal(fchmodat(bfd, "slots.json", 0600, 0), 0);
        assert_int_equal(pipe(p), 0);
        pid = fork();
        assert_true(pid >= 0);
        if (pid == 0) {
                struct slots_store s;
                struct slots_error e;
                char path[512];
                int r;

                close(p[0]);
                if (setgid(65534) < 0 || setuid(65534) < 0)
                        _exit(2);
                snprintf(path, sizeof(path), "%s/slots.json", base);
                slots_error_clear(&e);
                r = slots_store_open(&s, AT_FDCWD, path, 8, 0, 0, &e);
                dprintf(p[1], "%d|%s|%s", r, e.reason, e.fix);
                _exit(0);
        }
        close(p[1]);
        assert_true(read(p[0], buf, sizeof(buf) - 1) > 0);
        close(p[0]);
        assert_int_equal(waitpid(pid, &status, 0), pid);
        assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
        assert_string_equal(buf, "-13|cannot open: Permission denied|run as root or as a member of the table's group");
}

int main(void)
{
        const struct CMUnitTest tests[] = {
                TEST(test_content_refused),
                TEST(test_no_folder),
                TEST(test_reader_without_access),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
