/*
 * Release hygiene (cleanup.c) as root inside a scratch root (the functions take rootfd), with
 * what a slot leaves and the shapes it can give it: its crontab, at jobs and lingering flag;
 * home, state and run dirty, missing, a symlink or a file, with xattrs and ACLs; its files at
 * any depth below the temp folders, in others' folders, past the depth bound, next to a
 * configured root below /tmp, behind a mount point; its runtime folder of another owner or a
 * symlink; its mailbox as a file, a FIFO, a symlink, a second name, or root's; its files in
 * the shared folders (set-id bits, ACLs, symlinks, FIFOs, a second name).  Each object is shown
 * to exist before it is asserted gone or changed.
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
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <unistd.h>

#include <cmocka.h>

#include "cleanup.h"
#include "config.h"
#include "fstree.h"
#include "unit.h"
#include "unit-text.h"
#include "walk.h"

#define SVC 4300
#define SLOT 4301
#define STRANGER 4400

static struct slots_pw slot = { .name = (char *) "slot01", .uid = SLOT, .gid = SLOT };
static struct slots_pw root_pw = { .name = (char *) "root", .uid = 0, .gid = 0 };

static int setup(void **state)
{
        return fstree_setup(state);
}

static int teardown(void **state)
{
        static const char *const mounts[] = { "tmp/mnt", "var/spool/cron/atjobs/mnt",
                                              "var/lib/slots/web/home/slot01" };

        fstree_umount(mounts, N_ELEM(mounts));
        return fstree_teardown(state);
}

#define TEST(f) cmocka_unit_test_setup_teardown(f, setup, teardown)

static struct slots_config *config(const char *extra)
{
        char text[512];

        snprintf(text, sizeof(text), "{\"service\": \"web\", \"slots\": 2%s}", extra);
        return unit_config(text);
}

static bool exists(const char *rel)
{
        return faccessat(bfd, rel, F_OK, AT_SYMLINK_NOFOLLOW) == 0;
}

/* The failures of a table of names: each must be gone (want false) or still there. */
struct there {
        const char *rel;
        bool want;
};

static int are_there(const struct there *t, size_t n)
{
        int failures = 0;

        for (size_t i = 0; i < n; i++) {
                if (!t[i].want && exists(t[i].rel))
                        ROW_FAIL("%s is still there", t[i].rel);
                else if (t[i].want && !exists(t[i].rel))
                        ROW_FAIL("%s is gone", t[i].rel);
        }
        return failures;
}

/* Each name of the table is made before the run: what a test asserts gone existed first. */
static void all_there(const struct there *t, size_t n)
{
        for (size_t i = 0; i < n; i++)
                if (!exists(t[i].rel))
                        fail_msg("%s was not made", t[i].rel);
}

static void set_xattr(const char *rel, const char *name)
{
        char p[512];

        snprintf(p, sizeof(p), "%s/%s", base, rel);
        if (lsetxattr(p, name, "x", 1, 0) < 0)
                fail_msg("%s on %s: %s", name, rel, strerror(errno));
}

/* Every kind of cleanup refuses uid or gid 0: nothing of root is ever removed. */
static void test_refuses_root(void **state)
{
        struct slots_config *c = config(", \"docs_root\": \"/srv/docs\", \"shared_dirs\": [\"shared\"]");
        struct slots_error e;

        (void) state;
        assert_int_equal(slots_cleanup_jobs(bfd, &root_pw, &e), -EINVAL);
        assert_int_equal(slots_cleanup_folders(bfd, c, &root_pw, 0, &e), -EINVAL);
        assert_int_equal(slots_cleanup_folders(bfd, c, &slot, 0, &e), -EINVAL);
        assert_int_equal(slots_cleanup_temp(bfd, c, &root_pw, &e), -EINVAL);
        assert_int_equal(slots_cleanup_shared(bfd, c, &root_pw, 0, SVC, SVC, &e), -EINVAL);
        assert_int_equal(slots_cleanup_ipc(&root_pw, NULL, NULL, &e), -EINVAL);
        assert_int_equal(slots_cleanup_keys(&root_pw, &e), -EINVAL);
        assert_int_equal(slots_cleanup_mounts(&root_pw, &e), -EINVAL);
        assert_non_null(strstr(e.reason, "uid or gid 0"));
        slots_config_free(c);
}

/* ---- scheduled jobs ---- */

static void test_jobs(void **state)
{
        static const struct there after[] = {
                { "var/spool/cron/crontabs/slot01", false },
                { "var/spool/cron/crontabs/slot02", true },
                { "var/spool/cron/atjobs/a0001", false },
                { "var/spool/cron/atjobs/a0002", true },
                { "var/spool/cron/atjobs/dir", false },
                { "var/spool/cron/atspool/a0001", false },
                { "var/lib/systemd/linger/slot01", false },
                { "var/lib/systemd/linger/slot02", true },
        };
        struct slots_error e;

        (void) state;
        if (!need_root())
                skip();
        /* Nothing of the spool there at all: nothing to do. */
        assert_int_equal(slots_cleanup_jobs(bfd, &slot, &e), 0);
        mk_way("var/spool/cron/crontabs/x");
        mk_way("var/spool/cron/atjobs/x");
        mk_way("var/spool/cron/atspool/x");
        mk_way("var/lib/systemd/linger/x");
        /* The crontab goes whatever its owner (crontab(1) makes it root's or the user's). */
        mk("var/spool/cron/crontabs/slot01", FILE_, 0, SLOT, 0600, NULL);
        mk("var/spool/cron/crontabs/slot02", FILE_, 4302, 4302, 0600, NULL);
        mk("var/spool/cron/atjobs/a0001", FILE_, SLOT, SLOT, 0700, NULL);
        mk("var/spool/cron/atjobs/a0002", FILE_, STRANGER, STRANGER, 0700, NULL);
        mk("var/spool/cron/atjobs/dir", DIR_, SLOT, SLOT, 0700, NULL);
        mk("var/spool/cron/atjobs/dir/inner", FILE_, SLOT, SLOT, 0600, NULL);
        mk("var/spool/cron/atjobs/dir/theirs", FILE_, STRANGER, STRANGER, 0600, NULL);
        mk("var/spool/cron/atspool/a0001", FILE_, SLOT, SLOT, 0600, NULL);
        mk("var/lib/systemd/linger/slot01", FILE_, 0, 0, 0644, NULL);
        mk("var/lib/systemd/linger/slot02", FILE_, 0, 0, 0644, NULL);
        all_there(after, N_ELEM(after));
        slots_error_clear(&e);
        assert_int_equal(slots_cleanup_jobs(bfd, &slot, &e), 0);
        assert_int_equal(are_there(after, N_ELEM(after)), 0);
        /* Again: nothing left to do, still 0. */
        assert_int_equal(slots_cleanup_jobs(bfd, &slot, &e), 0);
}

