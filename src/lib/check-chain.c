/*
 * check's rows about the executor's sudo chain: the drop-in against its rendering and sudo's
 * own listing for the whole pool (sudoers-dropin, sudo-grants), and the real runs per slot as
 * the service (sudo-preflight, chain, sudo-env, sudo-kill).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "accounts.h"
#include "check-int.h"
#include "child.h"
#include "error.h"
#include "fsutil.h"
#include "provision.h"

#define SUDO_TIMEOUT_MS 5000

/*
 * Whether sudo is there to run (a regular file with an execute bit; not yet
 * whether it works).  When it is not, adds check's row (slot may be NULL): a
 * SKIP when it is missing, more (may be NULL) said after why, or a FAIL when
 * it could not be looked at; the caller then stops.
 */
static bool sudo_missing(struct ctx *k, const char *check, const char *slot, const char *more)
{
        const char *sudo = k->o->sudo ? k->o->sudo : SUDO_DEFAULT;
        struct stat st;
        int r = stat(sudo, &st) < 0 ? -errno : 0;

        if (r == 0 && S_ISREG(st.st_mode) && (st.st_mode & 0111))
                return false;
        if (r < 0 && r != -ENOENT && r != -ENOTDIR)
                add_rowf(k, SLOTS_CHECK_FAIL, check, slot, NULL, "cannot stat %s: %s", sudo, strerror(-r));
        else
                add_rowf(k, SLOTS_CHECK_SKIP, check, slot, NULL, "sudo is not installed (no %s)%s", sudo,
                         more ? more : "");
        return true;
}

/* ---- sudo-preflight ---- */

struct sudo_job {
        const char *sudo;
        const char *slot;
        int out;                /* write end of the pipe for sudo's messages */
};

static int sudo_child(void *arg)
{
        const struct sudo_job *j = arg;
        const char *const argv[] = { j->sudo, "-n", "-u", j->slot, "/usr/bin/true", NULL };
        const char *const envp[] = { "PATH=/usr/sbin:/usr/bin:/sbin:/bin", "LANG=C", "LC_ALL=C", NULL };
        int null = open("/dev/null", O_RDONLY | O_CLOEXEC);

        if (null < 0 || dup2(null, STDIN_FILENO) < 0 || dup2(j->out, STDOUT_FILENO) < 0 ||
            dup2(j->out, STDERR_FILENO) < 0)
                return 124;
        closefrom(3);
        execve(j->sudo, (char *const *) argv, (char *const *) envp);
        return 124;
}

void check_sudo(struct ctx *k, const struct slotinfo *s)
{
        const char *sudo = k->o->sudo ? k->o->sudo : SUDO_DEFAULT;
        int timeout = k->o->sudo_timeout_ms > 0 ? k->o->sudo_timeout_ms : SUDO_TIMEOUT_MS;
        struct sudo_job j = { .sudo = sudo, .slot = s->name };
        char out[512] = "", fix[512];
        struct timespec t0, t1;
        int pipefd[2], r;
        ssize_t n;
        long ms;

        if (sudo_missing(k, "sudo-preflight", s->name, NULL))
                return;
        if (!k->have_svc) {
                add_rowf(k, SLOTS_CHECK_FAIL, "sudo-preflight", s->name,
                         "create the service account, or fix \"service\"",
                         "the service account %s does not exist", k->cfg->service);
                return;
        }
        if (s->found <= 0) {
                add_rowf(k, SLOTS_CHECK_SKIP, "sudo-preflight", s->name, NULL, "no account %s", s->name);
                return;
        }
        /* Only the read end is non-blocking: sudo writes to a plain pipe. */
        if (pipe2(pipefd, O_CLOEXEC) < 0 || fcntl(pipefd[0], F_SETFL, O_NONBLOCK) < 0) {
                add_rowf(k, SLOTS_CHECK_FAIL, "sudo-preflight", s->name, "run the check again",
                         "cannot make a pipe: %s", strerror(errno));
                return;
        }
        j.out = pipefd[1];
        clock_gettime(CLOCK_MONOTONIC, &t0);
        r = svc_run(k, sudo_child, &j, timeout);
        clock_gettime(CLOCK_MONOTONIC, &t1);
        close(pipefd[1]);
        n = read(pipefd[0], out, sizeof(out) - 1);
        close(pipefd[0]);
        out[n > 0 ? n : 0] = '\0';
        out[strcspn(out, "\n")] = '\0';
        ms = (t1.tv_sec - t0.tv_sec) * 1000L + (t1.tv_nsec - t0.tv_nsec) / 1000000L;
        snprintf(fix, sizeof(fix),
                 "let %s run /usr/bin/true as %s without a password in /etc/sudoers.d/slots-%s (slots-provision "
                 "writes it), then visudo -c", k->cfg->service, s->name, k->cfg->service);
        if (r == 0)
                add_rowf(k, SLOTS_CHECK_PASS, "sudo-preflight", s->name, NULL,
                         "as %s, sudo -n -u %s /usr/bin/true exits 0 (%ld ms)", k->cfg->service, s->name, ms);
        else if (r == -ETIMEDOUT)
                add_rowf(k, SLOTS_CHECK_FAIL, "sudo-preflight", s->name,
                         "find what sudo waits for (PAM modules, LDAP/sssd, DNS for the host name: sudo -n -u slotNN "
                         "/usr/bin/true as the service account) and make it answer",
                         "as %s, sudo -n -u %s /usr/bin/true did not finish within %d ms; killed", k->cfg->service,
                         s->name, timeout);
        else if (r == 124)
                add_rowf(k, SLOTS_CHECK_FAIL, "sudo-preflight", s->name, "reinstall sudo",
                         "as %s, %s cannot be run", k->cfg->service, sudo);
        else if (r == -ECHILD && snprintf(fix, sizeof(fix), "find the process of %s that ends the slot's processes "
                                          "(ps -o pid,stat,cmd -u %s) and end it, or release the slot (release "
                                          "ends every process of it)", s->name, s->name) > 0)
                /* sudo passes its command's death by a signal on: sudoers let it run, something killed it. */
                add_rowf(k, SLOTS_CHECK_FAIL, "sudo-preflight", s->name, fix,
                         "as %s, sudo -n -u %s /usr/bin/true was killed by a signal: sudo ran it, and a process "
                         "of %s is ending the slot's processes (a kill(-1) loop?)", k->cfg->service, s->name,
                         s->name);
        else if (r < 0)
                add_rowf(k, SLOTS_CHECK_FAIL, "sudo-preflight", s->name, fix, "as %s, sudo -n -u %s /usr/bin/true: %s",
                         k->cfg->service, s->name, probe_failure(r));
        else
                add_rowf(k, SLOTS_CHECK_FAIL, "sudo-preflight", s->name, fix,
                         "as %s, sudo -n -u %s /usr/bin/true exits %d%s%s", k->cfg->service, s->name, r,
                         out[0] ? ": " : "", out);
}

