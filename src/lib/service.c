/* The service account and the service group of a config: looked up one way, with one error and fix. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "service.h"

int slots_service_user(const struct slots_config *c, struct slots_pw *pw, struct slots_error *e)
{
        int r = slots_nss_user(c->service, pw);

        if (r == 0) {
                slots_error_set(e, -ENOENT, c->service, "the service account does not exist");
                slots_error_fix(e, "create the service account, or fix \"service\" in %s", c->path);
                return -ENOENT;
        }
        if (r < 0)
                return slots_error_set(e, r, c->service, "account lookup failed: %s", strerror(-r));
        return 0;
}

int slots_service_group(const struct slots_config *c, gid_t *gid, char **name, struct slots_error *e)
{
        struct slots_pw pw = { 0 };
        struct slots_gr gr = { 0 };
        int r;

        if (c->service_group) {
                r = slots_nss_group(c->service_group, &gr);
                if (r == 0) {
                        slots_error_set(e, -ENOENT, c->service_group, "the service group does not exist");
                        slots_error_fix(e, "create it, or fix \"service_group\" in %s", c->path);
                        return -ENOENT;
                }
                if (r < 0)
                        return slots_error_set(e, r, c->service_group, "group lookup failed: %s",
                                               strerror(-r));
                *gid = gr.gid;
                *name = gr.name;
                gr.name = NULL;
                slots_gr_clear(&gr);
                return 0;
        }
        r = slots_service_user(c, &pw, e);
        if (r < 0)
                return r;
        *gid = pw.gid;
        slots_pw_clear(&pw);
        r = slots_nss_gid(*gid, &gr);
        if (r < 0)
                return slots_error_set(e, r, c->service, "group lookup failed: %s", strerror(-r));
        if (r == 0) {
                if (asprintf(name, "%u", (unsigned) *gid) < 0)
                        return slots_error_set(e, -ENOMEM, c->service, "out of memory");
                return 0;
        }
        *name = gr.name;
        gr.name = NULL;
        slots_gr_clear(&gr);
        return 0;
}