/* A mount point of the slot in the at spool is never entered: -EBUSY, the fix, the rest done. */
static void test_jobs_mount(void **state)
{
        struct slots_error e;
        char p[512];

        (void) state;
        if (!need_root() || !need_mounts())
                skip();
        mk_way("var/spool/cron/atjobs/x");
        mk("var/spool/cron/atjobs/mnt", DIR_, SLOT, SLOT, 0700, NULL);
        mk("var/spool/cron/atjobs/a0001", FILE_, SLOT, SLOT, 0700, NULL);
        snprintf(p, sizeof(p), "%s/var/spool/cron/atjobs/mnt", base);
        assert_int_equal(mount("tmpfs", p, "tmpfs", 0, "mode=0700"), 0);
        assert_int_equal(fchownat(bfd, "var/spool/cron/atjobs/mnt", SLOT, SLOT, 0), 0);
        mk("var/spool/cron/atjobs/mnt/kept", FILE_, SLOT, SLOT, 0600, NULL);
        slots_error_clear(&e);
        assert_int_equal(slots_cleanup_jobs(bfd, &slot, &e), -EBUSY);
        assert_string_equal(e.object, "/var/spool/cron/atjobs/mnt");
        assert_string_equal(e.reason, "is a mount point, never entered");
        assert_string_equal(e.fix, "unmount it");
        assert_true(exists("var/spool/cron/atjobs/mnt/kept"));
        assert_false(exists("var/spool/cron/atjobs/a0001"));
        assert_int_equal(umount2(p, 0), 0);
}

/* ---- home, state and run ---- */

#define ROOT "var/lib/slots/web/"

static void make_slot_folders(void)
{
        mk_way(ROOT "home/x");
        mk_way(ROOT "state/x");
        mk_way(ROOT "run/x");
        mk(ROOT "home/slot01", DIR_, SLOT, SLOT, 0700, NULL);
        mk(ROOT "state/slot01", DIR_, SLOT, SLOT, 0700, NULL);
        mk(ROOT "run/slot01", DIR_, SLOT, SLOT, 0700, NULL);
}

static int xattrs_of(const char *rel)
{
        char p[512];

        snprintf(p, sizeof(p), "%s/%s", base, rel);
        return (int) llistxattr(p, NULL, 0);
}

static void test_folders_reset(void **state)
{
        struct slots_config *c = config("");
        struct slots_error e;
        char outside[300];
        int failures = 0;

        (void) state;
        if (!need_root())
                skip();
        snprintf(outside, sizeof(outside), "%s/outside", base);
        mk("outside", FILE_, 0, 0, 0600, NULL);
        make_slot_folders();
        /* The last user's home: files, folders, links out, its own xattrs and an ACL, open to all. */
        mk(ROOT "home/slot01/.bashrc", FILE_, SLOT, SLOT, 0644, NULL);
        mk(ROOT "home/slot01/dir", DIR_, SLOT, SLOT, 0755, NULL);
        mk(ROOT "home/slot01/dir/deep", FILE_, SLOT, SLOT, 0644, NULL);
        mk(ROOT "home/slot01/link", LINK_, SLOT, SLOT, 0, outside);
        mk(ROOT "home/slot01/fifo", FIFO_, SLOT, SLOT, 0600, NULL);
        set_xattr(ROOT "home/slot01", "user.note");
        set_xattr(ROOT "home/slot01", "trusted.mark");
        set_acl(ROOT "home/slot01", "u::rwx,u:4400:rwx,g::---,m::rwx,o::---", ACL_TYPE_ACCESS);
        set_acl(ROOT "home/slot01", "u::rwx,u:4400:rwx,g::---,m::rwx,o::---", ACL_TYPE_DEFAULT);
        assert_int_equal(fchmodat(bfd, ROOT "home/slot01", 0777, 0), 0);
        /* state given to someone else; run missing. */
        assert_int_equal(fchownat(bfd, ROOT "state/slot01", STRANGER, STRANGER, 0), 0);
        assert_int_equal(unlinkat(bfd, ROOT "run/slot01", AT_REMOVEDIR), 0);
        assert_true(xattrs_of(ROOT "home/slot01") > 0);
        assert_int_equal(entries_in(ROOT "home/slot01"), 4);

        slots_error_clear(&e);
        assert_int_equal(slots_cleanup_folders(bfd, c, &slot, SLOT, &e), 0);
        failures += is(ROOT "home/slot01", SLOT, SLOT, 0700);
        failures += is(ROOT "state/slot01", SLOT, SLOT, 0700);
        failures += is(ROOT "run/slot01", SLOT, SLOT, 0700);
        if (entries_in(ROOT "home/slot01") != 0)
                ROW_FAIL("home is not empty");
        if (xattrs_of(ROOT "home/slot01") != 0)
                ROW_FAIL("home still has extended attributes");
        failures += is("outside", 0, 0, 0600);
        /* The same as the check sees it: empty, exactly slot:slot 0700, no attribute. */
        if (slots_check_folders(bfd, c, "slot01", SLOT, SLOT, false, &e) != 0)
                ROW_FAIL("check after the reset: %s: %s", e.object, e.reason);
        slots_config_free(c);
        if (failures)
                fail_msg("%d failures", failures);
}

