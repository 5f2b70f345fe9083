/* Assign's decisions: which slot a user gets, or why not, read from the table and the accounts. */
#pragma once

#include <sys/types.h>

#include "config.h"
#include "error.h"
#include "nss.h"
#include "table.h"

/* What an assign of USER [SLOT] comes to, in the order the checks are made. */
enum slots_assign_verdict {
        SLOTS_ASSIGN_GIVE,              /* the slot is free: give it */
        SLOTS_ASSIGN_AGAIN,             /* the user holds it already: done (the tree is prepared again) */
        SLOTS_ASSIGN_HELD_ELSEWHERE,    /* the user holds another slot than the one asked for */
        SLOTS_ASSIGN_OUT_OF_POOL,       /* the slot asked for is outside the pool */
        SLOTS_ASSIGN_FULL,              /* no slot asked for, and every slot is held or pending */
        SLOTS_ASSIGN_TAKEN,             /* the slot is held by another user */
        SLOTS_ASSIGN_PENDING,           /* the slot's last release did not finish */
};

/*
 * The verdict for `user` asking for slot `want` (0: the lowest free one) in a
 * pool of `pool` slots; *n is the slot it is about (0 with FULL).  Pure: reads
 * the table only.
 */
enum slots_assign_verdict slots_assign_choose(const struct slots_table *t, unsigned pool, const char *user,
                                              unsigned want, unsigned *n);

/*
 * The refusal of a verdict other than GIVE and AGAIN, for the table of config
 * c: reason and fix (slots-admin(8)), kind refused.  Returns -EPERM.
 */
int slots_assign_refusal(enum slots_assign_verdict v, unsigned n, const struct slots_config *c,
                         struct slots_error *e);

/*
 * The service is never a slot: refuses (-EPERM, with the fix) when the service
 * account is a member of group `slot` (gr, the caller's lookup of it; NULL when
 * there is no such group) or has it as its primary group.  0 when it is not, or
 * when either cannot be found (the slot's own lookup reports that).
 */
int slots_assign_service_apart(const struct slots_config *c, const char *slot, const struct slots_gr *gr,
                               struct slots_error *e);
