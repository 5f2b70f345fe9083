/* Assign: which slot a user gets, or why not, and the whole sequence that gives it. */
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "assign.h"
#include "cleanup.h"
#include "fsutil.h"
#include "identity-look.h"
#include "ids.h"
#include "nss.h"
#include "release.h"
#include "service.h"

enum slots_assign_verdict slots_assign_choose(const struct slots_table *t, unsigned pool, const char *user,
                                              unsigned want, unsigned *n)
{
        unsigned held = slots_table_find_user(t, user);

        *n = held;
        if (held && (want == 0 || held == want))
                return SLOTS_ASSIGN_AGAIN;
        if (held)
                return SLOTS_ASSIGN_HELD_ELSEWHERE;
        *n = want;
        if (want > pool)
                return SLOTS_ASSIGN_OUT_OF_POOL;
        if (want == 0) {
                *n = slots_table_lowest_free(t, pool);
                if (*n == 0)
                        return SLOTS_ASSIGN_FULL;
        }
        switch (slots_table_get(t, *n, NULL, NULL, NULL)) {
        case SLOTS_SLOT_ASSIGNED:
                return SLOTS_ASSIGN_TAKEN;
        case SLOTS_SLOT_PENDING:
                return SLOTS_ASSIGN_PENDING;
        case SLOTS_SLOT_FREE:
                break;
        }
        return SLOTS_ASSIGN_GIVE;
}

int slots_assign_refusal(enum slots_assign_verdict v, unsigned n, const struct slots_config *c,
                         struct slots_error *e)
{
        char name[SLOTS_NAME_MAX], last[SLOTS_NAME_MAX];

        slots_slot_name(n, name);
        switch (v) {
        case SLOTS_ASSIGN_HELD_ELSEWHERE:
                slots_error_refuse(e, -EPERM, c->table, "the user already holds %s", name);
                slots_error_fix(e, "release it first: slots-admin release --slot %s", name);
                break;
        case SLOTS_ASSIGN_OUT_OF_POOL:
                slots_error_refuse(e, -EPERM, c->table, "%s is outside the pool of %u slots", name, c->slots);
                slots_error_fix(e, "choose slot01 to %s, or raise \"slots\" in %s and run slots-provision",
                                slots_slot_name(c->slots, last), c->path);
                break;
        case SLOTS_ASSIGN_FULL:
                slots_error_refuse(e, -EPERM, c->table, "the pool is full: all %u slots are held or pending",
                                   c->slots);
                slots_error_fix(e, "release a slot, or raise \"slots\" in %s and run slots-provision", c->path);
                break;
        case SLOTS_ASSIGN_TAKEN:
                slots_error_refuse(e, -EPERM, c->table, "the slot is held by another user");
                slots_error_fix(e, "release it first: slots-admin release --slot %s", name);
                break;
        case SLOTS_ASSIGN_PENDING:
                slots_error_refuse(e, -EPERM, c->table, "the slot's last release did not finish (cleanup pending)");
                slots_error_fix(e, "finish the release: slots-admin release --slot %s", name);
                break;
        case SLOTS_ASSIGN_GIVE:
        case SLOTS_ASSIGN_AGAIN:
                return 0;
        }
        return -EPERM;
}

int slots_assign_service_apart(const struct slots_config *c, const char *slot, const struct slots_gr *gr,
                               struct slots_error *e)
{
        struct slots_pw svc = { 0 };
        bool member, primary;
        int r;

        if (!gr)
                return 0;
        r = slots_nss_user(c->service, &svc);
        if (r < 0)
                return slots_error_set(e, r, c->service, "account lookup failed: %s", strerror(-r));
        member = slots_gr_has_member(gr, c->service);
        primary = r > 0 && svc.gid == gr->gid;
        slots_pw_clear(&svc);
        if (!member && !primary)
                return 0;
        if (member)
                slots_error_refuse(e, -EPERM, slot, "the service account %s is a member of group %s; the service "
                                   "is never a slot", c->service, slot);
        else
                slots_error_refuse(e, -EPERM, slot, "the service account %s has group %s as its primary group; "
                                   "the service is never a slot", c->service, slot);
        if (member)
                slots_error_fix(e, "remove it: gpasswd -d %s %s", c->service, slot);
        else
                slots_error_fix(e, "give %s its own primary group: usermod -g GROUP %s", c->service, c->service);
        return -EPERM;
}

