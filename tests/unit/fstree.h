/*
 * The scratch folder of the tests that walk trees as root (test-tree, test-cleanup): objects
 * of every kind made in it with an owner and mode, and checks of what a walk left.  Paths
 * are relative to base (opened as bfd).  Include after <cmocka.h>.
 */
#pragma once

#include <stdbool.h>
#include <sys/acl.h>
#include <sys/stat.h>
#include <sys/types.h>

extern char base[256];
extern int bfd;

/* A fresh base (TMPDIR or /tmp, 0755) and its removal with all it holds. */
int fstree_setup(void **state);
int fstree_teardown(void **state);

/*
 * Called once by main: as root, a private mount namespace for the cases that mount.  Each
 * case asks need_root() and need_mounts(), which print why it skips.
 */
void fstree_init(void);
bool need_root(void);
bool need_mounts(void);

/* Detaches what a failed case may have left mounted at these paths below base. */
void fstree_umount(const char *const *rels, size_t n);

/* Removes dfd/name with all it holds, never following a symlink. */
int rm_tree(int dfd, const char *name);

enum kind { DIR_, FILE_, FIFO_, SOCK_, DEV_, LINK_ };

/* Makes rel of kind (a file holds "data\n"), owner and mode; a link points at target. */
void mk(const char *rel, enum kind k, uid_t uid, gid_t gid, mode_t mode, const char *target);

/* The folders on the way to rel, root's 0711, as far as they are missing. */
void mk_way(const char *rel);

/* rel's own stat (never followed); the test fails when it is not there. */
struct stat st_of(const char *rel);

/* The failures (0 or 1, printed): rel is uid:gid mode; mode -1 is not compared. */
int is(const char *rel, uid_t uid, gid_t gid, int mode);

/* How many entries the folder rel holds. */
int entries_in(const char *rel);

/* Sets the ACL of rel from its text; the failures of comparing it with want (numeric ids). */
void set_acl(const char *rel, const char *text, acl_type_t type);
int acl_is(const char *rel, acl_type_t type, const char *want);
