/*
 * A set-id file replaced by a writer without CAP_FSETID: the kernel clears the set-id bits
 * when the temp is written (after its fchmod), so the replace must refuse (-EPERM, "came out
 * as") and leave the old file as it was, never put a file with lost bits in its place.  The
 * writer is a forked child of root that dropped CAP_FSETID from its capability sets, so the
 * case runs wherever the tests run as root (it was a case for a non-root writer with other
 * capabilities, which no CI machine has).  With CAP_FSETID (root as it is) the bits are kept.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/capability.h>
#include <setjmp.h>
#include <stdbool.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>

#include "replace.h"

#define N_ELEM(a) (sizeof(a) / sizeof((a)[0]))

static char dir[64];
static int dfd = -1;

static const struct {
        const char *name;
        mode_t mode;
} rows[] = {
        { "setuid", 04755 },
        { "setgid", 02750 },
        { "both", 06710 },
        { "plain", 0640 },      /* no set-id bit: replaced either way */
};

/* Removes CAP_FSETID from the effective, permitted and inheritable sets of this process. */
static int drop_fsetid(void)
{
        struct __user_cap_header_struct h = { .version = _LINUX_CAPABILITY_VERSION_3, .pid = 0 };
        struct __user_cap_data_struct d[2];

        if (syscall(SYS_capget, &h, d) < 0)
                return -errno;
        d[0].effective &= ~(1u << CAP_FSETID);
        d[0].permitted &= ~(1u << CAP_FSETID);
        d[0].inheritable &= ~(1u << CAP_FSETID);
        if (syscall(SYS_capset, &h, d) < 0)
                return -errno;
        return 0;
}

static void make(const char *name, mode_t mode)
{
        int fd;

        unlinkat(dfd, name, 0);
        fd = openat(dfd, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW, 0600);
        assert_true(fd >= 0);
        assert_int_equal(write(fd, "old\n", 4), 4);
        assert_int_equal(fchmod(fd, mode), 0);
        close(fd);
}

/* What the file holds and its mode, as one string. */
static void state_of(const char *name, char *buf, size_t size)
{
        struct stat st;
        char text[32] = "";
        int fd = openat(dfd, name, O_RDONLY | O_NOFOLLOW);
        ssize_t n;

        assert_true(fd >= 0);
        assert_int_equal(fstat(fd, &st), 0);
        n = read(fd, text, sizeof(text) - 1);
        assert_true(n >= 0);
        text[n] = '\0';
        close(fd);
        snprintf(buf, size, "%u:%u %04o %s", (unsigned) st.st_uid, (unsigned) st.st_gid,
                 (unsigned) (st.st_mode & 07777), text);
}

/* The replace of every row in a child; fsetid: whether the child keeps CAP_FSETID.  The child
 * exits 0 when every row came out as expected, else the row's index + 1 (after printing why). */
static int child(bool fsetid)
{
        const struct slots_file_mode def = { .uid = 0, .gid = 0, .mode = 0600 };

        if (!fsetid && drop_fsetid() < 0) {
                fprintf(stderr, "cannot drop CAP_FSETID: %s\n", strerror(errno));
                return 100;
        }
        for (size_t i = 0; i < N_ELEM(rows); i++) {
                struct slots_error e;
                char before[128], after[128];
                bool refuse = !fsetid && (rows[i].mode & 06000);
                int r;

                make(rows[i].name, rows[i].mode);
                state_of(rows[i].name, before, sizeof(before));
                slots_error_clear(&e);
                r = slots_replace(dfd, rows[i].name, rows[i].name, "new\n", 4, &def, 0, &e);
                state_of(rows[i].name, after, sizeof(after));
                if (refuse && (r != -EPERM || !strstr(e.reason, "came out as") || strcmp(before, after) != 0)) {
                        fprintf(stderr, "%s without CAP_FSETID: %d (%s), before '%s' after '%s'\n",
                                rows[i].name, r, e.reason, before, after);
                        return (int) i + 1;
                }
                if (!refuse) {
                        char want[128];

                        snprintf(want, sizeof(want), "0:0 %04o new\n", (unsigned) rows[i].mode);
                        if (r != 0 || strcmp(after, want) != 0) {
                                fprintf(stderr, "%s: %d (%s): '%s', want '%s'\n", rows[i].name, r, e.reason,
                                        after, want);
                                return (int) i + 1;
                        }
                }
        }
        return 0;
}

static int run_child(bool fsetid)
{
        int status;
        pid_t pid = fork();

        assert_true(pid >= 0);
        if (pid == 0) {
                fflush(stderr);
                _exit(child(fsetid));
        }
        assert_int_equal(waitpid(pid, &status, 0), pid);
        assert_true(WIFEXITED(status));
        return WEXITSTATUS(status);
}

/* Entries in the folder: the rows' files and nothing else (no temp left behind). */
static size_t entries(void)
{
        DIR *d = opendir(dir);
        struct dirent *de;
        size_t n = 0;

        assert_non_null(d);
        while ((de = readdir(d)))
                if (strcmp(de->d_name, ".") != 0 && strcmp(de->d_name, "..") != 0)
                        n++;
        closedir(d);
        return n;
}

static void test_without_fsetid(void **state)
{
        (void) state;
        assert_int_equal(run_child(false), 0);
        assert_int_equal(entries(), N_ELEM(rows));
}

static void test_with_fsetid(void **state)
{
        (void) state;
        assert_int_equal(run_child(true), 0);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_without_fsetid),
                cmocka_unit_test(test_with_fsetid),
        };
        int r;

        if (geteuid() != 0) {
                printf("1..0 # SKIP needs root: the files are root's set-id files and the writer drops "
                       "CAP_FSETID from root's sets\n");
                return 77;
        }
        snprintf(dir, sizeof(dir), "/tmp/slots-setid.XXXXXX");
        if (!mkdtemp(dir) || (dfd = open(dir, O_RDONLY | O_DIRECTORY)) < 0) {
                perror(dir);
                return 1;
        }
        r = cmocka_run_group_tests(tests, NULL, NULL);
        for (size_t i = 0; i < N_ELEM(rows); i++)
                unlinkat(dfd, rows[i].name, 0);
        close(dfd);
        rmdir(dir);
        return r;
}