/* ---- the real chain: sudo -> [slotctl] -> launcher, as the service, the way the platform runs it ---- */

#define CHAIN_TIMEOUT_MS 20000
#define CHAIN_ARGV_MAX (PROBE_MAX_ARGS + 16)
#define PROBE_MAX_ARGS 64

struct chain_job {
        const char *argv[CHAIN_ARGV_MAX];
        const char *envp[64];
        const char *cwd;        /* where sudo starts */
        bool cwd_in_argv;       /* the probe names {cwd}: it may start in / when the service cannot enter cwd */
        int out, err;           /* write ends of the pipes */
};

#define CHAIN_NO_CWD 123        /* the service cannot enter cwd and the probe does not name it */

static int chain_child(void *arg)
{
        const struct chain_job *j = arg;
        int null = open("/dev/null", O_RDONLY | O_CLOEXEC);

        if (null < 0 || dup2(null, STDIN_FILENO) < 0 || dup2(j->out, STDOUT_FILENO) < 0 ||
            dup2(j->err, STDERR_FILENO) < 0)
                return 124;
        closefrom(3);
        if (chdir(j->cwd) < 0 && (!j->cwd_in_argv || chdir("/") < 0))
                return CHAIN_NO_CWD;
        execve(j->argv[0], (char *const *) j->argv, (char *const *) j->envp);
        return 124;
}

/* Reads what is in a pipe (non-blocking) into buf; the first line only when first_line. */
static void chain_read(int fd, char *buf, size_t size, bool first_line)
{
        ssize_t n = read(fd, buf, size - 1);

        buf[n > 0 ? n : 0] = '\0';
        if (first_line)
                buf[strcspn(buf, "\n")] = '\0';
}

/* sudo_env as --preserve-env names (a prefix "X*" gives X_SLOTS_CHECK) and their marker values. */
static void chain_env(const struct ctx *k, struct chain_job *j, char *list, size_t size, char vals[][160],
                      size_t *nenv)
{
        size_t o = 0;

        list[0] = '\0';
        for (size_t i = 0; i < k->cfg->n_sudo_env && *nenv < 60; i++) {
                const char *n = k->cfg->sudo_env[i];
                size_t len = strlen(n);
                bool prefix = n[len - 1] == '*';

                if (strcmp(n, "PATH") == 0)
                        continue;       /* set below, and listed */
                snprintf(vals[*nenv], 160, "%.*s%s=slots-check", (int) (prefix ? len - 1 : len), n,
                         prefix ? "SLOTS_CHECK" : "");
                j->envp[*nenv] = vals[*nenv];
                (*nenv)++;
                o += (size_t) snprintf(list + o, o < size ? size - o : 0, "%s%.*s%s", o ? "," : "",
                                       (int) (prefix ? len - 1 : len), n, prefix ? "SLOTS_CHECK" : "");
        }
        for (size_t i = 0; i < k->cfg->n_sudo_env; i++)
                if (strcmp(k->cfg->sudo_env[i], "PATH") == 0)
                        o += (size_t) snprintf(list + o, o < size ? size - o : 0, "%sPATH", o ? "," : "");
}

/*
 * Runs, as the service, sudo -n -u SLOT [-g GROUP] [--preserve-env=LIST] -- [SLOTCTL] PROBE
 * in cwd.  Returns the status; out gets stdout, err the first stderr line.
 */
