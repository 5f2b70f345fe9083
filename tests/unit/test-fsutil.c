/* Resolution inside a root: the openat2 path and the component walk agree, and neither leaves the root. */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>

#include "fsutil.h"

static char root[256];
static int rootfd = -1;

/* A small image: a file inside, links that point out of it in every way a link can. */
static int setup(void **state)
{
        (void) state;
        snprintf(root, sizeof(root), "/tmp/slots-fsutil.XXXXXX");
        if (!mkdtemp(root))
                return -1;
        rootfd = slots_root_open(root);
        if (rootfd < 0)
                return -1;
        if (mkdirat(rootfd, "etc", 0755) < 0 || mkdirat(rootfd, "etc/slots", 0755) < 0 ||
            mkdirat(rootfd, "srv", 0755) < 0)
                return -1;
        int fd = openat(rootfd, "etc/hostname", O_WRONLY | O_CREAT | O_EXCL, 0644);
        if (fd < 0 || write(fd, "image\n", 6) != 6)
                return -1;
        close(fd);
        if (symlinkat("/etc/hostname", rootfd, "srv/abs") < 0 ||           /* absolute: inside the root */
            symlinkat("../../../../../etc/hostname", rootfd, "srv/up") < 0 || /* climbs: clamped at the root */
            symlinkat("/etc", rootfd, "srv/etcdir") < 0 ||
            symlinkat("loop2", rootfd, "srv/loop1") < 0 || symlinkat("loop1", rootfd, "srv/loop2") < 0)
                return -1;
        return 0;
}

static int teardown(void **state)
{
        char cmd[300];

        (void) state;
        close(rootfd);
        snprintf(cmd, sizeof(cmd), "rm -rf '%s'", root);
        return system(cmd) == 0 ? 0 : -1;
}

/* Reads what fd holds ("" for a directory), or the negative errno. */
static void describe(int fd, char *buf, size_t size)
{
        struct stat st;
        ssize_t n;

        if (fd < 0) {
                snprintf(buf, size, "error %d", fd);
                return;
        }
        fstat(fd, &st);
        if (S_ISDIR(st.st_mode)) {
                snprintf(buf, size, "dir %lu", (unsigned long) st.st_ino);
        } else {
                n = read(fd, buf, size - 1);
                buf[n < 0 ? 0 : n] = '\0';
        }
        close(fd);
}

static void test_walk_matches_openat2(void **state)
{
        static const struct {
                const char *path;
                int flags;
                const char *want; /* NULL: compare only with openat2 */
        } cases[] = {
                { "/etc/hostname", O_RDONLY, "image\n" },
                { "/srv/abs", O_RDONLY, "image\n" },
                { "/srv/up", O_RDONLY, "image\n" },
                { "/srv/etcdir/hostname", O_RDONLY, "image\n" },
                { "/../../etc/hostname", O_RDONLY, "image\n" },
                { "/srv/../etc/./hostname", O_RDONLY, "image\n" },
                { "//etc//hostname", O_RDONLY, "image\n" },
                { "/etc/missing", O_RDONLY, "error -2" },
                { "/etc/hostname/x", O_RDONLY, "error -20" },
                { "/srv/loop1", O_RDONLY, "error -40" },
                { "/", O_RDONLY | O_DIRECTORY, NULL },
                { "/etc/slots", O_RDONLY | O_DIRECTORY, NULL },
                { "/srv/etcdir", O_RDONLY | O_DIRECTORY, NULL },
        };

        (void) state;
        for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
                char a[64], b[64];

                describe(slots_open_in(rootfd, cases[i].path, cases[i].flags), a, sizeof(a));
                describe(slots_open_in_walk(rootfd, cases[i].path, cases[i].flags), b, sizeof(b));
                if (strcmp(a, b) != 0)
                        fail_msg("%s: openat2 gives \"%s\", the walk \"%s\"", cases[i].path, a, b);
                if (cases[i].want && strcmp(a, cases[i].want) != 0 && strcmp(a, "error -38") != 0)
                        fail_msg("%s: got \"%s\", want \"%s\"", cases[i].path, a, cases[i].want);
        }
}

int main(void)
{
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_walk_matches_openat2),
        };

        return cmocka_run_group_tests(tests, setup, teardown);
}
