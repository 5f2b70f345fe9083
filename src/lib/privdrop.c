/* Acting as another account: a forked child that drops groups, gid and uid before it runs. */
#include <errno.h>
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

#define EXIT_DROP_FAILED 126

static void drop_or_die(const struct slots_ident *id)
{
        uid_t old_uid = geteuid();
        gid_t old_gid = getegid();

        if (setgroups((size_t) id->n_groups, id->groups) < 0 || setresgid(id->gid, id->gid, id->gid) < 0 ||
            setresuid(id->uid, id->uid, id->uid) < 0)
                slots_exit_child(EXIT_DROP_FAILED);
        /*
         * Make sure the old identity cannot come back, neither its uid nor its gid (a kernel or
         * LSM quirk would be fatal here): root, and whoever we were before, as OpenSSH checks.
         */
        if (id->uid != 0 && (setuid(0) == 0 || seteuid(0) == 0))
                slots_exit_child(EXIT_DROP_FAILED);
        if (old_uid != id->uid && (setuid(old_uid) == 0 || seteuid(old_uid) == 0))
                slots_exit_child(EXIT_DROP_FAILED);
        if (old_gid != id->gid && (setgid(old_gid) == 0 || setegid(old_gid) == 0))
                slots_exit_child(EXIT_DROP_FAILED);
        if (getuid() != id->uid || geteuid() != id->uid || getgid() != id->gid || getegid() != id->gid)
                slots_exit_child(EXIT_DROP_FAILED);
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
                _exit(EXIT_DROP_FAILED);
        if (geteuid() != id->uid || getgid() != id->gid || getegid() != id->gid ||
            (uid_t) setfsuid((uid_t) -1) != id->uid)
                _exit(EXIT_DROP_FAILED);
}

/* What the child runs: the drop, then fn. */
struct dropped {
        const struct slots_ident *id;
        bool keep_real;
        int (*fn)(void *arg);
        void *arg;
};

static int dropped_child(void *arg)
{
        const struct dropped *d = arg;

        if (d->keep_real)
                drop_keep_real_or_die(d->id);
        else
                drop_or_die(d->id);
        return d->fn(d->arg);
}

static int run_child(const struct slots_ident *id, bool keep_real, int (*fn)(void *arg), void *arg,
                     int timeout_ms)
{
        struct dropped d = { .id = id, .keep_real = keep_real, .fn = fn, .arg = arg };
        int r = slots_child_run(dropped_child, &d, timeout_ms, 0);

        return r == EXIT_DROP_FAILED ? -EPERM : r;
}

int slots_run_as(const struct slots_ident *id, int (*fn)(void *arg), void *arg, int timeout_ms)
{
        return run_child(id, false, fn, arg, timeout_ms);
}

int slots_run_as_unkillable(const struct slots_ident *id, int (*fn)(void *arg), void *arg, int timeout_ms)
{
        if (id->uid == 0)
                return -EINVAL;
        return run_child(id, true, fn, arg, timeout_ms);
}

int slots_ident_of(const char *account, struct slots_ident *id, gid_t **groups)
{
        struct slots_pw pw;
        int n = 16, r;
        gid_t *g = NULL;

        r = slots_nss_user(account, &pw);
        if (r <= 0)
                return r == 0 ? -ENOENT : r;
        for (;;) {
                gid_t *ng = realloc(g, (size_t) n * sizeof(gid_t));
                int want = n;
                if (!ng) {
                        free(g);
                        slots_pw_clear(&pw);
                        return -ENOMEM;
                }
                g = ng;
                if (getgrouplist(pw.name, pw.gid, g, &want) >= 0) {
                        n = want;
                        break;
                }
                if (want <= n)
                        n *= 2;
                else
                        n = want;
        }
        id->uid = pw.uid;
        id->gid = pw.gid;
        id->groups = g;
        id->n_groups = n;
        *groups = g;
        slots_pw_clear(&pw);
        return 0;
}