static int chain_run(struct ctx *k, const struct slotinfo *s, const char *launcher, const char *cwd,
                     bool with_env, char *out, size_t outsize, char *err, size_t errsize)
{
        const char *sudo = k->o->sudo ? k->o->sudo : SUDO_DEFAULT;
        static char vals[60][160];
        char list[4096], pe[4200] = "", *subst[PROBE_MAX_ARGS] = { NULL };
        struct chain_job j = { .cwd = cwd };
        int po[2] = { -1, -1 }, pr[2] = { -1, -1 }, r;
        size_t a = 0, nenv = 0;

        j.envp[nenv++] = "PATH=/usr/local/bin:/usr/bin:/bin";
        j.envp[nenv++] = "LANG=C";
        if (with_env) {
                chain_env(k, &j, list, sizeof(list), vals, &nenv);
                snprintf(pe, sizeof(pe), "--preserve-env=%s", list);
        }
        j.envp[nenv] = NULL;
        j.argv[a++] = sudo;
        j.argv[a++] = "-n";
        j.argv[a++] = "-u";
        j.argv[a++] = s->name;
        if (k->cfg->run_as_group) {
                j.argv[a++] = "-g";
                j.argv[a++] = k->cfg->run_as_group;
        }
        if (pe[0])
                j.argv[a++] = pe;
        j.argv[a++] = "--";
        if (k->cfg->slotctl)
                j.argv[a++] = k->cfg->slotctl;
        for (size_t i = 0; i < k->cfg->n_probe && i < PROBE_MAX_ARGS; i++) {
                const char *t = k->cfg->probe[i];
                struct strbuf b = { 0 };

                for (const char *p = t; *p;) {
                        if (strncmp(p, "{launcher}", 10) == 0) {
                                strbuf_addf(&b, "%s", launcher);
                                p += 10;
                        } else if (strncmp(p, "{cwd}", 5) == 0) {
                                strbuf_addf(&b, "%s", cwd);
                                j.cwd_in_argv = true;
                                p += 5;
                        } else {
                                strbuf_addf(&b, "%c", *p++);
                        }
                }
                if (b.oom || !b.s) {
                        strbuf_free(&b);
                        r = -ENOMEM;
                        goto out;
                }
                subst[i] = b.s;
                j.argv[a++] = subst[i];
        }
        j.argv[a] = NULL;
        if (pipe2(po, O_CLOEXEC) < 0 || pipe2(pr, O_CLOEXEC) < 0 || fcntl(po[0], F_SETFL, O_NONBLOCK) < 0 ||
            fcntl(pr[0], F_SETFL, O_NONBLOCK) < 0) {
                r = -errno;
                goto out;
        }
        j.out = po[1];
        j.err = pr[1];
        r = svc_run(k, chain_child, &j, CHAIN_TIMEOUT_MS);
        close(po[1]);
        close(pr[1]);
        po[1] = pr[1] = -1;
        chain_read(po[0], out, outsize, false);
        chain_read(pr[0], err, errsize, true);
out:
        for (int i = 0; i < 2; i++) {
                if (po[i] >= 0)
                        close(po[i]);
                if (pr[i] >= 0)
                        close(pr[i]);
        }
        for (size_t i = 0; i < PROBE_MAX_ARGS; i++)
                free(subst[i]);
        return r;
}

/* The launcher the platform runs: through current when it exists, else the release check found. */
static char *chain_launcher(const struct ctx *k)
{
        struct stat st;
        char *p = NULL;

        if (asprintf(&p, "%s/current/bin/%s", strcmp(k->cfg->app_root, "/") ? k->cfg->app_root : "",
                     k->cfg->launcher) < 0)
                return NULL;
        if (lstat(p, &st) == 0 || k->n_launchers == 0)
                return p;
        free(p);
        return strdup(k->launchers[0].path);
}

static bool chain_ready(struct ctx *k, const struct slotinfo *s, const char *check)
{
        if (!k->cfg->app_root || !k->cfg->launcher) {
                add_rowf(k, SLOTS_CHECK_SKIP, check, s->name, NULL, "%s sets no app_root and launcher", k->cfg->path);
                return false;
        }
        if (sudo_missing(k, check, s->name, NULL))
                return false;
        if (!k->have_svc || s->found <= 0) {
                add_rowf(k, SLOTS_CHECK_SKIP, check, s->name, NULL, "no service account or no account %s", s->name);
                return false;
        }
        return true;
}

/* msg into out (cut at size), each cwd in it replaced by shown: a user's tree holds the user id. */
static void shown_as(char *out, size_t size, const char *msg, const char *cwd, const char *shown)
{
        size_t n = 0, cl = strlen(cwd), sl = strlen(shown);

        while (*msg && n + 1 < size) {
                if (cl && strcmp(cwd, shown) != 0 && strncmp(msg, cwd, cl) == 0 && n + sl < size) {
                        memcpy(out + n, shown, sl);
                        n += sl;
                        msg += cl;
                } else {
                        out[n++] = *msg++;
                }
        }
        out[n] = '\0';
}

/* One chain row: the probe in cwd (shown as shown) must exit 0 and print cwd. */
static void chain_one(struct ctx *k, const struct slotinfo *s, const char *launcher, const char *cwd,
                      const char *shown)
{
        char out[4096], err[1024], esc[4200], fix[600];
        int r = chain_run(k, s, launcher, cwd, false, out, sizeof(out), err, sizeof(err));

        snprintf(fix, sizeof(fix), "run it as %s and read the launcher's message: sudo -n -u %s -- %s%s%s ... "
                 "(the launcher must work for the slot in %s)", k->cfg->service, s->name,
                 k->cfg->slotctl ? k->cfg->slotctl : "", k->cfg->slotctl ? " " : "", launcher, shown);
        /* Exact here (JSON keeps it; the command escapes it), but never the path of a user's tree. */
        shown_as(esc, sizeof(esc), err, cwd, shown);
        if (r == -ENOMEM) {
                k->err = -ENOMEM;
        } else if (r == -ETIMEDOUT) {
                add_rowf(k, SLOTS_CHECK_FAIL, "chain", s->name, fix, "in %s: the probe did not finish within %d ms",
                         shown, CHAIN_TIMEOUT_MS);
        } else if (r == CHAIN_NO_CWD) {
                add_rowf(k, SLOTS_CHECK_SKIP, "chain", s->name, NULL,
                         "in %s: %s cannot enter the folder and the probe does not name {cwd} for the launcher to "
                         "change into", shown, k->cfg->service);
        } else if (r != 0) {
                add_rowf(k, SLOTS_CHECK_FAIL, "chain", s->name, fix, "in %s: the launcher exits %d%s%s", shown, r,
                         esc[0] ? ": " : "", esc);
        } else {
                out[strcspn(out, "\n")] = '\0';
                if (strcmp(out, cwd) != 0)
                        add_rowf(k, SLOTS_CHECK_FAIL, "chain", s->name, fix,
                                 "in %s: the probe ran but did not print its working folder%s%s", shown,
                                 esc[0] ? ": " : "", esc);
                else
                        add_rowf(k, SLOTS_CHECK_PASS, "chain", s->name, NULL, "in %s: sudo -> %s%s exits 0", shown,
                                 k->cfg->slotctl ? "slotctl -> " : "", "launcher");
        }
}

