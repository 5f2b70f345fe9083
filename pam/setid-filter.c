/* pam_slots' seccomp filter: no set-id file from a slot session (pam_slots(8)). */
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <string.h>
#include <sys/stat.h>
#include <syslog.h>
#include <unistd.h>

#include <seccomp.h>
#include <security/pam_ext.h>

#include "setid-filter.h"

/*
 * fchmodat2 (Linux 6.6) under the number every Debian architecture but mips64el
 * gives it, where the headers are older than the kernel the module runs on.
 */
#ifdef __NR_fchmodat2
#define NR_FCHMODAT2 __NR_fchmodat2
#elif defined(__mips__) && _MIPS_SIM == _ABI64
#define NR_FCHMODAT2 5452
#else
#define NR_FCHMODAT2 452
#endif

#define NO_ARG 6u       /* an argument index no system call has */
#define TMPFILE_BIT ((unsigned long) (O_TMPFILE & ~O_DIRECTORY))

/*
 * What the filter refuses: a call whose mode argument carries the set-id bit (and,
 * where flag_arg is set, whose flags carry flag), or the whole call where mode_arg
 * is NO_ARG.  The same table drives the probes that prove the filter in force.
 */
static const struct refusal {
        int nr;                 /* negative: no such call on this architecture (libseccomp's pseudo number) */
        unsigned path_arg, mode_arg, flag_arg;
        unsigned long flag;
        int err;
} refusals[] = {
        { SCMP_SYS(chmod), 0, 1, NO_ARG, 0, EPERM },
        { SCMP_SYS(fchmod), NO_ARG, 1, NO_ARG, 0, EPERM },
        { SCMP_SYS(fchmodat), 1, 2, NO_ARG, 0, EPERM },
        { NR_FCHMODAT2, 1, 2, NO_ARG, 0, EPERM },
        { SCMP_SYS(creat), 0, 1, NO_ARG, 0, EPERM },
        { SCMP_SYS(open), 0, 2, 1, O_CREAT, EPERM },
        { SCMP_SYS(open), 0, 2, 1, TMPFILE_BIT, EPERM },
        { SCMP_SYS(openat), 1, 3, 2, O_CREAT, EPERM },
        { SCMP_SYS(openat), 1, 3, 2, TMPFILE_BIT, EPERM },
        { SCMP_SYS(mknod), 0, 1, NO_ARG, 0, EPERM },
        { SCMP_SYS(mknodat), 1, 2, NO_ARG, 0, EPERM },
        /* The mode of these lies in a struct or a ring the filter cannot read: refused whole. */
        { SCMP_SYS(openat2), 1, NO_ARG, NO_ARG, 0, ENOSYS },
        { SCMP_SYS(io_uring_setup), NO_ARG, NO_ARG, NO_ARG, 0, ENOSYS },
        { SCMP_SYS(io_uring_enter), NO_ARG, NO_ARG, NO_ARG, 0, ENOSYS },
        { SCMP_SYS(io_uring_register), NO_ARG, NO_ARG, NO_ARG, 0, ENOSYS },
};

#define N_REFUSALS (sizeof(refusals) / sizeof(refusals[0]))

/* The rules of refusal r for the set-id bit `bit` (the whole call where it has no mode). */
static int add_rule(scmp_filter_ctx ctx, const struct refusal *r, mode_t bit)
{
        struct scmp_arg_cmp cmp[2];
        unsigned n = 0;

        if (r->mode_arg == NO_ARG)
                return seccomp_rule_add_array(ctx, SCMP_ACT_ERRNO((unsigned) r->err), r->nr, 0, NULL);
        cmp[n++] = (struct scmp_arg_cmp) { r->mode_arg, SCMP_CMP_MASKED_EQ, bit, bit };
        if (r->flag_arg != NO_ARG)
                cmp[n++] = (struct scmp_arg_cmp) { r->flag_arg, SCMP_CMP_MASKED_EQ, r->flag, r->flag };
        return seccomp_rule_add_array(ctx, SCMP_ACT_ERRNO((unsigned) r->err), r->nr, n, cmp);
}

