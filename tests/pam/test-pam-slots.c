/*
 * pam_slots.so in process: libpamtest drives a real PAM stack under pam_wrapper
 * (service files from PAM_WRAPPER_SERVICE_DIR, module named by absolute path)
 * and nss_wrapper (passwd and group of the test).  Limits change the process,
 * so every case runs in its own forked child.  Run by tests/pam/pam-slots.sh,
 * which writes the service files and sets the environment.
 *
 * The "slots*" services map the module's own result to a distinct stack
 * result: PAM_SUCCESS -> PAM_SUCCESS, PAM_IGNORE -> PAM_NO_MODULE_DATA (a
 * pam_debug.so line reached only on "ignore"), anything else -> that code.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <linux/capability.h>
#include <linux/filter.h>
#include <linux/openat2.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <security/pam_appl.h>
#include <libpamtest.h>

#define SKIP 77
#define INF RLIM_INFINITY
#define NR_OPEN ((rlim_t) -2)   /* expected value: the contents of /proc/sys/fs/nr_open */
#define NO_NICE 100             /* the case does not set nice */

static const struct {
        const char *name;
        int resource;
} resources[] = {
        { "nproc", RLIMIT_NPROC }, { "nofile", RLIMIT_NOFILE }, { "as", RLIMIT_AS },
        { "data", RLIMIT_DATA }, { "stack", RLIMIT_STACK }, { "cpu", RLIMIT_CPU },
        { "fsize", RLIMIT_FSIZE }, { "core", RLIMIT_CORE }, { "memlock", RLIMIT_MEMLOCK },
};
#define N_RES (sizeof(resources) / sizeof(resources[0]))

struct want {
        int resource;           /* -1 ends the list (RLIMIT_CPU is 0) */
        rlim_t soft, hard;
};
#define WANT_END { -1, 0, 0 }

struct tcase {
        const char *name;
        const char *service;    /* slots, slots_req, slots_opts, slots_optional */
        const char *user;
        const char *config;     /* "@DIR@" becomes the work folder; NULL: no config file */
        mode_t config_mode;     /* 0: 0644 */
        const char *table;      /* NULL: no table file */
        int (*prep)(void);      /* runs in the child before the snapshot; may return SKIP */
        int rc;                 /* the module's result */
        struct want want[8];    /* limits that must change; every other one must not */
        int nice;               /* NO_NICE: must not change */
        int syslog_lines;       /* pam_syslog lines the module must write */
        const char *syslog_has[4];
};

/* ---- child set-ups ---- */

/* Why the case was skipped; the child prints it before it exits with SKIP. */
static char skip_why[256];

/*
 * Whether this process can raise a hard limit.  capget() is not enough: root in a
 * container or user namespace may show CAP_SYS_RESOURCE and still be refused (the
 * kernel asks the initial namespace), and sudo's pam_limits may have lowered a hard
 * limit the test wants to go above.  So the child tries: it lowers RLIMIT_RTTIME's
 * hard limit (this process never runs real-time) and raises it again.
 */
static bool can_raise_hard(void)
{
        struct rlimit rl, low;

        if (getrlimit(RLIMIT_RTTIME, &rl) < 0)
                return false;
        low = rl;
        if (rl.rlim_max == 0) {
                rl.rlim_max = 1;
        } else {
                low.rlim_max = rl.rlim_max == INF ? (rlim_t) 1 << 40 : rl.rlim_max - 1;
                if (low.rlim_cur > low.rlim_max)
                        low.rlim_cur = low.rlim_max;
                if (setrlimit(RLIMIT_RTTIME, &low) < 0)
                        return false;
        }
        return setrlimit(RLIMIT_RTTIME, &rl) == 0;
}

static int skip_unless_can_raise(const char *what)
{
        if (can_raise_hard())
                return 0;
        snprintf(skip_why, sizeof(skip_why), "%s: this process cannot raise a hard limit "
                 "(no CAP_SYS_RESOURCE in the initial user namespace)", what);
        return SKIP;
}

static int drop_sys_resource(void)
{
        struct __user_cap_header_struct h = { .version = _LINUX_CAPABILITY_VERSION_3, .pid = 0 };
        struct __user_cap_data_struct d[2];

        if (syscall(SYS_capget, &h, d) < 0)
                return 1;
        d[CAP_TO_INDEX(CAP_SYS_RESOURCE)].effective &= ~CAP_TO_MASK(CAP_SYS_RESOURCE);
        d[CAP_TO_INDEX(CAP_SYS_RESOURCE)].permitted &= ~CAP_TO_MASK(CAP_SYS_RESOURCE);
        if (syscall(SYS_capset, &h, d) < 0)
                return 1;
        return can_raise_hard() ? 1 : 0;
}

