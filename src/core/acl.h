/* The one reader and writer of POSIX ACLs (through libacl): read into entries, set, strip, remove. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <sys/acl.h>

/* Which ACL of a file: its access ACL, or a folder's default ACL. */
#define SLOTS_ACL_ACCESS ACL_TYPE_ACCESS
#define SLOTS_ACL_DEFAULT ACL_TYPE_DEFAULT

enum slots_acl_tag {
        SLOTS_ACL_USER_OBJ = ACL_USER_OBJ,
        SLOTS_ACL_USER = ACL_USER,
        SLOTS_ACL_GROUP_OBJ = ACL_GROUP_OBJ,
        SLOTS_ACL_GROUP = ACL_GROUP,
        SLOTS_ACL_MASK = ACL_MASK,
        SLOTS_ACL_OTHER = ACL_OTHER,
};

/* The permission bits of an entry: 4 read, 2 write, 1 execute. */
#define SLOTS_ACL_WRITE 02u

struct slots_acl_entry {
        unsigned tag;           /* enum slots_acl_tag */
        unsigned perm;          /* rwx as 4, 2, 1 */
        uint32_t id;            /* uid or gid of SLOTS_ACL_USER and SLOTS_ACL_GROUP; else unused */
};

struct slots_acl {
        size_t n;
        struct slots_acl_entry *entries;        /* malloc'ed; slots_acl_free() */
};

void slots_acl_free(struct slots_acl *acl);

/*
 * Reads the ACL of fd of type (SLOTS_ACL_ACCESS or SLOTS_ACL_DEFAULT) into acl,
 * in the kernel's order (by tag, then id).  fd may be O_PATH: read through its
 * /proc/self/fd link (a default ACL always is: libacl reads those by path
 * only), or an access ACL of a folder through "." when /proc is missing.
 * Returns 1 with acl filled, 0 when the file has none (an access ACL the mode
 * says all of, an empty default ACL) or its file system has no ACLs (acl
 * empty), or -errno.
 */
int slots_acl_get(int fd, acl_type_t type, struct slots_acl *acl);

/* Sets the ACL of fd (a regular descriptor) of type to acl.  Returns 0 or -errno. */
int slots_acl_set(int fd, acl_type_t type, const struct slots_acl *acl);

/* The mask entry's permission, or 07 when the ACL has no mask (nothing is masked). */
unsigned slots_acl_mask(const struct slots_acl *acl);

/*
 * Whether entry i is a named writer: an SLOTS_ACL_USER or SLOTS_ACL_GROUP
 * entry whose write bit the mask lets through.
 */
bool slots_acl_named_writer(const struct slots_acl *acl, size_t i);

/*
 * Deletes the entries naming uid (SLOTS_ACL_USER) or gid (SLOTS_ACL_GROUP) from
 * the access ACL of fd, and from its default ACL when dir; fd is a regular
 * descriptor (not O_PATH).  The mask stays as it was (a mask without named
 * entries is a valid ACL).  Returns 1 when an ACL changed, 0 when none did, or
 * -errno.
 */
int slots_acl_strip(int fd, bool dir, uid_t uid, gid_t gid);

/*
 * Removes the ACL of fd of type, with every named entry in it; an access ACL
 * leaves the mode as it is (its group bits were the mask).  With only_plain,
 * only an ACL without a named entry goes.  Returns 1 when one went, 0 when
 * there was none (or it has named entries and only_plain), or -errno.
 */
int slots_acl_remove(int fd, acl_type_t type, bool only_plain);
