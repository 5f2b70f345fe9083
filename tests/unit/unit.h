/* What every unit test shares: the size of a table of rows, and a failing row that lets the rest run. */
#pragma once

#define N_ELEM(a) (sizeof(a) / sizeof((a)[0]))

/* Reports one failed row and counts it in the caller's `failures`; the test fails after the loop. */
#define ROW_FAIL(...) do { print_error(__VA_ARGS__); print_error("\n"); failures++; } while (0)
