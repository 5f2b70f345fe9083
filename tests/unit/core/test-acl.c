/* The POSIX ACL attribute (acl.c): decode and encode, the named writers a mask lets through, strip, as tables. */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <unistd.h>

#include <cmocka.h>

#include "acl.h"
#include "unit.h"

/* An attribute byte by byte: version 2, then tag, perm, id (little-endian). */
#define V2 2, 0, 0, 0
#define E(tag, perm, id) (tag), 0, (perm), 0, (id) & 0xff, ((id) >> 8) & 0xff, 0, 0
#define UNDEF 0xff, 0xff, 0xff, 0xff

static const struct {
        const char *what;
        unsigned char bytes[64];
        size_t len;
        int r;                  /* slots_acl_decode's return */
        size_t n;               /* entries decoded */
        unsigned mask;          /* slots_acl_mask */
        int writer;             /* index of the one named writer; -1 none */
} decodes[] = {
        { "version only", { V2 }, 4, 0, 0, 07, -1 },
        { "minimal ACL", { V2, E(1, 7, 0), E(4, 5, 0), E(0x20, 5, 0) }, 28, 0, 3, 07, -1 },
        { "named user writes, mask rwx", { V2, E(1, 7, 0), E(2, 6, 1001), E(4, 5, 0), E(0x10, 7, 0), E(0x20, 0, 0) },
          44, 0, 5, 07, 1 },
        { "named user writes, mask r-x", { V2, E(1, 7, 0), E(2, 6, 1001), E(4, 5, 0), E(0x10, 5, 0), E(0x20, 0, 0) },
          44, 0, 5, 05, -1 },
        { "named group writes", { V2, E(1, 7, 0), E(4, 5, 0), E(8, 2, 300), E(0x10, 7, 0), E(0x20, 0, 0) },
          44, 0, 5, 07, 2 },
        { "named user reads only", { V2, E(1, 7, 0), E(2, 4, 1001), E(4, 5, 0), E(0x10, 7, 0), E(0x20, 0, 0) },
          44, 0, 5, 07, -1 },
        { "group_obj writes: not named", { V2, E(1, 7, 0), E(4, 7, 0), E(0x20, 0, 0) }, 28, 0, 3, 07, -1 },
        { "empty", { 0 }, 0, -EBADMSG, 0, 07, -1 },
        { "truncated header", { 2, 0, 0 }, 3, -EBADMSG, 0, 07, -1 },
        { "truncated entry", { V2, E(1, 7, 0), 4, 0, 5 }, 15, -EBADMSG, 0, 07, -1 },
        { "version 1", { 1, 0, 0, 0, E(1, 7, 0) }, 12, -EBADMSG, 0, 07, -1 },
        { "version 2 big-endian", { 0, 0, 0, 2, E(1, 7, 0) }, 12, -EBADMSG, 0, 07, -1 },
        { "unknown tag", { V2, E(0x40, 7, 0) }, 12, -EBADMSG, 0, 07, -1 },
        { "two tag bits", { V2, E(0x03, 7, 0) }, 12, -EBADMSG, 0, 07, -1 },
        { "tag zero", { V2, E(0, 7, 0) }, 12, -EBADMSG, 0, 07, -1 },
};

static void test_decode(void **state)
{
        int failures = 0;

        (void) state;
        for (size_t i = 0; i < N_ELEM(decodes); i++) {
                struct slots_acl acl;
                int r = slots_acl_decode(decodes[i].bytes, decodes[i].len, &acl), writer = -1;

                if (r != decodes[i].r || acl.n != decodes[i].n) {
                        ROW_FAIL("%s: decode %d with %zu entries, expected %d with %zu", decodes[i].what, r, acl.n,
                                 decodes[i].r, decodes[i].n);
                        slots_acl_free(&acl);
                        continue;
                }
                if (slots_acl_mask(&acl) != decodes[i].mask)
                        ROW_FAIL("%s: mask %o, expected %o", decodes[i].what, slots_acl_mask(&acl), decodes[i].mask);
                for (size_t k = 0; k < acl.n; k++)
                        if (slots_acl_named_writer(&acl, k))
                                writer = writer == -1 ? (int) k : -2;
                if (writer != decodes[i].writer)
                        ROW_FAIL("%s: named writer %d, expected %d", decodes[i].what, writer, decodes[i].writer);
                slots_acl_free(&acl);
        }
        if (failures)
                fail_msg("%d rows failed", failures);
}

/* What decodes encodes back byte for byte, ids of unnamed entries as the kernel writes them. */
static void test_encode(void **state)
{
        static const unsigned char kernel[] = { V2, 1, 0, 7, 0, UNDEF, 2, 0, 6, 0, 0xe9, 3, 0, 0, 4, 0, 5, 0, UNDEF,
                                                0x10, 0, 7, 0, UNDEF, 0x20, 0, 0, 0, UNDEF };
        struct slots_acl acl;
        unsigned char *buf;
        size_t len;

        (void) state;
        assert_int_equal(slots_acl_decode(kernel, sizeof(kernel), &acl), 0);
        assert_int_equal(acl.n, 5);
        assert_int_equal(acl.entries[1].id, 1001);
        assert_int_equal(slots_acl_encode(&acl, &buf, &len), 0);
        assert_int_equal(len, sizeof(kernel));
        assert_memory_equal(buf, kernel, len);
        free(buf);
        slots_acl_free(&acl);
}