/*
 * Whether this process is refused refusal r for `bit`: the call made so that without a
 * filter it fails and changes nothing: the empty path (ENOENT), first the descriptor dir,
 * an O_PATH one (EBADF where a file's is wanted, ENOENT for ""), all-ones bytes wherever
 * the call reads memory (EINVAL: unknown flags), a last size of 0.  ENOSYS counts as refused: a kernel
 * without the call cannot be asked it either.
 */
static bool refused(const struct refusal *r, mode_t bit, int dir)
{
        static const unsigned char ones[256] = { [0 ... 255] = 0xff };
        long a[6];

        if (r->nr < 0)
                return true;
        for (unsigned i = 0; i < 6; i++)
                a[i] = i == 0 ? dir : i == 5 ? 0 : (long) ones;     /* a[5]: a size where there is one */
        if (r->path_arg != NO_ARG)
                a[r->path_arg] = (long) "";
        if (r->mode_arg != NO_ARG)
                a[r->mode_arg] = (long) (bit | S_IRWXU | (r->nr == SCMP_SYS(mknod) || r->nr == SCMP_SYS(mknodat) ?
                                                          S_IFREG : 0));
        if (r->flag_arg != NO_ARG)
                a[r->flag_arg] = (long) (r->flag | O_WRONLY);
        errno = 0;
        if (syscall(r->nr, a[0], a[1], a[2], a[3], a[4], a[5]) != -1)
                return false;
        return errno == EPERM || errno == ENOSYS;
}

/* The first refusal this process is not refused, or NULL when it is refused every one. */
static const struct refusal *first_allowed(mode_t *bit)
{
        static const mode_t bits[] = { S_ISUID, S_ISGID };
        const struct refusal *left = NULL;
        int dir = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);

        if (dir < 0)
                return &refusals[0];
        for (size_t i = 0; !left && i < N_REFUSALS; i++)
                for (size_t b = 0; !left && b < 2; b++)
                        if (!refused(&refusals[i], bits[b], dir)) {
                                *bit = bits[b];
                                left = &refusals[i];
                        }
        close(dir);
        return left;
}

/*
 * The filter for the native architecture only: a call of another ABI (i386's
 * int 0x80, x32) carries other numbers, so the filter answers it ENOSYS whole.
 */
static int load_filter(const char **what)
{
        scmp_filter_ctx ctx = seccomp_init(SCMP_ACT_ALLOW);
        int r;

        *what = "seccomp_init";
        if (!ctx)
                return -ENOMEM;
        r = seccomp_attr_set(ctx, SCMP_FLTATR_ACT_BADARCH, SCMP_ACT_ERRNO(ENOSYS));
        for (size_t i = 0; r == 0 && i < N_REFUSALS; i++) {
                *what = "seccomp_rule_add";
                if (refusals[i].nr < 0)
                        continue;
                r = add_rule(ctx, &refusals[i], S_ISUID);
                if (r == 0 && refusals[i].mode_arg != NO_ARG)
                        r = add_rule(ctx, &refusals[i], S_ISGID);
        }
        if (r == 0) {
                *what = "seccomp_load";
                r = seccomp_load(ctx);
        }
        seccomp_release(ctx);
        return r;
}

int slots_pam_setid_filter(struct pam_handle *pamh, const char *slot, bool debug)
{
        const struct refusal *left;
        const char *what = "";
        mode_t bit = 0;
        int r = 0;

        if (!first_allowed(&bit)) {
                if (debug)
                        pam_syslog(pamh, LOG_DEBUG, "%s: set-id modes already refused; no second filter", slot);
                return 0;
        }
        r = load_filter(&what);
        left = r == 0 ? first_allowed(&bit) : NULL;
        if (r == 0 && !left) {
                if (debug)
                        pam_syslog(pamh, LOG_DEBUG, "%s: seccomp filter refusing set-id modes installed", slot);
                return 0;
        }
        if (r < 0)
                pam_syslog(pamh, LOG_ERR, "%s: cannot install the seccomp filter against set-id files (%s: %s); "
                           "refused; fix: allow seccomp(2) to the program that opens the session", slot, what,
                           strerror(-r));
        else
                pam_syslog(pamh, LOG_ERR, "%s: the seccomp filter is in place but system call %d with mode bit "
                           "0%o still runs; refused; fix: report it (pam_slots(8))", slot, left->nr,
                           (unsigned) bit);
        return -1;
}
