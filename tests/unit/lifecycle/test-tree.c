/*
 * User trees (tree.c) as root in a scratch folder, with every kind of object and odd shape a
 * slot can leave in its tree: files with set-id bits, FIFOs, sockets, devices, symlinks, hard
 * links, names with escapes, ACLs naming the slot, trees deeper than SLOTS_TREE_OPEN_MAX
 * levels, mounts; user_tree patterns of every shape for a pending slot; the refusals.  And
 * the races a slot can run during a walk, each at its exact window through link-time wraps
 * (-Wl,--wrap=statx,--wrap=fchown,--wrap=acl_set_fd): a folder replaced by a file, a symlink or
 * another folder between the look and the open; an entry that keeps changing; a hard link made
 * between the look and the change, or between the change and the check after it; a symlink
 * swapped in before the open; a folder moved away while its parent was closed.
 */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/acl.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cmocka.h>

#include "config.h"
#include "fstree.h"
#include "tree.h"
#include "unit.h"
#include "unit-text.h"

#define SVC 4300
#define SLOT 4301       /* slot01's uid and gid */
#define OTHER 4302      /* slot02's */
#define STRANGER 4400
#define USER "alice"

/* ---- the races: a hook run inside the window, once per armed count ---- */

static const char *hook_name;   /* the entry whose statx fires the hook */
static ino_t hook_ino;          /* the inode whose fchown or acl_set_fd fires it */
static int hook_left;           /* how many more times it fires */
static void (*hook_after_statx)(int dfd, const char *name);
static void (*hook_after_fchown)(int fd);
static void (*hook_after_acl_set)(int fd);

static void hooks_off(void)
{
        hook_name = NULL;
        hook_ino = 0;
        hook_left = 0;
        hook_after_statx = NULL;
        hook_after_fchown = NULL;
        hook_after_acl_set = NULL;
}

static bool fires(const char *name)
{
        if (!hook_name || !name || strcmp(name, hook_name) != 0 || hook_left <= 0)
                return false;
        hook_left--;
        return true;
}

int __real_statx(int fd, const char *name, int flags, unsigned mask, struct statx *sx);
int __wrap_statx(int fd, const char *name, int flags, unsigned mask, struct statx *sx);
int __real_fchown(int fd, uid_t uid, gid_t gid);
int __wrap_fchown(int fd, uid_t uid, gid_t gid);
int __real_acl_set_fd(int fd, acl_t acl);
int __wrap_acl_set_fd(int fd, acl_t acl);

int __wrap_statx(int fd, const char *name, int flags, unsigned mask, struct statx *sx)
{
        int r = __real_statx(fd, name, flags, mask, sx), saved = errno;

        if (hook_after_statx && fires(name))
                hook_after_statx(fd, name);
        errno = saved;
        return r;
}

int __wrap_fchown(int fd, uid_t uid, gid_t gid)
{
        int r = __real_fchown(fd, uid, gid), saved = errno;
        struct stat st;

        if (r == 0 && hook_after_fchown && hook_left > 0 && fstat(fd, &st) == 0 && st.st_ino == hook_ino) {
                hook_left--;
                hook_after_fchown(fd);
        }
        errno = saved;
        return r;
}

int __wrap_acl_set_fd(int fd, acl_t acl)
{
        int r = __real_acl_set_fd(fd, acl), saved = errno;
        struct stat st;

        if (r == 0 && hook_after_acl_set && hook_left > 0 && fstat(fd, &st) == 0 && st.st_ino == hook_ino) {
                hook_left--;
                hook_after_acl_set(fd);
        }
        errno = saved;
        return r;
}

/* ---- the scratch folder and what is made in it ---- */

static int setup(void **state)
{
        hooks_off();
        if (fstree_setup(state) < 0)
                return -1;
        return mkdirat(bfd, "docs", 0755);
}

static int teardown(void **state)
{
        static const char *const mounts[] = { "docs/_users/" USER "/mnt", "docs/_users/" USER "/bind", "empty/mnt" };

        hooks_off();
        /* Whatever a case left mounted (a failed assertion) goes before the files. */
        fstree_umount(mounts, N_ELEM(mounts));
        return fstree_teardown(state);
}

#define TEST(f) cmocka_unit_test_setup_teardown(f, setup, teardown)

static struct slots_config *config_with(const char *user_tree)
{
        char text[1024];

