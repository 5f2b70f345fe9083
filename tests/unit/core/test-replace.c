/*
 * The owner-preserving replace (replace.c) and the lock, in a scratch folder:
 * owner, group, mode and ACL kept; symlinks and FIFOs refused; and failure
 * injected at write, fsync, fchown, fchmod and renameat (linked with
 * -Wl,--wrap=...) leaves the old file byte-identical, with its owner and mode,
 * and no temp file behind.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/acl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <acl/libacl.h>

#include <cmocka.h>

#include "fsutil.h"
#include "replace.h"
#include "scratch.h"
#include "unit.h"

static struct slots_file_mode def_mode(mode_t mode)
{
        return (struct slots_file_mode){ .uid = owner_uid(), .gid = owner_gid(), .mode = mode };
}

/* ---- owner, group, mode and ACL kept ---- */

/* True when the effective capability set holds cap (see capabilities(7)). */
static bool have_cap(unsigned cap)
{
        char line[256];
        unsigned long long eff = 0;
        bool found = false;
        FILE *f = fopen("/proc/self/status", "r");

        if (!f)
                return false;
        while (!found && fgets(line, sizeof(line), f))
                found = sscanf(line, "CapEff: %llx", &eff) == 1;
        fclose(f);
        return found && (eff & (1ULL << cap));
}

#define CAP_FSETID_BIT 4

static const mode_t modes[] = { 0600, 0644, 0640, 0400, 0660, 02750, 04755 };

/*
 * Without CAP_FSETID the kernel clears set-id bits when the temp is written
 * (after its fchmod): the replace must then refuse, not drop them silently.
 */
static void replace_keeps(uid_t uid, gid_t gid)
{
        bool fsetid = have_cap(CAP_FSETID_BIT);

        for (size_t i = 0; i < N_ELEM(modes); i++) {
                const struct slots_file_mode def = { .uid = 0, .gid = 0, .mode = 0777 };
                struct slots_error e;
                struct snap before;
                char name[32], why[256];
                int r;

                snprintf(name, sizeof(name), "t%04o", modes[i]);
                make_file(name, "old\n", uid, gid, modes[i]);
                snapshot(name, &before);
                if ((before.st.st_mode & 07777) != modes[i]) {
                        /* chmod itself dropped a set-id bit (no CAP_FSETID, group not ours) */
                        print_message("note: %s cannot be made here; row not checked\n", name);
                        continue;
                }
                slots_error_clear(&e);
                r = slots_replace(dfd, name, name, "new content\n", 12, &def, 0, &e);
                if ((modes[i] & 06000) && !fsetid) {
                        if (r != -EPERM)
                                fail_msg("%s without CAP_FSETID: expected -EPERM, got %d", name, r);
                        assert_non_null(strstr(e.reason, "came out as"));
                        if (!unchanged(name, &before, why, sizeof(why)))
                                fail_msg("%s: %s", name, why);
                        continue;
                }
                if (r != 0)
                        fail_msg("%s: %s", name, e.reason);
                assert_file(name, "new content\n", uid, gid, modes[i]);
        }
        assert_dir("t0400,t0600,t0640,t0644,t0660,t2750,t4755");
}

/* Another owner and group (needs root to chown). */
static void test_keeps_foreign_owner(void **state)
{
        (void) state;
        if (!is_root()) {
                print_message("skipped: chown to 4242:4243 needs root\n");
                skip();
        }
        replace_keeps(4242, 4243);
}

/* The caller's own file: mode kept, for any user. */
static void test_keeps_mode(void **state)
{
        (void) state;
        replace_keeps(geteuid(), getegid());
}

