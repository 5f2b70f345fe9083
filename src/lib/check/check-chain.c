/*
 * check's rows about the executor's sudo chain run for real, per slot, as the service, in a
 * folder the slotctl config allows: sudo-preflight, chain, sudo-env (sudo-kill: check-kill.c).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <poll.h>
#include <pty.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "check-chain.h"
#include "check-int.h"
#include "child.h"
#include "fsutil.h"
#include "privdrop.h"

#define SUDO_TIMEOUT_MS 10000

/*
 * Whether sudo is there to run (a regular file with an execute bit; not yet
 * whether it works).  When it is not, adds check's row (slot may be NULL): a
 * SKIP when it is missing, more (may be NULL) said after why, or a FAIL when
 * it could not be looked at; the caller then stops.
 */
bool check_sudo_missing(struct check_run *k, const char *check, const char *slot, const char *more)
{
        const char *sudo = check_sudo_path(k);
        struct stat st;
        int r = stat(sudo, &st) < 0 ? -errno : 0;

        if (r == 0 && S_ISREG(st.st_mode) && (st.st_mode & 0111))
                return false;
        if (r < 0 && r != -ENOENT && r != -ENOTDIR)
                check_add_rowf(k, SLOTS_CHECK_FAIL, check, slot, NULL, "cannot stat %s: %s", sudo, strerror(-r));
        else
                check_add_rowf(k, SLOTS_CHECK_SKIP, check, slot, NULL, "sudo is not installed (no %s)%s", sudo,
                               more ? more : "");
        return true;
}

/* ---- where a run starts, and as whom ---- */

int check_chain_stage_ms(const struct check_run *k, int dflt)
{
        return k->o->sudo_timeout_ms > 0 ? k->o->sudo_timeout_ms : dflt;
}

void check_run_slot_of(const struct check_run *k, const struct slotinfo *s, int dflt, struct run_slot *w)
{
        *w = (struct run_slot){ .sudo = check_sudo_path(k),
                                .slot = s->name,
                                .slot_uid = s->pw.uid,
                                .stage_ms = check_chain_stage_ms(k, dflt) };
}

/* The child's side of a start: -errno through the channel when no folder could be entered. */
void check_enter_start(const struct start *st)
{
        if (st->dir && chdir(st->dir) < 0 && (!st->fallback || chdir(st->fallback) < 0))
                slots_run_fail(errno);
}

/*
 * Runs fn as the service, in st->fd when set: dropped from root, or as it is when check runs
 * as the service.  A stage of the child that fails comes back as -errno (privdrop.h), never as
 * an exit status, so whatever sudo, slotctl or the launcher exits with is theirs.
 */
int check_run_started(const struct check_run *k, const struct start *st, int (*fn)(void *arg), void *arg,
                      int timeout_ms)
{
        if (geteuid() == 0)
                return slots_run_in(&k->svc, st->fd, fn, arg, timeout_ms);
        if (geteuid() != k->svc.uid)
                return -EPERM;
        return slots_run_in(NULL, st->fd, fn, arg, timeout_ms);
}

/* A folder opened to start a run in (no symlink on the way), or -errno. */
static int open_start(const char *path)
{
        const struct slots_chase how = {
                .flags = SLOTS_CHASE_NO_SYMLINKS | SLOTS_CHASE_MUST_DIR,
                .open_flags = O_RDONLY | O_DIRECTORY,
        };

        return slots_chase(AT_FDCWD, path, &how, NULL, NULL);
}

/* The slot's own state folder (allocated), where the test slot's probe runs; NULL when out of memory. */
static char *state_dir(const struct check_run *k, const struct slotinfo *s)
{
        char *dir = NULL;

        return asprintf(&dir, "%s/state/%s", k->cfg->slots_root, s->name) < 0 ? NULL : dir;
}

/*
 * Where the runs that name no folder of their own start (preflight, sudo-env, the kill's run):
 * the docs root, which the slotctl config allows, else the slot's state folder, which it allows
 * too (entered before the drop; as the service, which cannot, where check runs).
 */
void check_default_start(const struct check_run *k, const struct slotinfo *s, struct start *st)
{
        char *dir;

        *st = (struct start){ .fd = -1, .dir = k->cfg->docs_root };
        if (st->dir || !(dir = state_dir(k, s)))
                return;
        st->fd = open_start(dir);
        free(dir);
}

