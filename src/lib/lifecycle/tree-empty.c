/* The unlink walk: everything inside a folder removed, post-order on the one walker, no symlink followed, no mount entered. */
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <string.h>
#include <unistd.h>

#include "fsutil.h"
#include "tree.h"
#include "walk.h"

/* Passes over a folder whose entries came back while it was emptied. */
#define EMPTY_PASSES 3

struct empty {
        bool last_pass;         /* a folder still not empty now is a failure */
        bool again;             /* a folder was not empty at its LEAVE: entries were added meanwhile */
        unsigned long removed;  /* entries removed in this pass */
};

static int fail_on(struct slots_error *e, const struct slots_walk_entry *en, int r, const char *what)
{
        char shown[SLOTS_ERR_TEXT];

        slots_walk_shown(en->path, en->root_len, shown, sizeof(shown));
        return slots_error_set(e, r, shown, "%s: %s", what, strerror(-r));
}

static int empty_visit(void *data, enum slots_walk_event ev, const struct slots_walk_entry *en, struct slots_error *e)
{
        struct empty *m = data;

        if (ev == SLOTS_WALK_CHANGING)
                return 0;
        if (en->other_fs) {
                fail_on(e, en, -EBUSY, "is a mount point or another file system, never entered");
                slots_error_fix(e, "unmount it");
                return -EBUSY;
        }
        if (ev == SLOTS_WALK_ENTER || en->parent_fd < 0)
                return 0;
        if (ev == SLOTS_WALK_ENTRY) {
                if (unlinkat(en->parent_fd, en->name, 0) == 0)
                        m->removed++;
                else if (errno != ENOENT)
                        return fail_on(e, en, -errno, "cannot remove");
                return 0;
        }
        if (unlinkat(en->parent_fd, en->name, AT_REMOVEDIR) == 0) {
                m->removed++;
                return 0;
        }
        if (errno == ENOENT)
                return 0;
        if (errno == ENOTEMPTY && !m->last_pass) {
                m->again = true;
                return 0;
        }
        return fail_on(e, en, -errno, "cannot remove the folder");
}

int slots_tree_empty(int fd, const char *path, struct slots_error *e)
{
        struct empty m = { 0 };
        struct slots_walk how = { .flags = SLOTS_WALK_ONE_FS | SLOTS_WALK_POST, .path = path, .visit = empty_visit,
                                  .data = &m };
        int r = 0;

        /*
         * Entries added while a folder was read may be missed by that pass: a pass
         * that removed something is followed by another, which finds nothing when
         * nothing came back.
         */
        for (int pass = 1; pass <= EMPTY_PASSES; pass++) {
                m.last_pass = pass == EMPTY_PASSES;
                m.again = false;
                m.removed = 0;
                slots_error_clear(e);
                r = slots_walk(fd, &how, e);
                if (r < 0 || (!m.again && m.removed == 0))
                        break;
        }
        close(fd);
        return r;
}
