/*
 * The symlink race at the opens that look before they open (issue 19): a name is checked
 * with fstatat, then opened.  A hostile writer of the folder can swap a symlink in between;
 * only O_NOFOLLOW on the open itself stops it being followed.  fstatat is wrapped at link
 * time (-Wl,--wrap=fstatat): after the real call sees the regular file (or nothing), the wrap
 * renames a symlink to a victim over the name, exactly inside the window.
 * statx is wrapped too (-Wl,--wrap=statx) for release's temp walk and its at spool, which look
 * with statx and then open: the wrap renames another account's folder over the slot's folder there.
 * And mkdirat (-Wl,--wrap=mkdirat) for slots_ensure_dir, which makes a folder, finds the name
 * taken (EEXIST) and opens what is there: the wrap puts a symlink to a victim folder there.
 */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdbool.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>

#include "cleanup.h"
#include "config.h"
#include "fsutil.h"
#include "nss.h"
#include "replace.h"
#include "store.h"

static char dir[256];
static int dirfd_ = -1;
static const char *swap_name;   /* the name to swap for a symlink at the next fstatat of it */
static int swaps;

static const char *swap_folder;         /* the folder to swap for a symlink to victim-dir next time */

/* The attacker's move on a folder: moved away, a symlink to the victim folder in its place. */
static void swap_folder_now(int fd, const char *name)
{
        swap_folder = NULL;
        (void) unlinkat(fd, ".moved", AT_REMOVEDIR);
        if (renameat(fd, name, fd, ".moved") == 0 && symlinkat("victim-dir", fd, ".swapd") == 0 &&
            renameat(fd, ".swapd", fd, name) == 0)
                swaps++;
}

int __real_fstatat(int fd, const char *name, struct stat *st, int flags);
int __wrap_fstatat(int fd, const char *name, struct stat *st, int flags);

int __wrap_fstatat(int fd, const char *name, struct stat *st, int flags)
{
        int r = __real_fstatat(fd, name, st, flags);
        int saved = errno;

        if (swap_name && strcmp(name, swap_name) == 0) {
                /* The attacker's move: a symlink to the victim, renamed over the checked name. */
                swap_name = NULL;
                if (symlinkat("victim", fd, ".swap") == 0 && renameat(fd, ".swap", fd, name) == 0)
                        swaps++;
        }
        if (swap_folder && strcmp(name, swap_folder) == 0)
                swap_folder_now(fd, name);
        errno = saved;
        return r;
}

int __real_mkdirat(int fd, const char *name, mode_t mode);
int __wrap_mkdirat(int fd, const char *name, mode_t mode);

int __wrap_mkdirat(int fd, const char *name, mode_t mode)
{
        int r = __real_mkdirat(fd, name, mode);
        int saved = errno;

        if (swap_folder && strcmp(name, swap_folder) == 0)
                swap_folder_now(fd, name);
        errno = saved;
        return r;
}

static const char *swap_dir;    /* the folder to swap for swap_with (an fd of rootfd) at its next statx */
static int swap_rootfd = -1;
static const char *swap_with;

int __real_statx(int fd, const char *name, int flags, unsigned mask, struct statx *sx);
int __wrap_statx(int fd, const char *name, int flags, unsigned mask, struct statx *sx);

int __wrap_statx(int fd, const char *name, int flags, unsigned mask, struct statx *sx)
{
        int r = __real_statx(fd, name, flags, mask, sx);
        int saved = errno;

        if (swap_dir && strcmp(name, swap_dir) == 0) {
                /* A helper that still runs moves the slot's folder away and another's in its place. */
                swap_dir = NULL;
                if (renameat(fd, name, fd, ".gone") == 0 && renameat(swap_rootfd, swap_with, fd, name) == 0)
                        swaps++;
        }
        errno = saved;
        return r;
}

static void write_file(const char *name, const char *text, mode_t mode)
{
        int fd = openat(dirfd_, name, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW, mode);

        assert_true(fd >= 0);
        assert_int_equal(write(fd, text, strlen(text)), (ssize_t) strlen(text));
        close(fd);
}

static int setup(void **state)
{
        (void) state;
        snprintf(dir, sizeof(dir), "/tmp/slots-races.XXXXXX");
        if (!mkdtemp(dir) || chmod(dir, 0755) < 0)
                return -1;
        dirfd_ = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        return dirfd_ < 0 ? -1 : 0;
}

static int teardown(void **state)
{
        char cmd[300];

        (void) state;
        close(dirfd_);
        snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
        return system(cmd) == 0 ? 0 : -1;
}