        snprintf(text, sizeof(text), "{\"service\": \"web\", \"slots\": 2, \"docs_root\": \"%s/docs\"%s%s%s}", base,
                 user_tree ? ", \"user_tree\": \"" : "", user_tree ? user_tree : "", user_tree ? "\"" : "");
        return unit_config(text);
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
        return slots_tree_prepare(AT_FDCWD, c, USER, SLOT, SLOT, SVC, SVC, st, e);
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

/* A user's tree granted by group (service:slot01 2770): assign replaces that grant, release closes it. */
static void user_tree(void)
{
        mk("docs/_users", DIR_, SVC, SVC, 0711, NULL);
        mk("docs/_users/" USER, DIR_, SVC, SLOT, 02770, NULL);
}

#define T "docs/_users/" USER "/"
#define GONE (-2)

/* The next row of a table starts from an empty docs_root. */
static void reset_docs(void)
{
        assert_int_equal(rm_tree(bfd, "docs"), 0);
        assert_int_equal(mkdirat(bfd, "docs", 0755), 0);
}

/* ---- every kind of object, as a table: what is in the tree, what a walk makes of it ---- */

struct obj {
        const char *name;               /* in the user's tree */
        enum kind kind;
        uid_t uid;
        gid_t gid;
        mode_t mode;
        const char *second;             /* a second name (a hard link) below base, or NULL */
        uid_t want_uid;
        gid_t want_gid;
        int want_mode;                  /* -1: not compared (symlinks, sockets); GONE: the name is removed */
};

/* Makes each object in the user's tree; symlinks point at base/outside. */
static void make_objs(const struct obj *o, size_t n)
{
        char outside[300], rel[300];

        snprintf(outside, sizeof(outside), "%s/outside", base);
        mk("outside", FILE_, 0, 0, 0600, NULL);
        user_tree();
        for (size_t i = 0; i < n; i++) {
                snprintf(rel, sizeof(rel), T "%s", o[i].name);
                mk(rel, o[i].kind, o[i].uid, o[i].gid, o[i].mode, outside);
                if (o[i].second)
                        assert_int_equal(linkat(bfd, rel, bfd, o[i].second, 0), 0);
        }
}

/* The failures: each object as it should be, and what a symlink points at untouched. */
static int objs_are(const struct obj *o, size_t n)
{
        char rel[300];
        int failures = 0;

        for (size_t i = 0; i < n; i++) {
                snprintf(rel, sizeof(rel), T "%s", o[i].name);
                if (o[i].want_mode == GONE) {
                        if (faccessat(bfd, rel, F_OK, AT_SYMLINK_NOFOLLOW) == 0)
                                ROW_FAIL("%s is still there", rel);
                        continue;
                }
                failures += is(rel, o[i].want_uid, o[i].want_gid, o[i].want_mode);
        }
        return failures + is("outside", 0, 0, 0600);
}

/* assign grants the slot by uid: another account's entry is the service's first, group and others get nothing. */
static const struct obj prepare_objs[] = {
        { "plain", FILE_, STRANGER, STRANGER, 0644, NULL, SVC, SVC, 0660 },
        /* Set-id bits go; the slot gets x where the owner had it. */
        { "setid", FILE_, STRANGER, STRANGER, 06755, NULL, SVC, SVC, 0770 },
        { "sticky-dir", DIR_, STRANGER, STRANGER, 01777, NULL, SVC, SVC, 0770 },
        { "fifo", FIFO_, STRANGER, STRANGER, 0644, NULL, SVC, SVC, 0660 },
        { "esc\033[31m\nname", FILE_, STRANGER, STRANGER, 0604, NULL, SVC, SVC, 0660 },
        /* The old grant to the slot's group: the group loses it for the uid's entry. */
        { "by-group", FILE_, STRANGER, SLOT, 0660, NULL, SVC, SVC, 0660 },
        /* Sockets and symlinks change owner only, never followed; a device node is left alone. */
        { "sock", SOCK_, STRANGER, STRANGER, 0777, NULL, SVC, SVC, -1 },
        { "dev", DEV_, STRANGER, STRANGER, 0666, NULL, STRANGER, STRANGER, 0666 },
        { "link", LINK_, STRANGER, STRANGER, 0, NULL, SVC, SVC, -1 },
        /* Another account's file with a second name elsewhere: a copy of the service's, granted; */
        { "linked", FILE_, STRANGER, STRANGER, 0644, "outside-link", SVC, SVC, 0660 },
        /* its FIFO or socket (no content): the name here goes. */
        { "linked-fifo", FIFO_, STRANGER, STRANGER, 0644, "outside-fifo", 0, 0, GONE },
        { "linked-sock", SOCK_, STRANGER, STRANGER, 0755, "outside-sock", 0, 0, GONE },
        /* The slot's own set-id file with a second name: its bits go all the same (that only narrows). */
        { "linked-setid", FILE_, SLOT, SLOT, 06755, "outside-setid", SLOT, SLOT, 0755 },
        /* Named entries of other accounts (set below) go: only the slot is granted (x: a group had it). */
        { "acl-others", FILE_, STRANGER, STRANGER, 0664, NULL, SVC, SVC, 0670 },
};

/* The ACL each granted entry has afterwards (numeric ids; SLOT is 4301). */
static const struct {
        const char *name;
        acl_type_t type;
        const char *want;
} prepare_acls[] = {
        { "plain", ACL_TYPE_ACCESS, "user::rw-,user:4301:rw-,group::---,mask::rw-,other::---" },
        { "setid", ACL_TYPE_ACCESS, "user::rwx,user:4301:rwx,group::---,mask::rwx,other::---" },
        { "sticky-dir", ACL_TYPE_ACCESS, "user::rwx,user:4301:rwx,group::---,mask::rwx,other::---" },
        { "sticky-dir", ACL_TYPE_DEFAULT, "user::rwx,user:4301:rwx,group::---,mask::rwx,other::---" },
        { "by-group", ACL_TYPE_ACCESS, "user::rw-,user:4301:rw-,group::---,mask::rw-,other::---" },
        { "acl-others", ACL_TYPE_ACCESS, "user::rw-,user:4301:rwx,group::---,mask::rwx,other::---" },
};

static void test_prepare_kinds(void **state)
{
        struct slots_config *c;
        struct slots_tree_stats st;
        struct slots_error e;
        struct stat dev_before;
        int failures;

        (void) state;
        if (!need_root())
                skip();
        c = config_with(NULL);
        make_objs(prepare_objs, N_ELEM(prepare_objs));
        set_acl(T "acl-others", "u::rw-,u:4400:rwx,g::r--,g:4402:rwx,m::rwx,o::r--", ACL_TYPE_ACCESS);
        dev_before = st_of(T "dev");
        assert_int_equal(prepare(c, &st, &e), 0);
        failures = objs_are(prepare_objs, N_ELEM(prepare_objs));
        for (size_t i = 0; i < N_ELEM(prepare_acls); i++) {
                char rel[300];

                snprintf(rel, sizeof(rel), T "%s", prepare_acls[i].name);
                failures += acl_is(rel, prepare_acls[i].type, prepare_acls[i].want);
        }
        if (st_of(T "dev").st_rdev != dev_before.st_rdev)
                ROW_FAIL("the device node changed");
        if (st.linked != 4 || !strstr(notes, "/linked: has 2 hard links and is uid 4400's") ||
            !strstr(notes, "/linked-fifo: has 2 hard links and is uid 4400's") ||
            !strstr(notes, "/linked-sock: has 2 hard links and is uid 4400's") ||
            !strstr(notes, "/linked-setid: has 2 hard links: left alone"))
                ROW_FAIL("linked %lu, notes:\n%s", st.linked, notes);
        /* Changed: the tree, plain, setid, sticky-dir, fifo, the escaped name, by-group, sock, link, the copy of linked, linked-setid,
         * acl-others. */
        if (st.entries != 15 || st.changed != 12 || st.skipped != 1)
                ROW_FAIL("entries %lu changed %lu skipped %lu, want 15 12 1", st.entries, st.changed, st.skipped);
        /* A second assign finds everything right. */
        memset(&st, 0, sizeof(st));
        assert_int_equal(prepare(c, &st, &e), 0);
        if (st.changed != 0)
                ROW_FAIL("the second assign changed %lu entries", st.changed);
        slots_config_free(c);
        if (failures)
                fail_msg("%d failures", failures);
}

/* A tree that does not exist yet: made service:service 0700 with the slot's ACL entry below a _users made service 0711. */
static void test_prepare_creates(void **state)
{
        struct slots_config *c;
        struct slots_tree_stats st;
        struct slots_error e;
        int failures = 0;

        (void) state;
        if (!need_root())
                skip();
        c = config_with("work/{user}/files");
        assert_int_equal(prepare(c, &st, &e), 0);
        failures += is("docs/work", SVC, SVC, 0711);
        failures += is("docs/work/" USER, SVC, SVC, 0711);
        failures += is("docs/work/" USER "/files", SVC, SVC, 0770);
        failures += acl_is("docs/work/" USER "/files", ACL_TYPE_ACCESS,
                           "user::rwx,user:4301:rwx,group::---,mask::rwx,other::---");
        /* A run killed after mkdir left root's folder of mode 0: the next run finishes it. */
        assert_int_equal(mkdirat(bfd, "docs/work/bob", 0), 0);
        memset(&st, 0, sizeof(st));
        assert_int_equal(slots_tree_prepare(AT_FDCWD, c, "bob", OTHER, OTHER, SVC, SVC, &st, &e), 0);
        failures += is("docs/work/bob", SVC, SVC, 0711);
        failures += is("docs/work/bob/files", SVC, SVC, 0770);
        slots_config_free(c);
        if (failures)
                fail_msg("%d failures", failures);
}

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

static void test_deep(void **state)
{
        static const int depths[] = { SLOTS_TREE_OPEN_MAX - 1, SLOTS_TREE_OPEN_MAX, SLOTS_TREE_OPEN_MAX + 1,
                                      SLOTS_TREE_OPEN_MAX * 2 + 5 };
        int failures = 0;

        (void) state;
        if (!need_root())
                skip();
        for (size_t i = 0; i < N_ELEM(depths); i++) {
                struct slots_config *c = config_with(NULL);
                struct slots_tree_stats st;
                struct slots_error e;
                int r;

                /* One deep branch in the tree at a time. */
                user_tree();
                mk(T "deep", DIR_, SLOT, SLOT, 0755, NULL);
                make_deep(T "deep", depths[i], SLOT, SLOT);
                r = prepare(c, &st, &e);
                if (r != 0)
                        ROW_FAIL("depth %d: prepare %d: %s: %s", depths[i], r, e.object, e.reason);
                if (st.entries != (unsigned long) (2 + 4 * depths[i] + 1))
                        ROW_FAIL("depth %d: %lu entries walked, want %d", depths[i], st.entries, 2 + 4 * depths[i] + 1);
                failures += deep_is(T "deep", depths[i], SLOT, SLOT, 0770, 0660);
                /* Release gives it all to the service, at every depth. */
                r = release(c, USER, &st, &e);
                if (r != 0)
                        ROW_FAIL("depth %d: release %d: %s: %s", depths[i], r, e.object, e.reason);
                failures += deep_is(T "deep", depths[i], SVC, SVC, 0700, 0600);
                slots_config_free(c);
                reset_docs();
        }
        if (failures)
                fail_msg("%d failures", failures);
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
        failures += deep_is(T "a", depth, SLOT, SLOT, 0770, 0660);
        failures += deep_is(T "b", depth, SLOT, SLOT, 0770, 0660);
        failures += is(T "side19", SLOT, SLOT, 0660);
        assert_int_equal(release(c, USER, &st, &e), 0);
        failures += deep_is(T "a", depth, SVC, SVC, 0700, 0600);
        failures += deep_is(T "b", depth, SVC, SVC, 0700, 0600);
        slots_config_free(c);
        if (failures)
                fail_msg("%d failures", failures);
}

/* ---- release: what the slot leaves, and ACLs naming it ---- */

/*
 * The user's own tree goes to the service, whoever made each entry, with its owner's bits only:
 * no group keeps access.  A file of any account but the service's with a second name is replaced
 * by a copy (a chown cannot take it back from the other name); a FIFO's name goes.
 */
static const struct obj release_objs[] = {
        { "mine", FILE_, SLOT, SLOT, 06777, NULL, SVC, SVC, 0700 },
        { "dir", DIR_, SLOT, SLOT, 0777, NULL, SVC, SVC, 0700 },
        { "dir/theirs", FILE_, STRANGER, SLOT, 0664, NULL, SVC, SVC, 0600 },
        { "fifo", FIFO_, SLOT, SLOT, 0666, NULL, SVC, SVC, 0600 },
        /* Symlinks and special files change owner only; never followed; a stranger's device stays. */
        { "sock", SOCK_, SLOT, SLOT, 0777, NULL, SVC, SVC, -1 },
        { "dev", DEV_, SLOT, SLOT, 0666, NULL, SVC, SVC, 0666 },
        { "strangers-dev", DEV_, STRANGER, STRANGER, 0666, NULL, STRANGER, STRANGER, 0666 },
        { "link", LINK_, SLOT, SLOT, 0, NULL, SVC, SVC, -1 },
        { "slot-group-link", LINK_, STRANGER, SLOT, 0, NULL, SVC, SVC, -1 },
        { "strangers-link", LINK_, STRANGER, STRANGER, 0, NULL, SVC, SVC, -1 },
        { "linked", FILE_, SLOT, SLOT, 0666, "outside-link", SVC, SVC, 0600 },
        { "linked-setid", FILE_, SLOT, SLOT, 06755, "outside-setid", SVC, SVC, 0700 },
        { "linked-setgid-group", FILE_, STRANGER, SLOT, 02755, "outside-setgid", SVC, SVC, 0700 },
        { "linked-fifo", FIFO_, STRANGER, STRANGER, 0644, "outside-fifo", 0, 0, GONE },
        { "svc-linked", FILE_, SVC, SVC, 0640, "outside-svc", SVC, SVC, 0640 },
        /* Files with ACLs (set below): owner and group go to the service like any other. */
        { "acl-file", FILE_, STRANGER, STRANGER, 0640, NULL, SVC, SVC, -1 },
        { "acl-dir", DIR_, STRANGER, STRANGER, 0750, NULL, SVC, SVC, -1 },
        { "acl-dir-default-only", DIR_, STRANGER, STRANGER, 0750, NULL, SVC, SVC, -1 },
        { "acl-strangers", FILE_, STRANGER, STRANGER, 0640, NULL, SVC, SVC, -1 },
        { "acl-linked", FILE_, STRANGER, STRANGER, 0640, "outside-acl", SVC, SVC, 0600 },
        { "acl-outsider-group", DIR_, STRANGER, STRANGER, 0750, NULL, SVC, SVC, -1 },
};

/*
 * ACLs: the user's tree is given back with no ACL, every named entry gone with it
 * (the slot's, a stranger's, an outsider group's: nothing for a later chmod g+rx
 * to bring back), the default ACL too; the mode's owner bits say it all.  A linked
 * file only narrows: the slot's entry goes, the others and the mask stay.
 */
static const struct {
        const char *name;
        acl_type_t type;
        const char *before, *after;
} release_acls[] = {
        { "acl-file", ACL_TYPE_ACCESS, "u::rw-,u:4301:rwx,u:4400:r--,g::r--,g:4301:rw-,m::rwx,o::---",
          "user::rw-,group::---,other::---" },
        { "acl-dir", ACL_TYPE_ACCESS, "u::rwx,u:4301:rwx,g::r-x,m::rwx,o::---", "user::rwx,group::---,other::---" },
        { "acl-dir", ACL_TYPE_DEFAULT, "u::rwx,u:4301:rwx,g::r-x,g:4301:r-x,g:4402:r-x,m::rwx,o::---", "" },
        { "acl-dir-default-only", ACL_TYPE_DEFAULT, "u::rwx,u:4301:rwx,g::r-x,m::rwx,o::---", "" },
        { "acl-strangers", ACL_TYPE_ACCESS, "u::rw-,u:4400:r--,g::r--,m::r--,o::---",
          "user::rw-,group::---,other::---" },
        { "acl-outsider-group", ACL_TYPE_ACCESS, "u::rwx,u:4301:rwx,g::---,g:4402:r-x,m::rwx,o::---",
          "user::rwx,group::---,other::---" },
        { "acl-outsider-group", ACL_TYPE_DEFAULT, "u::rwx,u:4301:rwx,g::---,g:4402:r-x,m::rwx,o::---", "" },
        /* A linked file's name goes, and so does the slot's entry on the other name (that only narrows). */
        { "acl-linked", ACL_TYPE_ACCESS, "u::rw-,u:4301:rw-,g::r--,m::rw-,o::---",
          "user::rw-,group::r--,mask::rw-,other::---" },
};

static void test_release_kinds(void **state)
{
        struct slots_config *c;
        struct slots_tree_stats st;
        struct slots_error e;
        char rel[300];
        int failures;

        (void) state;
        if (!need_root())
                skip();
        c = config_with(NULL);
        make_objs(release_objs, N_ELEM(release_objs));
        for (size_t i = 0; i < N_ELEM(release_acls); i++) {
                snprintf(rel, sizeof(rel), T "%s", release_acls[i].name);
                set_acl(rel, release_acls[i].before, release_acls[i].type);
        }
        assert_int_equal(release(c, USER, &st, &e), 0);
        failures = objs_are(release_objs, N_ELEM(release_objs));
        failures += is("docs/_users/" USER, SVC, SVC, 0700);
        if (!strstr(notes, "/linked: has 2 hard links and is uid 4301's") ||
            !strstr(notes, "/acl-linked: has 2 hard links and is uid 4400's"))
                ROW_FAIL("the linked files were not reported:\n%s", notes);
        /* What the other name keeps: its content and its own owner; the slot's set-id bits went. */
        failures += is("outside-acl", STRANGER, STRANGER, 0660);
        failures += is("outside-setid", SLOT, SLOT, 0755);
        failures += is("outside-svc", SVC, SVC, 0640);
        for (size_t i = 0; i < N_ELEM(release_acls); i++) {
                snprintf(rel, sizeof(rel), T "%s", release_acls[i].name);
                if (strcmp(release_acls[i].name, "acl-linked") == 0)
                        snprintf(rel, sizeof(rel), "outside-acl");
                failures += acl_is(rel, release_acls[i].type, release_acls[i].after);
        }
        slots_config_free(c);
        if (failures)
                fail_msg("%d failures", failures);
}

/*
 * A pending slot (no user): every tree the user_tree pattern can name is walked, but only what
 * names the slot changes; other users' entries and names the pattern cannot produce stay.
 */
static void test_release_patterns(void **state)
{
        static const struct {
                const char *pattern;
                const char *tree;               /* a tree of the pattern (a user "bob") */
                const char *stranger;           /* a folder the pattern cannot name */
        } rows[] = {
                { "_users/{user}", "docs/_users/bob", "docs/_users/.hidden" },
                { "{user}", "docs/bob", "docs/-dash" },
                { "_users/{user}/work", "docs/_users/bob/work", "docs/_users/carl/other" },
                { "_users/u-{user}.d", "docs/_users/u-bob.d", "docs/_users/u-bob" },
                { "_users/u-{user}.d", "docs/_users/u-b.o.b.d", "docs/_users/x-bob.d" },
                { "homes/{user}-{user}", "docs/homes/bob-bob", "docs/homes/bob-carl" },
        };
        int failures = 0;

        (void) state;
        if (!need_root())
                skip();
        for (size_t i = 0; i < N_ELEM(rows); i++) {
                struct slots_config *c = config_with(rows[i].pattern);
                struct slots_tree_stats st;
                struct slots_error e;
                char p[256], q[256], l[256], o[256], t1[256], t2[256];
                int r;

                /* The tree with the slot's file and another user's; a folder the pattern cannot name. */
                mk_way(rows[i].tree);
                mk(rows[i].tree, DIR_, SVC, OTHER, 02770, NULL);
                snprintf(p, sizeof(p), "%s/slots", rows[i].tree);
                mk(p, FILE_, SLOT, SLOT, 0664, NULL);
                snprintf(q, sizeof(q), "%s/others", rows[i].tree);
                mk(q, FILE_, OTHER, OTHER, 0664, NULL);
                mk_way(rows[i].stranger);
                mk(rows[i].stranger, DIR_, SLOT, SLOT, 0775, NULL);
                /* The slot's file with a second name outside: the tree's name becomes a copy of the service's. */
                snprintf(l, sizeof(l), "%s/linked", rows[i].tree);
                mk(l, FILE_, SLOT, SLOT, 0664, NULL);
                snprintf(o, sizeof(o), "%s/other-name", rows[i].stranger);
                assert_int_equal(linkat(bfd, l, bfd, o, 0), 0);
                /* Two names in the tree, the slot's entry in its ACL: whichever comes first, both end as one. */
                snprintf(t1, sizeof(t1), "%s/twin", rows[i].tree);
                snprintf(t2, sizeof(t2), "%s/twin-again", rows[i].tree);
                mk(t1, FILE_, SLOT, SLOT, 0660, NULL);
                set_acl(t1, "u::rw-,u:4301:rw-,g::rw-,m::rw-,o::---", ACL_TYPE_ACCESS);
                assert_int_equal(linkat(bfd, t1, bfd, t2, 0), 0);

                r = release(c, NULL, &st, &e);
                if (r != 0)
                        ROW_FAIL("%s: release %d: %s: %s", rows[i].pattern, r, e.object, e.reason);
                failures += is(p, SVC, SVC, 0660);
                failures += is(q, OTHER, OTHER, 0664);
                failures += is(rows[i].tree, SVC, OTHER, 02770);
                failures += is(rows[i].stranger, SLOT, SLOT, 0775);
                failures += is(l, SVC, SVC, 0600);
                failures += is(o, SLOT, SLOT, 0664);
                failures += is(t1, SVC, SVC, 0600);
                failures += is(t2, SVC, SVC, 0600);
                if (st_of(l).st_nlink != 1 || st_of(o).st_nlink != 1)
                        ROW_FAIL("%s: the linked file is still linked", rows[i].pattern);
                slots_config_free(c);
                reset_docs();
        }
        if (failures)
                fail_msg("%d failures", failures);
}

/* A fixed folder before {user} that does not exist, or a file there: nothing to give back. */
static void test_release_nothing(void **state)
{
        struct slots_config *c;
        struct slots_tree_stats st;
        struct slots_error e;

        (void) state;
        if (!need_root())
                skip();
        c = config_with("people/all/{user}");
        assert_int_equal(release(c, NULL, &st, &e), 0);
        assert_int_equal(release(c, USER, &st, &e), 0);
        mk("docs/people", FILE_, SLOT, SLOT, 0644, NULL);
        assert_int_equal(release(c, NULL, &st, &e), 0);
        assert_int_equal(release(c, USER, &st, &e), 0);
        assert_int_equal(st.entries, 0);
        assert_int_equal(is("docs/people", SLOT, SLOT, 0644), 0);
        slots_config_free(c);
        /* No docs_root on disk: no document tree, so no user tree. */
        c = config_with(NULL);
        assert_int_equal(rm_tree(bfd, "docs"), 0);
        assert_int_equal(release(c, USER, &st, &e), 0);
        assert_int_equal(release(c, NULL, &st, &e), 0);
        slots_config_free(c);
}

/* ---- what the walks refuse ---- */

static void test_refusals(void **state)
{
        static const char text[] = "{\"service\": \"web\", \"slots\": 2}";
        struct slots_config *c, *none = NULL;
        struct slots_tree_stats st;
        struct slots_error e;

        (void) state;
        if (!need_root())
                skip();
        c = config_with(NULL);
        assert_int_equal(slots_config_parse(text, strlen(text), "slots.conf", &none, &e), 0);
        /* No docs_root in the config: nothing to do either way. */
        assert_int_equal(slots_tree_prepare(AT_FDCWD, none, USER, SLOT, SLOT, SVC, SVC, &st, &e), 0);
        assert_int_equal(slots_tree_release(AT_FDCWD, none, USER, SLOT, SLOT, SVC, SVC, &st, &e), 0);
        /* Ids and names that never name a tree. */
        assert_int_equal(slots_tree_prepare(AT_FDCWD, c, "../etc", SLOT, SLOT, SVC, SVC, NULL, &e), -EINVAL);
        assert_string_equal(e.reason, "invalid user id");
        assert_int_equal(slots_tree_release(AT_FDCWD, c, "a/b", SLOT, SLOT, SVC, SVC, NULL, &e), -EINVAL);
        assert_string_equal(e.reason, "invalid user id");
        assert_int_equal(slots_tree_release(AT_FDCWD, c, USER, 0, SLOT, SVC, SVC, NULL, &e), -EINVAL);
        assert_int_equal(slots_tree_release(AT_FDCWD, c, USER, SLOT, 0, SVC, SVC, NULL, &e), -EINVAL);
        assert_non_null(strstr(e.reason, "uid or gid 0"));
        /* docs_root missing: assign says so and how to fix it; a symlink is never followed. */
        assert_int_equal(unlinkat(bfd, "docs", AT_REMOVEDIR), 0);
        assert_int_equal(prepare(c, &st, &e), -ENOENT);
        assert_string_equal(e.reason, "docs_root does not exist");
        assert_non_null(strstr(e.fix, "fix \"docs_root\" in /etc/slots/slots.conf"));
        mk("real-docs", DIR_, 0, 0, 0755, NULL);
        mk("docs", LINK_, 0, 0, 0, "real-docs");
        assert_true(prepare(c, &st, &e) < 0);
        assert_true(release(c, USER, &st, &e) < 0);
        assert_int_equal(st_of("real-docs").st_nlink, 2);       /* nothing was made in it */
        assert_int_equal(unlinkat(bfd, "docs", 0), 0);
        /* _users a symlink: refused at assign with the fix, nothing to give back at release. */
        mk("docs", DIR_, 0, 0, 0755, NULL);
        mk("docs/_users", LINK_, 0, 0, 0, "../real-docs");
        assert_int_equal(prepare(c, &st, &e), -ELOOP);
        assert_non_null(strstr(e.reason, "is a symbolic link"));
        assert_non_null(strstr(e.fix, "replace the symbolic link with a folder"));
        assert_int_equal(release(c, USER, &st, &e), 0);
        assert_int_equal(st_of("real-docs").st_nlink, 2);
        slots_config_free(none);
        slots_config_free(c);
}

/* ---- mounts: never entered, never changed ---- */

static void test_mounts(void **state)
{
        struct slots_config *c;
        struct slots_tree_stats st;
        struct slots_error e;
        char p[512], q[512];
        int failures = 0;

        (void) state;
        if (!need_root() || !need_mounts())
                skip();
        c = config_with(NULL);
        user_tree();
        mk(T "mnt", DIR_, SLOT, SLOT, 0755, NULL);
        mk(T "bind", DIR_, SLOT, SLOT, 0755, NULL);
        mk("bound", DIR_, STRANGER, STRANGER, 0755, NULL);
        mk("bound/file", FILE_, STRANGER, STRANGER, 0644, NULL);
        snprintf(p, sizeof(p), "%s/" T "mnt", base);
        assert_int_equal(mount("tmpfs", p, "tmpfs", 0, "mode=0755"), 0);
        snprintf(q, sizeof(q), "%s/bound", base);
        snprintf(p, sizeof(p), "%s/" T "bind", base);
        /* A bind mount of the same file system: same st_dev, yet a mount root. */
        assert_int_equal(mount(q, p, "none", MS_BIND, NULL), 0);
        mk(T "mnt/inside", FILE_, SLOT, SLOT, 0644, NULL);

        assert_int_equal(prepare(c, &st, &e), 0);
        failures += is(T "mnt/inside", SLOT, SLOT, 0644);
        failures += is("bound/file", STRANGER, STRANGER, 0644);
        failures += is("bound", STRANGER, STRANGER, 0755);
        assert_int_equal(release(c, USER, &st, &e), 0);
        failures += is(T "mnt/inside", SLOT, SLOT, 0644);
        failures += is("bound/file", STRANGER, STRANGER, 0644);

        /* The unlink walk stops at a mount point: -EBUSY, "unmount it", everything else gone. */
        mk("empty", DIR_, 0, 0, 0755, NULL);
        mk("empty/mnt", DIR_, 0, 0, 0755, NULL);
        mk("empty/file", FILE_, 0, 0, 0644, NULL);
        snprintf(p, sizeof(p), "%s/empty/mnt", base);
        assert_int_equal(mount("tmpfs", p, "tmpfs", 0, "mode=0755"), 0);
        slots_error_clear(&e);
        assert_int_equal(slots_tree_empty(openat(bfd, "empty", O_RDONLY | O_DIRECTORY), "/x/empty", &e), -EBUSY);
        assert_string_equal(e.object, "/x/empty/mnt");
        assert_string_equal(e.fix, "unmount it");
        assert_int_equal(faccessat(bfd, "empty/file", F_OK, AT_SYMLINK_NOFOLLOW), -1);
        assert_int_equal(umount2(p, 0), 0);
        snprintf(p, sizeof(p), "%s/" T "mnt", base);
        assert_int_equal(umount2(p, 0), 0);
        snprintf(p, sizeof(p), "%s/" T "bind", base);
        assert_int_equal(umount2(p, 0), 0);
        slots_config_free(c);
        if (failures)
                fail_msg("%d failures", failures);
}

/* ---- the unlink walk ---- */

static void test_empty(void **state)
{
        char outside[300], outside_dir[300];
        struct slots_error e;
        int fd;

        (void) state;
        if (!need_root())
                skip();
        snprintf(outside, sizeof(outside), "%s/outside", base);
        snprintf(outside_dir, sizeof(outside_dir), "%s/outside-dir", base);
        mk("home", DIR_, SLOT, SLOT, 0700, NULL);
        mk("outside", FILE_, 0, 0, 0600, NULL);
        mk("outside-dir", DIR_, 0, 0, 0700, NULL);
        mk("outside-dir/keep", FILE_, 0, 0, 0600, NULL);
        mk("home/file", FILE_, SLOT, SLOT, 0000, NULL);
        mk("home/fifo", FIFO_, SLOT, SLOT, 0600, NULL);
        mk("home/sock", SOCK_, SLOT, SLOT, 0600, NULL);
        mk("home/dev", DEV_, SLOT, SLOT, 0600, NULL);
        mk("home/link", LINK_, SLOT, SLOT, 0, outside);
        mk("home/dirlink", LINK_, SLOT, SLOT, 0, outside_dir);
        mk("home/esc\033]0;x\a", FILE_, SLOT, SLOT, 0600, NULL);
        mk("home/closed", DIR_, SLOT, SLOT, 0000, NULL);
        mk("home/closed/inner", FILE_, SLOT, SLOT, 0600, NULL);
        assert_int_equal(linkat(bfd, "outside", bfd, "home/hardlink", 0), 0);
        make_deep("home", SLOTS_TREE_OPEN_MAX * 2 + 3, SLOT, SLOT);
        mk("home/second", DIR_, SLOT, SLOT, 0700, NULL);
        make_deep("home/second", SLOTS_TREE_OPEN_MAX + 3, SLOT, SLOT);
        assert_true(entries_in("home") > 10);
        fd = openat(bfd, "home", O_RDONLY | O_DIRECTORY);
        assert_true(fd >= 0);
        slots_error_clear(&e);
        assert_int_equal(slots_tree_empty(fd, "/home/x", &e), 0);
        assert_int_equal(entries_in("home"), 0);
        /* The folder itself stays, taken from everyone (root's, mode 0); links went, never what they point at. */
        assert_int_equal(is("home", 0, 0, 0), 0);
        assert_int_equal(is("outside", 0, 0, 0600), 0);
        assert_int_equal(st_of("outside").st_nlink, 1);
        assert_int_equal(is("outside-dir/keep", 0, 0, 0600), 0);
}

/* An error deep in a long path keeps the tree's root and the end, "/..." between. */
static void test_long_path_in_error(void **state)
{
        char rel[4096], name[200], p[8192];
        struct slots_error e;
        size_t n;
        int fd;

        (void) state;
        if (!need_root() || !need_mounts())
                skip();
        memset(name, 'n', sizeof(name) - 1);
        name[sizeof(name) - 1] = '\0';
        n = (size_t) snprintf(rel, sizeof(rel), "empty");
        mk(rel, DIR_, 0, 0, 0755, NULL);
        for (int i = 0; i < 5; i++) {
                n += (size_t) snprintf(rel + n, sizeof(rel) - n, "/%s", name);
                mk(rel, DIR_, 0, 0, 0755, NULL);
        }
        snprintf(rel + n, sizeof(rel) - n, "/mnt");
        mk(rel, DIR_, 0, 0, 0755, NULL);
        snprintf(p, sizeof(p), "%s/%s", base, rel);
        assert_int_equal(mount("tmpfs", p, "tmpfs", 0, "mode=0755"), 0);
        fd = openat(bfd, "empty", O_RDONLY | O_DIRECTORY);
        slots_error_clear(&e);
        assert_int_equal(slots_tree_empty(fd, "/srv/docs/_users/alice", &e), -EBUSY);
        assert_int_equal(umount2(p, 0), 0);
        assert_int_equal(strncmp(e.object, "/srv/docs/_users/alice/...", 26), 0);
        n = strlen(e.object);
        assert_true(n > 4 && strcmp(e.object + n - 4, "/mnt") == 0);
}

/* ---- the races ---- */

static void move_away(int dfd, const char *name)
{
        assert_int_equal(renameat(dfd, name, bfd, "away"), 0);
}

/* A folder replaced by a file between the walk's look and its open. */
static void swap_dir_for_file(int dfd, const char *name)
{
        move_away(dfd, name);
        assert_int_equal(renameat(bfd, "spare-file", dfd, name), 0);
}

static void swap_dir_for_link(int dfd, const char *name)
{
        move_away(dfd, name);
        assert_int_equal(renameat(bfd, "spare-link", dfd, name), 0);
}

static void swap_dir_for_dir(int dfd, const char *name)
{
        move_away(dfd, name);
        assert_int_equal(renameat(bfd, "spare-dir", dfd, name), 0);
}

/* Every look sees a folder, every open finds another one: it keeps changing. */
static void keeps_changing(int dfd, const char *name)
{
        assert_int_equal(renameat2(dfd, name, bfd, "spare-dir", RENAME_EXCHANGE), 0);
}

static void test_race_dir_swapped(void **state)
{
        static const struct {
                const char *what;
                void (*swap)(int dfd, const char *name);
                const char *spare;
                enum kind kind;
                int mode;                       /* what is at the name is this after prepare */
        } rows[] = {
                { "a file", swap_dir_for_file, "spare-file", FILE_, 0660 },
                { "a symlink to a folder outside", swap_dir_for_link, "spare-link", LINK_, -1 },
                { "another folder", swap_dir_for_dir, "spare-dir", DIR_, 0770 },
        };
        int failures = 0;

        (void) state;
        if (!need_root())
                skip();
        for (size_t i = 0; i < N_ELEM(rows); i++) {
                struct slots_config *c = config_with(NULL);
                struct slots_tree_stats st;
                struct slots_error e;
                char target[300];
                int r;

                snprintf(target, sizeof(target), "%s/outside-dir", base);
                user_tree();
                mk("outside-dir", DIR_, 0, 0, 0700, NULL);
                mk(T "victim", DIR_, SLOT, SLOT, 0755, NULL);
                mk(T "victim/in", FILE_, SLOT, SLOT, 0644, NULL);
                mk(rows[i].spare, rows[i].kind, SLOT, SLOT, 0644, target);
                hook_name = "victim";
                hook_left = 1;
                hook_after_statx = rows[i].swap;
                r = prepare(c, &st, &e);
                hooks_off();
                if (r != 0)
                        ROW_FAIL("%s: prepare %d: %s: %s", rows[i].what, r, e.object, e.reason);
                /* What is at the name now was walked as what it is; what was moved away was not touched. */
                failures += is(T "victim", SLOT, SLOT, rows[i].mode);
                failures += is("away", SLOT, SLOT, 0755);
                failures += is("away/in", SLOT, SLOT, 0644);
                failures += is("outside-dir", 0, 0, 0700);
                slots_config_free(c);
                reset_docs();
                assert_int_equal(rm_tree(bfd, "away"), 0);
                assert_int_equal(rm_tree(bfd, "outside-dir"), 0);
        }
        if (failures)
                fail_msg("%d failures", failures);
}

/* Kept changing: assign fails on it (its tree is not safe yet); a pending slot's release leaves it and says so. */
static void test_race_keeps_changing(void **state)
{
        struct slots_config *c;
        struct slots_tree_stats st;
        struct slots_error e;

        (void) state;
        if (!need_root())
                skip();
        c = config_with(NULL);
        user_tree();
        mk(T "victim", DIR_, SLOT, SLOT, 0755, NULL);
        mk(T "after", FILE_, SLOT, SLOT, 0644, NULL);
        mk("spare-dir", DIR_, SLOT, SLOT, 0755, NULL);
        hook_name = "victim";
        hook_left = 3;
        hook_after_statx = keeps_changing;
        assert_int_equal(prepare(c, &st, &e), -EAGAIN);
        assert_non_null(strstr(e.reason, "the entry kept changing during the walk"));
        assert_non_null(strstr(e.object, "/docs/_users/" USER "/victim"));
        /* The walk went on: the rest of the tree was prepared. */
        assert_int_equal(is(T "after", SLOT, SLOT, 0660), 0);

        hooks_off();
        hook_name = "victim";
        hook_left = 3;
        hook_after_statx = keeps_changing;
        assert_int_equal(release(c, NULL, &st, &e), 0);
        assert_int_equal(st.refused, 1);
        assert_non_null(strstr(notes, "/victim: kept changing during the walk: left alone"));
        /* The slot's own grant found again: given back with nothing for any group. */
        assert_int_equal(is(T "after", SVC, SVC, 0600), 0);
        slots_config_free(c);
}

/* At release a file is opened to be changed: what the look saw must be what opened. */
static void file_to_slot_link(int dfd, const char *name)
{
        char target[300];

        snprintf(target, sizeof(target), "%s/outside", base);
        move_away(dfd, name);
        assert_int_equal(symlinkat(target, dfd, name), 0);
        assert_int_equal(fchownat(dfd, name, SLOT, SLOT, AT_SYMLINK_NOFOLLOW), 0);
}

static void file_removed(int dfd, const char *name)
{
        move_away(dfd, name);
}

static void file_replaced(int dfd, const char *name)
{
        move_away(dfd, name);
        assert_int_equal(renameat(bfd, "spare-file", dfd, name), 0);
}

static void file_linked(int dfd, const char *name)
{
        assert_int_equal(linkat(dfd, name, bfd, "stolen", 0), 0);
}

static void test_race_release_file(void **state)
{
        static const struct {
                const char *what;
                void (*swap)(int dfd, const char *name);
                bool victim_there;
                uid_t uid;                      /* the victim's owner and group after release */
                int mode;
        } rows[] = {
                { "replaced by the slot's symlink to a root file", file_to_slot_link, true, SVC, -1 },
                { "removed", file_removed, false, 0, 0 },
                { "replaced by another of the slot's files", file_replaced, true, SVC, 0600 },
                /* the slot's file with another name: a copy of the service's in its place */
                { "given a second name", file_linked, true, SVC, 0600 },
        };
        int failures = 0;

        (void) state;
        if (!need_root())
                skip();
        for (size_t i = 0; i < N_ELEM(rows); i++) {
                struct slots_config *c = config_with(NULL);
                struct slots_tree_stats st;
                struct slots_error e;
                int r;

                user_tree();
                mk("outside", FILE_, 0, 0, 0600, NULL);
                mk(T "victim", FILE_, SLOT, SLOT, 0666, NULL);
                mk("spare-file", FILE_, SLOT, SLOT, 0666, NULL);
                hook_name = "victim";
                hook_left = 1;
                hook_after_statx = rows[i].swap;
                r = release(c, USER, &st, &e);
                hooks_off();
                if (r != 0)
                        ROW_FAIL("%s: release %d: %s: %s", rows[i].what, r, e.object, e.reason);
                if (rows[i].victim_there)
                        failures += is(T "victim", rows[i].uid, rows[i].uid, rows[i].mode);
                else if (faccessat(bfd, T "victim", F_OK, AT_SYMLINK_NOFOLLOW) == 0)
                        ROW_FAIL("%s: the victim is back", rows[i].what);
                failures += is("outside", 0, 0, 0600);
                if (rows[i].swap == file_linked && !strstr(notes, "/victim: has 2 hard links"))
                        ROW_FAIL("%s: not reported:\n%s", rows[i].what, notes);
                slots_config_free(c);
                reset_docs();
                (void) rm_tree(bfd, "away");
                (void) rm_tree(bfd, "spare-file");
                (void) unlinkat(bfd, "stolen", 0);
                assert_int_equal(unlinkat(bfd, "outside", 0), 0);
        }
        if (failures)
                fail_msg("%d failures", failures);
}

/* A hard link made right after the owner changed: the change is undone before anyone uses it. */
static void link_after_fchown(int fd)
{
        char p[64];

        snprintf(p, sizeof(p), "/proc/self/fd/%d", fd);
        assert_int_equal(linkat(AT_FDCWD, p, bfd, "stolen", AT_SYMLINK_FOLLOW), 0);
}

static void test_race_link_after_change(void **state)
{
        struct slots_config *c;
        struct slots_tree_stats st;
        struct slots_error e;

        (void) state;
        if (!need_root())
                skip();
        c = config_with(NULL);
        user_tree();
        /* Release opens the file, changes it, then looks again. */
        mk(T "victim", FILE_, SLOT, SLOT, 0666, NULL);
        hook_ino = st_of(T "victim").st_ino;
        hook_left = 1;
        hook_after_fchown = link_after_fchown;
        assert_int_equal(release(c, USER, &st, &e), 0);
        hooks_off();
        /* Undone on the other name, and a copy of the service's in the tree: a chown cannot take it back. */
        assert_int_equal(is(T "victim", SVC, SVC, 0600), 0);
        assert_int_equal(is("stolen", SLOT, SLOT, 0666), 0);
        assert_int_equal(st_of("stolen").st_nlink, 1);
        assert_int_equal(st.linked, 1);
        assert_non_null(strstr(notes, "/victim: has 2 hard links"));
        assert_int_equal(unlinkat(bfd, "stolen", 0), 0);
        slots_config_free(c);
        c = config_with(NULL);
        /* Assign grants the slot through the fd, then looks again. */
        mk(T "victim2", FILE_, STRANGER, STRANGER, 06604, NULL);
        hook_ino = st_of(T "victim2").st_ino;
        hook_left = 1;
        hook_after_acl_set = link_after_fchown;
        assert_int_equal(prepare(c, &st, &e), 0);
        hooks_off();
        /* Undone: the old owner and mode without its set-id bits, the slot's entry gone; a granted copy here. */
        assert_int_equal(is(T "victim2", SVC, SVC, 0660), 0);
        assert_int_equal(is("stolen", STRANGER, STRANGER, 0604), 0);
        assert_int_equal(acl_is("stolen", ACL_TYPE_ACCESS, "user::rw-,group::---,mask::---,other::r--"), 0);
        assert_int_equal(st.linked, 1);
        assert_non_null(strstr(notes, "/victim2: has 2 hard links"));
        assert_int_equal(unlinkat(bfd, "stolen", 0), 0);
        slots_config_free(c);
}

/* A symlink to a root file renamed over the name before assign opens it: looked at again, left alone. */
static void file_to_root_link(int dfd, const char *name)
{
        char target[300];

        snprintf(target, sizeof(target), "%s/outside", base);
        move_away(dfd, name);
        assert_int_equal(symlinkat(target, dfd, name), 0);
}

static void test_race_link_before_chmod(void **state)
{
        struct slots_config *c;
        struct slots_tree_stats st;
        struct slots_error e;

        (void) state;
        if (!need_root())
                skip();
        c = config_with(NULL);
        user_tree();
        mk("outside", FILE_, 0, 0, 0600, NULL);
        mk(T "victim", FILE_, SLOT, SLOT, 0644, NULL);
        hook_name = "victim";
        hook_left = 1;
        hook_after_statx = file_to_root_link;
        assert_int_equal(prepare(c, &st, &e), 0);
        hooks_off();
        assert_int_equal(is("outside", 0, 0, 0600), 0);
        assert_true(S_ISLNK(st_of(T "victim").st_mode));
        slots_config_free(c);
}

/*
 * Past SLOTS_TREE_OPEN_MAX levels the shallow ones are closed and opened again through "..";
 * a folder moved elsewhere meanwhile ends that tree's walk (-ESTALE, "run the same command
 * again") instead of walking whatever ".." is now.
 */
static char moved_from[4096];

static void move_level(int dfd, const char *name)
{
        (void) dfd;
        (void) name;
        assert_int_equal(renameat(bfd, moved_from, bfd, "moved"), 0);
}

static void test_race_moved_while_closed(void **state)
{
        struct slots_config *c;
        struct slots_tree_stats st;
        struct slots_error e;
        size_t n;
        int r;

        (void) state;
        if (!need_root())
                skip();
        c = config_with(NULL);
        user_tree();
        mk(T "deep", DIR_, SLOT, SLOT, 0755, NULL);
        make_deep(T "deep", SLOTS_TREE_OPEN_MAX + 10, SLOT, SLOT);
        /* The fifth level: closed while the walk is at the leaf, then moved away. */
        n = (size_t) snprintf(moved_from, sizeof(moved_from), T "deep");
        for (int i = 0; i < 5; i++)
                n += (size_t) snprintf(moved_from + n, sizeof(moved_from) - n, "/d");
        hook_name = "leaf";
        hook_left = 1;
        hook_after_statx = move_level;
        r = prepare(c, &st, &e);
        hooks_off();
        assert_int_equal(r, -ESTALE);
        assert_non_null(strstr(e.reason, "the folder was moved during the walk"));
        assert_string_equal(e.fix, "run the same command again");
        /* The moved folder's own walk finished before the walk found out. */
        assert_int_equal(is("moved/f0", SLOT, SLOT, 0660), 0);
        slots_config_free(c);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
                TEST(test_prepare_kinds),
                TEST(test_prepare_creates),
                TEST(test_deep),
                TEST(test_two_deep_branches),
                TEST(test_release_kinds),
                TEST(test_release_patterns),
                TEST(test_release_nothing),
                TEST(test_refusals),
                TEST(test_mounts),
                TEST(test_empty),
                TEST(test_long_path_in_error),
                TEST(test_race_dir_swapped),
                TEST(test_race_keeps_changing),
                TEST(test_race_release_file),
                TEST(test_race_link_after_change),
                TEST(test_race_link_before_chmod),
                TEST(test_race_moved_while_closed),
        };

        /* A walk that never ends (a read-ahead walked again) fails the test instead of hanging it. */
        alarm(600);
        fstree_init();
        return cmocka_run_group_tests(tests, NULL, NULL);
}
