/* pam_slots' environment: the names that carry a slot's own home into its session. */
#pragma once

#include <stdbool.h>

#include "config.h"

struct pam_handle;

/*
 * pam_slots' call at session open: CLAUDE_CONFIG_DIR, when sudo_env passes it
 * and the session's PAM environment does not hold it yet, is set to the slot's
 * home (<slots_root>/home/<slot>).  sudo adds a PAM variable to the command's
 * environment unless it keeps the caller's own (env_keep), so a caller that
 * passes the name keeps its value.  PAM_SUCCESS, or PAM_PERM_DENIED with a
 * pam_syslog line naming the slot.
 */
int slots_pam_env(struct pam_handle *pamh, const struct slots_config *c, const char *slot, bool debug);