static void test_keeps_acl(void **state)
{
        static const char text[] = "u::rw-,u:4242:r--,g::r--,g:4244:r--,m::r--,o::---";
        struct slots_file_mode def = def_mode(0600);
        struct slots_error e;
        char path[512];
        acl_t want, got;
        char *got_text;

        (void) state;
        make_file("acl.json", "old\n", owner_uid(), owner_gid(), 0640);
        snprintf(path, sizeof(path), "%s/acl.json", dir);
        want = acl_from_text(text);
        assert_non_null(want);
        if (acl_set_file(path, ACL_TYPE_ACCESS, want) < 0) {
                int err = errno;
                acl_free(want);
                if (err == ENOTSUP || err == EOPNOTSUPP) {
                        print_message("skipped: %s does not support POSIX ACLs\n", dir);
                        skip();
                }
                fail_msg("acl_set_file: %s", strerror(err));
        }
        assert_int_equal(slots_replace(dfd, "acl.json", "acl.json", "new\n", 4, &def, 0, &e), 0);
        assert_file("acl.json", "new\n", owner_uid(), owner_gid(), 0640);
        got = acl_get_file(path, ACL_TYPE_ACCESS);
        assert_non_null(got);
        got_text = acl_to_any_text(got, NULL, ',', TEXT_ABBREVIATE);
        if (acl_cmp(want, got) != 0)
                fail_msg("ACL now %s, expected %s", got_text, text);
        assert_non_null(strstr(got_text, "u:4242:r--"));
        acl_free(got_text);
        acl_free(got);
        acl_free(want);
        assert_dir("acl.json");
}

/* A file without an extended ACL gets none. */
static void test_no_acl_added(void **state)
{
        struct slots_file_mode def = def_mode(0600);
        struct slots_error e;
        char path[512];

        (void) state;
        make_file("plain", "old\n", owner_uid(), owner_gid(), 0640);
        assert_int_equal(slots_replace(dfd, "plain", "plain", "new\n", 4, &def, 0, &e), 0);
        snprintf(path, sizeof(path), "%s/plain", dir);
        assert_int_not_equal(acl_extended_file(path), 1);
}

/* A missing file is created with the default owner and mode, whatever the umask. */
static void test_missing_created(void **state)
{
        const struct slots_file_mode def = def_mode(0640);
        struct slots_error e;
        mode_t old = umask(0077);
        int r;

        (void) state;
        r = slots_replace(dfd, "new.json", "new.json", "{}\n", 3, &def, 0, &e);
        umask(old);
        assert_int_equal(r, 0);
        assert_file("new.json", "{}\n", owner_uid(), owner_gid(), 0640);
        assert_dir("new.json");
}

/* FORCE_MODE repairs an existing file to the default owner and mode. */
static void test_force_mode(void **state)
{
        const struct slots_file_mode def = def_mode(0640);
        struct slots_error e;

        (void) state;
        make_file("t", "old\n", geteuid(), getegid(), 0666);
        assert_int_equal(slots_replace(dfd, "t", "t", "new\n", 4, &def, SLOTS_REPLACE_FORCE_MODE, &e), 0);
        assert_file("t", "new\n", owner_uid(), owner_gid(), 0640);
}

/* BACKUP keeps the old content as "<name>-" with the old owner and mode. */
static void test_backup(void **state)
{
        const struct slots_file_mode def = def_mode(0600);
        struct slots_error e;

        (void) state;
        make_file("passwd", "old\n", owner_uid(), owner_gid(), 0644);
        assert_int_equal(slots_replace(dfd, "passwd", "passwd", "new\n", 4, &def, SLOTS_REPLACE_BACKUP, &e), 0);
        assert_file("passwd", "new\n", owner_uid(), owner_gid(), 0644);
        assert_file("passwd-", "old\n", owner_uid(), owner_gid(), 0644);
        assert_dir("passwd,passwd-");
        /* again: the backup is the previous content */
        assert_int_equal(slots_replace(dfd, "passwd", "passwd", "newer\n", 6, &def, SLOTS_REPLACE_BACKUP, &e), 0);
        assert_file("passwd-", "new\n", owner_uid(), owner_gid(), 0644);
        assert_file("passwd", "newer\n", owner_uid(), owner_gid(), 0644);
        assert_dir("passwd,passwd-");
}