/* The probe in the docs root, each shared folder and the user's tree (the test slot: its state folder). */
void check_chain(struct ctx *k, const struct slotinfo *s)
{
        char *launcher, *dir = NULL;

        if (!chain_ready(k, s, "chain"))
                return;
        launcher = chain_launcher(k);
        if (!launcher) {
                k->err = -ENOMEM;
                return;
        }
        if (!s->user) {
                if (asprintf(&dir, "%s/state/%s", k->cfg->slots_root, s->name) >= 0)
                        chain_one(k, s, launcher, dir, dir);
                free(dir);
                free(launcher);
                return;
        }
        if (k->cfg->docs_root) {
                chain_one(k, s, launcher, k->cfg->docs_root, k->cfg->docs_root);
                for (size_t i = 0; i < k->cfg->n_shared_dirs; i++) {
                        if (!(dir = slots_path_join(k->cfg->docs_root, k->cfg->shared_dirs[i])))
                                break;
                        chain_one(k, s, launcher, dir, dir);
                        free(dir);
                }
                if (s->tree)
                        chain_one(k, s, launcher, s->tree, s->tree_shown ? s->tree_shown : "<docs>/<user>");
        }
        free(launcher);
}

/* sudo accepts the executor's --preserve-env list for the launcher. */
void check_sudo_env(struct ctx *k, const struct slotinfo *s)
{
        char out[4096], err[1024], esc[4200];
        char *launcher;
        const char *cwd = "/";
        int r;

        if (!chain_ready(k, s, "sudo-env"))
                return;
        launcher = chain_launcher(k);
        if (!launcher) {
                k->err = -ENOMEM;
                return;
        }
        r = chain_run(k, s, launcher, cwd, true, out, sizeof(out), err, sizeof(err));
        /* Exact here (JSON keeps it); the command escapes it for the terminal. */
        snprintf(esc, sizeof(esc), "%s", err);
        if (strstr(err, "not allowed to set") || strstr(err, "password is required") ||
            strstr(err, "not allowed to preserve"))
                add_rowf(k, SLOTS_CHECK_FAIL, "sudo-env", s->name,
                         "run slots-provision: its drop-in keeps exactly the names of sudo_env", "sudo refuses: %s", esc);
        else if (r < 0 && r != -ENOMEM)
                add_rowf(k, SLOTS_CHECK_FAIL, "sudo-env", s->name, "run the check again", "cannot run sudo: %s",
                         probe_failure(r));
        else if (r != -ENOMEM)
                add_rowf(k, SLOTS_CHECK_PASS, "sudo-env", s->name, NULL,
                         "sudo accepts --preserve-env for the %zu names of sudo_env", k->cfg->n_sudo_env);
        else
                k->err = -ENOMEM;
        free(launcher);
}

/* sudo-kill: the service starts a run in its own process group, as the platform does, and ends it. */
struct kill_job {
        const char *run[CHAIN_ARGV_MAX];      /* sudo ... -- [slotctl] launcher /bin/sleep 30 */
        const char *sudo, *slot;
        uid_t slot_uid;
};

enum { KILL_OK, KILL_NOT_STARTED = 10, KILL_REFUSED, KILL_SURVIVED, KILL_FORK };

/* True when a process of uid is in process group pgid (read from /proc). */
static bool group_has(pid_t pgid, uid_t uid)
{
        DIR *d = opendir("/proc");
        struct dirent *de;
        bool found = false;

        if (!d)
                return false;
        while (!found && (de = readdir(d))) {
                char path[300], buf[512], *p;
                struct stat st;
                long pg;
                int fd;
                ssize_t n;

                if (de->d_name[0] < '1' || de->d_name[0] > '9')
                        continue;
                snprintf(path, sizeof(path), "/proc/%s/stat", de->d_name);
                fd = open(path, O_RDONLY | O_CLOEXEC);
                if (fd < 0)
                        continue;
                n = fstat(fd, &st) == 0 ? read(fd, buf, sizeof(buf) - 1) : -1;
                close(fd);
                if (n <= 0 || st.st_uid != uid)
                        continue;
                buf[n] = '\0';
                /* pid (comm) state ppid pgrp: comm may hold anything, so start after its last ')' */
                p = strrchr(buf, ')');
                if (p && sscanf(p + 1, " %*c %*d %ld", &pg) == 1 && pg == (long) pgid)
                        found = true;
        }
        closedir(d);
        return found;
}

/*
 * Starts the slot's command through sudo, ends its process group with
 * "sudo -u SLOT kill", and tells whether all of it went.  Each stage has
 * STAGE_MS: the run to show a process of the slot, the kill to exit, the
 * run's group to end after it (slots-admin(8): "within 5 seconds").
 */
#define STAGE_MS 5000
static int kill_child(void *arg)
{
        const struct kill_job *j = arg;
        struct slots_child run, k;
        char pg[32];
        int r, null = open("/dev/null", O_RDWR | O_CLOEXEC);

        if (null < 0)
                return KILL_FORK;
        r = slots_child_start(&run, STAGE_MS, SLOTS_CHILD_GROUP);
        if (r < 0)
                return KILL_FORK;
        if (r == 0) {
                if (dup2(null, 0) < 0 || dup2(null, 1) < 0 || dup2(null, 2) < 0 || chdir("/") < 0)
                        _exit(124);
                execve(j->run[0], (char *const *) j->run,
                       (char *const *) (const char *const[]){ "PATH=/usr/local/bin:/usr/bin:/bin", "LANG=C", NULL });
                _exit(124);
        }
        while (!group_has(run.pid, j->slot_uid)) {
                int status;

                r = slots_child_poll(&run, &status);
                if (r < 0)
                        slots_child_kill(&run);
                if (r != 0)
                        return KILL_NOT_STARTED;        /* it ended, or its deadline passed (then killed) */
                (void) poll(NULL, 0, 10);
        }
        snprintf(pg, sizeof(pg), "-%ld", (long) run.pid);
        r = slots_child_start(&k, STAGE_MS, 0);
        if (r == 0) {
                const char *const argv[] = { j->sudo, "-n", "-u", j->slot, "kill", "-s", "TERM", "--",
                                       pg, NULL };
                if (dup2(null, 0) < 0 || dup2(null, 1) < 0 || dup2(null, 2) < 0)
                        _exit(124);
                execve(j->sudo, (char *const *) argv,
                       (char *const *) (const char *const[]){ "PATH=/usr/local/bin:/usr/bin:/bin", "LANG=C", NULL });
                _exit(124);
        }
        if (r < 0 || slots_child_wait(&k) != 0) {
                slots_child_kill(&run);
                return KILL_REFUSED;
        }
        slots_child_deadline(&run, STAGE_MS);
        r = slots_child_wait(&run);
        if (r == -ETIMEDOUT)
                return KILL_SURVIVED;           /* killed at its deadline, group and all */
        /* Ended, by the TERM or on its own: nothing of the slot may stay in its group. */
        if ((r >= 0 || r == -ECHILD) && !group_has(run.pid, j->slot_uid))
                return KILL_OK;
        slots_child_kill(&run);
        return KILL_SURVIVED;
}

