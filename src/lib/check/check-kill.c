/*
 * check's sudo-kill row: as the service, a run of the slot's own command behind slotctl and the
 * launcher, seen running, ended by the platform's kill, and everything the run started looked at.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check-chain.h"
#include "check-int.h"
#include "child.h"
#include "privdrop.h"

/* Each stage's deadline unless --timeout: the run to start its command, the kill, the end after it. */
#define KILL_STAGE_MS 10000

/*
 * The run's command: a shell that says it started, on the pipe that is its standard output, and
 * stays while its sleep runs (no exec: its argv, with the mark as $0, names it for certain).
 */
#define KILL_MARK "slots-check-kill"
#define KILL_SCRIPT "echo " KILL_MARK "; /bin/sleep 30; exit 0"

enum kill_outcome {
        KILL_OK,
        KILL_NOT_STARTED,       /* the run ended, or its deadline passed, before its command said it started */
        KILL_NOT_FOUND,         /* it said so, yet no process the run started runs it */
        KILL_LEFT_GROUP,        /* the command is not in the run's process group */
        KILL_REFUSED,           /* sudo's kill exits non-zero, or does not finish */
        KILL_OUTLIVED,          /* a process of the run's group outlived the TERM */
        KILL_LEFT_BEHIND,       /* a process the run started left the group and lives on */
        KILL_SETUP,             /* a pipe, a fork or /proc failed (status: the errno) */
};

/* What the probe's helper tells check: one record, written at once (smaller than PIPE_BUF). */
struct kill_report {
        int outcome;
        int status;             /* sudo's exit status (0..255) or -errno */
        pid_t group;            /* the run's process group */
        pid_t command;          /* the run's command, once it was seen */
        struct kproc who;       /* the process the row names */
        char err[200];          /* the first line on standard error of the run, or of the kill */
        unsigned n_left;        /* processes the helper could not end (check as root ends them) */
        struct {
                pid_t pid;
                unsigned long long start;
        } left[32];
};

struct kill_job {
        const char *run[16];    /* sudo -n -u SLOT -- [slotctl] launcher /bin/sh -c SCRIPT MARK */
        const struct start *start;
        const char *sudo, *slot;
        uid_t slot_uid;
        int stage_ms;
        bool tty;               /* on a terminal of its own */
        int report;             /* write end of the report's pipe */
};

/* ---- /proc ---- */

bool kproc_parse(const char *buf, uid_t uid, struct kproc *p)
{
        const char *open_ = strchr(buf, '('), *close_ = strrchr(buf, ')');

        /* pid (comm) state ppid pgrp session ...: comm may hold anything, so up to its last ')' */
        if (!open_ || !close_ || close_ < open_)
                return false;
        *p = (struct kproc){ .pid = (pid_t) atol(buf), .uid = uid };
        snprintf(p->comm, sizeof(p->comm), "%.*s", (int) (close_ - open_ - 1), open_ + 1);
        return p->pid > 0 &&
               sscanf(close_ + 1, " %c %d %d %d %*d %*d %*u %*u %*u %*u %*u %*u %*u %*d %*d %*d %*d %*d %*d %llu",
                      &p->state, &p->ppid, &p->pgrp, &p->sid, &p->start) == 5;
}

/* Reads /proc/PID/stat (name: its folder) into p, its uid the owner of the file; false when it is gone. */
static bool proc_read(const char *name, struct kproc *p)
{
        char path[64], buf[1024];
        struct stat st;
        ssize_t n;
        int fd;

        snprintf(path, sizeof(path), "/proc/%s/stat", name);
        fd = open(path, O_RDONLY | O_CLOEXEC);
        if (fd < 0)
                return false;
        n = fstat(fd, &st) == 0 ? read(fd, buf, sizeof(buf) - 1) : -1;
        close(fd);
        if (n <= 0)
                return false;
        buf[n] = '\0';
        return kproc_parse(buf, st.st_uid, p);
}

