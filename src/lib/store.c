/* The table file on disk: checked directory, lock, load, owner-preserving save. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

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

int slots_store_open(struct slots_store *s, int rootfd, const char *path, unsigned pool, gid_t group,
                     unsigned flags, struct slots_error *e)
{
        char *text = NULL, *lockname = NULL;
        size_t len = 0;
        int r;

        memset(s, 0, sizeof(*s));
        s->dirfd = s->lockfd = -1;
        s->pool = pool;
        s->group = group;
        s->path = strdup(path);
        if (!s->path)
                return -ENOMEM;

        if (flags & SLOTS_STORE_WRITE) {
                /* The folder a writer replaces the table in: no symlink on the way, root's all the way. */
                struct slots_chase how = {
                        .flags = SLOTS_CHASE_PARENT | SLOTS_CHASE_NO_SYMLINKS | SLOTS_CHASE_TRUSTED,
                        .what = "the table's folder",
                        .trusted_uid = (uid_t) -1,
                        .trusted_gid = (gid_t) -1,
                        .open_flags = O_RDONLY | O_DIRECTORY,
                };

                r = slots_chase(rootfd, s->path, &how, &s->name, e);
                if (r < 0 && r != -ENOENT)
                        goto fail;
        } else {
                r = slots_open_parent_in(rootfd, s->path, &s->name);
        }
        if (r < 0) {
                slots_error_set(e, r, path, "cannot open its directory: %s", strerror(-r));
                goto fail;
        }
        s->dirfd = r;
        r = check_dir(s->dirfd, path, flags, e);
        if (r < 0)
                goto fail;

        if (flags & SLOTS_STORE_WRITE) {
                if (asprintf(&lockname, "%s%s", s->name, SLOTS_LOCK_SUFFIX) < 0) {
                        r = -ENOMEM;
                        goto fail;
                }
                r = slots_lock_take(s->dirfd, lockname, path, e);
                if (r < 0)
                        goto fail;
                s->lockfd = r;
                /* A writer killed before its rename leaves its temp; under the lock it is ours to remove. */
                (void) slots_replace_clean_stale(s->dirfd, s->name);
                (void) slots_tindex_clean_stale(s->dirfd, s->name);
        }

        r = slots_read_text(s->dirfd, s->name, &(struct slots_read){ .path = path, .max = SLOTS_TABLE_MAX }, &s->st,
                            &text, &len, e);
        if (r == -ENOENT) {
                slots_error_clear(e);
                s->table = slots_table_new();
                r = s->table ? 0 : -ENOMEM;
                goto out;
        }
        if (r == -ELOOP)
                slots_error_fix(e, "replace the link with the table file itself");
        else if (r == -EINVAL)
                /* Refused (exit 1) like a symlink, not a malformed table (exit 2). */
                slots_error_fix(e, "move it away; slots-provision creates an empty table");
        else if (r == -EACCES)
                slots_error_fix(e, "run as root or as a member of the table's group");
        if (r < 0)
                goto fail;
        s->exists = true;
        r = slots_table_parse(text, len, path, pool, &s->table, e);
        if (r < 0)
                goto fail;
out:
        free(text);
        free(lockname);
        return r;
fail:
        free(text);
        free(lockname);
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
        /* A third of the pieces are one byte (a quote, a comma): stored, no memcpy call (issue 18). */
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
 * The index pam_slots reads instead of the table (table-index.h), made from what
 * was just saved.  The table is saved whatever happens here: an index that is
 * missing or names an older table file is never trusted, so a failure only costs
 * the next sessions a read of the whole table.
 */
static void save_index(struct slots_store *s)
{
        struct slots_error ie;
        struct stat st;

        slots_error_clear(&ie);
        if (fstatat(s->dirfd, s->name, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISREG(st.st_mode))
                (void) slots_tindex_write(s->dirfd, s->name, s->path, &st, s->table, s->pool, &ie);
}

int slots_store_save(struct slots_store *s, struct slots_error *e)
{
        const struct slots_file_mode def = { .uid = 0, .gid = s->group, .mode = SLOTS_TABLE_MODE };
        int r;

        /* Straight into the temp file: the text is never all in memory next to the tree (issue 18). */
        r = slots_replace_with(s->dirfd, s->name, s->path, write_table, s->table, &def, 0, e);
        if (r == 0) {
                s->exists = true;
                save_index(s);
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

bool slots_store_policy_ok(const struct stat *st, gid_t group)
{
        return st->st_uid == 0 && st->st_gid == group && (st->st_mode & 07777) == SLOTS_TABLE_MODE;
}
