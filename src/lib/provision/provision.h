/* What slots-provision brings a host (or an image tree) to: accounts, folders, traversal bits, files. */
#pragma once

#include <stdbool.h>

#include "config.h"
#include "error.h"
#include "strbuf.h"

enum slots_prov_kind {
        SLOTS_PROV_CHANGE,              /* one change, done (or, in a dry run, to be done) */
        SLOTS_PROV_WARNING,             /* left alone on purpose; the run goes on */
        SLOTS_PROV_PROBLEM,             /* blocks the run: found before anything changed */
};

struct slots_prov_msg {
        enum slots_prov_kind kind;
        unsigned slot;                  /* the slot of the pool it is about (1-based), 0 for none */
        const char *object;             /* the account, group or path it is about ("" for a change) */
        const char *text;               /* a change: the whole line; otherwise the reason */
        const char *fix;                /* "" when there is none */
};

struct slots_prov_opts {
        bool dry_run;                   /* report what would change, change nothing, take no lock */
        bool host;                      /* the live host: NSS lookups, lckpwdf, cache flush */
        long lastchg;                   /* day (since 1970) written into new shadow lines */
        void (*report)(void *arg, const struct slots_prov_msg *m);
        void *arg;
};

/*
 * Brings the tree under rootfd to what the config describes
 * (slots-provision(8)).  Everything is checked before anything changes: account
 * conflicts, a symlink where a slot folder belongs, a missing service account
 * are each reported as a PROBLEM, and the run is refused (e says how many) with
 * nothing changed.  Otherwise the account files are written as one transaction,
 * then folders, traversal bits, shared folders, the table, the slotctl config
 * and the sudoers drop-in; every change is reported as it is made.  *changes
 * counts them.  Returns 0 or -errno: e says what failed or was refused, where,
 * and its kind (failed, refused, invalid config or table), set where it was raised.
 */
int slots_provision(int rootfd, const struct slots_config *c, const struct slots_prov_opts *o,
                    unsigned *changes, struct slots_error *e);

/*
 * Whether path (docs_root/<shared folder>/..., as the walks name it) is one of the
 * platform's app-private names (a browser profile or socket folder such as
 * .agent-browser, .mozilla, .config/chromium) that is neither a private path nor
 * itself an entry of shared_dirs (shared on purpose): the name it matched, else NULL.  Provision leaves such
 * an entry alone with a warning; check FAILs it.
 */
const char *slots_shared_app_private(const struct slots_config *c, const char *path);

/* What slots_shared_app_private_find() found: check's app-private row. */
#define SLOTS_APP_PRIVATE_SHOWN 5
struct slots_app_private {
        const struct slots_config *c;
        unsigned long n;                /* app-private names found */
        struct strbuf found;            /* the first SLOTS_APP_PRIVATE_SHOWN, as "path (name)" */
        struct strbuf unread;           /* the first folder the walk could not read to its end, and why */
};

/*
 * Walks every shared folder below docsfd (docs_root, opened through the resolver)
 * to its end with walk.c, one file system, no symlink followed, and counts the
 * entries slots_shared_app_private() names.  0, or -ENOMEM; free a with
 * slots_app_private_free().
 */
int slots_shared_app_private_find(int docsfd, const struct slots_config *c, struct slots_app_private *a);
void slots_app_private_free(struct slots_app_private *a);
