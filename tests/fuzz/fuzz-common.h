/* What the fuzz targets share: an assertion that survives NDEBUG, and the error-position check. */
#pragma once

#include <stdio.h>
#include <stdlib.h>

/* A broken invariant is a finding: abort, so libFuzzer saves the input. */
#define FUZZ_ASSERT(cond)                                                                      \
        do {                                                                                   \
                if (!(cond)) {                                                                 \
                        fprintf(stderr, "%s:%d: invariant broken: %s\n", __FILE__, __LINE__, #cond); \
                        abort();                                                               \
                }                                                                              \
        } while (0)

/*
 * An error names a line and column inside the text (or just past its end, for "unexpected
 * end of input"): lines 1..newlines+1, columns 1..(length of that line)+1.  0:0 means the
 * error is about the file as a whole.
 */
static inline void fuzz_check_position(const char *text, size_t size, unsigned line, unsigned column)
{
        unsigned cur = 1;
        size_t start = 0, len;

        if (line == 0) {
                FUZZ_ASSERT(column == 0);
                return;
        }
        for (size_t i = 0; i < size && cur < line; i++)
                if (text[i] == '\n') {
                        cur++;
                        start = i + 1;
                }
        FUZZ_ASSERT(cur == line);
        len = 0;
        while (start + len < size && text[start + len] != '\n')
                len++;
        FUZZ_ASSERT(column >= 1 && column <= len + 1);
}
