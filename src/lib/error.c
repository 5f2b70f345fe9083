/* The error record that library calls fill and only the command boundary prints; the first of several kept. */
#include <stdio.h>
#include <string.h>

#include "error.h"

void slots_error_clear(struct slots_error *e)
{
        if (e)
                memset(e, 0, sizeof(*e));
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
        snprintf(e->object, sizeof(e->object), "%s", object ? object : "");
        vsnprintf(e->reason, sizeof(e->reason), fmt, ap);
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
        vsnprintf(e->fix, sizeof(e->fix), fmt, ap);
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
        if (e->line > 0)
                snprintf(buf, size, "%s:%u:%u: %s", e->object, e->line, e->column, e->reason);
        else if (e->object[0])
                snprintf(buf, size, "%s: %s", e->object, e->reason);
        else
                snprintf(buf, size, "%s", e->reason);
        return buf;
}
