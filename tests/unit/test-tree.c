/*
 * User trees (tree.c) as root in a scratch folder: walks past SLOTS_TREE_OPEN_MAX levels,
 * where the shallow levels are read ahead, closed and opened again through "..".
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
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "config.h"
#include "tree.h"
#include "unit.h"

#define SVC 4300
#define SLOT 4301       /* slot01's uid and gid */
#define OTHER 4302      /* slot02's */
#define STRANGER 4400
#define USER "alice"

static char base[256];          /* the scratch folder; docs_root is base/docs */
static int bfd = -1;

/* ---- the scratch folder and what is made in it ---- */

static int rm_tree(int dfd, const char *name)
{
        int fd = openat(dfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        DIR *d;
        struct dirent *de;

        if (fd < 0)
                return unlinkat(dfd, name, 0);
        d = fdopendir(fd);
        if (!d) {
                close(fd);
                return -1;
        }
        while ((de = readdir(d)))
                if (strcmp(de->d_name, ".") && strcmp(de->d_name, ".."))
                        rm_tree(dirfd(d), de->d_name);
        closedir(d);
        return unlinkat(dfd, name, AT_REMOVEDIR);
}

static int setup(void **state)
{
        const char *tmp = getenv("TMPDIR");

        (void) state;
        snprintf(base, sizeof(base), "%s/test-tree.XXXXXX", tmp && tmp[0] ? tmp : "/tmp");
        if (!mkdtemp(base) || chmod(base, 0755) < 0)
                return -1;
        bfd = open(base, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (bfd < 0 || mkdirat(bfd, "docs", 0755) < 0)
                return -1;
        return 0;
}

static int teardown(void **state)
{
        (void) state;
        close(bfd);
        bfd = -1;
        return rm_tree(AT_FDCWD, base) < 0 ? -1 : 0;
}

#define TEST(f) cmocka_unit_test_setup_teardown(f, setup, teardown)

static struct slots_config *config_with(const char *user_tree)
{
        char text[1024];
        struct slots_config *c = NULL;
        struct slots_error e;

        snprintf(text, sizeof(text), "{\"service\": \"web\", \"slots\": 2, \"docs_root\": \"%s/docs\"%s%s%s}", base,
                 user_tree ? ", \"user_tree\": \"" : "", user_tree ? user_tree : "", user_tree ? "\"" : "");
        slots_error_clear(&e);
        if (slots_config_parse(text, strlen(text), "slots.conf", &c, &e) != 0)
                fail_msg("config: %s: %s\n%s", e.object, e.reason, text);
        return c;
}

enum kind { DIR_, FILE_ };

/* Makes rel (below base) of kind, owner and mode. */
static void mk(const char *rel, enum kind k, uid_t uid, gid_t gid, mode_t mode, const char *target)
{
        int fd;

        (void) target;

        switch (k) {
        case DIR_:
                assert_int_equal(mkdirat(bfd, rel, 0700), 0);
                break;
        case FILE_:
                fd = openat(bfd, rel, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
                assert_true(fd >= 0);
                assert_int_equal(write(fd, "data\n", 5), 5);
                close(fd);
                break;
        }
        assert_int_equal(fchownat(bfd, rel, uid, gid, AT_SYMLINK_NOFOLLOW), 0);
        assert_int_equal(fchmodat(bfd, rel, mode, 0), 0);
}

/* rel is uid:gid mode (mode -1: not compared); counts a failure instead of stopping. */
static int is(const char *rel, uid_t uid, gid_t gid, int mode)
{
        struct stat st;
        int failures = 0;

        if (fstatat(bfd, rel, &st, AT_SYMLINK_NOFOLLOW) < 0) {
                ROW_FAIL("%s: %s", rel, strerror(errno));
                return failures;
        }
        if (st.st_uid != uid || st.st_gid != gid || (mode >= 0 && (st.st_mode & 07777) != (mode_t) mode))
                ROW_FAIL("%s: %u:%u %04o, want %u:%u %04o", rel, (unsigned) st.st_uid, (unsigned) st.st_gid,
                         st.st_mode & 07777, (unsigned) uid, (unsigned) gid, mode < 0 ? 0 : (unsigned) mode);
        return failures;
}

/* What the walks told the admin about. */
static char notes[8192];

static void on_note(void *data, const char *path, const char *why)
{
        size_t n = strlen(notes);

        (void) data;
        snprintf(notes + n, sizeof(notes) - n, "%s: %s\n", path, why);
}

static int prepare(const struct slots_config *c, struct slots_tree_stats *st, struct slots_error *e)
{
        memset(st, 0, sizeof(*st));
        st->note = on_note;
        notes[0] = '\0';
        slots_error_clear(e);
        return slots_tree_prepare(AT_FDCWD, c, USER, SLOT, SVC, SVC, st, e);
}

static int release(const struct slots_config *c, const char *user, struct slots_tree_stats *st,
                   struct slots_error *e)
{
        memset(st, 0, sizeof(*st));
        st->note = on_note;
        notes[0] = '\0';
        slots_error_clear(e);
        return slots_tree_release(AT_FDCWD, c, user, SLOT, SLOT, SVC, SVC, st, e);
}

static bool need_root(void)
{
        if (geteuid() == 0)
                return true;
        print_message("skipped: the walks change owners (needs root)\n");
        return false;
}

/* The user's tree, made as assign leaves it: service:slot01 2770. */
static void user_tree(void)
{
        mk("docs/_users", DIR_, SVC, SVC, 0711, NULL);
        mk("docs/_users/" USER, DIR_, SVC, SLOT, 02770, NULL);
}

#define T "docs/_users/" USER "/"

/* Below SLOTS_TREE_OPEN_MAX, at it, and past it: every level walked, files next to each folder too. */
static void make_deep(const char *top, int depth, uid_t uid, gid_t gid)
{
        char rel[8192];
        size_t n = (size_t) snprintf(rel, sizeof(rel), "%s", top);

        for (int i = 1; i <= depth; i++) {
                /* Files before and after the folder in any readdir order: some are read ahead. */
                for (int k = 0; k < 3; k++) {
                        snprintf(rel + n, sizeof(rel) - n, "/f%d", k);
                        mk(rel, FILE_, uid, gid, 0644, NULL);
                }
                n += (size_t) snprintf(rel + n, sizeof(rel) - n, "/d");
                mk(rel, DIR_, uid, gid, 0755, NULL);
        }
        snprintf(rel + n, sizeof(rel) - n, "/leaf");
        mk(rel, FILE_, uid, gid, 0644, NULL);
}

static int deep_is(const char *top, int depth, uid_t uid, gid_t gid, mode_t dmode, mode_t fmode)
{
        char rel[8192];
        size_t n = (size_t) snprintf(rel, sizeof(rel), "%s", top);
        int failures = 0;

        for (int i = 1; i <= depth && failures < 5; i++) {
                for (int k = 0; k < 3; k++) {
                        snprintf(rel + n, sizeof(rel) - n, "/f%d", k);
                        failures += is(rel, uid, gid, (int) fmode);
                }
                n += (size_t) snprintf(rel + n, sizeof(rel) - n, "/d");
                failures += is(rel, uid, gid, (int) dmode);
        }
        snprintf(rel + n, sizeof(rel) - n, "/leaf");
        failures += is(rel, uid, gid, (int) fmode);
        return failures;
}

/*
 * The slot's attack on the read-ahead: two branches deeper than SLOTS_TREE_OPEN_MAX below one
 * folder.  That folder is closed for the first branch, opened again through "..", and closed
 * again for the second: each entry must still be walked exactly once, and the walk end.
 */
static void test_two_deep_branches(void **state)
{
        const int depth = SLOTS_TREE_OPEN_MAX + 6;
        struct slots_config *c;
        struct slots_tree_stats st;
        struct slots_error e;
        int failures = 0;

        (void) state;
        if (!need_root())
                skip();
        c = config_with(NULL);
        user_tree();
        mk(T "a", DIR_, SLOT, SLOT, 0755, NULL);
        make_deep(T "a", depth, SLOT, SLOT);
        mk(T "b", DIR_, SLOT, SLOT, 0755, NULL);
        make_deep(T "b", depth, SLOT, SLOT);
        for (int i = 0; i < 20; i++) {
                char rel[64];

                /* More entries next to the branches than one read-ahead allocation holds. */
                snprintf(rel, sizeof(rel), T "side%02d", i);
                mk(rel, FILE_, SLOT, SLOT, 0644, NULL);
        }
        assert_int_equal(prepare(c, &st, &e), 0);
        /* The tree, 20 files, and per branch its folder, 4 entries a level and the leaf. */
        if (st.entries != (unsigned long) (1 + 20 + 2 * (1 + 4 * depth + 1)))
                ROW_FAIL("%lu entries walked, want %d", st.entries, 1 + 20 + 2 * (1 + 4 * depth + 1));
        failures += deep_is(T "a", depth, SLOT, SLOT, 02770, 0660);
        failures += deep_is(T "b", depth, SLOT, SLOT, 02770, 0660);
        failures += is(T "side19", SLOT, SLOT, 0660);
        assert_int_equal(release(c, USER, &st, &e), 0);
        failures += deep_is(T "a", depth, SVC, SVC, 02770, 0660);
        failures += deep_is(T "b", depth, SVC, SVC, 02770, 0660);
        slots_config_free(c);
        if (failures)
                fail_msg("%d failures", failures);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
                TEST(test_two_deep_branches),
        };

        /* A walk that never ends (a read-ahead walked again) fails the test instead of hanging it. */
        alarm(600);
        return cmocka_run_group_tests(tests, NULL, NULL);
}
