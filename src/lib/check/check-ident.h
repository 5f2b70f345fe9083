/*
 * check's findings on one slot account's identity: identity.c's verdict on it, its password
 * field, and the processes that carry it.
 */
#pragma once

#include <stdbool.h>

#include "check-int.h"
#include "identity.h"
#include "identity-look.h"
#include "strbuf.h"

/*
 * The password fields of name as slots_pwfields_lookup() finds them, from m when it lists
 * both entries (its shadow map is read as root only).  Clear f with slots_pwfields_clear().
 */
int check_ident_pwfields(const struct slots_accountmap *m, const char *name, struct slots_pwfields *f);

/*
 * Appends to d and f (detail and fix, "; " and " && " between) what identity.c
 * finds wrong with s: a subordinate uid or gid range, a group but its own and
 * <prefix>shared or a foreign primary group, a shell drift; as root also a
 * usable password when own_password_row is false (the slots that get no
 * password-locked row: free and pending ones), and the processes that carry
 * its identity (any, for a free slot; through its group alone, for an
 * assigned one).  note gets what could not be looked at, for a PASS row.
 * Sets k->err on a failed allocation.
 */
void check_ident_account(struct ctx *k, const struct slotinfo *s, bool own_password_row, struct strbuf *d,
                         struct strbuf *f, struct strbuf *note);
