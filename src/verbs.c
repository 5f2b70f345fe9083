/* assign and release: their arguments into one library call (or its dry run) and one outcome record for emit.c. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "assign.h"
#include "cmdutil.h"
#include "config.h"
#include "emit.h"
#include "escape.h"
#include "ids.h"
#include "nss.h"
#include "release.h"
#include "service.h"
#include "store.h"
#include "tree.h"
#include "verbs.h"

/* What a command works on: the config and the service group. */
struct admin_run {
        struct slots_config *cfg;
        gid_t group;
        char *group_name;
};

int verb_user_arg(const char *user)
{
        if (slots_user_valid(user))
                return -1;
        return cmd_usage_error("invalid user id: it must be 1-64 of A-Z a-z 0-9 . _ -, not starting with . or -");
}

int verb_slot_arg(const char *slot, unsigned *n)
{
        if ((*n = slots_slot_parse(slot)))
                return -1;
        return cmd_usage_error("invalid slot name: slot names are slot01 ... slot99, slot100 ... slot9999");
}

/*
 * Root, the config (refused when someone else can change it) and the service group;
 * a refusal goes into out with its exit status.  EXIT_DONE when loaded.
 */
static int admin_load(struct admin_run *x, const struct admin_opts *o, const char *what, struct cmd_outcome *out)
{
        const char *heading = what;
        struct slots_error e;
        int r = EXIT_DONE;

        slots_error_clear(&e);
        if (geteuid() != 0) {
                slots_error_refuse(&e, -EPERM, "", "permission denied: only root changes the slot table");
                slots_error_fix(&e, "run it as root (sudo slots-admin ...)");
                r = EXIT_REFUSED;
        } else {
                r = cmd_config_get(o->config, SLOTS_CONFIG_ROOT_OWNED, &x->cfg, &heading, &e);
        }
        if (r == EXIT_DONE) {
                out->service = x->cfg->service;
                if (slots_service_group(x->cfg, &x->group, &x->group_name, &e) < 0)
                        r = EXIT_REFUSED;
        }
        if (r != EXIT_DONE)
                cmd_outcome_fail_st(out, r, heading, &e);
        return r;
}

static void admin_done(struct admin_run *x)
{
        free(x->group_name);
        slots_config_free(x->cfg);
}

/* A tree walk's note (an entry left alone): a warning on stderr, escaped; the first 20 of them. */
static void tree_note(void *data, const char *path, const char *why)
{
        unsigned long *shown = data;
        char *p;

        if ((*shown)++ >= 20)
                return;
        p = slots_escape(path);
        fprintf(stderr, "%s: warning: %s: %s\n", cmd_name, p ? p : "(out of memory)", why);
        free(p);
}

static void tree_notes_done(unsigned long shown)
{
        if (shown > 20)
                fprintf(stderr, "%s: warning: and %lu more entries left alone\n", cmd_name, shown - 20);
}

/* The free slots the lowest-free choice passed over, each with why and the fix: notes, "skipped" in --json. */
static void skipped_notes(struct cmd_outcome *out, const struct slots_assign_report *rep)
{
        char name[SLOTS_NAME_MAX];

        out->notes_key = "skipped";
        for (unsigned i = 0; i < rep->n_skipped && i < SLOTS_ASSIGN_SKIPS_KEPT; i++)
                cmd_outcome_note(out, slots_slot_name(rep->skipped[i].slot, name), rep->skipped[i].why.fix, "%s",
                                 rep->skipped[i].why.reason);
        if (rep->n_skipped > SLOTS_ASSIGN_SKIPS_KEPT)
                cmd_outcome_note(out, NULL, NULL, "and %u more free slots skipped",
                                 rep->n_skipped - SLOTS_ASSIGN_SKIPS_KEPT);
}

/*
 * After assign: the write kept the table's owner, group, mode and ACL.  When the
 * store's verdict says the service group cannot read what was kept (a table
 * left root:root by a script: the service refuses every user's command although
 * assign succeeded), or that someone but root may write it: a note, with the fix.
 */
static void table_note(struct cmd_outcome *out, const struct admin_run *x, const struct slots_table_verdict *v)
{
        char owner[64], group[64];

        if (!(v->writable || v->unreadable))
                return;
        cmd_outcome_note(out, NULL, v->e.fix, "%s is %s:%s %04o: %s%s%s (%s)", x->cfg->table,
                         slots_uid_name(v->st.st_uid, owner, sizeof(owner)),
                         slots_gid_name(v->st.st_gid, group, sizeof(group)), v->st.st_mode & 07777u,
                         v->writable ? "someone but root may write it, and so decide who gets a slot's session" :
                         "the service account ", v->writable ? "" : x->cfg->service,
                         v->writable ? "" : " cannot read it, so the service refuses every user's command",
                         v->e.reason);
}

