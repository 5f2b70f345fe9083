/*
 * table-index.c: the index the store writes beside the table on every save, and
 * when a reader may believe it.  A table saved through the store, then one row
 * per thing that can be wrong with its index or with the table since; each row
 * says whether the index is believed and, where it is, that it answers as the
 * table does for every slot.
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
#include <sys/syscall.h>
#include <unistd.h>

#include <cmocka.h>

#include "fstree.h"
#include "store.h"
#include "table-index.h"
#include "unit.h"

#define TEST(f) cmocka_unit_test_setup_teardown(f, fstree_setup, fstree_teardown)
#define POOL 12

/* slot02 and slot11 assigned, slot05 pending, the rest free: saved through the store. */
static void save_table(unsigned pool)
{
        struct slots_store s;
        struct slots_error e;
        char path[512];

        snprintf(path, sizeof(path), "%s/slots.json", base);
        slots_error_clear(&e);
        assert_int_equal(slots_store_open(&s, AT_FDCWD, path, pool, getegid(), SLOTS_STORE_WRITE, &e), 0);
        assert_int_equal(slots_table_assign(s.table, 2, "alice", "2026-10-01T09:12:00Z"), 0);
        assert_int_equal(slots_table_assign(s.table, 11, "bob", "2026-10-01T09:12:00Z"), 0);
        assert_int_equal(slots_table_assign(s.table, 5, "carol", "2026-10-01T09:12:00Z"), 0);
        assert_int_equal(slots_table_mark_pending(s.table, 5, "2026-10-02T09:12:00Z"), 0);
        assert_int_equal(slots_store_save(&s, &e), 0);
        slots_store_close(&s);
}

static enum slots_slot_state want_state(unsigned n)
{
        return n == 2 || n == 11 ? SLOTS_SLOT_ASSIGNED : n == 5 ? SLOTS_SLOT_PENDING : SLOTS_SLOT_FREE;
}

/* ---- what a row does to the index or the table after the save ---- */

static void nothing(void) { }

static void remove_index(void) { assert_int_equal(unlinkat(bfd, "slots.json.index", 0), 0); }

/* The same bytes as a new file renamed over the table, as an editor or a script writes it. */
static void rewrite_table(void)
{
        char buf[4096];
        int in = openat(bfd, "slots.json", O_RDONLY), out = openat(bfd, "new", O_WRONLY | O_CREAT | O_EXCL, 0640);
        ssize_t n = read(in, buf, sizeof(buf));

        assert_true(n > 0);
        assert_int_equal(write(out, buf, (size_t) n), n);
        close(in);
        close(out);
        assert_int_equal(renameat(bfd, "new", bfd, "slots.json"), 0);
}

/*
 * A change of the table in place: a byte of the same length, the file keeps its inode and
 * size; only its change time tells.  The kernel stamps times from a clock that ticks every
 * few ms: the change waits out the save's tick.
 */
static void edit_table_in_place(void)
{
        int fd;
        char buf[4096], *p;
        ssize_t n;

        usleep(20000);
        fd = openat(bfd, "slots.json", O_RDWR);
        n = read(fd, buf, sizeof(buf) - 1);

        assert_true(n > 0);
        buf[n] = '\0';
        p = strstr(buf, "alice");
        assert_non_null(p);
        assert_int_equal(pwrite(fd, "alicf", 5, p - buf), 5);
        close(fd);
}

static void chmod_table(void)
{
        usleep(20000);
        assert_int_equal(fchmodat(bfd, "slots.json", 0600, 0), 0);
}

static void truncate_index(void)
{
        int fd = openat(bfd, "slots.json.index", O_WRONLY);

        assert_int_equal(ftruncate(fd, 100), 0);
        close(fd);
}

/* slot01's byte flipped to "assigned", the size kept: what a torn write could leave. */
static void flip_state(void)
{
        char buf[256];
        int fd = openat(bfd, "slots.json.index", O_RDWR);
        ssize_t n = pread(fd, buf, sizeof(buf), 0);
        char *nl = memchr(buf, '\n', (size_t) n);

        assert_non_null(nl);
        assert_int_equal(pwrite(fd, "a", 1, nl + 1 - buf), 1);
        close(fd);
}

