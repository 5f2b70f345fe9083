/* Assign's decisions: which slot a user gets, or why not, read from the table and the accounts. */
#include <errno.h>
#include <stdbool.h>
#include <string.h>

#include "assign.h"
#include "ids.h"
#include "nss.h"

enum slots_assign_verdict slots_assign_choose(const struct slots_table *t, unsigned pool, const char *user,
                                              unsigned want, unsigned *n)
{
        unsigned held = slots_table_find_user(t, user);

        *n = held;
        if (held && (want == 0 || held == want))
                return SLOTS_ASSIGN_AGAIN;
        if (held)
                return SLOTS_ASSIGN_HELD_ELSEWHERE;
        *n = want;
        if (want > pool)
                return SLOTS_ASSIGN_OUT_OF_POOL;
        if (want == 0) {
                *n = slots_table_lowest_free(t, pool);
                if (*n == 0)
                        return SLOTS_ASSIGN_FULL;
        }
        switch (slots_table_get(t, *n, NULL, NULL, NULL)) {
        case SLOTS_SLOT_ASSIGNED:
                return SLOTS_ASSIGN_TAKEN;
        case SLOTS_SLOT_PENDING:
                return SLOTS_ASSIGN_PENDING;
        case SLOTS_SLOT_FREE:
                break;
        }
        return SLOTS_ASSIGN_GIVE;
}

int slots_assign_refusal(enum slots_assign_verdict v, unsigned n, const struct slots_config *c,
                         struct slots_error *e)
{
        char name[SLOTS_NAME_MAX], last[SLOTS_NAME_MAX];

        slots_slot_name(n, name);
        switch (v) {
        case SLOTS_ASSIGN_HELD_ELSEWHERE:
                slots_error_refuse(e, -EPERM, c->table, "the user already holds %s", name);
                slots_error_fix(e, "release it first: slots-admin release --slot %s", name);
                break;
        case SLOTS_ASSIGN_OUT_OF_POOL:
                slots_error_refuse(e, -EPERM, c->table, "%s is outside the pool of %u slots", name, c->slots);
                slots_error_fix(e, "choose slot01 to %s, or raise \"slots\" in %s and run slots-provision",
                                slots_slot_name(c->slots, last), c->path);
                break;
        case SLOTS_ASSIGN_FULL:
                slots_error_refuse(e, -EPERM, c->table, "the pool is full: all %u slots are held or pending",
                                   c->slots);
                slots_error_fix(e, "release a slot, or raise \"slots\" in %s and run slots-provision", c->path);
                break;
        case SLOTS_ASSIGN_TAKEN:
                slots_error_refuse(e, -EPERM, c->table, "the slot is held by another user");
                slots_error_fix(e, "release it first: slots-admin release --slot %s", name);
                break;
        case SLOTS_ASSIGN_PENDING:
                slots_error_refuse(e, -EPERM, c->table, "the slot's last release did not finish (cleanup pending)");
                slots_error_fix(e, "finish the release: slots-admin release --slot %s", name);
                break;
        case SLOTS_ASSIGN_GIVE:
        case SLOTS_ASSIGN_AGAIN:
                return 0;
        }
        return -EPERM;
}

int slots_assign_service_apart(const struct slots_config *c, const char *slot, const struct slots_gr *gr,
                               struct slots_error *e)
{
        struct slots_pw svc = { 0 };
        bool member, primary;
        int r;

        if (!gr)
                return 0;
        r = slots_nss_user(c->service, &svc);
        if (r < 0)
                return slots_error_set(e, r, c->service, "account lookup failed: %s", strerror(-r));
        member = slots_gr_has_member(gr, c->service);
        primary = r > 0 && svc.gid == gr->gid;
        slots_pw_clear(&svc);
        if (!member && !primary)
                return 0;
        if (member)
                slots_error_refuse(e, -EPERM, slot, "the service account %s is a member of group %s; the service "
                                   "is never a slot", c->service, slot);
        else
                slots_error_refuse(e, -EPERM, slot, "the service account %s has group %s as its primary group; "
                                   "the service is never a slot", c->service, slot);
        if (member)
                slots_error_fix(e, "remove it: gpasswd -d %s %s", c->service, slot);
        else
                slots_error_fix(e, "give %s its own primary group: usermod -g GROUP %s", c->service, c->service);
        return -EPERM;
}