/* What a refused or failed assign could not do: "invalid table", or "cannot assign" the slot it is about. */
static void assign_what(char *what, size_t size, const struct slots_assign_report *rep, const struct slots_error *e,
                        const char *asked)
{
        char name[SLOTS_NAME_MAX];

        if (e->kind == SLOTS_ERR_INVALID)
                snprintf(what, size, "invalid table");
        else if (rep->slot && rep->verdict != SLOTS_ASSIGN_HELD_ELSEWHERE)
                snprintf(what, size, "cannot assign %s", slots_slot_name(rep->slot, name));
        else
                snprintf(what, size, "cannot assign %s", asked ? asked : "a slot");
}

/* slots_assign's result r as the outcome: the error, the event, the slot's line. */
static void assign_outcome(struct cmd_outcome *out, const struct admin_run *x, int r,
                           const struct slots_assign_report *rep, struct slots_error *e)
{
        char what[SLOTS_NAME_MAX + 96], name[SLOTS_NAME_MAX] = "", tree[160] = "", err[1400];
        const char *user = out->user, *about;

        out->slot = rep->slot;
        out->changed = rep->changed;
        slots_slot_name(rep->slot, name);
        about = out->asked ? out->asked : rep->slot ? name : "a slot";
        skipped_notes(out, rep);
        if (r < 0 && rep->step) {
                snprintf(out->fix, sizeof(out->fix), "%s, then run the same assign again (the assignment stands, and "
                         "assign is idempotent): slots-admin assign %s %s", e->fix[0] ? e->fix : "remove the cause",
                         user, name);
                e->fix[0] = '\0';
                snprintf(what, sizeof(what), "cannot prepare the user's tree for %s", name);
                cmd_outcome_fail_st(out, EXIT_REFUSED, what, e);
                cmd_outcome_event(out, CMD_EV_ASSIGN_UNFINISHED, "assigned %s to user %s, but preparing the tree "
                                  "failed: %s", name, user, cmd_outcome_error_text(out, err, sizeof(err)));
                return;
        }
        if (r < 0) {
                assign_what(what, sizeof(what), rep, e, out->asked);
                cmd_outcome_fail(out, what, e);
                cmd_outcome_event(out, CMD_EV_ASSIGN_REFUSED, "refused to assign %s to user %s: %s%s", about, user,
                                  cmd_outcome_error_text(out, err, sizeof(err)),
                                  rep->marked_pending ? "; marked cleanup pending" : "");
                return;
        }
        if (rep->tree_prepared)
                snprintf(tree, sizeof(tree), "; tree prepared: %lu entries, %lu changed, %lu hard-linked files "
                         "left alone", rep->tree.entries, rep->tree.changed, rep->tree.linked);
        if (rep->changed)
                cmd_outcome_event(out, CMD_EV_ASSIGNED, "assigned %s to user %s%s", name, user, tree);
        else if (rep->tree_prepared && rep->tree.changed)
                cmd_outcome_event(out, CMD_EV_ASSIGNED, "user %s holds %s already%s", user, name, tree);
        if (!rep->table_ok)
                table_note(out, x, &rep->table);
        snprintf(out->line, sizeof(out->line), "%s", name);
        out->line_name = "the slot name (the assignment stands; assign again prints it)";
}

/*
 * assign --dry-run: what step 1 of the real run decides (slots_assign_dry: the verdict, the one
 * rule on the slot's account, the account, the service apart and the folders of a new
 * assignment), its refusal with the same words and exit status; nothing written, no lock.
 */
static void assign_dry(struct cmd_outcome *out, const struct admin_run *x, unsigned want)
{
        struct slots_assign_report rep;
        char what[SLOTS_NAME_MAX + 32], name[SLOTS_NAME_MAX];
        struct slots_error e;
        int r;

        slots_error_clear(&e);
        r = slots_assign_dry(x->cfg, x->group, out->user, want, &rep, &e);
        out->slot = rep.slot;
        skipped_notes(out, &rep);
        snprintf(out->closing, sizeof(out->closing), "dry run: nothing was changed");
        out->line_name = "the dry run";
        if (r < 0) {
                assign_what(what, sizeof(what), &rep, &e, out->asked);
                cmd_outcome_fail(out, what, &e);
                return;
        }
        out->changed = rep.changed;
        slots_slot_name(rep.slot, name);
        if (rep.changed)
                snprintf(out->line, sizeof(out->line), "would assign %s to user %s", name, out->user);
        else
                snprintf(out->line, sizeof(out->line), "user %s holds %s already: nothing would change in the "
                         "table", out->user, name);
}

