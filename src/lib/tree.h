/* A user's tree under docs_root: prepared for a slot at assign, given back at release. */
#pragma once

#include <sys/types.h>

#include "config.h"
#include "error.h"

struct slots_tree_stats {
        unsigned long entries;          /* entries visited */
        unsigned long changed;          /* entries whose group or mode changed */
        unsigned long skipped;          /* symlinks, special files, other file systems: left alone */
};

/* Trees deeper than this are refused (every level holds an open directory). */
#define SLOTS_TREE_MAX_DEPTH 1000

/*
 * Creates docs_root/<user_tree for user> when missing, then walks it with
 * openat and O_NOFOLLOW, never following a symlink and never crossing into
 * another file system: group slot_gid, directories setgid 2770, files g+rw, no
 * access for others; owners stay.  Returns 0 or -errno.
 *
 * Missing folders are created with mode 0, then fchown, then fchmod: those
 * between docs_root and the tree service_uid:service_gid 0711 (the slots
 * traverse them, nobody lists them), the tree itself service_uid:slot_gid 2770.
 * docs_root itself must exist (-ENOENT).  Regular files and FIFOs are opened
 * (O_NOFOLLOW, O_NONBLOCK) only when they need a change; setuid and setgid
 * bits of files are cleared; symlinks, sockets and devices are left alone.
 */
int slots_tree_prepare(int rootfd, const struct slots_config *c, const char *user, gid_t slot_gid,
                       uid_t service_uid, gid_t service_gid, struct slots_tree_stats *stats,
                       struct slots_error *e);

/*
 * Gives a tree back to the service: group of every entry is the service group
 * again, and any entry owned by slot_uid or slot_gid goes to service_uid /
 * service_gid.  With user NULL (a pending slot, whose user the table no longer
 * names), every user tree is walked but only entries that name the slot
 * (owner slot_uid or group slot_gid) change, since other trees belong to
 * users who still hold their slots.  Access for others is removed, setuid and
 * setgid bits of files are cleared, and POSIX ACL entries naming slot_uid or
 * slot_gid are deleted; symlinks and special files owned by the slot change
 * owner only (never followed).  A missing docs_root or tree is nothing to do.
 * Returns 0 or -errno.
 */
int slots_tree_release(int rootfd, const struct slots_config *c, const char *user, uid_t slot_uid,
                       gid_t slot_gid, uid_t service_uid, gid_t service_gid,
                       struct slots_tree_stats *stats, struct slots_error *e);

/*
 * Removes everything inside the directory fd (consumed; the folder itself stays):
 * an unlinkat walk that never follows a symlink and never enters a mount point
 * or another file system (-EBUSY naming it).  path names fd in errors.  Keeps
 * going after a failure and returns 0 or the first -errno.
 */
int slots_tree_empty(int fd, const char *path, struct slots_error *e);
