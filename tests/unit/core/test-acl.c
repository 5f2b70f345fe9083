/* POSIX ACLs through acl.c: read into entries, the named writers a mask lets through, set, strip, remove, as tables. */
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
#include <unistd.h>

#include <acl/libacl.h>
#include <cmocka.h>

#include "acl.h"
#include "unit.h"

/* A scratch file or folder; its access ACL (and default ACL) set from text; skips where ACLs cannot be set. */
static int scratch_with_acl(char *path, size_t size, bool dir, const char *access, const char *def)
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
        for (int k = 0; k < 2; k++) {
                const char *text = k ? def : access;
                acl_t a;

                if (!text)
                        continue;
                a = acl_from_text(text);
                assert_non_null(a);
                if (acl_set_file(path, k ? ACL_TYPE_DEFAULT : ACL_TYPE_ACCESS, a) < 0) {
                        print_message("skipped: %s takes no POSIX ACL (%s)\n", path, strerror(errno));
                        acl_free(a);
                        close(fd);
                        dir ? rmdir(path) : unlink(path);
                        skip();
                }
                acl_free(a);
        }
        return fd;
}

static void scratch_gone(const char *path, bool dir, int fd)
{
        close(fd);
        dir ? rmdir(path) : unlink(path);
}

/* The ACL of path as libacl's text with numeric ids, or "" without one. */
static char *text_of(const char *path, acl_type_t type)
{
        acl_t a = acl_get_file(path, type);
        char *t, *out;

        assert_non_null(a);
        t = acl_entries(a) ? acl_to_any_text(a, NULL, ',', TEXT_NUMERIC_IDS) : NULL;
        out = strdup(t ? t : "");
        acl_free(t);
        acl_free(a);
        return out;
}

static const struct {
        const char *what;
        const char *text;       /* the access ACL set; NULL: none */
        int r;                  /* slots_acl_get's return */
        size_t n;               /* entries read */
        unsigned mask;          /* slots_acl_mask */
        int writer;             /* index of the one named writer; -1 none */
} reads[] = {
        { "no ACL: the mode", NULL, 0, 0, 07, -1 },
        { "minimal ACL: the mode", "u::rwx,g::r-x,o::r-x", 0, 0, 07, -1 },
        { "named user writes, mask rwx", "u::rwx,u:1001:rw-,g::r-x,m::rwx,o::---", 1, 5, 07, 1 },
        { "named user writes, mask r-x", "u::rwx,u:1001:rw-,g::r-x,m::r-x,o::---", 1, 5, 05, -1 },
        { "named group writes", "u::rwx,g::r-x,g:300:-w-,m::rwx,o::---", 1, 5, 07, 2 },
        { "named user reads only", "u::rwx,u:1001:r--,g::r-x,m::rwx,o::---", 1, 5, 07, -1 },
        { "group_obj writes: not named", "u::rwx,g::rwx,m::rwx,o::---", 1, 4, 07, -1 },
        { "two named, sorted by tag and id", "u::rwx,u:1002:r--,u:1001:rwx,g::---,m::rwx,o::---", 1, 6, 07, 1 },
};

static void test_get(void **state)
{
        int failures = 0;

        (void) state;
        for (size_t i = 0; i < N_ELEM(reads); i++) {
                struct slots_acl acl;
                char path[4096];
                int fd = scratch_with_acl(path, sizeof(path), false, reads[i].text, NULL), writer = -1, r;

                r = slots_acl_get(fd, SLOTS_ACL_ACCESS, &acl);
                if (r != reads[i].r || acl.n != reads[i].n) {
                        ROW_FAIL("%s: get %d with %zu entries, expected %d with %zu", reads[i].what, r, acl.n,
                                 reads[i].r, reads[i].n);
                } else {
                        if (slots_acl_mask(&acl) != reads[i].mask)
                                ROW_FAIL("%s: mask %o, expected %o", reads[i].what, slots_acl_mask(&acl),
                                         reads[i].mask);
                        for (size_t k = 0; k < acl.n; k++)
                                if (slots_acl_named_writer(&acl, k))
                                        writer = writer == -1 ? (int) k : -2;
                        if (writer != reads[i].writer)
                                ROW_FAIL("%s: named writer %d, expected %d", reads[i].what, writer, reads[i].writer);
                        if (acl.n == 6 && (acl.entries[1].id != 1001 || acl.entries[2].id != 1002))
                                ROW_FAIL("%s: users %u, %u out of order", reads[i].what, acl.entries[1].id,
                                         acl.entries[2].id);
                }
                slots_acl_free(&acl);
                scratch_gone(path, false, fd);
        }
        if (failures)
                fail_msg("%d rows failed", failures);
}