void check_end_start(struct start *st)
{
        if (st->fd >= 0)
                close(st->fd);
        st->fd = -1;
}

/*
 * The child's session: a new one, without a controlling terminal, or with tty one of its own, a
 * new pseudo-terminal (never the admin's: a command of the slot could type into that one).
 * The master stays open, without close-on-exec, so the terminal lives as long as what runs on it.
 */
void check_own_session(bool tty)
{
        int m, s;

        if (setsid() < 0)
                slots_run_fail(errno);
        if (!tty)
                return;
        if (openpty(&m, &s, NULL, NULL, NULL) < 0 || ioctl(s, TIOCSCTTY, 0) < 0)
                slots_run_fail(errno);
        close(s);
}

/* The two ways the executor may run: "without a terminal" or "with a terminal". */
const char *check_tty_said(bool tty)
{
        return tty ? "with a controlling terminal" : "without a terminal";
}

/* How a run of sudo as the slot goes: chain_run below is the one runner of every row but the kill's. */
struct chain_how {
        const char *const *cmd; /* sudo -n -u SLOT CMD...; NULL: the chain, sudo ... -- [slotctl] PROBE */
        bool with_env;          /* --preserve-env for the names of sudo_env, each with a marker value */
        bool tty;               /* on a terminal of its own */
        int stage_ms;           /* the default deadline of each stage (--timeout wins) */
};

static int chain_run(struct check_run *k, const struct slotinfo *s, const char *launcher, const char *cwd,
                     const struct start *st, const struct chain_how *how, char *out, size_t outsize, char *err,
                     size_t errsize);

/* ---- sudo-preflight ---- */

/* The preflight's row from sudo's result r (the run with tty or without), ms and its first line out. */
static void sudo_row(struct check_run *k, const struct slotinfo *s, bool tty, int r, long ms, int timeout,
                     const char *out)
{
        const char *sudo = check_sudo_path(k);
        char fix[512];

        snprintf(fix, sizeof(fix),
                 "let %s run /usr/bin/true as %s without a password in /etc/sudoers.d/slots-%s (slots-provision "
                 "writes it), then visudo -c", k->cfg->service, s->name, k->cfg->service);
        if (r == 0)
                check_add_rowf(k, SLOTS_CHECK_PASS, "sudo-preflight", s->name, NULL,
                               "as %s, sudo -n -u %s /usr/bin/true exits 0 with and without a terminal (%ld ms)",
                               k->cfg->service, s->name, ms);
        else if (r == -ETIMEDOUT)
                check_add_rowf(
                        k, SLOTS_CHECK_FAIL, "sudo-preflight", s->name,
                        "find what sudo waits for (PAM modules, LDAP/sssd, DNS for the host name: sudo -n -u slotNN "
                        "/usr/bin/true as the service account) and make it answer",
                        "as %s, sudo -n -u %s /usr/bin/true %s did not finish within %d ms; killed", k->cfg->service,
                        s->name, check_tty_said(tty), timeout);
        else if (r == -ENOEXEC)
                check_add_rowf(k, SLOTS_CHECK_FAIL, "sudo-preflight", s->name, "reinstall sudo",
                               "as %s, %s cannot be run", k->cfg->service, sudo);
        else if (r == -ECHILD && snprintf(fix, sizeof(fix), "find the process of %s that ends the slot's processes "
                                          "(ps -o pid,stat,cmd -u %s) and end it, or release the slot (release "
                                          "ends every process of it)", s->name, s->name) > 0)
                /* sudo passes its command's death by a signal on: sudoers let it run, something killed it. */
                check_add_rowf(k, SLOTS_CHECK_FAIL, "sudo-preflight", s->name, fix,
                               "as %s, sudo -n -u %s /usr/bin/true was killed by a signal: sudo ran it, and a process "
                               "of %s is ending the slot's processes (a kill(-1) loop?)",
                               k->cfg->service, s->name, s->name);
        else if (r < 0 && (!tty || r == -EPERM || r == -ECHILD || r == -ECANCELED))
                check_add_rowf(k, SLOTS_CHECK_FAIL, "sudo-preflight", s->name, "run the check again",
                               "as %s, sudo -n -u %s /usr/bin/true: %s", k->cfg->service, s->name,
                               check_probe_failure(r));
        else if (r < 0)
                check_add_rowf(k, SLOTS_CHECK_SKIP, "sudo-preflight", s->name, NULL,
                               "passes without a terminal; no terminal of its own for the case with one (%s)",
                               strerror(-r));
        else
                check_add_rowf(k, SLOTS_CHECK_FAIL, "sudo-preflight", s->name, fix,
                               "as %s, sudo -n -u %s /usr/bin/true %s exits %d%s%s", k->cfg->service, s->name,
                               check_tty_said(tty), r, out[0] ? ": " : "", out);
}