/* An unprivileged child: a hard nofile of 100 that it cannot raise again. */
static int prep_low_hard_nofile(void)
{
        struct rlimit rl = { 100, 100 };

        if (setrlimit(RLIMIT_NOFILE, &rl) < 0)
                return 1;
        return drop_sys_resource();
}

/* Finite limits the module must raise to "unlimited"; without CAP_SYS_RESOURCE only the soft ones. */
static int prep_finite(void)
{
        static const int res[] = { RLIMIT_FSIZE, RLIMIT_CORE, RLIMIT_CPU };
        bool cap = can_raise_hard();

        for (size_t i = 0; i < sizeof(res) / sizeof(res[0]); i++) {
                struct rlimit rl;

                if (getrlimit(res[i], &rl) < 0)
                        return 1;
                if (rl.rlim_max != INF && !cap)
                        return skip_unless_can_raise("a finite hard fsize, core or cpu limit to raise");
                rl.rlim_cur = 1 << 20;
                if (cap)
                        rl.rlim_max = 1 << 20;
                if (setrlimit(res[i], &rl) < 0)
                        return 1;
        }
        return 0;
}

/* The work folder of the case that runs (set before its set-up). */
static const char *case_dir;

/* The table writable by others (mode 0646). */
static int prep_table_writable(void)
{
        char path[4096];

        snprintf(path, sizeof(path), "%s/table.json", case_dir);
        return chmod(path, 0646) < 0 ? 1 : 0;
}

/*
 * An index beside the table that says every slot of the pool of 4 is assigned, in the
 * index's own format and size, but made for another table file (device and inode 0):
 * what a save that died between the table's rename and the index's leaves, seen from a
 * later table.  The module must read the table instead.
 */
/* require_assigned believes a table only when root owns it: a run that is not root cannot make one. */
static int prep_root_table(void)
{
        if (geteuid() == 0)
                return 0;
        snprintf(skip_why, sizeof(skip_why), "require_assigned believes only a table root owns, and this "
                 "run's table is uid %u's: needs root", (unsigned) geteuid());
        return SKIP;
}

static int prep_stale_index(void)
{
        char path[4096];
        FILE *f;

        if (prep_root_table() != 0)
                return SKIP;
        snprintf(path, sizeof(path), "%s/table.json.index", case_dir);
        f = fopen(path, "w");
        if (!f)
                return 1;
        fprintf(f, "slots-index 1 dev %016x ino %016x size %016x ctime %016x.%09d pool %04u\naaaa"
                "\nhash %016x\n", 0, 0, 0, 0, 0, 4u, 0);
        return fclose(f) == 0 && chmod(path, 0640) == 0 ? 0 : 1;
}

/* "nofile": "unlimited" means fs.nr_open; from 64 only CAP_SYS_RESOURCE gets there. */
static int prep_nofile_64(void)
{
        struct rlimit rl = { 64, 64 };

        if (skip_unless_can_raise("nofile from 64 up to fs.nr_open") != 0)
                return SKIP;
        return setrlimit(RLIMIT_NOFILE, &rl) < 0 ? 1 : 0;
}

/*
 * A program whose prctl(PR_SET_NO_NEW_PRIVS) fails (a seccomp filter answers EPERM, as a
 * container's profile might): the module must refuse the session, not open it without.
 * Installing the filter without no_new_privs needs CAP_SYS_ADMIN.
 */
static int prep_nnp_refused(void)
{
        struct sock_filter f[] = {
                BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
                BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_prctl, 0, 3),
                BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, args[0])),
                BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, PR_SET_NO_NEW_PRIVS, 0, 1),
                BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | (EPERM & SECCOMP_RET_DATA)),
                BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
        };
        struct sock_fprog prog = { .len = sizeof(f) / sizeof(f[0]), .filter = f };

        if (prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog, 0, 0) == 0)
                return 0;
        snprintf(skip_why, sizeof(skip_why), "a seccomp filter without no_new_privs needs CAP_SYS_ADMIN: %s",
                 strerror(errno));
        return SKIP;
}

/*
 * A program that cannot install a seccomp filter (seccomp(2) and PR_SET_SECCOMP answer
 * EPERM, as a container's profile might): the module must refuse the session, not open
 * it without the filter against set-id files.  no_new_privs first, so that this filter
 * needs no privilege.
 */
static int prep_filter_refused(void)
{
        struct sock_filter f[] = {
                BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
                BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_seccomp, 3, 0),
                BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_prctl, 0, 3),
                BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, args[0])),
                BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, PR_SET_SECCOMP, 0, 1),
                BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | (EPERM & SECCOMP_RET_DATA)),
                BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
        };
        struct sock_fprog prog = { .len = sizeof(f) / sizeof(f[0]), .filter = f };

        if (prctl(PR_SET_NO_NEW_PRIVS, 1L, 0L, 0L, 0L) == 0 &&
            prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog, 0, 0) == 0)
                return 0;
        snprintf(skip_why, sizeof(skip_why), "cannot install a seccomp filter: %s", strerror(errno));
        return SKIP;
}

