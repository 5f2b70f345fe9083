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

struct ctx {
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
};

/* An account change planned in the check pass, reported once the files are written. */
struct prov_line {
        char *text;
        unsigned slot;                  /* as ctx.slot when it was planned */
};

/* provision-report.c: every message goes through these to opts->report. */
void prov_change(struct ctx *x, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void prov_note(struct ctx *x, enum slots_prov_kind kind, const char *object, const char *fix, const char *fmt,
               ...) __attribute__((format(printf, 5, 6)));
void prov_failed(struct ctx *x, const char *object, const char *fix, const char *fmt, ...)
        __attribute__((format(printf, 4, 5)));
const char *prov_fmt_fix(struct ctx *x, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
const char *prov_dir_fix(struct ctx *x, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
int prov_acct_line(struct ctx *x, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void prov_report_accounts(struct ctx *x);
void prov_index_slots(struct ctx *x);
/* Whether gid is the own group of a slot of the pool (GID = UID). */
bool prov_slot_gid(struct ctx *x, gid_t gid);
const char *prov_uid_str(struct ctx *x, uid_t uid, char *buf, size_t size);
const char *prov_gid_str(struct ctx *x, gid_t gid, char *buf, size_t size);

#define WARN(x, obj, fix, ...) prov_note(x, SLOTS_PROV_WARNING, obj, fix, __VA_ARGS__)
/* A step that failed (a system call's error): reported, the run goes on, and it ends with an error. */
#define FAILED(x, obj, fix, ...) prov_failed(x, obj, fix, __VA_ARGS__)
#define PROBLEM(x, obj, fix, ...) prov_note(x, SLOTS_PROV_PROBLEM, obj, fix, __VA_ARGS__)

/* provision-accounts.c: ids, lookups and the account plan (in memory, written by the run). */
void prov_nsswitch_warn(struct ctx *x);
int prov_plan_accounts(struct ctx *x);

/* provision-folders.c: configured roots, slot folders, release traversal bits. */
int prov_open_root(struct ctx *x, const char *path, const char *what, bool service_may_own);
int prov_open_dirs(struct ctx *x, const char *path);
int prov_slot_folders(struct ctx *x);
int prov_releases(struct ctx *x);

/* provision-shared.c: the shared folders and what lies below them. */
int prov_shared_dirs(struct ctx *x);

/* provision-files.c: the table, the slotctl config and the sudoers drop-in. */
int prov_table_check(struct ctx *x);
int prov_table_step(struct ctx *x);
bool prov_sudo_installed(struct ctx *x);
int prov_sudoers_check(struct ctx *x);
int prov_files_step(struct ctx *x);