size_t kproc_descendants(const struct kproc *all, size_t n_all, pid_t self, struct kproc *out)
{
        size_t n = 0;

        for (size_t i = 0; i < n_all; i++) {
                pid_t up = all[i].ppid;

                /* Up the parents to self (at most n_all steps: a loop of reused pids ends it). */
                for (size_t steps = 0; up > 1 && up != self && steps < n_all; steps++) {
                        size_t j = 0;

                        while (j < n_all && all[j].pid != up)
                                j++;
                        up = j < n_all ? all[j].ppid : 0;
                }
                if (up == self && all[i].pid != self && all[i].state != 'Z' && all[i].state != 'X')
                        out[n++] = all[i];
        }
        return n;
}

/*
 * Every live process the helper (self) started, at any depth: it is a child subreaper, so what
 * left its parent is still its own.  *n of them in a malloc'ed list, or NULL (*n 0) when none or
 * out of memory.
 */
static struct kproc *proc_run(pid_t self, size_t *n)
{
        struct kproc *all = NULL, *mine;
        size_t n_all = 0, cap = 0;
        DIR *d = opendir("/proc");
        struct dirent *de;

        *n = 0;
        while (d && (de = readdir(d))) {
                if (de->d_name[0] < '1' || de->d_name[0] > '9')
                        continue;
                if (n_all == cap) {
                        struct kproc *more = realloc(all, (cap = cap ? cap * 2 : 256) * sizeof(*all));

                        if (!more)
                                break;
                        all = more;
                }
                if (proc_read(de->d_name, &all[n_all]))
                        n_all++;
        }
        if (d)
                closedir(d);
        mine = all ? malloc((n_all ? n_all : 1) * sizeof(*mine)) : NULL;
        if (mine)
                *n = kproc_descendants(all, n_all, self, mine);
        free(all);
        return mine;
}

/* Whether /proc/PID/cmdline is exactly the NUL-separated argv. */
static bool proc_argv_is(pid_t pid, const char *const *argv)
{
        char path[64], buf[512], want[512];
        size_t len = 0;
        ssize_t n;
        int fd;

        for (size_t i = 0; argv[i]; i++) {
                size_t l = strlen(argv[i]) + 1;

                if (len + l > sizeof(want))
                        return false;
                memcpy(want + len, argv[i], l);
                len += l;
        }
        snprintf(path, sizeof(path), "/proc/%ld/cmdline", (long) pid);
        fd = open(path, O_RDONLY | O_CLOEXEC);
        if (fd < 0)
                return false;
        n = read(fd, buf, sizeof(buf));
        close(fd);
        return n == (ssize_t) len && memcmp(buf, want, len) == 0;
}

/* ---- the helper: start, see the command, kill, look ---- */

/* A run of sudo with what it writes to stdout and stderr in pipes the helper reads. */
struct krun {
        struct slots_child c;
        int out, err;           /* read ends, non-blocking; -1: closed */
        char outbuf[256], errbuf[200];
        size_t outlen, errlen;
        bool reaped;            /* its end was seen (and waited for) */
};

static void krun_close(struct krun *r)
{
        if (r->out >= 0)
                close(r->out);
        if (r->err >= 0)
                close(r->err);
        r->out = r->err = -1;
}

/* Starts argv (sudo ...) with stdin /dev/null, stdout and stderr to the run's pipes: 0 or -errno. */
static int krun_start(struct krun *r, const char *const *argv, int timeout_ms, unsigned flags)
{
        const char *const envp[] = { "PATH=/usr/local/bin:/usr/bin:/bin", "LANG=C", NULL };
        int po[2], pe[2], null, s;

        *r = (struct krun){ .out = -1, .err = -1 };
        if (pipe2(po, O_CLOEXEC) < 0)
                return -errno;
        if (pipe2(pe, O_CLOEXEC) < 0) {
                s = -errno;
                close(po[0]);
                close(po[1]);
                return s;
        }
        s = slots_child_start(&r->c, timeout_ms, flags);
        if (s == 0) {
                null = open("/dev/null", O_RDONLY | O_CLOEXEC);
                if (null < 0 || dup2(null, 0) < 0 || dup2(po[1], 1) < 0 || dup2(pe[1], 2) < 0)
                        slots_exit_child(124);
                execve(argv[0], (char *const *) argv, (char *const *) envp);
                slots_exit_child(124);
        }
        close(po[1]);
        close(pe[1]);
        r->out = po[0];
        r->err = pe[0];
        if (s < 0 || fcntl(r->out, F_SETFL, O_NONBLOCK) < 0 || fcntl(r->err, F_SETFL, O_NONBLOCK) < 0) {
                krun_close(r);
                if (s > 0)
                        slots_child_kill(&r->c);
                return s < 0 ? s : -errno;
        }
        return 0;
}

