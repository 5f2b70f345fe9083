/*
 * The table on disk (store.c), in a scratch folder: load and save keep the table's
 * owner, group, mode and ACL; a missing table is created root:<group> 0640; a folder
 * others or a foreign group can write, a symlink or a FIFO at the table or its lock is
 * refused; a malformed table is refused with its position (kind invalid) and nothing is
 * written; a save that fails (injected) leaves the table as it was.
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
#include <sys/xattr.h>
#include <unistd.h>

#include <cmocka.h>

#include "store.h"
#include "scratch.h"
#include "unit.h"

/* ---- the store: slots_store_open / slots_store_save ---- */

static const char table_text[] =
        "{\n  \"slots\": {\n    \"slot02\": {\n      \"since\": \"2026-10-01T09:12:00Z\",\n"
        "      \"user\": \"alice\"\n    }\n  },\n  \"version\": 1\n}\n";

static void table_path(char *out, size_t size, const char *name)
{
        snprintf(out, size, "%s/%s", dir, name);
}

static void test_store_round_trip(void **state)
{
        struct slots_store s;
        struct slots_error e;
        char path[512];
        const char *user;

        (void) state;
        make_file("slots.json", table_text, owner_uid(), owner_gid(), 0640);
        table_path(path, sizeof(path), "slots.json");
        slots_error_clear(&e);
        if (slots_store_open(&s, AT_FDCWD, path, 8, owner_gid(), SLOTS_STORE_WRITE, &e) != 0)
                fail_msg("%s: %s", e.object, e.reason);
        assert_true(s.exists);
        assert_true(s.lockfd >= 0);
        assert_int_equal(slots_table_get(s.table, 2, &user, NULL, NULL), SLOTS_SLOT_ASSIGNED);
        assert_string_equal(user, "alice");
        assert_int_equal(slots_table_assign(s.table, 3, "bob", "2026-10-02T00:00:00Z"), 0);
        assert_int_equal(slots_store_save(&s, &e), 0);
        slots_store_close(&s);
        assert_file("slots.json",
                    "{\n  \"slots\": {\n    \"slot02\": {\n      \"since\": \"2026-10-01T09:12:00Z\",\n"
                    "      \"user\": \"alice\"\n    },\n    \"slot03\": {\n      \"since\": \"2026-10-02T00:00:00Z\",\n"
                    "      \"user\": \"bob\"\n    }\n  },\n  \"version\": 1\n}\n",
                    owner_uid(), owner_gid(), 0640);
        /* The index is root's (table-index.h): a writer that is not root leaves none, nor a temp. */
        assert_dir(is_root() ? "slots.json,slots.json.index,slots.json.lock" : "slots.json,slots.json.lock");
}

/* A foreign owner and other modes survive a save (root: chown). */
static void test_store_keeps_owner(void **state)
{
        static const mode_t store_modes[] = { 0640, 0600, 0644 };

        (void) state;
        if (!is_root()) {
                print_message("skipped: chown to 4242:4243 needs root\n");
                skip();
        }
        for (size_t i = 0; i < N_ELEM(store_modes); i++) {
                struct slots_store s;
                struct slots_error e;
                char path[512];

                (void) unlinkat(dfd, "slots.json", 0);
                make_file("slots.json", table_text, 4242, 4243, store_modes[i]);
                table_path(path, sizeof(path), "slots.json");
                assert_int_equal(slots_store_open(&s, AT_FDCWD, path, 8, 999, SLOTS_STORE_WRITE, &e), 0);
                assert_int_equal(slots_table_remove(s.table, 2), 0);
                assert_int_equal(slots_store_save(&s, &e), 0);
                slots_store_close(&s);
                assert_file("slots.json", "{\n  \"slots\": {},\n  \"version\": 1\n}\n", 4242, 4243, store_modes[i]);
        }
}

/* A missing table loads empty and is created root:<group> 0640 (root: the owner is root). */
static void test_store_create(void **state)
{
        struct slots_store s;
        struct slots_error e;
        char path[512];

        (void) state;
        if (!is_root()) {
                print_message("skipped: a new table is owned by root\n");
                skip();
        }
        table_path(path, sizeof(path), "slots.json");
        assert_int_equal(slots_store_open(&s, AT_FDCWD, path, 8, 4243, SLOTS_STORE_WRITE, &e), 0);
        assert_false(s.exists);
        assert_int_equal(slots_table_lowest_free(s.table, 8), 1);
        assert_int_equal(slots_store_save(&s, &e), 0);
        slots_store_close(&s);
        assert_file("slots.json", "{\n  \"slots\": {},\n  \"version\": 1\n}\n", 0, 4243, 0640);
}