/* What stands in a folder's place is refused with the fix; the other folders are still reset. */
static void test_folders_refused(void **state)
{
        static const struct {
                const char *what;
                enum kind kind;
                int err;
                const char *reason, *fix;
        } rows[] = {
                { "a symlink", LINK_, -ELOOP, "(a symbolic link)",
                  "remove it (rm /var/lib/slots/web/home/slot01), then: slots-admin release --slot slot01" },
                { "a file", FILE_, -ENOTDIR, "Not a directory",
                  "remove it (rm /var/lib/slots/web/home/slot01), then: slots-admin release --slot slot01" },
        };
        int failures = 0;

        (void) state;
        if (!need_root())
                skip();
        for (size_t i = 0; i < N_ELEM(rows); i++) {
                struct slots_config *c = config("");
                char outside[300];
                struct slots_error e;
                int r;

                snprintf(outside, sizeof(outside), "%s/outside", base);
                mk("outside", DIR_, STRANGER, STRANGER, 0755, NULL);
                mk("outside/keep", FILE_, STRANGER, STRANGER, 0644, NULL);
                make_slot_folders();
                assert_int_equal(unlinkat(bfd, ROOT "home/slot01", AT_REMOVEDIR), 0);
                mk(ROOT "home/slot01", rows[i].kind, SLOT, SLOT, 0644, outside);
                mk(ROOT "state/slot01/left", FILE_, SLOT, SLOT, 0644, NULL);
                slots_error_clear(&e);
                r = slots_cleanup_folders(bfd, c, &slot, SLOT, &e);
                if (r != rows[i].err || !strstr(e.reason, rows[i].reason) || strcmp(e.fix, rows[i].fix) != 0)
                        ROW_FAIL("%s: %d %s: %s (fix: %s)", rows[i].what, r, e.object, e.reason, e.fix);
                failures += is("outside", STRANGER, STRANGER, 0755);
                failures += is("outside/keep", STRANGER, STRANGER, 0644);
                if (exists(ROOT "state/slot01/left"))
                        ROW_FAIL("%s: state was not emptied", rows[i].what);
                slots_config_free(c);
                assert_int_equal(rm_tree(bfd, "var"), 0);
                assert_int_equal(rm_tree(bfd, "outside"), 0);
        }
        /* No slots_root/run at all: slots-provision makes it. */
        {
                struct slots_config *c = config("");
                struct slots_error e;

                make_slot_folders();
                assert_int_equal(rm_tree(bfd, ROOT "run"), 0);
                slots_error_clear(&e);
                assert_int_equal(slots_cleanup_folders(bfd, c, &slot, SLOT, &e), -ENOENT);
                assert_string_equal(e.object, "/var/lib/slots/web/run");
                assert_string_equal(e.fix, "run slots-provision, which makes it");
                failures += is(ROOT "home/slot01", SLOT, SLOT, 0700);
                slots_config_free(c);
        }
        if (failures)
                fail_msg("%d failures", failures);
}

/* The read-only check of the three folders: each difference with its words and the fix. */
static void test_check_folders(void **state)
{
        static const struct {
                const char *what;
                const char *rel;                /* what is done to it, below */
                int how;                        /* 0 nothing, 1 chmod 0755, 2 a file in it, 3 an xattr,
                                                   4 removed, 5 a symlink, 6 owner another */
                bool in_use;
                int err;
                const char *reason;
        } rows[] = {
                { "all three right", NULL, 0, false, 0, NULL },
                { "home 0755", ROOT "home/slot01", 1, false, -EPERM, "is 4301:4301 0755, not slot01:slot01 0700" },
                { "state not empty", ROOT "state/slot01", 2, false, -EPERM, "is not empty" },
                { "state not empty, but in use", ROOT "state/slot01", 2, true, 0, NULL },
                { "run with an xattr", ROOT "run/slot01", 3, false, -EPERM,
                  "has the extended attribute user.note" },
                { "run with an xattr, in use", ROOT "run/slot01", 3, true, 0, NULL },
                { "home missing", ROOT "home/slot01", 4, false, -ENOENT, "No such file or directory" },
                { "home a symlink", ROOT "home/slot01", 5, true, -ELOOP, "(a symbolic link)" },
                { "state another's", ROOT "state/slot01", 6, true, -EPERM, "is 4400:4301 0700" },
        };
        int failures = 0;

        (void) state;
        if (!need_root())
                skip();
        for (size_t i = 0; i < N_ELEM(rows); i++) {
                struct slots_config *c = config("");
                struct slots_error e;
                char p[512];
                int r;

                make_slot_folders();
                switch (rows[i].how) {
                case 1:
                        assert_int_equal(fchmodat(bfd, rows[i].rel, 0755, 0), 0);
                        break;
                case 2:
                        snprintf(p, sizeof(p), "%s/left", rows[i].rel);
                        mk(p, FILE_, SLOT, SLOT, 0600, NULL);
                        break;
                case 3:
                        set_xattr(rows[i].rel, "user.note");
                        break;
                case 4:
                        assert_int_equal(unlinkat(bfd, rows[i].rel, AT_REMOVEDIR), 0);
                        break;
                case 5:
                        snprintf(p, sizeof(p), "%s/%s.real", base, rows[i].rel);
                        assert_int_equal(renameat(bfd, rows[i].rel, AT_FDCWD, p), 0);
                        assert_int_equal(symlinkat(p, bfd, rows[i].rel), 0);
                        break;
                case 6:
                        assert_int_equal(fchownat(bfd, rows[i].rel, STRANGER, SLOT, 0), 0);
                        break;
                }
                slots_error_clear(&e);
                r = slots_check_folders(bfd, c, "slot01", SLOT, SLOT, rows[i].in_use, &e);
                if (r != rows[i].err)
                        ROW_FAIL("%s: %d, want %d (%s: %s)", rows[i].what, r, rows[i].err, e.object, e.reason);
                else if (r < 0 && (!strstr(e.reason, rows[i].reason) || !strstr(e.fix, "slots-admin release --slot slot01")))
                        ROW_FAIL("%s: %s: %s (fix: %s)", rows[i].what, e.object, e.reason, e.fix);
                slots_config_free(c);
                assert_int_equal(rm_tree(bfd, "var"), 0);
        }
        if (failures)
                fail_msg("%d failures", failures);
}

/* ---- the temp folders ---- */

static void make_temp_dirs(void)
{
        mk("tmp", DIR_, 0, 0, 01777, NULL);
        mk_way("var/tmp/x");
        assert_int_equal(fchmodat(bfd, "var/tmp", 01777, 0), 0);
        mk_way("dev/shm/x");
        assert_int_equal(fchmodat(bfd, "dev/shm", 01777, 0), 0);
        mk_way("run/lock/x");
        assert_int_equal(fchmodat(bfd, "run/lock", 01777, 0), 0);
        mk_way("run/user/x");
        assert_int_equal(fchmodat(bfd, "run/user", 0755, 0), 0);
        mk_way("var/mail/x");
        assert_int_equal(fchmodat(bfd, "var/mail", 02775, 0), 0);
}