/* Before each case: a regular "slots.json" and the victim the symlink points at. */
static int fresh(void **state)
{
        (void) state;
        (void) unlinkat(dirfd_, "slots.json", 0);
        (void) unlinkat(dirfd_, "slots.json.lock", 0);
        write_file("slots.json", "{\"version\": 1, \"slots\": {}}\n", 0640);
        write_file("victim", "VICTIM\n", 0600);
        swaps = 0;
        return 0;
}

static void assert_victim_untouched(void)
{
        struct stat st;
        char buf[32] = "";
        int fd = openat(dirfd_, "victim", O_RDONLY | O_NOFOLLOW);

        assert_true(fd >= 0);
        assert_int_equal(fstat(fd, &st), 0);
        assert_int_equal(st.st_mode & 07777, 0600);
        assert_int_equal(read(fd, buf, sizeof(buf) - 1), 7);
        assert_string_equal(buf, "VICTIM\n");
        close(fd);
}

/*
 * slots_ensure_dir (slots-provision's folders) has two windows between a look by name and the
 * open: mkdirat finding the name taken (SLOTS_ENSURE_MKDIR_FIRST), and fstatat by name finding a
 * folder to change (SLOTS_ENSURE_NO_FD).  A symlink to a victim folder renamed in there is
 * refused by the open (-ELOOP), and the victim keeps its owner and mode.  (Without either flag
 * the look is the O_NOFOLLOW open itself: no window.)
 */
static void ensure_dir_swapped(void **state)
{
        (void) state;
        static const struct {
                const char *pass;
                unsigned flags;
        } passes[] = {
                { "mkdir first", SLOTS_ENSURE_MKDIR_FIRST },
                { "look by name", SLOTS_ENSURE_NO_FD },
        };

        for (size_t p = 0; p < sizeof(passes) / sizeof(passes[0]); p++) {
                struct stat before, after;
                struct slots_dir_found found;
                int fd;

                (void) unlinkat(dirfd_, "home", 0);
                (void) unlinkat(dirfd_, ".moved", AT_REMOVEDIR);
                (void) unlinkat(dirfd_, "victim-dir", AT_REMOVEDIR);
                assert_int_equal(mkdirat(dirfd_, "victim-dir", 0700), 0);
                assert_int_equal(mkdirat(dirfd_, "home", 0700), 0);
                assert_int_equal(fstatat(dirfd_, "victim-dir", &before, AT_SYMLINK_NOFOLLOW), 0);
                swaps = 0;
                swap_folder = "home";
                fd = slots_ensure_dir(dirfd_, "home", 4242, 4243, 02770, passes[p].flags, &found);
                swap_folder = NULL;
                if (fd >= 0)
                        close(fd);
                assert_int_equal(swaps, 1);
                if (fd != -ELOOP)
                        fail_msg("%s pass: a symlink swapped in gave %d, not -ELOOP", passes[p].pass, fd);
                assert_int_equal(fstatat(dirfd_, "victim-dir", &after, AT_SYMLINK_NOFOLLOW), 0);
                assert_int_equal(after.st_uid, before.st_uid);
                assert_int_equal(after.st_gid, before.st_gid);
                assert_int_equal(after.st_mode & 07777, 0700);
        }
}

/* slots_open_regular: the pre-check saw a regular file; the open must not follow the link. */
static void open_regular_swapped(void **state)
{
        struct stat st;
        int fd;

        (void) state;
        swap_name = "slots.json";
        fd = slots_open_regular(dirfd_, "slots.json", &st);
        assert_int_equal(swaps, 1);
        if (fd >= 0)
                close(fd);
        assert_int_equal(fd, -ELOOP);
        assert_victim_untouched();
}

/* The same without a race: a symlink there from the start is refused by the pre-check. */
static void open_regular_symlink(void **state)
{
        struct stat st;

        (void) state;
        assert_int_equal(unlinkat(dirfd_, "slots.json", 0), 0);
        assert_int_equal(symlinkat("victim", dirfd_, "slots.json"), 0);
        assert_int_equal(slots_open_regular(dirfd_, "slots.json", &st), -ELOOP);
}

/* The table as slots-admin opens it: the swap is refused as a symlink, nothing of the victim read. */
static void store_open_swapped(void **state)
{
        struct slots_store s;
        struct slots_error e;
        char path[300];
        int r;

        (void) state;
        snprintf(path, sizeof(path), "%s/slots.json", dir);
        slots_error_clear(&e);
        swap_name = "slots.json";
        r = slots_store_open(&s, AT_FDCWD, path, 3, getgid(), 0, &e);
        assert_int_equal(swaps, 1);
        if (r == 0)
                slots_store_close(&s);
        assert_int_equal(r, -ELOOP);
        assert_non_null(strstr(e.reason, "symlink"));
        assert_victim_untouched();
}