/* A directory others can write is refused for writing (someone could swap the table); reading is fine. */
static void test_store_dir_writable(void **state)
{
        static const struct {
                mode_t mode;
                int write_result;
        } dirs[] = {
                { 0755, 0 }, { 0750, 0 }, { 0777, -EPERM }, { 01777, -EPERM }, { 0757, -EPERM }, { 0703, -EPERM },
        };

        (void) state;
        make_file("slots.json", table_text, owner_uid(), owner_gid(), 0640);
        for (size_t i = 0; i < N_ELEM(dirs); i++) {
                struct slots_store s;
                struct slots_error e;
                char path[512];
                struct snap before;
                char why[256];
                int r;

                snapshot("slots.json", &before);
                assert_int_equal(fchmod(dfd, dirs[i].mode), 0);
                table_path(path, sizeof(path), "slots.json");
                slots_error_clear(&e);
                r = slots_store_open(&s, AT_FDCWD, path, 8, owner_gid(), SLOTS_STORE_WRITE, &e);
                if (r != dirs[i].write_result)
                        fail_msg("directory %04o: store_open for writing gave %d, expected %d", dirs[i].mode, r,
                                 dirs[i].write_result);
                if (r == 0) {
                        slots_store_close(&s);
                } else {
                        assert_non_null(strstr(e.reason, "writable by others"));
                        assert_true(e.fix[0] != '\0');
                }
                assert_int_equal(slots_store_open(&s, AT_FDCWD, path, 8, owner_gid(), 0, &e), 0);
                slots_store_close(&s);
                if (!unchanged("slots.json", &before, why, sizeof(why)))
                        fail_msg("directory %04o: %s", dirs[i].mode, why);
                (void) unlinkat(dfd, "slots.json.lock", 0);
        }
        assert_int_equal(fchmod(dfd, 0755), 0);
}

/* A directory a non-root group can write is refused for writing too; root's group may. */
static void test_store_dir_group_writable(void **state)
{
        static const struct {
                gid_t gid;
                mode_t mode;
                int write_result;
        } dirs[] = {
                { 4243, 0750, 0 }, { 4243, 0770, -EPERM }, { 4243, 0775, -EPERM }, { 0, 0770, 0 },
        };

        (void) state;
        if (!is_root()) {
                print_message("skipped: chgrp of the folder needs root\n");
                skip();
        }
        make_file("slots.json", table_text, owner_uid(), owner_gid(), 0640);
        for (size_t i = 0; i < N_ELEM(dirs); i++) {
                struct slots_store s;
                struct slots_error e;
                char path[512];
                int r;

                assert_int_equal(fchown(dfd, (uid_t) -1, dirs[i].gid), 0);
                assert_int_equal(fchmod(dfd, dirs[i].mode), 0);
                table_path(path, sizeof(path), "slots.json");
                slots_error_clear(&e);
                r = slots_store_open(&s, AT_FDCWD, path, 8, owner_gid(), SLOTS_STORE_WRITE, &e);
                if (r != dirs[i].write_result)
                        fail_msg("directory %u %04o: store_open for writing gave %d, expected %d",
                                 (unsigned) dirs[i].gid, dirs[i].mode, r, dirs[i].write_result);
                if (r == 0)
                        slots_store_close(&s);
                else
                        assert_non_null(strstr(e.reason, "writable by group"));
                (void) unlinkat(dfd, "slots.json.lock", 0);
        }
        assert_int_equal(fchown(dfd, (uid_t) -1, 0), 0);
        assert_int_equal(fchmod(dfd, 0755), 0);
}

