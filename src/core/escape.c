/* Escaping of text that may hold file-system names before it reaches a terminal or syslog. */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "escape.h"

/* Length of the valid UTF-8 sequence at s that is not a C1 control, or 0. */
static size_t utf8_ok(const unsigned char *s)
{
        unsigned cp;
        size_t n;

        if (s[0] < 0xc2 || s[0] > 0xf4)
                return 0;
        n = s[0] < 0xe0 ? 2 : s[0] < 0xf0 ? 3 : 4;
        cp = s[0] & (0x7f >> n);
        for (size_t i = 1; i < n; i++) {
                if ((s[i] & 0xc0) != 0x80)
                        return 0;
                cp = cp << 6 | (s[i] & 0x3f);
        }
        /* Overlong forms, surrogates, beyond U+10FFFF, and the C1 controls a terminal obeys. */
        if ((n == 3 && cp < 0x800) || (n == 4 && (cp < 0x10000 || cp > 0x10ffff)) ||
            (cp >= 0xd800 && cp <= 0xdfff) || (cp >= 0x80 && cp <= 0x9f))
                return 0;
        return n;
}

/* One byte's escape into out (at least 5 bytes); returns its length, or 0 when it needs none. */
static size_t escape_one(unsigned char c, char *out)
{
        static const char named[] = "\\\\\nn\rr\tt\aa\bb\ff\vv";

        for (size_t i = 0; i + 1 < sizeof(named); i += 2)
                if ((unsigned char) named[i] == c) {
                        out[0] = '\\';
                        out[1] = named[i + 1];
                        return 2;
                }
        if (c < 0x20 || c >= 0x7f) {
                snprintf(out, 5, "\\%03o", c);
                return 4;
        }
        return 0;
}

/* Writes the escaped form of s into buf when buf is not NULL; returns the length it needs. */
static size_t escape(const char *s, char *buf, size_t size)
{
        const unsigned char *p = (const unsigned char *) s;
        size_t len = 0;

        while (*p) {
                char esc[8];
                size_t n = 0, k;

                /* Printable ASCII but the backslash stands for itself: the bulk of any text, copied in runs. */
                while (p[n] >= 0x20 && p[n] < 0x7f && p[n] != '\\')
                        n++;
                if (n > 0) {
                        if (buf && len + n >= size) {
                                memcpy(buf + len, p, size - 1 - len);
                                len = size - 1;
                                break;
                        }
                        if (buf)
                                memcpy(buf + len, p, n);
                        len += n;
                        p += n;
                        continue;
                }
                if (*p >= 0x80)
                        n = utf8_ok(p);
                if (n > 0) {
                        memcpy(esc, p, n);
                        k = n;
                        p += n;
                } else {
                        k = escape_one(*p, esc);
                        if (k == 0) {
                                esc[0] = (char) *p;
                                k = 1;
                        }
                        p++;
                }
                if (buf) {
                        if (len + k >= size)
                                break;
                        memcpy(buf + len, esc, k);
                }
                len += k;
        }
        if (buf)
                buf[len] = '\0';
        return len;
}

char *slots_escape(const char *s)
{
        /* No byte grows beyond four ("\\ooo"): one pass into room for the worst. */
        size_t n = strlen(s ? s : "");
        char *out = malloc(4 * n + 1);

        if (out)
                escape(s ? s : "", out, 4 * n + 1);
        return out;
}

const char *slots_escape_buf(const char *s, char *buf, size_t size)
{
        if (size == 0)
                return buf;
        escape(s ? s : "", buf, size);
        return buf;
}