/* Reads what is there in the pipe fd into buf (kept NUL-terminated); closes it at EOF. */
static void krun_drain(int *fd, char *buf, size_t size, size_t *len)
{
        char tmp[512];
        ssize_t n;

        while (*fd >= 0 && (n = read(*fd, tmp, sizeof(tmp))) != 0) {
                if (n < 0) {
                        if (errno == EINTR)
                                continue;
                        if (errno != EAGAIN)
                                break;
                        return;
                }
                for (ssize_t i = 0; i < n && *len + 1 < size; i++)
                        buf[(*len)++] = tmp[i];
                buf[*len] = '\0';
        }
        close(*fd);
        *fd = -1;
}

/*
 * Waits until the command says it started (1), the run ends first (0, *status its result as
 * slots_child_poll gives it) or its deadline passes (2: still running, now without a deadline,
 * for the caller to look for the command itself), reading both pipes meanwhile.
 */
static int krun_wait_mark(struct krun *r, int *status)
{
        for (;;) {
                struct pollfd p[3] = { { .fd = r->out, .events = POLLIN }, { .fd = r->err, .events = POLLIN },
                                       { .fd = r->c.pidfd, .events = POLLIN } };
                int left = slots_child_left_ms(&r->c);

                krun_drain(&r->out, r->outbuf, sizeof(r->outbuf), &r->outlen);
                krun_drain(&r->err, r->errbuf, sizeof(r->errbuf), &r->errlen);
                if (strstr(r->outbuf, KILL_MARK "\n"))
                        return 1;
                if (left == 0)
                        /* Looked at once more below, never killed there: the caller decides. */
                        slots_child_deadline(&r->c, 0);
                if (slots_child_poll(&r->c, status) != 0) {
                        r->reaped = true;
                        krun_drain(&r->out, r->outbuf, sizeof(r->outbuf), &r->outlen);
                        krun_drain(&r->err, r->errbuf, sizeof(r->errbuf), &r->errlen);
                        return 0;
                }
                if (left == 0)
                        return 2;
                /* Without a pidfd (a kernel before 5.3), a look every 2 ms. */
                if (r->c.pidfd < 0 && (left < 0 || left > 2))
                        left = 2;
                (void) poll(p, 3, left);
        }
}

/* The first line of what a run wrote on stderr, into the report. */
static void report_err(struct kill_report *rep, const char *err)
{
        snprintf(rep->err, sizeof(rep->err), "%.*s", (int) strcspn(err, "\n"), err);
}

/* Finds the run's command among what the run started: its shell, as the slot, named by its argv. */
static bool find_command(const struct kill_job *j, struct kproc *who)
{
        const char *const argv[] = { "/bin/sh", "-c", KILL_SCRIPT, KILL_MARK, NULL };
        size_t n;
        struct kproc *run = proc_run(getpid(), &n);
        bool found = false;

        for (size_t i = 0; i < n && !found; i++)
                if (run[i].uid == j->slot_uid && proc_argv_is(run[i].pid, argv)) {
                        *who = run[i];
                        found = true;
                }
        free(run);
        return found;
}