/* The lock file: checked with fstatat, then opened O_CREAT; a swapped symlink is never followed. */
static void lock_swapped(void **state)
{
        struct slots_error e;
        int fd;

        (void) state;
        write_file("slots.json.lock", "", 0600);
        slots_error_clear(&e);
        swap_name = "slots.json.lock";
        fd = slots_lock_take(dirfd_, "slots.json.lock", "slots.json", &e);
        assert_int_equal(swaps, 1);
        if (fd >= 0)
                close(fd);
        assert_true(fd < 0);
        assert_non_null(strstr(e.reason, "symlink"));
        assert_victim_untouched();
}

/* The replace: the old file's owner, mode and ACL are copied from what is opened; never the victim's. */
static void replace_swapped(void **state)
{
        const struct slots_file_mode def = { getuid(), getgid(), 0640 };
        struct slots_error e;
        int r;

        (void) state;
        slots_error_clear(&e);
        swap_name = "slots.json";
        r = slots_replace(dirfd_, "slots.json", "slots.json", "new\n", 4, &def, 0, &e);
        assert_int_equal(swaps, 1);
        assert_int_equal(r, -ELOOP);
        assert_victim_untouched();
}

static int clean_temp(int rootfd, const struct slots_pw *slot, struct slots_error *e)
{
        struct slots_config c = { 0 };

        return slots_cleanup_temp(rootfd, &c, slot, e);
}

/*
 * A release walk saw the slot's folder <parent>/x, then x became root's folder with a file;
 * the walk must not empty or remove what it did not look at.  Needs root (the slot's folder
 * has another owner, and uid 0 is never cleaned up after).
 */
static void slot_folder_swapped(const char *parent, int (*clean)(int rootfd, const struct slots_pw *slot,
                                                                 struct slots_error *e))
{
        struct slots_pw slot = { .name = (char *) "slot42", .uid = 4242, .gid = 4242 };
        struct slots_error e;
        char img[300], cmd[1024], x[200], kept[220];
        struct stat st;
        int rootfd, fd;

        if (geteuid() != 0) {
                print_message("skipped: the swapped folder needs root (other owners)\n");
                skip();
        }
        /* Inside the group's scratch folder, so a failed assert leaves nothing behind: teardown removes it. */
        snprintf(img, sizeof(img), "%s/img.XXXXXX", dir);
        assert_non_null(mkdtemp(img));
        snprintf(cmd, sizeof(cmd), "mkdir -p -m 0755 '%s/%s' && chmod 01777 '%s/%s'", img, parent, img, parent);
        assert_int_equal(system(cmd), 0);
        rootfd = open(img, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        assert_true(rootfd >= 0);
        snprintf(x, sizeof(x), "%s/x", parent);
        snprintf(kept, sizeof(kept), "%s/x/precious", parent);
        assert_int_equal(mkdirat(rootfd, x, 0700), 0);
        assert_int_equal(fchownat(rootfd, x, 4242, 4242, 0), 0);
        assert_int_equal(mkdirat(rootfd, "victim", 0755), 0);
        fd = openat(rootfd, "victim/precious", O_WRONLY | O_CREAT | O_EXCL, 0600);
        assert_true(fd >= 0);
        close(fd);
        swaps = 0;
        swap_rootfd = rootfd;
        swap_with = "victim";
        swap_dir = "x";
        slots_error_clear(&e);
        (void) clean(rootfd, &slot, &e);
        assert_int_equal(swaps, 1);
        /* root's folder, now at <parent>/x, is still there with its file. */
        assert_int_equal(fstatat(rootfd, kept, &st, AT_SYMLINK_NOFOLLOW), 0);
        assert_int_equal(fstatat(rootfd, x, &st, AT_SYMLINK_NOFOLLOW), 0);
        assert_int_equal(st.st_uid, 0);
        close(rootfd);
        snprintf(cmd, sizeof(cmd), "rm -rf '%s'", img);
        assert_int_equal(system(cmd), 0);
}

/* Release's temp walk (the walker's look, then its open). */
static void temp_walk_swapped(void **state)
{
        (void) state;
        slot_folder_swapped("tmp", clean_temp);
}

/* Release's at spool: a folder of the slot's there, looked at with statx, then opened. */
static void at_spool_swapped(void **state)
{
        (void) state;
        slot_folder_swapped("var/spool/cron/atjobs", slots_cleanup_jobs);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
                cmocka_unit_test_setup(open_regular_swapped, fresh),
                cmocka_unit_test_setup(open_regular_symlink, fresh),
                cmocka_unit_test_setup(store_open_swapped, fresh),
                cmocka_unit_test_setup(lock_swapped, fresh),
                cmocka_unit_test_setup(replace_swapped, fresh),
                cmocka_unit_test(temp_walk_swapped),
                cmocka_unit_test(at_spool_swapped),
                cmocka_unit_test(ensure_dir_swapped),
        };

        return cmocka_run_group_tests(tests, setup, teardown);
}