/* A chain of strangers' folders depth levels deep below rel, the slot's file at its end. */
static void strangers_chain(const char *rel, int depth)
{
        char p[4096];
        size_t n = (size_t) snprintf(p, sizeof(p), "%s", rel);

        for (int i = 0; i < depth; i++) {
                n += (size_t) snprintf(p + n, sizeof(p) - n, "/s");
                mk(p, DIR_, STRANGER, STRANGER, 0777, NULL);
        }
        snprintf(p + n, sizeof(p) - n, "/slots-file");
        mk(p, FILE_, SLOT, SLOT, 0644, NULL);
}

static bool chain_end_there(const char *rel, int depth)
{
        char p[4096];
        size_t n = (size_t) snprintf(p, sizeof(p), "%s", rel);

        for (int i = 0; i < depth; i++)
                n += (size_t) snprintf(p + n, sizeof(p) - n, "/s");
        snprintf(p + n, sizeof(p) - n, "/slots-file");
        return exists(p);
}

static void test_temp(void **state)
{
        static const struct there after[] = {
                { "tmp/slots-file", false },
                { "tmp/strangers-file", true },
                { "tmp/slots-dir", false },
                { "tmp/slots-link", false },
                { "tmp/slots-fifo", false },
                { "tmp/strangers-dir", true },
                { "tmp/strangers-dir/slots-file", false },
                { "tmp/strangers-dir/strangers-file", true },
                { "tmp/docs/slots-file", true },        /* docs_root lies below /tmp: its own step */
                { "var/tmp/slots-file", false },
                { "dev/shm/slots-file", false },
                { "run/lock/slots-file", false },
                { "run/user/4301", false },             /* the runtime folder, emptied and removed */
                { "run/user/4400/slots-file", true },   /* another account's runtime folder */
                { "var/mail/slot01", true },
                { "outside", true },
        };
        struct slots_config *c = config(", \"docs_root\": \"/tmp/docs\"");
        struct slots_error e;
        char outside[300];

        (void) state;
        if (!need_root())
                skip();
        /* Nothing of the temp folders there: nothing to do. */
        assert_int_equal(slots_cleanup_temp(bfd, c, &slot, &e), 0);
        snprintf(outside, sizeof(outside), "%s/outside", base);
        mk("outside", FILE_, 0, 0, 0600, NULL);
        make_temp_dirs();
        mk("tmp/slots-file", FILE_, SLOT, SLOT, 0644, NULL);
        mk("tmp/strangers-file", FILE_, STRANGER, STRANGER, 0644, NULL);
        mk("tmp/slots-dir", DIR_, SLOT, SLOT, 0777, NULL);
        mk("tmp/slots-dir/theirs", FILE_, STRANGER, STRANGER, 0644, NULL);  /* goes with the folder */
        mk("tmp/slots-dir/sub", DIR_, SLOT, SLOT, 0000, NULL);
        mk("tmp/slots-link", LINK_, SLOT, SLOT, 0, outside);
        mk("tmp/slots-fifo", FIFO_, SLOT, SLOT, 0666, NULL);
        mk("tmp/strangers-dir", DIR_, STRANGER, STRANGER, 0777, NULL);
        mk("tmp/strangers-dir/slots-file", FILE_, SLOT, SLOT, 0644, NULL);
        mk("tmp/strangers-dir/strangers-file", FILE_, STRANGER, STRANGER, 0644, NULL);
        mk("tmp/docs", DIR_, SVC, SVC, 0755, NULL);
        mk("tmp/docs/slots-file", FILE_, SLOT, SLOT, 0644, NULL);
        /* Others' folders are searched at any depth below /tmp: past the walk's fd bound, and far past. */
        mk("tmp/near", DIR_, STRANGER, STRANGER, 0777, NULL);
        strangers_chain("tmp/near", SLOTS_WALK_OPEN_MAX + 2);
        mk("tmp/far", DIR_, STRANGER, STRANGER, 0777, NULL);
        strangers_chain("tmp/far", 200);
        /* A set-gid file of the slot's group that another account made (a borrowed egid) goes too. */
        mk("tmp/strangers-setgid", FILE_, STRANGER, SLOT, 02755, NULL);
        mk("tmp/strangers-setgid-other", FILE_, STRANGER, STRANGER, 02755, NULL);
        mk("var/tmp/slots-file", FILE_, SLOT, SLOT, 0644, NULL);
        mk("dev/shm/slots-file", FILE_, SLOT, SLOT, 0644, NULL);
        mk("run/lock/slots-file", FILE_, SLOT, SLOT, 0644, NULL);
        mk("run/user/4301", DIR_, SLOT, SLOT, 0700, NULL);
        mk("run/user/4301/bus", SOCK_, SLOT, SLOT, 0666, NULL);
        mk("run/user/4301/dir", DIR_, SLOT, SLOT, 0700, NULL);
        mk("run/user/4301/dir/file", FILE_, SLOT, SLOT, 0600, NULL);
        mk("run/user/4400", DIR_, STRANGER, STRANGER, 0700, NULL);
        mk("run/user/4400/slots-file", FILE_, SLOT, SLOT, 0600, NULL);
        mk("var/mail/slot01", FILE_, SLOT, 8, 0660, NULL);
        all_there(after, N_ELEM(after));
        assert_true(chain_end_there("tmp/near", SLOTS_WALK_OPEN_MAX + 2));
        assert_true(chain_end_there("tmp/far", 200));

        slots_error_clear(&e);
        assert_int_equal(slots_cleanup_temp(bfd, c, &slot, &e), 0);
        assert_int_equal(are_there(after, N_ELEM(after)), 0);
        assert_false(chain_end_there("tmp/near", SLOTS_WALK_OPEN_MAX + 2));
        assert_false(chain_end_there("tmp/far", 200));
        assert_int_equal(faccessat(bfd, "tmp/strangers-setgid", F_OK, AT_SYMLINK_NOFOLLOW), -1);
        assert_int_equal(is("tmp/strangers-setgid-other", STRANGER, STRANGER, 02755), 0);
        /* The mailbox stays for the MTA, owner, group and mode as they were, and empty. */
        assert_int_equal(is("var/mail/slot01", SLOT, 8, 0660), 0);
        assert_int_equal(st_of("var/mail/slot01").st_size, 0);
        assert_int_equal(is("outside", 0, 0, 0600), 0);
        slots_config_free(c);
}

