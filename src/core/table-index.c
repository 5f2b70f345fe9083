/* The table's index: each slot's state in one byte, valid only for the table file it names. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <linux/openat2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "fsutil.h"
#include "ids.h"
#include "replace.h"
#include "table-index.h"

/*
 * "slots-index 1 dev D ino I size S ctime C.N pool P\n", every number of fixed
 * width: the header is a function of the table's stat and the pool alone, so a
 * reader compares bytes and never parses.  The states follow, then a trailer
 * with their hash: the index is written without fsync, and a copy torn by a
 * crash fails the hash.  The hash takes eight bytes a step (a session hashes
 * every state: 9,999 bytes at the largest pool); it guards against a torn
 * write, not an adversary, since only root writes the index.
 */
#define HEAD_FMT "slots-index 1 dev %016jx ino %016jx size %016jx ctime %016jx.%09ld pool %04u\n"
#define HEAD_LEN (sizeof("slots-index 1 dev  ino  size  ctime . pool \n") - 1 + 4 * 16 + 9 + 4)
#define TRAIL_FMT "\nhash %016jx\n"
#define TRAIL_LEN (sizeof("\nhash \n") - 1 + 16)

static uint64_t mix(uint64_t h, uint64_t w)
{
        h = (h ^ w) * UINT64_C(0x9e3779b97f4a7c15);
        return h ^ (h >> 29);
}

static uint64_t states_hash(const char *p, size_t n)
{
        uint64_t h = mix(UINT64_C(0xcbf29ce484222325), n), w;
        size_t i = 0;

        for (; i + 8 <= n; i += 8) {
                memcpy(&w, p + i, 8);
                h = mix(h, w);
        }
        w = 0;
        memcpy(&w, p + i, n - i);
        return mix(h, w);
}

static void trail_of(const char *states, unsigned pool, char buf[static TRAIL_LEN + 1])
{
        snprintf(buf, TRAIL_LEN + 1, TRAIL_FMT, (uintmax_t) states_hash(states, pool));
}

static int head_of(const struct stat *st, unsigned pool, char buf[static HEAD_LEN + 1])
{
        int n = snprintf(buf, HEAD_LEN + 1, HEAD_FMT, (uintmax_t) st->st_dev, (uintmax_t) st->st_ino,
                         (uintmax_t) st->st_size, (uintmax_t) st->st_ctim.tv_sec, (long) st->st_ctim.tv_nsec,
                         pool);

        return n == (int) HEAD_LEN && pool <= SLOTS_POOL_MAX ? 0 : -EINVAL;
}

static char *index_name(const char *table_name)
{
        char *name;

        return asprintf(&name, "%s%s", table_name, SLOTS_TINDEX_SUFFIX) < 0 ? NULL : name;
}

static char state_byte(enum slots_slot_state s)
{
        return s == SLOTS_SLOT_ASSIGNED ? 'a' : s == SLOTS_SLOT_PENDING ? 'p' : '-';
}

int slots_tindex_write(int dirfd, const char *table_name, const char *display, const struct stat *table_st,
                       const struct slots_table *t, unsigned pool, struct slots_error *e)
{
        const struct slots_file_mode def = { .uid = 0, .gid = table_st->st_gid, .mode = SLOTS_TABLE_MODE };
        size_t len = HEAD_LEN + pool + TRAIL_LEN;
        char *buf = malloc(len + 1), *name = index_name(table_name), *shown = NULL;
        int r;

        if (!buf || !name || asprintf(&shown, "%s%s", display, SLOTS_TINDEX_SUFFIX) < 0) {
                r = slots_error_set(e, -ENOMEM, display, "cannot write its index: out of memory");
                goto out;
        }
        r = head_of(table_st, pool, buf);
        if (r < 0) {
                slots_error_set(e, r, shown, "cannot describe a pool of %u slots", pool);
                goto out;
        }
        slots_table_states(t, pool, (unsigned char *) buf + HEAD_LEN);
        for (size_t i = HEAD_LEN; i < HEAD_LEN + pool; i++)
                buf[i] = state_byte((enum slots_slot_state) (unsigned char) buf[i]);
        trail_of(buf + HEAD_LEN, pool, buf + HEAD_LEN + pool);
        r = slots_replace(dirfd, name, shown, buf, len, &def, SLOTS_REPLACE_FORCE_MODE | SLOTS_REPLACE_NO_SYNC, e);
out:
        free(buf);
        free(name);
        free(shown);
        return r;
}

int slots_tindex_clean_stale(int dirfd, const char *table_name)
{
        char *name = index_name(table_name);
        int r = name ? slots_replace_clean_stale(dirfd, name) : -ENOMEM;

        free(name);
        return r;
}

