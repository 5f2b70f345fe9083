/* The pool's systemd slices: the `slice` values, the unit names and the text of the unit files. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "error.h"
#include "jsonpos.h"

enum slots_slice_key {
        SLOTS_SLICE_MEMORY_MAX,
        SLOTS_SLICE_MEMORY_HIGH,
        SLOTS_SLICE_MEMORY_SWAP_MAX,
        SLOTS_SLICE_TASKS_MAX,
        SLOTS_SLICE_CPU_QUOTA,
        SLOTS_SLICE_CPU_WEIGHT,
        SLOTS_SLICE_IO_WEIGHT,
        SLOTS_SLICE_MAX_KEY,
};

enum slots_slice_kind {
        SLOTS_SLICE_NUMBER,     /* bytes, tasks or a weight */
        SLOTS_SLICE_PERCENT,    /* n is the percentage */
        SLOTS_SLICE_INFINITY,
};

struct slots_slice_value {
        bool set;
        enum slots_slice_kind kind;
        uint64_t n;
};

struct slots_slice_props {
        struct slots_slice_value v[SLOTS_SLICE_MAX_KEY];
};

/* The systemd property name of key ("MemoryMax", ...). */
const char *slots_slice_key_name(enum slots_slice_key key);
/* The key of a property name, or -1. */
int slots_slice_key_from_name(const char *name);

/*
 * Parses one object of properties ({"MemoryMax": "2G", "CPUQuota": "150%", ...})
 * found at path (n steps) in src.  Every error names the key, line and column
 * and says what the key takes; returns -EBADMSG then.
 */
struct json_t;
int slots_slice_props_parse(struct json_t *obj, const struct slots_jsrc *src, const struct slots_jpath *path,
                            size_t n, struct slots_slice_props *out, struct slots_error *e);

/* Every value set in top replaces the same value of base. */
void slots_slice_overlay(struct slots_slice_props *base, const struct slots_slice_props *top);

/* The value as a unit file takes it: bytes, "80%", "infinity".  buf holds 24 bytes. */
const char *slots_slice_value_format(const struct slots_slice_value *v, char buf[static 24]);

/* A unit name may hold 255 characters. */
#define SLOTS_UNIT_NAME_MAX 256

/*
 * s escaped as `systemd-escape` does: "/" becomes "-"; "-", "\", a leading "."
 * and every byte outside [A-Za-z0-9:_.] become "\xNN".  Returns the length, or
 * -ENAMETOOLONG when it does not fit in size (with its NUL).
 */
int slots_unit_escape(const char *s, char *buf, size_t size);

/* "slots-<service>.slice", the pool's slice; 0 or -ENAMETOOLONG. */
int slots_slice_pool_unit(const char *service, char buf[static SLOTS_UNIT_NAME_MAX]);
/* "slots-<service>-<slot>.slice", inside the pool's slice by its name; 0 or -ENAMETOOLONG. */
int slots_slice_slot_unit(const char *service, const char *slot, char buf[static SLOTS_UNIT_NAME_MAX]);

/*
 * The text of a slice unit file: a header that says who writes it, a
 * Description naming what (e.g. "slot03 of the service svc"), and one line per
 * property set.  malloc'ed; NULL on ENOMEM.
 */
char *slots_slice_render(const char *what, const struct slots_slice_props *p);

/* True when systemd runs as PID 1 (sd_booted()): only then are there slices. */
bool slots_systemd_booted(void);
