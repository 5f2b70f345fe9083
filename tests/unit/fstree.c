/* The scratch folder of the tree-walking tests: objects of every kind, and checks of what a walk left. */
#include <acl/libacl.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sched.h>
#include <sys/acl.h>
#include <sys/mount.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/un.h>
#include <unistd.h>

#include <cmocka.h>

#include "fstree.h"
#include "unit.h"

char base[256];
int bfd = -1;
static bool have_mounts;

void fstree_init(void)
{
        /* Mounts made by the tests stay in a mount namespace of this process. */
        have_mounts = geteuid() == 0 && unshare(CLONE_NEWNS) == 0 &&
                      mount("none", "/", "none", MS_REC | MS_PRIVATE, NULL) == 0;
}

bool need_root(void)
{
        if (geteuid() == 0)
                return true;
        print_message("skipped: the walks change owners and remove others' files (needs root)\n");
        return false;
}

bool need_mounts(void)
{
        if (have_mounts)
                return true;
        print_message("skipped: no private mount namespace (unshare CLONE_NEWNS failed)\n");
        return false;
}

void fstree_umount(const char *const *rels, size_t n)
{
        char p[512];

        for (size_t i = 0; have_mounts && i < n; i++) {
                snprintf(p, sizeof(p), "%s/%s", base, rels[i]);
                (void) umount2(p, MNT_DETACH);
        }
}

int fstree_setup(void **state)
{
        const char *tmp = getenv("TMPDIR");

        (void) state;
        snprintf(base, sizeof(base), "%s/test-fstree.XXXXXX", tmp && tmp[0] ? tmp : "/tmp");
        if (!mkdtemp(base) || chmod(base, 0755) < 0)
                return -1;
        bfd = open(base, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        return bfd < 0 ? -1 : 0;
}

int fstree_teardown(void **state)
{
        (void) state;
        close(bfd);
        bfd = -1;
        return rm_tree(AT_FDCWD, base) < 0 ? -1 : 0;
}

int rm_tree(int dfd, const char *name)
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

void mk(const char *rel, enum kind k, uid_t uid, gid_t gid, mode_t mode, const char *target)
{
        int fd;

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
        case FIFO_:
                assert_int_equal(mkfifoat(bfd, rel, 0600), 0);
                break;
        case SOCK_: {
                struct sockaddr_un a = { .sun_family = AF_UNIX };
                int s = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);

                assert_true(s >= 0);
                assert_true(snprintf(a.sun_path, sizeof(a.sun_path), "%s/%s", base, rel) < (int) sizeof(a.sun_path));
                assert_int_equal(bind(s, (struct sockaddr *) &a, sizeof(a)), 0);
                close(s);
                break;
        }
        case DEV_:
                assert_int_equal(mknodat(bfd, rel, S_IFCHR | 0600, makedev(1, 3)), 0);
                break;
        case LINK_:
                assert_non_null(target);
                assert_int_equal(symlinkat(target, bfd, rel), 0);
                break;
        }
        assert_int_equal(fchownat(bfd, rel, uid, gid, AT_SYMLINK_NOFOLLOW), 0);
        if (k != LINK_)
                assert_int_equal(fchmodat(bfd, rel, mode, 0), 0);
}

struct stat st_of(const char *rel)
{
        struct stat st;

        if (fstatat(bfd, rel, &st, AT_SYMLINK_NOFOLLOW) < 0)
                fail_msg("%s: %s", rel, strerror(errno));
        return st;
}

/* rel is uid:gid mode (mode -1: not compared); counts a failure instead of stopping. */
int is(const char *rel, uid_t uid, gid_t gid, int mode)
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

void mk_way(const char *rel)
{
        char p[256];

        snprintf(p, sizeof(p), "%s", rel);
        for (char *s = strchr(p, '/'); s; s = strchr(s + 1, '/')) {
                *s = '\0';
                if (mkdirat(bfd, p, 0711) < 0 && errno != EEXIST)
                        fail_msg("%s: %s", p, strerror(errno));
                *s = '/';
        }
}

int entries_in(const char *rel)
{
        DIR *dp = fdopendir(openat(bfd, rel, O_RDONLY | O_DIRECTORY | O_CLOEXEC));
        struct dirent *de;
        int n = 0;

        assert_non_null(dp);
        while ((de = readdir(dp)))
                if (strcmp(de->d_name, ".") && strcmp(de->d_name, ".."))
                        n++;
        closedir(dp);
        return n;
}

void set_acl(const char *rel, const char *text, acl_type_t type)
{
        acl_t a = acl_from_text(text);
        char p[1024];

        assert_non_null(a);
        snprintf(p, sizeof(p), "%s/%s", base, rel);
        if (acl_set_file(p, type, a) < 0)
                fail_msg("setting the ACL %s on %s: %s", text, rel, strerror(errno));
        acl_free(a);
}

int acl_is(const char *rel, acl_type_t type, const char *want)
{
        char p[1024], *got;
        int failures = 0;
        acl_t a;

        snprintf(p, sizeof(p), "%s/%s", base, rel);
        a = acl_get_file(p, type);
        assert_non_null(a);
        got = acl_to_any_text(a, NULL, ',', TEXT_NUMERIC_IDS);
        acl_free(a);
        assert_non_null(got);
        if (strcmp(got, want) != 0)
                ROW_FAIL("%s: ACL %s, want %s", rel, got, want);
        acl_free(got);
        return failures;
}