static int trusted(int fd, unsigned pool, const char **why)
{
        struct stat st;

        if (fstat(fd, &st) < 0)
                return -errno;
        if (!S_ISREG(st.st_mode))
                *why = "not a regular file";
        else if (st.st_nlink != 1)
                *why = "more than one link";
        else if (st.st_uid != 0)
                *why = "not owned by root";
        else if (st.st_mode & (S_IWGRP | S_IWOTH))
                *why = "writable by others than root";
        else if (st.st_size != (off_t) (HEAD_LEN + pool + TRAIL_LEN))
                *why = "not the size of its pool";
        else
                return 0;
        return -ESTALE;
}

static int decode(char c, enum slots_slot_state *state)
{
        switch (c) {
        case 'a':
                *state = SLOTS_SLOT_ASSIGNED;
                return 0;
        case 'p':
                *state = SLOTS_SLOT_PENDING;
                return 0;
        case '-':
                *state = SLOTS_SLOT_FREE;
                return 0;
        }
        return -ESTALE;
}

/* The whole index into buf (its size checked by trusted()): header, states and hash as written. */
static int verify(int fd, char *buf, const struct stat *table_st, unsigned pool, const char **why)
{
        char want[HEAD_LEN + 1], trail[TRAIL_LEN + 1];
        size_t len = HEAD_LEN + pool + TRAIL_LEN;

        if (pread(fd, buf, len, 0) != (ssize_t) len)
                *why = "cannot be read";
        else if (head_of(table_st, pool, want) < 0 || memcmp(buf, want, HEAD_LEN) != 0)
                *why = "made for another table file or pool";
        else {
                trail_of(buf + HEAD_LEN, pool, trail);
                if (memcmp(buf + HEAD_LEN + pool, trail, TRAIL_LEN) == 0)
                        return 0;
                *why = "torn: its hash does not match";
        }
        return -ESTALE;
}

int slots_tindex_lookup(int dirfd, const char *table_name, const struct stat *table_st, unsigned pool,
                        unsigned n, enum slots_slot_state *state, const char **why)
{
        char name[SLOTS_NAME_MAX + 256], *buf = NULL;
        int fd, r;

        *why = "unusable";
        if (n == 0 || n > pool || pool > SLOTS_POOL_MAX)
                return -ESTALE;
        if (snprintf(name, sizeof(name), "%s%s", table_name, SLOTS_TINDEX_SUFFIX) >= (int) sizeof(name))
                return -ESTALE;
        fd = openat(dirfd, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
        if (fd < 0) {
                *why = errno == ENOENT ? "missing" : errno == ELOOP ? "a symlink" : "cannot be opened";
                return -ESTALE;
        }
        r = trusted(fd, pool, why);
        if (r < 0)
                goto out;
        buf = malloc(HEAD_LEN + pool + TRAIL_LEN);
        if (!buf) {
                r = -ENOMEM;
                goto out;
        }
        r = verify(fd, buf, table_st, pool, why);
        if (r == 0 && decode(buf[HEAD_LEN + n - 1], state) < 0) {
                *why = "holds a byte that is no state";
                r = -ESTALE;
        }
out:
        free(buf);
        close(fd);
        return r;
}

/* The folder of absolute path, no symlink on the way; *name points at the last component. */
static int open_folder(const char *path, const char **name)
{
        struct open_how how = {
                .flags = O_RDONLY | O_DIRECTORY | O_CLOEXEC,
                .resolve = RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS,
        };
        const char *slash = strrchr(path, '/');
        char dir[PATH_MAX];
        size_t len;
        long fd;

        if (path[0] != '/' || !slash || slash[1] == '\0')
                return -EINVAL;
        len = slash == path ? 1 : (size_t) (slash - path);
        if (len >= sizeof(dir))
                return -ENAMETOOLONG;
        memcpy(dir, path, len);
        dir[len] = '\0';
        fd = syscall(SYS_openat2, AT_FDCWD, dir, &how, sizeof(how));
        if (fd < 0 && errno == ENOSYS)
                return slots_open_parent_in(AT_FDCWD, path, name);
        if (fd < 0)
                return -errno;
        *name = slash + 1;
        return (int) fd;
}

int slots_tindex_ask(const char *table, unsigned pool, unsigned n, struct slots_tindex_answer *a)
{
        const char *name;
        int dirfd, fd, r = -ESTALE;

        a->table_fd = -1;
        a->why = "its folder cannot be opened without a symlink";
        dirfd = open_folder(table, &name);
        if (dirfd < 0)
                return -ESTALE;
        fd = openat(dirfd, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
        if (fd < 0 || fstat(fd, &a->table) < 0 || !S_ISREG(a->table.st_mode)) {
                a->why = "the table cannot be opened as a regular file";
                if (fd >= 0)
                        close(fd);
        } else {
                a->table_fd = fd;
                r = slots_tindex_lookup(dirfd, name, &a->table, pool, n, &a->state, &a->why) == 0 ? 0 : -ESTALE;
        }
        close(dirfd);
        return r;
}
