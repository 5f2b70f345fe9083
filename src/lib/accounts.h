/* passwd, group, shadow and gshadow as text: parse, plan additions, write all four as one transaction. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "error.h"

/*
 * Every line already in a file is kept byte for byte (comments, NIS "+"/"-"
 * lines, lines this code cannot parse); new lines go after the last line that
 * is not a NIS line, as shadow-utils keeps NIS entries at the end.  A line is
 * rewritten only to add a group member.
 */
enum slots_acct_file {
        SLOTS_ACCT_PASSWD,
        SLOTS_ACCT_GROUP,
        SLOTS_ACCT_SHADOW,
        SLOTS_ACCT_GSHADOW,
        SLOTS_ACCT_NFILES,
};

/* A passwd entry as the file holds it.  valid is false when uid or gid is not a number. */
struct slots_acct_user {
        const char *name;
        const char *passwd;             /* the password field ("x": the password is in shadow) */
        uid_t uid;
        gid_t gid;
        const char *dir;
        const char *shell;
        bool valid;
        unsigned line;                  /* 1-based, 0 for a line added here */
};

struct slots_acct_group {
        const char *name;
        gid_t gid;
        bool valid;
        unsigned line;
};

struct slots_accounts;

/* The file's name in /etc: "passwd", "group", "shadow" or "gshadow". */
const char *slots_accounts_file_name(enum slots_acct_file f);

/* An empty set of four files (none of them exists yet); NULL on ENOMEM. */
struct slots_accounts *slots_accounts_new(void);

/* Sets one file's text (exists: the file is there; for tests and for load).  0 or -ENOMEM. */
int slots_accounts_set_text(struct slots_accounts *a, enum slots_acct_file f, const char *text, size_t len,
                            bool exists);

/*
 * Reads the four files from etcfd (a checked /etc directory fd).  A missing file
 * loads as empty; a symlink or anything but a regular file is refused.
 * etc_display names the folder in errors ("/etc" or "DIR/etc").
 */
int slots_accounts_load(int etcfd, const char *etc_display, struct slots_accounts **ret,
                        struct slots_error *e);

void slots_accounts_free(struct slots_accounts *a);

/* Lookups in the files, including what was added; the first entry of a name or id wins, as in glibc. */
const struct slots_acct_user *slots_accounts_user(const struct slots_accounts *a, const char *name);
const struct slots_acct_user *slots_accounts_user_by_uid(const struct slots_accounts *a, uid_t uid);
const struct slots_acct_group *slots_accounts_group(const struct slots_accounts *a, const char *name);
const struct slots_acct_group *slots_accounts_group_by_gid(const struct slots_accounts *a, gid_t gid);
bool slots_accounts_has_shadow(const struct slots_accounts *a, const char *name);
bool slots_accounts_has_gshadow(const struct slots_accounts *a, const char *name);
/* The groups of the group file, in its order: how many, and the i-th (NULL past the end). */
size_t slots_accounts_n_groups(const struct slots_accounts *a);
const struct slots_acct_group *slots_accounts_group_at(const struct slots_accounts *a, size_t i);
/* The password field of name's shadow line, malloc'ed into *out (NULL: no line); 0 or -ENOMEM. */
int slots_accounts_password(const struct slots_accounts *a, const char *name, char **out);
/* True when user is in the member list of group's line in the group file. */
bool slots_accounts_is_member(const struct slots_accounts *a, const char *group, const char *user);
/* True when group has no gshadow line, or its gshadow line lists user among the members. */
bool slots_accounts_gshadow_lists(const struct slots_accounts *a, const char *group, const char *user);

/*
 * Additions.  Fields must not hold ':', ',' or a newline (-EINVAL); a name that
 * is already there is -EEXIST.  add_user writes the passwd line
 * "name:x:uid:gid::home:shell" and the shadow line "name:!:lastchg::::::"
 * (locked; lastchg in days since 1970, < 0 for empty); add_group writes
 * "name:x:gid:members" and "name:!::members".
 */
int slots_accounts_add_user(struct slots_accounts *a, const char *name, uid_t uid, gid_t gid,
                            const char *home, const char *shell, long lastchg);
int slots_accounts_add_group(struct slots_accounts *a, const char *name, gid_t gid);
/* A missing shadow or gshadow line for an account or group that exists (gshadow takes the group's members). */
int slots_accounts_add_shadow(struct slots_accounts *a, const char *name, long lastchg);
int slots_accounts_add_gshadow(struct slots_accounts *a, const char *name);
/* Adds user to group's member list in group and, when it has a line there, in gshadow. */
int slots_accounts_add_member(struct slots_accounts *a, const char *group, const char *user);

/* Whether a file differs from what was loaded. */
bool slots_accounts_changed(const struct slots_accounts *a, enum slots_acct_file f);

/* The file's new text (malloc'ed; *len set).  NULL on ENOMEM. */
char *slots_accounts_render(const struct slots_accounts *a, enum slots_acct_file f, size_t *len);

/*
 * The lock every tool that edits these files takes (/etc/.pwd.lock).  On the
 * host, glibc's lckpwdf(); for an image tree (host false) an fcntl write lock
 * on etcfd/.pwd.lock taken here, waiting up to 15 seconds as lckpwdf does.
 * *lockfd is -1 on the host.  Returns 0 or -errno.
 */
int slots_accounts_lock(int etcfd, bool host, int *lockfd, struct slots_error *e);
void slots_accounts_unlock(bool host, int lockfd);

/*
 * Removes the temps a run killed before its renames left next to the four files
 * (slots_replace_clean_stale).  Call with the lock held: every writer of that
 * temp pattern stages under it.
 */
void slots_accounts_clean_stale(int etcfd);

/*
 * Writes every changed file as one transaction: all are staged first (each
 * keeping its owner, group, mode and ACL, with a "-" backup of the same owner
 * and mode), then renamed into place in the order group, gshadow, passwd,
 * shadow; a failure while staging removes every staged file and changes
 * nothing.  A new file is root:root 0644 (passwd, group) or root:shadow 0640
 * (shadow, gshadow; root:root 0600 without a "shadow" group).  Call with the
 * lock held.  Returns 0 or -errno.
 */
int slots_accounts_write(struct slots_accounts *a, int etcfd, const char *etc_display,
                         struct slots_error *e);

/*
 * Tells running name-service caches to forget passwd and group: nscd -i
 * passwd, nscd -i group (when nscd's socket exists), sss_cache -E (when
 * installed).  Failures are ignored: a cache that cannot be flushed expires.
 */
void slots_accounts_flush_caches(void);

/*
 * Runs argv[0] (an absolute path) with stdin from stdin_fd (-1: /dev/null),
 * a minimal environment, and its stdout and stderr captured into out (at most
 * outsize-1 bytes, NUL-terminated; may be NULL).  Kills it when it has not
 * exited after timeout_ms (<= 0: no limit), its output closed or not.
 * Returns its exit status (>= 0), or -errno (-ETIMEDOUT, -ECHILD when it died
 * from a signal, -ENOENT when it cannot be run, the read's when its output
 * cannot be read: then it is killed).
 */
int slots_run_program(const char *const argv[], int stdin_fd, int timeout_ms, char *out, size_t outsize);
