/* The fix for an account or group a directory keeps: its LDIF change for ldapmodify, on one line. */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "strbuf.h"

enum slots_dirfix_op {
        SLOTS_DIRFIX_REPLACE,
        SLOTS_DIRFIX_ADD,
        SLOTS_DIRFIX_DELETE,
};

/* One attribute change of a modify: replace (add, delete) attr with value; a delete with value NULL drops them all. */
struct slots_dirfix_change {
        enum slots_dirfix_op op;
        const char *attr;
        const char *value;
};

/*
 * Appends to f the shell line that applies the n changes to the entry of the account name
 * (uid=name) or, with group, of the group (cn=name), as slots-provision --ldif names them:
 * for l in 'dn: uid=slot02'",$BASE" 'changetype: modify' 'replace: homeDirectory' ...; do printf
 * %s "$l"; echo; done | ldapmodify -H "$URI" -D "$ADMIN" -W, and what $BASE, $URI and $ADMIN stand
 * for.  Each line is one single-quoted shell word (a ' as '\''), which printf %s prints as it is,
 * backslashes too (echo "$l" would not); the command itself has no backslash, which the commands'
 * output would escape.  A
 * value that is no LDIF safe string (a leading space, ':' or '<', a control or non-ASCII byte)
 * goes as "attr:: base64".
 */
void slots_dirfix(struct strbuf *f, bool group, const char *name, const struct slots_dirfix_change *ch, size_t n);

/*
 * Appends one LDIF value line, without its newline: "attr: value", or "attr:: base64" for a value
 * that is no LDIF safe string (RFC 2849) or holds a control or non-ASCII byte; the one rule for
 * slots-provision --ldif (ldif.c) and the fixes above.
 */
void slots_ldif_value(struct strbuf *f, const char *attr, const char *value);

/* Appends the line that loads the pool's entries into the directory (slots-provision --ldif | ldapadd). */
void slots_dirfix_load(struct strbuf *f);