/* What is read is set back unchanged, access and default; a default ACL is read and set through /proc. */
static void test_set_back(void **state)
{
        static const char acc[] = "user::rwx,user:1001:rwx,group::---,mask::rwx,other::---";
        static const char def[] = "user::rwx,user:1001:rwx,group::r-x,group:300:r-x,mask::rwx,other::---";
        struct slots_acl a, d;
        char path[4096], *t;
        int fd = scratch_with_acl(path, sizeof(path), true, acc, def);

        (void) state;
        assert_int_equal(slots_acl_get(fd, SLOTS_ACL_ACCESS, &a), 1);
        assert_int_equal(slots_acl_get(fd, SLOTS_ACL_DEFAULT, &d), 1);
        assert_int_equal(d.n, 6);
        assert_int_equal(slots_acl_remove(fd, SLOTS_ACL_ACCESS, false), 1);
        assert_int_equal(slots_acl_remove(fd, SLOTS_ACL_DEFAULT, false), 1);
        assert_int_equal(slots_acl_set(fd, SLOTS_ACL_ACCESS, &a), 0);
        assert_int_equal(slots_acl_set(fd, SLOTS_ACL_DEFAULT, &d), 0);
        t = text_of(path, ACL_TYPE_ACCESS);
        assert_string_equal(t, acc);
        free(t);
        t = text_of(path, ACL_TYPE_DEFAULT);
        assert_string_equal(t, def);
        free(t);
        slots_acl_free(&a);
        slots_acl_free(&d);
        scratch_gone(path, true, fd);
}

static const struct {
        const char *what;
        const char *access, *def;
        bool dir;
        int r;                          /* slots_acl_strip's return */
        const char *access_after, *def_after;
} strips[] = {
        { "the slot's user entry goes, the mask stays", "u::rwx,u:1001:rw-,g::r-x,m::rwx,o::---", NULL, false, 1,
          "user::rwx,group::r-x,mask::rwx,other::---", "" },
        { "the slot's group entry goes", "u::rwx,g::r-x,g:1001:rwx,m::rwx,o::---", NULL, false, 1,
          "user::rwx,group::r-x,mask::rwx,other::---", "" },
        { "another's entry stays", "u::rwx,u:1002:rw-,g::r-x,m::rwx,o::---", NULL, false, 0,
          "user::rwx,user:1002:rw-,group::r-x,mask::rwx,other::---", "" },
        { "no ACL: nothing", NULL, NULL, false, 0, "user::rw-,group::---,other::---", "" },
        { "a folder's default ACL too", "u::rwx,u:1001:rwx,g::r-x,m::rwx,o::---",
          "u::rwx,u:1001:rwx,u:1002:r-x,g::---,m::rwx,o::---", true, 1, "user::rwx,group::r-x,mask::rwx,other::---",
          "user::rwx,user:1002:r-x,group::---,mask::rwx,other::---" },
        { "a folder with a default ACL only", NULL, "u::rwx,g:1001:rwx,g::---,m::rwx,o::---", true, 1,
          "user::rwx,group::---,other::---", "user::rwx,group::---,mask::rwx,other::---" },
};

