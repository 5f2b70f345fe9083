/* Path text, not the file system: two parts joined, and whether a path lies at or below another. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "path.h"

/* The length of p without its trailing '/' ("/" keeps its one). */
static size_t trimmed_len(const char *p)
{
        size_t n = strlen(p);

        while (n > 1 && p[n - 1] == '/')
                n--;
        return n;
}

/* The length of dir as a join keeps it: without its trailing '/', and "/" as "". */
static size_t join_len(const char *dir)
{
        size_t n = trimmed_len(dir);

        return n == 1 && dir[0] == '/' ? 0 : n;
}

char *slots_path_join(const char *dir, const char *name)
{
        char *s;

        if (asprintf(&s, "%.*s/%s", (int) join_len(dir), dir, name) < 0)
                return NULL;
        return s;
}

const char *slots_path_join_to(char *buf, size_t size, const char *dir, const char *name)
{
        if (size > 0)
                snprintf(buf, size, "%.*s/%s", (int) join_len(dir), dir, name);
        return buf;
}

bool slots_path_under(const char *path, const char *base)
{
        size_t n = trimmed_len(base);

        if (n == 1 && base[0] == '/')
                return true;
        return strncmp(path, base, n) == 0 && (path[n] == '\0' || path[n] == '/');
}
