/* The pool's systemd slices: the `slice` values, the unit names and the text of the unit files. */
#include <errno.h>
#include <inttypes.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <systemd/sd-daemon.h>

#include "size.h"
#include "slice.h"

/* What a property takes, as systemd.resource-control(5) has it (systemd 252). */
enum syntax {
        S_MEMORY,       /* bytes, K/M/G/T, "N%" of the host's memory, "infinity" */
        S_SWAP,         /* bytes, K/M/G/T, "infinity" */
        S_TASKS,        /* a count from 1, "N%" of the kernel's ceiling, "infinity" */
        S_QUOTA,        /* "N%" from 1, over 100 for more than one CPU */
        S_WEIGHT,       /* 1 to 10000 */
};

static const struct {
        const char *name;
        enum syntax syntax;
} keys[SLOTS_SLICE_MAX_KEY] = {
        [SLOTS_SLICE_MEMORY_MAX] = { "MemoryMax", S_MEMORY },
        [SLOTS_SLICE_MEMORY_HIGH] = { "MemoryHigh", S_MEMORY },
        [SLOTS_SLICE_MEMORY_SWAP_MAX] = { "MemorySwapMax", S_SWAP },
        [SLOTS_SLICE_TASKS_MAX] = { "TasksMax", S_TASKS },
        [SLOTS_SLICE_CPU_QUOTA] = { "CPUQuota", S_QUOTA },
        [SLOTS_SLICE_CPU_WEIGHT] = { "CPUWeight", S_WEIGHT },
        [SLOTS_SLICE_IO_WEIGHT] = { "IOWeight", S_WEIGHT },
};

#define WEIGHT_MAX 10000
/* A thousand CPUs: far above any host, far below an overflow of systemd's microseconds. */
#define QUOTA_MAX 100000

const char *slots_slice_key_name(enum slots_slice_key key)
{
        return key < SLOTS_SLICE_MAX_KEY ? keys[key].name : NULL;
}

int slots_slice_key_from_name(const char *name)
{
        for (int i = 0; i < SLOTS_SLICE_MAX_KEY; i++)
                if (strcmp(keys[i].name, name) == 0)
                        return i;
        return -1;
}

/* "N%" with lo <= N <= hi. */
static int parse_percent(const char *s, uint64_t lo, uint64_t hi, struct slots_slice_value *out)
{
        uint64_t v;
        int i = slots_digits(s, &v);

        if (i <= 0 || strcmp(s + i, "%") != 0 || v < lo || v > hi)
                return -EINVAL;
        out->kind = SLOTS_SLICE_PERCENT;
        out->n = v;
        return 0;
}

/* "123", "512K", "2G": strict, no sign, space, fraction or other suffix. */
static int parse_size(const char *s, struct slots_slice_value *out)
{
        uint64_t v;
        int r = slots_size_parse(s, true, &v);

        /* systemd's own "infinity" is UINT64_MAX: a size must stay below it */
        if (r < 0 || v == UINT64_MAX)
                return r < 0 ? r : -ERANGE;
        out->kind = SLOTS_SLICE_NUMBER;
        out->n = v;
        return 0;
}

static int parse_value(json_t *j, enum syntax syn, struct slots_slice_value *out)
{
        const char *s = json_string_value(j);

        if (json_is_integer(j)) {
                json_int_t i = json_integer_value(j);

                if (syn == S_QUOTA || i < (syn == S_WEIGHT || syn == S_TASKS ? 1 : 0) ||
                    (syn == S_WEIGHT && i > WEIGHT_MAX) || (uint64_t) i == UINT64_MAX)
                        return -EINVAL;
                out->kind = SLOTS_SLICE_NUMBER;
                out->n = (uint64_t) i;
                return 0;
        }
        if (!s || syn == S_WEIGHT)
                return -EINVAL;
        if (strcmp(s, "infinity") == 0 && syn != S_QUOTA) {
                out->kind = SLOTS_SLICE_INFINITY;
                out->n = 0;
                return 0;
        }
        switch (syn) {
        case S_QUOTA:
                return parse_percent(s, 1, QUOTA_MAX, out);
        case S_MEMORY:
                if (strchr(s, '%'))
                        return parse_percent(s, 1, 100, out);
                return parse_size(s, out);
        case S_SWAP:
                return parse_size(s, out);
        case S_TASKS:
                if (strchr(s, '%'))
                        return parse_percent(s, 1, 100, out);
                if (parse_size(s, out) < 0 || out->n == 0 || strpbrk(s, "KMGT"))
                        return -EINVAL;
                return 0;
        default:
                return -EINVAL;
        }
}

static const char *expected(enum syntax syn)
{
        switch (syn) {
        case S_MEMORY:
                return "bytes as a number, a string with K, M, G or T (powers of 1024), a percentage of "
                       "the host's memory from \"1%\" to \"100%\", or \"infinity\"";
        case S_SWAP:
                return "bytes as a number, a string with K, M, G or T (powers of 1024), or \"infinity\"";
        case S_TASKS:
                return "a number of tasks from 1, a percentage from \"1%\" to \"100%\", or \"infinity\"";
        case S_QUOTA:
                return "a percentage of one CPU as a string, from \"1%\" (\"200%\" is two CPUs)";
        default:
                return "an integer from 1 to 10000";
        }
}

