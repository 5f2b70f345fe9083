/* The one reader of the kernel's POSIX ACL attribute: decode, encode, its named writers, and strip. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "acl.h"

#define ACL_XATTR_VERSION 2u
#define ACL_HEADER 4u
#define ACL_ENTRY 8u
#define ACL_TAGS (SLOTS_ACL_USER_OBJ | SLOTS_ACL_USER | SLOTS_ACL_GROUP_OBJ | SLOTS_ACL_GROUP | SLOTS_ACL_MASK | \
                  SLOTS_ACL_OTHER)

static unsigned le16(const unsigned char *p)
{
        return (unsigned) p[0] | (unsigned) p[1] << 8;
}

static uint32_t le32(const unsigned char *p)
{
        return (uint32_t) p[0] | (uint32_t) p[1] << 8 | (uint32_t) p[2] << 16 | (uint32_t) p[3] << 24;
}

static void put16(unsigned char *p, unsigned v)
{
        p[0] = (unsigned char) (v & 0xff);
        p[1] = (unsigned char) (v >> 8 & 0xff);
}

static void put32(unsigned char *p, uint32_t v)
{
        put16(p, v & 0xffff);
        put16(p + 2, v >> 16);
}

void slots_acl_free(struct slots_acl *acl)
{
        free(acl->entries);
        acl->entries = NULL;
        acl->n = 0;
}

int slots_acl_decode(const void *buf, size_t len, struct slots_acl *acl)
{
        const unsigned char *a = buf;
        size_t n;

        acl->n = 0;
        acl->entries = NULL;
        if (len < ACL_HEADER || (len - ACL_HEADER) % ACL_ENTRY != 0 || le32(a) != ACL_XATTR_VERSION)
                return -EBADMSG;
        n = (len - ACL_HEADER) / ACL_ENTRY;
        if (n == 0)
                return 0;
        acl->entries = calloc(n, sizeof(*acl->entries));
        if (!acl->entries)
                return -ENOMEM;
        for (size_t i = 0; i < n; i++) {
                const unsigned char *p = a + ACL_HEADER + i * ACL_ENTRY;
                unsigned tag = le16(p);

                /* One tag bit, a known one: the kernel never stores anything else. */
                if ((tag & (tag - 1)) != 0 || !(tag & ACL_TAGS)) {
                        slots_acl_free(acl);
                        return -EBADMSG;
                }
                acl->entries[i] = (struct slots_acl_entry){ .tag = tag, .perm = le16(p + 2) & 07, .id = le32(p + 4) };
        }
        acl->n = n;
        return 0;
}

int slots_acl_encode(const struct slots_acl *acl, unsigned char **buf, size_t *len)
{
        size_t size = ACL_HEADER + acl->n * ACL_ENTRY;
        unsigned char *b = malloc(size);

        if (!b)
                return -ENOMEM;
        put32(b, ACL_XATTR_VERSION);
        for (size_t i = 0; i < acl->n; i++) {
                unsigned char *p = b + ACL_HEADER + i * ACL_ENTRY;
                const struct slots_acl_entry *e = &acl->entries[i];
                bool named = e->tag == SLOTS_ACL_USER || e->tag == SLOTS_ACL_GROUP;

                put16(p, e->tag);
                put16(p + 2, e->perm & 07);
                /* Entries without a qualifier carry ACL_UNDEFINED_ID, as the kernel writes them. */
                put32(p + 4, named ? e->id : UINT32_MAX);
        }
        *buf = b;
        *len = size;
        return 0;
}