/* Writes are retried after EINTR and short writes. */
static void test_write_retries(void **state)
{
        const struct slots_file_mode def = def_mode(0640);
        static const char text[] = "0123456789abcdefghijklmnopqrstuvwxyz\n";
        struct slots_error e;

        (void) state;
        make_file("t", "old\n", owner_uid(), owner_gid(), 0640);
        inj_arm("write", 1, EINTR);
        assert_int_equal(slots_replace(dfd, "t", "t", text, strlen(text), &def, 0, &e), 0);
        assert_int_equal(inj.fired, 1);
        assert_file("t", text, owner_uid(), owner_gid(), 0640);
        inj_reset();
        inj.short_write = 5;
        assert_int_equal(slots_replace(dfd, "t", "t", "short writes add up\n", 20, &def, 0, &e), 0);
        inj_reset();
        assert_file("t", "short writes add up\n", owner_uid(), owner_gid(), 0640);
        assert_dir("t");
}

/* ---- what is not a regular file is refused and left alone ---- */

static void test_symlink_refused(void **state)
{
        const struct slots_file_mode def = def_mode(0640);
        struct snap before;
        struct slots_error e;
        char link[64], why[256];
        ssize_t n;

        (void) state;
        make_file("real", "real content\n", owner_uid(), owner_gid(), 0640);
        snapshot("real", &before);
        assert_int_equal(symlinkat("real", dfd, "table.json"), 0);
        assert_int_equal(symlinkat("nowhere", dfd, "dangling"), 0);

        slots_error_clear(&e);
        assert_int_equal(slots_replace(dfd, "table.json", "table.json", "new\n", 4, &def, 0, &e), -ELOOP);
        assert_non_null(strstr(e.reason, "symlink"));
        assert_string_equal(e.object, "table.json");
        n = readlinkat(dfd, "table.json", link, sizeof(link) - 1);
        assert_int_equal(n, 4);
        link[n] = '\0';
        assert_string_equal(link, "real");
        if (!unchanged("real", &before, why, sizeof(why)))
                fail_msg("the link's target: %s", why);

        assert_int_equal(slots_replace(dfd, "dangling", "dangling", "new\n", 4, &def, 0, &e), -ELOOP);
        assert_dir("dangling,real,table.json");
}

static void on_alarm(int sig)
{
        static const char msg[] = "blocked on a FIFO\n";

        (void) sig;
        (void) !__real_write(2, msg, sizeof(msg) - 1);
        _exit(1);
}

static void test_fifo_refused(void **state)
{
        const struct slots_file_mode def = def_mode(0640);
        struct slots_error e;
        struct stat st;

        (void) state;
        assert_int_equal(mkfifoat(dfd, "fifo", 0644), 0);
        assert_int_equal(mkdirat(dfd, "d", 0755), 0);
        alarm(10);
        assert_int_equal(slots_replace(dfd, "fifo", "fifo", "new\n", 4, &def, 0, &e), -EINVAL);
        alarm(0);
        assert_non_null(strstr(e.reason, "not a regular file"));
        assert_int_equal(fstatat(dfd, "fifo", &st, AT_SYMLINK_NOFOLLOW), 0);
        assert_true(S_ISFIFO(st.st_mode));
        assert_int_equal(slots_replace(dfd, "d", "d", "new\n", 4, &def, 0, &e), -EINVAL);
        assert_dir("d,fifo");
}

/* ---- failure injection ---- */