void check_sudo_kill(struct ctx *k, const struct slotinfo *s)
{
        struct kill_job j = { .sudo = k->o->sudo ? k->o->sudo : SUDO_DEFAULT, .slot = s->name };
        char *launcher, fix[512];
        size_t a = 0;
        int r;

        if (!chain_ready(k, s, "sudo-kill"))
                return;
        launcher = chain_launcher(k);
        if (!launcher) {
                k->err = -ENOMEM;
                return;
        }
        j.slot_uid = s->pw.uid;
        j.run[a++] = j.sudo;
        j.run[a++] = "-n";
        j.run[a++] = "-u";
        j.run[a++] = s->name;
        j.run[a++] = "--";
        if (k->cfg->slotctl)
                j.run[a++] = k->cfg->slotctl;
        j.run[a++] = launcher;
        j.run[a++] = "/bin/sleep";
        j.run[a++] = "30";
        j.run[a] = NULL;
        r = svc_run(k, kill_child, &j, 20000);
        snprintf(fix, sizeof(fix), "let %s run \"kill -s SIGNAL -- -PGID\" as %s in /etc/sudoers.d/slots-%s "
                 "(slots-provision writes it), then visudo -c", k->cfg->service, s->name, k->cfg->service);
        if (r == KILL_OK)
                add_rowf(k, SLOTS_CHECK_PASS, "sudo-kill", s->name, NULL,
                         "as %s, sudo -n -u %s kill -s TERM -- -PGID ended a run's process group", k->cfg->service,
                         s->name);
        else if (r == KILL_NOT_STARTED)
                add_rowf(k, SLOTS_CHECK_SKIP, "sudo-kill", s->name, NULL,
                         "the launcher did not keep \"/bin/sleep 30\" running as %s to be ended", s->name);
        else if (r == KILL_REFUSED)
                add_rowf(k, SLOTS_CHECK_FAIL, "sudo-kill", s->name, fix,
                         "as %s, sudo -n -u %s kill -s TERM -- -PGID is refused or does not finish within 5 s",
                         k->cfg->service, s->name);
        else if (r == KILL_SURVIVED)
                add_rowf(k, SLOTS_CHECK_FAIL, "sudo-kill", s->name, "find what keeps the slot's processes alive",
                         "the run's process group of %s outlived the kill by 5 s", s->name);
        else
                add_rowf(k, SLOTS_CHECK_FAIL, "sudo-kill", s->name, "run the check again", "cannot run the kill: %s",
                         r < 0 ? probe_failure(r) : "fork failed");
        free(launcher);
}

/* ---- sudoers-dropin: the drop-in on the host is, byte for byte, what slots-provision writes ---- */

#define DROPIN_MAX ((size_t) 16 << 20)
#define DIFF_SHOWN 100          /* bytes of a differing line shown, around where it differs */

bool text_first_diff(const char *a, size_t alen, const char *b, size_t blen, struct text_diff *d)
{
        size_t i = 0, start = 0;

        memset(d, 0, sizeof(*d));
        d->line = 1;
        while (i < alen && i < blen && a[i] == b[i]) {
                if (a[i] == '\n') {
                        d->line++;
                        start = i + 1;
                }
                i++;
        }
        if (i == alen && i == blen)
                return false;
        d->column = i - start + 1;
        if (start < alen) {
                const char *nl = memchr(a + start, '\n', alen - start);
                d->a = a + start;
                d->alen = nl ? (size_t) (nl - d->a) : alen - start;
                d->a_newline = nl != NULL;
        }
        if (start < blen) {
                const char *nl = memchr(b + start, '\n', blen - start);
                d->b = b + start;
                d->blen = nl ? (size_t) (nl - d->b) : blen - start;
                d->b_newline = nl != NULL;
        }
        return true;
}

/* A line quoted in a detail: whole up to DIFF_SHOWN bytes, else that much around column col, "..." where cut. */
static void quote_line(struct strbuf *b, const char *line, size_t len, size_t col)
{
        size_t from = len > DIFF_SHOWN && col > DIFF_SHOWN / 2 ? col - DIFF_SHOWN / 2 : 0;
        size_t n = len > from ? len - from : 0;

        strbuf_addf(b, "\"%s%.*s%s\"", from ? "..." : "", (int) (n > DIFF_SHOWN ? DIFF_SHOWN : n), line + from,
                    n > DIFF_SHOWN ? "..." : "");
}

