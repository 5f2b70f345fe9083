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

char *slots_path_join(const char *dir, const char *name)
{
        size_t n = trimmed_len(dir);
        char *s;

        if (n == 1 && dir[0] == '/')
                n = 0;
        if (asprintf(&s, "%.*s/%s", (int) n, dir, name) < 0)
                return NULL;
        return s;
}

bool slots_path_under(const char *path, const char *base)
{
        size_t n = trimmed_len(base);

        if (n == 1 && base[0] == '/')
                return true;
        return strncmp(path, base, n) == 0 && (path[n] == '\0' || path[n] == '/');
}