static const struct fault {
        const char *fn;
        int at;                 /* which call of fn fails */
        int err;
        unsigned flags;
        bool backup_after;      /* "<name>-" exists afterwards (renamed before the failure) */
} faults[] = {
        { "write", 1, EIO, 0, false },
        { "write", 1, ENOSPC, 0, false },
        { "write", 1, EPERM, 0, false },
        { "write", 1, EDQUOT, 0, false },
        { "fsync", 1, EIO, 0, false },
        { "fsync", 1, ENOSPC, 0, false },
        { "fsync", 1, EPERM, 0, false },
        { "fsync", 1, EDQUOT, 0, false },
        { "fchown", 1, EIO, 0, false },
        { "fchown", 1, ENOSPC, 0, false },
        { "fchown", 1, EPERM, 0, false },
        { "fchown", 1, EDQUOT, 0, false },
        { "fchmod", 1, EIO, 0, false },
        { "fchmod", 1, ENOSPC, 0, false },
        { "fchmod", 1, EPERM, 0, false },
        { "fchmod", 1, EDQUOT, 0, false },
        { "renameat", 1, EIO, 0, false },
        { "renameat", 1, ENOSPC, 0, false },
        { "renameat", 1, EPERM, 0, false },
        { "renameat", 1, EDQUOT, 0, false },
        /* with a backup: the backup's temp is written first, the main temp second */
        { "write", 1, EIO, SLOTS_REPLACE_BACKUP, false },
        { "write", 2, ENOSPC, SLOTS_REPLACE_BACKUP, false },
        { "fsync", 1, EIO, SLOTS_REPLACE_BACKUP, false },
        { "fsync", 2, EDQUOT, SLOTS_REPLACE_BACKUP, false },
        { "fchown", 1, EPERM, SLOTS_REPLACE_BACKUP, false },
        { "fchown", 2, EPERM, SLOTS_REPLACE_BACKUP, false },
        { "fchmod", 1, EIO, SLOTS_REPLACE_BACKUP, false },
        { "fchmod", 2, EPERM, SLOTS_REPLACE_BACKUP, false },
        { "renameat", 1, EIO, SLOTS_REPLACE_BACKUP, false },
        /* the backup is in place already when the main rename fails */
        { "renameat", 2, ENOSPC, SLOTS_REPLACE_BACKUP, true },
};

static void test_faults(void **state)
{
        static const char old[] = "{\n  \"slots\": {},\n  \"version\": 1\n}\n";
        static const char new[] = "{\n  \"slots\": {\n    \"slot01\": {}\n  },\n  \"version\": 1\n}\n";
        const struct slots_file_mode def = { .uid = 0, .gid = 0, .mode = 0777 };
        int failures = 0;

        (void) state;
        for (size_t i = 0; i < N_ELEM(faults); i++) {
                const struct fault *f = &faults[i];
                struct slots_error e;
                struct snap before;
                char name[64], display[128], why[512], want_dir[256], got_dir[4096];
                int r;

                snprintf(name, sizeof(name), "f%02zu.json", i);
                snprintf(display, sizeof(display), "/etc/slots/%s", name);
                make_file(name, old, owner_uid(), owner_gid(), 0640);
                snapshot(name, &before);
                slots_error_clear(&e);

                inj_arm(f->fn, f->at, f->err);
                r = slots_replace(dfd, name, display, new, strlen(new), &def, f->flags, &e);
                inj.fn = NULL;

                if (inj.fired != 1)
                        ROW_FAIL("%s #%d (%s): the injection never fired", f->fn, f->at, strerror(f->err));
                if (r != -f->err)
                        ROW_FAIL("%s #%d (%s): returned %d (%s)", f->fn, f->at, strerror(f->err), r,
                                 r < 0 ? strerror(-r) : "success");
                if (strcmp(e.object, display) != 0 || !strstr(e.reason, strerror(f->err)))
                        ROW_FAIL("%s #%d (%s): error \"%s: %s\"", f->fn, f->at, strerror(f->err), e.object,
                                 e.reason);
                if (!unchanged(name, &before, why, sizeof(why)))
                        ROW_FAIL("%s #%d (%s): %s", f->fn, f->at, strerror(f->err), why);

                /* nothing else in the folder: no temp file, a backup only when it was renamed */
                snprintf(want_dir, sizeof(want_dir), "%s%s%s", name, f->backup_after ? "," : "",
                         f->backup_after ? name : "");
                if (f->backup_after)
                        strcat(want_dir, "-");
                dir_names(got_dir, sizeof(got_dir));
                if (strcmp(got_dir, want_dir) != 0)
                        ROW_FAIL("%s #%d (%s): folder holds [%s], expected [%s]", f->fn, f->at,
                                 strerror(f->err), got_dir, want_dir);
                if (f->backup_after) {
                        char bname[80];
                        snprintf(bname, sizeof(bname), "%s-", name);
                        assert_file(bname, old, owner_uid(), owner_gid(), 0640);
                }
                /* clean up for the next row */
                assert_int_equal(unlinkat(dfd, name, 0), 0);
                if (f->backup_after) {
                        char bname[80];
                        snprintf(bname, sizeof(bname), "%s-", name);
                        assert_int_equal(unlinkat(dfd, bname, 0), 0);
                }
        }
        if (failures)
                fail_msg("%d row checks failed", failures);
}