/* The live processes of the slot the run started, in group when in_group, else outside it. */
static size_t run_of_slot(const struct kill_job *j, pid_t group, bool in_group, struct kproc *out, size_t max)
{
        size_t n, k = 0;
        struct kproc *run = proc_run(getpid(), &n);

        for (size_t i = 0; i < n && k < max; i++)
                if (run[i].uid == j->slot_uid && (run[i].pgrp == group) == in_group)
                        out[k++] = run[i];
        free(run);
        return k;
}

/*
 * After the kill: waits, through their pidfds, until no process of the slot is left in the
 * run's group, for one stage at most.  True when none is; else *who is one that is (the
 * command when it is among them).
 */
static bool group_ended(const struct kill_job *j, pid_t group, pid_t command, struct kproc *who)
{
        struct slots_child deadline = { .pid = -1, .pidfd = -1 };

        slots_child_deadline(&deadline, j->stage_ms);
        for (;;) {
                struct kproc live[16];
                struct pollfd p[16];
                size_t n = run_of_slot(j, group, true, live, 16);
                int left = slots_child_left_ms(&deadline);

                if (n == 0)
                        return true;
                if (left == 0) {
                        *who = live[0];
                        for (size_t i = 0; i < n; i++)
                                if (live[i].pid == command)
                                        *who = live[i];
                        return false;
                }
                for (size_t i = 0; i < n; i++)
                        p[i] = (struct pollfd){ .fd = slots_pidfd_open(live[i].pid), .events = POLLIN };
                /* A pid that went between the look and its pidfd: look again at once. */
                for (size_t i = 0; i < n; i++)
                        if (p[i].fd < 0)
                                left = 0;
                (void) poll(p, n, left);
                for (size_t i = 0; i < n; i++)
                        if (p[i].fd >= 0)
                                close(p[i].fd);
        }
}

/* sudo -n -u SLOT kill -s SIG -- -GROUP, as the executor runs it: its status (0..255) or -errno; err its stderr. */
static int sudo_kill(const struct kill_job *j, const char *sig, pid_t group, char *err, size_t size)
{
        char pg[32];
        const char *const argv[] = { j->sudo, "-n", "-u", j->slot, "kill", "-s", sig, "--", pg, NULL };
        struct krun k;
        int r;

        snprintf(pg, sizeof(pg), "-%ld", (long) group);
        r = krun_start(&k, argv, j->stage_ms, 0);
        if (r < 0)
                return r;
        r = slots_child_wait(&k.c);
        krun_drain(&k.err, k.errbuf, sizeof(k.errbuf), &k.errlen);
        krun_close(&k);
        if (err)
                snprintf(err, size, "%s", k.errbuf);
        return r;
}

/* The run started: sees its command, sends the kill, looks at what is left.  The outcome. */
static int kill_stages(const struct kill_job *j, struct krun *run, struct kill_report *rep)
{
        struct kproc who;
        char err[200];
        int r;

        r = krun_start(run, j->run, j->stage_ms, SLOTS_CHILD_GROUP);
        if (r < 0) {
                rep->status = r;
                return KILL_SETUP;
        }
        rep->group = run->c.pid;
        r = krun_wait_mark(run, &rep->status);
        if (r == 2 && !find_command(j, &rep->who)) {
                /* Its command neither said it started nor runs: the run is over. */
                slots_child_kill(&run->c);
                run->reaped = true;
                rep->status = -ETIMEDOUT;
                r = 0;
        }
        if (r == 0) {
                report_err(rep, run->errbuf);
                return KILL_NOT_STARTED;
        }
        /* It said so (1), or its stdout goes elsewhere and it runs all the same (2). */
        if (r == 1 && !find_command(j, &rep->who))
                return KILL_NOT_FOUND;
        rep->command = rep->who.pid;
        if (rep->who.pgrp != rep->group)
                return KILL_LEFT_GROUP;
        r = sudo_kill(j, "TERM", rep->group, err, sizeof(err));
        if (r != 0) {
                rep->status = r;
                report_err(rep, err);
                return KILL_REFUSED;
        }
        if (!group_ended(j, rep->group, rep->who.pid, &who)) {
                rep->who = who;
                return KILL_OUTLIVED;
        }
        if (run_of_slot(j, rep->group, false, &who, 1)) {
                rep->who = who;
                return KILL_LEFT_BEHIND;
        }
        return KILL_OK;
}

