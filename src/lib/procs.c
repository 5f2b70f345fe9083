/* Ending every process that carries one account's identity, or holds what it leaves, as root, so that neither can fight back. */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/nsfs.h>
#include <sys/ioctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "clock.h"
#include "fsutil.h"
#include "procs.h"

#ifndef SYS_pidfd_open
#define SYS_pidfd_open 434
#endif
#ifndef SYS_pidfd_send_signal
#define SYS_pidfd_send_signal 424
#endif

/* Whether the numbers of a Groups line (up to its newline) list gid. */
static bool groups_list(const char *s, gid_t gid)
{
        for (;;) {
                char *end;
                unsigned long v;

                while (*s == ' ' || *s == '\t')
                        s++;
                if (*s < '0' || *s > '9')
                        return false;
                errno = 0;
                v = strtoul(s, &end, 10);
                if (errno == 0 && v == (unsigned long) gid)
                        return true;
                s = end;
        }
}

int slots_proc_parse(const char *text, gid_t gid, struct slots_proc *p)
{
        bool state = false, uid = false, gids = false;

        p->threads = 1;
        p->nnp = -1;
        p->in_group = false;
        snprintf(p->comm, sizeof(p->comm), "?");
        for (const char *l = text; l && *l; l = strchr(l, '\n'), l = l ? l + 1 : NULL) {
                if (strncmp(l, "Name:", 5) == 0) {
                        (void) sscanf(l + 5, " %63[^\n]", p->comm);
                } else if (strncmp(l, "PPid:", 5) == 0) {
                        (void) sscanf(l + 5, " %d", &p->ppid);
                } else if (strncmp(l, "State:", 6) == 0) {
                        state = sscanf(l + 6, " %c", &p->state) == 1;
                } else if (strncmp(l, "Uid:", 4) == 0) {
                        uid = sscanf(l + 4, " %lu %lu %lu %lu", &p->uid[0], &p->uid[1], &p->uid[2],
                                     &p->uid[3]) == 4;
                } else if (strncmp(l, "Gid:", 4) == 0) {
                        gids = sscanf(l + 4, " %lu %lu %lu %lu", &p->gid[0], &p->gid[1], &p->gid[2],
                                      &p->gid[3]) == 4;
                } else if (strncmp(l, "Groups:", 7) == 0) {
                        p->in_group = groups_list(l + 7, gid);
                } else if (strncmp(l, "Threads:", 8) == 0) {
                        (void) sscanf(l + 8, " %lu", &p->threads);
                } else if (strncmp(l, "NoNewPrivs:", 11) == 0) {
                        p->nnp = (signed char) (l[11 + strspn(l + 11, " \t")] == '1');
                }
        }
        return state && uid && gids ? 0 : -EBADMSG;
}

static bool has_gid(const struct slots_proc *p, gid_t gid)
{
        if (p->in_group)
                return true;
        for (int i = 0; i < 4; i++)
                if (p->gid[i] == (unsigned long) gid)
                        return true;
        return false;
}

/*
 * The group counts on a process none of whose uids is root's: root needs no slot's group to
 * reach anything, and su or runuser keep a root parent in the target's groups.
 */
static bool carries_group(const struct slots_proc *p, gid_t gid)
{
        for (int i = 0; i < 4; i++)
                if (p->uid[i] == 0)
                        return false;
        return has_gid(p, gid);
}

bool slots_proc_signallable(const struct slots_proc *p, uid_t uid, gid_t gid)
{
        return p->uid[0] == (unsigned long) uid || p->uid[2] == (unsigned long) uid || p->userns ||
               carries_group(p, gid);
}

