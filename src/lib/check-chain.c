/*
 * check's rows about the executor's sudo chain run for real, per slot, as the service:
 * sudo-preflight, chain, sudo-env, sudo-kill.
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
bool sudo_missing(struct ctx *k, const char *check, const char *slot, const char *more)
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

