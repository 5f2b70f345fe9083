/* check's setid row: no file that carries a slot's uid or gid in the folders slots write but a holder's own. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check-int.h"
#include "cleanup.h"
#include "escape.h"
#include "ids.h"
#include "strbuf.h"

#define SETID_SHOWN 5

/* Files found: those that FAIL, and per slot number the holder's own (found[n] for slot n, found[0] the rest). */
struct setid_list {
        struct strbuf list;
        unsigned long n;
};

struct setid_found {
        const struct check_run *k;
        const struct slots_setid_sweep *s;
        const unsigned *uid_slot, *gid_slot;    /* the slot number of each uid and gid */
        struct setid_list *found;
        struct strbuf mounts;   /* the mounts not walked, escaped */
};

/* The slot of uid (is_gid: of gid) among the sweep's ids, or 0. */
static unsigned slot_of_id(const struct setid_found *f, unsigned id, bool is_gid)
{
        for (size_t i = 0; i < (is_gid ? f->s->n_gids : f->s->n_uids); i++)
                if ((is_gid ? f->s->gids[i] : f->s->uids[i]) == id)
                        return is_gid ? f->gid_slot[i] : f->uid_slot[i];
        return 0;
}

/*
 * The assigned slot whose own file this is, or 0: the slot owns it, it carries no other slot's
 * group, and it lies in the slot's own home, state or run, which only the slot reaches (0700) and
 * release replaces.  Anywhere else another account may run it, or the next holder finds it.
 */
static unsigned holder_own(const struct setid_found *f, const char *path, uid_t uid, gid_t gid, mode_t mode)
{
        static const char *const kinds[] = { "home", "state", "run" };
        unsigned n = slot_of_id(f, uid, false), g = (mode & S_ISGID) ? slot_of_id(f, gid, true) : 0;
        char name[SLOTS_NAME_MAX], own[4096];

        if (!n || (g && g != n) || !f->k->table ||
            slots_table_get(f->k->table, n, NULL, NULL, NULL) != SLOTS_SLOT_ASSIGNED)
                return 0;
        slots_slot_name(n, name);
        for (size_t i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++)
                if ((size_t) snprintf(own, sizeof(own), "%s/%s/%s", f->k->cfg->slots_root, kinds[i], name) <
                            sizeof(own) && slots_path_under(path, own))
                        return n;
        return 0;
}

static void setid_seen(void *data, const char *path, uid_t uid, gid_t gid, mode_t mode)
{
        struct setid_found *f = data;
        unsigned own = holder_own(f, path, uid, gid, mode);
        struct setid_list *l = &f->found[own];
        char name[SLOTS_NAME_MAX];
        char *p;

        if (l->n++ >= SETID_SHOWN)
                return;
        p = slots_escape(path);
        slots_slot_name(slot_of_id(f, uid, false) ? slot_of_id(f, uid, false) : slot_of_id(f, gid, true), name);
        strbuf_addf(&l->list, "%s%s (mode %04o, %s's)", l->list.len ? ", " : "", p ? p : "(out of memory)",
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

/* A WARN row per assigned slot with set-id files of its own in its own folders: release clears them. */
static void setid_warns(struct check_run *k, const struct setid_found *f)
{
        for (unsigned n = 1; n <= k->cfg->slots; n++) {
                const struct setid_list *l = &f->found[n];
                char name[SLOTS_NAME_MAX];

                if (!l->n)
                        continue;
                slots_slot_name(n, name);
                check_add_rowf(k, SLOTS_CHECK_WARN, "setid", name, NULL,
                               "%lu set-id file%s of %s's own in its own home, state or run folder (0700: only %s "
                               "reaches them): %s%s; release clears them (fresh folders), so nothing is at risk for "
                               "the slot's next holder: look at what its holder runs (ls -l FILE)", l->n,
                               l->n == 1 ? "" : "s", name, name, strbuf_str(&l->list),
                               l->n > SETID_SHOWN ? ", ..." : "");
                if (l->list.oom)
                        k->err = -ENOMEM;
        }
}

static void setid_rows(struct check_run *k, const struct setid_found *f, int r, const struct slots_error *e)
{
        const struct setid_list *l = &f->found[0];
        struct strbuf d = { 0 }, fix = { 0 };

        if (l->n) {
                strbuf_addf(&d, "%lu set-id file%s of a slot where slots write: %s%s", l->n, l->n == 1 ? "" : "s",
                            strbuf_str(&l->list), l->n > SETID_SHOWN ? ", ..." : "");
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
                                "folders, docs_root, the temp folders or the local mounts below them%s",
                            f->s->files > l->n ? " but a holder's own in its own folders (its WARN row)" : "");
        }
        /* A mount the sweep does not enter is named: what it holds is not proven. */
        if (f->mounts.len)
                strbuf_addf(&d, "; mounts not walked (a process serves them), a set-id file there unseen: %s",
                            strbuf_str(&f->mounts));
        check_add_row(k, l->n || r < 0 ? SLOTS_CHECK_FAIL : SLOTS_CHECK_PASS, "setid", NULL, &d,
                      l->n || r < 0 ? &fix : NULL);
        setid_warns(k, f);
        if (d.oom || fix.oom || f->mounts.oom || l->list.oom)
                k->err = -ENOMEM;
        strbuf_free(&d);
        strbuf_free(&fix);
}

void check_setid(struct check_run *k)
{
        struct slots_setid_sweep s = { .svc_uid = k->have_svc ? k->svc.uid : (uid_t) -1,
                                       .svc_gid = k->have_group ? k->group : (gid_t) -1, .seen = setid_seen,
                                       .skipped = setid_skipped };
        struct setid_found f = { .k = k, .s = &s };
        unsigned *uid_slot = NULL, *gid_slot = NULL;
        struct slots_error e;
        int r;

        if (geteuid() != 0) {
                check_add_rowf(k, SLOTS_CHECK_SKIP, "setid", NULL, NULL, "needs root: reads every slot's folders");
                return;
        }
        f.found = calloc(k->cfg->slots + 1, sizeof(*f.found));
        if (!f.found || pool_ids(k, &s, &uid_slot, &gid_slot) < 0) {
                k->err = -ENOMEM;
                goto out;
        }
        f.uid_slot = uid_slot;
        f.gid_slot = gid_slot;
        s.data = &f;
        slots_error_clear(&e);
        r = s.n_uids || s.n_gids ? slots_cleanup_setid(k->rootfd, k->cfg, &s, &e) : 0;
        setid_rows(k, &f, r, &e);
out:
        for (unsigned n = 0; f.found && n <= k->cfg->slots; n++)
                strbuf_free(&f.found[n].list);
        free(f.found);
        strbuf_free(&f.mounts);
        free((void *) s.uids);
        free((void *) s.gids);
        free(uid_slot);
        free(gid_slot);
}
