/* The one clock of deadlines and waits: CLOCK_MONOTONIC in milliseconds. */
#pragma once

#include <time.h>

static inline long slots_now_ms(void)
{
        struct timespec ts;

        clock_gettime(CLOCK_MONOTONIC, &ts);
        return ts.tv_sec * 1000L + ts.tv_nsec / 1000000L;
}
