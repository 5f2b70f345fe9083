/* The system account id range of login.defs (SYS_UID_MIN/SYS_UID_MAX), read the way shadow reads it. */
#pragma once

#include <sys/types.h>

#include "error.h"

/* What shadow-utils falls back to when login.defs says nothing (Debian's documented values). */
#define SLOTS_SYS_UID_MIN_DEFAULT 100
#define SLOTS_SYS_UID_MAX_DEFAULT 999

/*
 * Parses login.defs text as shadow does (the last definition of a key wins, a key
 * without a value is skipped): SYS_UID_MIN, else 100; SYS_UID_MAX, else UID_MIN - 1
 * when UID_MIN is set, else 999 (shadow's getdef order).  Numbers are read as
 * shadow reads them (decimal, 0x hex or 0 octal).  A value that is not a number,
 * or a range that is empty or starts at 0, is -EBADMSG naming file and line.
 */
int slots_logindefs_parse(const char *text, size_t len, const char *file, uid_t *min, uid_t *max,
                          struct slots_error *e);

/*
 * Reads /etc/login.defs inside rootfd (a missing file gives the defaults) and
 * parses it.  Returns 0, -EBADMSG or another -errno (the error names the file).
 */
int slots_logindefs_uid_range(int rootfd, uid_t *min, uid_t *max, struct slots_error *e);
