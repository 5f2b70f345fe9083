/* The one reader of the kernel's POSIX ACL attribute: decode, encode, its named writers, and strip. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/*
 * system.posix_acl_access and system.posix_acl_default hold a 4-byte version
 * (2), then 8-byte entries of tag, permission and id, little-endian (acl(5),
 * the kernel's posix_acl_xattr.h).  Read raw, so the core library and
 * pam_slots.so need no libacl; libacl stays where ACLs are set whole
 * (replace.c).
 */
#define SLOTS_ACL_ACCESS "system.posix_acl_access"
#define SLOTS_ACL_DEFAULT "system.posix_acl_default"

enum slots_acl_tag {
        SLOTS_ACL_USER_OBJ = 0x01,
        SLOTS_ACL_USER = 0x02,
        SLOTS_ACL_GROUP_OBJ = 0x04,
        SLOTS_ACL_GROUP = 0x08,
        SLOTS_ACL_MASK = 0x10,
        SLOTS_ACL_OTHER = 0x20,
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

/*
 * Decodes an attribute of len bytes into acl.  Returns 0, -EBADMSG for one that
 * is truncated, of another version or holds an unknown tag (acl is then empty),
 * or -ENOMEM.
 */
int slots_acl_decode(const void *buf, size_t len, struct slots_acl *acl);

/* The attribute of acl, malloc'ed into *buf (*len bytes).  Returns 0 or -ENOMEM. */
int slots_acl_encode(const struct slots_acl *acl, unsigned char **buf, size_t *len);

void slots_acl_free(struct slots_acl *acl);

/*
 * Reads and decodes attr (SLOTS_ACL_ACCESS or SLOTS_ACL_DEFAULT) of fd, an
 * O_PATH fd too (through its /proc link, or for a folder through "." when
 * /proc is missing).  Returns 1 with acl filled, 0 when the file has none or
 * its file system has no ACLs (acl empty), or -errno (-EBADMSG: cannot be
 * decoded).
 */
int slots_acl_get(int fd, const char *attr, struct slots_acl *acl);

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
 * descriptor (not O_PATH).  What stays is a valid ACL: still sorted, and a
 * mask without named entries is allowed.  Returns 1 when an ACL changed, 0
 * when none did, or -errno (-EBADMSG for an attribute that cannot be decoded).
 */
int slots_acl_strip(int fd, bool dir, uid_t uid, gid_t gid);