int slots_slice_props_parse(struct json_t *obj, const struct slots_jsrc *src, const struct slots_jpath *path,
                            size_t n, struct slots_slice_props *out, struct slots_error *e)
{
        struct slots_jpath p[8];
        const char *key;
        json_t *v;

        memset(out, 0, sizeof(*out));
        if (n + 1 > sizeof(p) / sizeof(p[0]))
                return -EINVAL;
        if (n > 0)
                memcpy(p, path, n * sizeof(p[0]));
        if (!json_is_object(obj))
                return slots_json_fail(e, src, p, n, false,
                            "%s: must be an object of systemd properties ({\"MemoryMax\": \"2G\", ...})",
                            n > 0 && path[n - 1].key ? path[n - 1].key : "slice");
        json_object_foreach(obj, key, v) {
                int k = slots_slice_key_from_name(key);

                p[n] = (struct slots_jpath){ .key = key };
                if (k < 0)
                        return slots_json_fail(e, src, p, n + 1, true,
                                    "unknown property \"%s\" (known: MemoryMax, MemoryHigh, MemorySwapMax, "
                                    "TasksMax, CPUQuota, CPUWeight, IOWeight)", key);
                if (parse_value(v, keys[k].syntax, &out->v[k]) < 0)
                        return slots_json_fail(e, src, p, n + 1, false, "property \"%s\": must be %s", key,
                                    expected(keys[k].syntax));
                out->v[k].set = true;
        }
        return 0;
}

void slots_slice_overlay(struct slots_slice_props *base, const struct slots_slice_props *top)
{
        for (int i = 0; i < SLOTS_SLICE_MAX_KEY; i++)
                if (top->v[i].set)
                        base->v[i] = top->v[i];
}

const char *slots_slice_value_format(const struct slots_slice_value *v, char buf[static 24])
{
        switch (v->kind) {
        case SLOTS_SLICE_INFINITY:
                snprintf(buf, 24, "infinity");
                break;
        case SLOTS_SLICE_PERCENT:
                snprintf(buf, 24, "%" PRIu64 "%%", v->n);
                break;
        default:
                snprintf(buf, 24, "%" PRIu64, v->n);
                break;
        }
        return buf;
}

static bool plain(char c, bool first)
{
        if (c == '.')
                return !first;
        return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == ':' ||
               c == '_';
}

int slots_unit_escape(const char *s, char *buf, size_t size)
{
        static const char hex[] = "0123456789abcdef";
        size_t o = 0;

        for (size_t i = 0; s[i]; i++) {
                unsigned char c = (unsigned char) s[i];
                bool keep = c == '/' || plain((char) c, i == 0);

                if (o + (keep ? 1 : 4) + 1 > size)
                        return -ENAMETOOLONG;
                if (c == '/') {
                        buf[o++] = '-';
                } else if (keep) {
                        buf[o++] = (char) c;
                } else {
                        buf[o++] = '\\';
                        buf[o++] = 'x';
                        buf[o++] = hex[c >> 4];
                        buf[o++] = hex[c & 15];
                }
        }
        if (size == 0)
                return -ENAMETOOLONG;
        buf[o] = '\0';
        return (int) o;
}

/* "slots-" + each part escaped, joined by "-", + suffix. */
static int unit_name(const char *const *parts, size_t n, const char *suffix, char buf[static SLOTS_UNIT_NAME_MAX])
{
        size_t o = strlen("slots");
        int w;

        memcpy(buf, "slots", o + 1);
        for (size_t i = 0; i < n; i++) {
                if (o + 2 > SLOTS_UNIT_NAME_MAX)
                        return -ENAMETOOLONG;
                buf[o++] = '-';
                w = slots_unit_escape(parts[i], buf + o, SLOTS_UNIT_NAME_MAX - o);
                if (w < 0)
                        return w;
                o += (size_t) w;
        }
        if (o + strlen(suffix) + 1 > SLOTS_UNIT_NAME_MAX)
                return -ENAMETOOLONG;
        memcpy(buf + o, suffix, strlen(suffix) + 1);
        return 0;
}

int slots_slice_pool_unit(const char *service, char buf[static SLOTS_UNIT_NAME_MAX])
{
        const char *parts[] = { service };

        return unit_name(parts, 1, ".slice", buf);
}

int slots_slice_slot_unit(const char *service, const char *slot, char buf[static SLOTS_UNIT_NAME_MAX])
{
        const char *parts[] = { service, slot };

        return unit_name(parts, 2, ".slice", buf);
}

char *slots_slice_render(const char *what, const struct slots_slice_props *p)
{
        char *text = NULL, val[24];
        size_t len = 0;
        FILE *f = open_memstream(&text, &len);

        if (!f)
                return NULL;
        /* A unit file expands "%" specifiers: what is a name from the config, which holds none. */
        fprintf(f, "# Written by slots-provision from the \"slice\" key of slots.conf(5); "
                   "it replaces any edit.\n[Unit]\nDescription=slots: %s\n\n[Slice]\n", what);
        for (int i = 0; i < SLOTS_SLICE_MAX_KEY; i++)
                if (p->v[i].set)
                        fprintf(f, "%s=%s\n", keys[i].name, slots_slice_value_format(&p->v[i], val));
        if (ferror(f)) {
                fclose(f);
                free(text);
                return NULL;
        }
        if (fclose(f) != 0) {
                free(text);
                return NULL;
        }
        return text;
}

bool slots_systemd_booted(void)
{
        return sd_booted() > 0;
}