/* The mailbox in every shape: only a plain one keeps its name, as slot:mail 0660; nothing else loses content. */
static void test_mail(void **state)
{
        static const struct {
                const char *what;
                enum kind kind;
                uid_t uid;
                bool second_name;
                bool name_stays;
                off_t size;                     /* of what stays at the name, or of the other name */
        } rows[] = {
                { "the slot's own, with mail", FILE_, SLOT, false, true, 0 },
                { "root's 0660: replaced all the same, the slot's", FILE_, 0, false, true, 0 },
                { "a FIFO of the slot's", FIFO_, SLOT, false, false, 0 },
                { "a symlink of the slot's to a root file", LINK_, SLOT, false, false, 5 },
                { "a second name of another of the slot's files", FILE_, SLOT, true, false, 5 },
        };
        int failures = 0;

        (void) state;
        if (!need_root())
                skip();
        for (size_t i = 0; i < N_ELEM(rows); i++) {
                struct slots_config *c = config("");
                struct slots_error e;
                char victim[300];
                ino_t ino;
                int r;

                make_temp_dirs();
                snprintf(victim, sizeof(victim), "%s/victim", base);
                mk("victim", FILE_, 0, 0, 0600, NULL);
                if (rows[i].second_name) {
                        assert_int_equal(linkat(bfd, "victim", bfd, "var/mail/slot01", 0), 0);
                        assert_int_equal(fchownat(bfd, "victim", SLOT, SLOT, 0), 0);
                } else {
                        mk("var/mail/slot01", rows[i].kind, rows[i].uid, 8, 0660, victim);
                }
                assert_true(exists("var/mail/slot01"));
                ino = st_of("var/mail/slot01").st_ino;
                slots_error_clear(&e);
                r = slots_cleanup_temp(bfd, c, &slot, &e);
                if (r != 0)
                        ROW_FAIL("%s: %d %s: %s", rows[i].what, r, e.object, e.reason);
                if (exists("var/mail/slot01") != rows[i].name_stays)
                        ROW_FAIL("%s: the name %s", rows[i].what, rows[i].name_stays ? "went" : "stayed");
                if (rows[i].name_stays && st_of("var/mail/slot01").st_size != rows[i].size)
                        ROW_FAIL("%s: %ld bytes left", rows[i].what, (long) st_of("var/mail/slot01").st_size);
                if (st_of("victim").st_size != 5)
                        ROW_FAIL("%s: the other file lost its content", rows[i].what);
                /* A new file (a descriptor of the old one reads nothing new), slot:mail 0660 whoever had it. */
                if (rows[i].name_stays) {
                        if (st_of("var/mail/slot01").st_ino == ino)
                                ROW_FAIL("%s: the mailbox kept its inode", rows[i].what);
                        failures += is("var/mail/slot01", SLOT, 8, 0660);
                        if (exists("var/mail/.slot01.slots-new"))
                                ROW_FAIL("%s: the temporary name is left", rows[i].what);
                }
                slots_config_free(c);
                assert_int_equal(rm_tree(bfd, "var"), 0);
                assert_int_equal(rm_tree(bfd, "tmp"), 0);
                assert_int_equal(rm_tree(bfd, "dev"), 0);
                assert_int_equal(rm_tree(bfd, "run"), 0);
                assert_int_equal(unlinkat(bfd, "victim", 0), 0);
        }
        if (failures)
                fail_msg("%d failures", failures);
}

/* The runtime folder of another owner, or a symlink in its place, is never walked. */
static void test_runtime_folder_refused(void **state)
{
        struct slots_config *c = config("");
        struct slots_error e;
        char target[300];

        (void) state;
        if (!need_root())
                skip();
        make_temp_dirs();
        mk("elsewhere", DIR_, SLOT, SLOT, 0700, NULL);
        mk("elsewhere/file", FILE_, SLOT, SLOT, 0600, NULL);
        mk("run/user/4301", DIR_, STRANGER, STRANGER, 0700, NULL);
        mk("run/user/4301/slots-file", FILE_, SLOT, SLOT, 0600, NULL);
        slots_error_clear(&e);
        assert_int_equal(slots_cleanup_temp(bfd, c, &slot, &e), -EPERM);
        assert_string_equal(e.object, "/run/user/4301");
        assert_string_equal(e.reason, "belongs to uid 4400, neither the slot, root nor the service: not walked");
        assert_true(exists("run/user/4301/slots-file"));
        assert_int_equal(rm_tree(bfd, "run/user/4301"), 0);
        snprintf(target, sizeof(target), "%s/elsewhere", base);
        mk("run/user/4301", LINK_, SLOT, SLOT, 0, target);
        slots_error_clear(&e);
        assert_true(slots_cleanup_temp(bfd, c, &slot, &e) < 0);
        assert_string_equal(e.object, "/run/user/4301");
        assert_true(exists("elsewhere/file"));
        slots_config_free(c);
}

/* A mount point of the slot's below /tmp: never entered, the fix names it; the rest is removed. */
static void test_temp_mount(void **state)
{
        struct slots_config *c = config("");
        struct slots_error e;
        char p[512];

        (void) state;
        if (!need_root() || !need_mounts())
                skip();
        make_temp_dirs();
        mk("tmp/mnt", DIR_, SLOT, SLOT, 0700, NULL);
        mk("tmp/slots-file", FILE_, SLOT, SLOT, 0600, NULL);
        snprintf(p, sizeof(p), "%s/tmp/mnt", base);
        assert_int_equal(mount("tmpfs", p, "tmpfs", 0, "mode=0700"), 0);
        assert_int_equal(fchownat(bfd, "tmp/mnt", SLOT, SLOT, 0), 0);
        mk("tmp/mnt/kept", FILE_, SLOT, SLOT, 0600, NULL);
        slots_error_clear(&e);
        assert_int_equal(slots_cleanup_temp(bfd, c, &slot, &e), -EBUSY);
        assert_string_equal(e.object, "/tmp/mnt");
        assert_string_equal(e.fix, "unmount it (umount -l /tmp/mnt)");
        assert_true(exists("tmp/mnt/kept"));
        assert_false(exists("tmp/slots-file"));
        assert_int_equal(umount2(p, 0), 0);
        slots_config_free(c);
}

/* ---- the shared folders ---- */