/*
 * Ends what is left of the run as the service can: the platform's kill with KILL for each
 * process group a process of the slot is in; what still lives goes into the report, for
 * check as root to end by pidfd.
 */
static void kill_cleanup(const struct kill_job *j, struct kill_report *rep)
{
        struct kproc live[32];
        size_t n = run_of_slot(j, rep->group, true, live, 16);

        n += run_of_slot(j, rep->group, false, live + n, 16);
        for (size_t i = 0; i < n; i++) {
                bool done = live[i].pgrp <= 1;

                for (size_t k = 0; k < i && !done; k++)
                        done = live[k].pgrp == live[i].pgrp;
                if (!done)
                        (void) sudo_kill(j, "KILL", live[i].pgrp, NULL, 0);
        }
        n = run_of_slot(j, rep->group, true, live, 16);
        n += run_of_slot(j, rep->group, false, live + n, 16);
        for (size_t i = 0; i < n; i++) {
                rep->left[i].pid = live[i].pid;
                rep->left[i].start = live[i].start;
        }
        rep->n_left = (unsigned) n;
}

static int kill_child(void *arg)
{
        const struct kill_job *j = arg;
        struct kill_report rep = { .outcome = KILL_SETUP };
        struct krun run = { .c = { .pid = -1, .pidfd = -1 }, .out = -1, .err = -1 };

        own_session(j->tty);
        enter_start(j->start);
        /* What leaves its parent comes back to the helper, so nothing the run starts is out of sight. */
        if (prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) < 0)
                rep.status = -errno;
        else
                rep.outcome = kill_stages(j, &run, &rep);
        if (run.c.pid > 0)
                kill_cleanup(j, &rep);
        /* Told before sudo is reaped: whatever keeps it, check has the report. */
        (void) !write(j->report, &rep, sizeof(rep));
        krun_close(&run);
        if (run.c.pid > 0 && !run.reaped)
                slots_child_kill(&run.c);
        return 0;
}

/* ---- check's side: the runs, what is left, the row ---- */

/*
 * As root: ends each process the helper could not, by pidfd, when it is still that one (its
 * start time) and the slot's: the report comes from a process of the service, which must not
 * get root to end anything the service's own kill as the slot could not.
 */
static void end_left(const struct kill_report *rep, uid_t slot_uid)
{
        for (unsigned i = 0; i < rep->n_left && i < sizeof(rep->left) / sizeof(rep->left[0]); i++) {
                char name[32];
                struct kproc p;
                int fd = slots_pidfd_open(rep->left[i].pid);

                snprintf(name, sizeof(name), "%ld", (long) rep->left[i].pid);
                if (fd >= 0 && proc_read(name, &p) && p.start == rep->left[i].start && p.uid == slot_uid &&
                    slots_pidfd_signal(fd, SIGKILL) == 0)
                        (void) poll(&(struct pollfd){ .fd = fd, .events = POLLIN }, 1, 1000);
                if (fd >= 0)
                        close(fd);
        }
}

/* One run, with a terminal or without: run_started's result (the report's outcome when 0), rep filled. */
static int kill_once(const struct ctx *k, const struct start *st, struct kill_job *j, struct kill_report *rep)
{
        int pipefd[2], r;
        ssize_t n;

        memset(rep, 0, sizeof(*rep));
        if (pipe2(pipefd, O_CLOEXEC) < 0)
                return -errno;
        j->report = pipefd[1];
        /* Every stage, and the cleanup's kills after them. */
        r = run_started(k, st, kill_child, j, 6 * j->stage_ms + 5000);
        close(pipefd[1]);
        if (fcntl(pipefd[0], F_SETFL, O_NONBLOCK) < 0)
                n = -1;
        else
                n = read(pipefd[0], rep, sizeof(*rep));
        close(pipefd[0]);
        if (n != (ssize_t) sizeof(*rep))
                return r < 0 ? r : -EIO;
        if (geteuid() == 0)
                end_left(rep, j->slot_uid);
        return rep->outcome;
}

