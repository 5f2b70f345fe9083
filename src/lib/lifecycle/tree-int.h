/* What tree.c and tree-rule.c share: one walk of a user's tree and the rule it applies to each entry. */
#pragma once

#include <stdbool.h>
#include <sys/types.h>

#include "error.h"
#include "tree.h"
#include "walk.h"

enum tree_mode {
        TREE_PREPARE,           /* the slot's uid by an ACL entry (and default), no group or other access */
        TREE_RELEASE_ALL,       /* the user's own tree: everything to the service, group bits closed */
        TREE_RELEASE_SLOT,      /* any tree: only what names the slot goes to the service, group bits closed */
};

struct tree_walk {
        enum tree_mode mode;
        uid_t slot_uid, svc_uid;
        gid_t slot_gid, svc_gid;
        struct slots_tree_stats *stats;
};

/* The walker's visitor that applies the rule of t (a struct tree_walk) to each entry. */
int tree_visit(void *t, enum slots_walk_event ev, const struct slots_walk_entry *en, struct slots_error *e);
