/*
 * The one directory walker (walk.c) as a table of trees: depths 1, 70 and 5,000, a symlink, a
 * FIFO, an unreadable folder (walked as an unprivileged account), a folder renamed away while
 * its parent was closed, the bound on open fds, and the post-order walk that removes a tree.
 */
#include <dirent.h>
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
#include <grp.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "fstree.h"
#include "unit.h"
#include "walk.h"

/* What a walk showed its visitor. */
struct seen {
        unsigned dirs, files, links, fifos, leaves;
        unsigned max_depth;
        unsigned max_fds;               /* open fds at any visit, above those before the walk */
        bool count_fds;
        bool order_ok;                  /* every LEAVE came after its folder's entries */
        bool followed;                  /* something below a symlink was shown */
        bool unlink;                    /* remove each entry (files at ENTRY, folders at LEAVE) */
        int unlink_failed;
        const char *rename_at;          /* at ENTRY of this name, rename_from goes to rename_to (bfd) */
        const char *rename_from, *rename_to;
};

static unsigned fds_before;

static unsigned open_fds(void)
{
        DIR *d = opendir("/proc/self/fd");
        struct dirent *de;
        unsigned n = 0;

        if (!d)
                return 0;
        while ((de = readdir(d)))
                if (de->d_name[0] != '.')
                        n++;
        closedir(d);
        /* The listing's own fd is not the walk's. */
        return n - 1;
}

static int visit(void *data, enum slots_walk_event ev, const struct slots_walk_entry *en, struct slots_error *e)
{
        struct seen *s = data;

        (void) e;
        if (s->count_fds) {
                unsigned n = open_fds() - fds_before;

                if (n > s->max_fds)
                        s->max_fds = n;
        }
        if (en->depth > s->max_depth)
                s->max_depth = en->depth;
        if (strstr(en->path, "/lnk/"))
                s->followed = true;
        if (ev == SLOTS_WALK_LEAVE) {
                s->leaves++;
                if (s->unlink && en->parent_fd >= 0 && unlinkat(en->parent_fd, en->name, AT_REMOVEDIR) < 0)
                        s->unlink_failed = -errno;
                return 0;
        }
        if (ev == SLOTS_WALK_ENTER) {
                if (en->fd < 0)
                        s->order_ok = false;
                s->dirs++;
                return 0;
        }
        if (S_ISLNK(en->sx->stx_mode))
                s->links++;
        else if (S_ISFIFO(en->sx->stx_mode))
                s->fifos++;
        else
                s->files++;
        if (s->rename_at && strcmp(en->name, s->rename_at) == 0 && renameat(bfd, s->rename_from, bfd, s->rename_to) < 0)
                s->unlink_failed = -errno;
        if (s->unlink && unlinkat(en->parent_fd, en->name, 0) < 0)
                s->unlink_failed = -errno;
        return 0;
}