/* What the first difference is, in words: found is the host's drop-in, want the rendering. */
static void describe_diff(struct strbuf *b, const struct text_diff *d, const char *path)
{
        if (!d->a) {
                strbuf_addf(b, "%s ends after line %zu, where slots-provision writes line %zu as ", path, d->line - 1,
                            d->line);
                quote_line(b, d->b, d->blen, 0);
        } else if (!d->b) {
                strbuf_addf(b, "%s has more lines than slots-provision writes, from line %zu: ", path, d->line);
                quote_line(b, d->a, d->alen, 0);
        } else if (d->alen == d->blen && memcmp(d->a, d->b, d->alen) == 0) {
                strbuf_addf(b, "%s: line %zu %s a newline at its end, unlike what slots-provision writes", path,
                            d->line, d->a_newline ? "has" : "lacks");
        } else {
                strbuf_addf(b, "%s differs from what slots-provision writes at line %zu, column %zu: it is ", path,
                            d->line, d->column);
                quote_line(b, d->a, d->alen, d->column - 1);
                strbuf_addf(b, " where slots-provision writes ");
                quote_line(b, d->b, d->blen, d->column - 1);
        }
}

/*
 * The drop-in is opened through the resolver from /: no symlink anywhere, /etc and
 * /etc/sudoers.d and the file owned by root and writable by nobody else, a regular
 * file (a FIFO is refused before it is opened); then one link only, root:root 0440,
 * and its bytes equal to slots_provision_sudoers() of the config.  So every slot of
 * the pool is named in every rule exactly as slots-provision writes it.
 */
void check_sudoers_dropin(struct ctx *k)
{
        const struct slots_config *c = k->cfg;
        const struct slots_chase how = {
                .flags = SLOTS_CHASE_NO_SYMLINKS | SLOTS_CHASE_MUST_REG | SLOTS_CHASE_TRUSTED,
                .trusted_uid = (uid_t) -1,
                .trusted_gid = (gid_t) -1,
                .open_flags = O_RDONLY | O_NOCTTY,
        };
        struct strbuf d = { 0 }, f = { 0 };
        char name[128], path[sizeof(SLOTS_SUDOERS_DIR) + 128], first[SLOTS_NAME_MAX], last[SLOTS_NAME_MAX];
        char *want = NULL, *text = NULL;
        struct slots_error e;
        struct text_diff diff;
        struct stat st;
        size_t wlen = 0, len = 0;
        int fd = -1, r;

        if (sudo_missing(k, "sudoers-dropin", NULL, ": slots-provision writes no drop-in"))
                return;
        slots_provision_sudoers_name(c, name, sizeof(name));
        snprintf(path, sizeof(path), "%s/%s", SLOTS_SUDOERS_DIR, name);
        slots_error_clear(&e);
        want = slots_provision_sudoers(c, &wlen, &e);
        if (!want) {
                if (e.kind == SLOTS_ERR_INVALID)
                        add_rowf(k, SLOTS_CHECK_FAIL, "sudoers-dropin", NULL,
                                 "fix the config (slots-provision refuses it too)", "%s: %s", e.object, e.reason);
                else
                        k->err = -ENOMEM;
                return;
        }
        slots_error_clear(&e);
        fd = slots_chase(AT_FDCWD, path, &how, NULL, &e);
        if (fd == -EACCES && geteuid() != 0) {
                add_rowf(k, SLOTS_CHECK_SKIP, "sudoers-dropin", NULL, NULL,
                         "needs root: %s is root:root 0440 (check runs as %s; sudo-grants shows what sudo makes of it)",
                         path, c->service);
                goto out;
        }
        if (fd < 0) {
                if (fd == -ENOENT)
                        strbuf_addf(&d, "%s does not exist", path);
                else if (fd == -ELOOP)
                        strbuf_addf(&d, "%s is a symbolic link; the drop-in is never read through one", path);
                else if (fd == -EINVAL)
                        strbuf_addf(&d, "%s is not a regular file", path);
                else
                        strbuf_addf(&d, "%s: %s", e.object[0] ? e.object : path, e.reason[0] ? e.reason : strerror(-fd));
                /* A folder on the way is fixed as the resolver says; the file itself is written anew. */
                if (fd == -EPERM && e.fix[0] && strcmp(e.object, path) != 0)
                        strbuf_addf(&f, "%s, then slots-provision", e.fix);
                else
                        strbuf_addf(&f, "%s%s%sslots-provision (it writes the drop-in root:root 0440 from %s), then "
                                    "visudo -c", fd == -ENOENT ? "" : "rm ", fd == -ENOENT ? "" : path,
                                    fd == -ENOENT ? "" : " && ", c->path);
                add_row(k, SLOTS_CHECK_FAIL, "sudoers-dropin", NULL, &d, &f);
                goto out;
        }
        r = fstat(fd, &st) < 0 ? -errno : slots_read_all(fd, DROPIN_MAX, &text, &len);
        if (r < 0) {
                add_rowf(k, SLOTS_CHECK_FAIL, "sudoers-dropin", NULL, "run the check again", "cannot read %s: %s", path,
                         strerror(-r));
                goto out;
        }
        if (st.st_nlink > 1) {
                strbuf_addf(&d, "%s has %ju hard links: another name of it may be in a folder someone else can "
                            "change", path, (uintmax_t) st.st_nlink);
                strbuf_addf(&f, "find the other names (find / -xdev -samefile %s) and remove them, or rm %s && "
                            "slots-provision", path, path);
        }
        if (st.st_uid != 0 || st.st_gid != 0 || (st.st_mode & 07777) != 0440) {
                strbuf_sep(&d, "; ");
                strbuf_addf(&d, "%s is %04o, uid %u, gid %u, not root:root 0440", path, st.st_mode & 07777,
                            (unsigned) st.st_uid, (unsigned) st.st_gid);
                strbuf_sep(&f, " && ");
                strbuf_addf(&f, "chown root:root %s && chmod 0440 %s", path, path);
        }
        if (text_first_diff(text, len, want, wlen, &diff)) {
                strbuf_sep(&d, "; ");
                describe_diff(&d, &diff, path);
                strbuf_sep(&f, " && ");
                strbuf_addf(&f, "slots-provision (it rewrites %s from %s; keep local rules in a file of their own), "
                            "then visudo -c", path, c->path);
        }
        if (d.len) {
                add_row(k, SLOTS_CHECK_FAIL, "sudoers-dropin", NULL, &d, &f);
                goto out;
        }
        add_rowf(k, SLOTS_CHECK_PASS, "sudoers-dropin", NULL, NULL,
                 "%s: root:root 0440, one link, byte for byte what slots-provision writes from %s (every rule names "
                 "%s to %s)", path, c->path, slots_slot_name(1, first), slots_slot_name(c->slots, last));
out:
        slots_close(fd);
        free(want);
        free(text);
        strbuf_free(&d);
        strbuf_free(&f);
}