/* A directory owned by someone else (neither root nor us) is refused for writing. */
static void test_store_dir_foreign(void **state)
{
        struct slots_store s;
        struct slots_error e;
        char path[512];

        (void) state;
        if (!is_root()) {
                print_message("skipped: chown of the folder needs root\n");
                skip();
        }
        assert_int_equal(mkdirat(dfd, "sub", 0755), 0);
        assert_int_equal(fchownat(dfd, "sub", 4242, 4243, 0), 0);
        table_path(path, sizeof(path), "sub/slots.json");
        assert_int_equal(slots_store_open(&s, AT_FDCWD, path, 8, 4243, SLOTS_STORE_WRITE, &e), -EPERM);
        assert_non_null(strstr(e.reason, "4242"));
        assert_int_equal(slots_store_open(&s, AT_FDCWD, path, 8, 4243, 0, &e), 0);
        slots_store_close(&s);
}

static void test_store_lock_symlink(void **state)
{
        struct slots_store s;
        struct slots_error e;
        struct snap before;
        char path[512], why[256];
        struct stat st;

        (void) state;
        make_file("slots.json", table_text, owner_uid(), owner_gid(), 0640);
        snapshot("slots.json", &before);
        assert_int_equal(symlinkat("elsewhere", dfd, "slots.json.lock"), 0);
        table_path(path, sizeof(path), "slots.json");
        slots_error_clear(&e);
        assert_int_equal(slots_store_open(&s, AT_FDCWD, path, 8, owner_gid(), SLOTS_STORE_WRITE, &e), -ELOOP);
        assert_string_equal(e.object, path);
        assert_non_null(strstr(e.reason, "symlink"));
        assert_int_equal(fstatat(dfd, "elsewhere", &st, AT_SYMLINK_NOFOLLOW), -1);
        if (!unchanged("slots.json", &before, why, sizeof(why)))
                fail_msg("%s", why);
        assert_dir("slots.json,slots.json.lock");
}

static void test_store_table_symlink(void **state)
{
        struct slots_store s;
        struct slots_error e;
        struct snap before;
        char path[512], why[256], link[64];
        ssize_t n;

        (void) state;
        make_file("real.json", table_text, owner_uid(), owner_gid(), 0640);
        snapshot("real.json", &before);
        assert_int_equal(symlinkat("real.json", dfd, "slots.json"), 0);
        table_path(path, sizeof(path), "slots.json");
        for (unsigned flags = 0; flags <= SLOTS_STORE_WRITE; flags++) {
                slots_error_clear(&e);
                assert_int_equal(slots_store_open(&s, AT_FDCWD, path, 8, owner_gid(), flags, &e), -ELOOP);
                assert_non_null(strstr(e.reason, "symlink"));
                assert_true(e.fix[0] != '\0');
        }
        n = readlinkat(dfd, "slots.json", link, sizeof(link) - 1);
        assert_int_equal(n, 9);
        link[n] = '\0';
        assert_string_equal(link, "real.json");
        if (!unchanged("real.json", &before, why, sizeof(why)))
                fail_msg("%s", why);
}

static void test_store_table_fifo(void **state)
{
        struct slots_store s;
        struct slots_error e;
        char path[512];

        (void) state;
        assert_int_equal(mkfifoat(dfd, "slots.json", 0640), 0);
        table_path(path, sizeof(path), "slots.json");
        alarm(10);
        /* Refused (exit 1) like a symlink, not an invalid table (exit 2); the errno is the system's. */
        assert_int_equal(slots_store_open(&s, AT_FDCWD, path, 8, owner_gid(), SLOTS_STORE_WRITE, &e), -EINVAL);
        alarm(0);
        assert_int_equal(e.kind, SLOTS_ERR_REFUSED);
        assert_non_null(strstr(e.reason, "not a regular file"));
}

/* A malformed table is refused with its position, and nothing is written. */
static void test_store_malformed(void **state)
{
        static const char text[] = "{\n  \"version\": 2,\n  \"slots\": {}\n}\n";
        struct slots_store s;
        struct slots_error e;
        struct snap before;
        char path[512], why[256];

        (void) state;
        make_file("slots.json", text, owner_uid(), owner_gid(), 0640);
        snapshot("slots.json", &before);
        table_path(path, sizeof(path), "slots.json");
        assert_int_equal(slots_store_open(&s, AT_FDCWD, path, 8, owner_gid(), SLOTS_STORE_WRITE, &e), -EBADMSG);
        assert_int_equal(e.kind, SLOTS_ERR_INVALID);
        assert_string_equal(e.object, path);
        assert_int_equal(e.line, 2);
        assert_int_equal(e.column, 14);
        if (!unchanged("slots.json", &before, why, sizeof(why)))
                fail_msg("%s", why);
        /* a slot outside a smaller pool */
        (void) unlinkat(dfd, "slots.json", 0);
        make_file("slots.json", table_text, owner_uid(), owner_gid(), 0640);
        assert_int_equal(slots_store_open(&s, AT_FDCWD, path, 1, owner_gid(), SLOTS_STORE_WRITE, &e), -EBADMSG);
        assert_int_equal(e.kind, SLOTS_ERR_INVALID);
        assert_int_equal(e.line, 3);
        assert_int_equal(e.column, 5);
}

