/* Acting as another account: a forked child that drops groups, gid and uid before it runs. */
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <stdlib.h>
#include <stdint.h>
#include <string.h>
#include <sys/fsuid.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "child.h"
#include "nss.h"
#include "privdrop.h"

/*
 * The channel: a close-on-exec pipe from each child to its parent.  The child writes one
 * record when a stage fails (the drop, the setup of fn) and exits, so EOF with no record
 * means the drop succeeded, and the exit status the parent sees is fn's own.
 */
enum stage { STAGE_NONE, STAGE_DROP, STAGE_SETUP };

struct chan_msg {
        int stage;
        int err;
};

/* Set only in the child, right after the fork: the write end of its channel. */
static int chan_fd = -1;

/* Reports the failed stage through the channel and exits (the status the parent ignores then). */
__attribute__((noreturn)) static void fail_child(enum stage stage, int err)
{
        struct chan_msg m = { .stage = stage, .err = err };

        if (chan_fd >= 0)
                (void) !write(chan_fd, &m, sizeof(m));
        slots_exit_child(125);
}

static void drop_or_die(const struct slots_ident *id)
{
        uid_t old_uid = geteuid();
        gid_t old_gid = getegid();

        if (setgroups((size_t) id->n_groups, id->groups) < 0 || setresgid(id->gid, id->gid, id->gid) < 0 ||
            setresuid(id->uid, id->uid, id->uid) < 0)
                fail_child(STAGE_DROP, errno);
        /*
         * Make sure the old identity cannot come back, neither its uid nor its gid (a kernel or
         * LSM quirk would be fatal here): root, and whoever we were before, as OpenSSH checks.
         */
        if (id->uid != 0 && (setuid(0) == 0 || seteuid(0) == 0))
                fail_child(STAGE_DROP, EPERM);
        if (old_uid != id->uid && (setuid(old_uid) == 0 || seteuid(old_uid) == 0))
                fail_child(STAGE_DROP, EPERM);
        if (old_gid != id->gid && (setgid(old_gid) == 0 || setegid(old_gid) == 0))
                fail_child(STAGE_DROP, EPERM);
        if (getuid() != id->uid || geteuid() != id->uid || getgid() != id->gid || getegid() != id->gid)
                fail_child(STAGE_DROP, EPERM);
}

#ifndef _LINUX_CAPABILITY_VERSION_3
#define _LINUX_CAPABILITY_VERSION_3 0x20080522
#endif

/* Effective uid the account's, real and saved 0, no capability at all; exits on failure. */
static void drop_keep_real_or_die(const struct slots_ident *id)
{
        struct { uint32_t version; int pid; } hdr = { _LINUX_CAPABILITY_VERSION_3, 0 };
        struct { uint32_t effective, permitted, inheritable; } none[2] = { { 0, 0, 0 }, { 0, 0, 0 } };

        if (id->uid == 0 || setgroups((size_t) id->n_groups, id->groups) < 0 ||
            setresgid(id->gid, id->gid, id->gid) < 0 || prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0 ||
            prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) < 0 || setresuid(0, id->uid, 0) < 0 ||
            syscall(SYS_capset, &hdr, none) < 0)
                fail_child(STAGE_DROP, errno);
        if (geteuid() != id->uid || getgid() != id->gid || getegid() != id->gid ||
            (uid_t) setfsuid((uid_t) -1) != id->uid)
                fail_child(STAGE_DROP, EPERM);
}

/* What the child runs: into its folder, the drop, then fn. */
struct dropped {
        const struct slots_ident *id;   /* NULL: no drop */
        bool keep_real;
        int cwd_fd;
        int chan;
        int (*fn)(void *arg);
        void *arg;
};

static int dropped_child(void *arg)
{
        const struct dropped *d = arg;

        chan_fd = d->chan;
        if (d->cwd_fd >= 0 && fchdir(d->cwd_fd) < 0)
                fail_child(STAGE_SETUP, errno);
        if (d->id && d->keep_real)
                drop_keep_real_or_die(d->id);
        else if (d->id)
                drop_or_die(d->id);
        return d->fn(d->arg);
}

/* The child's result with what its channel says: a failed stage wins over any exit status. */
static int run_child(struct dropped *d, int timeout_ms)
{
        struct chan_msg m = { STAGE_NONE, 0 };
        int chan[2], r;
        ssize_t n;

        if (pipe2(chan, O_CLOEXEC) < 0)
                return -errno;
        d->chan = chan[1];
        r = slots_child_run(dropped_child, d, timeout_ms, 0);
        close(chan[1]);
        /* The child is gone: what it wrote is in the pipe, and a child of its own that holds the
         * write end cannot make this wait. */
        if (fcntl(chan[0], F_SETFL, O_NONBLOCK) < 0)
                n = -1;
        else
                n = read(chan[0], &m, sizeof(m));
        close(chan[0]);
        if (r == -ETIMEDOUT || n != (ssize_t) sizeof(m))
                return r;
        if (m.stage == STAGE_DROP)
                return -EPERM;
        return m.err > 0 ? -m.err : -EIO;
}

int slots_run_in(const struct slots_ident *id, int cwd_fd, int (*fn)(void *arg), void *arg, int timeout_ms)
{
        struct dropped d = { .id = id, .cwd_fd = cwd_fd, .fn = fn, .arg = arg };

        return run_child(&d, timeout_ms);
}

int slots_run_as(const struct slots_ident *id, int (*fn)(void *arg), void *arg, int timeout_ms)
{
        return slots_run_in(id, -1, fn, arg, timeout_ms);
}

int slots_run_as_unkillable(const struct slots_ident *id, int (*fn)(void *arg), void *arg, int timeout_ms)
{
        struct dropped d = { .id = id, .keep_real = true, .cwd_fd = -1, .fn = fn, .arg = arg };

        if (id->uid == 0)
                return -EINVAL;
        return run_child(&d, timeout_ms);
}

void slots_run_fail(int err)
{
        fail_child(STAGE_SETUP, err);
}

int slots_grouplist(const char *account, gid_t gid, gid_t **groups, int *count)
{
        int n = 16;
        gid_t *g = NULL;

        for (;;) {
                gid_t *ng = realloc(g, (size_t) n * sizeof(gid_t));
                int want = n;

                if (!ng) {
                        free(g);
                        return -ENOMEM;
                }
                g = ng;
                if (getgrouplist(account, gid, g, &want) >= 0) {
                        *groups = g;
                        *count = want;
                        return 0;
                }
                n = want <= n ? n * 2 : want;
        }
}

int slots_ident_of(const char *account, struct slots_ident *id, gid_t **groups)
{
        struct slots_pw pw;
        gid_t *g;
        int n, r;

        r = slots_nss_user(account, &pw);
        if (r <= 0)
                return r == 0 ? -ENOENT : r;
        r = slots_grouplist(pw.name, pw.gid, &g, &n);
        if (r == 0) {
                id->uid = pw.uid;
                id->gid = pw.gid;
                id->groups = g;
                id->n_groups = n;
                *groups = g;
        }
        slots_pw_clear(&pw);
        return r;
}
