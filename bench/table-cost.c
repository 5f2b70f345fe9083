/*
 * Where the CPU time of one assign goes, without process start or I/O: the
 * table text is parsed, the lowest free slot found, a user assigned, the text
 * dumped and the table freed, ITER times, in process, with libslots as built.
 * Prints the median microseconds of each phase (CPU time of this process).
 *
 * Usage: table-cost TABLE POOL [ITER]
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "error.h"
#include "fsutil.h"
#include "table.h"

enum { PARSE, FREE_SLOT, ASSIGN, DUMP, RELEASE, PHASES };
static const char *const phase_name[PHASES] = { "parse", "lowest_free", "assign", "dump", "free" };

static double cpu_us(void)
{
        struct timespec ts;

        clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
        return (double) ts.tv_sec * 1e6 + (double) ts.tv_nsec / 1e3;
}

static int cmp_double(const void *a, const void *b)
{
        double x = *(const double *) a, y = *(const double *) b;

        return x < y ? -1 : x > y;
}

int main(int argc, char **argv)
{
        struct slots_error e;
        char *text = NULL;
        size_t len = 0;
        unsigned pool;
        int iter, fd;
        double *us[PHASES];

        if (argc < 3 || argc > 4) {
                fprintf(stderr, "usage: table-cost TABLE POOL [ITER]\n");
                return 2;
        }
        pool = (unsigned) strtoul(argv[2], NULL, 10);
        iter = argc == 4 ? atoi(argv[3]) : 200;
        fd = open(argv[1], O_RDONLY | O_CLOEXEC);
        if (fd < 0 || slots_read_all(fd, (size_t) 1 << 30, &text, &len) < 0) {
                perror(argv[1]);
                return 1;
        }
        close(fd);
        for (int p = 0; p < PHASES; p++)
                if (!(us[p] = calloc((size_t) iter, sizeof(double))))
                        return 1;
        for (int i = 0; i < iter; i++) {
                struct slots_table *t;
                size_t outlen;
                unsigned n;
                char *out;
                double t0 = cpu_us(), t1;

                if (slots_table_parse(text, len, argv[1], pool, &t, &e) < 0) {
                        fprintf(stderr, "table-cost: %s: %s\n", argv[1], e.reason);
                        return 1;
                }
                t1 = cpu_us();
                us[PARSE][i] = t1 - t0;
                n = slots_table_lowest_free(t, pool);
                t0 = cpu_us();
                us[FREE_SLOT][i] = t0 - t1;
                if (n == 0 || slots_table_assign(t, n, "bench-new", "2026-10-01T09:12:00Z") < 0)
                        return 1;
                t1 = cpu_us();
                us[ASSIGN][i] = t1 - t0;
                out = slots_table_dump(t, &outlen);
                if (!out)
                        return 1;
                t0 = cpu_us();
                us[DUMP][i] = t0 - t1;
                free(out);
                slots_table_free(t);
                us[RELEASE][i] = cpu_us() - t0;
        }
        printf("%zu bytes, pool %u, %d iterations; median CPU microseconds:", len, pool, iter);
        for (int p = 0; p < PHASES; p++) {
                qsort(us[p], (size_t) iter, sizeof(double), cmp_double);
                printf(" %s %.1f", phase_name[p], us[p][iter / 2]);
                free(us[p]);
        }
        printf("\n");
        free(text);
        return 0;
}
