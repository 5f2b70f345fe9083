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