static const struct {
        const char *what;
        unsigned char before[64];
        size_t len;
        bool dir;
        int r;                          /* slots_acl_strip's return */
        size_t n_after;                 /* entries left in the access ACL */
} strips[] = {
        { "the slot's user entry goes", { V2, E(1, 7, 0), E(2, 6, 1001), E(4, 5, 0), E(0x10, 7, 0), E(0x20, 0, 0) },
          44, false, 1, 4 },
        { "the slot's group entry goes", { V2, E(1, 7, 0), E(4, 5, 0), E(8, 7, 1001), E(0x10, 7, 0), E(0x20, 0, 0) },
          44, false, 1, 4 },
        { "another's entry stays", { V2, E(1, 7, 0), E(2, 6, 1002), E(4, 5, 0), E(0x10, 7, 0), E(0x20, 0, 0) },
          44, false, 0, 5 },
        { "a folder's ACL too", { V2, E(1, 7, 0), E(2, 7, 1001), E(4, 5, 0), E(0x10, 7, 0), E(0x20, 0, 0) },
          44, true, 1, 4 },
};

/* A scratch file whose file system takes ACLs; skips the test (with its reason) where it does not. */
static int scratch_with_acl(char *path, size_t size, bool dir, const unsigned char *acl, size_t len)
{
        const char *tmp = getenv("TMPDIR");
        int fd;

        snprintf(path, size, "%s/test-acl.XXXXXX", tmp ? tmp : "/tmp");
        if (dir) {
                if (!mkdtemp(path))
                        return -1;
                fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        } else {
                fd = mkstemp(path);
        }
        assert_true(fd >= 0);
        if (fsetxattr(fd, SLOTS_ACL_ACCESS, acl, len, 0) < 0) {
                print_message("skipped: %s takes no POSIX ACL (%s)\n", path, strerror(errno));
                close(fd);
                dir ? rmdir(path) : unlink(path);
                skip();
        }
        return fd;
}

static void test_strip(void **state)
{
        int failures = 0;

        (void) state;
        for (size_t i = 0; i < N_ELEM(strips); i++) {
                struct slots_acl acl;
                char path[4096];
                int fd = scratch_with_acl(path, sizeof(path), strips[i].dir, strips[i].before, strips[i].len), r;

                r = slots_acl_strip(fd, strips[i].dir, 1001, 1001);
                if (r != strips[i].r)
                        ROW_FAIL("%s: strip %d, expected %d", strips[i].what, r, strips[i].r);
                r = slots_acl_get(fd, SLOTS_ACL_ACCESS, &acl);
                if (r != 1 || acl.n != strips[i].n_after)
                        ROW_FAIL("%s: after strip get %d with %zu entries, expected 1 with %zu", strips[i].what, r,
                                 acl.n, strips[i].n_after);
                for (size_t k = 0; r == 1 && k < acl.n; k++)
                        if ((acl.entries[k].tag == SLOTS_ACL_USER || acl.entries[k].tag == SLOTS_ACL_GROUP) &&
                            acl.entries[k].id == 1001)
                                ROW_FAIL("%s: entry %zu still names 1001", strips[i].what, k);
                slots_acl_free(&acl);
                close(fd);
                strips[i].dir ? rmdir(path) : unlink(path);
        }
        if (failures)
                fail_msg("%d rows failed", failures);
}

/* An O_PATH fd is read through its /proc link; a file without an ACL has none (0). */
static void test_get_o_path(void **state)
{
        static const unsigned char acl2[] = { V2, E(1, 7, 0), E(2, 6, 1001), E(4, 5, 0), E(0x10, 7, 0), E(0x20, 0, 0) };
        struct slots_acl acl;
        char path[4096];
        int fd = scratch_with_acl(path, sizeof(path), false, acl2, sizeof(acl2)), pfd;

        (void) state;
        pfd = open(path, O_PATH | O_CLOEXEC);
        assert_true(pfd >= 0);
        assert_int_equal(slots_acl_get(pfd, SLOTS_ACL_ACCESS, &acl), 1);
        assert_int_equal(acl.n, 5);
        assert_true(slots_acl_named_writer(&acl, 1));
        slots_acl_free(&acl);
        assert_int_equal(fremovexattr(fd, SLOTS_ACL_ACCESS), 0);
        assert_int_equal(slots_acl_get(pfd, SLOTS_ACL_ACCESS, &acl), 0);
        assert_int_equal(acl.n, 0);
        close(pfd);
        close(fd);
        unlink(path);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_decode),
                cmocka_unit_test(test_encode),
                cmocka_unit_test(test_strip),
                cmocka_unit_test(test_get_o_path),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
