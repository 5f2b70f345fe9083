/*
 * check's sudo-kill row: as the service, a run of the slot's own command behind slotctl and the
 * launcher, seen running, ended by the platform's kill, and everything the run started looked at.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <unistd.h>

#include "check-chain.h"
#include "check-int.h"
#include "check-procs.h"
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
        struct run_left left;   /* processes the helper could not end (check as root ends them) */
};

struct kill_job {
        struct run_slot w;      /* first: the helper's argument is &w */
        const char *run[16];    /* sudo -n -u SLOT -- [slotctl] launcher /bin/sh -c SCRIPT MARK */
        const struct start *start;
        bool tty;               /* on a terminal of its own */
};

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

/* A run of sudo as the slot, its output's heads, and whether its end was seen (and waited for). */
struct krun {
        struct slots_prog p;
        char out[256], err[200];
        bool reaped;
};

/*
 * Waits until the command says it started (1), the run ends first (0, *status its result as
 * slots_child_poll gives it) or its deadline passes (2: still running, now without a deadline,
 * for the caller to look for the command itself), reading both pipes meanwhile.
 */
static int krun_wait_mark(struct krun *r, int *status)
{
        for (;;) {
                struct pollfd p[3] = { { .fd = r->p.fd[0], .events = POLLIN }, { .fd = r->p.fd[1], .events = POLLIN },
                                       { .fd = r->p.c.pidfd, .events = POLLIN } };
                int left = slots_child_left_ms(&r->p.c);

                slots_prog_read(&r->p);
                if (strstr(r->out, KILL_MARK "\n"))
                        return 1;
                if (left == 0)
                        /* Looked at once more below, never killed there: the caller decides. */
                        slots_child_deadline(&r->p.c, 0);
                if (slots_child_poll(&r->p.c, status) != 0) {
                        r->reaped = true;
                        slots_prog_read(&r->p);
                        return 0;
                }
                if (left == 0)
                        return 2;
                /* Without a pidfd (a kernel before 5.3), a look every 2 ms. */
                if (r->p.c.pidfd < 0 && (left < 0 || left > 2))
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
        struct kproc *run = check_proc_run(getpid(), &n);
        bool found = false;

        for (size_t i = 0; i < n && !found; i++)
                if (run[i].uid == j->w.slot_uid && proc_argv_is(run[i].pid, argv)) {
                        *who = run[i];
                        found = true;
                }
        free(run);
        return found;
}

/* The run started: sees its command, sends the kill, looks at what is left.  The outcome. */
static int kill_stages(const struct kill_job *j, struct krun *run, struct kill_report *rep)
{
        struct kproc who;
        char err[200];
        int r;

        run->p = (struct slots_prog){ .head = { run->out, run->err }, .size = { sizeof(run->out), sizeof(run->err) } };
        r = slots_prog_start(&run->p, j->run, NULL, -1, j->w.stage_ms, SLOTS_CHILD_GROUP);
        if (r < 0) {
                /* Nothing of it runs (a child whose exec failed is reaped). */
                run->reaped = true;
                rep->status = r;
                return KILL_SETUP;
        }
        rep->group = run->p.c.pid;
        r = krun_wait_mark(run, &rep->status);
        if (r == 2 && !find_command(j, &rep->who)) {
                /* Its command neither said it started nor runs: the run is over. */
                slots_child_kill(&run->p.c);
                run->reaped = true;
                rep->status = -ETIMEDOUT;
                r = 0;
        }
        if (r == 0) {
                report_err(rep, run->err);
                return KILL_NOT_STARTED;
        }
        /* It said so (1), or its stdout goes elsewhere and it runs all the same (2). */
        if (r == 1 && !find_command(j, &rep->who))
                return KILL_NOT_FOUND;
        rep->command = rep->who.pid;
        if (rep->who.pgrp != rep->group)
                return KILL_LEFT_GROUP;
        r = check_kill_sudo(&j->w, "TERM", rep->group, j->w.stage_ms, err, sizeof(err));
        if (r != 0) {
                rep->status = r;
                report_err(rep, err);
                return KILL_REFUSED;
        }
        if (!check_group_ended(&j->w, rep->group, rep->who.pid, j->w.stage_ms, &who)) {
                rep->who = who;
                return KILL_OUTLIVED;
        }
        if (check_run_of_slot(&j->w, rep->group, false, &who, 1)) {
                rep->who = who;
                return KILL_LEFT_BEHIND;
        }
        return KILL_OK;
}

static int kill_child(void *arg)
{
        const struct kill_job *j = arg;
        struct kill_report rep = { .outcome = KILL_SETUP };
        struct krun run = { .p = { .c = { .pid = -1, .pidfd = -1 }, .fd = { -1, -1 } } };

        check_own_session(j->tty);
        check_enter_start(j->start);
        /* What leaves its parent comes back to the helper, so nothing the run starts is out of sight. */
        if (prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) < 0)
                rep.status = -errno;
        else
                rep.outcome = kill_stages(j, &run, &rep);
        if (run.p.c.pid > 0)
                check_run_end(&j->w, &rep.left);
        /* Told before sudo is reaped: whatever keeps it, check has the report. */
        (void) !write(j->w.report, &rep, sizeof(rep));
        slots_prog_close(&run.p);
        if (run.p.c.pid > 0 && !run.reaped)
                slots_child_kill(&run.p.c);
        return 0;
}

