/* A user's tree under docs_root: prepared for a slot at assign, given back at release. */
#pragma once

#include <sys/types.h>

#include "config.h"
#include "error.h"

struct slots_tree_stats {
        unsigned long entries;          /* entries visited */
        unsigned long changed;          /* entries whose group or mode changed */
        unsigned long skipped;          /* symlinks, special files, other file systems: left alone */
        unsigned long linked;           /* files with more than one link: left alone, reported */
        unsigned long refused;          /* other entries left alone and reported (changing, moved) */
        /*
         * Called (when set) for each entry a walk leaves alone on purpose and the admin
         * should hear about: path (raw; escape it before printing) and why.  The walk
         * goes on either way.
         */
        void (*note)(void *data, const char *path, const char *why);
        void *note_data;
};

/*
 * Walks keep at most this many folders open at once, at any depth: deeper levels
 * are read ahead, closed, and opened again through ".." (checked to be the same
 * folder) on the way back up.
 */
#define SLOTS_TREE_OPEN_MAX 64

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
 *
 * No walk changes a file (anything but a folder) with more than one hard link:
 * the other link may be a shared or private file elsewhere.  It is counted in
 * stats->linked, reported through stats->note, and the walk goes on.  A walk
 * never stops at the first bad entry: it finishes the tree and returns the
 * first failure.  docs_root is opened through slots_open_root_dir(): no
 * symlink on the way, owned by root or the service all the way.
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
