/* Where a value or key sits in a JSON text, for errors that name line and column. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "jsonpos.h"

/* A cursor over text that jansson has already accepted; the scanner trusts that. */
struct cur {
        const char *s;
        size_t len, i;
        unsigned line, col;
};

static void adv(struct cur *c)
{
        if (c->i >= c->len)
                return;
        if (c->s[c->i] == '\n') {
                c->line++;
                c->col = 1;
        } else {
                c->col++;
        }
        c->i++;
}

static char peek(const struct cur *c)
{
        return c->i < c->len ? c->s[c->i] : '\0';
}

static void skip_ws(struct cur *c)
{
        while (c->i < c->len && strchr(" \t\r\n", c->s[c->i]))
                adv(c);
}

/* Scans a string at the cursor; with out, returns a malloc'ed copy of its raw bytes. */
static char *scan_string(struct cur *c, bool want)
{
        size_t start;
        char *r = NULL;

        adv(c); /* opening quote */
        start = c->i;
        while (c->i < c->len && c->s[c->i] != '"') {
                if (c->s[c->i] == '\\')
                        adv(c);
                adv(c);
        }
        if (want) {
                r = strndup(c->s + start, c->i - start);
        }
        adv(c); /* closing quote */
        return r;
}

static void skip_value(struct cur *c);

static void skip_container(struct cur *c, char close)
{
        adv(c);
        skip_ws(c);
        while (c->i < c->len && peek(c) != close) {
                if (close == '}') {
                        free(scan_string(c, false));
                        skip_ws(c);
                        adv(c); /* ':' */
                        skip_ws(c);
                }
                skip_value(c);
                skip_ws(c);
                if (peek(c) == ',') {
                        adv(c);
                        skip_ws(c);
                }
        }
        adv(c);
}

static void skip_value(struct cur *c)
{
        char ch = peek(c);

        if (ch == '{')
                skip_container(c, '}');
        else if (ch == '[')
                skip_container(c, ']');
        else if (ch == '"')
                free(scan_string(c, false));
        else
                while (c->i < c->len && !strchr(",]} \t\r\n", c->s[c->i]))
                        adv(c);
}

/* Keys are compared as raw text; our keys never need escapes, so an escaped key simply never matches. */
static bool find_member(struct cur *c, const char *key, bool want_key, bool last)
{
        adv(c); /* '{' */
        skip_ws(c);
        while (c->i < c->len && peek(c) != '}') {
                struct cur at = *c;
                char *k = scan_string(c, true);
                bool hit = k && strcmp(k, key) == 0;

                free(k);
                skip_ws(c);
                adv(c); /* ':' */
                skip_ws(c);
                if (hit) {
                        if (last && want_key)
                                *c = at;
                        return true;
                }
                skip_value(c);
                skip_ws(c);
                if (peek(c) == ',') {
                        adv(c);
                        skip_ws(c);
                }
        }
        return false;
}

static bool find_index(struct cur *c, size_t index)
{
        size_t k = 0;

        adv(c); /* '[' */
        skip_ws(c);
        while (c->i < c->len && peek(c) != ']') {
                if (k++ == index)
                        return true;
                skip_value(c);
                skip_ws(c);
                if (peek(c) == ',') {
                        adv(c);
                        skip_ws(c);
                }
        }
        return false;
}

/*
 * Finds the element at path (n steps) in src.  With want_key, the position of
 * the last step's key (an object member) instead of its value.  Lines and
 * columns are 1-based, columns count bytes.  Returns 0, or -ENOENT when the path
 * is not in the text (then line/column are those of the deepest element found).
 */
static int json_locate(const struct slots_jsrc *src, const struct slots_jpath *path, size_t n,
                       bool want_key, unsigned *line, unsigned *column)
{
        struct cur c = { .s = src->text, .len = src->len, .line = 1, .col = 1 };
        size_t k;
        int r = 0;

        skip_ws(&c);
        for (k = 0; k < n; k++) {
                bool last = k + 1 == n;
                struct cur before = c;

                if (path[k].key) {
                        if (peek(&c) != '{' || !find_member(&c, path[k].key, want_key, last)) {
                                c = before;
                                r = -ENOENT;
                                break;
                        }
                } else if (peek(&c) != '[' || !find_index(&c, path[k].index)) {
                        c = before;
                        r = -ENOENT;
                        break;
                }
        }
        *line = c.line;
        *column = c.col;
        return r;
}

int slots_json_fail(struct slots_error *e, const struct slots_jsrc *src, const struct slots_jpath *path,
                    size_t n, bool want_key, const char *fmt, ...)
{
        char text[SLOTS_ERR_TEXT];
        unsigned line, col;
        va_list ap;

        va_start(ap, fmt);
        vsnprintf(text, sizeof(text), fmt, ap);
        va_end(ap);
        slots_error_invalid(e, -EBADMSG, src->file, "%s", text);
        (void) json_locate(src, path, n, want_key, &line, &col);
        slots_error_at(e, line, col);
        return -EBADMSG;
}

int slots_json_load_error(struct slots_error *e, const char *file, const json_error_t *jerr)
{
        if (json_error_code(jerr) == json_error_out_of_memory || !jerr->text[0])
                return slots_error_set(e, -ENOMEM, file, "cannot parse it: %s", strerror(ENOMEM));
        slots_error_invalid(e, -EBADMSG, file, "%s", jerr->text);
        slots_error_at(e, (unsigned) (jerr->line > 0 ? jerr->line : 1), (unsigned) (jerr->column > 0 ? jerr->column : 1));
        return -EBADMSG;
}