/* ---- check's side: the runs, what is left, the row ---- */

/* One run, with a terminal or without: the report's outcome, or check_run_helped's result when none came. */
static int kill_once(const struct check_run *k, const struct start *st, struct kill_job *j, struct kill_report *rep)
{
        int r;

        memset(rep, 0, sizeof(*rep));
        rep->outcome = -1;
        /* Every stage, and the cleanup's kills after them. */
        r = check_run_helped(k, st, kill_child, &j->w, 6, rep, sizeof(*rep), &rep->left);
        return rep->outcome >= 0 ? rep->outcome : r;
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
static void kill_row_proc(struct check_run *k, const struct slotinfo *s, bool tty, int r, const struct kill_report *rep,
                          const char *group_fix, const char *ended)
{
        char who[160];
        const char *svc = k->cfg->service;

        proc_said(who, sizeof(who), &rep->who);
        if (r == KILL_LEFT_GROUP)
                check_add_rowf(
                        k, SLOTS_CHECK_FAIL, "sudo-kill", s->name,
                        tty ? group_fix
                            : "make the launcher run the command in the process group it was started in (no setsid, no "
                              "bwrap --new-session): the executor ends a run by its process group",
                        "as %s %s, the run's command is not in the process group the executor ends (%s; the run's "
                        "group is %ld): %s, so the kill cannot end it; %s",
                        svc, check_tty_said(tty), who, (long) rep->group,
                        tty ? "sudo's use_pty or the launcher runs it in a session of its own"
                            : "the launcher moved it to a group of its own",
                        ended);
        else if (r == KILL_LEFT_BEHIND)
                check_add_rowf(
                        k, SLOTS_CHECK_FAIL, "sudo-kill", s->name,
                        "make the launcher keep what it starts in the run's process group (no setsid, no daemon of "
                        "its own): the executor's kill leaves anything else running",
                        "as %s %s, a process the run started left the run's process group and lives on after the "
                        "kill (%s; the run's group is %ld); %s",
                        svc, check_tty_said(tty), who, (long) rep->group, ended);
        else
                check_add_rowf(
                        k, SLOTS_CHECK_FAIL, "sudo-kill", s->name,
                        "find why it ignores or outlives TERM (grep SigIgn /proc/PID/status): the launcher must let "
                        "TERM end the command",
                        "as %s %s, %s of %s outlived the TERM by %d s (%s); %s", svc, check_tty_said(tty),
                        rep->who.pid == rep->command ? "the run's command" : "a process", s->name,
                        check_chain_stage_ms(k, KILL_STAGE_MS) / 1000, who, ended);
}

/* The kill's row from kill_once's result r, for the run with tty or without. */
static void kill_row(struct check_run *k, const struct slotinfo *s, bool tty, int r, const struct kill_report *rep)
{
        int stage_ms = check_chain_stage_ms(k, KILL_STAGE_MS);
        const char *svc = k->cfg->service, *via = k->cfg->slotctl ? "sudo -> slotctl -> launcher" :
                                                                   "sudo -> launcher";
        char fix[512], st[64], ended[160] = "check ended it";

        if (geteuid() != 0 && rep->left.n)
                /* Only root could end what the service's kill does not reach. */
                snprintf(ended, sizeof(ended), "pid %ld of %s is left running (check as the service cannot end it; "
                         "its command ends within 30 s)", (long) rep->left.p[0].pid, s->name);
        snprintf(fix, sizeof(fix), "slots-provision (its drop-in lets %s run \"kill -s SIGNAL -- -PGID\" as %s, "
                 "with !use_pty so that a run stays in the process group the executor ends), then visudo -c",
                 svc, s->name);
        status_said(st, sizeof(st), rep->status, stage_ms);
        if (r == KILL_NOT_STARTED && rep->status == -ETIMEDOUT)
                snprintf(st, sizeof(st), "did not start it within %d s", stage_ms / 1000);
        if (r == KILL_OK)
                check_add_rowf(
                        k, SLOTS_CHECK_PASS, "sudo-kill", s->name, NULL,
                        "as %s, %s ran /bin/sleep 30 as %s and ended it, with and without a terminal: sudo -n -u %s "
                        "kill -s TERM -- -PGID ended the run's process group, nothing of it left",
                        svc, via, s->name, s->name);
        else if (r == KILL_LEFT_GROUP || r == KILL_LEFT_BEHIND || r == KILL_OUTLIVED)
                kill_row_proc(k, s, tty, r, rep, fix, ended);
        else if (r == KILL_NOT_STARTED)
                check_add_rowf(
                        k, SLOTS_CHECK_FAIL, "sudo-kill", s->name,
                        "run it as the service and read the message: sudo -n -u slotNN -- [slotctl] LAUNCHER /bin/sh "
                        "-c 'echo started; /bin/sleep 30'",
                        "as %s %s, the run's command never started: %s %s%s%s", svc, check_tty_said(tty), via, st,
                        rep->err[0] ? ": " : "", rep->err);
        else if (r == KILL_NOT_FOUND)
                check_add_rowf(
                        k, SLOTS_CHECK_FAIL, "sudo-kill", s->name,
                        "make the launcher run the command itself, as the slot (not through another service "
                        "manager): the executor's kill must reach it",
                        "as %s %s, the run's command said it started, yet no process of %s the run started runs it",
                        svc, check_tty_said(tty), s->name);
        else if (r == KILL_REFUSED)
                check_add_rowf(k, SLOTS_CHECK_FAIL, "sudo-kill", s->name, fix,
                               "as %s %s, sudo -n -u %s kill -s TERM -- -%ld is refused: %s%s%s%s%s", svc,
                               check_tty_said(tty), s->name, (long) rep->group, st, rep->err[0] ? ": " : "", rep->err,
                               geteuid() != 0 && rep->left.n ? "; " : "", geteuid() != 0 && rep->left.n ? ended : "");
        else if (r < 0 && tty && r != -EPERM && r != -ECHILD && r != -ETIMEDOUT && r != -EIO)
                check_add_rowf(k, SLOTS_CHECK_SKIP, "sudo-kill", s->name, NULL,
                               "passes without a terminal; no terminal of its own for the case with one (%s)",
                               strerror(-r));
        else
                check_add_rowf(k, SLOTS_CHECK_FAIL, "sudo-kill", s->name, "run the check again",
                               "cannot run the kill: %s",
                               r < 0             ? check_probe_failure(r)
                               : r == KILL_SETUP ? strerror(-rep->status)
                                                 : "no report");
}

void check_sudo_kill(struct check_run *k, const struct slotinfo *s)
{
        struct start st;
        struct kill_job j = { .start = &st };
        struct kill_report rep;
        char *launcher;
        size_t a = 0;
        int r;

        if (!check_chain_ready(k, s, "sudo-kill"))
                return;
        launcher = check_chain_launcher(k);
        if (!launcher) {
                k->err = -ENOMEM;
                return;
        }
        check_run_slot_of(k, s, KILL_STAGE_MS, &j.w);
        j.run[a++] = j.w.sudo;
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
        check_default_start(k, s, &st);
        r = kill_once(k, &st, &j, &rep);
        if (r == KILL_OK) {
                j.tty = true;
                r = kill_once(k, &st, &j, &rep);
        }
        check_end_start(&st);
        kill_row(k, s, j.tty, r, &rep);
        free(launcher);
}
