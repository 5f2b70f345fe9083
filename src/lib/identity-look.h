/* The facts of a slot account that identity.c judges, looked up: its password fields, groups, subordinate ids. */
#pragma once

#include <stdbool.h>
#include <sys/types.h>

#include "error.h"
#include "identity.h"
#include "nss.h"

/*
 * The password field of name's passwd entry (pwfield_passwd) or of its shadow entry
 * (pwfield_shadow, root only): 1 with *out malloc'ed (clear it with explicit_bzero before
 * free), 0 when there is no such entry, -errno when the lookup failed (the shadow entry
 * asked by anyone but root fails with -EACCES, never "no entry").
 */
int slots_pwfield_passwd(const char *name, char **out);
int slots_pwfield_shadow(const char *name, char **out);

/* Both fields of an account, as slots_pwfields_lookup() found them. */
struct slots_pwfields {
        char *passwd;                   /* the passwd entry's password field */
        char *shadow;                   /* the shadow entry's; NULL: none, or not known */
        bool shadow_known;              /* the shadow entry was looked up: shadow NULL is "none" */
        int shadow_err;                 /* else why not: -errno (-EACCES: not root) */
};

/*
 * Both fields of name through NSS into f (clear it with slots_pwfields_clear()): the
 * passwd entry's, and the shadow entry's where it can be read.  Returns 0, -ENOENT when
 * there is no passwd entry, or -errno when its lookup failed (-ENOMEM: f holds nothing).
 */
int slots_pwfields_lookup(const char *name, struct slots_pwfields *f);
void slots_pwfields_clear(struct slots_pwfields *f);

/*
 * libxcrypt's word on hash (crypt_checksalt(), libcrypt.so.1 loaded with dlopen on first
 * use, so that only a command that needs it pays for it).  *have_lib is false when the
 * library or the function is missing (the method is then not asked).
 */
enum slots_hash_method slots_hash_method_of(const char *hash, bool *have_lib);

/*
 * Puts f into id (which borrows its strings) with libxcrypt's word on the field pam_unix
 * checks (slots_identity_password()), asked only of a field that is neither empty nor
 * locked.  *have_lib (may be NULL) is false when that word was needed and libcrypt could
 * not be loaded.
 */
void slots_pwfields_into(const struct slots_pwfields *f, struct slots_identity *id, bool *have_lib);

/*
 * rootfd's file path (/etc/passwd, /etc/group, /etc/nsswitch.conf: an absolute path inside the
 * tree, through the resolver) whole into *text: 0 (*text NULL when there is no such file),
 * -errno when it cannot be read.
 */
int slots_account_text(int rootfd, const char *path, char **text);

/* One line of an account file: its name, its id field (-1: none), its member list. */
struct slots_idline {
        const char *name, *list;
        size_t nlen, llen;
        long id;
};

/* An account file's text and its lines, optionally indexed by name and by id (a run over a pool). */
struct slots_idfile {
        const char *path;
        char *text;
        struct slots_idline *l;
        size_t n;
        size_t *by_name, *by_id;        /* NULL: not indexed (one slot's look scans the lines) */
};

/*
 * Reads rootfd's path ("/etc/passwd", "/etc/group" or "/etc/gshadow") once into f (a missing
 * file: no lines), indexed when asked.  Returns 0 or -errno (f then holds nothing).
 */
int slots_idfile_read(int rootfd, const char *path, bool indexed, struct slots_idfile *f);
/* The same from text (malloc'ed or NULL; f owns it from here, even on an error). */
int slots_idfile_text(const char *path, char *text, bool indexed, struct slots_idfile *f);
void slots_idfile_free(struct slots_idfile *f);
/* The first line of name, or NULL. */
const struct slots_idline *slots_idfile_name(const struct slots_idfile *f, const char *name);

/* Every other name a slot's identity answers to (identity.h), and what it was looked up from. */
struct slots_identity_names {
        uid_t uid;
        gid_t gid;                      /* its group's gid: the group's own line, else the primary gid */
        const struct slots_idline *own; /* its passwd line; NULL: none (a directory's account) */
        struct slots_identity_name *uid_names, *gid_names, *members;    /* names malloc'ed */
        size_t n_uid_names, n_gid_names, n_members;
};

/*
 * From files (/etc/passwd, /etc/group, /etc/gshadow as slots_idfile_read() read them) and, where
 * nsswitch.conf's text names a directory for passwd or group, the name service's answer by uid
 * and by gid (and the members of a group /etc/group does not list): every name of the uid, of
 * the group's gid, every member of the group.  Returns 0 or -ENOMEM.
 */
int slots_identity_names_look(const struct slots_idfile files[3], const char *nsswitch, const char *name,
                              uid_t uid, gid_t gid, struct slots_identity_names *o);
void slots_identity_names_free(struct slots_identity_names *o);
/* Points id's uid, gid and name lists at o's. */
void slots_identity_names_into(const struct slots_identity_names *o, struct slots_identity *id);

/* What slots_identity_look() found, and the storage id points into. */
struct slots_identity_facts {
        struct slots_identity id;
        struct slots_identity_group *groups;
        char **group_names;
        struct slots_subids subuid, subgid;
        struct slots_pwfields pw;
        char *shared;
        struct slots_identity_names names;
};

/*
 * Looks up what identity.c judges of the one slot account name (pw: its passwd entry)
 * under config prefix and shell, without a map of the pool: the groups that name it
 * (primary first: getgrouplist(), each group named by its gid through NSS), its ranges in
 * rootfd's /etc/subuid and /etc/subgid (and another owner's holding its uid or gid), every
 * other name of its uid (/etc/passwd) and of its group's gid (/etc/group), every member of
 * its group (/etc/group and /etc/gshadow), what the directory answers for them where
 * nsswitch.conf names one, and both password fields; each file read once; the account, and each
 * named group, not in rootfd's /etc/passwd or /etc/group is taken as a directory's (an
 * unreadable file: as local).  Every fact is known on success: a lookup that fails (the
 * shadow entry unreadable when the passwd field says shadow, too) is an error naming it.
 * Returns 0 with *f filled (free with slots_identity_facts_free()), or -errno with e set
 * (kind failed).
 */
int slots_identity_look(int rootfd, const char *prefix, const char *shell, const char *name,
                        const struct slots_pw *pw, struct slots_identity_facts *f, struct slots_error *e);
void slots_identity_facts_free(struct slots_identity_facts *f);