/* One preflight run, with or without a terminal: sudo's result, *ms, its first line on stderr in out. */
static int sudo_once(struct check_run *k, const struct slotinfo *s, const struct start *st, const struct chain_how *how,
                     long *ms, char *out, size_t size)
{
        struct timespec t0, t1;
        char none[8];
        int r;

        clock_gettime(CLOCK_MONOTONIC, &t0);
        r = chain_run(k, s, NULL, NULL, st, how, none, sizeof(none), out, size);
        clock_gettime(CLOCK_MONOTONIC, &t1);
        *ms = (t1.tv_sec - t0.tv_sec) * 1000L + (t1.tv_nsec - t0.tv_nsec) / 1000000L;
        return r;
}

/* The preflight, without a terminal and then with one of its own, as the executor may run it. */
void check_sudo(struct check_run *k, const struct slotinfo *s)
{
        int timeout = check_chain_stage_ms(k, SUDO_TIMEOUT_MS);
        static const char *const cmd[] = { "/usr/bin/true", NULL };
        struct chain_how how = { .cmd = cmd, .stage_ms = SUDO_TIMEOUT_MS };
        struct start st;
        char out[512];
        long ms = 0, ms_tty = 0;
        int r;

        if (check_sudo_missing(k, "sudo-preflight", s->name, NULL))
                return;
        if (!k->have_svc) {
                check_add_rowf(k, SLOTS_CHECK_FAIL, "sudo-preflight", s->name,
                               "create the service account, or fix \"service\"",
                               "the service account %s does not exist", k->cfg->service);
                return;
        }
        if (s->found <= 0) {
                check_add_rowf(k, SLOTS_CHECK_SKIP, "sudo-preflight", s->name, NULL, "no account %s", s->name);
                return;
        }
        check_default_start(k, s, &st);
        r = sudo_once(k, s, &st, &how, &ms, out, sizeof(out));
        if (r == 0) {
                how.tty = true;
                r = sudo_once(k, s, &st, &how, &ms_tty, out, sizeof(out));
        }
        check_end_start(&st);
        sudo_row(k, s, how.tty, r, ms > ms_tty ? ms : ms_tty, timeout, out);
}

/* ---- the real chain: sudo -> [slotctl] -> launcher, as the service, the way the platform runs it ---- */

#define CHAIN_TIMEOUT_MS 20000

/* A NULL-terminated list of strings that grows, with the strings it owns. */
struct strvec {
        const char **v;
        size_t n, cap;
        char **own;
        size_t n_own;
        bool oom;
};

static void vec_add(struct strvec *a, const char *s)
{
        if (a->oom)
                return;
        if (a->n + 2 > a->cap) {
                size_t cap = a->cap ? a->cap * 2 : 16;
                const char **v = realloc(a->v, cap * sizeof(*v));

                if (!v) {
                        a->oom = true;
                        return;
                }
                a->v = v;
                a->cap = cap;
        }
        a->v[a->n++] = s;
        a->v[a->n] = NULL;
}

/* Adds s, which the list then owns (NULL: out of memory). */
static void vec_own(struct strvec *a, char *s)
{
        char **own = s ? realloc(a->own, (a->n_own + 1) * sizeof(*own)) : NULL;

        if (!own) {
                free(s);
                a->oom = true;
                return;
        }
        a->own = own;
        a->own[a->n_own++] = s;
        vec_add(a, s);
}

static void vec_free(struct strvec *a)
{
        for (size_t i = 0; i < a->n_own; i++)
                free(a->own[i]);
        free(a->own);
        free(a->v);
        memset(a, 0, sizeof(*a));
}

struct chain_job {
        struct run_slot w;      /* first: the helper's argument is &w */
        struct strvec argv, envp;
        const struct start *start;
        int out, err;           /* write ends of the pipes */
        bool tty;               /* the helper's session on a terminal of its own */
};

