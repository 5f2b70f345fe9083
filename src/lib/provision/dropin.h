#pragma once

#include <stddef.h>

#include "config.h"
#include "error.h"

/* The slotctl config the provisioning writes (sorted keys, two-space indent, final newline); malloc'ed. */
char *slots_dropin_slotctl_json(const struct slots_config *c, size_t *len);

/*
 * The sudoers drop-in: the service may run <app_root>/releases/ * /bin/<launcher>
 * and /usr/bin/true as any slot of the pool, without a password, and nothing
 * else.  malloc'ed; NULL with an invalid-config error in e when app_root or launcher holds a
 * character a sudoers rule cannot carry literally.
 */
char *slots_dropin_sudoers(const struct slots_config *c, size_t *len, struct slots_error *e);

/* The folder sudo reads drop-ins from (through "@includedir" in /etc/sudoers). */
#define SLOTS_SUDOERS_DIR "/etc/sudoers.d"

/* The drop-in's file name under SLOTS_SUDOERS_DIR ("slots-<service>"). */
const char *slots_dropin_sudoers_name(const struct slots_config *c, char *buf, size_t size);

/* sudo's own checker, in the tree and on the host that runs slots-provision. */
#define SLOTS_VISUDO "/usr/sbin/visudo"

/*
 * Runs visudo -c on the drop-in open at fd (display names it in e); 0 when visudo
 * accepts it, else a refusal (-EBADMSG) with visudo's words, or a failure to run it.
 */
int slots_dropin_visudo(int fd, const char *display, struct slots_error *e);
