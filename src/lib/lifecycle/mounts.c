/* The one reader of /proc/self/mountinfo: each line's id, device, mount point, type and super options. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fsutil.h"
#include "mounts.h"

/* Undoes the \ooo escapes the kernel writes (space, tab, newline, backslash, comma, colon) into out. */
static void unescape(const char *s, size_t len, char *out)
{
        for (size_t i = 0; i < len; i++) {
                if (s[i] == '\\' && i + 3 < len && s[i + 1] >= '0' && s[i + 1] <= '3' && s[i + 2] >= '0' &&
                    s[i + 2] <= '7' && s[i + 3] >= '0' && s[i + 3] <= '7') {
                        *out++ = (char) ((s[i + 1] - '0') << 6 | (s[i + 2] - '0') << 3 | (s[i + 3] - '0'));
                        i += 3;
                } else {
                        *out++ = s[i];
                }
        }
        *out = '\0';
}

/* "36 35 98:0 /root /point opts [optional...] - fstype source superopts", split in place. */
static bool split_line(char *line, struct cleanup_mount *m)
{
        char *f[5], *dash = strstr(line, " - "), *save = NULL, *src;
        size_t n = 0;

        if (!dash)
                return false;
        *dash = '\0';
        for (char *tok = strtok_r(line, " ", &save); tok && n < 5; tok = strtok_r(NULL, " ", &save))
                f[n++] = tok;
        save = NULL;
        m->fstype = strtok_r(dash + 3, " ", &save);
        src = strtok_r(NULL, " ", &save);
        m->options = strtok_r(NULL, " ", &save);
        if (n < 5 || !m->fstype || !src || !m->options || sscanf(f[2], "%u:%u", &m->major, &m->minor) != 2)
                return false;
        m->id = strtoull(f[0], NULL, 10);
        unescape(f[4], strlen(f[4]), f[4]);
        m->point = f[4];
        return true;
}

int cleanup_mounts_read(struct cleanup_mounts *t)
{
        int fd = open("/proc/self/mountinfo", O_RDONLY | O_CLOEXEC), r;
        size_t len, cap = 0;
        char *save = NULL;

        *t = (struct cleanup_mounts){ 0 };
        if (fd < 0)
                return -errno;
        r = slots_read_all(fd, (size_t) 64 << 20, &t->text, &len);
        close(fd);
        if (r < 0)
                return r;
        for (char *line = strtok_r(t->text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
                if (t->n == cap) {
                        struct cleanup_mount *m = reallocarray(t->m, cap ? cap * 2 : 64, sizeof(*m));

                        if (!m) {
                                cleanup_mounts_free(t);
                                return -ENOMEM;
                        }
                        t->m = m;
                        cap = cap ? cap * 2 : 64;
                }
                if (split_line(line, &t->m[t->n]))
                        t->n++;
        }
        return 0;
}

void cleanup_mounts_free(struct cleanup_mounts *t)
{
        free(t->m);
        free(t->text);
        *t = (struct cleanup_mounts){ 0 };
}

bool cleanup_mount_option(const struct cleanup_mount *m, const char *key, char *buf, size_t size)
{
        size_t klen = strlen(key);

        for (const char *o = m->options; o && *o; o = strchr(o, ','), o = o ? o + 1 : NULL) {
                size_t len = strcspn(o, ",");

                if (len > klen && strncmp(o, key, klen) == 0 && o[klen] == '=') {
                        if (len - klen - 1 >= size)
                                return false;
                        memcpy(buf, o + klen + 1, len - klen - 1);
                        buf[len - klen - 1] = '\0';
                        return true;
                }
        }
        return false;
}

void cleanup_mount_unescape(char *s)
{
        unescape(s, strlen(s), s);
}