/* ---- sudo-grants: what sudo itself makes of the service's rules, for every slot at once ---- */

/* The next line of text (without its newline) into *line / *len; false at the end. */
static bool next_line(const char **p, const char **line, size_t *len)
{
        const char *nl;

        if (!**p)
                return false;
        nl = strchr(*p, '\n');
        *line = *p;
        *len = nl ? (size_t) (nl - *p) : strlen(*p);
        *p = nl ? nl + 1 : *p + *len;
        return true;
}

/* True when s[i] starts an item of the command list: right after ") ", ": " (the tags) or ", ". */
static bool item_start(const char *s, size_t i)
{
        return i >= 1 && s[i - 1] == ' ' && (i == 1 || s[i - 2] == ':' || s[i - 2] == ',');
}

/*
 * The sign of the last command in s[0, n) (what follows a privilege's Runas list) that
 * is cmd or ALL: 1 granted, -1 "!cmd" or "!ALL", 0 neither named.
 */
static int command_sign(const char *s, size_t n, const char *cmd)
{
        const char *const names[] = { cmd, "ALL" };
        int sign = 0;

        for (size_t i = 0; i < n; i++)
                for (size_t w = 0; w < 2; w++) {
                        size_t len = strlen(names[w]);
                        char after = i + len < n ? s[i + len] : '\0';

                        if (i + len > n || memcmp(s + i, names[w], len) != 0 ||
                            (after != ' ' && after != ',' && after != '\0'))
                                continue;
                        if (item_start(s, i))
                                sign = 1;
                        else if (i >= 1 && s[i - 1] == '!' && item_start(s, i - 1))
                                sign = -1;
                }
        return sign;
}

size_t sudo_list_grants(const char *text, const char *cmd, unsigned pool, signed char *state)
{
        const char *p = text, *line;
        size_t len, lines = 0;

        while (next_line(&p, &line, &len)) {
                const char *end = line + len, *close, *users_end, *u;
                bool all = false;
                int sign;

                while (line < end && (*line == ' ' || *line == '\t'))
                        line++;
                /* A privilege: "(RUNAS_USERS[ : RUNAS_GROUPS]) TAGS: COMMANDS". */
                if (line == end || *line != '(' || !(close = memchr(line, ')', (size_t) (end - line))))
                        continue;
                lines++;
                sign = command_sign(close + 1, (size_t) (end - close - 1), cmd);
                if (sign == 0)
                        continue;
                users_end = close;
                for (const char *q = line + 1; q < close; q++)
                        if (*q == ':') {
                                users_end = q;
                                break;
                        }
                /* Who is named: ALL (every slot), slot names, "!slotNN" (that slot taken away). */
                for (u = line + 1; u < users_end;) {
                        const char *comma = memchr(u, ',', (size_t) (users_end - u)), *te = comma ? comma : users_end;

                        while (u < te && *u == ' ')
                                u++;
                        while (te > u && te[-1] == ' ')
                                te--;
                        if (te - u == 3 && memcmp(u, "ALL", 3) == 0)
                                all = true;
                        u = comma ? comma + 1 : users_end;
                }
                if (all)
                        for (unsigned n = 1; n <= pool; n++)
                                state[n] = (signed char) sign;
                for (u = line + 1; u < users_end;) {
                        const char *comma = memchr(u, ',', (size_t) (users_end - u)), *te = comma ? comma : users_end;
                        char name[SLOTS_NAME_MAX + 1];
                        bool neg;
                        unsigned n;

                        while (u < te && *u == ' ')
                                u++;
                        while (te > u && te[-1] == ' ')
                                te--;
                        neg = u < te && *u == '!';
                        if (neg)
                                u++;
                        if ((size_t) (te - u) < sizeof(name)) {
                                memcpy(name, u, (size_t) (te - u));
                                name[te - u] = '\0';
                                n = slots_slot_parse(name);
                                /* Excluded from the list: taken away, whatever came before. */
                                if (n >= 1 && n <= pool)
                                        state[n] = neg ? -1 : (signed char) sign;
                        }
                        u = comma ? comma + 1 : users_end;
                }
        }
        return lines;
}

#define GRANTS_SHOWN 5          /* slots named in a FAIL; the rest are counted */

/*
 * One sudo run for the whole pool: as root "sudo -n -l -U <service>", as the
 * service "sudo -n -l" (its own rules; sudo asks no password when a rule is
 * NOPASSWD).  sudo parses every sudoers source to answer, so an error anywhere
 * fails here; then each slot of the pool must be granted /usr/bin/true,
 * /usr/bin/kill and (with app_root and launcher) the launcher or slotctl, with
 * sudo's rule that the last match wins.  sudo prints each privilege on one
 * line when its output is not a terminal.
 */
