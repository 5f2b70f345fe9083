/*
 * The floor jansson itself sets for one table rewrite: a bare json_loadb and a
 * json_dumpb (JSON_SORT_KEYS | JSON_INDENT(2)) of FILE into one buffer, and
 * nothing else (no checks, no lock, no write).  Run it under callgrind beside
 * slots-admin assign on the same table to see how close slots is to jansson.
 *
 * Usage: jansson-floor FILE [ITER]    (prints the dumped size; exit 1 on failure)
 */
#include <fcntl.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

int main(int argc, char **argv)
{
        struct stat st;
        json_error_t jerr;
        char *text, *out;
        size_t size, n = 0;
        ssize_t got;
        int fd, iter;

        if (argc < 2 || argc > 3) {
                fprintf(stderr, "usage: jansson-floor FILE [ITER]\n");
                return 2;
        }
        iter = argc == 3 ? atoi(argv[2]) : 1;
        fd = open(argv[1], O_RDONLY | O_CLOEXEC);
        if (fd < 0 || fstat(fd, &st) < 0) {
                perror(argv[1]);
                return 1;
        }
        size = (size_t) st.st_size;
        text = malloc(size + 1);
        /* The dump of a sorted, indented table is its own size; room to spare for one that is not. */
        out = malloc(2 * size + 4096);
        if (!text || !out)
                return 1;
        while (n < size && (got = read(fd, text + n, size - n)) > 0)
                n += (size_t) got;
        close(fd);
        if (n != size)
                return 1;
        for (int i = 0; i < iter; i++) {
                json_t *root = json_loadb(text, size, 0, &jerr);

                if (!root) {
                        fprintf(stderr, "jansson-floor: %s:%d: %s\n", argv[1], jerr.line, jerr.text);
                        return 1;
                }
                n = json_dumpb(root, out, 2 * size + 4096, JSON_SORT_KEYS | JSON_INDENT(2));
                json_decref(root);
                if (n == 0)
                        return 1;
        }
        printf("%zu\n", n);
        free(text);
        free(out);
        return 0;
}
