/* The kernel's permission model as data: owner, group, mode and ACL evaluated and fixed, and a path's steps judged. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <sys/stat.h>
#include <sys/types.h>

#include "acl.h"
#include "privdrop.h"
#include "strbuf.h"

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

/* Fills m from a stat and the access ACL of the file (acl from slots_acl_get(); NULL: mode bits only). */
void slots_perm_from_stat(struct slots_perm_model *m, const struct stat *st, const struct slots_acl *acl);

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

/* Whether id (primary gid or a supplementary group) is in gid. */
bool slots_perm_in_group(const struct slots_ident *id, gid_t gid);

/* Which of r, w, x (x only for a folder) id still gets; the verdict of the first one it gets. */
bool slots_perm_any(const struct slots_perm_model *m, const struct slots_ident *id, struct slots_perm_verdict *out);

/* "rwx" / "r-x" and "rx" for SLOTS_PERM_* bits. */
const char *slots_perm_str(unsigned p, char buf[static 4]);
const char *slots_perm_letters(unsigned p, char buf[static 4]);

/* Account and group names through NSS, the number when there is none (slots_perm_names callbacks). */
const char *slots_perm_user_name(void *arg, uid_t uid, char *buf, size_t size);
const char *slots_perm_group_name(void *arg, gid_t gid, char *buf, size_t size);

/* "0750 root:video-studio" (+acl) for a model. */
void slots_perm_sb_mode(struct strbuf *b, const struct slots_perm_model *m);

/* Why the model gives `who` what it does (v from slots_perm_eval): the bit or ACL entry that decided. */
void slots_perm_sb_why(struct strbuf *b, const struct slots_perm_model *m, const struct slots_perm_verdict *v,
                       const char *who, const char *shown, unsigned want);

/* A path as the kernel resolves it: every folder passed and the object at the end, with their models. */
struct slots_perm_step {
        char *path;             /* where the walk found it, symlinks resolved */
        bool traverse;          /* a folder passed through (needs x), or the end of the path */
        bool have_model;
        struct slots_perm_model m;
};

struct slots_perm_path {
        struct slots_perm_step *steps;
        size_t n;
        int err;                /* 0, or why the path could not be followed (as root) */
        char *err_path;
};

/* Frees what slots_perm_path_read() recorded. */
void slots_perm_path_free(struct slots_perm_path *w);

/*
 * True when the model of some step surely refuses id: x on a folder passed,
 * want_end at the end.  False when every step allows it or the walk cannot tell
 * (a step it could not follow or whose ACL it could not hold).
 */
bool slots_perm_path_denies(const struct slots_perm_path *w, const struct slots_ident *id, unsigned want_end);

/* The same over n steps of a walk (a shared prefix of several walks, or one step). */
bool slots_perm_steps_deny(const struct slots_perm_step *steps, size_t n, const struct slots_ident *id,
                           unsigned want_end);

/*
 * Whether the step refuses every account it names nowhere (no owner, named user,
 * owning or named group of it): they all get the other bits.
 */
bool slots_perm_step_denies_others(const struct slots_perm_step *s, unsigned want_end);

/* Whether two steps are the same path with the same model (so they judge every account alike). */
bool slots_perm_step_same(const struct slots_perm_step *a, const struct slots_perm_step *b);

/* The object at the end; NULL when the walk did not reach it. */
const struct slots_perm_step *slots_perm_path_end(const struct slots_perm_path *w);
