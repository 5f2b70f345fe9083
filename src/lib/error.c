/* The error record that library calls fill and only the command boundary prints. */
#include <stdio.h>
#include <string.h>

#include "error.h"

void slots_error_clear(struct slots_error *e)
{
        if (e)
                memset(e, 0, sizeof(*e));
}

int slots_error_set(struct slots_error *e, int r, const char *object, const char *fmt, ...)
{
        va_list ap;

        if (!e)
                return r;
        memset(e, 0, sizeof(*e));
        snprintf(e->object, sizeof(e->object), "%s", object ? object : "");
        va_start(ap, fmt);
        vsnprintf(e->reason, sizeof(e->reason), fmt, ap);
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