int slots_assign_identity(const struct slots_config *c, const char *name, const struct slots_pw *pw,
                          struct slots_error *e)
{
        struct slots_identity_facts f;
        struct slots_identity_verdict v;
        char reason[SLOTS_ERR_TEXT] = "", fix[SLOTS_ERR_TEXT] = "";
        size_t rl = 0, fl = 0;
        int r;

        r = slots_identity_look(AT_FDCWD, c->prefix, c->shell, name, pw, &f, e);
        if (r < 0)
                return r;
        f.id.member_ok = c->service;
        r = slots_identity_judge(&f.id, &v);
        slots_identity_facts_free(&f);
        if (r < 0)
                return slots_error_set(e, r, name, "out of memory");
        for (int k = 0; k < SLOTS_IDENT_N; k++) {
                if (!v.p[k].detail)
                        continue;
                rl += (size_t) snprintf(reason + rl, rl < sizeof(reason) ? sizeof(reason) - rl : 0, "%s%s",
                                        rl ? "; " : "", v.p[k].detail);
                fl += (size_t) snprintf(fix + fl, fl < sizeof(fix) ? sizeof(fix) - fl : 0, "%s%s", fl ? " && " : "",
                                        v.p[k].fix);
        }
        r = v.n ? -EPERM : 0;
        slots_identity_verdict_free(&v);
        if (r == 0)
                return 0;
        /* error.c marks a text cut at its field's end. */
        slots_error_refuse(e, r, name, "not a good slot: %s", reason);
        slots_error_fix(e, "%s", fix);
        return r;
}

/* The lowest free slot above n, or 0. */
static unsigned next_free(const struct slots_table *t, unsigned pool, unsigned n)
{
        while (++n <= pool)
                if (slots_table_get(t, n, NULL, NULL, NULL) == SLOTS_SLOT_FREE)
                        return n;
        return 0;
}

/*
 * The slot's account by the one rule, before anything is locked or changed: refused for the
 * slot asked for or already held (want); for the lowest free choice each slot that fails is
 * kept in rep->skipped and the next free one is tried.  A missing account is left to give().
 */
static int good_slot(const struct slots_config *c, const struct slots_table *t, unsigned want,
                     struct slots_assign_report *rep, struct slots_error *e)
{
        for (;;) {
                char name[SLOTS_NAME_MAX];
                struct slots_pw pw = { 0 };
                int r;

                slots_slot_name(rep->slot, name);
                r = slots_nss_user(name, &pw);
                if (r <= 0)
                        return 0;
                r = slots_assign_identity(c, name, &pw, e);
                slots_pw_clear(&pw);
                if (r != -EPERM || want)
                        return r;
                if (rep->n_skipped < SLOTS_ASSIGN_SKIPS_KEPT)
                        rep->skipped[rep->n_skipped] = (struct slots_assign_skip){ .slot = rep->slot, .why = *e };
                rep->n_skipped++;
                slots_error_clear(e);
                rep->slot = next_free(t, c->slots, rep->slot);
                if (rep->slot == 0)
                        break;
        }
        slots_error_refuse(e, -EPERM, c->table, "no free slot is a good slot: %u free slot%s failed the identity "
                           "check (%s first)", rep->n_skipped, rep->n_skipped == 1 ? "" : "s",
                           rep->skipped[0].why.object);
        slots_error_fix(e, "%s", rep->skipped[0].why.fix);
        return -EPERM;
}

/* ---- slots_assign: the sequence ---- */

/*
 * A slot is handed out only when its home, state and run folders are exactly
 * as a release leaves them; otherwise it is marked pending (so no assign picks
 * it) and the refusal's fix is a release --slot, which sets them back.
 */
