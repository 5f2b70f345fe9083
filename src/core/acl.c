/* The one reader and writer of POSIX ACLs, through libacl: entries, set, named writers, strip, remove. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <acl/libacl.h>

#include "acl.h"

void slots_acl_free(struct slots_acl *acl)
{
        free(acl->entries);
        acl->entries = NULL;
        acl->n = 0;
}

static void proc_path(int fd, char *buf, size_t size)
{
        snprintf(buf, size, "/proc/self/fd/%d", fd);
}

/*
 * The ACL of fd: an access ACL by acl_get_fd, through /proc for an O_PATH fd
 * (EBADF), or a folder's through "." without /proc; a default ACL through
 * /proc, as libacl has no descriptor call for it.  NULL with errno set.
 */
static acl_t get_acl(int fd, acl_type_t type)
{
        char proc[64];
        struct stat st;
        acl_t a;
        int rfd, saved;

        if (type == ACL_TYPE_ACCESS) {
                a = acl_get_fd(fd);
                if (a || errno != EBADF)
                        return a;
        }
        proc_path(fd, proc, sizeof(proc));
        a = acl_get_file(proc, type);
        if (a || errno != ENOENT || type != ACL_TYPE_ACCESS)
                return a;
        if (fstat(fd, &st) < 0 || !S_ISDIR(st.st_mode))
                return NULL;
        rfd = openat(fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (rfd < 0)
                return NULL;
        a = acl_get_fd(rfd);
        saved = errno;
        (void) close(rfd);
        errno = saved;
        return a;
}

/* acl's entries into out (in libacl's order, the kernel's).  0 or -errno. */
static int to_entries(acl_t a, struct slots_acl *out)
{
        acl_entry_t e;
        size_t n = 0, cap = (size_t) acl_entries(a);

        out->entries = cap ? calloc(cap, sizeof(*out->entries)) : NULL;
        if (cap && !out->entries)
                return -ENOMEM;
        for (int w = ACL_FIRST_ENTRY; n < cap && acl_get_entry(a, w, &e) == 1; w = ACL_NEXT_ENTRY) {
                struct slots_acl_entry *x = &out->entries[n];
                acl_permset_t ps;
                acl_tag_t tag;

                if (acl_get_tag_type(e, &tag) < 0 || acl_get_permset(e, &ps) < 0)
                        goto fail;
                x->tag = (unsigned) tag;
                x->perm = (acl_get_perm(ps, ACL_READ) == 1 ? 4u : 0) | (acl_get_perm(ps, ACL_WRITE) == 1 ? 2u : 0) |
                          (acl_get_perm(ps, ACL_EXECUTE) == 1 ? 1u : 0);
                if (tag == ACL_USER || tag == ACL_GROUP) {
                        id_t *q = acl_get_qualifier(e);

                        if (!q)
                                goto fail;
                        x->id = (uint32_t) *q;
                        acl_free(q);
                }
                n++;
        }
        out->n = n;
        return 0;
fail:
        slots_acl_free(out);
        return errno ? -errno : -EINVAL;
}

int slots_acl_get(int fd, acl_type_t type, struct slots_acl *acl)
{
        acl_t a;
        int r;

        acl->n = 0;
        acl->entries = NULL;
        a = get_acl(fd, type);
        if (!a)
                return errno == EOPNOTSUPP ? 0 : -errno;
        /* Three entries (owner, group, other) are the mode; libacl makes them up when there is no ACL. */
        r = acl_entries(a) > (type == ACL_TYPE_ACCESS ? 3 : 0) ? to_entries(a, acl) : 0;
        acl_free(a);
        return r < 0 ? r : acl->n > 0;
}

static acl_t from_entries(const struct slots_acl *acl)
{
        acl_t a = acl_init((int) acl->n);

        for (size_t i = 0; a && i < acl->n; i++) {
                const struct slots_acl_entry *x = &acl->entries[i];
                id_t id = x->id;
                acl_permset_t ps;
                acl_entry_t e;

                if (acl_create_entry(&a, &e) < 0 || acl_set_tag_type(e, (acl_tag_t) x->tag) < 0 ||
                    ((x->tag == ACL_USER || x->tag == ACL_GROUP) && acl_set_qualifier(e, &id) < 0) ||
                    acl_get_permset(e, &ps) < 0 || acl_clear_perms(ps) < 0 ||
                    ((x->perm & 4) && acl_add_perm(ps, ACL_READ) < 0) ||
                    ((x->perm & 2) && acl_add_perm(ps, ACL_WRITE) < 0) ||
                    ((x->perm & 1) && acl_add_perm(ps, ACL_EXECUTE) < 0) || acl_set_permset(e, ps) < 0) {
                        int saved = errno;

                        acl_free(a);
                        errno = saved;
                        return NULL;
                }
        }
        return a;
}

/* Sets a on fd: an access ACL by acl_set_fd, a default ACL through /proc.  0 or -errno. */
static int put_acl(int fd, acl_type_t type, acl_t a)
{
        char proc[64];

        if (type == ACL_TYPE_ACCESS)
                return acl_set_fd(fd, a) < 0 ? -errno : 0;
        proc_path(fd, proc, sizeof(proc));
        return acl_set_file(proc, type, a) < 0 ? -errno : 0;
}

int slots_acl_set(int fd, acl_type_t type, const struct slots_acl *acl)
{
        acl_t a = from_entries(acl);
        int r;

        if (!a)
                return -errno;
        r = put_acl(fd, type, a);
        acl_free(a);
        return r;
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

/* Deletes the entries naming uid or gid from one ACL of fd.  1 when it changed, 0 when not, or -errno. */
static int strip_one(int fd, acl_type_t type, uid_t uid, gid_t gid)
{
        struct slots_acl acl;
        size_t out = 0;
        int r;

        r = slots_acl_get(fd, type, &acl);
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
                r = slots_acl_set(fd, type, &acl);
                r = r < 0 ? r : 1;
        }
        slots_acl_free(&acl);
        return r;
}

int slots_acl_strip(int fd, bool dir, uid_t uid, gid_t gid)
{
        int r, changed = 0;

        /* Most files have no ACL: acl_extended_fd tells with one call. */
        r = acl_extended_fd(fd);
        if (r < 0 && errno != EOPNOTSUPP)
                return -errno;
        if (r == 1) {
                r = strip_one(fd, ACL_TYPE_ACCESS, uid, gid);
                if (r < 0)
                        return r;
                changed |= r;
        }
        if (dir) {
                r = strip_one(fd, ACL_TYPE_DEFAULT, uid, gid);
                if (r < 0)
                        return r;
                changed |= r;
        }
        return changed;
}

int slots_acl_remove(int fd, acl_type_t type, bool only_plain)
{
        struct slots_acl acl;
        struct stat st;
        char proc[64];
        bool named = false;
        acl_t a;
        int r = slots_acl_get(fd, type, &acl);

        if (r <= 0)
                return r;
        for (size_t i = 0; i < acl.n; i++)
                named |= acl.entries[i].tag == SLOTS_ACL_USER || acl.entries[i].tag == SLOTS_ACL_GROUP;
        slots_acl_free(&acl);
        if (named && only_plain)
                return 0;
        if (type == ACL_TYPE_DEFAULT) {
                proc_path(fd, proc, sizeof(proc));
                return acl_delete_def_file(proc) < 0 ? -errno : 1;
        }
        /* The ACL the mode is: the kernel stores none, and the group bits (the mask) stay. */
        if (fstat(fd, &st) < 0)
                return -errno;
        a = acl_from_mode(st.st_mode);
        if (!a)
                return -errno;
        r = put_acl(fd, type, a);
        acl_free(a);
        return r < 0 ? r : 1;
}
