/*
 * PAM session cost: CYCLES times pam_start_confdir, pam_open_session,
 * pam_close_session, pam_end, for each SERVICE:USER given, interleaved over
 * REPS repetitions so drift hits all stacks alike.  Every open and close must
 * return PAM_SUCCESS.  Prints per stack: label, repetitions, median and
 * minimum microseconds per cycle.
 *
 * REPS 0: CYCLES sessions of the one stack, no warm-up, nothing printed, exit 0
 * when all succeeded; timed from outside (timeit runs "pam-bench CONFDIR 1 0
 * SERVICE:USER" per sample), a session in a fresh process is what sudo pays.
 *
 * Usage: pam-bench CONFDIR CYCLES REPS SERVICE:USER [SERVICE:USER...]
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <security/pam_appl.h>

static int conv(int n, const struct pam_message **msg, struct pam_response **resp, void *data)
{
        (void) n;
        (void) msg;
        (void) resp;
        (void) data;
        return PAM_CONV_ERR;
}

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

static int cycles(const char *confdir, const char *service, const char *user, long n)
{
        const struct pam_conv c = { conv, NULL };

        for (long i = 0; i < n; i++) {
                pam_handle_t *h = NULL;
                int r = pam_start_confdir(service, user, &c, confdir, &h);

                if (r != PAM_SUCCESS) {
                        fprintf(stderr, "pam-bench: %s: pam_start_confdir: %s\n", service, pam_strerror(h, r));
                        return -1;
                }
                r = pam_open_session(h, PAM_SILENT);
                if (r != PAM_SUCCESS) {
                        fprintf(stderr, "pam-bench: %s (%s): open: %s\n", service, user, pam_strerror(h, r));
                        pam_end(h, r);
                        return -1;
                }
                r = pam_close_session(h, PAM_SILENT);
                if (r != PAM_SUCCESS) {
                        fprintf(stderr, "pam-bench: %s (%s): close: %s\n", service, user, pam_strerror(h, r));
                        pam_end(h, r);
                        return -1;
                }
                pam_end(h, PAM_SUCCESS);
        }
        return 0;
}

int main(int argc, char **argv)
{
        enum { MAXS = 8 };
        double *us[MAXS];
        char *service[MAXS], *user[MAXS];
        long n, reps;
        int ns = argc - 4;

        if (argc < 5 || ns > MAXS || (n = strtol(argv[2], NULL, 10)) <= 0 ||
            (reps = strtol(argv[3], NULL, 10)) < 0 || (reps == 0 && ns != 1)) {
                fprintf(stderr, "usage: pam-bench CONFDIR CYCLES REPS SERVICE:USER [SERVICE:USER...]\n");
                return 2;
        }
        for (int s = 0; s < ns; s++) {
                service[s] = argv[4 + s];
                user[s] = strchr(service[s], ':');
                if (!user[s])
                        return 2;
                *user[s]++ = '\0';
                if (reps == 0)
                        return cycles(argv[1], service[s], user[s], n) < 0;
                us[s] = calloc((size_t) reps, sizeof(double));
                if (!us[s])
                        return 1;
                /* Warm-up: modules loaded once, caches filled. */
                if (cycles(argv[1], service[s], user[s], n / 10 + 1) < 0)
                        return 1;
        }
        for (long r = 0; r < reps; r++)
                for (int s = 0; s < ns; s++) {
                        double t0 = now_us();

                        if (cycles(argv[1], service[s], user[s], n) < 0)
                                return 1;
                        us[s][r] = (now_us() - t0) / (double) n;
                }
        for (int s = 0; s < ns; s++) {
                qsort(us[s], (size_t) reps, sizeof(double), cmp_double);
                printf("%s\t%ld\t%.2f\t%.2f\n", service[s], reps,
                       reps % 2 ? us[s][reps / 2] : (us[s][reps / 2 - 1] + us[s][reps / 2]) / 2, us[s][0]);
                free(us[s]);
        }
        return 0;
}
