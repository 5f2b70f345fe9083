/* login.defs read the way shadow reads it: the system id range, and where useradd hands out subordinate ids. */
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fsutil.h"
#include "logindefs.h"

#define LOGINDEFS "/etc/login.defs"
#define LOGINDEFS_MAX ((size_t) 1 << 20)

struct def {
        const char *key;
        bool set;
        unsigned long value;
        unsigned line;
};

static bool is_space(char c)
{
        return c == ' ' || c == '\t' || c == '\r';
}

/* shadow's getdef_ulong: strtoul base 0, the whole value must be a number. */
static bool parse_number(const char *s, size_t len, unsigned long *out)
{
        char buf[32], *end;
        unsigned long v;

        if (len == 0 || len >= sizeof(buf) || s[0] == '-' || s[0] == '+')
                return false;
        memcpy(buf, s, len);
        buf[len] = '\0';
        errno = 0;
        v = strtoul(buf, &end, 0);
        if (errno || *end || v > UINT32_MAX - 1)
                return false;
        *out = v;
        return true;
}

/* Each key of defs (n of them) that text sets, the last definition winning; -EBADMSG for a value that is no number. */
static int parse_defs(const char *text, size_t len, const char *file, struct def *defs, size_t n,
                      struct slots_error *e)
{
        const char *p = text, *end = text + len;
        unsigned line = 0;

        while (p < end) {
                const char *eol = memchr(p, '\n', (size_t) (end - p));
                const char *q = p, *kend, *v, *vend;

                if (!eol)
                        eol = end;
                line++;
                while (q < eol && is_space(*q))
                        q++;
                if (q == eol || *q == '#')
                        goto next;
                kend = q;
                while (kend < eol && !is_space(*kend))
                        kend++;
                v = kend;
                while (v < eol && is_space(*v))
                        v++;
                vend = eol;
                while (vend > v && is_space(vend[-1]))
                        vend--;
                /* shadow accepts a value in double quotes. */
                if (vend - v >= 2 && v[0] == '"' && vend[-1] == '"') {
                        v++;
                        vend--;
                }
                /* A key without a value is skipped, as shadow's def_load does. */
                if (v == vend)
                        goto next;
                for (size_t i = 0; i < n; i++) {
                        if (strlen(defs[i].key) != (size_t) (kend - q) ||
                            memcmp(defs[i].key, q, (size_t) (kend - q)) != 0)
                                continue;
                        if (!parse_number(v, (size_t) (vend - v), &defs[i].value)) {
                                slots_error_invalid(e, -EBADMSG, file, "%s is not a number: \"%.*s\"",
                                                defs[i].key, (int) (vend - v), v);
                                slots_error_at(e, line, (unsigned) (v - p) + 1);
                                slots_error_fix(e, "fix %s", file);
                                return -EBADMSG;
                        }
                        /* shadow's putdef_str replaces: the last definition of a key wins. */
                        defs[i].set = true;
                        defs[i].line = line;
                }
        next:
                p = eol + 1;
        }
        return 0;
}

int slots_logindefs_parse(const char *text, size_t len, const char *file, uid_t *min, uid_t *max,
                          struct slots_error *e)
{
        struct def defs[] = { { .key = "SYS_UID_MIN" }, { .key = "SYS_UID_MAX" }, { .key = "UID_MIN" } };
        unsigned long lo, hi;

        if (parse_defs(text, len, file, defs, sizeof(defs) / sizeof(defs[0]), e) < 0) {
                slots_error_fix(e, "fix %s, or set uid_min and uid_max in the config", file);
                return -EBADMSG;
        }
        lo = defs[0].set ? defs[0].value : SLOTS_SYS_UID_MIN_DEFAULT;
        if (defs[1].set)
                hi = defs[1].value;
        else if (defs[2].set && defs[2].value > 0)
                hi = defs[2].value - 1;
        else
                hi = SLOTS_SYS_UID_MAX_DEFAULT;
        if (lo == 0 || hi < lo) {
                slots_error_invalid(e, -EBADMSG, file,
                                "SYS_UID_MIN %lu and SYS_UID_MAX %lu do not form a range of system ids", lo,
                                hi);
                if (defs[0].set || defs[1].set)
                        slots_error_at(e, defs[defs[0].set ? 0 : 1].line, 1);
                slots_error_fix(e, "fix %s, or set uid_min and uid_max in the config", file);
                return -EBADMSG;
        }
        *min = (uid_t) lo;
        *max = (uid_t) hi;
        return 0;
}

/* login.defs inside rootfd whole into *text (NULL: there is none). */
static int read_defs(int rootfd, char **text, size_t *len, struct slots_error *e)
{
        const struct slots_read how = { .path = LOGINDEFS, .max = LOGINDEFS_MAX };
        int fd = slots_open_in(rootfd, LOGINDEFS, O_RDONLY | O_NONBLOCK | O_NOCTTY), r;

        *text = NULL;
        *len = 0;
        if (fd == -ENOENT)
                return 0;
        if (fd < 0)
                return slots_error_set(e, fd, LOGINDEFS, "cannot open: %s", strerror(-fd));
        r = slots_read_text_fd(fd, &how, NULL, text, len, e);
        slots_close(fd);
        return r;
}

int slots_logindefs_uid_range(int rootfd, uid_t *min, uid_t *max, struct slots_error *e)
{
        char *text = NULL;
        size_t len = 0;
        int r = read_defs(rootfd, &text, &len, e);

        if (r == -EFBIG || r == -EBADMSG)
                slots_error_fix(e, "fix %s, or set uid_min and uid_max in the config", LOGINDEFS);
        if (r == 0 && !text) {
                *min = SLOTS_SYS_UID_MIN_DEFAULT;
                *max = SLOTS_SYS_UID_MAX_DEFAULT;
        } else if (r == 0)
                r = slots_logindefs_parse(text, len, LOGINDEFS, min, max, e);
        free(text);
        return r;
}

int slots_logindefs_subids(int rootfd, unsigned long *lo, unsigned long *end, struct slots_error *e)
{
        struct def defs[] = { { .key = "SUB_UID_MIN", .value = 100000 }, { .key = "SUB_UID_MAX", .value = 600100000 },
                              { .key = "SUB_UID_COUNT", .value = 65536 }, { .key = "SUB_GID_MIN", .value = 100000 },
                              { .key = "SUB_GID_MAX", .value = 600100000 },
                              { .key = "SUB_GID_COUNT", .value = 65536 } };
        char *text = NULL;
        size_t len = 0;
        int r = read_defs(rootfd, &text, &len, e);

        if (r == 0 && text)
                r = parse_defs(text, len, LOGINDEFS, defs, sizeof(defs) / sizeof(defs[0]), e);
        free(text);
        if (r < 0)
                return r;
        /* useradd hands out count ids from anywhere in [MIN, MAX]: the last range ends at MAX + COUNT - 1. */
        *lo = defs[0].value < defs[3].value ? defs[0].value : defs[3].value;
        *end = defs[1].value + defs[2].value > defs[4].value + defs[5].value ? defs[1].value + defs[2].value :
                                                                                defs[4].value + defs[5].value;
        return 0;
}
