/*
 * Times commands side by side: every round runs each contender once, in turn,
 * so drift of the machine hits all of them alike.  Before each sample an
 * untimed reset command runs (sh -c) and the file system is synced, so every
 * sample starts from the same state with nothing dirty.  A sample is the wall
 * time from spawning the command to reaping it; its CPU time is the child's
 * user and system time (with the children it reaped), which a busy machine
 * changes far less than the wall time; its peak memory is the child's
 * ru_maxrss.  Standard output is discarded; standard error is shown
 * only when a contender fails, which stops the run.
 *
 * Usage: timeit [-n RUNS] [-w WARMUP] [-r RESET] [-s SYNCDIR] -- LABEL CMD [ARG...] [-- LABEL CMD ...]
 * Prints one line per contender: LABEL<TAB>samples<TAB>median_us<TAB>min_us<TAB>p90_us<TAB>maxrss_kb
 * <TAB>cpu_median_us
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

struct contender {
        const char *label;
        char **argv;
        double *us;
        double *cpu_us;
        long maxrss;
};

static double now_us(void)
{
        struct timespec ts;

        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (double) ts.tv_sec * 1e6 + (double) ts.tv_nsec / 1e3;
}

static int cmp_double(const void *a, const void *b)
{
        double x = *(const double *) a, y = *(const double *) b;

        return x < y ? -1 : x > y;
}

/* Median of the sorted array: the middle, or the mean of the two middles. */
static double median(const double *v, int n)
{
        return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* A contender's stderr goes to a file, shown only when it fails (sysusers talks a lot). */
static void show_errors(int errfd)
{
        char buf[4096];
        ssize_t n;

        if (lseek(errfd, 0, SEEK_SET) < 0)
                return;
        while ((n = read(errfd, buf, sizeof(buf))) > 0)
                if (write(2, buf, (size_t) n) < 0)
                        return;
}

static double tv_us(const struct timeval *tv)
{
        return (double) tv->tv_sec * 1e6 + (double) tv->tv_usec;
}

static int run_one(struct contender *c, double *us, double *cpu_us, int errfd)
{
        posix_spawn_file_actions_t fa;
        struct rusage ru;
        double t0;
        pid_t pid;
        int status, r;

        if (ftruncate(errfd, 0) < 0 || lseek(errfd, 0, SEEK_SET) < 0)
                return -1;
        posix_spawn_file_actions_init(&fa);
        posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
        posix_spawn_file_actions_adddup2(&fa, errfd, 2);
        t0 = now_us();
        r = posix_spawnp(&pid, c->argv[0], &fa, NULL, c->argv, environ);
        posix_spawn_file_actions_destroy(&fa);
        if (r != 0) {
                fprintf(stderr, "timeit: %s: cannot run %s: %s\n", c->label, c->argv[0], strerror(r));
                return -1;
        }
        while (wait4(pid, &status, 0, &ru) < 0)
                if (errno != EINTR) {
                        perror("timeit: wait4");
                        return -1;
                }
        *us = now_us() - t0;
        *cpu_us = tv_us(&ru.ru_utime) + tv_us(&ru.ru_stime);
        if (ru.ru_maxrss > c->maxrss)
                c->maxrss = ru.ru_maxrss;
        if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
                show_errors(errfd);
                fprintf(stderr, "timeit: %s: %s failed (status 0x%x)\n", c->label, c->argv[0], status);
                return -1;
        }
        return 0;
}

int main(int argc, char **argv)
{
        const char *reset = NULL, *syncdir = NULL;
        struct contender cs[16];
        int runs = 10, warmup = 1, nc = 0, opt, syncfd = -1, errfd;
        char errname[] = "/tmp/timeit-stderr.XXXXXX";

        while ((opt = getopt(argc, argv, "+n:w:r:s:")) != -1) {
                switch (opt) {
                case 'n':
                        runs = atoi(optarg);
                        break;
                case 'w':
                        warmup = atoi(optarg);
                        break;
                case 'r':
                        reset = optarg;
                        break;
                case 's':
                        syncdir = optarg;
                        break;
                default:
                        return 2;
                }
        }
        /* getopt consumed the first "--". */
        for (int i = optind; i < argc;) {
                if (nc == 16 || i + 1 >= argc) {
                        fprintf(stderr, "usage: timeit [-n RUNS] [-w WARMUP] [-r RESET] [-s SYNCDIR] -- "
                                        "LABEL CMD [ARG...] [-- LABEL CMD ...]\n");
                        return 2;
                }
                cs[nc].label = argv[i++];
                cs[nc].argv = &argv[i];
                while (i < argc && strcmp(argv[i], "--") != 0)
                        i++;
                if (i < argc)
                        argv[i++] = NULL;
                cs[nc].us = calloc((size_t) runs, sizeof(double));
                cs[nc].cpu_us = calloc((size_t) runs, sizeof(double));
                cs[nc].maxrss = 0;
                if (!cs[nc].us || !cs[nc].cpu_us || runs < 1)
                        return 2;
                nc++;
        }
        if (nc == 0 || runs < 1)
                return 2;
        if (syncdir) {
                syncfd = open(syncdir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
                if (syncfd < 0) {
                        perror(syncdir);
                        return 2;
                }
        }
        errfd = mkstemp(errname);
        if (errfd < 0) {
                perror("timeit: mkstemp");
                return 2;
        }
        (void) unlink(errname);
        for (int round = 0; round < warmup + runs; round++) {
                for (int k = 0; k < nc; k++) {
                        double us, cpu_us;

                        if (reset && system(reset) != 0) {
                                fprintf(stderr, "timeit: reset failed: %s\n", reset);
                                return 1;
                        }
                        if (syncfd >= 0)
                                (void) syncfs(syncfd);
                        if (run_one(&cs[k], &us, &cpu_us, errfd) < 0)
                                return 1;
                        if (round >= warmup) {
                                cs[k].us[round - warmup] = us;
                                cs[k].cpu_us[round - warmup] = cpu_us;
                        }
                }
        }
        for (int k = 0; k < nc; k++) {
                qsort(cs[k].us, (size_t) runs, sizeof(double), cmp_double);
                qsort(cs[k].cpu_us, (size_t) runs, sizeof(double), cmp_double);
                printf("%s\t%d\t%.0f\t%.0f\t%.0f\t%ld\t%.0f\n", cs[k].label, runs, median(cs[k].us, runs),
                       cs[k].us[0], cs[k].us[(runs * 9) / 10 < runs ? (runs * 9) / 10 : runs - 1],
                       cs[k].maxrss, median(cs[k].cpu_us, runs));
                free(cs[k].us);
                free(cs[k].cpu_us);
        }
        return 0;
}
