/* Per-slot resource limits (rlimits): the typed parser shared by the config loader and pam_slots. */
#pragma once

#include <stdbool.h>
#include <sys/resource.h>

#include "error.h"
#include "jsonpos.h"

enum slots_limit_item {
        SLOTS_LIMIT_NPROC,
        SLOTS_LIMIT_NOFILE,
        SLOTS_LIMIT_AS,
        SLOTS_LIMIT_DATA,
        SLOTS_LIMIT_STACK,
        SLOTS_LIMIT_CPU,
        SLOTS_LIMIT_FSIZE,
        SLOTS_LIMIT_CORE,
        SLOTS_LIMIT_MEMLOCK,
        SLOTS_LIMIT_NICE,
        SLOTS_LIMIT_MAX_ITEM,
};

struct slots_limit {
        bool set;
        rlim_t soft, hard;      /* RLIM_INFINITY for "unlimited"; unused for nice */
        int nice;               /* SLOTS_LIMIT_NICE only: -20..19 */
};

struct slots_limits {
        struct slots_limit item[SLOTS_LIMIT_MAX_ITEM];
};

const char *slots_limit_item_name(enum slots_limit_item item);
/* Returns the item for a config key, or -1. */
int slots_limit_item_from_name(const char *name);

/*
 * Parses one limits object ({"nofile": 1024, "as": "2G", "cpu": {"soft": 60,
 * "hard": 120}, ...}) found at path (n steps) in src.  Every error names the
 * key, line and column; returns -EBADMSG then.
 */
struct json_t;  /* jansson's; only its callers include <jansson.h> */
int slots_limits_parse(struct json_t *obj, const struct slots_jsrc *src, const struct slots_jpath *path,
                       size_t n, struct slots_limits *out, struct slots_error *e);

/* Every item set in top replaces the same item of base. */
void slots_limits_overlay(struct slots_limits *base, const struct slots_limits *top);

/*
 * Applies every set item to the calling process (setrlimit; setpriority for
 * nice).  Returns 0, or -errno with *failed set to the item that could not be
 * set; items before it stay applied.
 */
int slots_limits_apply(const struct slots_limits *l, enum slots_limit_item *failed);
