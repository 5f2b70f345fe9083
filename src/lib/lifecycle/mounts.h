/* The mount table as release reads it: /proc/self/mountinfo, read once and split into fields. */
#pragma once

#include <stdbool.h>
#include <stddef.h>

struct cleanup_mount {
        unsigned long long id;
        unsigned major, minor;
        const char *point;              /* unescaped */
        const char *fstype;
        const char *options;            /* the super block's, escaped as the kernel shows them */
};

struct cleanup_mounts {
        struct cleanup_mount *m;
        size_t n;
        char *text;
};

/* Reads the table; -errno (nothing to free) when it cannot be read. */
int cleanup_mounts_read(struct cleanup_mounts *t);
void cleanup_mounts_free(struct cleanup_mounts *t);

/* The value of key= among m's options, as the kernel escaped it, into buf; false when absent or longer than size. */
bool cleanup_mount_option(const struct cleanup_mount *m, const char *key, char *buf, size_t size);

/* Undoes the kernel's \ooo escapes of a mount point or an option's value, in place. */
void cleanup_mount_unescape(char *s);