static void test_shared(void **state)
{
        struct slots_config *c = config(", \"docs_root\": \"/srv/docs\", \"shared_dirs\": [\"shared\", \"media/pub\"]");
        struct slots_error e;
        char outside[300];
        int failures = 0;

        (void) state;
        if (!need_root())
                skip();
        /* No shared folder made yet: nothing to hand over. */
        assert_int_equal(slots_cleanup_shared(bfd, c, &slot, SLOT, SVC, SVC, &e), 0);
        snprintf(outside, sizeof(outside), "%s/outside", base);
        mk("outside", FILE_, 0, 0, 0600, NULL);
        mk_way("srv/docs/shared");
        mk("srv/docs/shared", DIR_, SVC, 4500, 02770, NULL);
        mk("srv/docs/shared/file", FILE_, SLOT, SLOT, 06777, NULL);
        set_acl("srv/docs/shared/file", "u::rwx,u:4400:rwx,g::rwx,m::rwx,o::rwx", ACL_TYPE_ACCESS);
        mk("srv/docs/shared/in-shared-group", FILE_, SLOT, 4500, 0664, NULL);
        mk("srv/docs/shared/dir", DIR_, SLOT, SLOT, 02777, NULL);
        set_acl("srv/docs/shared/dir", "u::rwx,u:4400:rwx,g::rwx,m::rwx,o::rwx", ACL_TYPE_DEFAULT);
        mk("srv/docs/shared/dir/inner", FILE_, SLOT, SLOT, 0644, NULL);
        mk("srv/docs/shared/link", LINK_, SLOT, SLOT, 0, outside);
        mk("srv/docs/shared/fifo", FIFO_, SLOT, SLOT, 0666, NULL);
        mk("srv/docs/shared/theirs", DIR_, STRANGER, STRANGER, 0777, NULL);
        mk("srv/docs/shared/theirs/slots", FILE_, SLOT, SLOT, 0666, NULL);
        mk("srv/docs/shared/theirs/strangers", FILE_, STRANGER, STRANGER, 0666, NULL);
        mk("srv/docs/shared/linked", FILE_, SLOT, SLOT, 0666, NULL);
        assert_int_equal(linkat(bfd, "srv/docs/shared/linked", bfd, "second-name", 0), 0);
        /* The second shared folder is another account's: refused, never walked. */
        mk_way("srv/docs/media/pub");
        mk("srv/docs/media/pub", DIR_, STRANGER, STRANGER, 0777, NULL);
        mk("srv/docs/media/pub/slots", FILE_, SLOT, SLOT, 0666, NULL);

        slots_error_clear(&e);
        assert_int_equal(slots_cleanup_shared(bfd, c, &slot, SLOT, SVC, SVC, &e), -EMLINK);
        /* The first failure is reported; every other entry was still handed over. */
        assert_string_equal(e.object, "/srv/docs/shared/linked");
        assert_string_equal(e.fix, "remove its other names (find / -xdev -samefile /srv/docs/shared/linked)");
        /* Set-id bits and access for others go, ACLs go, a group other than the slot's stays. */
        failures += is("srv/docs/shared/file", SVC, SVC, 0770);
        if (xattrs_of("srv/docs/shared/file") != 0)
                ROW_FAIL("the file kept its ACL");
        failures += is("srv/docs/shared/in-shared-group", SVC, 4500, 0660);
        failures += is("srv/docs/shared/dir", SVC, SVC, 02770);
        if (xattrs_of("srv/docs/shared/dir") != 0)
                ROW_FAIL("the folder kept its default ACL");
        failures += is("srv/docs/shared/dir/inner", SVC, SVC, 0640);
        /* A symlink and a FIFO change owner only, through an fd of their own: never followed. */
        failures += is("srv/docs/shared/link", SVC, SVC, -1);
        failures += is("srv/docs/shared/fifo", SVC, SVC, 0666);
        failures += is("outside", 0, 0, 0600);
        failures += is("srv/docs/shared/theirs", STRANGER, STRANGER, 0777);
        failures += is("srv/docs/shared/theirs/slots", SVC, SVC, 0660);
        failures += is("srv/docs/shared/theirs/strangers", STRANGER, STRANGER, 0666);
        failures += is("srv/docs/shared/linked", SLOT, SLOT, 0666);
        failures += is("srv/docs/media/pub/slots", SLOT, SLOT, 0666);
        /* Once the second name is gone, the file is handed over too; the stranger's folder is still refused. */
        assert_int_equal(unlinkat(bfd, "second-name", 0), 0);
        slots_error_clear(&e);
        assert_int_equal(slots_cleanup_shared(bfd, c, &slot, SLOT, SVC, SVC, &e), -EPERM);
        assert_string_equal(e.object, "/srv/docs/media/pub");
        failures += is("srv/docs/shared/linked", SVC, SVC, 0660);
        slots_config_free(c);
        /* No docs_root: no shared folder. */
        c = config("");
        assert_int_equal(slots_cleanup_shared(bfd, c, &slot, SLOT, SVC, SVC, &e), 0);
        slots_config_free(c);
        if (failures)
                fail_msg("%d failures", failures);
}

/* ---- fresh folders: new inodes, leftovers of a killed run, a parent of another owner ---- */

