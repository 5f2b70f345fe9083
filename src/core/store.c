/* The table file on disk: checked directory, lock, load, owner-preserving save. */
#include <errno.h>
#include <stdarg.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "acl.h"
#include "fsutil.h"
#include "replace.h"
#include "store.h"
#include "table-index.h"

static int check_dir(int dirfd, const char *path, unsigned flags, struct slots_error *e)
{
        struct stat st;

        if (fstat(dirfd, &st) < 0)
                return slots_error_set(e, -errno, path, "cannot stat its directory: %s", strerror(errno));
        /* Anyone else who can write the directory could swap the table between our checks and the rename. */
        if ((st.st_mode & S_IWOTH) && (flags & SLOTS_STORE_WRITE)) {
                slots_error_refuse(e, -EPERM, path, "its directory is writable by others (mode %04o)",
                                st.st_mode & 07777);
                slots_error_fix(e, "chmod o-w the directory that holds the table");
                return -EPERM;
        }
        if ((st.st_mode & S_IWGRP) && st.st_gid != 0 && (flags & SLOTS_STORE_WRITE)) {
                slots_error_refuse(e, -EPERM, path, "its directory is writable by group %u (mode %04o)",
                                (unsigned) st.st_gid, st.st_mode & 07777);
                slots_error_fix(e, "chmod g-w the directory that holds the table");
                return -EPERM;
        }
        if ((flags & SLOTS_STORE_WRITE) && st.st_uid != 0 && st.st_uid != geteuid()) {
                slots_error_refuse(e, -EPERM, path, "its directory is owned by uid %u, not root",
                                (unsigned) st.st_uid);
                slots_error_fix(e, "chown root the directory that holds the table");
                return -EPERM;
        }
        return 0;
}

/* The writer's lock, "<table>.lock" beside it; then the temp a writer killed before its rename left. */
static int take_lock(struct slots_store *s, const char *path, struct slots_error *e)
{
        char *lockname = NULL;
        int r;

        if (asprintf(&lockname, "%s%s", s->name, SLOTS_LOCK_SUFFIX) < 0)
                return -ENOMEM;
        r = slots_lock_take(s->dirfd, lockname, path, e);
        free(lockname);
        if (r < 0)
                return r;
        s->lockfd = r;
        /* Under the lock the stale temp is ours to remove. */
        (void) slots_replace_clean_stale(s->dirfd, s->name);
        (void) slots_tindex_clean_stale(s->dirfd, s->name);
        return 0;
}

/* The table's folder, checked, in s->dirfd; with SLOTS_STORE_WRITE its lock taken. */
static int open_dir(struct slots_store *s, int rootfd, const char *path, unsigned flags, struct slots_error *e)
{
        int r;

        if (flags & SLOTS_STORE_WRITE) {
                /* The folder a writer replaces the table in: no symlink, root's (or the writer's) all the way. */
                struct slots_chase how = {
                        .flags = SLOTS_CHASE_PARENT | SLOTS_CHASE_NO_SYMLINKS | SLOTS_CHASE_TRUSTED,
                        .what = "the table's folder",
                        .trusted_uid = geteuid() == 0 ? (uid_t) -1 : geteuid(),
                        .trusted_gid = (gid_t) -1,
                        .open_flags = O_RDONLY | O_DIRECTORY,
                };

                r = slots_chase(rootfd, s->path, &how, &s->name, e);
                if (r < 0 && r != -ENOENT)
                        return r;
        } else {
                r = slots_open_parent_in(rootfd, s->path, &s->name);
        }
        if (r < 0)
                return slots_error_set(e, r, path, "cannot open its directory: %s", strerror(-r));
        s->dirfd = r;
        r = check_dir(s->dirfd, path, flags, e);
        if (r == 0 && (flags & SLOTS_STORE_WRITE))
                r = take_lock(s, path, e);
        return r;
}