/* ---- the cases ---- */

#define CONFIG(limits) \
        "{\"service\": \"svc\", \"slots\": 4, \"table\": \"@DIR@/table.json\", \"limits\": " limits "}\n"
#define LIMITS_A "{\"default\": {\"nofile\": {\"soft\": 200, \"hard\": 300}, \"nproc\": 150, " \
                 "\"core\": 0, \"fsize\": \"1M\", \"cpu\": {\"soft\": 100, \"hard\": 200}}, " \
                 "\"slot02\": {\"nofile\": {\"soft\": 100, \"hard\": 250}, \"nice\": 19}}"
#define WANT_A { RLIMIT_NOFILE, 200, 300 }, { RLIMIT_NPROC, 150, 150 }, { RLIMIT_CORE, 0, 0 }, \
               { RLIMIT_FSIZE, 1 << 20, 1 << 20 }, { RLIMIT_CPU, 100, 200 }
#define TABLE "{\"version\": 1, \"slots\": {" \
              "\"slot02\": {\"user\": \"aa73da63e26b40a1bb701c2b4c024870\", \"since\": \"2026-10-01T09:12:00Z\"}, " \
              "\"slot03\": {\"cleanup\": \"pending\", \"released\": \"2026-10-02T10:00:00Z\"}}}\n"

