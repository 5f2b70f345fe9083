/* The service account and the service group of a config: looked up one way, with one error and fix. */
#pragma once

#include <sys/types.h>

#include "config.h"
#include "error.h"
#include "nss.h"

/*
 * Where the service is looked up: NSS (a NULL source), or an image's account
 * files (slots-provision --root).  Each answers as slots_nss_user(),
 * slots_nss_group() and slots_nss_gid() do: 1 with *out filled (the fields
 * the lookup uses: pw's uid and gid, gr's name and gid), 0 when there is no
 * such entry, -errno when the lookup failed.
 */
struct slots_service_source {
        int (*user)(void *data, const char *name, struct slots_pw *out);
        int (*group)(void *data, const char *name, struct slots_gr *out);
        int (*gid)(void *data, gid_t gid, struct slots_gr *out);
        void *data;
};

enum {
        SLOTS_SERVICE_USER = 1 << 0,    /* the service account (looked up for the group too, without service_group) */
        SLOTS_SERVICE_GROUP = 1 << 1,   /* the service group */
};

/* The service of a config as the source answered: 1 found, 0 no such entry, -errno the lookup failed. */
struct slots_service {
        int user;               /* the service account, in pw */
        struct slots_pw pw;
        /*
         * The service group: service_group from the config, else the primary group of
         * the service account (0 or its -errno when that account is missing or its
         * lookup failed).
         */
        int group;
        gid_t gid;
        char *group_name;       /* when group is 1: its name, or the gid as a number when it has none */
        int named;              /* naming the primary group: 1, 0 (no name: the number), -errno (the number too) */
};

/*
 * Looks up what `what` asks for (SLOTS_SERVICE_*) through src (NULL: NSS) into
 * *s (free with slots_service_clear).  Returns 0, or -ENOMEM; what was found
 * or failed is in *s.
 */
int slots_service_lookup(const struct slots_config *c, const struct slots_service_source *src, unsigned what,
                         struct slots_service *s);
void slots_service_clear(struct slots_service *s);

/*
 * The service account (c->service) through NSS into *pw (free with
 * slots_pw_clear).  A missing account is -ENOENT with the fix; a failed
 * lookup its -errno.
 */
int slots_service_user(const struct slots_config *c, struct slots_pw *pw, struct slots_error *e);

/*
 * The service group: service_group from the config, else the primary group of
 * the service account, looked up through NSS.  *name is malloc'ed (the gid as
 * a number when the primary group has no name).  A missing account or group is
 * -ENOENT with the fix; a failed lookup its -errno.
 */
int slots_service_group(const struct slots_config *c, gid_t *gid, char **name, struct slots_error *e);
