/*
 * check's findings on one slot account's identity: identity.c's verdict on it, its password
 * field, and the processes that carry it.
 */
#pragma once

#include <stdbool.h>

#include "check-int.h"
#include "identity.h"
#include "strbuf.h"

/*
 * The password field of name: the shadow entry (from m when it lists name, else asked by
 * name), else the passwd field (*in_passwd).  *hash is malloc'ed; clear it with
 * explicit_bzero before free.  Returns 0 or -errno.
 */
int check_ident_password_field(const struct slots_accountmap *m, const char *name, char **hash, bool *in_passwd);

/*
 * libxcrypt's word on hash (crypt_checksalt(), loaded on first use: only check
 * needs it).  *have_lib is false when the library or the function is missing
 * (the method is then not asked).
 */
enum slots_hash_method check_ident_hash_method(const char *hash, bool *have_lib);

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

/*
 * Whether the tree's /etc/passwd (group: /etc/group) has a line for name: 1, 0, or -errno when
 * it cannot be read.  The names are read once a run and kept until the file changes.
 */
int check_ident_local(const struct ctx *k, bool group, const char *name);

/* The account row of a slot NSS has no account for: the fix fits "accounts" (provision, or --ldif). */
void check_ident_missing(struct ctx *k, const struct slotinfo *s);

/*
 * What the account row says of s's place: with "accounts": "directory", a local copy of the
 * account or its group; the membership of shared (gid from the name service, or r < 0: the
 * lookup failed) -- a group database that did not answer is said to be that, never a missing
 * membership -- with the fix where the account is kept.  *directory: s is no local account.
 */
void check_ident_place(struct ctx *k, const struct slotinfo *s, const char *shared, int r, gid_t shared_gid,
                       bool *directory, struct strbuf *d, struct strbuf *f);

/* The fix for s's home: usermod -d for a local account, the LDIF change for a directory's. */
void check_ident_home_fix(const struct slotinfo *s, const char *home, bool directory, struct strbuf *f);