static const struct tcase cases[] = {
        /* A slot of the pool gets exactly limits.default. */
        { "slot gets the default limits", "slots", "slot01", CONFIG(LIMITS_A), 0, NULL, NULL,
          PAM_SUCCESS, { WANT_A, WANT_END }, NO_NICE, 0, { NULL } },
        /* limits.slot02 replaces the items it names; the other default items stay. */
        { "per-slot entry wins over the default", "slots", "slot02", CONFIG(LIMITS_A), 0, NULL, NULL,
          PAM_SUCCESS,
          { { RLIMIT_NOFILE, 100, 250 }, { RLIMIT_NPROC, 150, 150 }, { RLIMIT_CORE, 0, 0 },
            { RLIMIT_FSIZE, 1 << 20, 1 << 20 }, { RLIMIT_CPU, 100, 200 }, WANT_END },
          19, 0, { NULL } },
        { "unlimited raises finite limits", "slots", "slot01",
          CONFIG("{\"default\": {\"fsize\": \"unlimited\", \"core\": \"unlimited\", \"cpu\": 10},"
                 " \"slot01\": {\"cpu\": \"unlimited\"}}"), 0, NULL, prep_finite, PAM_SUCCESS,
          { { RLIMIT_FSIZE, INF, INF }, { RLIMIT_CORE, INF, INF }, { RLIMIT_CPU, INF, INF }, WANT_END },
          NO_NICE, 0, { NULL } },
        { "nofile unlimited is fs.nr_open", "slots", "slot01",
          CONFIG("{\"default\": {\"nofile\": \"unlimited\"}}"), 0, NULL, prep_nofile_64, PAM_SUCCESS,
          { { RLIMIT_NOFILE, NR_OPEN, NR_OPEN }, WANT_END }, NO_NICE, 0, { NULL } },
        { "size units and soft/hard objects", "slots", "slot01",
          CONFIG("{\"default\": {\"fsize\": {\"soft\": \"512K\", \"hard\": \"2M\"}, \"memlock\": 4096,"
                 " \"nofile\": 77}}"), 0, NULL, NULL, PAM_SUCCESS,
          { { RLIMIT_FSIZE, 512 << 10, 2 << 20 }, { RLIMIT_MEMLOCK, 4096, 4096 }, { RLIMIT_NOFILE, 77, 77 },
            WANT_END }, NO_NICE, 0, { NULL } },

        /* Not a slot of the pool: ignored, nothing changed, and no config needed to decide. */
        { "non-slot user is ignored", "slots", "alice", CONFIG(LIMITS_A), 0, NULL, NULL, PAM_IGNORE,
          { WANT_END }, NO_NICE, 0, { NULL } },
        { "root is ignored", "slots", "root", CONFIG(LIMITS_A), 0, NULL, NULL, PAM_IGNORE,
          { WANT_END }, NO_NICE, 0, { NULL } },
        { "non-slot user needs no config", "slots", "alice", "{ broken", 0, NULL, NULL, PAM_IGNORE,
          { WANT_END }, NO_NICE, 0, { NULL } },
        { "root needs no config", "slots", "root", NULL, 0, NULL, NULL, PAM_IGNORE,
          { WANT_END }, NO_NICE, 0, { NULL } },
        { "slot1 is not a slot name", "slots", "slot1", CONFIG(LIMITS_A), 0, NULL, NULL, PAM_IGNORE,
          { WANT_END }, NO_NICE, 0, { NULL } },
        { "slot001 is not a slot name", "slots", "slot001", CONFIG(LIMITS_A), 0, NULL, NULL, PAM_IGNORE,
          { WANT_END }, NO_NICE, 0, { NULL } },
        { "slot outside the pool is ignored", "slots", "slot05", CONFIG(LIMITS_A), 0, NULL, NULL,
          PAM_IGNORE, { WANT_END }, NO_NICE, 0, { NULL } },

        /* A config it cannot use: PAM_PERM_DENIED, nothing changed, one line naming the problem. */
        { "invalid JSON", "slots", "slot01", "{\"service\": \"svc\", \"slots\": 4,\n", 0, NULL, NULL,
          PAM_PERM_DENIED, { WANT_END }, NO_NICE, 1, { "slot01", "case.conf" } },
        { "bad limit value", "slots", "slot01", CONFIG("{\"default\": {\"nofile\": \"lots\"}}"), 0, NULL,
          NULL, PAM_PERM_DENIED, { WANT_END }, NO_NICE, 1, { "slot01", "nofile", "case.conf:1:" } },
        { "unknown limit", "slots", "slot01", CONFIG("{\"slot01\": {\"nofiles\": 5}}"), 0, NULL, NULL,
          PAM_PERM_DENIED, { WANT_END }, NO_NICE, 1, { "slot01", "nofiles" } },
        { "soft above hard", "slots", "slot01",
          CONFIG("{\"default\": {\"nproc\": {\"soft\": 20, \"hard\": 10}}}"), 0, NULL, NULL,
          PAM_PERM_DENIED, { WANT_END }, NO_NICE, 1, { "slot01", "nproc" } },
        { "nice out of range", "slots", "slot01", CONFIG("{\"default\": {\"nice\": 20}}"), 0, NULL, NULL,
          PAM_PERM_DENIED, { WANT_END }, NO_NICE, 1, { "slot01", "nice" } },
        { "size unit on a count", "slots", "slot01", CONFIG("{\"default\": {\"nproc\": \"1K\"}}"), 0, NULL,
          NULL, PAM_PERM_DENIED, { WANT_END }, NO_NICE, 1, { "slot01", "nproc" } },
        { "missing config", "slots", "slot01", NULL, 0, NULL, NULL, PAM_PERM_DENIED, { WANT_END }, NO_NICE,
          1, { "slot01", "case.conf", "No such file" } },
        { "group-writable config", "slots", "slot01", CONFIG(LIMITS_A), 0664, NULL, NULL, PAM_PERM_DENIED,
          { WANT_END }, NO_NICE, 1, { "slot01", "case.conf", "writable" } },

        /* A limit above the hard limit of an unprivileged process. */
        { "limit above the hard limit, unprivileged", "slots", "slot01",
          CONFIG("{\"default\": {\"nofile\": 200}}"), 0, NULL, prep_low_hard_nofile, PAM_PERM_DENIED,
          { WANT_END }, NO_NICE, 1, { "slot01", "nofile", "Operation not permitted" } },

        /* require_assigned: only a slot the table gives to a user gets a session. */
        { "require_assigned accepts an assigned slot", "slots_req", "slot02", CONFIG(LIMITS_A), 0, TABLE,
          prep_root_table, PAM_SUCCESS,
          { { RLIMIT_NOFILE, 100, 250 }, { RLIMIT_NPROC, 150, 150 }, { RLIMIT_CORE, 0, 0 },
            { RLIMIT_FSIZE, 1 << 20, 1 << 20 }, { RLIMIT_CPU, 100, 200 }, WANT_END },
          19, 0, { NULL } },
        { "require_assigned refuses an unassigned slot", "slots_req", "slot01", CONFIG(LIMITS_A), 0,
          TABLE, prep_root_table, PAM_PERM_DENIED, { WANT_END }, NO_NICE, 1, { "slot01", "not assigned" } },
        { "require_assigned refuses a pending slot", "slots_req", "slot03", CONFIG(LIMITS_A), 0, TABLE,
          prep_root_table, PAM_PERM_DENIED, { WANT_END }, NO_NICE, 1, { "slot03", "pending" } },
        /* Whoever can write the table decides who gets a session: writable by others, refused. */
        { "require_assigned refuses a table writable by others", "slots_req", "slot02", CONFIG(LIMITS_A), 0,
          TABLE, prep_table_writable, PAM_PERM_DENIED, { WANT_END }, NO_NICE, 1,
          { "slot02", "writable by others", "chmod 0640" } },
        { "require_assigned does not believe an index made for another table", "slots_req", "slot01",
          CONFIG(LIMITS_A), 0, TABLE, prep_stale_index, PAM_PERM_DENIED, { WANT_END }, NO_NICE, 1,
          { "slot01", "not assigned" } },
        { "require_assigned without a table", "slots_req", "slot02", CONFIG(LIMITS_A), 0, NULL, NULL,
          PAM_PERM_DENIED, { WANT_END }, NO_NICE, 1, { "slot02", "not assigned" } },
        { "require_assigned with a broken table", "slots_req", "slot02", CONFIG(LIMITS_A), 0,
          "{\"version\": 2, \"slots\": {}}\n", NULL, PAM_PERM_DENIED, { WANT_END }, NO_NICE, 1,
          { "slot02", "table.json" } },
        { "require_assigned ignores non-slots", "slots_req", "alice", NULL, 0, NULL, NULL, PAM_IGNORE,
          { WANT_END }, NO_NICE, 0, { NULL } },

        /*
         * Options: an unknown option refuses a slot's session before any limit is set (a misspelt
         * require_assigned must not drop the check), one line naming it; any other account is
         * ignored as before, the option logged.
         */
        { "an unknown option refuses a slot", "slots_opts", "slot01", CONFIG(LIMITS_A), 0, NULL, NULL,
          PAM_PERM_DENIED, { WANT_END }, NO_NICE, 1, { "slot01", "unknown option bogus_option", "refused" } },
        { "an unknown option, another account", "slots_opts", "alice", CONFIG(LIMITS_A), 0, NULL, NULL,
          PAM_IGNORE, { WANT_END }, NO_NICE, 2, { "unknown option ignored", "bogus_option", "not a slot account" } },

        /*
         * No new privileges: every case checks the flag after the stack (set exactly when the module
         * opened a slot's session); here prctl itself fails and the session is refused.
         */
        { "no_new_privs that cannot be set refuses the session", "slots", "slot01", CONFIG(LIMITS_A), 0, NULL,
          prep_nnp_refused, PAM_PERM_DENIED, { WANT_A, WANT_END }, NO_NICE, 1,
          { "slot01", "no_new_privs", "refused" } },

 /*
         * No set-id file: every case checks after the stack that set-id modes are refused exactly
         * when the module opened a slot's session; here the filter cannot be installed.
         */
        { "a seccomp filter that cannot be installed refuses the session", "slots", "slot01", CONFIG(LIMITS_A),
          0, NULL, prep_filter_refused, PAM_PERM_DENIED, { WANT_A, WANT_END }, NO_NICE, 1,
          { "slot01", "seccomp", "refused" } },

        /* The documented line, "optional": a failure is logged but does not fail the session. */
        { "optional in a real stack does not block", "slots_optional", "slot01", NULL, 0, NULL, NULL,
          PAM_SUCCESS, { WANT_END }, NO_NICE, 1, { "slot01", "case.conf" } },
};

