/* The unlink walk: every folder taken from everyone as it is entered, then everything inside removed, post-order on the one walker. */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

#include "fsutil.h"
#include "tree.h"
#include "walk.h"

static int fail_on(struct slots_error *e, const struct slots_walk_entry *en, int r, const char *what)
{
        char shown[SLOTS_ERR_TEXT];

        slots_walk_shown(en->path, en->root_len, shown, sizeof(shown));
        return slots_error_set(e, r, shown, "%s: %s", what, strerror(-r));
}

static int empty_visit(void *data, enum slots_walk_event ev, const struct slots_walk_entry *en, struct slots_error *e)
{
        (void) data;
        if (ev == SLOTS_WALK_CHANGING)
                return 0;
        if (en->other_fs) {
                fail_on(e, en, -EBUSY, "is a mount point or another file system, never entered");
                slots_error_fix(e, "unmount it");
                return -EBUSY;
        }
        /*
         * Each folder is root's, mode 0, before it is read: nobody but root adds a name to it
         * any more (through any descriptor or working folder), so one pass empties it.
         */
        if (ev == SLOTS_WALK_ENTER && (fchown(en->fd, 0, 0) < 0 || fchmod(en->fd, 0) < 0))
                return fail_on(e, en, -errno, "cannot take the folder from everyone");
        if (ev == SLOTS_WALK_ENTER || en->parent_fd < 0)
                return 0;
        if (ev == SLOTS_WALK_ENTRY) {
                if (unlinkat(en->parent_fd, en->name, 0) < 0 && errno != ENOENT)
                        return fail_on(e, en, -errno, "cannot remove");
                return 0;
        }
        if (unlinkat(en->parent_fd, en->name, AT_REMOVEDIR) == 0 || errno == ENOENT)
                return 0;
        return fail_on(e, en, -errno, "cannot remove the folder");
}

int slots_tree_empty(int fd, const char *path, struct slots_error *e)
{
        struct slots_walk how = { .flags = SLOTS_WALK_ONE_FS | SLOTS_WALK_POST, .path = path, .visit = empty_visit };
        int r = slots_walk(fd, &how, e);

        close(fd);
        return r;
}
