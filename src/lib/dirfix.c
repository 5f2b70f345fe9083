/* The fix for an account or group a directory keeps: its LDIF change for ldapmodify, on one line. */
#include <stdio.h>
#include <string.h>

#include "dirfix.h"

#define DIRFIX_VARS "$BASE: the base the pool was loaded under (slots-provision --ldif $BASE); $URI, $ADMIN: " \
                    "the directory's address and a DN that may write it"

/* One shell word in single quotes: each ' becomes '\''. */
static void quoted(struct strbuf *f, const char *prefix, const char *s)
{
        strbuf_addf(f, "'%s", prefix);
        for (const char *p = s; *p; p++) {
                size_t run = strcspn(p, "'");

                strbuf_addf(f, "%.*s", (int) run, p);
                p += run;
                if (!*p)
                        break;
                strbuf_addf(f, "'\\''");
        }
        strbuf_addf(f, "'");
}

void slots_dirfix(struct strbuf *f, bool group, const char *name, const struct slots_dirfix_change *ch, size_t n)
{
        static const char *const op[] = { "replace", "add", "delete" };
        char pre[64];

        strbuf_addf(f, "in the directory, not on this host: for l in ");
        quoted(f, group ? "dn: cn=" : "dn: uid=", name);
        strbuf_addf(f, "\",$BASE\" 'changetype: modify'");
        for (size_t i = 0; i < n; i++) {
                strbuf_addf(f, "%s '%s: %s' ", i ? " '-'" : "", op[ch[i].op], ch[i].attr);
                snprintf(pre, sizeof(pre), "%s: ", ch[i].attr);
                quoted(f, pre, ch[i].value);
        }
        strbuf_addf(f, "; do echo \"$l\"; done | ldapmodify -H \"$URI\" -D \"$ADMIN\" -W (" DIRFIX_VARS ")");
}

void slots_dirfix_load(struct strbuf *f)
{
        strbuf_addf(f, "load the pool into the directory: slots-provision --ldif \"$BASE\" | ldapadd -H \"$URI\" "
                       "-D \"$ADMIN\" -W (" DIRFIX_VARS ")");
}
