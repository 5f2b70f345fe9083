/* The config file (slots.conf(5)): strict parse, defaults resolved in one place. */
#pragma once

#include <stdbool.h>
#include <sys/stat.h>
#include <stddef.h>
#include <sys/types.h>

#include "error.h"
#include "rlimits.h"
#include "slice.h"

#define SLOTS_DEFAULT_CONFIG "/etc/slots/slots.conf"
#define SLOTS_DEFAULT_TABLE "/etc/slots/slots.json"
#define SLOTS_DEFAULT_SLOTCTL "/etc/slots/slotctl.json"

struct slots_slot_limits {
        unsigned slot;
        struct slots_limits limits;
};

struct slots_slot_slice {
        unsigned slot;
        struct slots_slice_props props;
};

struct slots_config {
        char *path;                     /* where it was read from */
        char *service;
        char *service_group;            /* NULL: the primary group of service */
        char *prefix;                   /* shared group is <prefix>shared */
        unsigned slots;                 /* pool size, 1..9999 */
        bool uid_range_set;             /* false: SYS_UID_MIN/MAX of login.defs */
        uid_t uid_min, uid_max;
        uid_t uid_base;                 /* 0: unset; else slotNN is uid_base + NN, <prefix>shared uid_base */
        char *shell;
        char *app_root;                 /* NULL when unset */
        char *launcher;                 /* NULL when unset */
        char *docs_root;                /* NULL when unset */
        char *user_tree;                /* relative to docs_root, holds "{user}" */
        char *slots_root;
        char **shared_dirs;             /* relative to docs_root */
        size_t n_shared_dirs;
        char **private_paths;           /* absolute */
        size_t n_private_paths;
        char *table;
        char *slotctl_config;
        char *slotctl;                  /* NULL: the service runs the launcher itself */
        char *run_as_group;             /* NULL when unset */
        char **sudo_env;                /* names for sudo --preserve-env; "X*" is a prefix */
        size_t n_sudo_env;
        char **probe;                   /* argv of the check's chain probe */
        size_t n_probe;
        bool has_limits;
        struct slots_limits limits_default;
        struct slots_slot_limits *slot_limits;
        size_t n_slot_limits;
        bool has_slice;                 /* false: no slice units, sessions stay where they are */
        struct slots_slice_props slice_pool, slice_default;
        struct slots_slot_slice *slot_slice;
        size_t n_slot_slice;
        bool accounts_in_directory;     /* "accounts": "directory"; never write them into the local files */
        bool accounts_set;              /* "accounts" is in the file (provision fails closed without it on a fleet host) */
};

/* The config path: SLOTS_CONFIG from the environment, else the built-in default. */
const char *slots_config_default_path(void);

/* Parses config text; file names it in errors.  Returns 0, -EBADMSG or -ENOMEM. */
int slots_config_parse(const char *text, size_t len, const char *file, struct slots_config **ret,
                       struct slots_error *e);

/*
 * Reads and parses path, resolved inside rootfd (AT_FDCWD for the host).  Returns
 * 0, -EBADMSG (invalid content) or another -errno (cannot read: the error names
 * the file).
 */
int slots_config_load(int rootfd, const char *path, struct slots_config **ret, struct slots_error *e);

enum {
        /*
         * For pam_slots, which sets limits inside setuid programs: the path must be
         * absolute, and the file owned by root (or the caller: tests run unprivileged)
         * and not writable by group or others; else -EINVAL / -EPERM.
         */
        SLOTS_CONFIG_ROOT_ONLY = 1 << 0,
        /*
         * For the commands that act as root (assign, release, provision): the file
         * read must pass slots_config_writers() (owned by root, not writable by group
         * or others); else -EPERM, refused, with the fix.
         */
        SLOTS_CONFIG_ROOT_OWNED = 1 << 1,
};

/*
 * The one rule for a config others can write, which pam_slots, the commands and
 * check share: the file is owned by root (or by `also`; (uid_t) -1: nobody else)
 * and writable by neither its group nor others.  Returns 0, or -EPERM with a
 * refusal that names the file, its mode and owner, and the fix.
 */
int slots_config_writers(const struct stat *st, const char *path, uid_t also, struct slots_error *e);

/* The same rule on the file at path inside rootfd, for those that report it (status, check). */
int slots_config_writers_at(int rootfd, const char *path, struct slots_error *e);

/* slots_config_load with SLOTS_CONFIG_* flags: the one reader of the config file. */
int slots_config_load_flags(int rootfd, const char *path, unsigned flags, struct slots_config **ret,
                            struct slots_error *e);

void slots_config_free(struct slots_config *c);

/* The executor allowlist, the default of sudo_env (NULL-terminated). */
extern const char *const slots_config_default_sudo_env[];

/* The limits of slot n: limits.default overlaid with limits.slotNN. */
void slots_config_limits_for(const struct slots_config *c, unsigned n, struct slots_limits *out);

/* The properties of slot n's slice: slice.default overlaid with slice.slotNN. */
void slots_config_slice_for(const struct slots_config *c, unsigned n, struct slots_slice_props *out);

/* The user's tree relative to docs_root ("{user}" replaced); malloc'ed, NULL on ENOMEM. */
char *slots_config_user_tree(const struct slots_config *c, const char *user);

/* True when sudo_env passes the environment name: the name itself, or a prefix "X*" of it. */
bool slots_config_passes_env(const struct slots_config *c, const char *name);

/* True when path is private_paths entry or below one. */
bool slots_config_is_private(const struct slots_config *c, const char *path);