static void index_symlink(void)
{
        assert_int_equal(renameat(bfd, "slots.json.index", bfd, "real.index"), 0);
        assert_int_equal(symlinkat("real.index", bfd, "slots.json.index"), 0);
}

static void index_two_links(void) { assert_int_equal(linkat(bfd, "slots.json.index", bfd, "other", 0), 0); }

static void index_group_writable(void) { assert_int_equal(fchmodat(bfd, "slots.json.index", 0660, 0), 0); }

static void index_other_writable(void) { assert_int_equal(fchmodat(bfd, "slots.json.index", 0642, 0), 0); }

static void index_not_root(void) { assert_int_equal(fchownat(bfd, "slots.json.index", 65534, 0, 0), 0); }

static void index_fifo(void)
{
        remove_index();
        assert_int_equal(mkfifoat(bfd, "slots.json.index", 0640), 0);
}

static void test_trust(void **state)
{
        static const struct {
                const char *what;
                void (*change)(void);
                unsigned pool;          /* the reader's pool (0: POOL) */
                bool root;              /* the row needs root */
                const char *why;        /* NULL: believed */
        } rows[] = {
                { "the index of the table as saved", nothing, 0, false, NULL },
                { "no index", remove_index, 0, false, "missing" },
                { "the table rewritten by another writer", rewrite_table, 0, false, "another table" },
                { "the table edited in place", edit_table_in_place, 0, false, "another table" },
                { "the table's mode changed", chmod_table, 0, false, "another table" },
                { "a reader with another pool", nothing, POOL + 1, false, "size of its pool" },
                { "the index truncated", truncate_index, 0, false, "size" },
                { "a state flipped, the size kept", flip_state, 0, false, "torn" },
                { "the index a symlink to a good index", index_symlink, 0, false, "symlink" },
                { "the index with a second name", index_two_links, 0, false, "more than one link" },
                { "the index writable by its group", index_group_writable, 0, false, "writable" },
                { "the index writable by others", index_other_writable, 0, false, "writable" },
                { "the index owned by another account", index_not_root, 0, true, "not owned by root" },
                { "the index a FIFO", index_fifo, 0, false, "regular" },
        };
        int failures = 0;

        (void) state;
        for (size_t i = 0; i < N_ELEM(rows); i++) {
                unsigned pool = rows[i].pool ? rows[i].pool : POOL;
                const char *why = NULL;
                struct stat st;
                int r = 0;

                if (rows[i].root && !need_root())
                        continue;
                (void) unlinkat(bfd, "slots.json", 0);
                (void) unlinkat(bfd, "slots.json.index", 0);
                (void) unlinkat(bfd, "real.index", 0);
                (void) unlinkat(bfd, "other", 0);
                save_table(POOL);
                rows[i].change();
                assert_int_equal(fstatat(bfd, "slots.json", &st, AT_SYMLINK_NOFOLLOW), 0);
                for (unsigned n = 1; n <= POOL && r == 0; n++) {
                        enum slots_slot_state got = 99;

                        r = slots_tindex_lookup(bfd, "slots.json", &st, pool, n, &got, &why);
                        if (r == 0 && got != want_state(n))
                                ROW_FAIL("%s: slot %u is %d in the index, %d in the table", rows[i].what, n,
                                         got, want_state(n));
                }
                if (!rows[i].why && r != 0)
                        ROW_FAIL("%s: not believed (%d, %s)", rows[i].what, r, why);
                else if (rows[i].why && r != -ESTALE)
                        ROW_FAIL("%s: believed or failed otherwise (%d)", rows[i].what, r);
                else if (rows[i].why && !strstr(why, rows[i].why))
                        ROW_FAIL("%s: reason '%s', want '%s'", rows[i].what, why, rows[i].why);
        }
        assert_int_equal(failures, 0);
}

/* A slot outside the pool the index was made for, or no slot at all, is never answered. */
static void test_outside_pool(void **state)
{
        enum slots_slot_state got;
        const char *why;
        struct stat st;

        (void) state;
        save_table(POOL);
        assert_int_equal(fstatat(bfd, "slots.json", &st, AT_SYMLINK_NOFOLLOW), 0);
        assert_int_equal(slots_tindex_lookup(bfd, "slots.json", &st, POOL, 0, &got, &why), -ESTALE);
        assert_int_equal(slots_tindex_lookup(bfd, "slots.json", &st, POOL, POOL + 1, &got, &why), -ESTALE);
        assert_int_equal(slots_tindex_lookup(bfd, "slots.json", &st, POOL, POOL, &got, &why), 0);
        assert_int_equal(got, SLOTS_SLOT_FREE);
}

