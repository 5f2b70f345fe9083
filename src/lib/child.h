/*
 * A forked child of the library: started, waited for (through a pidfd, never by a sleep) until
 * its deadline, ended; and a helper program run with its output read.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

struct slots_child {
        pid_t pid;
        int pidfd;              /* pidfd_open(pid): readable once it ended; -1 when the kernel has none */
        long deadline;          /* CLOCK_MONOTONIC, in ms; 0: none */
        bool group;             /* it leads its own process group, which is killed with it */
};

enum {
        SLOTS_CHILD_GROUP = 1 << 0,     /* its own process group: what it starts goes with it at the deadline */
};

/*
 * fork(): 0 in the child, 1 in the parent with c filled, -errno when fork
 * fails.  timeout_ms > 0 sets the deadline that far from now (<= 0: none).
 */
int slots_child_start(struct slots_child *c, int timeout_ms, unsigned flags);

/* Sets c's deadline timeout_ms from now (<= 0: none): a child whose work has stages, each with its own limit. */
void slots_child_deadline(struct slots_child *c, int timeout_ms);

/*
 * Looks once, without waiting: 0 while c runs and its deadline has not passed;
 * 1 when it is over, with *status its exit status (0..255), -ECHILD when a
 * signal ended it, or -ETIMEDOUT when it was still running at its deadline
 * (killed and reaped here); -errno when waitpid fails.
 */
int slots_child_poll(struct slots_child *c, int *status);

/* Waits for c until it ends or its deadline passes: the result slots_child_poll gives in *status, or -errno. */
int slots_child_wait(struct slots_child *c);

/*
 * Sleeps until one of the n children (c[0], then every stride bytes: an array of structs
 * that hold one) ends or the nearest deadline passes, or timeout_ms (< 0: none) does: for a
 * caller that then looks at each with slots_child_poll.  Through their pidfds, never a sleep
 * loop (on a kernel without pidfd_open, 2 ms at most).
 */
void slots_child_block(const struct slots_child *c, size_t n, size_t stride, int timeout_ms);

/*
 * pidfd_open(pid, 0): an fd that is readable once pid ended, for any process (not only a
 * child), or -errno.  Close-on-exec, as every pidfd.
 */
int slots_pidfd_open(pid_t pid);

/* pidfd_send_signal(pidfd, sig): 0 or -errno; never reaches a process that took the pid over. */
int slots_pidfd_signal(int pidfd, int sig);

/* The ms left before c's deadline, 0 once it passed, -1 without one: a timeout for poll(2). */
int slots_child_left_ms(const struct slots_child *c);

/* Ends c now: SIGKILL (to its group too) and reaps it. */
void slots_child_kill(struct slots_child *c);

/*
 * Runs fn(arg) in a forked child and waits for it as slots_child_wait does:
 * fn's result is the child's exit status, clamped to 0..125 (a negative one
 * is 125).
 */
int slots_child_run(int (*fn)(void *arg), void *arg, int timeout_ms, unsigned flags);

/*
 * A program run with its stdout and stderr read: the head of each kept (at most size-1 bytes,
 * NUL-terminated; head NULL: none kept), the rest read and dropped.  The one way the library
 * runs a program: one environment, PATH=/usr/sbin:/usr/bin:/sbin:/bin and LC_ALL=C (a caller's
 * extra names after them), nothing of the caller's fds but stdin, its deadline on its pidfd.
 */
struct slots_prog {
        struct slots_child c;
        char *head[2];          /* the caller's buffers for the head of stdout and of stderr */
        size_t size[2], len[2];
        int fd[2];              /* read ends, non-blocking; -1: closed */
        int rerr;               /* a read that failed: -errno (what it said is not known) */
        bool stop_ends;         /* SLOTS_PROG_STOP_ENDS */
};

enum {
        SLOTS_PROG_MERGE = 1 << 1,      /* stderr into stdout's pipe, head[0] */
        SLOTS_PROG_STOP_ENDS = 1 << 2,  /* a stop of it (as sudo's when its command stops) kills it: -ECANCELED */
};

/*
 * Starts argv[0] (an absolute path) with stdin from stdin_fd (-1: /dev/null), env's names (may
 * be NULL) after the one environment, timeout_ms (<= 0: none) and flags (SLOTS_CHILD_GROUP,
 * SLOTS_PROG_*); p's head and size are the caller's.  0, or -errno: -ENOEXEC when it cannot be
 * run (its exec failed; reaped here).
 */
int slots_prog_start(struct slots_prog *p, const char *const argv[], const char *const env[], int stdin_fd,
                     int timeout_ms, unsigned flags);

/* Reads what its pipes hold now into the heads, without waiting; closes each at its end. */
void slots_prog_read(struct slots_prog *p);

/*
 * Waits, reading its output, until it ends or its deadline passes (then kills it): the result
 * slots_child_poll gives in *status, -ECANCELED (killed) when it stopped with SLOTS_PROG_STOP_ENDS;
 * through its pidfd (and SIGCHLD through a signalfd for a stop), never on the deadline alone.
 */
int slots_prog_wait(struct slots_prog *p);

/* Closes the read ends (the child is the caller's to wait for or kill). */
void slots_prog_close(struct slots_prog *p);

/*
 * Runs argv[0] as slots_prog_start does, its stdout and stderr both into out (may be NULL),
 * until it ends or timeout_ms passes.  Returns its exit status (>= 0), or -errno (-ETIMEDOUT,
 * -ECHILD when it died from a signal, -ENOENT when it cannot be run or exits 127, the read's
 * when its output cannot be read).
 */
int slots_run_program(const char *const argv[], int stdin_fd, int timeout_ms, char *out, size_t outsize);

/*
 * _exit(status), after writing the coverage counters in a coverage build
 * (configure --enable-coverage): _exit skips the exit handler that writes them,
 * so without this nothing a child ran would be counted.  The one exit every
 * child of the library and commands takes.
 */
__attribute__((noreturn)) void slots_exit_child(int status);

/* slots_exit_child with fn's result clamped to 0..125, a negative one as 125. */
__attribute__((noreturn)) void slots_child_return(int r);