static int assign_folders_clean(const struct slots_config *c, struct slots_store *s, const char *name,
                                const struct slots_pw *pw, gid_t gid, struct slots_assign_report *rep,
                                struct slots_error *e)
{
        struct slots_error e2;
        char released[32];
        int r;

        r = slots_check_folders(AT_FDCWD, c, name, pw->uid, gid, false, e);
        if (r == 0 || !s)
                return r;
        if (slots_table_mark_pending(s->table, rep->slot, slots_now_rfc3339(released)) == 0 &&
            slots_store_save(s, &e2) == 0)
                rep->marked_pending = true;
        return r;
}

/*
 * Step 1 for a free slot: its account and group, the service apart, its folders, then the
 * save.  With s NULL (a dry run) nothing is saved or marked: the checks alone decide.
 */
static int give(const struct slots_config *c, struct slots_store *s, const char *user,
                struct slots_assign_report *rep, struct slots_error *e)
{
        char name[SLOTS_NAME_MAX], since[32];
        struct slots_pw pw = { 0 };
        struct slots_gr gr = { 0 };
        int r;

        slots_slot_name(rep->slot, name);
        r = slots_nss_user(name, &pw);
        if (r == 0) {
                slots_error_refuse(e, -EPERM, name, "the slot account does not exist");
                slots_error_fix(e, "create it: slots-provision");
                return -EPERM;
        }
        if (r < 0)
                return slots_error_set(e, r, name, "the account lookup failed: %s", strerror(-r));
        /* Group slotNN, looked up once (each lookup reads the group file): apartness, folders. */
        r = slots_nss_group(name, &gr);
        if (r < 0)
                r = slots_error_set(e, r, name, "group lookup failed: %s", strerror(-r));
        else
                r = slots_assign_service_apart(c, name, r > 0 ? &gr : NULL, e);
        /* The folders' group: group slotNN, else the account's primary group. */
        if (r == 0)
                r = assign_folders_clean(c, s, name, &pw, gr.name ? gr.gid : pw.gid, rep, e);
        if (r == 0 && s && slots_table_assign(s->table, rep->slot, user, slots_now_rfc3339(since)) < 0)
                r = slots_error_set(e, -ENOMEM, c->table, "out of memory");
        if (r == 0 && s)
                r = slots_store_save(s, e);
        rep->changed = r == 0;
        slots_gr_clear(&gr);
        slots_pw_clear(&pw);
        return r;
}

/*
 * Step 2 found the slot's lock held (a release of the slot ending, or an assign
 * of its user walking the tree): waits for it without the table lock, then lets
 * it go; the caller starts again from the table.
 */
static int wait_for_slot(const struct slots_config *c, unsigned n, struct slots_error *e)
{
        const char *name;
        int dfd, lk;

        dfd = slots_open_parent_in(AT_FDCWD, c->table, &name);
        if (dfd < 0)
                return slots_error_set(e, dfd, c->table, "cannot open its folder: %s", strerror(-dfd));
        lk = slots_release_lock(dfd, name, n, true, e);
        slots_close(dfd);
        if (lk < 0)
                return lk;
        slots_close(lk);
        return 0;
}

/* Step 3: the user's tree for the slot, when docs_root is set. */
static int prepare(const struct slots_config *c, gid_t service_gid, const char *user,
                   struct slots_assign_report *rep, struct slots_error *e)
{
        char name[SLOTS_NAME_MAX];
        struct slots_pw slot = { 0 }, svc = { 0 };
        struct slots_gr gr = { 0 };
        gid_t slot_gid = 0;
        int r;

        if (!c->docs_root)
                return 0;
        slots_slot_name(rep->slot, name);
        r = slots_nss_user(name, &slot);
        if (r <= 0)
                r = r == 0 ? slots_error_set(e, -ENOENT, name, "the slot account does not exist")
                           : slots_error_set(e, r, name, "account lookup failed: %s", strerror(-r));
        else if ((r = slots_nss_group(name, &gr)) < 0)
                r = slots_error_set(e, r, name, "group lookup failed: %s", strerror(-r));
        else
                r = 0;
        /* The tree's group: group slotNN, else the account's primary group. */
        slot_gid = gr.name ? gr.gid : slot.gid;
        if (r == 0)
                r = slots_service_user(c, &svc, e);
        if (r == 0)
                r = slots_tree_prepare(AT_FDCWD, c, user, slot.uid, slot_gid, svc.uid, service_gid, &rep->tree, e);
        rep->tree_prepared = r == 0;
        if (r < 0)
                rep->step = "preparing the user's tree";
        slots_gr_clear(&gr);
        slots_pw_clear(&svc);
        slots_pw_clear(&slot);
        return r;
}