/* s->table from the table file, read and parsed. */
static int load(struct slots_store *s, const char *path, unsigned pool, struct slots_error *e)
{
        char *text = NULL;
        size_t len = 0;
        int r;

        r = slots_read_text(s->dirfd, s->name, &(struct slots_read){ .path = path, .max = SLOTS_TABLE_MAX }, &s->st,
                            &text, &len, e);
        if (r == -ENOENT) {
                slots_error_clear(e);
                s->table = slots_table_new();
                return s->table ? 0 : -ENOMEM;
        }
        if (r == -ELOOP)
                slots_error_fix(e, "replace the link with the table file itself");
        else if (r == -EINVAL)
                /* Refused (exit 1) like a symlink, not a malformed table (exit 2). */
                slots_error_fix(e, "move it away; slots-provision creates an empty table");
        else if (r == -EACCES)
                slots_error_fix(e, "run as root or as a member of the table's group");
        if (r < 0) {
                free(text);
                return r;
        }
        s->exists = true;
        r = slots_table_parse(text, len, path, pool, &s->table, e);
        free(text);
        return r;
}

int slots_store_open(struct slots_store *s, int rootfd, const char *path, unsigned pool, gid_t group,
                     unsigned flags, struct slots_error *e)
{
        int r;

        memset(s, 0, sizeof(*s));
        s->dirfd = s->lockfd = -1;
        s->pool = pool;
        s->group = group;
        s->path = strdup(path);
        r = s->path ? open_dir(s, rootfd, path, flags, e) : -ENOMEM;
        if (r == 0)
                r = load(s, path, pool, e);
        if (r < 0)
                slots_store_close(s);
        return r;
}

/* The dump on its way to the temp file, through a buffer of its own (json_dump_callback's pieces are tiny). */
struct dumpfd {
        int fd;
        int err;                        /* -errno of the first failed write */
        size_t len;
        char buf[64 * 1024];
};

static int dumpfd_flush(struct dumpfd *d)
{
        int r = slots_write_all(d->fd, d->buf, d->len);

        d->len = 0;
        if (r < 0 && !d->err)
                d->err = r;
        return r;
}

/* A piece that does not fit: flush, then keep it (or write it through when it is larger than the buffer). */
static int __attribute__((noinline)) dumpfd_spill(struct dumpfd *d, const char *text, size_t n)
{
        if (dumpfd_flush(d) < 0)
                return -1;
        if (n > sizeof(d->buf)) {
                int r = slots_write_all(d->fd, text, n);

                if (r < 0 && !d->err)
                        d->err = r;
                return r < 0 ? -1 : 0;
        }
        memcpy(d->buf, text, n);
        d->len = n;
        return 0;
}

static int dumpfd_add(const char *text, size_t n, void *arg)
{
        struct dumpfd *d = arg;

        if (n > sizeof(d->buf) - d->len)
                return dumpfd_spill(d, text, n);
        /* A third of the pieces are one byte (a quote, a comma): stored, no memcpy call. */
        if (n == 1)
                d->buf[d->len] = *text;
        else
                memcpy(d->buf + d->len, text, n);
        d->len += n;
        return 0;
}

static int write_table(int fd, void *arg)
{
        const struct slots_table *t = arg;
        struct dumpfd *d = malloc(sizeof(*d));
        int r;

        if (!d)
                return -ENOMEM;
        d->fd = fd;
        d->err = 0;
        d->len = 0;
        r = slots_table_dump_to(t, dumpfd_add, d);
        if (r == 0)
                r = dumpfd_flush(d);
        else
                r = d->err ? d->err : -ENOMEM;
        free(d);
        return r;
}

/*
 * The file just saved: s->st names it from now on, and the index pam_slots reads
 * instead of the table (table-index.h) is made from it.  The table is saved
 * whatever happens here: an index that is missing or names an older table file
 * is never trusted, so a failure only costs the next sessions a read of the
 * whole table.
 */
static void saved(struct slots_store *s)
{
        struct slots_error ie;
        struct stat st;
        int fd;

        fd = openat(s->dirfd, s->name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
        if (fd < 0)
                return;
        if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
                slots_close(fd);
                return;
        }
        slots_close(fd);
        s->st = st;
        slots_error_clear(&ie);
        (void) slots_tindex_write(s->dirfd, s->name, s->path, &st, s->table, s->pool, &ie);
}

