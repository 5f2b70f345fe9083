/*
 * The processes of a run of sudo as /proc shows them, the kill as the slot, and the end of
 * what a run left: the drop-in's KILL as the service, then root's by pidfd.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check-procs.h"
#include "child.h"

bool check_kproc_parse(const char *buf, uid_t uid, struct kproc *p)
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
bool check_proc_read(const char *name, struct kproc *p)
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
        return check_kproc_parse(buf, st.st_uid, p);
}

size_t check_kproc_descendants(const struct kproc *all, size_t n_all, pid_t self, struct kproc *out)
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
struct kproc *check_proc_run(pid_t self, size_t *n)
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
                if (check_proc_read(de->d_name, &all[n_all]))
                        n_all++;
        }
        if (d)
                closedir(d);
        mine = all ? malloc((n_all ? n_all : 1) * sizeof(*mine)) : NULL;
        if (mine)
                *n = check_kproc_descendants(all, n_all, self, mine);
        free(all);
        return mine;
}

/* The live processes of the slot the run started, in group when in_group, else outside it (group 0: all). */
size_t check_run_of_slot(const struct run_slot *w, pid_t group, bool in_group, struct kproc *out, size_t max)
{
        size_t n, k = 0;
        struct kproc *run = check_proc_run(getpid(), &n);

        for (size_t i = 0; i < n && k < max; i++)
                if (run[i].uid == w->slot_uid && (group == 0 || (run[i].pgrp == group) == in_group))
                        out[k++] = run[i];
        free(run);
        return k;
}

/*
 * After a kill: waits, through their pidfds, until no process of the slot is left in the
 * run's group (0: anywhere), for ms at most.  True when none is; else *who is one that is
 * (the command when it is among them).
 */
bool check_group_ended(const struct run_slot *w, pid_t group, pid_t command, int ms, struct kproc *who)
{
        struct slots_child deadline = { .pid = -1, .pidfd = -1 };

        slots_child_deadline(&deadline, ms);
        for (;;) {
                struct kproc live[16];
                struct pollfd p[16];
                size_t n = check_run_of_slot(w, group, true, live, 16);
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

/*
 * sudo -n -u SLOT kill -s SIG -- -GROUP, as the executor runs it, for ms at most: its status
 * (0..255) or -errno; err its stderr.
 */
int check_kill_sudo(const struct run_slot *w, const char *sig, pid_t group, int ms, char *err, size_t size)
{
        char pg[32];
        const char *const argv[] = { w->sudo, "-n", "-u", w->slot, "kill", "-s", sig, "--", pg, NULL };
        char e[200];
        struct slots_prog k = { .head = { NULL, e }, .size = { 0, sizeof(e) } };
        int r;

        snprintf(pg, sizeof(pg), "-%ld", (long) group);
        r = slots_prog_start(&k, argv, NULL, -1, ms, SLOTS_PROG_STOP_ENDS);
        if (r < 0)
                return r;
        r = slots_prog_wait(&k);
        slots_prog_close(&k);
        if (err)
                snprintf(err, size, "%s", e);
        return r;
}

/*
 * Ends what is left of the run as the service can: the platform's kill with KILL for each
 * process group a process of the slot is in, all of them within one stage, and a second to
 * see them go; what still lives goes into left, for check as root to end by pidfd.
 */
void check_run_end(const struct run_slot *w, struct run_left *left)
{
        struct slots_child deadline = { .pid = -1, .pidfd = -1 };
        const size_t max = sizeof(left->p) / sizeof(left->p[0]);
        struct kproc live[sizeof(left->p) / sizeof(left->p[0])];
        size_t n = check_run_of_slot(w, 0, true, live, max);

        slots_child_deadline(&deadline, w->stage_ms);
        for (size_t i = 0; i < n; i++) {
                bool done = live[i].pgrp <= 1;
                int ms = slots_child_left_ms(&deadline);

                for (size_t k = 0; k < i && !done; k++)
                        done = live[k].pgrp == live[i].pgrp;
                if (!done && ms > 0)
                        (void) check_kill_sudo(w, "KILL", live[i].pgrp, ms, NULL, 0);
        }
        if (n)
                (void) check_group_ended(w, 0, 0, 1000, &live[0]);
        n = check_run_of_slot(w, 0, true, live, max);
        for (size_t i = 0; i < n; i++) {
                left->p[i].pid = live[i].pid;
                left->p[i].start = live[i].start;
        }
        left->n = (unsigned) n;
}

/*
 * As root: ends each process the helper could not, by pidfd, when it is still that one (its
 * start time) and the slot's: the report comes from a process of the service, which must not
 * get root to end anything the service's own kill as the slot could not.
 */
void check_run_end_left(const struct run_left *left, uid_t slot_uid)
{
        for (unsigned i = 0; i < left->n && i < sizeof(left->p) / sizeof(left->p[0]); i++) {
                char name[32];
                struct kproc p;
                int fd = slots_pidfd_open(left->p[i].pid);

                snprintf(name, sizeof(name), "%ld", (long) left->p[i].pid);
                if (fd >= 0 && check_proc_read(name, &p) && p.start == left->p[i].start && p.uid == slot_uid &&
                    slots_pidfd_signal(fd, SIGKILL) == 0)
                        (void) poll(&(struct pollfd){ .fd = fd, .events = POLLIN }, 1, 1000);
                if (fd >= 0)
                        close(fd);
        }
}