static void test_folders_fresh(void **state)
{
        static const char *const kinds[] = { ROOT "home/slot01", ROOT "state/slot01", ROOT "run/slot01" };
        struct slots_config *c = config("");
        struct slots_error e;
        ino_t before[3];
        int failures = 0, held;

        (void) state;
        if (!need_root())
                skip();
        make_slot_folders();
        for (size_t i = 0; i < N_ELEM(kinds); i++)
                before[i] = st_of(kinds[i]).st_ino;
        /* A default ACL on the parent would be inherited by a folder made in it. */
        set_acl(ROOT "home", "u::rwx,u:4400:rwx,g::r-x,m::rwx,o::r-x", ACL_TYPE_DEFAULT);
        /* What a killed run leaves under release's own names: a fresh folder, an old one with files. */
        mk(ROOT "home/.slot01.slots-fresh", DIR_, 0, 0, 0, NULL);
        mk(ROOT "state/.slot01.slots-old", DIR_, SLOT, SLOT, 0777, NULL);
        mk(ROOT "state/.slot01.slots-old/left", FILE_, SLOT, SLOT, 0644, NULL);
        held = openat(bfd, kinds[0], O_RDONLY | O_DIRECTORY);
        assert_true(held >= 0);
        slots_error_clear(&e);
        assert_int_equal(slots_cleanup_folders(bfd, c, &slot, SLOT, &e), 0);
        for (size_t i = 0; i < N_ELEM(kinds); i++) {
                failures += is(kinds[i], SLOT, SLOT, 0700);
                if (st_of(kinds[i]).st_ino == before[i])
                        ROW_FAIL("%s kept its inode", kinds[i]);
        }
        if (exists(ROOT "home/.slot01.slots-fresh") || exists(ROOT "state/.slot01.slots-old"))
                ROW_FAIL("a leftover of the killed run is still there");
        if (xattrs_of(ROOT "home/slot01") != 0)
                ROW_FAIL("the fresh home inherited the parent's default ACL");
        /* The old home, held open: removed and taken from the slot, nothing can be added to it. */
        {
                struct stat st;

                assert_int_equal(fstat(held, &st), 0);
                if (st.st_nlink != 0 || st.st_uid != 0 || (st.st_mode & 07777) != 0)
                        ROW_FAIL("the old home is %u:%o with %lu links", (unsigned) st.st_uid, st.st_mode & 07777,
                                 (unsigned long) st.st_nlink);
                if (mkdirat(held, "new", 0700) == 0)
                        ROW_FAIL("a folder was made in the old home through its fd");
                close(held);
        }
        /* A parent another account owns (or may write) is refused: nothing is made there. */
        assert_int_equal(fchownat(bfd, ROOT "run", STRANGER, 0, 0), 0);
        slots_error_clear(&e);
        assert_int_equal(slots_cleanup_folders(bfd, c, &slot, SLOT, &e), -EPERM);
        assert_string_equal(e.object, "/var/lib/slots/web/run");
        assert_non_null(strstr(e.fix, "chown root:root /var/lib/slots/web/run"));
        if (exists(ROOT "run/.slot01.slots-fresh"))
                ROW_FAIL("a fresh folder was made in the refused parent");
        assert_int_equal(fchownat(bfd, ROOT "run", 0, 0, 0), 0);
        assert_int_equal(fchmodat(bfd, ROOT "run", 0777, 0), 0);
        assert_int_equal(slots_cleanup_folders(bfd, c, &slot, SLOT, &e), -EPERM);
        assert_int_equal(fchmodat(bfd, ROOT "run", 0755, 0), 0);
        /* Again: the same result (each part is safe to repeat). */
        assert_int_equal(slots_cleanup_folders(bfd, c, &slot, SLOT, &e), 0);
        if (slots_check_folders(bfd, c, "slot01", SLOT, SLOT, false, &e) != 0)
                ROW_FAIL("check after the reset: %s: %s", e.object, e.reason);
        slots_config_free(c);
        if (failures)
                fail_msg("%d failures", failures);
}

/* A home that is a mount of its own cannot be swapped: it is emptied and set back in place. */
static void test_folders_mount_root(void **state)
{
        struct slots_config *c = config("");
        struct slots_error e;
        char p[512];
        ino_t ino;

        (void) state;
        if (!need_root() || !need_mounts())
                skip();
        make_slot_folders();
        snprintf(p, sizeof(p), "%s/" ROOT "home/slot01", base);
        assert_int_equal(mount("tmpfs", p, "tmpfs", 0, "mode=0777"), 0);
        mk(ROOT "home/slot01/left", FILE_, SLOT, SLOT, 0600, NULL);
        ino = st_of(ROOT "home/slot01").st_ino;
        slots_error_clear(&e);
        assert_int_equal(slots_cleanup_folders(bfd, c, &slot, SLOT, &e), 0);
        assert_int_equal(is(ROOT "home/slot01", SLOT, SLOT, 0700), 0);
        assert_int_equal(entries_in(ROOT "home/slot01"), 0);
        assert_true(st_of(ROOT "home/slot01").st_ino == ino);
        assert_false(exists(ROOT "home/.slot01.slots-fresh"));
        assert_int_equal(slots_check_folders(bfd, c, "slot01", SLOT, SLOT, false, &e), 0);
        assert_int_equal(umount2(p, 0), 0);
        slots_config_free(c);
}

/* ---- the set-id sweep ---- */

struct seen_list {
        char names[16][128];
        size_t n;
};

static void seen_one(void *data, const char *path, uid_t uid, gid_t gid, mode_t mode)
{
        struct seen_list *l = data;

        (void) uid;
        (void) gid;
        (void) mode;
        if (l->n < 16)
                snprintf(l->names[l->n++], sizeof(l->names[0]), "%s", path);
}

static void test_setid_sweep(void **state)
{
        static const struct {
                const char *rel;
                uid_t uid;
                gid_t gid;
                mode_t mode, after;
        } rows[] = {
                /* the slot's, in another slot's home, state and run, in docs_root and the temp folders */
                { ROOT "home/slot02/drop/uid", SLOT, SLOT, 04755, 0755 },
                { ROOT "state/slot02/gid", SLOT, SLOT, 02755, 0755 },
                { ROOT "run/slot02/both", SLOT, 4500, 06711, 0711 },
                { "srv/docs/_users/bob/deep/uid", SLOT, SLOT, 04700, 0700 },
                { "tmp/s2/uid", SLOT, SLOT, 04755, 0755 },
                { "dev/shm/uid", SLOT, SLOT, 04755, 0755 },
                { "run/user/4402/uid", SLOT, SLOT, 04755, 0755 },
                /* set-gid of the slot's group, whoever owns it */
                { ROOT "home/slot02/drop/gid-theirs", STRANGER, SLOT, 02755, 0755 },
                /* left alone: others' set-id files, the slot's group without set-gid, plain files */
                { ROOT "home/slot02/drop/theirs", STRANGER, STRANGER, 04755, 04755 },
                { ROOT "home/slot02/drop/uid-of-theirs-group-slot", STRANGER, SLOT, 04755, 04755 },
                { "srv/docs/_users/bob/root", 0, 0, 04755, 04755 },
                { "tmp/s2/plain", SLOT, SLOT, 0755, 0755 },
        };
        struct slots_config *c = config(", \"docs_root\": \"/srv/docs\"");
        uid_t uids[] = { SLOT };
        gid_t gids[] = { SLOT };
        struct seen_list l = { 0 };
        struct slots_setid_sweep s = { .uids = uids, .n_uids = 1, .gids = gids, .n_gids = 1, .svc_uid = SVC,
                                       .svc_gid = SVC, .seen = seen_one, .data = &l };
        struct slots_error e;
        int failures = 0;
        size_t want = 0;

        (void) state;
        if (!need_root())
                skip();
        make_temp_dirs();
        make_slot_folders();
        mk(ROOT "home/slot02", DIR_, STRANGER, STRANGER, 0711, NULL);
        mk(ROOT "home/slot02/drop", DIR_, STRANGER, STRANGER, 0777, NULL);
        mk(ROOT "state/slot02", DIR_, STRANGER, STRANGER, 0777, NULL);
        mk(ROOT "run/slot02", DIR_, STRANGER, STRANGER, 0777, NULL);
        mk_way("srv/docs/_users/bob/deep/x");
        assert_int_equal(fchownat(bfd, "srv/docs", SVC, SVC, 0), 0);
        mk("tmp/s2", DIR_, STRANGER, STRANGER, 0777, NULL);
        mk("run/user/4402", DIR_, STRANGER, STRANGER, 0700, NULL);
        for (size_t i = 0; i < N_ELEM(rows); i++) {
                mk(rows[i].rel, FILE_, rows[i].uid, rows[i].gid, rows[i].mode, NULL);
                want += rows[i].after != rows[i].mode;
        }
        /* A symlink of the slot's to a set-uid file of the slot's outside: the link is not followed. */
        mk("outside-setuid", FILE_, SLOT, SLOT, 04755, NULL);
        {
                char target[300];

                snprintf(target, sizeof(target), "%s/outside-setuid", base);
                mk("tmp/s2/link", LINK_, SLOT, SLOT, 0, target);
        }
        /* Finding only: nothing changes. */
        slots_error_clear(&e);
        assert_int_equal(slots_cleanup_setid(bfd, c, &s, &e), 0);
        if (s.files != want)
                ROW_FAIL("found %lu, want %zu", s.files, want);
        for (size_t i = 0; i < N_ELEM(rows); i++)
                failures += is(rows[i].rel, rows[i].uid, rows[i].gid, rows[i].mode);
        /* Clearing: exactly the bits of what carries the slot, counted and named. */
        s.clear = true;
        l.n = 0;
        assert_int_equal(slots_cleanup_setid(bfd, c, &s, &e), 0);
        if (s.files != want || l.n != want)
                ROW_FAIL("cleared %lu (%zu named), want %zu", s.files, l.n, want);
        for (size_t i = 0; i < N_ELEM(rows); i++)
                failures += is(rows[i].rel, rows[i].uid, rows[i].gid, rows[i].after);
        failures += is("outside-setuid", SLOT, SLOT, 04755);
        /* Again: nothing left to clear. */
        assert_int_equal(slots_cleanup_setid(bfd, c, &s, &e), 0);
        if (s.files != 0)
                ROW_FAIL("a second sweep cleared %lu", s.files);
        /* uid 0 is refused. */
        uids[0] = 0;
        assert_int_equal(slots_cleanup_setid(bfd, c, &s, &e), -EINVAL);
        slots_config_free(c);
        if (failures)
                fail_msg("%d failures", failures);
}