int verb_assign(const struct admin_opts *o, int argc, char **argv)
{
        unsigned long notes = 0;
        struct slots_assign_report rep = { .tree = { .note = tree_note, .note_data = &notes } };
        struct slots_table_policy policy;
        struct cmd_outcome out;
        struct admin_run x = { 0 };
        struct slots_error e;
        char what[64], err[1400];
        unsigned n = 0;
        int r;

        if ((r = verb_user_arg(argv[0])) >= 0 || (argc == 2 && (r = verb_slot_arg(argv[1], &n)) >= 0))
                return r;
        cmd_outcome_init(&out, "assign", o->json, o->dry_run);
        out.user = argv[0];
        out.asked = argc == 2 ? argv[1] : NULL;
        snprintf(what, sizeof(what), "cannot assign %s", argc == 2 ? argv[1] : "a slot");
        if (admin_load(&x, o, what, &out) != EXIT_DONE) {
                if (!o->dry_run)
                        cmd_outcome_event(&out, CMD_EV_ASSIGN_REFUSED, "refused to assign %s to user %s: %s",
                                          out.asked ? out.asked : "a slot", out.user,
                                          cmd_outcome_error_text(&out, err, sizeof(err)));
        } else if (o->dry_run) {
                assign_dry(&out, &x, n);
        } else {
                policy = (struct slots_table_policy){ .group = x.group, .group_name = x.group_name,
                                                      .user_name = slots_uid_name, .group_name_of = slots_gid_name };
                slots_error_clear(&e);
                r = slots_assign(x.cfg, &policy, out.user, n, &rep, &e);
                tree_notes_done(notes);
                assign_outcome(&out, &x, r, &rep, &e);
        }
        r = cmd_emit(&out);
        admin_done(&x);
        return r;
}

/* slots_release's result r as the outcome: the error, the event, the line. */
static void release_outcome(struct cmd_outcome *out, int r, const struct slots_release_report *rep,
                            struct slots_error *e)
{
        char what[256], name[SLOTS_NAME_MAX] = "", err[1400];
        const char *from = rep->marked ? " from user " : "", *holder = rep->marked ? rep->user : "";

        out->user = out->user ? out->user : rep->user[0] ? rep->user : NULL;
        out->changed = rep->marked || (r >= 0 && rep->slot && !rep->was_free);
        out->slot = rep->slot;
        if (rep->slot)
                out->asked = slots_slot_name(rep->slot, name);
        snprintf(what, sizeof(what), "cannot release %s", out->asked ? out->asked : "the user's slot");
        if (r < 0 && rep->step) {
                snprintf(what, sizeof(what), "cannot release %s (%s)", name, rep->step);
                snprintf(out->fix, sizeof(out->fix), "%s, then finish the release: slots-admin release --slot %s "
                         "(until then %s stays \"cleanup\": \"pending\" and is never assigned)",
                         e->fix[0] ? e->fix : "remove the cause", name, name);
                e->fix[0] = '\0';
                cmd_outcome_fail_st(out, EXIT_REFUSED, what, e);
                cmd_outcome_event(out, CMD_EV_RELEASE_PENDING, "%s %s%s%s, but %s; cleanup pending",
                                  rep->marked ? "released" : "could not finish the release of", name, from, holder,
                                  cmd_outcome_error_text(out, err, sizeof(err)));
        } else if (r < 0) {
                cmd_outcome_fail(out, e->kind == SLOTS_ERR_INVALID ? "invalid table" : what, e);
                if (out->asked)
                        cmd_outcome_event(out, CMD_EV_RELEASE_REFUSED, "refused to release %s: %s", out->asked,
                                          cmd_outcome_error_text(out, err, sizeof(err)));
                else
                        cmd_outcome_event(out, CMD_EV_RELEASE_REFUSED, "refused to release the slot of user %s: %s",
                                          out->user ? out->user : "?", cmd_outcome_error_text(out, err, sizeof(err)));
        } else if (rep->slot == 0) {
                snprintf(out->line, sizeof(out->line), "user %s holds no slot; nothing to release", out->user);
        } else if (rep->was_free) {
                snprintf(out->line, sizeof(out->line), "%s is free; nothing to release", name);
        } else {
                /* One line for a release that ended well: what was cleaned, and that the slot is free. */
                cmd_outcome_event(out, CMD_EV_RELEASED, "%s %s%s%s: clean and free (%lu processes stopped and %lu "
                                  "killed in %ld ms, tree given back: %lu entries, %lu changed; files, IPC objects "
                                  "and keys removed)", rep->marked ? "released" : "finished the release of", name,
                                  from, holder, rep->procs.stopped, rep->procs.killed, rep->procs.elapsed_ms,
                                  rep->tree.entries, rep->tree.changed);
                snprintf(out->line, sizeof(out->line), "%s released", name);
        }
}

