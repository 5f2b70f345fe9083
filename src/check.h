/* slots-admin check: the self-check's rows printed as the table of slots-admin(8), or as JSON. */
#pragma once

#include <stdbool.h>

/*
 * Runs the self-check with the config at path (NULL: the default) and prints it; returns the exit
 * status.  timeout_s > 0: the limit of each timed stage of its runs (--timeout), else their defaults.
 */
int cmd_check(const char *config, bool json, int timeout_s);
