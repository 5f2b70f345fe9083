/* A growing string: text built piece by piece, where an allocation failure is remembered, not lost. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "strbuf.h"

void strbuf_vaddf(struct strbuf *b, const char *fmt, va_list ap)
{
        va_list aq;
        int n;

        if (b->oom)
                return;
        va_copy(aq, ap);
        n = vsnprintf(b->s ? b->s + b->len : NULL, b->s ? b->cap - b->len : 0, fmt, aq);
        va_end(aq);
        if (n < 0) {
                b->oom = true;
                return;
        }
        if (!b->s || b->len + (size_t) n + 1 > b->cap) {
                size_t cap = (b->len + (size_t) n + 1) * 2;
                char *s = realloc(b->s, cap);
                if (!s) {
                        b->oom = true;
                        return;
                }
                b->s = s;
                b->cap = cap;
                (void) vsnprintf(b->s + b->len, b->cap - b->len, fmt, ap);
        }
        b->len += (size_t) n;
}

void strbuf_addf(struct strbuf *b, const char *fmt, ...)
{
        va_list ap;

        va_start(ap, fmt);
        strbuf_vaddf(b, fmt, ap);
        va_end(ap);
}

void strbuf_sep(struct strbuf *b, const char *sep)
{
        if (b->len)
                strbuf_addf(b, "%s", sep);
}

int strbuf_push_name(struct strbuf *b, const char *name)
{
        size_t n = strlen(name);

        if (b->oom)
                return -ENOMEM;
        if (!b->s || b->len + n + 2 > b->cap) {
                size_t cap = (b->len + n + 2) * 2;
                char *s = realloc(b->s, cap);

                if (!s) {
                        b->oom = true;
                        return -ENOMEM;
                }
                b->s = s;
                b->cap = cap;
        }
        b->s[b->len++] = '/';
        memcpy(b->s + b->len, name, n + 1);
        b->len += n;
        return 0;
}

void strbuf_truncate(struct strbuf *b, size_t len)
{
        if (b->s && len <= b->len) {
                b->len = len;
                b->s[len] = '\0';
        }
}

void strbuf_free(struct strbuf *b)
{
        free(b->s);
        memset(b, 0, sizeof(*b));
}

void strbuf_reset(struct strbuf *b)
{
        b->len = 0;
        b->oom = false;
        if (b->s)
                b->s[0] = '\0';
}

const char *strbuf_str(const struct strbuf *b)
{
        return b->s ? b->s : "";
}
