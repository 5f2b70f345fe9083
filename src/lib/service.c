/* The service account and the service group of a config: looked up one way, with one error and fix. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "service.h"

static int nss_user(void *data, const char *name, struct slots_pw *out)
{
        (void) data;
        return slots_nss_user(name, out);
}

static int nss_group(void *data, const char *name, struct slots_gr *out)
{
        (void) data;
        return slots_nss_group(name, out);
}

static int nss_gid(void *data, gid_t gid, struct slots_gr *out)
{
        (void) data;
        return slots_nss_gid(gid, out);
}

static const struct slots_service_source nss = { nss_user, nss_group, nss_gid, NULL };

/* Moves gr's name into s->group_name. */
static void take_name(struct slots_service *s, struct slots_gr *gr)
{
        s->group_name = gr->name;
        gr->name = NULL;
        slots_gr_clear(gr);
}

int slots_service_lookup(const struct slots_config *c, const struct slots_service_source *src, unsigned what,
                         struct slots_service *s)
{
        struct slots_gr gr = { 0 };

        memset(s, 0, sizeof(*s));
        if (!src)
                src = &nss;
        if ((what & SLOTS_SERVICE_USER) || ((what & SLOTS_SERVICE_GROUP) && !c->service_group))
                s->user = src->user(src->data, c->service, &s->pw);
        if (!(what & SLOTS_SERVICE_GROUP))
                return 0;
        if (c->service_group) {
                s->group = src->group(src->data, c->service_group, &gr);
                if (s->group > 0) {
                        s->gid = gr.gid;
                        take_name(s, &gr);
                }
                return 0;
        }
        s->group = s->user;
        if (s->user <= 0)
                return 0;
        s->gid = s->pw.gid;
        s->named = src->gid(src->data, s->gid, &gr);
        if (s->named > 0) {
                take_name(s, &gr);
                return 0;
        }
        if (asprintf(&s->group_name, "%u", (unsigned) s->gid) < 0) {
                s->group_name = NULL;
                return -ENOMEM;
        }
        return 0;
}

void slots_service_clear(struct slots_service *s)
{
        slots_pw_clear(&s->pw);
        free(s->group_name);
        s->group_name = NULL;
}

/* The error for the service account's lookup result r (0: missing, -errno: failed). */
static int user_error(const struct slots_config *c, int r, struct slots_error *e)
{
        if (r == 0) {
                slots_error_set(e, -ENOENT, c->service, "the service account does not exist");
                slots_error_fix(e, "create the service account, or fix \"service\" in %s", c->path);
                return -ENOENT;
        }
        return slots_error_set(e, r, c->service, "account lookup failed: %s", strerror(-r));
}

int slots_service_user(const struct slots_config *c, struct slots_pw *pw, struct slots_error *e)
{
        int r = slots_nss_user(c->service, pw);

        return r > 0 ? 0 : user_error(c, r, e);
}

int slots_service_group(const struct slots_config *c, gid_t *gid, char **name, struct slots_error *e)
{
        struct slots_service s;
        int r = slots_service_lookup(c, NULL, SLOTS_SERVICE_GROUP, &s);

        if (r < 0) {
                r = slots_error_set(e, r, c->service, "out of memory");
        } else if (c->service_group && s.group == 0) {
                r = slots_error_set(e, -ENOENT, c->service_group, "the service group does not exist");
                slots_error_fix(e, "create it, or fix \"service_group\" in %s", c->path);
        } else if (c->service_group && s.group < 0) {
                r = slots_error_set(e, s.group, c->service_group, "group lookup failed: %s", strerror(-s.group));
        } else if (!c->service_group && s.user <= 0) {
                r = user_error(c, s.user, e);
        } else if (s.named < 0) {
                r = slots_error_set(e, s.named, c->service, "group lookup failed: %s", strerror(-s.named));
        }
        if (r == 0) {
                *gid = s.gid;
                *name = s.group_name;
                s.group_name = NULL;
        }
        slots_service_clear(&s);
        return r;
}