/* "pid N (comm), uid U, process group G, session S, state X": the process a row names. */
static void proc_said(char *buf, size_t size, const struct kproc *p)
{
        snprintf(buf, size, "pid %ld (%s), uid %lu, process group %ld, session %ld, state %c", (long) p->pid,
                 p->comm, (unsigned long) p->uid, (long) p->pgrp, (long) p->sid, p->state);
}

/* What sudo's result says: "exits N", "was killed by a signal", "did not finish within N s". */
static void status_said(char *buf, size_t size, int status, int stage_ms)
{
        if (status >= 0)
                snprintf(buf, size, "exits %d", status);
        else if (status == -ETIMEDOUT)
                snprintf(buf, size, "did not finish within %d s", stage_ms / 1000);
        else if (status == -ECHILD)
                snprintf(buf, size, "was killed by a signal");
        else
                snprintf(buf, size, "failed: %s", strerror(-status));
}

/* The row of a run that saw the command and found it, or something the run started, still there. */
static void kill_row_proc(struct ctx *k, const struct slotinfo *s, bool tty, int r, const struct kill_report *rep,
                          const char *group_fix, const char *ended)
{
        char who[160];
        const char *svc = k->cfg->service;

        proc_said(who, sizeof(who), &rep->who);
        if (r == KILL_LEFT_GROUP)
                add_rowf(k, SLOTS_CHECK_FAIL, "sudo-kill", s->name, tty ? group_fix :
                         "make the launcher run the command in the process group it was started in (no setsid, no "
                         "bwrap --new-session): the executor ends a run by its process group",
                         "as %s %s, the run's command is not in the process group the executor ends (%s; the run's "
                         "group is %ld): %s, so the kill cannot end it; %s", svc, tty_said(tty), who, (long) rep->group,
                         tty ? "sudo's use_pty or the launcher runs it in a session of its own" :
                         "the launcher moved it to a group of its own", ended);
        else if (r == KILL_LEFT_BEHIND)
                add_rowf(k, SLOTS_CHECK_FAIL, "sudo-kill", s->name,
                         "make the launcher keep what it starts in the run's process group (no setsid, no daemon of "
                         "its own): the executor's kill leaves anything else running",
                         "as %s %s, a process the run started left the run's process group and lives on after the "
                         "kill (%s; the run's group is %ld); %s", svc, tty_said(tty), who, (long) rep->group, ended);
        else
                add_rowf(k, SLOTS_CHECK_FAIL, "sudo-kill", s->name,
                         "find why it ignores or outlives TERM (grep SigIgn /proc/PID/status): the launcher must let "
                         "TERM end the command",
                         "as %s %s, %s of %s outlived the TERM by %d s (%s); %s", svc, tty_said(tty),
                         rep->who.pid == rep->command ? "the run's command" : "a process", s->name,
                         chain_stage_ms(k, KILL_STAGE_MS) / 1000, who, ended);
}