/* What the helper tells check: one record, written at once. */
struct chain_report {
        int status;             /* sudo's result as slots_child_wait gives it */
        struct run_left left;
};

/*
 * The run's helper, as the service, in a session of its own: a child subreaper, so whatever
 * the run starts stays its own, even in a session of its own.  It runs sudo in a process group
 * of its own until the stage's deadline (then kills it), ends what the run left as the slot
 * (check_run_end) and reports, for check as root to end the rest, with the heads of sudo's
 * stdout and stderr on the run's pipes.
 */
static int chain_helper(void *arg)
{
        const struct chain_job *j = arg;
        struct chain_report rep = { .status = -EIO };
        char out[8192], err[4200];
        struct slots_prog p = { .head = { out, err }, .size = { sizeof(out), sizeof(err) } };

        check_enter_start(j->start);
        check_own_session(j->tty);
        if (prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) < 0)
                slots_run_fail(errno);
        rep.status = slots_prog_start(&p, j->argv.v, j->envp.v, -1, j->w.stage_ms,
                                      SLOTS_CHILD_GROUP | SLOTS_PROG_STOP_ENDS);
        if (rep.status == 0) {
                rep.status = slots_prog_wait(&p);
                check_run_end(&j->w, &rep.left);
                /* And what the run's processes wrote before they were ended. */
                slots_prog_read(&p);
        }
        (void) !write(j->w.report, &rep, sizeof(rep));
        (void) !write(j->out, out, p.len[0]);
        (void) !write(j->err, err, p.len[1]);
        slots_prog_close(&p);
        return 0;
}

/* Reads what is in a pipe (non-blocking) into buf; the first line only when first_line. */
static void chain_read(int fd, char *buf, size_t size, bool first_line)
{
        ssize_t n = read(fd, buf, size - 1);

        buf[n > 0 ? n : 0] = '\0';
        if (first_line)
                buf[strcspn(buf, "\n")] = '\0';
}

/*
 * The run's names beyond the one environment (child.c): with with_env a marker value for each
 * name of sudo_env (a prefix "X*" as XSLOTS_CHECK); list gets every one of them for
 * --preserve-env (PATH, which that environment sets, last).
 */
static void chain_env(const struct check_run *k, bool with_env, struct chain_job *j, struct strbuf *list)
{
        bool path = false;

        if (!with_env)
                return;
        for (size_t i = 0; i < k->cfg->n_sudo_env; i++) {
                const char *n = k->cfg->sudo_env[i];
                int len = (int) strlen(n);
                bool prefix = n[len - 1] == '*';
                char *v = NULL;

                if (strcmp(n, "PATH") == 0) {
                        path = true;    /* set by child.c, and listed */
                        continue;
                }
                if (asprintf(&v, "%.*s%s=slots-check", prefix ? len - 1 : len, n, prefix ? "SLOTS_CHECK" : "") < 0)
                        v = NULL;
                vec_own(&j->envp, v);
                strbuf_addf(list, "%s%.*s%s", list->len ? "," : "", prefix ? len - 1 : len, n,
                            prefix ? "SLOTS_CHECK" : "");
        }
        if (path)
                strbuf_addf(list, "%sPATH", list->len ? "," : "");
}

/* One argument of the probe with {launcher} and {cwd} replaced (allocated; NULL: out of memory). */
static char *probe_arg(const char *t, const char *launcher, const char *cwd)
{
        struct strbuf b = { 0 };

        for (const char *p = t; *p;) {
                if (strncmp(p, "{launcher}", 10) == 0) {
                        strbuf_addf(&b, "%s", launcher);
                        p += 10;
                } else if (strncmp(p, "{cwd}", 5) == 0) {
                        strbuf_addf(&b, "%s", cwd);
                        p += 5;
                } else {
                        strbuf_addf(&b, "%c", *p++);
                }
        }
        if (b.oom || !b.s) {
                strbuf_free(&b);
                return NULL;
        }
        return b.s;
}

/* Whether the probe names {cwd}: then it changes into the folder itself and may start elsewhere. */
static bool probe_names_cwd(const struct check_run *k)
{
        for (size_t i = 0; i < k->cfg->n_probe; i++)
                if (strstr(k->cfg->probe[i], "{cwd}"))
                        return true;
        return false;
}

