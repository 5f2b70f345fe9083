/*
 * The scratch folder the replace and store tests work in (dir, opened as dfd, made
 * by setup and removed by teardown), files in it, and failure injection: "the Nth
 * call of fn fails with err" for tests linked with
 * -Wl,--wrap=write,--wrap=fsync,--wrap=fchown,--wrap=renameat,--wrap=fchmod.
 */
#pragma once

#include <stdbool.h>
#include <sys/stat.h>
#include <sys/types.h>

struct inj {
        const char *fn;         /* NULL: disarmed */
        int at;                 /* 1-based call number that fails */
        int err;
        int calls, fired;
        size_t short_write;     /* >0: write() writes at most this many bytes */
};
extern struct inj inj;

void inj_arm(const char *fn, int at, int err);
void inj_reset(void);
ssize_t __real_write(int fd, const void *buf, size_t n);

extern char dir[256];
extern int dfd;
int setup(void **state);
int teardown(void **state);
#define TEST(f) cmocka_unit_test_setup_teardown(f, setup, teardown)

bool is_root(void);
/* Some other owner when root (4242:4243), else ourselves. */
uid_t owner_uid(void);
gid_t owner_gid(void);
void make_file(const char *name, const char *text, uid_t uid, gid_t gid, mode_t mode);

struct snap {
        char data[4096];
        ssize_t len;
        struct stat st;
};
void snapshot(const char *name, struct snap *s);
/* Same bytes, same inode (never renamed over), same owner, group and mode. */
bool unchanged(const char *name, const struct snap *before, char *why, size_t size);
void assert_file(const char *name, const char *text, uid_t uid, gid_t gid, mode_t mode);
/* The names in the folder, sorted, comma-separated: temp files show up here. */
void dir_names(char *out, size_t size);
void assert_dir(const char *expected);