/* ---- what system services record per uid ---- */

/* The slot's journal files (active, archived, dirty) in every machine folder and its coredumps go; others' stay. */
static void test_records(void **state)
{
        static const char mid[] = "var/log/journal/0123456789abcdef0123456789abcdef";
        static const char *const gone[] = {
                "user-4301.journal", "user-4301@0123-0000000000000001-0005f1.journal", "user-4301.journal~",
                "user-4301@0005f1e2-00c3b9a1.journal~",
        };
        static const char *const kept[] = {
                "user-43010.journal", "user-430.journal", "system.journal", "user-4302.journal",
                "user-4301.journalx", "user-4301",
        };
        static const struct there dumps[] = {
                { "var/lib/systemd/coredump/core.sleep.4301.0123456789abcdef0123456789abcdef.77.1700000000000000.zst",
                  false },
                { "var/lib/systemd/coredump/core.a.b.c.4301.0123456789abcdef0123456789abcdef.78.1700000000000000",
                  false },
                { "var/lib/systemd/coredump/core.sleep.4302.0123456789abcdef0123456789abcdef.77.1700000000000000.zst",
                  true },
                { "var/lib/systemd/coredump/core.4301.0123456789abcdef0123456789abcdef.77.1700000000000000", true },
                { "var/lib/systemd/coredump/core.x.43010.0123456789abcdef0123456789abcdef.77.1700000000000000", true },
                { "run/log/journal/0123456789abcdef0123456789abcdef/user-4301.journal", false },
        };
        char rel[256];
        struct slots_error e;
        int failures = 0;

        (void) state;
        if (!need_root())
                skip();
        /* Nothing there at all: nothing to do. */
        assert_int_equal(slots_cleanup_records(bfd, &slot, NULL, NULL, &e), 0);
        mk_way("var/lib/systemd/coredump/x");
        mk_way("run/log/journal/0123456789abcdef0123456789abcdef/x");
        for (int ns = 0; ns < 2; ns++)
                for (size_t i = 0; i < N_ELEM(gone) + N_ELEM(kept); i++) {
                        snprintf(rel, sizeof(rel), "%s%s/%s", mid, ns ? ".web" : "",
                                 i < N_ELEM(gone) ? gone[i] : kept[i - N_ELEM(gone)]);
                        mk_way(rel);
                        mk(rel, FILE_, 0, 0, 0640, NULL);
                }
        for (size_t i = 0; i < N_ELEM(dumps); i++)
                mk(dumps[i].rel, FILE_, 0, 0, 0640, NULL);
        all_there(dumps, N_ELEM(dumps));
        slots_error_clear(&e);
        assert_int_equal(slots_cleanup_records(bfd, &slot, NULL, NULL, &e), 0);
        failures += are_there(dumps, N_ELEM(dumps));
        for (int ns = 0; ns < 2; ns++)
                for (size_t i = 0; i < N_ELEM(gone) + N_ELEM(kept); i++) {
                        snprintf(rel, sizeof(rel), "%s%s/%s", mid, ns ? ".web" : "",
                                 i < N_ELEM(gone) ? gone[i] : kept[i - N_ELEM(gone)]);
                        if (exists(rel) != (i >= N_ELEM(gone)))
                                ROW_FAIL("%s is %s", rel, exists(rel) ? "still there" : "gone");
                }
        assert_int_equal(failures, 0);
        assert_int_equal(slots_cleanup_records(bfd, &root_pw, NULL, NULL, &e), -EINVAL);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
                TEST(test_refuses_root),
                TEST(test_jobs),
                TEST(test_jobs_mount),
                TEST(test_folders_reset),
                TEST(test_folders_refused),
                TEST(test_check_folders),
                TEST(test_temp),
                TEST(test_mail),
                TEST(test_runtime_folder_refused),
                TEST(test_temp_mount),
                TEST(test_shared),
                TEST(test_folders_fresh),
                TEST(test_folders_mount_root),
                TEST(test_setid_sweep),
                TEST(test_records),
        };

        fstree_init();
        return cmocka_run_group_tests(tests, NULL, NULL);
}
