/*
 * Concurrent admins: PROCS workers, each running OPS operations alternating
 * "CMD... assign bench-<worker>-<k>" and "CMD... release bench-<worker>-<k>",
 * all at once.  Prints the total operations, the wall time from the first
 * start to the last end, and operations per second.  Any failed operation
 * fails the run (concurrency must lose nothing).
 *
 * Usage: concurrent PROCS OPS CMD [ARG...]
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

static double now_s(void)
{
        struct timespec ts;

        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (double) ts.tv_sec + (double) ts.tv_nsec / 1e9;
}

static int run(char **argv)
{
        posix_spawn_file_actions_t fa;
        pid_t pid;
        int status, r;

        posix_spawn_file_actions_init(&fa);
        posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
        r = posix_spawn(&pid, argv[0], &fa, NULL, argv, environ);
        posix_spawn_file_actions_destroy(&fa);
        if (r != 0)
                return -1;
        while (waitpid(pid, &status, 0) < 0)
                if (errno != EINTR)
                        return -1;
        return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : -1;
}

static int worker(int id, int ops, int argc, char **cmd)
{
        char **argv = calloc((size_t) argc + 3, sizeof(char *));
        char user[64];

        if (!argv)
                return 1;
        memcpy(argv, cmd, (size_t) argc * sizeof(char *));
        argv[argc + 1] = user;
        for (int k = 0; k < ops; k++) {
                snprintf(user, sizeof(user), "bench-%d-%d", id, k / 2);
                argv[argc] = k % 2 ? "release" : "assign";
                if (run(argv) < 0) {
                        fprintf(stderr, "concurrent: worker %d: %s %s failed\n", id, argv[argc], user);
                        return 1;
                }
        }
        free(argv);
        return 0;
}

int main(int argc, char **argv)
{
        int procs, ops, failed = 0;
        double t0, t1;

        if (argc < 4 || (procs = atoi(argv[1])) < 1 || (ops = atoi(argv[2])) < 1) {
                fprintf(stderr, "usage: concurrent PROCS OPS CMD [ARG...]\n");
                return 2;
        }
        ops += ops % 2;         /* every assign is released again */
        t0 = now_s();
        for (int i = 0; i < procs; i++) {
                pid_t pid = fork();

                if (pid < 0) {
                        perror("concurrent: fork");
                        return 1;
                }
                if (pid == 0)
                        _exit(worker(i, ops, argc - 3, argv + 3));
        }
        for (int i = 0; i < procs; i++) {
                int status;

                if (wait(&status) < 0 || !WIFEXITED(status) || WEXITSTATUS(status) != 0)
                        failed = 1;
        }
        t1 = now_s();
        if (failed)
                return 1;
        printf("%d\t%.3f\t%.1f\n", procs * ops, t1 - t0, procs * ops / (t1 - t0));
        return 0;
}
