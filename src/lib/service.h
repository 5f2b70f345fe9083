/* The service account and the service group of a config: looked up one way, with one error and fix. */
#pragma once

#include <sys/types.h>

#include "config.h"
#include "error.h"
#include "nss.h"

/*
 * The service account (c->service) through NSS into *pw (free with
 * slots_pw_clear).  A missing account is -ENOENT with the fix; a failed
 * lookup its -errno.
 */
int slots_service_user(const struct slots_config *c, struct slots_pw *pw, struct slots_error *e);

/*
 * The service group: service_group from the config, else the primary group of
 * the service account, looked up through NSS.  *name is malloc'ed (the gid as
 * a number when the primary group has no name).
 */
int slots_service_group(const struct slots_config *c, gid_t *gid, char **name, struct slots_error *e);