void check_sudo_grants(struct ctx *k)
{
        const struct slots_config *c = k->cfg;
        const char *sudo = k->o->sudo ? k->o->sudo : SUDO_DEFAULT;
        bool root = geteuid() == 0;
        const char *const argv_root[] = { sudo, "-n", "-l", "-U", c->service, NULL };
        const char *const argv_svc[] = { sudo, "-n", "-l", NULL };
        const char *cmds[3] = { "/usr/bin/true", "/usr/bin/kill", NULL };
        size_t size = (size_t) c->slots * 64 + ((size_t) 256 << 10), n_cmds = 2;
        char *out = NULL, *run = NULL, first[SLOTS_NAME_MAX], last[SLOTS_NAME_MAX], shown[128], name[128];
        char listing_root[128];
        signed char *state = NULL;
        unsigned char *missing = NULL;
        struct strbuf d = { 0 }, f = { 0 };
        int r;

        if (sudo_missing(k, "sudo-grants", NULL, NULL))
                return;
        if (!k->have_svc) {
                add_rowf(k, SLOTS_CHECK_SKIP, "sudo-grants", NULL, NULL, "no service account %s", c->service);
                return;
        }
        if (c->app_root && c->launcher) {
                if (!c->slotctl && asprintf(&run, "%s/releases/*/bin/%s", strcmp(c->app_root, "/") ? c->app_root : "",
                                            c->launcher) < 0) {
                        k->err = -ENOMEM;
                        return;
                }
                cmds[n_cmds++] = c->slotctl ? c->slotctl : run;
        }
        snprintf(shown, sizeof(shown), root ? "sudo -n -l -U %s" : "sudo -n -l as %s", c->service);
        snprintf(listing_root, sizeof(listing_root), "sudo -l -U %s", c->service);
        out = malloc(size);
        state = calloc((size_t) c->slots + 1, sizeof(*state));
        missing = calloc((size_t) c->slots + 1, sizeof(*missing));
        if (!out || !state || !missing) {
                k->err = -ENOMEM;
                goto out;
        }
        r = slots_run_program(root ? argv_root : argv_svc, -1, CHAIN_TIMEOUT_MS, out, size);
        if (r == -ETIMEDOUT) {
                add_rowf(k, SLOTS_CHECK_FAIL, "sudo-grants", NULL,
                         "find what sudo waits for (LDAP/sssd, DNS for the host name) and make it answer",
                         "%s did not finish within %d ms; killed", shown, CHAIN_TIMEOUT_MS);
                goto out;
        }
        if (r < 0) {
                add_rowf(k, SLOTS_CHECK_FAIL, "sudo-grants", NULL, "reinstall sudo", "cannot run %s: %s", sudo,
                         strerror(-r));
                goto out;
        }
        if (r != 0 && !root && strstr(out, "password is required")) {
                add_rowf(k, SLOTS_CHECK_SKIP, "sudo-grants", NULL, NULL,
                         "sudo asks %s for a password to list its own rules (Defaults listpw); run check as root "
                         "for this row", c->service);
                goto out;
        }
        if (r != 0) {
                out[strcspn(out, "\n")] = '\0';
                add_rowf(k, SLOTS_CHECK_FAIL, "sudo-grants", NULL,
                         "visudo -c names a file sudo cannot use; slots-provision rewrites its drop-in",
                         "%s exits %d%s%s", shown, r, out[0] ? ": " : "", out);
                goto out;
        }
        if (strlen(out) >= size - 1) {
                add_rowf(k, SLOTS_CHECK_SKIP, "sudo-grants", NULL, NULL, "%s printed more than %zu bytes", shown,
                         size - 1);
                goto out;
        }
        /* Each slot's commands not granted, as bits; the slots with the same bits make one clause. */
        for (size_t i = 0; i < n_cmds; i++) {
                memset(state, 0, (size_t) c->slots + 1);
                if (sudo_list_grants(out, cmds[i], c->slots, state) == 0) {
                        /* No privilege as another account: sudo's own sentence may say so ("User ... is not allowed"). */
                        const char *p = strstr(out, "not allowed"), *from = p;

                        while (from && from > out && from[-1] != '\n')
                                from--;
                        strbuf_addf(&d, "%s lists no rule that lets %s run a command as another account%s%.*s%s",
                                    shown, c->service, p ? " (\"" : "", p ? (int) strcspn(from, "\n") : 0,
                                    p ? from : "", p ? "\")" : "");
                        break;
                }
                for (unsigned n = 1; n <= c->slots; n++)
                        missing[n] |= state[n] == 1 ? 0 : (unsigned char) (1u << i);
        }
        for (unsigned n = 1; n <= c->slots; n++) {
                unsigned char bits = missing[n];
                size_t count = 0;

                if (!bits)
                        continue;
                strbuf_sep(&d, "; ");
                strbuf_addf(&d, "sudo does not let %s run", c->service);
                for (size_t i = 0, w = 0; i < n_cmds; i++)
                        if (bits & (1u << i))
                                strbuf_addf(&d, "%s %s", w++ ? "," : "", cmds[i]);
                strbuf_addf(&d, " as");
                for (unsigned m = n; m <= c->slots; m++) {
                        if (missing[m] != bits)
                                continue;
                        missing[m] = 0;
                        if (count++ < GRANTS_SHOWN)
                                strbuf_addf(&d, "%s %s", count > 1 ? "," : "", slots_slot_name(m, first));
                }
                if (count > GRANTS_SHOWN)
                        strbuf_addf(&d, " and %zu more", count - GRANTS_SHOWN);
                strbuf_addf(&d, " (%zu of the %u slots of the pool)", count, c->slots);
        }
        if (d.len) {
                strbuf_addf(&f, "slots-provision (it rewrites %s/%s), then look for a rule in another sudoers file "
                            "that takes it back: %s", SLOTS_SUDOERS_DIR, slots_provision_sudoers_name(c, name,
                            sizeof(name)), root ? listing_root : "sudo -l");
                add_row(k, SLOTS_CHECK_FAIL, "sudo-grants", NULL, &d, &f);
                goto out;
        }
        add_rowf(k, SLOTS_CHECK_PASS, "sudo-grants", NULL, NULL,
                 "%s: sudo reads its rules and lets %s run /usr/bin/true, /usr/bin/kill%s%s as each of the %u slots of "
                 "the pool (%s to %s)", shown, c->service, n_cmds > 2 ? " and " : "", n_cmds > 2 ? cmds[2] : "",
                 c->slots, slots_slot_name(1, first), slots_slot_name(c->slots, last));
out:
        free(out);
        free(run);
        free(state);
        free(missing);
        strbuf_free(&d);
        strbuf_free(&f);
}
