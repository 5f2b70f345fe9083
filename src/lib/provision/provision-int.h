/* The state of one slots_provision() run, shared by the provision-*.c files and nothing else. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "accounts.h"
#include "config.h"
#include "error.h"
#include "ids.h"
#include "dropin.h"
#include "provision.h"
#include "strbuf.h"

#define SUDOERS_DIR SLOTS_SUDOERS_DIR

struct pslot {
        char name[SLOTS_NAME_MAX];
        uid_t uid;                      /* GID = UID */
};

struct prov_run {
        int rootfd, etcfd;
        const struct slots_config *c;
        const struct slots_prov_opts *o;
        struct slots_error *e;
        struct slots_accounts *db;
        uid_t id_min, id_max, cursor;
        bool cursor_done;
        char shared[64];
        gid_t shared_gid;
        uid_t svc_uid;
        gid_t table_gid;
        char *table_group;
        struct pslot *slots;
        struct pslot **by_uid;          /* the slots sorted by uid once planned (NULL: scan them) */
        struct prov_line *acct_lines;   /* account changes, reported once they are written */
        size_t n_acct_lines;
        unsigned slot;                  /* the slot (1-based) the messages being made are about; 0 none */
        unsigned changes, problems;
        unsigned failures;              /* steps that failed (I/O errors); the run ends with exit 1 */
        char *failed_obj, *failed_text; /* the first of them */
        char **dry_made;                /* folders a dry pass has reported as created */
        size_t n_dry_made;
        bool dir_missing;               /* the last folder looked at had to be made: so, likely, has the next */
        bool quiet;                     /* the check before changing: problems only */
        bool dry;                       /* this pass changes nothing */
        bool oom;                       /* a message could not be formatted: the run ends with ENOMEM */
        struct strbuf text, fix;        /* the message being reported, and its fix */
        char *range;                    /* the id range as messages name it */
        char *subuid, *subgid;          /* the tree's /etc/subuid and /etc/subgid (NULL: none) */
        struct slots_idfile *idfiles;   /* passwd, group, gshadow as loaded, indexed (the identity's other names) */
        char *nsswitch;                 /* the host's nsswitch.conf (NULL: an image, or none) */
};

/* An account change planned in the check pass, reported once the files are written. */
struct prov_line {
        char *text;
        unsigned slot;                  /* as ctx.slot when it was planned */
};

/* provision-report.c: every message goes through these to opts->report. */
void prov_change(struct prov_run *x, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void prov_note(struct prov_run *x, enum slots_prov_kind kind, const char *object, const char *fix, const char *fmt, ...)
        __attribute__((format(printf, 5, 6)));
void prov_failed(struct prov_run *x, const char *object, const char *fix, const char *fmt, ...)
        __attribute__((format(printf, 4, 5)));
const char *prov_fmt_fix(struct prov_run *x, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
const char *prov_dir_fix(struct prov_run *x, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
int prov_acct_line(struct prov_run *x, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void prov_report_accounts(struct prov_run *x);
void prov_index_slots(struct prov_run *x);
/* Whether gid is the own group of a slot of the pool (GID = UID). */
bool prov_slot_gid(struct prov_run *x, gid_t gid);
const char *prov_uid_str(struct prov_run *x, uid_t uid, char *buf, size_t size);
const char *prov_gid_str(struct prov_run *x, gid_t gid, char *buf, size_t size);

#define WARN(x, obj, fix, ...) prov_note(x, SLOTS_PROV_WARNING, obj, fix, __VA_ARGS__)
/* A step that failed (a system call's error): reported, the run goes on, and it ends with an error. */
#define FAILED(x, obj, fix, ...) prov_failed(x, obj, fix, __VA_ARGS__)
#define PROBLEM(x, obj, fix, ...) prov_note(x, SLOTS_PROV_PROBLEM, obj, fix, __VA_ARGS__)

/* provision-accounts.c: ids, lookups and the account plan (in memory, written by the run). */
void prov_nsswitch_warn(struct prov_run *x);
int prov_plan_accounts(struct prov_run *x);

/* provision-directory.c: accounts the name service serves (failed lookups, "accounts": "directory", LDIF fixes). */
struct slots_dirfix_change;
struct slots_identity_group;
enum prov_where { PROV_NONE, PROV_LOCAL, PROV_SERVED };
/* A lookup through NSS that failed (group: in the group database): the run's error, r returned. */
int prov_nss_failed(struct prov_run *x, int r, const char *what);
int prov_nss_group_failed(struct prov_run *x, int r, const char *what);
/* A fix that changes the entry where the directory keeps it: the human words, then the LDIF change. */
const char *prov_ldif_fix(struct prov_run *x, bool group, const char *name, const struct slots_dirfix_change *ch,
                          size_t n, const char *fmt, ...) __attribute__((format(printf, 6, 7)));
/* The fix that sets attr (and attr2) of the entry to value, or to num when value is NULL. */
const char *prov_ldif_set(struct prov_run *x, bool group, const char *name, const char *attr, const char *attr2,
                          unsigned num, const char *value);
/*
 * With "accounts": "directory", a slot's account or group in the local files, or neither
 * served, is a conflict: reported, and 1 (the slot is not planned further).  Else 0.
 */
int prov_dir_entry(struct prov_run *x, const char *name, enum prov_where user, enum prov_where group);
/*
 * Reads once a run what the identity's rule needs beside each slot's lookups: the tree's
 * /etc/subuid and /etc/subgid, the account files as loaded (indexed), and on the host
 * nsswitch.conf.  Returns 0 or -errno with x->e set.
 */
int prov_identity_files(struct prov_run *x);
int prov_identity_groups(struct prov_run *x, const char *name, bool served, gid_t gid,
                         struct slots_identity_group **out, size_t *n, char ***names);
void prov_identity_names_free(char **names);
/* The fix of "the service account is in group": gpasswd -d for a local group, else the LDIF change. */
void prov_service_apart_fix(struct prov_run *x, const char *group, bool local);

/* provision-folders.c: configured roots, slot folders, release traversal bits. */
int prov_open_root(struct prov_run *x, const char *path, const char *what, bool service_may_own);
int prov_open_dirs(struct prov_run *x, const char *path);
int prov_slot_folders(struct prov_run *x);
int prov_releases(struct prov_run *x);

/* provision-shared.c: the shared folders and what lies below them. */
int prov_shared_dirs(struct prov_run *x);

/* provision-files.c: the table, the slotctl config and the sudoers drop-in. */
int prov_table_check(struct prov_run *x);
int prov_table_step(struct prov_run *x);
bool prov_sudo_installed(struct prov_run *x);
int prov_sudoers_check(struct prov_run *x);
int prov_files_step(struct prov_run *x);
