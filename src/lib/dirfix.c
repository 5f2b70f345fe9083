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

/* RFC 2849 SAFE-STRING, stricter: printable ASCII only (the line also travels as a shell word). */
static bool ldif_safe(const char *v)
{
        size_t len = strlen(v);

        if (len && (v[0] == ' ' || v[0] == ':' || v[0] == '<' || v[len - 1] == ' '))
                return false;
        for (const unsigned char *p = (const unsigned char *) v; *p; p++)
                if (*p > 0x7e || *p < 0x20)
                        return false;
        return true;
}

void slots_ldif_value(struct strbuf *f, const char *attr, const char *value)
{
        static const char a[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
        const unsigned char *p = (const unsigned char *) value;
        size_t len = strlen(value);

        if (ldif_safe(value)) {
                strbuf_addf(f, "%s: %s", attr, value);
                return;
        }
        strbuf_addf(f, "%s:: ", attr);
        for (size_t i = 0; i < len; i += 3) {
                unsigned long w = (unsigned long) p[i] << 16 | (i + 1 < len ? (unsigned long) p[i + 1] << 8 : 0) |
                                  (i + 2 < len ? p[i + 2] : 0);

                strbuf_addf(f, "%c%c%c%c", a[w >> 18 & 63], a[w >> 12 & 63], i + 1 < len ? a[w >> 6 & 63] : '=',
                            i + 2 < len ? a[w & 63] : '=');
        }
}

/* One value line of the change, as a shell word. */
static void value_word(struct strbuf *f, const char *attr, const char *value)
{
        struct strbuf b = { 0 };

        slots_ldif_value(&b, attr, value);
        quoted(f, "", b.oom ? "" : strbuf_str(&b));
        if (b.oom)
                f->oom = true;
        strbuf_free(&b);
}

void slots_dirfix(struct strbuf *f, bool group, const char *name, const struct slots_dirfix_change *ch, size_t n)
{
        static const char *const op[] = { "replace", "add", "delete" };

        strbuf_addf(f, "in the directory, not on this host: for l in ");
        quoted(f, group ? "dn: cn=" : "dn: uid=", name);
        strbuf_addf(f, "\",$BASE\" 'changetype: modify'");
        for (size_t i = 0; i < n; i++) {
                strbuf_addf(f, "%s '%s: %s'", i ? " '-'" : "", op[ch[i].op], ch[i].attr);
                if (ch[i].value) {
                        strbuf_addf(f, " ");
                        value_word(f, ch[i].attr, ch[i].value);
                }
        }
        strbuf_addf(f, "; do printf %%s \"$l\"; echo; done | ldapmodify -H \"$URI\" -D \"$ADMIN\" -W ("
                       DIRFIX_VARS ")");
}

void slots_dirfix_load(struct strbuf *f)
{
        strbuf_addf(f, "load the pool into the directory: slots-provision --ldif \"$BASE\" | ldapadd -H \"$URI\" "
                       "-D \"$ADMIN\" -W (" DIRFIX_VARS ")");
}