/* The kill's row from kill_once's result r, for the run with tty or without. */
static void kill_row(struct ctx *k, const struct slotinfo *s, bool tty, int r, const struct kill_report *rep)
{
        int stage_ms = chain_stage_ms(k, KILL_STAGE_MS);
        const char *svc = k->cfg->service, *via = k->cfg->slotctl ? "sudo -> slotctl -> launcher" :
                                                                   "sudo -> launcher";
        char fix[512], st[64], ended[160] = "check ended it";

        if (geteuid() != 0 && rep->n_left)
                /* Only root could end what the service's kill does not reach. */
                snprintf(ended, sizeof(ended), "pid %ld of %s is left running (check as the service cannot end it; "
                         "its command ends within 30 s)", (long) rep->left[0].pid, s->name);
        snprintf(fix, sizeof(fix), "slots-provision (its drop-in lets %s run \"kill -s SIGNAL -- -PGID\" as %s, "
                 "with !use_pty so that a run stays in the process group the executor ends), then visudo -c",
                 svc, s->name);
        status_said(st, sizeof(st), rep->status, stage_ms);
        if (r == KILL_NOT_STARTED && rep->status == -ETIMEDOUT)
                snprintf(st, sizeof(st), "did not start it within %d s", stage_ms / 1000);
        if (r == KILL_OK)
                add_rowf(k, SLOTS_CHECK_PASS, "sudo-kill", s->name, NULL,
                         "as %s, %s ran /bin/sleep 30 as %s and ended it, with and without a terminal: sudo -n -u %s "
                         "kill -s TERM -- -PGID ended the run's process group, nothing of it left", svc, via, s->name,
                         s->name);
        else if (r == KILL_LEFT_GROUP || r == KILL_LEFT_BEHIND || r == KILL_OUTLIVED)
                kill_row_proc(k, s, tty, r, rep, fix, ended);
        else if (r == KILL_NOT_STARTED)
                add_rowf(k, SLOTS_CHECK_FAIL, "sudo-kill", s->name,
                         "run it as the service and read the message: sudo -n -u slotNN -- [slotctl] LAUNCHER /bin/sh "
                         "-c 'echo started; /bin/sleep 30'",
                         "as %s %s, the run's command never started: %s %s%s%s", svc, tty_said(tty), via, st,
                         rep->err[0] ? ": " : "", rep->err);
        else if (r == KILL_NOT_FOUND)
                add_rowf(k, SLOTS_CHECK_FAIL, "sudo-kill", s->name,
                         "make the launcher run the command itself, as the slot (not through another service "
                         "manager): the executor's kill must reach it",
                         "as %s %s, the run's command said it started, yet no process of %s the run started runs it",
                         svc, tty_said(tty), s->name);
        else if (r == KILL_REFUSED)
                add_rowf(k, SLOTS_CHECK_FAIL, "sudo-kill", s->name, fix,
                         "as %s %s, sudo -n -u %s kill -s TERM -- -%ld is refused: %s%s%s%s%s", svc, tty_said(tty),
                         s->name, (long) rep->group, st, rep->err[0] ? ": " : "", rep->err,
                         geteuid() != 0 && rep->n_left ? "; " : "", geteuid() != 0 && rep->n_left ? ended : "");
        else if (r < 0 && tty && r != -EPERM && r != -ECHILD && r != -ETIMEDOUT && r != -EIO)
                add_rowf(k, SLOTS_CHECK_SKIP, "sudo-kill", s->name, NULL,
                         "passes without a terminal; no terminal of its own for the case with one (%s)",
                         strerror(-r));
        else
                add_rowf(k, SLOTS_CHECK_FAIL, "sudo-kill", s->name, "run the check again", "cannot run the kill: %s",
                         r < 0 ? probe_failure(r) : r == KILL_SETUP ? strerror(-rep->status) : "no report");
}

void check_sudo_kill(struct ctx *k, const struct slotinfo *s)
{
        struct start st;
        struct kill_job j = { .sudo = k->o->sudo ? k->o->sudo : SUDO_DEFAULT, .slot = s->name, .start = &st,
                              .stage_ms = chain_stage_ms(k, KILL_STAGE_MS) };
        struct kill_report rep;
        char *launcher;
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
        j.run[a++] = "/bin/sh";
        j.run[a++] = "-c";
        j.run[a++] = KILL_SCRIPT;
        j.run[a++] = KILL_MARK;
        j.run[a] = NULL;
        default_start(k, s, &st);
        r = kill_once(k, &st, &j, &rep);
        if (r == KILL_OK) {
                j.tty = true;
                r = kill_once(k, &st, &j, &rep);
        }
        end_start(&st);
        kill_row(k, s, j.tty, r, &rep);
        free(launcher);
}
