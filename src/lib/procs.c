/* Ending every process of one account as root, so that the account cannot fight back. */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "procs.h"

#ifndef SYS_pidfd_open
#define SYS_pidfd_open 434
#endif
#ifndef SYS_pidfd_send_signal
#define SYS_pidfd_send_signal 424
#endif

int slots_proc_parse(const char *text, struct slots_proc *p)
{
        bool state = false, uid = false;

        p->threads = 1;
        snprintf(p->comm, sizeof(p->comm), "?");
        for (const char *l = text; l && *l; l = strchr(l, '\n'), l = l ? l + 1 : NULL) {
                if (strncmp(l, "Name:", 5) == 0) {
                        (void) sscanf(l + 5, " %63[^\n]", p->comm);
                } else if (strncmp(l, "State:", 6) == 0) {
                        state = sscanf(l + 6, " %c", &p->state) == 1;
                } else if (strncmp(l, "Uid:", 4) == 0) {
                        uid = sscanf(l + 4, " %lu %lu %lu %lu", &p->uid[0], &p->uid[1], &p->uid[2],
                                     &p->uid[3]) == 4;
                } else if (strncmp(l, "Threads:", 8) == 0) {
                        (void) sscanf(l + 8, " %lu", &p->threads);
                }
        }
        return state && uid ? 0 : -EBADMSG;
}

bool slots_proc_signallable(const struct slots_proc *p, uid_t uid)
{
        return p->uid[0] == (unsigned long) uid || p->uid[2] == (unsigned long) uid;
}

bool slots_proc_of(const struct slots_proc *p, uid_t uid)
{
        for (int i = 0; i < 4; i++)
                if (p->uid[i] == (unsigned long) uid)
                        return true;
        return false;
}

bool slots_proc_dead(const struct slots_proc *p)
{
        /* A leader that called pthread_exit shows Z while its other threads run on. */
        return p->state == 'X' || (p->state == 'Z' && p->threads <= 1);
}

bool slots_proc_held(const struct slots_proc *p)
{
        return slots_proc_dead(p) || p->state == 'T' || p->state == 't' || p->state == 'D';
}

static long now_ms(void)
{
        struct timespec ts;

        clock_gettime(CLOCK_MONOTONIC, &ts);
        return ts.tv_sec * 1000L + ts.tv_nsec / 1000000L;
}

static int read_status(int procfd, const char *pid, struct slots_proc *p)
{
        char path[64], buf[4096];
        ssize_t n;
        int fd;

        snprintf(path, sizeof(path), "%s/status", pid);
        fd = openat(procfd, path, O_RDONLY | O_CLOEXEC);
        if (fd < 0)
                return -errno;
        n = read(fd, buf, sizeof(buf) - 1);
        close(fd);
        if (n <= 0)
                return n < 0 ? -errno : -ESRCH;
        buf[n] = '\0';
        return slots_proc_parse(buf, p);
}

static int pidfd_signal(int pidfd, int sig)
{
        return (int) syscall(SYS_pidfd_send_signal, pidfd, sig, NULL, 0);
}

enum action { SCAN, STOP, KILL };

struct tally {
        unsigned live;                  /* processes of uid that are not dead */
        unsigned running;               /* of those, signallable ones that can still run code */
        unsigned foreign;               /* of those, ones acting as uid that the account cannot signal */
        unsigned long sent;
};

/*
 * One pass over /proc: every live process of uid is counted, and with STOP or
 * KILL the signallable ones get that signal.  A candidate is opened as a pidfd
 * and its status read again and confirmed alive through the pidfd before it is
 * signalled: a pid reused by another account's process is never signalled.
 */