/*
 * Content that is no table is invalid (exit 2) before any parse: a NUL byte, or one byte
 * more than SLOTS_TABLE_MAX (a sparse file, never read whole); nothing is written.
 */
static void test_store_not_text(void **state)
{
        static const struct {
                off_t size;             /* 0: the text with a NUL byte */
                int want;
                const char *reason;
        } rows[] = {
                { 0, -EBADMSG, "contains a NUL byte" },
                { (off_t) SLOTS_TABLE_MAX + 1, -EFBIG, "is larger than 67108864 bytes" },
        };
        static const char nul[] = "{\"version\": 1,\0 \"slots\": {}}\n";

        (void) state;
        for (size_t i = 0; i < N_ELEM(rows); i++) {
                struct slots_store s;
                struct slots_error e;
                struct snap before;
                char path[512], why[256];
                int fd;

                (void) unlinkat(dfd, "slots.json", 0);
                make_file("slots.json", "", owner_uid(), owner_gid(), 0640);
                fd = openat(dfd, "slots.json", O_WRONLY);
                assert_true(fd >= 0);
                if (rows[i].size)
                        assert_int_equal(ftruncate(fd, rows[i].size), 0);
                else
                        assert_int_equal(__real_write(fd, nul, sizeof(nul) - 1), (ssize_t) sizeof(nul) - 1);
                close(fd);
                snapshot("slots.json", &before);
                table_path(path, sizeof(path), "slots.json");
                slots_error_clear(&e);
                assert_int_equal(slots_store_open(&s, AT_FDCWD, path, 8, owner_gid(), SLOTS_STORE_WRITE, &e),
                                 rows[i].want);
                assert_int_equal(e.kind, SLOTS_ERR_INVALID);
                assert_string_equal(e.object, path);
                assert_string_equal(e.reason, rows[i].reason);
                if (!unchanged("slots.json", &before, why, sizeof(why)))
                        fail_msg("row %zu: %s", i, why);
                assert_dir("slots.json,slots.json.lock");
        }
}

/* A save that fails leaves the table as it was, and no temp. */
static void test_store_save_fault(void **state)
{
        static const char *const fns[] = { "write", "fsync", "fchown", "fchmod", "renameat" };

        (void) state;
        make_file("slots.json", table_text, owner_uid(), owner_gid(), 0640);
        for (size_t i = 0; i < N_ELEM(fns); i++) {
                struct slots_store s;
                struct slots_error e;
                struct snap before;
                char path[512], why[256];

                snapshot("slots.json", &before);
                table_path(path, sizeof(path), "slots.json");
                assert_int_equal(slots_store_open(&s, AT_FDCWD, path, 8, owner_gid(), SLOTS_STORE_WRITE, &e), 0);
                assert_int_equal(slots_table_remove(s.table, 2), 0);
                inj_arm(fns[i], 1, ENOSPC);
                assert_int_equal(slots_store_save(&s, &e), -ENOSPC);
                assert_int_equal(inj.fired, 1);
                inj_reset();
                slots_store_close(&s);
                if (!unchanged("slots.json", &before, why, sizeof(why)))
                        fail_msg("%s: %s", fns[i], why);
                assert_dir("slots.json,slots.json.lock");
        }
}

/*
 * The index is written after the table's rename: when that write fails the table is saved all
 * the same, and the index left is the older table's, which no reader believes (table-index.h).
 */