int slots_store_reindex(struct slots_store *s, struct slots_error *e)
{
        enum slots_slot_state state;
        const char *why;
        struct stat st;

        if (fstatat(s->dirfd, s->name, &st, AT_SYMLINK_NOFOLLOW) < 0 || !S_ISREG(st.st_mode) || s->pool == 0)
                return 0;
        if (slots_tindex_lookup(s->dirfd, s->name, &st, s->pool, 1, &state, &why) == 0)
                return 0;
        return slots_tindex_write(s->dirfd, s->name, s->path, &st, s->table, s->pool, e);
}

int slots_store_save(struct slots_store *s, struct slots_error *e)
{
        const struct slots_file_mode def = { .uid = 0, .gid = s->group, .mode = SLOTS_TABLE_MODE };
        int r;

        /* Straight into the temp file: the text is never all in memory next to the tree. */
        r = slots_replace_with(s->dirfd, s->name, s->path, write_table, s->table, &def, 0, e);
        if (r == 0) {
                s->exists = true;
                saved(s);
        }
        return r;
}

void slots_store_close(struct slots_store *s)
{
        slots_table_free(s->table);
        s->table = NULL;
        slots_close(s->lockfd);
        slots_close(s->dirfd);
        s->lockfd = s->dirfd = -1;
        free(s->path);
        s->path = NULL;
}

/* Appends ", " or " && " and the text to a verdict's reason or fix (cut with a mark when long). */
static void verdict_add(char *buf, size_t size, const char *sep, const char *fmt, ...)
        __attribute__((format(printf, 4, 5)));

static void verdict_add(char *buf, size_t size, const char *sep, const char *fmt, ...)
{
        size_t used = strlen(buf);
        va_list ap;

        if (used && used < size)
                used += (size_t) snprintf(buf + used, size - used, "%s", sep);
        if (used >= size)
                return;
        va_start(ap, fmt);
        vsnprintf(buf + used, size - used, fmt, ap);
        va_end(ap);
}

/* What an ACL lets: write by anyone but root, read by group g; false, false without one. */
struct acl_lets {
        bool write;
        bool group_read;
};

/* Reads the access ACL of fd through the one ACL reader: 1 with *lets filled, 0 without one, or -errno. */
static int acl_lets(int fd, const struct stat *st, gid_t g, struct acl_lets *lets)
{
        struct slots_acl acl = { 0 };
        unsigned mask;
        int r;

        *lets = (struct acl_lets){ 0 };
        if (fd < 0)
                return -EBADF;
        r = slots_acl_get(fd, SLOTS_ACL_ACCESS, &acl);
        if (r <= 0)
                return r;
        mask = slots_acl_mask(&acl);
        for (size_t i = 0; i < acl.n; i++) {
                const struct slots_acl_entry *a = &acl.entries[i];
                unsigned eff = a->perm & mask;

                if (slots_acl_named_writer(&acl, i) && a->id != 0)
                        lets->write = true;
                if (a->tag == SLOTS_ACL_GROUP_OBJ && (eff & SLOTS_ACL_WRITE) && st->st_gid != 0)
                        lets->write = true;
                if ((a->tag == SLOTS_ACL_GROUP_OBJ && st->st_gid == g && (eff & 04)) ||
                    (a->tag == SLOTS_ACL_GROUP && a->id == g && (eff & 04)))
                        lets->group_read = true;
        }
        slots_acl_free(&acl);
        return 1;
}

static void verdict_reason(const struct stat *st, const struct slots_table_policy *p, int acl,
                           struct slots_table_verdict *v)
{
        mode_t mode = st->st_mode & 07777;
        char *reason = v->e.reason, name[64];
        size_t rs = sizeof(v->e.reason);

