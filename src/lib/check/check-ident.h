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
void check_ident_account(struct check_run *k, const struct slotinfo *s, bool own_password_row, struct strbuf *d,
                         struct strbuf *f, struct strbuf *note);

/*
 * Whether the tree's /etc/passwd (group: /etc/group) has a line for name: 1, 0, or -errno when
 * it cannot be read.  The names are read once a run and kept until the file changes.
 */
int check_ident_local(const struct check_run *k, bool group, const char *name);

/* The account row of a slot NSS has no account for: the fix fits "accounts" (provision, or --ldif). */
void check_ident_missing(struct check_run *k, const struct slotinfo *s);

/*
 * What the account row says of s's place: with "accounts": "directory", a local copy of the
 * account or its group; the membership of shared (gid from the name service, or r < 0: the
 * lookup failed) -- a group database that did not answer is said to be that, never a missing
 * membership -- with the fix where the account is kept.  *directory: s is no local account.
 */
void check_ident_place(struct check_run *k, const struct slotinfo *s, const char *shared, int r, gid_t shared_gid,
                       bool *directory, struct strbuf *d, struct strbuf *f);

/* The fix for s's home: usermod -d for a local account, the LDIF change for a directory's. */
void check_ident_home_fix(const struct slotinfo *s, const char *home, bool directory, struct strbuf *f);