static void test_store_index_fault(void **state)
{
        struct slots_store s;
        struct slots_error e;
        char path[512];

        (void) state;
        if (!is_root()) {
                print_message("skipped: the index is root's, so a writer that is not root makes none to fail\n");
                skip();
        }
        make_file("slots.json", table_text, owner_uid(), owner_gid(), 0640);
        table_path(path, sizeof(path), "slots.json");
        assert_int_equal(slots_store_open(&s, AT_FDCWD, path, 8, owner_gid(), SLOTS_STORE_WRITE, &e), 0);
        assert_int_equal(slots_table_remove(s.table, 2), 0);
        inj_arm("renameat", 2, ENOSPC);
        assert_int_equal(slots_store_save(&s, &e), 0);
        assert_int_equal(inj.fired, 1);
        inj_reset();
        slots_store_close(&s);
        assert_file("slots.json", "{\n  \"slots\": {},\n  \"version\": 1\n}\n", owner_uid(), owner_gid(), 0640);
        assert_dir("slots.json,slots.json.lock");
}

static void test_store_bad_path(void **state)
{
        struct slots_store s;
        struct slots_error e;
        char path[512];

        (void) state;
        assert_true(slots_store_open(&s, AT_FDCWD, "slots.json", 8, 0, 0, &e) < 0);
        assert_true(slots_store_open(&s, AT_FDCWD, "/", 8, 0, 0, &e) < 0);
        table_path(path, sizeof(path), "missing/slots.json");
        assert_int_equal(slots_store_open(&s, AT_FDCWD, path, 8, 0, 0, &e), -ENOENT);
        assert_string_equal(e.object, path);
}

/* ---- the table policy's verdict: slots_table_verdict ---- */

/* One table file as stat shows it, and what the verdict says of it (fd: a scratch file without an ACL). */
static const struct verdict_case {
        uid_t uid;
        gid_t gid;
        mode_t mode;
        gid_t group;                    /* the service group judged; (gid_t) -1: not judged */
        bool ok, writable, unreadable;
        unsigned problems;
        const char *reason, *fix;
} verdict_cases[] = {
        { 0, 42, 0640, 42, true, false, false, 0, "", "" },
        { 0, 0, 0640, 42, false, false, true, SLOTS_POLICY_GROUP, "group is gid 0, not the service group svc",
          "chgrp svc T" },
        { 0, 42, 0600, 42, false, false, true, SLOTS_POLICY_MODE, "mode is 0600, not 0640", "chmod 0640 T" },
        { 0, 42, 0644, 42, false, false, false, SLOTS_POLICY_MODE, "mode is 0644, not 0640 (readable by others)",
          "chmod 0640 T" },
        { 0, 42, 0660, 42, false, true, false, SLOTS_POLICY_MODE, "mode is 0660, not 0640 (writable by its group)",
          "chmod 0640 T" },
        { 0, 0, 0660, 42, false, false, true, SLOTS_POLICY_GROUP | SLOTS_POLICY_MODE,
          "group is gid 0, not the service group svc; mode is 0660, not 0640 (writable by its group)",
          "chgrp svc T && chmod 0640 T" },
        { 0, 42, 0646, 42, false, true, false, SLOTS_POLICY_MODE, "mode is 0646, not 0640 (writable by others)",
          "chmod 0640 T" },
        { 4242, 42, 0640, 42, false, true, false, SLOTS_POLICY_OWNER, "owner is uid 4242, not root",
          "chown root:svc T" },
        { 4242, 7, 0600, 42, false, true, true, SLOTS_POLICY_OWNER | SLOTS_POLICY_GROUP | SLOTS_POLICY_MODE,
          "owner is uid 4242, not root; group is gid 7, not the service group svc; mode is 0600, not 0640",
          "chown root:svc T && chmod 0640 T" },
        /* pam_slots: the group is not judged, only who may write. */
        { 0, 7, 0640, (gid_t) -1, true, false, false, 0, "", "" },
        { 0, 7, 0664, (gid_t) -1, false, true, false, SLOTS_POLICY_MODE,
          "mode is 0664, not 0640 (writable by its group)", "chmod 0640 T" },
        { 4242, 7, 0600, (gid_t) -1, false, true, false, SLOTS_POLICY_OWNER | SLOTS_POLICY_MODE,
          "owner is uid 4242, not root; mode is 0600, not 0640", "chown root T && chmod 0640 T" },
};

