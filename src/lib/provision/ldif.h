/* The pool as LDIF, for loading into a directory that serves the slots to every host. */
#pragma once

#include <stddef.h>

#include "config.h"
#include "error.h"

/*
 * The LDIF (RFC 2849) of the pool the config describes, for ldapadd, with the
 * entries placed directly below base_dn (which must exist): per slot a
 * posixGroup cn=slotNN (gidNumber uid_base + NN) and an account uid=slotNN
 * (structural "account" with posixAccount and shadowAccount: in the RFC 2307
 * nis schema posixAccount is auxiliary), password locked; then the shared
 * group cn=<prefix>shared (gidNumber uid_base) listing every slot as memberUid.
 * Needs uid_base (ids must be the same on every host).  Values LDIF cannot
 * carry as text (a DN with a control or non-ASCII byte) are base64
 * (slots_ldif_value() of dirfix.h).  malloc'ed, *len set;
 * NULL with *err -EINVAL (uid_base unset, base_dn empty or holding a newline),
 * -EBADMSG (slots_root or shell not ASCII, which RFC 2307 refuses) or -ENOMEM,
 * described in e.
 */
char *slots_ldif(const struct slots_config *c, const char *base_dn, size_t *len, int *err,
                 struct slots_error *e);