static int text_is(const char *what, const char *path, acl_type_t type, const char *want)
{
        char *t = text_of(path, type);
        int failures = 0;

        if (strcmp(t, want) != 0)
                ROW_FAIL("%s: %s ACL %s, expected %s", what, type == ACL_TYPE_ACCESS ? "access" : "default", t, want);
        free(t);
        return failures;
}

static void test_strip(void **state)
{
        int failures = 0;

        (void) state;
        for (size_t i = 0; i < N_ELEM(strips); i++) {
                char path[4096];
                int fd = scratch_with_acl(path, sizeof(path), strips[i].dir, strips[i].access, strips[i].def), r;

                r = slots_acl_strip(fd, strips[i].dir, 1001, 1001);
                if (r != strips[i].r)
                        ROW_FAIL("%s: strip %d, expected %d", strips[i].what, r, strips[i].r);
                failures += text_is(strips[i].what, path, ACL_TYPE_ACCESS, strips[i].access_after);
                if (strips[i].dir)
                        failures += text_is(strips[i].what, path, ACL_TYPE_DEFAULT, strips[i].def_after);
                scratch_gone(path, strips[i].dir, fd);
        }
        if (failures)
                fail_msg("%d rows failed", failures);
}

/* remove: an ACL goes whole with its named entries, the mode's group bits (the mask) kept; only_plain spares named ones. */
static void test_remove(void **state)
{
        static const char named[] = "u::rwx,g:300:r-x,g::r--,m::---,o::---";
        char path[4096];
        struct stat st;
        int fd = scratch_with_acl(path, sizeof(path), true, named, named);

        (void) state;
        assert_int_equal(slots_acl_remove(fd, SLOTS_ACL_ACCESS, true), 0);
        assert_int_equal(slots_acl_remove(fd, SLOTS_ACL_DEFAULT, true), 0);
        assert_int_equal(text_is("only plain", path, ACL_TYPE_ACCESS, "user::rwx,group::r--,group:300:r-x,mask::---,"
                                 "other::---"), 0);
        assert_int_equal(slots_acl_remove(fd, SLOTS_ACL_ACCESS, false), 1);
        assert_int_equal(slots_acl_remove(fd, SLOTS_ACL_DEFAULT, false), 1);
        assert_int_equal(fstat(fd, &st), 0);
        assert_int_equal(st.st_mode & 07777, 0700);
        assert_int_equal(text_is("whole", path, ACL_TYPE_ACCESS, "user::rwx,group::---,other::---"), 0);
        assert_int_equal(text_is("whole", path, ACL_TYPE_DEFAULT, ""), 0);
        assert_int_equal(slots_acl_remove(fd, SLOTS_ACL_ACCESS, false), 0);
        assert_int_equal(slots_acl_remove(fd, SLOTS_ACL_DEFAULT, false), 0);
        scratch_gone(path, true, fd);
}

/* An O_PATH fd is read through its /proc link; a file without an ACL has none (0). */
static void test_get_o_path(void **state)
{
        struct slots_acl acl;
        char path[4096];
        int fd = scratch_with_acl(path, sizeof(path), false, "u::rwx,u:1001:rw-,g::r-x,m::rwx,o::---", NULL), pfd;

        (void) state;
        pfd = open(path, O_PATH | O_CLOEXEC);
        assert_true(pfd >= 0);
        assert_int_equal(slots_acl_get(pfd, SLOTS_ACL_ACCESS, &acl), 1);
        assert_int_equal(acl.n, 5);
        assert_true(slots_acl_named_writer(&acl, 1));
        slots_acl_free(&acl);
        assert_int_equal(slots_acl_remove(fd, SLOTS_ACL_ACCESS, false), 1);
        assert_int_equal(slots_acl_get(pfd, SLOTS_ACL_ACCESS, &acl), 0);
        assert_int_equal(acl.n, 0);
        close(pfd);
        scratch_gone(path, false, fd);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_get),
                cmocka_unit_test(test_set_back),
                cmocka_unit_test(test_strip),
                cmocka_unit_test(test_remove),
                cmocka_unit_test(test_get_o_path),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
