/* login.defs read the way shadow reads it: the system id range, and where useradd hands out subordinate ids. */
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

/*
 * Where useradd hands out subordinate uids and gids by rootfd's /etc/login.defs: from the lower
 * of SUB_UID_MIN and SUB_GID_MIN (100000 by default) up to, not including, the higher of
 * SUB_UID_MAX + SUB_UID_COUNT and SUB_GID_MAX + SUB_GID_COUNT (600100000 + 65536): [*lo, *end).
 * Returns 0, or -errno (-EBADMSG for a value that is no number) with e naming the file.
 */
int slots_logindefs_subids(int rootfd, unsigned long *lo, unsigned long *end, struct slots_error *e);