bool slots_proc_of(const struct slots_proc *p, uid_t uid, gid_t gid)
{
        for (int i = 0; i < 4; i++)
                if (p->uid[i] == (unsigned long) uid)
                        return true;
        return p->userns || carries_group(p, gid);
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

/* The most a status may hold (a Groups line of 65536 groups); a longer one is cut there. */
#define STATUS_MAX ((size_t) 1 << 20)

/* Reads the rest of fd after the first part, growing the buffer; a status past STATUS_MAX is cut. */
static char *read_long(int fd, const char *first, size_t n)
{
        size_t cap = 4 * n;
        char *buf = malloc(cap);
        ssize_t k;

        if (!buf)
                return NULL;
        memcpy(buf, first, n);
        while ((k = read(fd, buf + n, cap - n - 1)) > 0) {
                n += (size_t) k;
                if (cap - n - 1 == 0) {
                        char *more = cap < STATUS_MAX ? realloc(buf, cap * 2) : NULL;

                        if (!more)
                                break;
                        buf = more;
                        cap *= 2;
                }
        }
        buf[n] = '\0';
        return buf;
}

/*
 * The text of pid's status: in buf (size bytes) when it fits, else malloc'ed.
 * *text is buf or the copy (free it when it is not buf).  Returns 0 or -errno.
 */
static int status_text(int procfd, const char *pid, char *buf, size_t size, char **text)
{
        char path[64];
        ssize_t n;
        int fd, r;

        snprintf(path, sizeof(path), "%s/status", pid);
        fd = openat(procfd, path, O_RDONLY | O_CLOEXEC);
        if (fd < 0)
                return -errno;
        n = read(fd, buf, size - 1);
        if (n <= 0) {
                r = n < 0 ? -errno : -ESRCH;
                close(fd);
                return r;
        }
        buf[n] = '\0';
        *text = buf;
        /* A process in many groups: the Groups line does not fit the first read. */
        if ((size_t) n == size - 1)
                *text = read_long(fd, buf, (size_t) n);
        close(fd);
        return *text ? 0 : -ENOMEM;
}

static int read_status(int procfd, const char *pid, gid_t gid, struct slots_proc *p)
{
        char buf[4096], *text;
        int r = status_text(procfd, pid, buf, sizeof(buf), &text);

        if (r < 0)
                return r;
        r = slots_proc_parse(text, gid, p);
        if (text != buf)
                free(text);
        return r;
}

/* The user namespaces one pass has judged: many processes share few namespaces. */
#define NS_SEEN 16

struct ns_seen {
        dev_t self_dev;
        ino_t self_ino;                 /* this process's own user namespace */
        size_t n;
        struct {
                dev_t dev;
                ino_t ino;
                bool owned;
        } ns[NS_SEEN];
};

/* The kernel nests user namespaces 32 deep at most. */
#define NS_DEPTH 33

/*
 * The owners of the user namespace of fd and of its ancestors below this
 * process's own (NS_GET_OWNER_UID along NS_GET_PARENT, which fails with EPERM
 * past this process's namespace), into owners.  fd is closed.  Returns how many.
 */
static unsigned ns_owners(int fd, const struct ns_seen *seen, uid_t owners[NS_DEPTH])
{
        unsigned n = 0;

        while (fd >= 0 && n < NS_DEPTH) {
                struct stat st;
                uid_t owner;
                int parent;

                if (fstat(fd, &st) < 0 || (st.st_dev == seen->self_dev && st.st_ino == seen->self_ino))
                        break;
                if (ioctl(fd, NS_GET_OWNER_UID, &owner) == 0)
                        owners[n++] = owner;
                parent = ioctl(fd, NS_GET_PARENT);
                close(fd);
                fd = parent;
        }
        slots_close(fd);
        return n;
}

/* Whether the user namespace of fd, or one of its ancestors below this process's own, is uid's. */
static bool ns_chain_owned(int fd, uid_t uid, const struct ns_seen *seen)
{
        uid_t owners[NS_DEPTH];
        unsigned n = ns_owners(fd, seen, owners);

        for (unsigned i = 0; i < n; i++)
                if (owners[i] == uid)
                        return true;
        return false;
}

/* p->userns for the process pid: its user namespace is the account's or below one of the account's. */
static void look_userns(int procfd, const char *pid, uid_t uid, struct ns_seen *seen, struct slots_proc *p)
{
        char path[64];
        struct stat st;
        int fd;

        p->userns = false;
        snprintf(path, sizeof(path), "%s/ns/user", pid);
        if (fstatat(procfd, path, &st, 0) < 0 || (st.st_dev == seen->self_dev && st.st_ino == seen->self_ino))
                return;
        for (size_t i = 0; i < seen->n; i++)
                if (seen->ns[i].dev == st.st_dev && seen->ns[i].ino == st.st_ino) {
                        p->userns = seen->ns[i].owned;
                        return;
                }
        fd = openat(procfd, path, O_RDONLY | O_CLOEXEC);
        if (fd < 0)
                return;
        p->userns = ns_chain_owned(fd, uid, seen);
        if (seen->n < NS_SEEN) {
                seen->ns[seen->n].dev = st.st_dev;
                seen->ns[seen->n].ino = st.st_ino;
                seen->ns[seen->n++].owned = p->userns;
        }
}

/* What one process carries of the identity: its status, then its user namespace. */
static int look(int procfd, const char *pid, uid_t uid, gid_t gid, struct ns_seen *seen, struct slots_proc *p)
{
        int r = read_status(procfd, pid, gid, p);

        if (r == 0)
                look_userns(procfd, pid, uid, seen, p);
        return r;
}

static int pidfd_signal(int pidfd, int sig)
{
        return (int) syscall(SYS_pidfd_send_signal, pidfd, sig, NULL, 0);
}

enum action { SCAN, STOP, KILL };

struct tally {
        unsigned live;                  /* processes carrying the identity that are not dead */
        unsigned running;               /* of those, signallable ones that can still run code */
        unsigned foreign;               /* of those, ones the account cannot be said to own */
        unsigned long sent;
};

struct who {
        uid_t uid;
        gid_t gid;
        enum slots_find which;
        const struct slots_neighbours *nb;      /* and these, when set */
};

/* ---- neighbours: another account's processes that hold an inode of a set ---- */

static int inode_cmp(const void *a, const void *b)
{
        const struct slots_inode *x = a, *y = b;

        if (x->dev != y->dev)
                return x->dev < y->dev ? -1 : 1;
        return x->ino < y->ino ? -1 : x->ino > y->ino;
}

int slots_held_add(struct slots_held *h, dev_t dev, ino_t ino)
{
        if (h->n == h->cap) {
                size_t cap = h->cap ? h->cap * 2 : 256;
                struct slots_inode *v = realloc(h->v, cap * sizeof(*v));

                if (!v)
                        return -ENOMEM;
                h->v = v;
                h->cap = cap;
        }
        h->v[h->n++] = (struct slots_inode) { dev, ino };
        return 0;
}

void slots_held_free(struct slots_held *h)
{
        free(h->v);
        *h = (struct slots_held) { 0 };
}

/* Whether what dfd/name leads to (a magic link of /proc followed to the open file itself) is in the set. */
static bool held_at(int dfd, const char *name, const struct slots_held *h)
{
        struct slots_inode k;
        struct stat st;

        if (fstatat(dfd, name, &st, 0) < 0)
                return false;
        k = (struct slots_inode) { st.st_dev, st.st_ino };
        return bsearch(&k, h->v, h->n, sizeof(k), inode_cmp) != NULL;
}

/* Whether one of the links in the folder pid/sub (fd, map_files) leads to an inode of the set. */
static bool held_in(int procfd, const char *pid, const char *sub, const struct slots_held *h)
{
        char path[300];
        struct dirent *de;
        bool found = false;
        DIR *d;
        int fd;

        snprintf(path, sizeof(path), "%s/%s", pid, sub);
        fd = openat(procfd, path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (fd < 0 || !(d = fdopendir(fd))) {
                slots_close(fd);
                return false;
        }
        while (!found && (de = readdir(d)))
                found = de->d_name[0] != '.' && held_at(dirfd(d), de->d_name, h);
        closedir(d);
        return found;
}

/* Another account's: one of its uids is neither root's nor the kept one's. */
static bool other_account(const struct slots_neighbours *nb, const struct slots_proc *p)
{
        bool other = false;

        for (int i = 0; nb && i < 4; i++)
                other |= p->uid[i] != 0 && p->uid[i] != (unsigned long) nb->keep_uid;
        return other;
}

/* Another account's, and it holds an inode of the set. */
static bool neighbour(const struct slots_neighbours *nb, int procfd, const char *pid, const struct slots_proc *p)
{
        char path[300];

        if (!other_account(nb, p))
                return false;
        snprintf(path, sizeof(path), "%s/cwd", pid);
        if (held_at(procfd, path, nb->held))
                return true;
        snprintf(path, sizeof(path), "%s/root", pid);
        return held_at(procfd, path, nb->held) || held_in(procfd, pid, "fd", nb->held) ||
               held_in(procfd, pid, "map_files", nb->held);
}

/*
 * p carries the identity as w asks: at all, through the group alone (no uid of it, no
 * namespace of it), or through a uid or namespace of it without no_new_privs.
 */
static bool wanted(const struct who *w, const struct slots_proc *p)
{
        bool own = p->userns;

        if (!slots_proc_of(p, w->uid, w->gid))
                return false;
        if (w->which == SLOTS_FIND_ANY)
                return true;
        for (int i = 0; i < 4; i++)
                own |= p->uid[i] == (unsigned long) w->uid;
        return w->which == SLOTS_FIND_BORROWED ? !own : own && p->nnp == 0;
}

/* A new pass's view of user namespaces: only this process's own is known. */
static int ns_start(int procfd, struct ns_seen *seen)
{
        struct stat st;

        memset(seen, 0, sizeof(*seen));
        if (fstatat(procfd, "self/ns/user", &st, 0) < 0)
                return -errno;
        seen->self_dev = st.st_dev;
        seen->self_ino = st.st_ino;
        return 0;
}

/* Counts p in t and rep, and with STOP or KILL signals it through pidfd when the account owns it. */
static void count_and_signal(const struct who *w, const struct slots_proc *p, int pidfd, enum action act,
                             struct tally *t, struct slots_procs_report *rep)
{
        bool mine = p->neighbour || slots_proc_signallable(p, w->uid, w->gid);

        t->live++;
        if (!mine)
                t->foreign++;
        else if (!slots_proc_held(p))
                t->running++;
        if (rep && rep->survivors < SLOTS_PROCS_SHOWN)
                rep->shown[rep->survivors] = *p;
        if (rep)
                rep->survivors++;
        /* A stopped process needs no second SIGSTOP; SIGKILL goes to every one. */
        if (mine && act != SCAN && (act == KILL || !slots_proc_held(p)) &&
            pidfd_signal(pidfd, act == KILL ? SIGKILL : SIGSTOP) == 0) {
                t->sent++;
                if (act == KILL && p->neighbour && w->nb->named)
                        w->nb->named(w->nb->data, p);
        }
}

/*
 * sudo suspends itself when its command is stopped (job control), and stopped it never reaps
 * the command once that is killed, nor ends: a stopped parent of a process just killed, one
 * with root among its uids (sudo, su, runuser: never one release ends), gets SIGCONT.
 */
static void continue_root_parent(int procfd, pid_t ppid, gid_t gid)
{
        struct slots_proc pp = { 0 };
        int pidfd = ppid > 1 ? (int) syscall(SYS_pidfd_open, ppid, 0) : -1;
        char name[16];

        if (pidfd < 0)
                return;
        snprintf(name, sizeof(name), "%d", (int) ppid);
        if (read_status(procfd, name, gid, &pp) == 0 && pp.state == 'T' &&
            (pp.uid[0] == 0 || pp.uid[1] == 0 || pp.uid[2] == 0))
                (void) pidfd_signal(pidfd, SIGCONT);
        close(pidfd);
}

/*
 * One pass over /proc: every live process carrying the identity is counted,
 * and with STOP or KILL the signallable ones get that signal.  A candidate is
 * opened as a pidfd and looked at again and confirmed alive through the pidfd
 * before it is signalled: a pid reused by another account's process is never
 * signalled.
 */
static int pass(const struct who *w, enum action act, struct tally *t, struct slots_procs_report *rep)
{
        struct ns_seen seen;
        struct dirent *de;
        DIR *d;
        int procfd, r;

        memset(t, 0, sizeof(*t));
        procfd = open("/proc", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (procfd < 0)
                return -errno;
        r = ns_start(procfd, &seen);
        d = r == 0 ? fdopendir(procfd) : NULL;
        if (!d) {
                r = r < 0 ? r : -errno;
                close(procfd);
                return r;
        }
        if (rep)
                rep->survivors = 0;
        while ((errno = 0, de = readdir(d))) {
                struct slots_proc p = { 0 };
                int pidfd;

                if (!isdigit((unsigned char) de->d_name[0]))
                        continue;
                if (look(procfd, de->d_name, w->uid, w->gid, &seen, &p) < 0 || slots_proc_dead(&p) ||
                    (!wanted(w, &p) && !other_account(w->nb, &p)))
                        continue;
                p.pid = (pid_t) atol(de->d_name);
                pidfd = (int) syscall(SYS_pidfd_open, p.pid, 0);
                if (pidfd < 0)
                        continue;       /* gone already */
                /*
                 * Look again through the same pid now that the pidfd pins the process (what a
                 * neighbour holds is looked at only now), then check it lives.
                 */
                if (look(procfd, de->d_name, w->uid, w->gid, &seen, &p) == 0 && !slots_proc_dead(&p) &&
                    (wanted(w, &p) || (p.neighbour = w->nb && neighbour(w->nb, procfd, de->d_name, &p))) &&
                    pidfd_signal(pidfd, 0) == 0) {
                        unsigned long sent = t->sent;

                        count_and_signal(w, &p, pidfd, act, t, rep);
                        if (act == KILL && t->sent > sent)
                                continue_root_parent(procfd, p.ppid, w->gid);
                }
                close(pidfd);
        }
        r = errno ? -errno : 0;
        closedir(d);
        return r;
}

static int end_processes(const struct who *w, int timeout_ms, struct slots_procs_report *rep,
                         struct slots_error *e)
{
        long start = slots_now_ms(), deadline = start + (timeout_ms > 0 ? timeout_ms : 1);
        struct tally t;
        long killed_at;
        int r, pause = 0;

        memset(rep, 0, sizeof(*rep));
        if (w->uid == 0 || w->gid == 0)
                return slots_error_refuse(e, -EINVAL, w->uid == 0 ? "uid 0" : "gid 0",
                                          "refusing to end the processes of root");
        for (;;) {
                /* Freeze: SIGSTOP in rounds until none of them can run code (or the time is up). */
                for (;;) {
                        rep->rounds++;
                        r = pass(w, STOP, &t, rep);
                        if (r < 0)
                                goto fail;
                        rep->stopped += t.sent;
                        if (t.live == 0)
                                goto done;
                        if (t.running == 0 && t.sent == 0)
                                break;
                        if (slots_now_ms() >= deadline)
                                break;
                        /* Let the SIGSTOPs land; no pause while the rounds still find work quickly. */
                        if (pause)
                                (void) poll(NULL, 0, pause);
                        pause = pause < 8 ? pause + 1 : pause;
                }
                /* Kill: every one of them, stopped or not; then wait for them to go. */
                rep->rounds++;
                r = pass(w, KILL, &t, NULL);
                if (r < 0)
                        goto fail;
                rep->killed += t.sent;
                killed_at = slots_now_ms();
                for (pause = 1;; pause = pause < 20 ? pause * 2 : pause) {
                        rep->rounds++;
                        r = pass(w, SCAN, &t, rep);
                        if (r < 0)
                                goto fail;
                        if (t.live == 0)
                                goto done;
                        /* Some run (forked before their parent stopped): freeze again. */
                        if (t.running > 0 || slots_now_ms() >= deadline)
                                break;
                        /* Killed ones take a moment to exit; ones still there later get it again. */
                        if (t.live > t.foreign && slots_now_ms() - killed_at > 200)
                                break;
                        /* Only ones the account cannot signal are left: they are not ours to end. */
                        if (t.live == t.foreign && slots_now_ms() - killed_at > 500)
                                goto busy;
                        (void) poll(NULL, 0, pause);
                }
                if (slots_now_ms() >= deadline)
                        break;
                pause = 0;
        }
busy:
        rep->elapsed_ms = slots_now_ms() - start;
        r = slots_error_set(e, -EBUSY, "processes", "%u process%s of uid %u or gid %u still run%s after %ld ms of "
                            "SIGSTOP and SIGKILL as root: process %d (%s)", rep->survivors,
                            rep->survivors == 1 ? "" : "es", (unsigned) w->uid, (unsigned) w->gid, rep->survivors == 1 ? "s" : "", rep->elapsed_ms,
                            (int) rep->shown[0].pid, rep->shown[0].comm);
        return r;
fail:
        rep->elapsed_ms = slots_now_ms() - start;
        return slots_error_set(e, r, "/proc", "cannot list or signal processes: %s", strerror(-r));
done:
        rep->elapsed_ms = slots_now_ms() - start;
        rep->survivors = 0;
        return 0;
}

bool slots_nice_raise(int *before)
{
        errno = 0;
        *before = getpriority(PRIO_PROCESS, 0);
        return errno == 0 && setpriority(PRIO_PROCESS, 0, -20) == 0;
}

int slots_end_processes(uid_t uid, gid_t gid, int timeout_ms, struct slots_procs_report *rep, struct slots_error *e)
{
        return slots_end_processes_held(uid, gid, NULL, timeout_ms, rep, e);
}

int slots_end_processes_held(uid_t uid, gid_t gid, const struct slots_neighbours *nb, int timeout_ms,
                             struct slots_procs_report *rep, struct slots_error *e)
{
        const struct who w = { uid, gid, SLOTS_FIND_ANY, nb && nb->held && nb->held->n ? nb : NULL };
        bool raised;
        int before, r;

        /* Ahead of a fork bomb on every CPU: the rounds must outrun the forks.  Restored after. */
        raised = uid != 0 && slots_nice_raise(&before);
        if (w.nb)
                qsort(w.nb->held->v, w.nb->held->n, sizeof(*w.nb->held->v), inode_cmp);
        r = end_processes(&w, timeout_ms, rep, e);
        if (raised)
                (void) setpriority(PRIO_PROCESS, 0, before);
        return r;
}

int slots_find_processes(uid_t uid, gid_t gid, enum slots_find which, struct slots_procs_report *rep,
                         struct slots_error *e)
{
        struct slots_proc_table *t;
        int r = slots_procs_snapshot(&t, e);

        memset(rep, 0, sizeof(*rep));
        if (r < 0)
                return r;
        slots_procs_table_find(t, uid, gid, which, rep);
        slots_procs_table_free(t);
        return 0;
}

/* ---- every process at once, for check: one pass over /proc, matched against many identities ---- */

struct proc_entry {
        struct slots_proc p;            /* in_group and userns are set per identity */
        gid_t *groups;
        size_t n_groups;
        uid_t owners[NS_DEPTH];         /* of its user namespace and those above it, below this process's */
        unsigned n_owners;
};

struct slots_proc_table {
        struct proc_entry *v;
        size_t n;
};

/* The numbers of the Groups line of a status text, malloc'ed (NULL and 0 without one). */
static int groups_of(const char *text, gid_t **out, size_t *n)
{
        const char *l = strstr(text, "\nGroups:"), *q;
        size_t max = 0;

        *out = NULL;
        *n = 0;
        if (!l)
                return 0;
        l += 8;
        for (q = l; *q && *q != '\n'; q++)
                max += *q == ' ' || *q == '\t';
        *out = calloc(max + 1, sizeof(**out));
        if (!*out)
                return -ENOMEM;
        for (;;) {
                char *end;
                unsigned long v;

                while (*l == ' ' || *l == '\t')
                        l++;
                if (*l < '0' || *l > '9' || *n > max)
                        return 0;
                v = strtoul(l, &end, 10);
                (*out)[(*n)++] = (gid_t) v;
                l = end;
        }
}

/* Appends the process pid to t; a process gone, dead or unreadable is left out. */
static int snapshot_one(int procfd, const char *pid, const struct ns_seen *seen, struct slots_proc_table *t)
{
        char buf[4096], *text, path[64];
        struct proc_entry en = { 0 };
        struct stat st;
        int fd, r;

        if (status_text(procfd, pid, buf, sizeof(buf), &text) < 0)
                return 0;
        r = slots_proc_parse(text, (gid_t) -1, &en.p);
        if (r == 0 && !slots_proc_dead(&en.p))
                r = groups_of(text, &en.groups, &en.n_groups);
        else
                r = 1;
        if (text != buf)
                free(text);
        if (r != 0)
                return r < 0 ? r : 0;
        en.p.pid = (pid_t) atol(pid);
        snprintf(path, sizeof(path), "%s/ns/user", pid);
        if (fstatat(procfd, path, &st, 0) == 0 && (st.st_dev != seen->self_dev || st.st_ino != seen->self_ino) &&
            (fd = openat(procfd, path, O_RDONLY | O_CLOEXEC)) >= 0)
                en.n_owners = ns_owners(fd, seen, en.owners);
        if (t->n % 64 == 0) {
                struct proc_entry *v = realloc(t->v, (t->n + 64) * sizeof(*v));

                if (!v) {
                        free(en.groups);
                        return -ENOMEM;
                }
                t->v = v;
        }
        t->v[t->n++] = en;
        return 0;
}

int slots_procs_snapshot(struct slots_proc_table **out, struct slots_error *e)
{
        struct slots_proc_table *t = calloc(1, sizeof(*t));
        struct ns_seen seen;
        struct dirent *de;
        DIR *d = NULL;
        int procfd, r;

        *out = NULL;
        procfd = open("/proc", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        r = !t ? -ENOMEM : procfd < 0 ? -errno : ns_start(procfd, &seen);
        if (r == 0 && !(d = fdopendir(procfd)))
                r = -errno;
        if (r < 0) {
                slots_close(procfd);
                slots_procs_table_free(t);
                return slots_error_set(e, r, "/proc", "cannot list processes: %s", strerror(-r));
        }
        while (r == 0 && (errno = 0, de = readdir(d)))
                if (isdigit((unsigned char) de->d_name[0]))
                        r = snapshot_one(procfd, de->d_name, &seen, t);
        if (r == 0 && errno)
                r = -errno;
        closedir(d);
        if (r < 0) {
                slots_procs_table_free(t);
                return slots_error_set(e, r, "/proc", "cannot list processes: %s", strerror(-r));
        }
        *out = t;
        return 0;
}

void slots_procs_table_find(const struct slots_proc_table *t, uid_t uid, gid_t gid, enum slots_find which,
                            struct slots_procs_report *rep)
{
        const struct who w = { uid, gid, which, NULL };

        memset(rep, 0, sizeof(*rep));
        rep->rounds = 1;
        for (size_t i = 0; i < t->n; i++) {
                struct slots_proc p = t->v[i].p;

                p.in_group = p.userns = false;
                for (size_t g = 0; g < t->v[i].n_groups && !p.in_group; g++)
                        p.in_group = t->v[i].groups[g] == gid;
                for (unsigned o = 0; o < t->v[i].n_owners && !p.userns; o++)
                        p.userns = t->v[i].owners[o] == uid;
                if (!wanted(&w, &p))
                        continue;
                if (rep->survivors < SLOTS_PROCS_SHOWN)
                        rep->shown[rep->survivors] = p;
                rep->survivors++;
        }
}

void slots_procs_table_free(struct slots_proc_table *t)
{
        if (!t)
                return;
        for (size_t i = 0; i < t->n; i++)
                free(t->v[i].groups);
        free(t->v);
        free(t);
}
