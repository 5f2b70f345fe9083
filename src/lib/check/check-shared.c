/* check's row about what the shared folders hold: app-private (a browser profile or socket folder in one). */
#include <errno.h>
#include <fcntl.h>
#include <unistd.h>

#include "check-int.h"
#include "fsutil.h"
#include "provision.h"
#include "strbuf.h"

/*
 * Every shared folder, to its end (slots_shared_app_private_find()): one of the
 * platform's app-private names in it, the verdict slots-provision warns with, is a
 * FAIL; a folder the walk cannot read to its end is a FAIL too, never a PASS.
 */
void check_app_private(struct check_run *k)
{
        const struct slots_config *c = k->cfg;
        struct slots_app_private a = { 0 };
        struct strbuf d = { 0 }, f = { 0 };
        int docs;

        if (!c->docs_root || c->n_shared_dirs == 0) {
                check_add_rowf(k, SLOTS_CHECK_SKIP, "app-private", NULL, NULL, "%s sets no shared folder", c->path);
                return;
        }
        docs = check_docs_for_walk(k, "app-private");
        if (docs < 0)
                return;
        if (slots_shared_app_private_find(docs, c, &a) < 0)
                k->err = -ENOMEM;
        close(docs);
        if (a.n) {
                strbuf_addf(&d, "%lu app-private name%s inside a shared folder: %s%s", a.n, a.n == 1 ? "" : "s",
                            strbuf_str(&a.found), a.n > SLOTS_APP_PRIVATE_SHOWN ? ", ..." : "");
                strbuf_addf(&f, "move each out of the shared folder (a browser profile or socket folder is one "
                                "program's own state), or name it in shared_dirs to share it on purpose; "
                                "slots-provision leaves it alone meanwhile");
                check_add_row(k, SLOTS_CHECK_FAIL, "app-private", NULL, &d, &f);
        } else if (a.unread.len) {
                strbuf_addf(&d, "a shared folder could not be read to its end: %s", strbuf_str(&a.unread));
                strbuf_addf(&f, "make it readable by root (a mount, a FUSE folder?), then run check again");
                check_add_row(k, SLOTS_CHECK_FAIL, "app-private", NULL, &d, &f);
        } else {
                strbuf_addf(&d, "no app-private name (browser profile or socket folder) in the shared folders");
                check_add_row(k, SLOTS_CHECK_PASS, "app-private", NULL, &d, NULL);
        }
        if (d.oom || f.oom)
                k->err = -ENOMEM;
        slots_app_private_free(&a);
        strbuf_free(&d);
        strbuf_free(&f);
}
