/* Per-slot resource limits (rlimits): the typed parser shared by the config loader and pam_slots. */
#include <errno.h>
#include <stdio.h>
#include <fcntl.h>
#include <inttypes.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "rlimits.h"
#include "size.h"

enum unit { UNIT_COUNT, UNIT_BYTES, UNIT_SECONDS, UNIT_NICE };

static const struct {
        const char *name;
        int resource;
        enum unit unit;
} items[SLOTS_LIMIT_MAX_ITEM] = {
        [SLOTS_LIMIT_NPROC] = { "nproc", RLIMIT_NPROC, UNIT_COUNT },
        [SLOTS_LIMIT_NOFILE] = { "nofile", RLIMIT_NOFILE, UNIT_COUNT },
        [SLOTS_LIMIT_AS] = { "as", RLIMIT_AS, UNIT_BYTES },
        [SLOTS_LIMIT_DATA] = { "data", RLIMIT_DATA, UNIT_BYTES },
        [SLOTS_LIMIT_STACK] = { "stack", RLIMIT_STACK, UNIT_BYTES },
        [SLOTS_LIMIT_CPU] = { "cpu", RLIMIT_CPU, UNIT_SECONDS },
        [SLOTS_LIMIT_FSIZE] = { "fsize", RLIMIT_FSIZE, UNIT_BYTES },
        [SLOTS_LIMIT_CORE] = { "core", RLIMIT_CORE, UNIT_BYTES },
        [SLOTS_LIMIT_MEMLOCK] = { "memlock", RLIMIT_MEMLOCK, UNIT_BYTES },
        [SLOTS_LIMIT_NICE] = { "nice", -1, UNIT_NICE },
};

const char *slots_limit_item_name(enum slots_limit_item item)
{
        return item < SLOTS_LIMIT_MAX_ITEM ? items[item].name : NULL;
}

int slots_limit_item_from_name(const char *name)
{
        for (int i = 0; i < SLOTS_LIMIT_MAX_ITEM; i++)
                if (strcmp(items[i].name, name) == 0)
                        return i;
        return -1;
}

/* Parses "123", "512K", "2G" (sizes only) and "unlimited"; strict: no sign, no space, no fraction. */
static int parse_string(const char *s, enum unit unit, rlim_t *out)
{
        uint64_t v;
        int r;

        if (strcmp(s, "unlimited") == 0) {
                *out = RLIM_INFINITY;
                return 0;
        }
        r = slots_size_parse(s, unit == UNIT_BYTES, &v);
        if (r < 0)
                return r;
        if (v >= (uint64_t) RLIM_INFINITY)
                return -ERANGE;
        *out = (rlim_t) v;
        return 0;
}

static int parse_scalar(json_t *v, enum unit unit, rlim_t *out)
{
        if (json_is_integer(v)) {
                json_int_t i = json_integer_value(v);
                if (i < 0)
                        return -ERANGE;
                *out = (rlim_t) i;
                return 0;
        }
        if (json_is_string(v))
                return parse_string(json_string_value(v), unit, out);
        return -EINVAL;
}

static const char *expected(enum unit unit)
{
        switch (unit) {
        case UNIT_BYTES:
                return "bytes as a number, a string with K, M, G or T (powers of 1024), \"unlimited\", "
                       "or {\"soft\": ..., \"hard\": ...}";
        case UNIT_SECONDS:
                return "seconds as a number, \"unlimited\", or {\"soft\": ..., \"hard\": ...}";
        case UNIT_NICE:
                return "an integer from -20 to 19";
        default:
                return "a number, \"unlimited\", or {\"soft\": ..., \"hard\": ...}";
        }
}

