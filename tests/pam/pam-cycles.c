/*
 * Many PAM sessions in one process, for valgrind: pam_start_confdir (no
 * pam_wrapper, whose deep binding valgrind dislikes), open, close, end, over a
 * mix of slot, non-slot, require_assigned and broken-config sessions, each
 * checked against the result it must give (the require_assigned ones only as root, who
 * alone can make a table the module believes).  Usage: pam-cycles CONFDIR N
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <security/pam_appl.h>

static int conv(int n, const struct pam_message **msg, struct pam_response **resp, void *data)
{
        (void) n;
        (void) msg;
        (void) resp;
        (void) data;
        return PAM_CONV_ERR;    /* the module never talks */
}

int main(int argc, char **argv)
{
        /*
         * Stacks as in tests/pam/valgrind.sh: PAM_IGNORE shows as PAM_NO_MODULE_DATA.
         * The close follows the open's frozen chain; after a failed open its
         * result is not checked (-1), but it still runs.
         */
        static const struct {
                const char *service, *user;
                int open_rc, close_rc;
        } kinds[] = {
                { "cycle", "slot01", PAM_SUCCESS, PAM_SUCCESS },
                { "cycle", "alice", PAM_NO_MODULE_DATA, PAM_NO_MODULE_DATA },
                { "cycle_req", "slot02", PAM_SUCCESS, PAM_SUCCESS },
                { "cycle_req", "slot01", PAM_PERM_DENIED, -1 },
                { "cycle_bad", "slot01", PAM_PERM_DENIED, -1 },
        };
        const struct pam_conv c = { conv, NULL };
        /* require_assigned believes only a table root owns: a run that is not root cannot make one. */
        bool with_req = geteuid() == 0;
        long n, done = 0;

        if (argc != 3 || (n = strtol(argv[2], NULL, 10)) <= 0) {
                fprintf(stderr, "usage: pam-cycles CONFDIR N\n");
                return 99;
        }
        if (!with_req)
                printf("skip: the require_assigned sessions: pam_slots believes only a table root owns, and "
                       "this run's is uid %u's (needs root)\n", (unsigned) geteuid());
        for (long i = 0; i < n; i++) {
                /* Error paths every 50th cycle: enough to show a leak, few syslog lines. */
                size_t k = i % 50 == 49 ? 3 + (size_t) (i / 50) % 2 : (size_t) i % 3;
                pam_handle_t *h = NULL;
                int r, r2;

                if (!with_req && strcmp(kinds[k].service, "cycle_req") == 0)
                        continue;
                r = pam_start_confdir(kinds[k].service, kinds[k].user, &c, argv[1], &h);
                if (r != PAM_SUCCESS) {
                        fprintf(stderr, "cycle %ld: pam_start_confdir: %s\n", i, pam_strerror(h, r));
                        return 1;
                }
                r = pam_open_session(h, PAM_SILENT);
                r2 = pam_close_session(h, PAM_SILENT);
                if (r != kinds[k].open_rc || (kinds[k].close_rc >= 0 && r2 != kinds[k].close_rc)) {
                        fprintf(stderr, "cycle %ld (%s, %s): open %s, close %s; want %s, %s\n", i,
                                kinds[k].service, kinds[k].user, pam_strerror(h, r), pam_strerror(h, r2),
                                pam_strerror(h, kinds[k].open_rc),
                                kinds[k].close_rc >= 0 ? pam_strerror(h, kinds[k].close_rc) : "any");
                        pam_end(h, r);
                        return 1;
                }
                r = pam_end(h, PAM_SUCCESS);
                if (r != PAM_SUCCESS) {
                        fprintf(stderr, "cycle %ld: pam_end: %d\n", i, r);
                        return 1;
                }
                done++;
        }
        printf("%ld sessions opened and closed\n", done);
        return 0;
}
