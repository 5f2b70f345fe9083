/* The table's finished-releases file beside it: which pending slots are free since the table's last write. */
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fsutil.h"
#include "ids.h"
#include "replace.h"
#include "table-done.h"

/* The file's name for a table named table_name: 0, or -ENAMETOOLONG. */
static int done_name(const char *table_name, char buf[static 256])
{
        int n = snprintf(buf, 256, "%s%s", table_name, SLOTS_DONE_SUFFIX);

        return n < 0 || n >= 256 ? -ENAMETOOLONG : 0;
}

/* Only who may write the table may have written what frees a slot. */
static bool trusted(const struct stat *st)
{
        return S_ISREG(st->st_mode) && (st->st_uid == 0 || st->st_uid == geteuid()) && st->st_nlink == 1 &&
               !(st->st_mode & (S_IWGRP | S_IWOTH));
}

/*
 * The first line for the table file table_st, with its newline, into buf[128]: its
 * device, inode, size and modification time.  Not the change time: a chmod, chown
 * or ACL of the table (an admin's, slots-provision's repair) changes no content.
 */
static const char *header(const struct stat *table_st, char buf[static 128])
{
        snprintf(buf, 128, "table %ju %ju %jd %jd.%09ld\n", (uintmax_t) table_st->st_dev,
                 (uintmax_t) table_st->st_ino, (intmax_t) table_st->st_size, (intmax_t) table_st->st_mtim.tv_sec,
                 table_st->st_mtim.tv_nsec);
        return buf;
}

/* The same content as table_st names: nothing saved in between (every save renames a new file). */
static bool same_table(const struct stat *a, const struct stat *b)
{
        return a->st_dev == b->st_dev && a->st_ino == b->st_ino && a->st_size == b->st_size &&
               a->st_mtim.tv_sec == b->st_mtim.tv_sec && a->st_mtim.tv_nsec == b->st_mtim.tv_nsec;
}

/* The lines after the first, when the first names table_st: their start, or NULL. */
static const char *lines_about(const char *text, size_t len, const struct stat *table_st)
{
        char want[128];
        size_t n = strlen(header(table_st, want));

        return len >= n && memcmp(text, want, n) == 0 ? text + n : NULL;
}

int slots_done_fold(int dirfd, const char *table_name, const struct stat *table_st, unsigned pool,
                    struct slots_table *t)
{
        struct slots_error ignored;
        char name[256], *text = NULL;
        const char *lines = NULL;
        struct stat st, now;
        size_t len = 0;
        int freed = 0;

        if (done_name(table_name, name) < 0)
                return 0;
        slots_error_clear(&ignored);
        if (slots_read_text(dirfd, name, &(struct slots_read){ .path = name, .max = SLOTS_DONE_MAX }, &st, &text,
                            &len, &ignored) == 0 && trusted(&st))
                lines = lines_about(text, len, table_st);
        /*
         * A save between the table's read and this one replaced the file (its lines gone
         * with the table they were about): what was read is no moment of the table.
         */
        if (fstatat(dirfd, table_name, &now, AT_SYMLINK_NOFOLLOW) < 0 || !same_table(&now, table_st)) {
                free(text);
                return -ESTALE;
        }
        if (lines)
                freed = (int) slots_table_fold_done(t, pool, lines, len - (size_t) (lines - text));
        free(text);
        return freed;
}

/* A whole new file: its first line, then line. */
struct fresh {
        const char *first, *line;
};

static int write_fresh(int fd, void *arg)
{
        const struct fresh *f = arg;
        int r = slots_write_all(fd, f->first, strlen(f->first));

        return r < 0 ? r : slots_write_all(fd, f->line, strlen(f->line));
}

/* fd, open on the file: 1 when it is believed and about table_st, 0 when about another table, or -errno. */
static int about(int fd, const struct stat *table_st, struct stat *st)
{
        char want[128], got[128];
        size_t n = strlen(header(table_st, want));
        ssize_t k;

        if (fstat(fd, st) < 0)
                return -errno;
        if (!trusted(st))
                return -EPERM;
        k = pread(fd, got, n, 0);
        if (k < 0)
                return -errno;
        return (size_t) k == n && memcmp(got, want, n) == 0;
}

int slots_done_add(int dirfd, const char *table_name, const char *display, const struct stat *table_st, unsigned n,
                   const char *released, struct slots_error *e)
{
        const struct slots_file_mode def = { .uid = 0, .gid = table_st->st_gid, .mode = 0640 };
        char name[256], slot[SLOTS_NAME_MAX], line[SLOTS_NAME_MAX + 64], first[128];
        struct fresh f = { header(table_st, first), line };
        struct stat st;
        int fd, r;

        if (done_name(table_name, name) < 0)
                return slots_error_set(e, -ENAMETOOLONG, display, "the table's name is too long");
        snprintf(line, sizeof(line), "%s %s\n", slots_slot_name(n, slot), released);
        fd = openat(dirfd, name, O_RDWR | O_APPEND | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
        if (fd < 0 && errno != ENOENT)
                return slots_error_set(e, -errno, name, "cannot open the finished-releases file beside %s: %s",
                                       display, errno == ELOOP ? "it is a symlink" : strerror(errno));
        r = fd < 0 ? 0 : about(fd, table_st, &st);
        if (r == -EPERM) {
                slots_close(fd);
                slots_error_refuse(e, r, name, "the finished-releases file beside %s is not a plain file of "
                                   "root's that only root writes", display);
                slots_error_fix(e, "remove it; the next release that finishes makes it again");
                return r;
        }
        if (r < 0) {
                slots_close(fd);
                return slots_error_set(e, r, name, "cannot read: %s", strerror(-r));
        }
        if (r == 0) {
                /* None yet, or about a table file written since: a new file, whole or not at all. */
                slots_close(fd);
                return slots_replace_with(dirfd, name, name, write_fresh, &f, &def,
                                          SLOTS_REPLACE_NO_SYNC | SLOTS_REPLACE_FORCE_MODE, e);
        }
        r = slots_write_all(fd, line, strlen(line));
        slots_close(fd);
        if (r < 0)
                return slots_error_set(e, r, name, "cannot write: %s", strerror(-r));
        return 0;
}

void slots_done_remove(int dirfd, const char *table_name)
{
        char name[256];

        if (done_name(table_name, name) == 0)
                (void) unlinkat(dirfd, name, 0);
}

int slots_done_clean_stale(int dirfd, const char *table_name)
{
        char name[256];

        return done_name(table_name, name) < 0 ? -ENAMETOOLONG : slots_replace_clean_stale(dirfd, name);
}