/* sudo -n -u SLOT [-g GROUP] [--preserve-env=LIST] -- [SLOTCTL] PROBE, and its environment. */
static void chain_build(const struct check_run *k, const struct slotinfo *s, const char *launcher, const char *cwd,
                        const struct chain_how *how, struct chain_job *j)
{
        struct strbuf list = { 0 };
        char *pe = NULL;

        chain_env(k, how->with_env, j, &list);
        vec_add(&j->argv, j->w.sudo);
        vec_add(&j->argv, "-n");
        vec_add(&j->argv, "-u");
        vec_add(&j->argv, s->name);
        if (how->cmd) {
                for (size_t i = 0; how->cmd[i]; i++)
                        vec_add(&j->argv, how->cmd[i]);
                strbuf_free(&list);
                return;
        }
        if (k->cfg->run_as_group) {
                vec_add(&j->argv, "-g");
                vec_add(&j->argv, k->cfg->run_as_group);
        }
        if (list.oom || (list.len && asprintf(&pe, "--preserve-env=%s", list.s) < 0))
                j->argv.oom = true;
        else if (list.len)
                vec_own(&j->argv, pe);
        strbuf_free(&list);
        vec_add(&j->argv, "--");
        if (k->cfg->slotctl)
                vec_add(&j->argv, k->cfg->slotctl);
        for (size_t i = 0; i < k->cfg->n_probe; i++)
                vec_own(&j->argv, probe_arg(k->cfg->probe[i], launcher, cwd));
}

int check_run_helped(const struct check_run *k, const struct start *st, int (*fn)(void *arg), struct run_slot *w,
                     int stages, void *rep, size_t size, const struct run_left *left)
{
        char buf[PIPE_BUF];
        int pipefd[2], r;
        ssize_t n;

        if (pipe2(pipefd, O_CLOEXEC) < 0)
                return -errno;
        w->report = pipefd[1];
        /* Its stages, the helper's kills after them, and a margin. */
        r = check_run_started(k, st, fn, w, stages * w->stage_ms + 5000);
        close(pipefd[1]);
        n = size > sizeof(buf) || fcntl(pipefd[0], F_SETFL, O_NONBLOCK) < 0 ? -1 : read(pipefd[0], buf, size);
        close(pipefd[0]);
        if (n != (ssize_t) size)
                return r < 0 ? r : -EIO;
        memcpy(rep, buf, size);
        if (geteuid() == 0)
                check_run_end_left(left, w->slot_uid);
        return r;
}

/*
 * Runs, as the service, the chain with the probe for cwd, started at st.  Returns the status
 * (the program's own, 0..255) or -errno (privdrop.h; -ENOENT, -EACCES...: no folder of st could
 * be entered); out gets stdout, err the first stderr line.
 */
static int chain_run(struct check_run *k, const struct slotinfo *s, const char *launcher, const char *cwd,
                     const struct start *st, const struct chain_how *how, char *out, size_t outsize, char *err,
                     size_t errsize)
{
        struct chain_job j = { .start = st, .tty = how->tty };
        struct chain_report rep;
        int po[2] = { -1, -1 }, pr[2] = { -1, -1 }, r;

        out[0] = err[0] = '\0';
        check_run_slot_of(k, s, how->stage_ms, &j.w);
        chain_build(k, s, launcher, cwd, how, &j);
        if (j.argv.oom || j.envp.oom) {
                r = -ENOMEM;
                goto out;
        }
        if (pipe2(po, O_CLOEXEC) < 0 || pipe2(pr, O_CLOEXEC) < 0 || fcntl(po[0], F_SETFL, O_NONBLOCK) < 0 ||
            fcntl(pr[0], F_SETFL, O_NONBLOCK) < 0) {
                r = -errno;
                goto out;
        }
        j.out = po[1];
        j.err = pr[1];
        r = check_run_helped(k, st, chain_helper, &j.w, 2, &rep, sizeof(rep), &rep.left);
        r = r < 0 ? r : rep.status;
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
        vec_free(&j.argv);
        vec_free(&j.envp);
        return r;
}

/* The launcher the platform runs: through current when it exists, else the release check found. */
char *check_chain_launcher(const struct check_run *k)
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

