/* A user's tree under docs_root: prepared for a slot at assign, given back at release. */
#pragma once

#include <sys/types.h>

#include "config.h"
#include "error.h"

struct slots_tree_stats {
        unsigned long entries;          /* entries visited */
        unsigned long changed;          /* entries whose group or mode changed */
};

/*
 * Creates docs_root/<user_tree for user> when missing, then walks it with
 * openat and O_NOFOLLOW, never following a symlink and never crossing into
 * another file system: group slot_gid, directories setgid 2770, files g+rw, no
 * access for others; owners stay.  Returns 0 or -errno.
 */
int slots_tree_prepare(int rootfd, const struct slots_config *c, const char *user, gid_t slot_gid,
                       uid_t service_uid, gid_t service_gid, struct slots_tree_stats *stats,
                       struct slots_error *e);

/*
 * Gives a tree back to the service: group of every entry is the service group
 * again, and any entry owned by slot_uid or slot_gid goes to service_uid /
 * service_gid.  With user NULL (a pending slot, whose user the table no longer
 * names), every user tree is walked.  Returns 0 or -errno.
 */
int slots_tree_release(int rootfd, const struct slots_config *c, const char *user, uid_t slot_uid,
                       gid_t slot_gid, uid_t service_uid, gid_t service_gid,
                       struct slots_tree_stats *stats, struct slots_error *e);