/* ---- the harness ---- */

/*
 * 1 when this process can give no file a set-id mode (chmod u+s, chmod g+s, open with
 * O_CREAT and 04755, mknod of a regular file 02755, openat2 at all) and still gives the
 * ordinary 0755; 0 when every one of those works; -1 (said on report) for a mix.
 */
static int setid_refused(int report, const char *dir)
{
        char f[4096], g[4096], h[4096];
        struct open_how how = { .flags = O_CREAT | O_WRONLY, .mode = 0644 };
        int fd, n = 0, no = 0;
        bool ok[6];

        snprintf(f, sizeof(f), "%s/setid.f", dir);
        snprintf(g, sizeof(g), "%s/setid.g", dir);
        snprintf(h, sizeof(h), "%s/setid.h", dir);
        (void) unlink(f);
        (void) unlink(g);
        (void) unlink(h);
        fd = open(f, O_CREAT | O_WRONLY | O_CLOEXEC, 0600);
        if (fd < 0)
                return -1;
        close(fd);
        ok[n++] = chmod(f, 04755) < 0 && errno == EPERM;
        ok[n++] = chmod(f, 02755) < 0 && errno == EPERM;
        fd = open(g, O_CREAT | O_WRONLY | O_CLOEXEC, 04755);
        ok[n++] = fd < 0 && errno == EPERM;
        if (fd >= 0)
                close(fd);
        ok[n++] = mknod(h, S_IFREG | 02755, 0) < 0 && errno == EPERM;
        fd = (int) syscall(SYS_openat2, AT_FDCWD, g, &how, sizeof(how));
        ok[n++] = fd < 0 && errno == ENOSYS;
        if (fd >= 0)
                close(fd);
        if (chmod(f, 0755) < 0)
                return -1;
        for (int i = 0; i < n; i++)
                no += ok[i];
        if (no == 0 || no == n)
                return no == n;
        dprintf(report, "    set-id modes refused for %d of chmod u+s, chmod g+s, open 04755, mknod 02755, "
                "openat2: only some\n", no);
        return -1;
}

