/* A growing string: text built piece by piece, where an allocation failure is remembered, not lost. */
#pragma once

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>

/* Zero-initialise ({0}) before use; free with strbuf_free(). */
struct strbuf {
        char *s;
        size_t len, cap;
        bool oom;               /* an append failed: the text is incomplete */
};

void strbuf_vaddf(struct strbuf *b, const char *fmt, va_list ap) __attribute__((format(printf, 2, 0)));
void strbuf_addf(struct strbuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Appends sep first when the buffer already holds something. */
void strbuf_sep(struct strbuf *b, const char *sep);

void strbuf_free(struct strbuf *b);

/*
 * Appends '/' and name, the path one level deeper, with memcpy (a walk's hot
 * path).  Returns 0, or -ENOMEM (and oom set) when the buffer cannot grow.
 */
int strbuf_push_name(struct strbuf *b, const char *name);

/* Cuts the text back to its first len bytes, as before a push_name; len <= b->len. */
void strbuf_truncate(struct strbuf *b, size_t len);

/* Empties the text and forgets a failed append, keeping the memory for the next text. */
void strbuf_reset(struct strbuf *b);

/* The text so far; "" when nothing was added. */
const char *strbuf_str(const struct strbuf *b);
