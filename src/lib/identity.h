/* A slot account's identity verdict: what of it another account could borrow or use, each with its fix. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "error.h"

/*
 * One subordinate id range of /etc/subuid or /etc/subgid: start .. start + count - 1, and
 * whose it is: owner NULL for the slot's own, else another owner's (as the file names it)
 * range that holds the slot's id, on line `line` of the file.
 */
struct slots_subid {
        unsigned long start, count;
        char *owner;
        unsigned line;
};

struct slots_subids {
        struct slots_subid *r;
        size_t n;
};

/*
 * The ranges text (the subuid(5) or subgid(5) format, "owner:start:count" a line)
 * gives the account name or its uid, and those of any other owner that hold the id
 * cover (the slot's uid in subuid, its gid in subgid; -1: none), in the file's order,
 * into out (free with slots_subids_free).  Blank lines, comments, lines of other owners
 * not holding cover and lines whose numbers do not parse, as newuidmap skips them, are
 * skipped; a count of 0 is no range.  Returns 0 or -ENOMEM.
 */
int slots_subid_parse(const char *text, const char *name, uid_t uid, long cover, struct slots_subids *out);

/*
 * Reads path ("/etc/subuid", "/etc/subgid") inside rootfd (AT_FDCWD or an image
 * root) through slots_read_text_fd() and parses it as slots_subid_parse() does.  A
 * missing file holds no range.  Returns 0 or -errno with e set (a failure).
 */
int slots_subid_read(int rootfd, const char *path, const char *name, uid_t uid, long cover,
                     struct slots_subids *out, struct slots_error *e);

void slots_subids_free(struct slots_subids *s);

/* A group that names the account: as a member, or as its primary group (its gid). */
struct slots_identity_group {
        const char *name;
        bool primary;
        bool directory;                 /* the group lives in a directory (LDAP): its membership is changed there */
};

/*
 * Another name the slot's identity answers to: an account with its uid, a group with its
 * gid, or a member of its group.  where is the file that lists it ("/etc/passwd",
 * "/etc/group", "/etc/gshadow"), or NULL for the name service (a directory).
 */
struct slots_identity_name {
        const char *name;
        const char *where;
};

/* What libxcrypt's crypt_checksalt() said of a password field; zero (not asked) by default. */
enum slots_hash_method {
        SLOTS_HASH_UNASKED = 0,         /* not asked: any field but a locked one is taken as usable */
        SLOTS_HASH_METHOD,              /* a method that can match a password (legacy DES too) */
        SLOTS_HASH_NO_METHOD,           /* invalid or disabled: no password matches it */
};

/*
 * Where the password pam_unix checks comes from.  pam_unix reads the passwd entry's field;
 * only when that says "in shadow" ("x", "##<name>", or NIS+'s "*NP*") does it read the
 * shadow entry's, and with no shadow entry then, no password matches.
 */
enum slots_pw_source {
        SLOTS_PW_UNKNOWN,               /* not known: the passwd field, or the shadow entry it points to */
        SLOTS_PW_PASSWD,                /* the passwd field is the password */
        SLOTS_PW_SHADOW,                /* the passwd field says shadow: the shadow entry's field */
        SLOTS_PW_NO_SHADOW,             /* the passwd field says shadow, and there is no shadow entry */
};

/* What is known of a slot account. */
struct slots_identity {
        const char *name;               /* slotNN; its own group has the same name */
        const char *shell;              /* its login shell; NULL: not known */
        const char *want_shell;         /* the configured shell */
        const char *passwd_field;       /* the passwd entry's password field; NULL: not known */
        const char *shadow_field;       /* the shadow entry's; NULL: none (shadow_known) or not known */
        bool shadow_known;              /* the shadow entry was looked up: shadow_field NULL is "none" */
        enum slots_hash_method hash_method;     /* libxcrypt's word on slots_identity_password() */
        const struct slots_identity_group *groups;
        size_t n_groups;
        const char *shared;             /* <prefix>shared */
        const struct slots_subids *subuid, *subgid;     /* NULL: not known */
        bool directory;                 /* the account lives in a directory (LDAP), not the local files */
        uid_t uid;                      /* its uid and its group's gid, for the messages */
        gid_t gid;
        const struct slots_identity_name *uid_names, *gid_names;       /* every name of the uid, the gid */
        size_t n_uid_names, n_gid_names;
        const struct slots_identity_name *members;      /* every member of its group */
        size_t n_members;
        const char *member_ok;          /* the one member planned beside the slot: the service account */
};

enum slots_identity_what {
        SLOTS_IDENT_SUBIDS,             /* a subordinate uid or gid range of its own, or another's holding its id */
        SLOTS_IDENT_ALIASES,            /* another account with its uid, another group with its gid */
        SLOTS_IDENT_MEMBERS,            /* a member of its group but itself and the service */
        SLOTS_IDENT_GROUPS,             /* a group but its own and <prefix>shared, or a foreign primary group */
        SLOTS_IDENT_PASSWORD,           /* a usable password, or none needed */
        SLOTS_IDENT_SHELL,              /* a shell but the configured one */
        SLOTS_IDENT_N
};

/*
 * One problem: what is wrong, and the command that mends it; both NULL when there is none.
 * A change to a directory's entry (an account's shell or password, a directory group's
 * member) is dirfix.c's ldapmodify line; the rest are commands for this host.
 */
struct slots_identity_problem {
        char *detail;
        char *fix;
};

struct slots_identity_verdict {
        struct slots_identity_problem p[SLOTS_IDENT_N];
        size_t n;                       /* how many of p hold a problem */
};

/* The passwd field of account name says "the password is in shadow": "x", "##<name>" or "*NP*". */
bool slots_identity_shadowed(const char *name, const char *passwd_field);

/*
 * The password field pam_unix checks for id (passwd_field, or shadow_field when the
 * passwd field says shadow), where *src says it comes from; NULL when none is known
 * or there is none (SLOTS_PW_UNKNOWN, SLOTS_PW_NO_SHADOW).  When the passwd field is
 * not known, a known shadow entry is taken as the password.
 */
const char *slots_identity_password(const struct slots_identity *id, enum slots_pw_source *src);

/*
 * The password field hash is usable (a login with a password, or without one), as
 * pam_unix's verify_pwd_hash() takes it: empty (no password asked, pam_unix's nullok);
 * else, past an HP-UX aging suffix, it starts with neither '!' nor '*' and: a "$1$"
 * hash (pam_unix's own MD5); a field of 13 + 11k characters of the crypt alphabet
 * without '$' (DES or bigcrypt, which pam_unix tries whatever libxcrypt says of it);
 * any other field that libxcrypt, where asked, knows a method for.
 */
bool slots_identity_password_usable(const char *hash, enum slots_hash_method method);

/*
 * Judges id, without any I/O: each kind of problem in v->p[kind] (a fact that is
 * not known gives no problem: the caller says it could not look).  Returns 0, or
 * -ENOMEM (v then holds nothing).  Free with slots_identity_verdict_free().
 */
int slots_identity_judge(const struct slots_identity *id, struct slots_identity_verdict *v);

void slots_identity_verdict_free(struct slots_identity_verdict *v);