/* release --dry-run: what the table says would be released (its holder into who); nothing written, no process touched. */
static void release_dry(struct cmd_outcome *out, const struct admin_run *x, unsigned n, char who[static 72])
{
        struct slots_store st = { 0 };
        const char *holder = NULL, *since, *released;
        char what[SLOTS_NAME_MAX + 32], name[SLOTS_NAME_MAX] = "";
        enum slots_slot_state state = SLOTS_SLOT_FREE;
        struct slots_error e;
        int r;

        snprintf(out->closing, sizeof(out->closing), "dry run: nothing was changed");
        out->line_name = "the dry run";
        snprintf(what, sizeof(what), "cannot release %s", out->asked ? out->asked : "the user's slot");
        slots_error_clear(&e);
        r = slots_store_open(&st, AT_FDCWD, x->cfg->table, x->cfg->slots, x->group, 0, &e);
        if (r < 0) {
                cmd_outcome_fail(out, e.kind == SLOTS_ERR_INVALID ? "invalid table" : what, &e);
                return;
        }
        if (out->user)
                n = slots_table_find_user(st.table, out->user);
        if (n && n <= x->cfg->slots) {
                state = slots_table_get(st.table, n, &holder, &since, &released);
                snprintf(who, 72, "%s", holder ? holder : "");
                slots_slot_name(n, name);
        }
        slots_store_close(&st);
        if (!out->user && n > x->cfg->slots) {
                slots_error_refuse(&e, -EPERM, x->cfg->table, "the slot is outside the pool of %u slots",
                                   x->cfg->slots);
                cmd_outcome_fail(out, what, &e);
                return;
        }
        out->slot = n;
        out->changed = n && state != SLOTS_SLOT_FREE;
        if (!out->user && who[0])
                out->user = who;
        if (n == 0)
                snprintf(out->line, sizeof(out->line), "user %s holds no slot; nothing to release", out->user);
        else if (state == SLOTS_SLOT_FREE)
                snprintf(out->line, sizeof(out->line), "%s is free; nothing to release", name);
        else if (state == SLOTS_SLOT_PENDING)
                snprintf(out->line, sizeof(out->line), "would finish the release of %s", name);
        else
                snprintf(out->line, sizeof(out->line), "would release %s from user %s", name, who);
}

int verb_release(const struct admin_opts *o, int argc, char **argv)
{
        unsigned long notes = 0;
        struct slots_release_report rep = { .tree = { .note = tree_note, .note_data = &notes } };
        struct cmd_outcome out;
        struct admin_run x = { 0 };
        struct slots_error e;
        char what[256], err[1400], who[72] = "";
        unsigned n = 0;
        int r;

        if (o->slot ? argc != 0 : argc != 1)
                return cmd_usage_error("release takes USER, or --slot SLOT");
        if ((o->slot && (r = verb_slot_arg(o->slot, &n)) >= 0) || (!o->slot && (r = verb_user_arg(argv[0])) >= 0))
                return r;
        cmd_outcome_init(&out, "release", o->json, o->dry_run);
        out.user = o->slot ? NULL : argv[0];
        out.asked = o->slot;
        snprintf(what, sizeof(what), "cannot release %s", o->slot ? o->slot : "the user's slot");
        if (admin_load(&x, o, what, &out) != EXIT_DONE) {
                if (!o->dry_run && o->slot)
                        cmd_outcome_event(&out, CMD_EV_RELEASE_REFUSED, "refused to release %s: %s", o->slot,
                                          cmd_outcome_error_text(&out, err, sizeof(err)));
                else if (!o->dry_run)
                        cmd_outcome_event(&out, CMD_EV_RELEASE_REFUSED, "refused to release the slot of user %s: %s",
                                          out.user, cmd_outcome_error_text(&out, err, sizeof(err)));
        } else if (o->dry_run) {
                release_dry(&out, &x, n, who);
        } else {
                slots_error_clear(&e);
                r = slots_release(x.cfg, x.group, out.user, n, &rep, &e);
                tree_notes_done(notes);
                release_outcome(&out, r, &rep, &e);
        }
        r = cmd_emit(&out);
        admin_done(&x);
        return r;
}
