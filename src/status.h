/* slots-admin status: the table's rows, its file's verdict and the test slot, as text or JSON. */
#pragma once

#include <stdbool.h>

/* What status prints: its rows as text or JSON, or only the held slots. */
enum cmd_status_format {
        CMD_STATUS_TEXT,
        CMD_STATUS_JSON,
        CMD_STATUS_HELD,        /* one line per slot assigned or pending, with the command that releases it */
};

/*
 * Shows the status with the config at path (NULL: the default); only, when
 * set, is a slot name or a user id (checked by the caller) and limits it to
 * that slot.  Returns the exit status.
 */
int cmd_status_show(const char *config, enum cmd_status_format format, const char *only);
