/* The error record that library calls fill and only the command boundary prints; the first of several kept. */
#include <stdio.h>
#include <string.h>

#include "error.h"

void slots_error_clear(struct slots_error *e)
{
        if (e)
                memset(e, 0, sizeof(*e));
}

/* A text cut to its field ends in "...", so a reader knows there was more (n: the length it wanted). */
static void mark_cut(char *buf, size_t size, int n)
{
        static const char mark[] = "...";

        if (n >= 0 && (size_t) n < size)
                return;
        if (n < 0)
                buf[0] = '\0';
        else if (size >= sizeof(mark))
                memcpy(buf + size - sizeof(mark), mark, sizeof(mark));
}

static int set(struct slots_error *e, enum slots_error_kind kind, int r, const char *object, const char *fmt,
               va_list ap) __attribute__((format(printf, 5, 0)));

static int set(struct slots_error *e, enum slots_error_kind kind, int r, const char *object, const char *fmt,
               va_list ap)
{
        if (!e)
                return r;
        memset(e, 0, sizeof(*e));
        e->kind = kind;
        e->err = r < 0 ? -r : 0;
        mark_cut(e->object, sizeof(e->object), snprintf(e->object, sizeof(e->object), "%s", object ? object : ""));
        mark_cut(e->reason, sizeof(e->reason), vsnprintf(e->reason, sizeof(e->reason), fmt, ap));
        return r;
}

int slots_error_set(struct slots_error *e, int r, const char *object, const char *fmt, ...)
{
        va_list ap;

        va_start(ap, fmt);
        r = set(e, SLOTS_ERR_FAILED, r, object, fmt, ap);
        va_end(ap);
        return r;
}

int slots_error_refuse(struct slots_error *e, int r, const char *object, const char *fmt, ...)
{
        va_list ap;

        va_start(ap, fmt);
        r = set(e, SLOTS_ERR_REFUSED, r, object, fmt, ap);
        va_end(ap);
        return r;
}

int slots_error_invalid(struct slots_error *e, int r, const char *object, const char *fmt, ...)
{
        va_list ap;

        va_start(ap, fmt);
        r = set(e, SLOTS_ERR_INVALID, r, object, fmt, ap);
        va_end(ap);
        return r;
}

void slots_error_at(struct slots_error *e, unsigned line, unsigned column)
{
        if (!e)
                return;
        e->line = line;
        e->column = column;
}

void slots_error_fix(struct slots_error *e, const char *fmt, ...)
{
        va_list ap;

        if (!e)
                return;
        va_start(ap, fmt);
        mark_cut(e->fix, sizeof(e->fix), vsnprintf(e->fix, sizeof(e->fix), fmt, ap));
        va_end(ap);
}

void slots_first_keep(struct slots_first *f, int r, const struct slots_error *sub)
{
        if (r >= 0 || f->r < 0)
                return;
        f->r = r;
        if (f->e && sub)
                *f->e = *sub;
}

const char *slots_error_format(const struct slots_error *e, char *buf, unsigned long size)
{
        int n;

        if (size == 0)
                return buf;
        if (e->line > 0)
                n = snprintf(buf, size, "%s:%u:%u: %s", e->object, e->line, e->column, e->reason);
        else if (e->object[0])
                n = snprintf(buf, size, "%s: %s", e->object, e->reason);
        else
                n = snprintf(buf, size, "%s", e->reason);
        mark_cut(buf, size, n);
        return buf;
}