/* The index has the table's group and no write bit but root's, whatever the table's mode. */
static void test_written_mode(void **state)
{
        struct stat st;

        (void) state;
        save_table(POOL);
        assert_int_equal(fstatat(bfd, "slots.json.index", &st, AT_SYMLINK_NOFOLLOW), 0);
        assert_int_equal(st.st_mode & 07777, 0640);
        assert_int_equal(st.st_gid, getegid());
        /* A second save replaces it: still one name, still the same policy. */
        assert_int_equal(fchmodat(bfd, "slots.json.index", 0666, 0), 0);
        (void) unlinkat(bfd, "slots.json", 0);
        save_table(POOL);
        assert_int_equal(fstatat(bfd, "slots.json.index", &st, AT_SYMLINK_NOFOLLOW), 0);
        assert_int_equal(st.st_mode & 07777, 0640);
        assert_int_equal(st.st_nlink, 1);
}

/* The session's way in: the folder without a symlink, the table a regular file, then the index. */
static void test_ask(void **state)
{
        struct slots_tindex_answer a;
        char path[1024], link[300];

        (void) state;
        save_table(POOL);
        snprintf(path, sizeof(path), "%s/slots.json", base);
        assert_int_equal(slots_tindex_ask(path, POOL, 2, &a), 0);
        assert_true(a.table_fd >= 0);
        close(a.table_fd);
        assert_int_equal(a.state, SLOTS_SLOT_ASSIGNED);
        assert_int_equal(slots_tindex_ask(path, POOL, 3, &a), 0);
        close(a.table_fd);
        assert_int_equal(a.state, SLOTS_SLOT_FREE);
        /*
         * A symlink on the way to the folder: the caller's full read decides.  Without
         * openat2 (valgrind 3.19 answers ENOSYS) the folder is opened by the resolver, as
         * the full read opens it, which follows a symlink root owns: then the index answers
         * for the table the full read would read.
         */
        snprintf(link, sizeof(link), "%s-link", base);
        (void) unlink(link);
        assert_int_equal(symlink(base, link), 0);
        snprintf(path, sizeof(path), "%s/slots.json", link);
        if (syscall(SYS_openat2, -1, "", NULL, 0) < 0 && errno == ENOSYS) {
                print_message("# no openat2 here: the symlink case is the resolver's\n");
                assert_int_equal(slots_tindex_ask(path, POOL, 2, &a), 0);
                assert_int_equal(a.state, SLOTS_SLOT_ASSIGNED);
                close(a.table_fd);
        } else {
                assert_int_equal(slots_tindex_ask(path, POOL, 2, &a), -ESTALE);
                assert_int_equal(a.table_fd, -1);
                assert_non_null(strstr(a.why, "symlink"));
        }
        assert_int_equal(unlink(link), 0);
        /* The table a FIFO: never opened for reading as a table. */
        assert_int_equal(unlinkat(bfd, "slots.json", 0), 0);
        assert_int_equal(mkfifoat(bfd, "slots.json", 0640), 0);
        snprintf(path, sizeof(path), "%s/slots.json", base);
        assert_int_equal(slots_tindex_ask(path, POOL, 2, &a), -ESTALE);
        assert_int_equal(a.table_fd, -1);
        assert_non_null(strstr(a.why, "regular"));
        /* No table at all. */
        assert_int_equal(unlinkat(bfd, "slots.json", 0), 0);
        assert_int_equal(slots_tindex_ask(path, POOL, 2, &a), -ESTALE);
        assert_int_equal(a.table_fd, -1);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
                TEST(test_trust),
                TEST(test_outside_pool),
                TEST(test_written_mode),
                TEST(test_ask),
        };

        if (geteuid() != 0) {
                printf("1..0 # SKIP needs root: the store writes a new table and its index root's, and a "
                       "reader believes no index that is not\n");
                return 77;
        }
        fstree_init();
        return cmocka_run_group_tests(tests, NULL, NULL);
}
