/* A user's tree under docs_root: prepared for a slot at assign, given back at release. */
#pragma once

#include <sys/types.h>

#include "config.h"
#include "procs.h"
#include "error.h"
#include "walk.h"

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
        /* When set, the user's own tree at release adds each entry's inode (procs.h: the neighbours' look). */
        struct slots_held *held;
};

/* Walks keep at most this many folders open at once, at any depth (walk.h). */
#define SLOTS_TREE_OPEN_MAX SLOTS_WALK_OPEN_MAX

/*
 * Creates docs_root/<user_tree for user> when missing, then walks it
 * (walk.c: any depth, never following a symlink, never crossing into another
 * file system) and grants it to the slot's uid, never to a group another
 * account could borrow: folders, files and FIFOs get an ACL entry
 * u:<slot_uid>:rwX (folders a default ACL with it too), the owning group and
 * others no access (group::---, mask rwX), set-id bits of files cleared;
 * owners and groups stay.  Returns 0 or -errno.
 *
 * Missing folders are created with mode 0, then fchown, then fchmod: those
 * between docs_root and the tree service_uid:service_gid 0711 (the slots
 * traverse them, nobody lists them), the tree itself
 * service_uid:service_gid 0700 before its ACL.  docs_root itself must exist
 * (-ENOENT) on a file system with POSIX ACLs (-EOPNOTSUPP).  Symlinks,
 * sockets and devices are left alone.
 *
 * No walk widens a file (anything but a folder) with more than one hard link:
 * the other link may be a shared or private file elsewhere.  It is counted in
 * stats->linked, reported through stats->note, and the walk goes on; only its
 * set-id bits go when it is the slot's or of the slot's group (that only
 * narrows).  A walk never stops at the first bad entry: it finishes the tree
 * and returns the first failure; a tree it cannot read to its end fails.
 * docs_root is opened through slots_open_root_dir(): no symlink on the way,
 * owned by root or the service all the way.
 */
int slots_tree_prepare(int rootfd, const struct slots_config *c, const char *user, uid_t slot_uid, gid_t slot_gid,
                       uid_t service_uid, gid_t service_gid, struct slots_tree_stats *stats,
                       struct slots_error *e);

/*
 * Gives a tree back to the service: the group of every entry is the service
 * group again, any entry owned by slot_uid or slot_gid goes to service_uid /
 * service_gid, and no group keeps access (folders and files keep their
 * owner's bits only; a run that kept the service's groups, as sudo -P does,
 * finds nothing).  With user NULL (a pending slot, whose user the table no
 * longer names), every user tree is walked but only entries that name the
 * slot (owner slot_uid or group slot_gid) change, and their group bits stay
 * (the ACL mask of the tree's current holder).  Access for others is
 * removed, set-id bits of files cleared (of a file with more than one link
 * too, when it names the slot), and POSIX ACL entries naming slot_uid or
 * slot_gid deleted (an ACL left with no named entry goes too); symlinks and
 * special files owned by the slot change owner only (never followed).  A
 * missing docs_root or tree is nothing to do.  Returns 0 or -errno.
 */
int slots_tree_release(int rootfd, const struct slots_config *c, const char *user, uid_t slot_uid,
                       gid_t slot_gid, uid_t service_uid, gid_t service_gid,
                       struct slots_tree_stats *stats, struct slots_error *e);

/*
 * Removes everything inside the directory fd (consumed; the folder itself stays,
 * root's, mode 0): an unlinkat walk that takes each folder from everyone (owner
 * and group root, mode 0, through its fd) as it enters it, so no other account
 * adds a name behind it and one pass empties the tree; it never follows a
 * symlink and never enters a mount point or another file system (-EBUSY naming
 * it).  path names fd in errors.  Keeps going after a failure and returns 0 or
 * the first -errno.
 */
int slots_tree_empty(int fd, const char *path, struct slots_error *e);