/* fgetxattr on fd; an O_PATH fd (EBADF) through its /proc link, or a folder through "." without /proc. */
static ssize_t get_raw(int fd, const char *attr, void *buf, size_t size)
{
        char proc[64];
        struct stat st;
        ssize_t n;
        int rfd;

        n = fgetxattr(fd, attr, buf, size);
        if (n >= 0 || errno != EBADF)
                return n;
        snprintf(proc, sizeof(proc), "/proc/self/fd/%d", fd);
        n = getxattr(proc, attr, buf, size);
        if (n >= 0 || errno == ENODATA || errno == EOPNOTSUPP || errno == ERANGE)
                return n;
        if (fstat(fd, &st) < 0 || !S_ISDIR(st.st_mode))
                return -1;
        rfd = openat(fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (rfd < 0)
                return -1;
        n = fgetxattr(rfd, attr, buf, size);
        if (n < 0) {
                int saved = errno;

                (void) close(rfd);
                errno = saved;
                return n;
        }
        (void) close(rfd);
        return n;
}

int slots_acl_get(int fd, const char *attr, struct slots_acl *acl)
{
        unsigned char small[ACL_HEADER + ACL_ENTRY * 32], *buf = small;
        ssize_t n;
        int r;

        acl->n = 0;
        acl->entries = NULL;
        n = get_raw(fd, attr, small, sizeof(small));
        /* Larger than the usual ACL: ask its size and read it whole; again should it grow in between. */
        for (int tries = 0; n < 0 && errno == ERANGE && tries < 4; tries++) {
                if (buf != small)
                        free(buf);
                buf = small;
                n = get_raw(fd, attr, NULL, 0);
                if (n < 0)
                        break;
                buf = malloc((size_t) n + ACL_ENTRY);
                if (!buf)
                        return -ENOMEM;
                n = get_raw(fd, attr, buf, (size_t) n + ACL_ENTRY);
        }
        if (n < 0)
                r = errno == ENODATA || errno == EOPNOTSUPP ? 0 : -errno;
        else
                r = slots_acl_decode(buf, (size_t) n, acl);
        if (buf != small)
                free(buf);
        return r < 0 ? r : n >= 0;
}

unsigned slots_acl_mask(const struct slots_acl *acl)
{
        for (size_t i = 0; i < acl->n; i++)
                if (acl->entries[i].tag == SLOTS_ACL_MASK)
                        return acl->entries[i].perm;
        return 07;
}

bool slots_acl_named_writer(const struct slots_acl *acl, size_t i)
{
        const struct slots_acl_entry *e = &acl->entries[i];

        return (e->tag == SLOTS_ACL_USER || e->tag == SLOTS_ACL_GROUP) &&
               (e->perm & slots_acl_mask(acl) & SLOTS_ACL_WRITE);
}

/* Deletes the entries naming uid or gid from one attribute of fd.  1 when it changed, 0 when not, or -errno. */
static int strip_one(int fd, const char *attr, uid_t uid, gid_t gid)
{
        struct slots_acl acl;
        unsigned char *buf = NULL;
        size_t out = 0, len;
        int r;

        r = slots_acl_get(fd, attr, &acl);
        if (r <= 0)
                return r;
        for (size_t i = 0; i < acl.n; i++) {
                const struct slots_acl_entry *e = &acl.entries[i];

                if ((e->tag == SLOTS_ACL_USER && e->id == (uint32_t) uid) ||
                    (e->tag == SLOTS_ACL_GROUP && e->id == (uint32_t) gid))
                        continue;
                acl.entries[out++] = *e;
        }
        r = 0;
        if (out != acl.n) {
                acl.n = out;
                r = slots_acl_encode(&acl, &buf, &len);
                if (r == 0)
                        r = fsetxattr(fd, attr, buf, len, XATTR_REPLACE) < 0 ? (errno == ENODATA ? 0 : -errno) : 1;
        }
        free(buf);
        slots_acl_free(&acl);
        return r;
}

int slots_acl_strip(int fd, bool dir, uid_t uid, gid_t gid)
{
        char names[1024];
        bool access = true, def = dir;
        int r, changed = 0;
        ssize_t n;

        /* One listxattr tells whether there is an ACL at all; most files have none. */
        n = flistxattr(fd, names, sizeof(names));
        if (n < 0 && errno == EOPNOTSUPP)
                return 0;
        if (n >= 0) {
                access = def = false;
                for (ssize_t i = 0; i < n; i += (ssize_t) strlen(names + i) + 1) {
                        if (strcmp(names + i, SLOTS_ACL_ACCESS) == 0)
                                access = true;
                        else if (dir && strcmp(names + i, SLOTS_ACL_DEFAULT) == 0)
                                def = true;
                }
        } else if (errno != ERANGE) {
                return -errno;
        }
        if (access) {
                r = strip_one(fd, SLOTS_ACL_ACCESS, uid, gid);
                if (r < 0)
                        return r;
                changed |= r;
        }
        if (def) {
                r = strip_one(fd, SLOTS_ACL_DEFAULT, uid, gid);
                if (r < 0)
                        return r;
                changed |= r;
        }
        return changed;
}