int slots_limits_parse(struct json_t *obj, const struct slots_jsrc *src, const struct slots_jpath *path,
                       size_t n, struct slots_limits *out, struct slots_error *e)
{
        struct slots_jpath p[8];
        const char *key;
        json_t *v;

        memset(out, 0, sizeof(*out));
        if (n + 2 > sizeof(p) / sizeof(p[0]))
                return -EINVAL;
        memcpy(p, path, n * sizeof(p[0]));
        if (!json_is_object(obj))
                return slots_json_fail(e, src, p, n, false, "%s: must be an object of limits",
                            n > 0 && path[n - 1].key ? path[n - 1].key : "limits");

        json_object_foreach(obj, key, v) {
                int item = slots_limit_item_from_name(key);
                struct slots_limit *l;
                int r;

                p[n] = (struct slots_jpath){ .key = key };
                if (item < 0)
                        return slots_json_fail(e, src, p, n + 1, true,
                                    "unknown limit \"%s\" (known: nproc, nofile, as, data, stack, cpu, "
                                    "fsize, core, memlock, nice)", key);
                l = &out->item[item];
                l->set = true;
                if (items[item].unit == UNIT_NICE) {
                        json_int_t i = json_is_integer(v) ? json_integer_value(v) : 100;
                        if (i < -20 || i > 19)
                                return slots_json_fail(e, src, p, n + 1, false, "limit \"%s\": must be %s", key,
                                            expected(UNIT_NICE));
                        l->nice = (int) i;
                        continue;
                }
                if (json_is_object(v)) {
                        const char *k2;
                        json_t *v2;
                        bool has_soft = false, has_hard = false;

                        json_object_foreach(v, k2, v2) {
                                rlim_t *dst;
                                p[n + 1] = (struct slots_jpath){ .key = k2 };
                                if (strcmp(k2, "soft") == 0) {
                                        dst = &l->soft;
                                        has_soft = true;
                                } else if (strcmp(k2, "hard") == 0) {
                                        dst = &l->hard;
                                        has_hard = true;
                                } else {
                                        return slots_json_fail(e, src, p, n + 2, true,
                                                    "limit \"%s\": unknown key \"%s\" (only \"soft\" and "
                                                    "\"hard\")", key, k2);
                                }
                                if (parse_scalar(v2, items[item].unit, dst) < 0)
                                        return slots_json_fail(e, src, p, n + 2, false, "limit \"%s\": must be %s",
                                                    key, expected(items[item].unit));
                        }
                        if (!has_soft || !has_hard)
                                return slots_json_fail(e, src, p, n + 1, false,
                                            "limit \"%s\": needs both \"soft\" and \"hard\"", key);
                        if (l->soft > l->hard)
                                return slots_json_fail(e, src, p, n + 1, false,
                                            "limit \"%s\": soft is above hard", key);
                        continue;
                }
                r = parse_scalar(v, items[item].unit, &l->soft);
                if (r < 0)
                        return slots_json_fail(e, src, p, n + 1, false, "limit \"%s\": must be %s", key,
                                    expected(items[item].unit));
                l->hard = l->soft;
        }
        return 0;
}

void slots_limits_overlay(struct slots_limits *base, const struct slots_limits *top)
{
        for (int i = 0; i < SLOTS_LIMIT_MAX_ITEM; i++)
                if (top->item[i].set)
                        base->item[i] = top->item[i];
}

/* RLIM_INFINITY for nofile is above fs.nr_open and the kernel refuses it; use the real ceiling. */
static rlim_t nofile_ceiling(void)
{
        char buf[32] = "";
        ssize_t n;
        int fd = open("/proc/sys/fs/nr_open", O_RDONLY | O_CLOEXEC);

        if (fd < 0)
                return 1024 * 1024;
        n = read(fd, buf, sizeof(buf) - 1);
        close(fd);
        if (n <= 0)
                return 1024 * 1024;
        buf[n] = '\0';
        return (rlim_t) strtoull(buf, NULL, 10);
}

int slots_limits_apply(const struct slots_limits *l, enum slots_limit_item *failed)
{
        for (int i = 0; i < SLOTS_LIMIT_MAX_ITEM; i++) {
                const struct slots_limit *it = &l->item[i];
                struct rlimit rl;

                if (!it->set)
                        continue;
                if (i == SLOTS_LIMIT_NICE) {
                        if (setpriority(PRIO_PROCESS, 0, it->nice) < 0)
                                goto fail;
                        continue;
                }
                rl.rlim_cur = it->soft;
                rl.rlim_max = it->hard;
                if (i == SLOTS_LIMIT_NOFILE) {
                        rlim_t ceil = nofile_ceiling();
                        if (rl.rlim_cur == RLIM_INFINITY)
                                rl.rlim_cur = ceil;
                        if (rl.rlim_max == RLIM_INFINITY)
                                rl.rlim_max = ceil;
                }
                if (setrlimit(items[i].resource, &rl) < 0)
                        goto fail;
                continue;
fail:
                if (failed)
                        *failed = (enum slots_limit_item) i;
                return -errno;
        }
        return 0;
}
