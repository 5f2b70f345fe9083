/*
 * Test helper: ends every process carrying UID or GID with slots_end_processes() and prints
 * what it took ("rounds R stopped S killed K ms M survivors N"), for the
 * measurements of release-hostile-procs.sh.  Exit 0 when none is left.
 */
#include <stdio.h>
#include <stdlib.h>

#include "procs.h"

int main(int argc, char **argv)
{
        struct slots_procs_report rep;
        struct slots_error e;
        int r;

        if (argc != 4) {
                fprintf(stderr, "usage: release-endprocs UID GID TIMEOUT_MS\n");
                return 2;
        }
        r = slots_end_processes((uid_t) strtoul(argv[1], NULL, 10), (gid_t) strtoul(argv[2], NULL, 10), atoi(argv[3]),
                                &rep, &e);
        printf("rounds %u stopped %lu killed %lu ms %ld survivors %u\n", rep.rounds, rep.stopped, rep.killed,
               rep.elapsed_ms, rep.survivors);
        if (r < 0)
                fprintf(stderr, "release-endprocs: %s: %s\n", e.object, e.reason);
        return r < 0;
}