struct snapshot {
        struct rlimit rl[N_RES];
        int nice;
        int nnp;                /* PR_GET_NO_NEW_PRIVS */
        int setid;              /* setid_refused() */
};

static int snap(struct snapshot *s, int report)
{
        for (size_t i = 0; i < N_RES; i++)
                if (getrlimit(resources[i].resource, &s->rl[i]) < 0)
                        return -1;
        s->nnp = prctl(PR_GET_NO_NEW_PRIVS, 0L, 0L, 0L, 0L);
        if (s->nnp < 0)
                return -1;
        s->setid = setid_refused(report, case_dir);
        if (s->setid < 0)
                return -1;
        errno = 0;
        s->nice = getpriority(PRIO_PROCESS, 0);
        return errno ? -1 : 0;
}

static const char *rlstr(rlim_t v, char buf[static 24])
{
        if (v == INF)
                return "unlimited";
        snprintf(buf, 24, "%ju", (uintmax_t) v);
        return buf;
}

static rlim_t nr_open(void)
{
        unsigned long long v = 0;
        FILE *f = fopen("/proc/sys/fs/nr_open", "r");

        if (f) {
                if (fscanf(f, "%llu", &v) != 1)
                        v = 0;
                fclose(f);
        }
        return (rlim_t) v;
}

static char *subst_dir(const char *text, const char *dir)
{
        size_t n = strlen(text) + 1, dl = strlen(dir);
        char *out, *o;

        for (const char *p = strstr(text, "@DIR@"); p; p = strstr(p + 5, "@DIR@"))
                n += dl;
        o = out = malloc(n);
        if (!out)
                return NULL;
        while (*text) {
                if (strncmp(text, "@DIR@", 5) == 0) {
                        memcpy(o, dir, dl);
                        o += dl;
                        text += 5;
                } else {
                        *o++ = *text++;
                }
        }
        *o = '\0';
        return out;
}

static int write_file(const char *dir, const char *name, const char *text, mode_t mode)
{
        char path[4096];
        char *body;
        int fd, ok;

        snprintf(path, sizeof(path), "%s/%s", dir, name);
        (void) unlink(path);
        if (!text)
                return 0;
        body = subst_dir(text, dir);
        fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
        ok = body && fd >= 0 && write(fd, body, strlen(body)) == (ssize_t) strlen(body) &&
             fchmod(fd, mode) == 0;
        if (fd >= 0)
                close(fd);
        free(body);
        return ok ? 0 : -1;
}

static char *slurp(const char *path)
{
        FILE *f = fopen(path, "r");
        char *buf = NULL;
        size_t size = 0;

        if (!f)
                return strdup("");
        if (getdelim(&buf, &size, '\0', f) < 0) {
                free(buf);
                buf = strdup("");
        }
        fclose(f);
        return buf;
}