bool check_chain_ready(struct check_run *k, const struct slotinfo *s, const char *check)
{
        if (!k->cfg->app_root || !k->cfg->launcher) {
                check_add_rowf(k, SLOTS_CHECK_SKIP, check, s->name, NULL, "%s sets no app_root and launcher",
                               k->cfg->path);
                return false;
        }
        if (check_sudo_missing(k, check, s->name, NULL))
                return false;
        if (!k->have_svc || s->found <= 0) {
                check_add_rowf(k, SLOTS_CHECK_SKIP, check, s->name, NULL, "no service account or no account %s",
                               s->name);
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


/* The row of a run that did not get to exit: r < 0 (privdrop.h); false when r is not one. */
static bool chain_failed_run(struct check_run *k, const struct slotinfo *s, const char *check, int r, const char *shown)
{
        const char *sudo = check_sudo_path(k);

        if (r >= 0)
                return false;
        if (r == -ENOMEM)
                k->err = -ENOMEM;
        else if (r == -ETIMEDOUT)
                check_add_rowf(k, SLOTS_CHECK_FAIL, check, s->name,
                               "find what sudo or the launcher waits for, as the service",
                               "in %s: the probe did not finish within %d ms", shown,
                               check_chain_stage_ms(k, CHAIN_TIMEOUT_MS));
        else if (r == -ENOEXEC)
                check_add_rowf(k, SLOTS_CHECK_FAIL, check, s->name, "reinstall sudo", "as %s, %s cannot be run",
                               k->cfg->service, sudo);
        else if (r == -EPERM || r == -ECHILD || r == -EIO || r == -ECANCELED)
                check_add_rowf(k, SLOTS_CHECK_FAIL, check, s->name, "run the check again", "in %s: %s", shown,
                               check_probe_failure(r));
        else
                check_add_rowf(
                        k, SLOTS_CHECK_SKIP, check, s->name, NULL,
                        "in %s: %s cannot enter the folder (%s) and the probe does not name {cwd} for the launcher "
                        "to change into",
                        shown, k->cfg->service, strerror(-r));
        return true;
}

/*
 * One chain row: the probe for cwd (shown as shown) must exit 0 and print cwd.  It starts in
 * cwd, entered as the service; the slot's own folder (own), which the service cannot enter,
 * is entered before the drop.  A probe that names {cwd} starts in the docs root when cwd
 * cannot be entered.
 */
static void chain_one(struct check_run *k, const struct slotinfo *s, const char *launcher, const char *cwd,
                      const char *shown, bool own)
{
        struct start st = { .fd = -1, .dir = cwd, .fallback = probe_names_cwd(k) ? k->cfg->docs_root : NULL };
        char out[4096], err[4200], esc[4200], fix[600], *real;
        int r;

        if (own) {
                st.fd = open_start(cwd);
                st.dir = st.fd < 0 ? st.fallback : NULL;
                if (st.fd < 0 && !st.dir) {
                        check_add_rowf(
                                k, SLOTS_CHECK_SKIP, "chain", s->name, NULL,
                                "in %s: check cannot enter the folder as %s (%s) and the probe does not name {cwd}",
                                shown, geteuid() == 0 ? "root" : k->cfg->service, strerror(-st.fd));
                        return;
                }
        }
        r = chain_run(k, s, launcher, cwd, &st, &(struct chain_how){ .stage_ms = CHAIN_TIMEOUT_MS }, out, sizeof(out),
                      err, sizeof(err));
        check_end_start(&st);
        snprintf(fix, sizeof(fix), "run it as %s and read the launcher's message: sudo -n -u %s -- %s%s%s ... "
                 "(the launcher must work for the slot in %s)", k->cfg->service, s->name,
                 k->cfg->slotctl ? k->cfg->slotctl : "", k->cfg->slotctl ? " " : "", launcher, shown);
        /*
         * Exact here (JSON keeps it; the command escapes it), but never the path of a user's tree,
         * as given or resolved (a link on the way), nor the user id anywhere else in it.
         */
        shown_as(esc, sizeof(esc), err, cwd, shown);
        if ((real = realpath(cwd, NULL))) {
                shown_as(err, sizeof(err), esc, real, shown);
                free(real);
                snprintf(esc, sizeof(esc), "%s", err);
        }
        if (s->user && s->user[0]) {
                shown_as(err, sizeof(err), esc, s->user, "<user>");
                snprintf(esc, sizeof(esc), "%s", err);
        }
        if (s->user && (check_held_end(r) || r >= 128)) {
                snprintf(fix, sizeof(fix), "in %s the probe %s", shown,
                         r == -ETIMEDOUT  ? "did not finish in time" :
                         r == -ECANCELED  ? "was stopped" :
                         r >= 0           ? "exited as killed by a signal" : "was killed by a signal");
                check_warn_held(k, s, "chain", fix);
                return;
        }
        if (chain_failed_run(k, s, "chain", r, shown))
                return;
        if (r != 0) {
                check_add_rowf(k, SLOTS_CHECK_FAIL, "chain", s->name, fix, "in %s: the launcher exits %d%s%s", shown, r,
                               esc[0] ? ": " : "", esc);
                return;
        }
        out[strcspn(out, "\n")] = '\0';
        if (strcmp(out, cwd) != 0)
                check_add_rowf(k, SLOTS_CHECK_FAIL, "chain", s->name, fix,
                               "in %s: the probe ran but did not print its working folder%s%s", shown,
                               esc[0] ? ": " : "", esc);
        else
                check_add_rowf(k, SLOTS_CHECK_PASS, "chain", s->name, NULL, "in %s: sudo -> %s%s exits 0", shown,
                               k->cfg->slotctl ? "slotctl -> " : "", "launcher");
}

/*
 * As the test slot, which proves the host: the probe in the docs root and each shared folder
 * (without docs_root, its state folder).  As an assigned slot: in its user's tree only.
 */
void check_chain(struct check_run *k, const struct slotinfo *s)
{
        char *launcher, *dir = NULL;

        if (!check_chain_ready(k, s, "chain"))
                return;
        launcher = check_chain_launcher(k);
        if (!launcher) {
                k->err = -ENOMEM;
                return;
        }
        if (s->user) {
                if (s->tree)
                        chain_one(k, s, launcher, s->tree, s->tree_shown ? s->tree_shown : "<docs>/<user>", false);
        } else if (!k->cfg->docs_root) {
                if ((dir = state_dir(k, s)))
                        chain_one(k, s, launcher, dir, dir, true);
                else
                        k->err = -ENOMEM;
                free(dir);
        } else {
                chain_one(k, s, launcher, k->cfg->docs_root, k->cfg->docs_root, false);
                for (size_t i = 0; i < k->cfg->n_shared_dirs; i++) {
                        if (!(dir = slots_path_join(k->cfg->docs_root, k->cfg->shared_dirs[i])))
                                break;
                        chain_one(k, s, launcher, dir, dir, false);
                        free(dir);
                }
        }
        free(launcher);
}

/*
 * sudo accepts the executor's --preserve-env list for the launcher, and the command it runs,
 * /bin/cat /proc/self/status (as sudo-kill's runs /bin/sleep), exits 0 with no_new_privs.
 */
void check_sudo_env(struct check_run *k, const struct slotinfo *s)
{
        char a0[] = "{launcher}", a1[] = "/bin/cat", a2[] = "/proc/self/status";
        char *cat[] = { a0, a1, a2 }, **probe = k->cfg->probe;
        char out[8192], err[1024], *launcher, *own = NULL;
        size_t n_probe = k->cfg->n_probe;
        const char *cwd;
        struct start st;
        int r;

        if (!check_chain_ready(k, s, "sudo-env"))
                return;
        launcher = check_chain_launcher(k);
        check_default_start(k, s, &st);
        cwd = st.dir ? st.dir : (own = state_dir(k, s));
        if (!launcher || !cwd) {
                k->err = -ENOMEM;
                goto out;
        }
        /* The probe's command is cat for this one run (check is single-threaded). */
        k->cfg->probe = cat;
        k->cfg->n_probe = sizeof(cat) / sizeof(cat[0]);
        r = chain_run(k, s, launcher, cwd, &st, &(struct chain_how){ .with_env = true, .stage_ms = CHAIN_TIMEOUT_MS },
                      out, sizeof(out), err, sizeof(err));
        k->cfg->probe = probe;
        k->cfg->n_probe = n_probe;
        if (!check_sudo_env_verdict(k, s, r, out, err, cwd))
                (void) chain_failed_run(k, s, "sudo-env", r, cwd);
out:
        check_end_start(&st);
        free(own);
        free(launcher);
}
