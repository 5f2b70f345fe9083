/* Account lookups through NSS that tell "not found" from "the lookup failed". */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

struct slots_pw {
        char *name;
        uid_t uid;
        gid_t gid;
        char *dir;
        char *shell;
};

struct slots_gr {
        char *name;
        gid_t gid;
        char **members;                 /* NULL-terminated */
};

/*
 * Each returns 1 and fills *out (free with the matching _clear) when found, 0
 * when the name or id does not exist, or -errno when the lookup itself failed
 * (an unreachable LDAP server or nslcd, a broken nsswitch.conf): callers must
 * not read that as "not found".  Only glibc's 0-with-no-entry is "not found";
 * any error code, ENOENT included, is a failed lookup (see nss.c).
 */
int slots_nss_user(const char *name, struct slots_pw *out);
int slots_nss_uid(uid_t uid, struct slots_pw *out);
int slots_nss_group(const char *name, struct slots_gr *out);
int slots_nss_gid(gid_t gid, struct slots_gr *out);

/*
 * The name of group gid as slots_nss_gid() answers it: 1 with *out malloc'ed, 0, or -errno.
 * The lookup's buffer starts at hint bytes (at least 1024) and grows on ERANGE as for the
 * others.  glibc's files module answers ERANGE at any line longer than the buffer, not only
 * the one asked for, and each retry reads the file again from its start: a caller that knows
 * the longest line of the group file (a shared group of every slot) starts big enough once.
 */
int slots_nss_gid_name(gid_t gid, size_t hint, char **out);

void slots_pw_clear(struct slots_pw *p);
void slots_gr_clear(struct slots_gr *g);

bool slots_gr_has_member(const struct slots_gr *g, const char *name);

/* The name of uid (gid) for a message, or the number when NSS has none or fails; returns buf. */
const char *slots_uid_name(uid_t uid, char *buf, size_t size);
const char *slots_gid_name(gid_t gid, char *buf, size_t size);

/*
 * glibc returns the status of the last source it asked, so in nsswitch.conf's
 * "passwd: files ldap extrausers" a directory that is down is followed by
 * extrausers answering "not found", and a failed lookup cannot be seen.
 * Given the file's text, finds for database db ("passwd", "group") the first
 * network source (ldap, sss, nis, nisplus, winbind) that another source follows
 * without "[UNAVAIL=return]" (or "[!SUCCESS=return]") after it.  Returns 1 with
 * the two names in src and next, 0 when there is none.
 */
int slots_nss_masked_source(const char *text, const char *db, char *src, size_t srcsize, char *next,
                            size_t nextsize);

/*
 * What an enumeration of database db ("passwd", "group", "shadow", "initgroups") answers, by
 * the db's line in nsswitch.conf's text.  Only "files" and "systemd" are known to list every
 * entry they would return by name; a directory (ldap, sss) may list none (sssd's default).
 */
enum slots_nss_enum {
        SLOTS_NSS_ENUM_NO_LINE, /* text names no such database (nothing known: as NONE) */
        SLOTS_NSS_ENUM_NONE,    /* no line, an action ([...]), or a source that may not enumerate before another */
        SLOTS_NSS_ENUM_NAMES,   /* every source but the last lists all: an entry listed is the answer by name */
        SLOTS_NSS_ENUM_ALL,     /* every source lists all: the entries listed are all there are */
};
enum slots_nss_enum slots_nss_enumerable(const char *text, const char *db);

/* Whether db's line in nsswitch.conf's text names a network source (ldap, sss, nis, nisplus, winbind). */
bool slots_nss_network(const char *text, const char *db);