/* depth nested folders "d" below rel, a file "f" in each. */
static void build_deep(const char *rel, unsigned depth)
{
        int fd = openat(bfd, rel, O_RDONLY | O_DIRECTORY | O_CLOEXEC);

        assert_true(fd >= 0);
        for (unsigned i = 0; i < depth; i++) {
                int next;

                assert_int_equal(mkdirat(fd, "d", 0755), 0);
                next = openat(fd, "d", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
                assert_true(next >= 0);
                close(fd);
                fd = next;
                close(openat(fd, "f", O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644));
        }
        close(fd);
}

static int walk_rel(const char *rel, unsigned flags, unsigned open_max, struct seen *s, struct slots_error *e)
{
        struct slots_walk how = { .flags = flags, .open_max = open_max, .path = rel, .visit = visit, .data = s };
        int fd = openat(bfd, rel, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        int r;

        assert_true(fd >= 0);
        slots_error_clear(e);
        fds_before = open_fds();
        r = slots_walk(fd, &how, e);
        close(fd);
        return r;
}

/* Depths below, at and far past the fd bound: every level seen, at most open_max folders open. */
static void test_depths(void **state)
{
        static const struct {
                unsigned depth, open_max;
        } rows[] = {
                { 1, 0 }, { 70, 0 }, { 70, 8 }, { 5000, 0 }, { 5000, 1 },
        };
        int failures = 0;

        (void) state;
        for (size_t i = 0; i < N_ELEM(rows); i++) {
                struct seen s = { .count_fds = rows[i].depth <= 100 || rows[i].open_max == 1, .order_ok = true };
                unsigned bound = rows[i].open_max ? rows[i].open_max : SLOTS_WALK_OPEN_MAX;
                struct slots_error e;
                char rel[32];
                int r;

                snprintf(rel, sizeof(rel), "t%zu", i);
                assert_int_equal(mkdirat(bfd, rel, 0755), 0);
                build_deep(rel, rows[i].depth);
                r = walk_rel(rel, 0, rows[i].open_max, &s, &e);
                if (r != 0 || s.dirs != rows[i].depth + 1 || s.files != rows[i].depth || s.max_depth != rows[i].depth + 1)
                        ROW_FAIL("depth %u: r %d (%s), %u folders, %u files, depth %u", rows[i].depth, r, e.reason,
                                 s.dirs, s.files, s.max_depth);
                /* The walk's folders, and the fd the visitor was handed at ENTER (closed by the walk). */
                if (s.count_fds && s.max_fds > bound + 1)
                        ROW_FAIL("depth %u: %u fds open, bound %u", rows[i].depth, s.max_fds, bound);
                /* The unlink walk: files at ENTRY, folders at LEAVE through their parent's fd. */
                s = (struct seen) { .unlink = true, .order_ok = true };
                r = walk_rel(rel, SLOTS_WALK_POST, rows[i].open_max, &s, &e);
                if (r != 0 || s.unlink_failed || s.leaves != rows[i].depth + 1 || entries_in(rel) != 0)
                        ROW_FAIL("unlink depth %u: r %d (%s), unlink %d, %u left, %d entries remain", rows[i].depth,
                                 r, e.reason, s.unlink_failed, s.leaves, entries_in(rel));
        }
        assert_int_equal(failures, 0);
}

/* A symlink and a FIFO are shown, never followed or opened (a FIFO would block an open). */
static void test_kinds(void **state)
{
        struct seen s = { .order_ok = true };
        struct slots_error e;

        (void) state;
        mk("k", DIR_, getuid(), getgid(), 0755, NULL);
        mk("k/sub", DIR_, getuid(), getgid(), 0755, NULL);
        mk("k/sub/f", FILE_, getuid(), getgid(), 0644, NULL);
        mk("k/lnk", LINK_, getuid(), getgid(), 0, "sub");
        mk("k/fifo", FIFO_, getuid(), getgid(), 0644, NULL);
        assert_int_equal(walk_rel("k", 0, 0, &s, &e), 0);
        assert_int_equal(s.links, 1);
        assert_int_equal(s.fifos, 1);
        assert_int_equal(s.files, 1);
        assert_int_equal(s.dirs, 2);
        assert_false(s.followed);
}

/* A folder the walker cannot open fails the walk, named; the rest is still walked. */
static void test_unreadable(void **state)
{
        pid_t pid;
        int status;

        (void) state;
        /* Before the tree: making it root's is a chown too. */
        if (geteuid() != 0) {
                print_message("skipped: the unreadable folder is root's, walked as nobody (needs root)\n");
                skip();
        }
        mk("u", DIR_, 0, 0, 0755, NULL);
        mk("u/a", DIR_, 0, 0, 0755, NULL);
        mk("u/a/f", FILE_, 0, 0, 0644, NULL);
        mk("u/closed", DIR_, 0, 0, 0700, NULL);
        mk("u/closed/secret", FILE_, 0, 0, 0600, NULL);
        mk("u/z", FILE_, 0, 0, 0644, NULL);
        pid = fork();
        assert_true(pid >= 0);
        if (pid == 0) {
                struct seen s = { .order_ok = true };
                struct slots_error e;
                int r;

                if (setgroups(0, NULL) < 0 || setresgid(65534, 65534, 65534) < 0 || setresuid(65534, 65534, 65534) < 0)
                        _exit(77);
                r = walk_rel("u", 0, 0, &s, &e);
                if (r != -EACCES || !strstr(e.object, "u/closed") || s.files != 2) {
                        fprintf(stderr, "r %d, object %s, %u files\n", r, e.object, s.files);
                        _exit(1);
                }
                _exit(0);
        }
        assert_int_equal(waitpid(pid, &status, 0), pid);
        if (WIFEXITED(status) && WEXITSTATUS(status) == 77) {
                print_message("skipped: cannot become nobody (65534)\n");
                skip();
        }
        assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}

/*
 * A folder moved to another parent while the level above it was closed: the
 * walk cannot find what was left of that level and fails (never a pass).
 */
static void test_moved_while_closed(void **state)
{
        static const struct {
                unsigned open_max;
                int r;
        } rows[] = {
                { 1, -ESTALE },         /* b was closed: c/.. is not b any more */
                { 0, 0 },               /* every level open: the walk reads on through its fds */
        };
        int failures = 0;

        (void) state;
        for (size_t i = 0; i < N_ELEM(rows); i++) {
                struct seen s = { .order_ok = true, .rename_at = "x", .rename_from = "m/a/b/c", .rename_to = "m/moved" };
                struct slots_error e;
                int r;

                mk_way("m/a/b/c/x");
                mk("m/a/b/c/x", FILE_, getuid(), getgid(), 0644, NULL);
                mk("m/a/b/y", FILE_, getuid(), getgid(), 0644, NULL);
                r = walk_rel("m", 0, rows[i].open_max, &s, &e);
                if (r != rows[i].r || s.unlink_failed)
                        ROW_FAIL("open_max %u: r %d (%s: %s), rename %d", rows[i].open_max, r, e.object, e.reason,
                                 s.unlink_failed);
                if (rows[i].r < 0 && !strstr(e.reason, "moved"))
                        ROW_FAIL("open_max %u: reason %s", rows[i].open_max, e.reason);
                assert_int_equal(rm_tree(bfd, "m"), 0);
        }
        assert_int_equal(failures, 0);
}

/* A visitor's failure fails the walk, which still shows every other entry; SKIP leaves a folder unread. */
static int visit_refuse(void *data, enum slots_walk_event ev, const struct slots_walk_entry *en, struct slots_error *e)
{
        unsigned *n = data;

        (*n)++;
        if (ev == SLOTS_WALK_ENTER && en->name && strcmp(en->name, "skip") == 0)
                return SLOTS_WALK_SKIP;
        if (ev == SLOTS_WALK_ENTRY && strcmp(en->name, "bad") == 0)
                return slots_error_refuse(e, -EPERM, en->path, "refused");
        return 0;
}

static void test_visitor_result(void **state)
{
        unsigned n = 0;
        struct slots_walk how = { .path = "v", .visit = visit_refuse, .data = &n };
        struct slots_error e;
        int fd, r;

        (void) state;
        mk("v", DIR_, getuid(), getgid(), 0755, NULL);
        mk("v/bad", FILE_, getuid(), getgid(), 0644, NULL);
        mk("v/good", FILE_, getuid(), getgid(), 0644, NULL);
        mk("v/skip", DIR_, getuid(), getgid(), 0755, NULL);
        mk("v/skip/hidden", FILE_, getuid(), getgid(), 0644, NULL);
        fd = openat(bfd, "v", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        assert_true(fd >= 0);
        slots_error_clear(&e);
        r = slots_walk(fd, &how, &e);
        close(fd);
        assert_int_equal(r, -EPERM);
        assert_int_equal(e.kind, SLOTS_ERR_REFUSED);
        assert_string_equal(e.object, "v/bad");
        /* the root, bad, good, skip; never skip/hidden */
        assert_int_equal(n, 4);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
                cmocka_unit_test_setup_teardown(test_depths, fstree_setup, fstree_teardown),
                cmocka_unit_test_setup_teardown(test_kinds, fstree_setup, fstree_teardown),
                cmocka_unit_test_setup_teardown(test_unreadable, fstree_setup, fstree_teardown),
                cmocka_unit_test_setup_teardown(test_moved_while_closed, fstree_setup, fstree_teardown),
                cmocka_unit_test_setup_teardown(test_visitor_result, fstree_setup, fstree_teardown),
        };

        alarm(600);
        fstree_init();
        return cmocka_run_group_tests(tests, NULL, NULL);
}
