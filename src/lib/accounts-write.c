/* Writing the account files: the lckpwdf lock, the staged transaction of all four, cache flushes. */
#include <errno.h>
#include <fcntl.h>
#include <shadow.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "accounts.h"
#include "child.h"
#include "clock.h"
#include "fsutil.h"
#include "path.h"
#include "replace.h"

/* ---- the transaction ---- */

#define LOCK_WAIT_MS 15000

/*
 * " by process PID (NAME)" for whoever holds a POSIX lock on fd, or "" when the
 * kernel does not say (a holder in another PID namespace shows as 0).  The name
 * comes from /proc and is reduced to a safe alphabet before it reaches a terminal.
 */
static void lock_holder(int fd, char *buf, size_t size)
{
        struct flock fl = { .l_type = F_WRLCK, .l_whence = SEEK_SET };
        char path[64], name[32] = "";
        int cfd;

        buf[0] = '\0';
        if (fd < 0 || fcntl(fd, F_GETLK, &fl) < 0 || fl.l_type == F_UNLCK || fl.l_pid <= 0)
                return;
        snprintf(path, sizeof(path), "/proc/%ld/comm", (long) fl.l_pid);
        cfd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
        if (cfd >= 0) {
                ssize_t n = read(cfd, name, sizeof(name) - 1);

                name[n > 0 ? n : 0] = '\0';
                slots_close(cfd);
        }
        for (char *c = name; *c; c++)
                if (*c == '\n')
                        *c = '\0';
                else if (!((*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') || (*c >= '0' && *c <= '9') ||
                           *c == '.' || *c == '_' || *c == '-' || *c == '+'))
                        *c = '?';
        if (name[0])
                snprintf(buf, size, " by process %ld (%s)", (long) fl.l_pid, name);
        else
                snprintf(buf, size, " by process %ld", (long) fl.l_pid);
}

/* The error for a lock another program holds: who, if known, and how long this one waited. */
static int lock_busy(struct slots_error *e, int fd, const char *object, long waited_ms)
{
        char who[96];

        lock_holder(fd, who, sizeof(who));
        slots_error_set(e, -EAGAIN, object, "the account files lock is held%s; gave up after waiting %ld.%ld s",
                        who, waited_ms / 1000, waited_ms % 1000 / 100);
        slots_error_fix(e, "wait for the other account tool (useradd, passwd, vipw) to finish, then run again");
        return -EAGAIN;
}

int slots_accounts_lock(int etcfd, bool host, int *lockfd, struct slots_error *e)
{
        struct stat st;
        struct flock fl = { .l_type = F_WRLCK, .l_whence = SEEK_SET };
        long start = slots_now_ms();
        int fd;

        *lockfd = -1;
        if (host) {
                /* lckpwdf() gives up after 15 s with EINTR (its alarm), which says nothing useful. */
                if (lckpwdf() < 0) {
                        int err = errno ? errno : EAGAIN, r;

                        if (err != EINTR)
                                return slots_error_set(e, -err, "/etc/.pwd.lock",
                                                       "cannot take the account files lock: %s", strerror(err));
                        fd = openat(etcfd, ".pwd.lock", O_RDONLY | O_NOFOLLOW | O_NOCTTY | O_CLOEXEC);
                        r = lock_busy(e, fd, "/etc/.pwd.lock", slots_now_ms() - start);
                        if (fd >= 0)
                                slots_close(fd);
                        return r;
                }
                return 0;
        }
        fd = openat(etcfd, ".pwd.lock", O_RDWR | O_CREAT | O_NOFOLLOW | O_NOCTTY | O_CLOEXEC, 0600);
        if (fd < 0)
                return slots_error_set(e, -errno, ".pwd.lock", "cannot open the account files lock: %s",
                                       errno == ELOOP ? "it is a symlink" : strerror(errno));
        if (fstat(fd, &st) < 0) {
                int r = -errno;

                slots_close(fd);
                return slots_error_set(e, r, ".pwd.lock", "cannot stat the account files lock: %s", strerror(-r));
        }
        if (!S_ISREG(st.st_mode)) {
                slots_close(fd);
                return slots_error_refuse(e, -EINVAL, ".pwd.lock", "the lock is not a regular file");
        }
        /* lckpwdf's protocol: a POSIX write lock on the whole file, given up after 15 seconds. */
        for (;;) {
                if (fcntl(fd, F_SETLK, &fl) == 0)
                        break;
                if (errno != EACCES && errno != EAGAIN && errno != EINTR) {
                        int r = -errno;
                        slots_close(fd);
                        return slots_error_set(e, r, ".pwd.lock", "cannot take the account files lock: %s",
                                               strerror(-r));
                }
                if (slots_now_ms() - start >= LOCK_WAIT_MS) {
                        int r = lock_busy(e, fd, ".pwd.lock", slots_now_ms() - start);
                        slots_close(fd);
                        return r;
                }
                (void) usleep(100 * 1000);
        }
        *lockfd = fd;
        return 0;
}

void slots_accounts_unlock(bool host, int lockfd)
{
        if (host)
                (void) ulckpwdf();
        else
                slots_close(lockfd);
}

void slots_accounts_clean_stale(int etcfd)
{
        for (int f = 0; f < SLOTS_ACCT_NFILES; f++)
                (void) slots_replace_clean_stale(etcfd, slots_accounts_file_name(f));
}

int slots_accounts_write(struct slots_accounts *a, int etcfd, const char *etc_display,
                         struct slots_error *e)
{
        /* Groups before the accounts that name them, as systemd-sysusers orders its renames. */
        static const enum slots_acct_file order[SLOTS_ACCT_NFILES] = {
                SLOTS_ACCT_GROUP, SLOTS_ACCT_GSHADOW, SLOTS_ACCT_PASSWD, SLOTS_ACCT_SHADOW,
        };
        struct slots_staged st[SLOTS_ACCT_NFILES];
        bool staged[SLOTS_ACCT_NFILES] = { false };
        const struct slots_acct_group *sg = slots_accounts_group(a, "shadow");
        char display[4096];
        int r = 0, i;

        /* Temps a writer killed before its rename left behind; under the lock no live writer owns one. */
        for (i = 0; i < SLOTS_ACCT_NFILES; i++)
                (void) slots_replace_clean_stale(etcfd, slots_accounts_file_name(i));
        for (i = 0; i < SLOTS_ACCT_NFILES; i++) {
                enum slots_acct_file f = order[i];
                struct slots_file_mode def = { .uid = 0, .gid = 0, .mode = 0644 };
                size_t len;
                char *text;

                if (!slots_accounts_changed(a, f))
                        continue;
                if (f == SLOTS_ACCT_SHADOW || f == SLOTS_ACCT_GSHADOW) {
                        def.mode = sg && sg->valid ? 0640 : 0600;
                        def.gid = sg && sg->valid ? sg->gid : 0;
                }
                slots_path_join_to(display, sizeof(display), etc_display, slots_accounts_file_name(f));
                text = slots_accounts_render(a, f, &len);
                if (!text) {
                        r = slots_error_set(e, -ENOMEM, display, "out of memory");
                        goto abort;
                }
                r = slots_replace_stage(etcfd, slots_accounts_file_name(f), display, text, len, &def,
                                        SLOTS_REPLACE_BACKUP, &st[f], e);
                free(text);
                if (r < 0)
                        goto abort;
                staged[f] = true;
        }
        for (i = 0; i < SLOTS_ACCT_NFILES; i++) {
                enum slots_acct_file f = order[i];

                if (!staged[f])
                        continue;
                r = slots_replace_commit(&st[f], e);
                staged[f] = false;
                if (r < 0)
                        goto abort;
        }
        return 0;
abort:
        for (i = 0; i < SLOTS_ACCT_NFILES; i++)
                if (staged[i])
                        slots_replace_abort(&st[i]);
        return r;
}

/* ---- the name caches ---- */

void slots_accounts_flush_caches(void)
{
        static const char *const nscd_sockets[] = { "/run/nscd/socket", "/var/run/nscd/socket" };

        for (size_t i = 0; i < sizeof(nscd_sockets) / sizeof(nscd_sockets[0]); i++) {
                if (access(nscd_sockets[i], F_OK) < 0)
                        continue;
                /* One call per table, as shadow-utils' nscd_flush_cache does. */
                const char *const pw[] = { "/usr/sbin/nscd", "-i", "passwd", NULL };
                const char *const gr[] = { "/usr/sbin/nscd", "-i", "group", NULL };
                (void) slots_run_program(pw, -1, 10000, NULL, 0);
                (void) slots_run_program(gr, -1, 10000, NULL, 0);
                break;
        }
        {
                const char *const sss[] = { "/usr/sbin/sss_cache", "-E", NULL };
                (void) slots_run_program(sss, -1, 10000, NULL, 0);
        }
}