/* A failure while creating a missing file leaves nothing behind. */
static void test_faults_missing(void **state)
{
        static const char *const fns[] = { "write", "fsync", "fchown", "fchmod", "renameat" };
        const struct slots_file_mode def = def_mode(0640);

        (void) state;
        for (size_t i = 0; i < N_ELEM(fns); i++) {
                struct slots_error e;

                inj_arm(fns[i], 1, EIO);
                assert_int_equal(slots_replace(dfd, "new.json", "new.json", "x\n", 2, &def, 0, &e), -EIO);
                assert_int_equal(inj.fired, 1);
                inj_reset();
                assert_dir("");
        }
}

/* The directory fsync comes after the rename: the new file is in place, and the error is still reported. */
static void test_fault_dir_fsync(void **state)
{
        const struct slots_file_mode def = def_mode(0600);
        struct slots_error e;

        (void) state;
        make_file("t", "old\n", owner_uid(), owner_gid(), 0640);
        inj_arm("fsync", 2, EIO);
        assert_int_equal(slots_replace(dfd, "t", "t", "new\n", 4, &def, 0, &e), -EIO);
        assert_int_equal(inj.fired, 1);
        assert_non_null(strstr(e.reason, "fsync of its directory"));
        assert_file("t", "new\n", owner_uid(), owner_gid(), 0640);
        assert_dir("t");
}

/* stage writes the temp with the final owner and mode; abort removes it; commit renames it. */
static void test_stage_abort_commit(void **state)
{
        const struct slots_file_mode def = def_mode(0600);
        struct slots_staged st;
        struct slots_error e;
        struct snap before, tmp;
        char names[512], why[256];

        (void) state;
        make_file("t", "old\n", owner_uid(), owner_gid(), 0644);
        snapshot("t", &before);
        assert_int_equal(slots_replace_stage(dfd, "t", "t", "new\n", 4, &def, 0, &st, &e), 0);
        assert_true(strncmp(st.tmp, ".t.", 3) == 0);
        snapshot(st.tmp, &tmp);
        assert_int_equal(tmp.st.st_uid, owner_uid());
        assert_int_equal(tmp.st.st_gid, owner_gid());
        assert_int_equal(tmp.st.st_mode & 07777, 0644);
        snprintf(names, sizeof(names), "%s,t", st.tmp);
        assert_dir(names);
        if (!unchanged("t", &before, why, sizeof(why)))
                fail_msg("staging changed the file: %s", why);
        slots_replace_abort(&st);
        slots_replace_abort(&st);
        assert_dir("t");
        if (!unchanged("t", &before, why, sizeof(why)))
                fail_msg("abort changed the file: %s", why);

        assert_int_equal(slots_replace_stage(dfd, "t", "t", "new\n", 4, &def, 0, &st, &e), 0);
        assert_int_equal(slots_replace_commit(&st, &e), 0);
        assert_file("t", "new\n", owner_uid(), owner_gid(), 0644);
        assert_dir("t");
        slots_replace_abort(&st);       /* nothing left to abort */
        assert_file("t", "new\n", owner_uid(), owner_gid(), 0644);
}

/* ---- the lock ---- */

static void test_lock(void **state)
{
        struct slots_error e;
        struct stat st;
        int fd, status;
        pid_t pid;

        (void) state;
        fd = slots_lock_take(dfd, "t.lock", "t", &e);
        assert_true(fd >= 0);
        assert_int_equal(fstat(fd, &st), 0);
        assert_true(S_ISREG(st.st_mode));
        assert_int_equal(st.st_mode & 07777, 0600);
        /* held: another open file description cannot take it */
        pid = fork();
        assert_true(pid >= 0);
        if (pid == 0) {
                int fd2 = openat(dfd, "t.lock", O_RDWR | O_CLOEXEC);
                _exit(fd2 >= 0 && flock(fd2, LOCK_EX | LOCK_NB) < 0 && errno == EWOULDBLOCK ? 0 : 1);
        }
        assert_int_equal(waitpid(pid, &status, 0), pid);
        assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
        close(fd);
        /* released with the fd: taken again */
        fd = slots_lock_take(dfd, "t.lock", "t", &e);
        assert_true(fd >= 0);
        close(fd);
}