/* Step 1's verdict on the table: the slot, or the refusal; the one rule judges the slot's account. */
static int decide(const struct slots_config *c, const struct slots_table *t, const char *user, unsigned want,
                  struct slots_assign_report *rep, struct slots_error *e)
{
        rep->verdict = slots_assign_choose(t, c->slots, user, want, &rep->slot);
        if (rep->verdict != SLOTS_ASSIGN_GIVE && rep->verdict != SLOTS_ASSIGN_AGAIN)
                return slots_assign_refusal(rep->verdict, rep->slot, c, e);
        return good_slot(c, t, rep->verdict == SLOTS_ASSIGN_AGAIN ? rep->slot : want, rep, e);
}

/* One pass of steps 1 to 3; -EWOULDBLOCK, nothing changed, after a wait for the slot's lock. */
static int assign_once(const struct slots_config *c, const struct slots_table_policy *policy, const char *user,
                       unsigned want, struct slots_assign_report *rep, struct slots_error *e)
{
        struct slots_tree_stats keep = rep->tree;
        struct slots_store s;
        int lockfd = -1, r;

        memset(rep, 0, sizeof(*rep));
        rep->tree.note = keep.note;
        rep->tree.note_data = keep.note_data;
        r = slots_store_open(&s, AT_FDCWD, c->table, c->slots, policy->group, SLOTS_STORE_WRITE, e);
        if (r < 0)
                return r;
        r = decide(c, s.table, user, want, rep, e);
        /* The slot's lock before any change: a lock file that cannot be trusted changes nothing. */
        if (r == 0) {
                lockfd = slots_release_lock(s.dirfd, s.name, rep->slot, false, e);
                r = lockfd < 0 ? lockfd : 0;
        }
        if (r == 0 && rep->verdict == SLOTS_ASSIGN_GIVE)
                r = give(c, &s, user, rep, e);
        if (r == 0)
                rep->table_ok = slots_store_verdict(&s, policy, &rep->table);
        /* The table lock goes here: the tree walk below never holds up another assign. */
        slots_store_close(&s);
        if (r == -EWOULDBLOCK) {
                slots_error_clear(e);
                r = wait_for_slot(c, rep->slot, e);
                return r < 0 ? r : -EWOULDBLOCK;
        }
        if (r == 0)
                r = prepare(c, policy->group, user, rep, e);
        slots_close(lockfd);
        return r;
}

int slots_assign(const struct slots_config *c, const struct slots_table_policy *policy, const char *user,
                 unsigned want, struct slots_assign_report *rep, struct slots_error *e)
{
        int r;

        /* The slot's lock was held: after the wait, the table may say otherwise; look again, as release does. */
        for (int attempt = 0;; attempt++) {
                r = assign_once(c, policy, user, want, rep, e);
                if (r != -EWOULDBLOCK)
                        return r;
                if (attempt >= 100)
                        return slots_error_set(e, -EAGAIN, c->table, "the slot's lock keeps being taken under "
                                               "the assign");
        }
}

int slots_assign_dry(const struct slots_config *c, gid_t group, const char *user, unsigned want,
                     struct slots_assign_report *rep, struct slots_error *e)
{
        struct slots_store s;
        int r;

        memset(rep, 0, sizeof(*rep));
        r = slots_store_open(&s, AT_FDCWD, c->table, c->slots, group, 0, e);
        if (r < 0)
                return r;
        r = decide(c, s.table, user, want, rep, e);
        if (r == 0 && rep->verdict == SLOTS_ASSIGN_GIVE)
                r = give(c, NULL, user, rep, e);
        slots_store_close(&s);
        return r;
}
