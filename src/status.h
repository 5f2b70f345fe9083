/* slots-admin status: the table's rows, its file's verdict and the test slot, as text or JSON. */
#pragma once

#include <stdbool.h>

/*
 * Shows the status with the config at path (NULL: the default); only, when
 * set, is a slot name or a user id (checked by the caller) and limits it to
 * that slot.  Returns the exit status.
 */
int cmd_status_show(const char *config, bool json, const char *only);
