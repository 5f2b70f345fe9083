/* Ending a forked child: _exit, with the coverage counters written first in a coverage build. */
#include <unistd.h>

#include "childexit.h"

#ifdef SLOTS_COVERAGE
/* libgcov (linked by --coverage): writes the counters of this process now. */
void __gcov_dump(void);
#endif

void slots_exit_child(int status)
{
#ifdef SLOTS_COVERAGE
        __gcov_dump();
#endif
        /* Never counted: the counters were written just before, and nothing runs after it. */
        _exit(status); /* GCOVR_EXCL_LINE */
}
