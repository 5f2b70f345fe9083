/* check's setid row: no file that carries a slot's uid or gid in the folders slots write. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check-int.h"
#include "cleanup.h"
#include "escape.h"
#include "ids.h"
#include "strbuf.h"

#define SETID_SHOWN 5

struct setid_found {
        const struct slots_setid_sweep *s;
        const unsigned *uid_slot, *gid_slot;    /* the slot number of each uid and gid */
        struct strbuf list;
        unsigned long n;
        struct strbuf mounts;   /* the mounts not walked, escaped */
};

/* The slot a found file carries: its owner's, else its group's. */
static unsigned slot_of(const struct setid_found *f, uid_t uid, gid_t gid)
{
        for (size_t i = 0; i < f->s->n_uids; i++)
                if (f->s->uids[i] == uid)
                        return f->uid_slot[i];
        for (size_t i = 0; i < f->s->n_gids; i++)
                if (f->s->gids[i] == gid)
                        return f->gid_slot[i];
        return 0;
}

static void setid_seen(void *data, const char *path, uid_t uid, gid_t gid, mode_t mode)
{
        struct setid_found *f = data;
        char name[SLOTS_NAME_MAX];
        char *p;

        if (f->n++ >= SETID_SHOWN)
                return;
        p = slots_escape(path);
        slots_slot_name(slot_of(f, uid, gid), name);
        strbuf_addf(&f->list, "%s%s (mode %04o, %s's)", f->list.len ? ", " : "", p ? p : "(out of memory)",
                    (unsigned) mode, name);
        free(p);
}

static void setid_skipped(void *data, const char *path, const char *fstype)
{
        struct setid_found *f = data;
        char *p = slots_escape(path);

        strbuf_addf(&f->mounts, "%s%s (%s)", f->mounts.len ? ", " : "", p ? p : "(out of memory)", fstype);
        free(p);
}

/* The pool's slot uids and gids from the run's account map; 0 or -ENOMEM. */
static int pool_ids(struct check_run *k, struct slots_setid_sweep *s, unsigned **uid_slot, unsigned **gid_slot)
{
        unsigned pool = k->cfg->slots;
        uid_t *uids = calloc(pool ? pool : 1, sizeof(*uids));
        gid_t *gids = calloc(pool ? pool : 1, sizeof(*gids));

        *uid_slot = calloc(pool ? pool : 1, sizeof(**uid_slot));
        *gid_slot = calloc(pool ? pool : 1, sizeof(**gid_slot));
        s->uids = uids;
        s->gids = gids;
        if (!uids || !gids || !*uid_slot || !*gid_slot)
                return -ENOMEM;
        for (unsigned n = 1; n <= pool; n++) {
                char name[SLOTS_NAME_MAX];
                uid_t uid;
                gid_t gid;

                slots_slot_name(n, name);
                /* An account or group that is missing or is root's is the account row's to report. */
                if (slots_amap_uid(k->accounts, name, &uid) == 1 && uid != 0) {
                        (*uid_slot)[s->n_uids] = n;
                        uids[s->n_uids++] = uid;
                }
                if (slots_amap_group(k->accounts, name, &gid) == 1 && gid != 0) {
                        (*gid_slot)[s->n_gids] = n;
                        gids[s->n_gids++] = gid;
                }
        }
        return 0;
}

static void setid_rows(struct check_run *k, const struct setid_found *f, int r, const struct slots_error *e)
{
        struct strbuf d = { 0 }, fix = { 0 };

        if (f->n) {
                strbuf_addf(&d, "%lu set-id file%s of a slot where slots write: %s%s", f->n, f->n == 1 ? "" : "s",
                            strbuf_str(&f->list), f->n > SETID_SHOWN ? ", ..." : "");
                if (r < 0)
                        strbuf_addf(&d, "; and %s: %s could not be read to its end", e->object, e->reason);
                strbuf_addf(&fix, "clear the bits of each (chmod ug-s FILE): run by any account, it acts as the "
                                  "slot's next holder; release of the slot's user (or slots-admin release --slot "
                                  "SLOT for a pending one) clears them too");
        } else if (r < 0) {
                strbuf_addf(&d, "a folder slots write could not be read to its end: %s: %s", e->object, e->reason);
                strbuf_addf(&fix, "make it readable by root (a mount, a FUSE folder?), then run check again");
        } else {
                strbuf_addf(&d, "no set-id file of a slot's uid or group in the slots' home, state and run "
                                "folders, docs_root, the temp folders or the local mounts below them");
        }
        /* A mount the sweep does not enter is named: what it holds is not proven. */
        if (f->mounts.len)
                strbuf_addf(&d, "; mounts not walked (a process serves them), a set-id file there unseen: %s",
                            strbuf_str(&f->mounts));
        check_add_row(k, f->n || r < 0 ? SLOTS_CHECK_FAIL : SLOTS_CHECK_PASS, "setid", NULL, &d,
                      f->n || r < 0 ? &fix : NULL);
        if (d.oom || fix.oom || f->mounts.oom)
                k->err = -ENOMEM;
        strbuf_free(&d);
        strbuf_free(&fix);
}

void check_setid(struct check_run *k)
{
        struct slots_setid_sweep s = { .svc_uid = k->have_svc ? k->svc.uid : (uid_t) -1,
                                       .svc_gid = k->have_group ? k->group : (gid_t) -1, .seen = setid_seen,
                                       .skipped = setid_skipped };
        struct setid_found f = { .s = &s };
        unsigned *uid_slot = NULL, *gid_slot = NULL;
        struct slots_error e;
        int r;

        if (geteuid() != 0) {
                check_add_rowf(k, SLOTS_CHECK_SKIP, "setid", NULL, NULL, "needs root: reads every slot's folders");
                return;
        }
        if (pool_ids(k, &s, &uid_slot, &gid_slot) < 0) {
                k->err = -ENOMEM;
                goto out;
        }
        f.uid_slot = uid_slot;
        f.gid_slot = gid_slot;
        s.data = &f;
        slots_error_clear(&e);
        r = s.n_uids || s.n_gids ? slots_cleanup_setid(k->rootfd, k->cfg, &s, &e) : 0;
        setid_rows(k, &f, r, &e);
        if (f.list.oom)
                k->err = -ENOMEM;
out:
        strbuf_free(&f.list);
        strbuf_free(&f.mounts);
        free((void *) s.uids);
        free((void *) s.gids);
        free(uid_slot);
        free(gid_slot);
}