        if (st->st_uid != 0) {
                v->problems |= SLOTS_POLICY_OWNER;
                if (p->user_name)
                        p->user_name(st->st_uid, name, sizeof(name));
                else
                        snprintf(name, sizeof(name), "uid %u", (unsigned) st->st_uid);
                verdict_add(reason, rs, "; ", "owner is %s, not root", name);
        }
        if (p->group != (gid_t) -1 && st->st_gid != p->group) {
                v->problems |= SLOTS_POLICY_GROUP;
                if (p->group_name_of)
                        p->group_name_of(st->st_gid, name, sizeof(name));
                else
                        snprintf(name, sizeof(name), "gid %u", (unsigned) st->st_gid);
                verdict_add(reason, rs, "; ", "group is %s, not the service group %s", name,
                            p->group_name ? p->group_name : "");
        }
        if (mode != SLOTS_TABLE_MODE) {
                v->problems |= SLOTS_POLICY_MODE;
                verdict_add(reason, rs, "; ", "mode is %04o, not %04o%s", (unsigned) mode, SLOTS_TABLE_MODE,
                            mode & S_IWOTH ? " (writable by others)" :
                            mode & S_IWGRP ? " (writable by its group)" :
                            mode & S_IROTH ? " (readable by others)" : "");
        }
        if (acl > 0) {
                v->problems |= SLOTS_POLICY_ACL;
                verdict_add(reason, rs, "; ", "it has a POSIX ACL");
        } else if (acl < 0) {
                v->problems |= SLOTS_POLICY_ACL;
                verdict_add(reason, rs, "; ", "its ACL cannot be read: %s", strerror(-acl));
        }
}

bool slots_table_verdict(int fd, const struct stat *st, const struct slots_table_policy *p,
                         struct slots_table_verdict *v)
{
        mode_t mode = st->st_mode & 07777;
        bool judge_group = p->group != (gid_t) -1;
        const char *g = p->group_name ? p->group_name : "GROUP";
        struct acl_lets lets;
        int acl = acl_lets(fd, st, p->group, &lets);

        memset(v, 0, sizeof(*v));
        v->st = *st;
        verdict_reason(st, p, acl, v);
        /*
         * The owner may chmod it; group write counts for any group but root's; with an
         * ACL, its named writers and its owning group's write under the mask; an ACL
         * that cannot be read may hide a writer.
         */
        if (acl > 0)
                v->writable = st->st_uid != 0 || (mode & S_IWOTH) || lets.write;
        else
                v->writable = st->st_uid != 0 || (mode & S_IWOTH) || ((mode & S_IWGRP) && st->st_gid != 0) || acl < 0;
        if (acl > 0)
                v->unreadable = judge_group && !lets.group_read;
        else
                v->unreadable = judge_group && acl == 0 && (st->st_gid != p->group || !(mode & S_IRGRP));
        if (!v->problems)
                return true;
        v->e.kind = SLOTS_ERR_REFUSED;
        snprintf(v->e.object, sizeof(v->e.object), "%s", p->path ? p->path : "");
        if (v->problems & SLOTS_POLICY_OWNER)
                verdict_add(v->e.fix, sizeof(v->e.fix), " && ", judge_group ? "chown root:%s %s" : "chown root%.0s %s",
                            g, v->e.object);
        else if (v->problems & SLOTS_POLICY_GROUP)
                verdict_add(v->e.fix, sizeof(v->e.fix), " && ", "chgrp %s %s", g, v->e.object);
        if (v->problems & SLOTS_POLICY_MODE)
                verdict_add(v->e.fix, sizeof(v->e.fix), " && ", "chmod %04o %s", SLOTS_TABLE_MODE, v->e.object);
        if (v->problems & SLOTS_POLICY_ACL)
                verdict_add(v->e.fix, sizeof(v->e.fix), " && ", "setfacl -b %s", v->e.object);
        return false;
}

bool slots_store_verdict(const struct slots_store *s, const struct slots_table_policy *p,
                         struct slots_table_verdict *v)
{
        struct slots_table_policy q = *p;
        struct stat st;
        bool ok;
        int fd;

        if (!q.path)
                q.path = s->path;
        /* The file as it is now (a save replaced the loaded one); gone: what was loaded, its ACL unknown. */
        fd = openat(s->dirfd, s->name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
        if (fd >= 0 && (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode))) {
                slots_close(fd);
                fd = -1;
        }
        if (fd < 0)
                st = s->st;
        ok = slots_table_verdict(fd, &st, &q, v);
        slots_close(fd);
        return ok;
}