static void test_lock_not_regular(void **state)
{
        struct slots_error e;
        struct stat st;

        (void) state;
        assert_int_equal(symlinkat("target", dfd, "l.lock"), 0);
        slots_error_clear(&e);
        assert_int_equal(slots_lock_take(dfd, "l.lock", "l", &e), -ELOOP);
        assert_non_null(strstr(e.reason, "symlink"));
        assert_int_equal(fstatat(dfd, "target", &st, AT_SYMLINK_NOFOLLOW), -1);
        assert_int_equal(errno, ENOENT);

        assert_int_equal(mkfifoat(dfd, "f.lock", 0600), 0);
        alarm(10);
        /* -EPERM: refused (exit 1) like a symlink there, not an invalid table (exit 2). */
        assert_int_equal(slots_lock_take(dfd, "f.lock", "f", &e), -EPERM);
        alarm(0);
        assert_int_equal(mkdirat(dfd, "d.lock", 0700), 0);
        assert_true(slots_lock_take(dfd, "d.lock", "d", &e) < 0);
        assert_dir("d.lock,f.lock,l.lock");
}

/* ---- slots_read_all: at most max bytes, on both sides of the limit ---- */

static const struct {
        size_t max, size;
        int result;
} reads[] = {
        { 10, 0, 0 }, { 10, 9, 0 }, { 10, 10, 0 }, { 10, 11, -EFBIG }, { 10, 4096, -EFBIG },
        { 4096, 4095, 0 }, { 4096, 4096, 0 }, { 4096, 4097, -EFBIG },
        { 8192, 8192, 0 }, { 8192, 8193, -EFBIG }, { 10000, 10000, 0 }, { 10000, 10001, -EFBIG },
};

static void test_read_all(void **state)
{
        static char data[16384];
        int failures = 0;

        (void) state;
        for (size_t i = 0; i < sizeof(data); i++)
                data[i] = (char) ('a' + i % 26);
        for (size_t i = 0; i < N_ELEM(reads); i++) {
                char *buf = NULL;
                size_t len = 0;
                int fd, r;

                fd = openat(dfd, "data", O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
                assert_true(fd >= 0);
                assert_int_equal(write(fd, data, reads[i].size), (ssize_t) reads[i].size);
                assert_int_equal(lseek(fd, 0, SEEK_SET), 0);
                r = slots_read_all(fd, reads[i].max, &buf, &len);
                close(fd);
                if (r != reads[i].result) {
                        ROW_FAIL("%zu bytes, max %zu: got %d (%zu bytes), expected %d", reads[i].size,
                                 reads[i].max, r, r == 0 ? len : 0, reads[i].result);
                } else if (r == 0 && (len != reads[i].size || memcmp(buf, data, len) != 0 || buf[len] != '\0')) {
                        ROW_FAIL("%zu bytes, max %zu: content differs", reads[i].size, reads[i].max);
                }
                if (r == 0)
                        free(buf);
        }
        if (failures)
                fail_msg("%d rows failed", failures);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
                TEST(test_keeps_foreign_owner),
                TEST(test_keeps_mode),
                TEST(test_keeps_acl),
                TEST(test_no_acl_added),
                TEST(test_missing_created),
                TEST(test_force_mode),
                TEST(test_backup),
                TEST(test_write_retries),
                TEST(test_symlink_refused),
                TEST(test_fifo_refused),
                TEST(test_faults),
                TEST(test_faults_missing),
                TEST(test_fault_dir_fsync),
                TEST(test_stage_abort_commit),
                TEST(test_lock),
                TEST(test_lock_not_regular),
                TEST(test_read_all),
        };

        signal(SIGALRM, on_alarm);
        return cmocka_run_group_tests(tests, NULL, NULL);
}