static int pass(uid_t uid, enum action act, struct tally *t, struct slots_procs_report *rep)
{
        struct dirent *de;
        DIR *d;
        int procfd;

        memset(t, 0, sizeof(*t));
        procfd = open("/proc", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (procfd < 0)
                return -errno;
        d = fdopendir(procfd);
        if (!d) {
                int r = -errno;
                close(procfd);
                return r;
        }
        if (rep)
                rep->survivors = 0;
        while ((errno = 0, de = readdir(d))) {
                struct slots_proc p = { 0 };
                bool mine;
                int pidfd;

                if (!isdigit((unsigned char) de->d_name[0]))
                        continue;
                if (read_status(procfd, de->d_name, &p) < 0 || !slots_proc_of(&p, uid) || slots_proc_dead(&p))
                        continue;
                p.pid = (pid_t) atol(de->d_name);
                pidfd = (int) syscall(SYS_pidfd_open, p.pid, 0);
                if (pidfd < 0)
                        continue;       /* gone already */
                /* Read again through the same pid now that the pidfd pins the process, then check it lives. */
                if (read_status(procfd, de->d_name, &p) < 0 || pidfd_signal(pidfd, 0) < 0 ||
                    !slots_proc_of(&p, uid) || slots_proc_dead(&p)) {
                        close(pidfd);
                        continue;
                }
                mine = slots_proc_signallable(&p, uid);
                t->live++;
                if (!mine)
                        t->foreign++;
                else if (!slots_proc_held(&p))
                        t->running++;
                if (rep && rep->survivors < SLOTS_PROCS_SHOWN)
                        rep->shown[rep->survivors] = p;
                if (rep)
                        rep->survivors++;
                if (mine && act != SCAN) {
                        /* A stopped process needs no second SIGSTOP; SIGKILL goes to every one. */
                        if ((act == KILL || !slots_proc_held(&p)) &&
                            pidfd_signal(pidfd, act == KILL ? SIGKILL : SIGSTOP) == 0)
                                t->sent++;
                }
                close(pidfd);
        }
        if (errno) {
                int r = -errno;
                closedir(d);
                return r;
        }
        closedir(d);
        return 0;
}

static int end_processes(uid_t uid, int timeout_ms, struct slots_procs_report *rep, struct slots_error *e)
{
        long start = now_ms(), deadline = start + (timeout_ms > 0 ? timeout_ms : 1);
        struct tally t;
        long killed_at;
        int r, pause = 0;

        memset(rep, 0, sizeof(*rep));
        if (uid == 0)
                return slots_error_set(e, -EINVAL, "uid 0", "refusing to end the processes of root");
        for (;;) {
                /* Freeze: SIGSTOP in rounds until none of them can run code (or the time is up). */
                for (;;) {
                        rep->rounds++;
                        r = pass(uid, STOP, &t, rep);
                        if (r < 0)
                                goto fail;
                        rep->stopped += t.sent;
                        if (t.live == 0)
                                goto done;
                        if (t.running == 0 && t.sent == 0)
                                break;
                        if (now_ms() >= deadline)
                                break;
                        /* Let the SIGSTOPs land; no pause while the rounds still find work quickly. */
                        if (pause)
                                (void) poll(NULL, 0, pause);
                        pause = pause < 8 ? pause + 1 : pause;
                }
                /* Kill: every one of them, stopped or not; then wait for them to go. */
                rep->rounds++;
                r = pass(uid, KILL, &t, NULL);
                if (r < 0)
                        goto fail;
                rep->killed += t.sent;
                killed_at = now_ms();
                for (pause = 1;; pause = pause < 20 ? pause * 2 : pause) {
                        rep->rounds++;
                        r = pass(uid, SCAN, &t, rep);
                        if (r < 0)
                                goto fail;
                        if (t.live == 0)
                                goto done;
                        /* Some run (forked before their parent stopped): freeze again. */
                        if (t.running > 0 || now_ms() >= deadline)
                                break;
                        /* Killed ones take a moment to exit; ones still there later get it again. */
                        if (t.live > t.foreign && now_ms() - killed_at > 200)
                                break;
                        /* Only ones the account cannot signal are left: they are not ours to end. */
                        if (t.live == t.foreign && now_ms() - killed_at > 500)
                                goto busy;
                        (void) poll(NULL, 0, pause);
                }
                if (now_ms() >= deadline)
                        break;
                pause = 0;
        }
busy:
        rep->elapsed_ms = now_ms() - start;
        r = slots_error_set(e, -EBUSY, "processes", "%u process%s of uid %u still run%s after %ld ms of SIGSTOP "
                            "and SIGKILL as root: process %d (%s)", rep->survivors, rep->survivors == 1 ? "" : "es",
                            (unsigned) uid, rep->survivors == 1 ? "s" : "", rep->elapsed_ms,
                            (int) rep->shown[0].pid, rep->shown[0].comm);
        return r;
fail:
        rep->elapsed_ms = now_ms() - start;
        return slots_error_set(e, r, "/proc", "cannot list or signal processes: %s", strerror(-r));
done:
        rep->elapsed_ms = now_ms() - start;
        rep->survivors = 0;
        return 0;
}

int slots_end_processes(uid_t uid, int timeout_ms, struct slots_procs_report *rep, struct slots_error *e)
{
        bool raised;
        int before, r;

        /* Ahead of a fork bomb on every CPU: the rounds must outrun the forks.  Restored after. */
        errno = 0;
        before = getpriority(PRIO_PROCESS, 0);
        raised = errno == 0 && uid != 0 && setpriority(PRIO_PROCESS, 0, -20) == 0;
        r = end_processes(uid, timeout_ms, rep, e);
        if (raised)
                (void) setpriority(PRIO_PROCESS, 0, before);
        return r;
}
