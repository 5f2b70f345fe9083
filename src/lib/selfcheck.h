/* The read-only self-check (slots-admin(8), "check"): every layer of the slot chain, as the slots see it. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <sys/acl.h>
#include <sys/stat.h>
#include <sys/types.h>

#include "ids.h"
#include "privdrop.h"

enum slots_check_status {
        SLOTS_CHECK_PASS,
        SLOTS_CHECK_FAIL,
        SLOTS_CHECK_SKIP,
};

/* One row of the report.  No text in it ever holds an application user id. */
struct slots_check_row {
        enum slots_check_status status;
        const char *check;              /* "config", "table", "runner-reachable", ... (static) */
        char slot[SLOTS_NAME_MAX];      /* "slot03", or "-" for a host-wide check */
        char *detail;                   /* what was found (for a failure: what is wrong) */
        char *fix;                      /* how to repair a failure; NULL for PASS and SKIP */
};

struct slots_check_report {
        struct slots_check_row *rows;
        size_t n, cap;
        unsigned passed, failed, skipped;
};

struct slots_check_opts {
        const char *config;             /* NULL: SLOTS_CONFIG or the default */
        const char *sudo;               /* NULL: /usr/bin/sudo */
        int sudo_timeout_ms;            /* <= 0: 5000 */
        int probe_timeout_ms;           /* <= 0: 10000 (a hung NFS mount must not hang the check) */
};

/*
 * Runs every check and fills rep (free it with slots_check_report_free).  Needs
 * root: it reads /etc/shadow and probes in forked children that drop to each
 * slot and to the service account.  Changes nothing: no mode, owner, table or
 * config is written and the table's lock is not taken.  A config that cannot be
 * loaded is one FAIL row and the end of the run.  Returns 0 (whatever the
 * rows say) or -ENOMEM.
 */
int slots_selfcheck(const struct slots_check_opts *o, struct slots_check_report *rep);

void slots_check_report_free(struct slots_check_report *rep);

/* "PASS", "FAIL", "SKIP". */
const char *slots_check_status_name(enum slots_check_status s);

/*
 * The permission model of one file: owner, group, mode and POSIX ACL, as the
 * kernel evaluates them (posix_acl_permission, generic_permission).  Exposed
 * so the unit tests can check the evaluation and the fixes it derives.
 */
#define SLOTS_PERM_R 4u
#define SLOTS_PERM_W 2u
#define SLOTS_PERM_X 1u
#define SLOTS_PERM_ENTRIES 64

struct slots_perm_entry {
        unsigned id;                    /* uid or gid */
        unsigned perm;                  /* SLOTS_PERM_* bits */
};

struct slots_perm_model {
        uid_t owner;
        gid_t group;
        bool dir;
        bool extended;                  /* has an ACL beyond the mode bits */
        bool truncated;                 /* more named entries than SLOTS_PERM_ENTRIES */
        unsigned user_obj, group_obj, other, mask;
        bool has_mask;
        size_t n_users, n_groups;
        struct slots_perm_entry users[SLOTS_PERM_ENTRIES];
        struct slots_perm_entry groups[SLOTS_PERM_ENTRIES];
};

enum slots_perm_via {
        SLOTS_VIA_OWNER,                /* the owner bits (user::) decided */
        SLOTS_VIA_USER,                 /* a named user entry (user:NAME:) decided */
        SLOTS_VIA_GROUP,                /* the group class (group::, group:NAME:, with the mask) decided */
        SLOTS_VIA_OTHER,                /* the other bits decided */
};

struct slots_perm_verdict {
        bool allowed;
        enum slots_perm_via via;
        int entry;                      /* index into users/groups; -1 for group:: */
        bool masked;                    /* the entry grants it but the mask takes it away */
};

/* Fills m from a stat and the access ACL of the file (acl may be NULL: mode bits only). */
void slots_perm_from_stat(struct slots_perm_model *m, const struct stat *st, acl_t acl);

/* Whether the account id (uid, primary gid, groups) gets all of `want` (SLOTS_PERM_* bits). */
struct slots_perm_verdict slots_perm_eval(const struct slots_perm_model *m, const struct slots_ident *id,
                                          unsigned want);

/* How to name accounts and groups in fix lines; NULL members give numeric ids. */
struct slots_perm_names {
        const char *(*user)(void *arg, uid_t uid, char *buf, size_t size);
        const char *(*group)(void *arg, gid_t gid, char *buf, size_t size);
        void *arg;
        uid_t new_owner;                /* the owner a fix gives to a file the account must not own */
};

/*
 * Shell commands that give id all of `want` on path (shown as `display`), in
 * the kernel's terms: chmod for owner, group and other bits of a file without
 * an ACL, setfacl for ACL entries and the mask.  Each candidate is applied to
 * a copy of the model and re-evaluated until it allows; "" when it already
 * does.  Returns the length written (truncated at size), -E2BIG when no fix was
 * found in a few steps.
 */
int slots_perm_fix_grant(const struct slots_perm_model *m, const struct slots_ident *id, unsigned want,
                         const char *display, const struct slots_perm_names *names, char *buf, size_t size);

/*
 * Shell commands that take every one of r, w and x (x only on a folder) on
 * path away from id, the same way.  "" when id gets none already.
 */
int slots_perm_fix_deny(const struct slots_perm_model *m, const struct slots_ident *id, const char *display,
                        const struct slots_perm_names *names, char *buf, size_t size);