static void test_verdict_table(void **state)
{
        (void) state;
        make_file("t.json", "{}", getuid(), getgid(), 0600);
        for (size_t i = 0; i < N_ELEM(verdict_cases); i++) {
                const struct verdict_case *c = &verdict_cases[i];
                const struct slots_table_policy p = { .path = "T", .group = c->group, .group_name = "svc" };
                struct slots_table_verdict v;
                struct stat st;
                int fd = openat(dfd, "t.json", O_RDONLY | O_CLOEXEC);

                assert_true(fd >= 0);
                assert_int_equal(fstat(fd, &st), 0);
                st.st_uid = c->uid;
                st.st_gid = c->gid;
                st.st_mode = S_IFREG | c->mode;
                print_message("case %zu: %u:%u %04o\n", i, (unsigned) c->uid, (unsigned) c->gid, (unsigned) c->mode);
                assert_int_equal(slots_table_verdict(fd, &st, &p, &v), c->ok);
                assert_int_equal(v.problems, c->problems);
                assert_int_equal(v.writable, c->writable);
                assert_int_equal(v.unreadable, c->unreadable);
                assert_string_equal(v.e.reason, c->reason);
                assert_string_equal(v.e.fix, c->fix);
                if (!c->ok)
                        assert_int_equal(v.e.kind, SLOTS_ERR_REFUSED);
                close(fd);
        }
}

/*
 * A table with a POSIX ACL (the kernel's attribute: version 2, user_obj, a named user,
 * group_obj, mask, other): a problem with the fix setfacl -b; writable when the mask
 * lets write through; and the policy fails closed when the ACL cannot be read (fd -1).
 */
static void test_verdict_acl(void **state)
{
        static const unsigned char acl[] = {
                2, 0, 0, 0,
                0x01, 0, 6, 0, 0xff, 0xff, 0xff, 0xff,  /* user_obj rw- */
                0x02, 0, 6, 0, 0x92, 0x10, 0, 0,        /* user 4242 rw- */
                0x04, 0, 4, 0, 0xff, 0xff, 0xff, 0xff,  /* group_obj r-- */
                0x10, 0, 6, 0, 0xff, 0xff, 0xff, 0xff,  /* mask rw- */
                0x20, 0, 0, 0, 0xff, 0xff, 0xff, 0xff,  /* other --- */
        };
        const struct slots_table_policy p = { .path = "T", .group = (gid_t) -1 };
        struct slots_table_verdict v;
        struct stat st;
        int fd;

        (void) state;
        make_file("t.json", "{}", getuid(), getgid(), 0640);
        fd = openat(dfd, "t.json", O_RDONLY | O_CLOEXEC);
        assert_true(fd >= 0);
        if (fsetxattr(fd, "system.posix_acl_access", acl, sizeof(acl), 0) < 0) {
                close(fd);
                print_message("skipped: the scratch file system takes no POSIX ACL: %s\n", strerror(errno));
                skip();
        }
        assert_int_equal(fstat(fd, &st), 0);
        st.st_uid = 0;
        assert_false(slots_table_verdict(fd, &st, &p, &v));
        assert_int_equal(v.problems, SLOTS_POLICY_MODE | SLOTS_POLICY_ACL);     /* the mask shows as g+w */
        assert_true(v.writable);
        assert_string_equal(v.e.fix, "chmod 0640 T && setfacl -b T");
        close(fd);

        st.st_mode = S_IFREG | 0640;
        assert_false(slots_table_verdict(-1, &st, &p, &v));
        assert_int_equal(v.problems, SLOTS_POLICY_ACL);
        assert_true(v.writable);
        assert_non_null(strstr(v.e.reason, "its ACL cannot be read"));
        assert_string_equal(v.e.fix, "setfacl -b T");
}

static void on_alarm(int sig)
{
        static const char msg[] = "blocked on a FIFO\n";

        (void) sig;
        (void) !__real_write(2, msg, sizeof(msg) - 1);
        _exit(1);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
                TEST(test_store_round_trip),
                TEST(test_store_keeps_owner),
                TEST(test_store_create),
                TEST(test_store_dir_writable),
                TEST(test_store_dir_group_writable),
                TEST(test_store_dir_foreign),
                TEST(test_store_lock_symlink),
                TEST(test_store_table_symlink),
                TEST(test_store_table_fifo),
                TEST(test_store_malformed),
                TEST(test_store_not_text),
                TEST(test_store_save_fault),
                TEST(test_store_index_fault),
                TEST(test_store_bad_path),
                TEST(test_verdict_table),
                TEST(test_verdict_acl),
        };

        signal(SIGALRM, on_alarm);
        return cmocka_run_group_tests(tests, NULL, NULL);
}
