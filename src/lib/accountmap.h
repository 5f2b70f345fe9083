/* The account databases read once for a run over many accounts, each answer the one NSS gives by name. */
#pragma once

#include <stdbool.h>
#include <sys/types.h>

#include "error.h"
#include "nss.h"

struct slots_accountmap;

/* What slots_accountmap_read() enumerates. */
enum {
        SLOTS_AMAP_PASSWD = 1 << 0,     /* setpwent/getpwent_r */
        SLOTS_AMAP_GROUP = 1 << 1,      /* setgrent/getgrent_r: the groups and who is a member */
        SLOTS_AMAP_SHADOW = 1 << 2,     /* setspent/getspent_r: root only */
};

/*
 * Enumerates the databases `what` names, once, into maps by name and by id.  nsswitch is
 * nsswitch.conf's text (NULL: /etc/nsswitch.conf is read); it says what each enumeration can
 * answer (slots_nss_enumerable()): a database whose enumeration may miss an entry that a
 * lookup by name would find first is not used at all, and each query below then asks NSS.
 * An enumeration that fails part-way keeps what it listed (the rest is asked by name), and
 * a group enumeration that did not end answers no one's groups.  Returns 0 with *out (free
 * with slots_accountmap_free()), or -ENOMEM with e filled (kind failed).
 */
int slots_accountmap_read(const char *nsswitch, unsigned what, struct slots_accountmap **out,
                          struct slots_error *e);
void slots_accountmap_free(struct slots_accountmap *m);

/*
 * Each answers as slots_nss_user() does: 1 with *out filled (free with slots_pw_clear()), 0
 * for no such account, -errno for a failed lookup.  A name the map lists is answered from it
 * (the first entry of that name, as glibc's files module answers); any other name, or any
 * name when m is NULL, is looked up through NSS.
 */
int slots_amap_user(const struct slots_accountmap *m, const char *name, struct slots_pw *out);

/* The uid of account name: 1 with *uid, 0 no such account, -errno failed (map first, then NSS). */
int slots_amap_uid(const struct slots_accountmap *m, const char *name, uid_t *uid);

/* The gid of the group name: 1 with *gid, 0 no such group, -errno failed (map first, then NSS). */
int slots_amap_group(const struct slots_accountmap *m, const char *name, gid_t *gid);

/* The name of group gid: 1 with *name malloc'ed, 0 no such group, -errno failed (map first, then NSS). */
int slots_amap_gid(const struct slots_accountmap *m, gid_t gid, char **name);

/*
 * What getgrouplist(3) says of account name with primary group gid: gid first, then every
 * other group that lists name as a member, once each, in the order the groups were listed.
 * From the map when its group enumeration is complete (slots_nss_enumerable() of
 * "initgroups", else "group", says every source lists all, and the enumeration ended),
 * else from getgrouplist itself.  *groups is malloc'ed, *n its count.  Returns 0 or -errno.
 */
int slots_amap_grouplist(const struct slots_accountmap *m, const char *name, gid_t gid, gid_t **groups, int *n);

/*
 * The passwd entry's password field of name when the map lists it ("x" when the password is
 * in shadow): 1 with *field malloc'ed (clear it with explicit_bzero before free); 0 when the
 * caller must ask NSS by name; -ENOMEM.
 */
int slots_amap_passwd_field(const struct slots_accountmap *m, const char *name, char **field);

/*
 * The shadow password field of name when the map lists it: 1 with *hash malloc'ed (clear it
 * with explicit_bzero before free); 0 when the caller must ask NSS by name (not listed, no
 * shadow map, m NULL); -ENOMEM.
 */
int slots_amap_shadow(const struct slots_accountmap *m, const char *name, char **hash);

/* Whether the map lists name in passwd (a test's and a benchmark's question: no lookup). */
bool slots_amap_listed(const struct slots_accountmap *m, const char *name);
