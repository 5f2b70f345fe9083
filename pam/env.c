/* pam_slots' environment: the names that carry a slot's own home into its session. */
#include <stdio.h>
#include <syslog.h>

#include <security/pam_ext.h>
#include <security/pam_modules.h>

#include "env.h"

/* HOME is not here: the drop-in's always_set_home and su already make it the slot's own. */
static const char *const home_names[] = { "CLAUDE_CONFIG_DIR" };

int slots_pam_env(struct pam_handle *pamh, const struct slots_config *c, const char *slot, bool debug)
{
        for (size_t i = 0; i < sizeof(home_names) / sizeof(home_names[0]); i++) {
                const char *name = home_names[i];
                char var[4096];
                int w;

                if (!slots_config_passes_env(c, name))
                        continue;
                if (pam_getenv(pamh, name)) {
                        if (debug)
                                pam_syslog(pamh, LOG_DEBUG, "%s: %s is set already; kept", slot, name);
                        continue;
                }
                w = snprintf(var, sizeof(var), "%s=%s/home/%s", name, c->slots_root, slot);
                if (w < 0 || (size_t) w >= sizeof(var) || pam_putenv(pamh, var) != PAM_SUCCESS) {
                        pam_syslog(pamh, LOG_ERR, "%s: cannot set %s to the slot's home in the session", slot,
                                   name);
                        return PAM_PERM_DENIED;
                }
                if (debug)
                        pam_syslog(pamh, LOG_DEBUG, "%s: %s set to the slot's home", slot, name);
        }
        return PAM_SUCCESS;
}