/* Checks what the module wrote: stdout nothing, stderr only pam_wrapper's lines. */
static int check_output(int report, const struct tcase *c, const char *dir)
{
        char path[4096];
        char *out, *err, *line, *save = NULL;
        int failed = 0, lines = 0;
        char *syslog[16] = { NULL };

        snprintf(path, sizeof(path), "%s/case.out", dir);
        out = slurp(path);
        snprintf(path, sizeof(path), "%s/case.err", dir);
        err = slurp(path);
        if (out[0]) {
                dprintf(report, "    the module wrote to stdout: %s\n", out);
                failed = 1;
        }
        for (line = strtok_r(err, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
                const char *msg = strstr(line, " - SYSLOG(");

                if (strncmp(line, "PWRAP_", 6) != 0) {
                        dprintf(report, "    the module wrote to stderr: %s\n", line);
                        failed = 1;
                        continue;
                }
                if (!msg)
                        continue;
                if (lines < 16)
                        syslog[lines] = line;
                lines++;
        }
        if (lines != c->syslog_lines) {
                dprintf(report, "    %d pam_syslog lines, want %d\n", lines, c->syslog_lines);
                failed = 1;
        }
        for (size_t k = 0; k < sizeof(c->syslog_has) / sizeof(c->syslog_has[0]) && c->syslog_has[k]; k++) {
                bool found = false;

                for (int i = 0; i < lines && i < 16; i++)
                        found = found || strstr(syslog[i], c->syslog_has[k]);
                if (!found) {
                        dprintf(report, "    no pam_syslog line has \"%s\"\n", c->syslog_has[k]);
                        failed = 1;
                }
        }
        if (failed)
                for (int i = 0; i < lines && i < 16; i++)
                        dprintf(report, "    syslog: %s\n", syslog[i]);
        free(out);
        free(err);
        return failed;
}

static int stack_rc(int module_rc)
{
        return module_rc == PAM_IGNORE ? PAM_NO_MODULE_DATA : module_rc;
}

/* The child: set up, run the stack, compare.  Returns its exit status. */
static int run_case(int report, const struct tcase *c, const char *dir)
{
        struct snapshot before, after;
        /* PAM_SILENT throughout: pam_debug.so would talk otherwise; the module never does. */
        struct pam_testcase tests[] = {
                pam_test_flags(PAMTEST_OPEN_SESSION, stack_rc(c->rc), PAM_SILENT),
                pam_test_flags(PAMTEST_CLOSE_SESSION, PAM_SUCCESS, PAM_SILENT),
        };
        struct pam_testcase open_only[] = {
                pam_test_flags(PAMTEST_OPEN_SESSION, stack_rc(c->rc), PAM_SILENT),
        };
        /* libpamtest copies messages into buffers the caller provides. */
        static char info_buf[8][PAM_MAX_MSG_SIZE], err_buf[8][PAM_MAX_MSG_SIZE];
        char *info[9] = { NULL }, *err[9] = { NULL };
        struct pamtest_conv_data conv = { .out_info = info, .out_err = err };
        char path[4096], a[24], b[24], x[24], y[24];
        enum pamtest_err perr;
        int failed = 0, fd, r, saved_err, want_nnp, want_setid;
        bool with_close = c->rc != PAM_PERM_DENIED || strcmp(c->service, "slots_optional") == 0;

        for (int i = 0; i < 8; i++) {
                info[i] = info_buf[i];
                err[i] = err_buf[i];
        }

        /*
         * libpam walks the close stack along the open's frozen chain (the
         * actions the open's results chose), so the stack's close result repeats
         * the open's; test-dlopen checks the module's own close results.  After
         * a failed open there is no close, as in sudo.
         */
        tests[1].expected_rv = strcmp(c->service, "slots_optional") == 0 ? PAM_SUCCESS : stack_rc(c->rc);
        if (write_file(dir, "case.conf", c->config, c->config_mode ? c->config_mode : 0644) < 0 ||
            write_file(dir, "table.json", c->table, 0640) < 0) {
                dprintf(report, "    cannot write the fixture in %s\n", dir);
                return 1;
        }
        case_dir = dir;
        if (c->prep && (r = c->prep()) != 0) {
                if (r != SKIP)
                        dprintf(report, "    set-up failed: %s\n", strerror(errno));
                else
                        dprintf(report, "    skip: %s\n", skip_why);
                return r;
        }
        if (snap(&before, report) < 0)
                return 1;
        /* A hard limit the case wants above the one this process has needs the privilege to raise it. */
        for (const struct want *w = c->want; w->resource >= 0; w++)
                for (size_t i = 0; i < N_RES; i++) {
                        rlim_t hard = w->hard == NR_OPEN ? nr_open() : w->hard;
                        char what[96], wa[24], wb[24];

                        if (resources[i].resource != w->resource || hard <= before.rl[i].rlim_max)
                                continue;
                        snprintf(what, sizeof(what), "hard %s %s wanted, %s here", resources[i].name,
                                 rlstr(hard, wa), rlstr(before.rl[i].rlim_max, wb));
                        if (skip_unless_can_raise(what) != 0) {
                                dprintf(report, "    skip: %s\n", skip_why);
                                return SKIP;
                        }
                }

        /* stdout and stderr to files; pam_wrapper prints pam_syslog lines at level ERROR..DEBUG. */
        setenv("PAM_WRAPPER_DEBUGLEVEL", "3", 1);
        snprintf(path, sizeof(path), "%s/case.out", dir);
        fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
        if (fd < 0 || dup2(fd, 1) < 0)
                return 1;
        close(fd);
        snprintf(path, sizeof(path), "%s/case.err", dir);
        fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
        saved_err = dup(2);
        if (fd < 0 || saved_err < 0 || dup2(fd, 2) < 0)
                return 1;
        close(fd);

        if (with_close)
                perr = run_pamtest(c->service, c->user, &conv, tests, NULL);
        else
                perr = run_pamtest(c->service, c->user, &conv, open_only, NULL);

        /* stderr back, for what runs at exit (pam_wrapper's clean-up, a sanitizer's report). */
        setenv("PAM_WRAPPER_DEBUGLEVEL", "0", 1);
        if (dup2(saved_err, 2) < 0)
                return 1;
        close(saved_err);

        if (snap(&after, report) < 0)
                return 1;
        if (perr != PAMTEST_ERR_OK) {
                const struct pam_testcase *f = perr != PAMTEST_ERR_CASE ? NULL :
                                               with_close ? pamtest_failed_case(tests) :
                                               pamtest_failed_case(open_only);

                if (f)
                        dprintf(report, "    %s returned %s (%d), want %s (%d)\n",
                                f->pam_operation == PAMTEST_OPEN_SESSION ? "pam_open_session" :
                                "pam_close_session",
                                pam_strerror(NULL, f->op_rv), f->op_rv, pam_strerror(NULL, f->expected_rv),
                                f->expected_rv);
                else
                        dprintf(report, "    run_pamtest: %s\n", pamtest_strerror(perr));
                failed = 1;
        }

        for (size_t i = 0; i < N_RES; i++) {
                rlim_t soft = before.rl[i].rlim_cur, hard = before.rl[i].rlim_max;

                for (const struct want *w = c->want; w->resource >= 0; w++)
                        if (w->resource == resources[i].resource) {
                                soft = w->soft == NR_OPEN ? nr_open() : w->soft;
                                hard = w->hard == NR_OPEN ? nr_open() : w->hard;
                        }
                if (after.rl[i].rlim_cur != soft || after.rl[i].rlim_max != hard) {
                        dprintf(report, "    %s is %s:%s, want %s:%s\n", resources[i].name,
                                rlstr(after.rl[i].rlim_cur, a), rlstr(after.rl[i].rlim_max, b),
                                rlstr(soft, x), rlstr(hard, y));
                        failed = 1;
                }
        }
        if (after.nice != (c->nice == NO_NICE ? before.nice : c->nice)) {
                dprintf(report, "    nice is %d, want %d\n", after.nice,
                        c->nice == NO_NICE ? before.nice : c->nice);
                failed = 1;
        }
        /* A slot's session the module opened has no_new_privs; nothing else gets it from the module. */
        want_nnp = before.nnp || (c->rc == PAM_SUCCESS && strcmp(c->service, "slots_optional") != 0);
        if (after.nnp != want_nnp) {
                dprintf(report, "    no_new_privs is %d, want %d\n", after.nnp, want_nnp);
                failed = 1;
        }
        /* The filter against set-id files comes with no_new_privs, from the same sessions. */
        want_setid = before.setid || (c->rc == PAM_SUCCESS && strcmp(c->service, "slots_optional") != 0);
        if (after.setid != want_setid) {
                dprintf(report, "    set-id modes %s after the stack, want %s\n", after.setid ? "refused" : "allowed",
                        want_setid ? "refused" : "allowed");
                failed = 1;
        }
        /* Only pam_debug.so (on the "ignore" path) may talk: "open_session=...". */
        for (int i = 0; i < 8; i++) {
                const char *m[] = { info_buf[i], err_buf[i] };

                for (int k = 0; k < 2; k++)
                        if (m[k][0] && strncmp(m[k], "open_session=", 13) != 0 &&
                            strncmp(m[k], "close_session=", 14) != 0) {
                                dprintf(report, "    the stack talked to the user: %s\n", m[k]);
                                failed = 1;
                        }
        }
        failed |= check_output(report, c, dir);
        return failed;
}

int main(int argc, char **argv)
{
        const char *dir = getenv("SLOTS_TEST_DIR");
        int failed = 0, passed = 0, skipped = 0;
        size_t n = sizeof(cases) / sizeof(cases[0]);

        if (!dir || !getenv("PAM_WRAPPER") || !getenv("PAM_WRAPPER_SERVICE_DIR")) {
                fprintf(stderr, "run through tests/pam/pam-slots.sh (needs pam_wrapper's environment)\n");
                return 99;
        }
        printf("1..%zu\n", n);
        fflush(stdout);
        for (size_t i = 0; i < n; i++) {
                int report, status = 0;
                pid_t pid;

                /* Arguments pick cases by number (for debugging one). */
                if (argc > 1) {
                        bool picked = false;
                        for (int k = 1; k < argc; k++)
                                picked = picked || (size_t) atoi(argv[k]) == i + 1;
                        if (!picked)
                                continue;
                }
                report = dup(1);

                fflush(stdout);
                pid = fork();
                if (pid < 0) {
                        perror("fork");
                        return 99;
                }
                if (pid == 0)
                        exit(run_case(report, &cases[i], dir));    /* exit: pam_wrapper removes its /tmp/pam.X */
                close(report);
                if (waitpid(pid, &status, 0) < 0) {
                        perror("waitpid");
                        return 99;
                }
                if (WIFEXITED(status) && WEXITSTATUS(status) == 0) {
                        printf("ok %zu - %s\n", i + 1, cases[i].name);
                        passed++;
                } else if (WIFEXITED(status) && WEXITSTATUS(status) == SKIP) {
                        printf("ok %zu - %s # SKIP (the reason is above)\n", i + 1, cases[i].name);
                        skipped++;
                } else {
                        if (WIFSIGNALED(status))
                                printf("not ok %zu - %s (killed by signal %d)\n", i + 1, cases[i].name,
                                       WTERMSIG(status));
                        else
                                printf("not ok %zu - %s\n", i + 1, cases[i].name);
                        failed++;
                }
                fflush(stdout);
        }
        printf("# %d passed, %d failed, %d skipped\n", passed, failed, skipped);
        return failed ? 1 : passed ? 0 : SKIP;
}
