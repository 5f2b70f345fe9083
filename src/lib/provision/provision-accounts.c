/* The account plan of slots-provision: ids and lookups, then each account and group planned in memory. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "accounts.h"
#include "dirfix.h"
#include "fsutil.h"
#include "identity.h"
#include "identity-look.h"
#include "nss.h"
#include "provision-int.h"
#include "service.h"

/*
 * Who holds id as a gid (group) or a uid (not group): the account files first, then NSS on
 * the host.  1 with the name in who, 0 when nobody does, -errno when a lookup failed.
 */
static int id_holder(struct prov_run *x, unsigned id, bool group, char *who, size_t size)
{
        const char *name = NULL;
        int k = 0;

        if (group) {
                const struct slots_acct_group *og = slots_accounts_group_by_gid(x->db, (gid_t) id);
                name = og ? og->name : NULL;
        } else {
                const struct slots_acct_user *ou = slots_accounts_user_by_uid(x->db, (uid_t) id);
                name = ou ? ou->name : NULL;
        }
        if (name) {
                snprintf(who, size, "%s", name);
                return 1;
        }
        if (!x->o->host)
                return 0;
        if (group) {
                struct slots_gr gr;

                k = slots_nss_gid((gid_t) id, &gr);
                if (k > 0) {
                        snprintf(who, size, "%s", gr.name);
                        slots_gr_clear(&gr);
                }
        } else {
                struct slots_pw pw;

                k = slots_nss_uid((uid_t) id, &pw);
                if (k > 0) {
                        snprintf(who, size, "%s", pw.name);
                        slots_pw_clear(&pw);
                }
        }
        return k;
}

/* A source that hides a down directory from every lookup (slots_nss_masked_source) is worth a warning. */
void prov_nsswitch_warn(struct prov_run *x)
{
        static const char *const dbs[] = { "passwd", "group" };
        char *text = NULL, src[32], next[32];
        struct stat st;
        size_t len;
        int fd = slots_open_regular(x->etcfd, "nsswitch.conf", &st);

        if (fd < 0)
                return;
        if (slots_read_all(fd, 1 << 20, &text, &len) == 0)
                for (size_t i = 0; i < sizeof(dbs) / sizeof(dbs[0]); i++)
                        if (slots_nss_masked_source(text, dbs[i], src, sizeof(src), next, sizeof(next)))
                                WARN(x, "/etc/nsswitch.conf",
                                     prov_fmt_fix(x,
                                                  "write \"%s [UNAVAIL=return] %s\" on the %s: line, or list %s last",
                                                  src, next, dbs[i], src),
                                     "%s: %s is followed by %s: when %s is down, %s answers \"not found\" and a failed "
                                     "lookup cannot be told from a missing account",
                                     dbs[i], src, next, src, next);
        free(text);
        slots_close(fd);
}

/* 1 when id is neither a uid nor a gid anywhere, 0 when taken, -errno when a lookup failed. */
static int id_free(struct prov_run *x, uid_t id)
{
        struct slots_pw pw;
        struct slots_gr gr;
        char what[64];
        int r;

        if (slots_accounts_user_by_uid(x->db, id) || slots_accounts_group_by_gid(x->db, id))
                return 0;
        if (!x->o->host)
                return 1;
        snprintf(what, sizeof(what), "uid %u", (unsigned) id);
        r = slots_nss_uid(id, &pw);
        if (r < 0)
                return prov_nss_failed(x, r, what);
        if (r > 0) {
                slots_pw_clear(&pw);
                return 0;
        }
        snprintf(what, sizeof(what), "gid %u", (unsigned) id);
        r = slots_nss_gid(id, &gr);
        if (r < 0)
                return prov_nss_failed(x, r, what);
        if (r > 0) {
                slots_gr_clear(&gr);
                return 0;
        }
        return 1;
}

/* The next free id going down from the top of the range, as shadow allocates system ids. */
static int next_id(struct prov_run *x, uid_t *out)
{
        while (!x->cursor_done) {
                uid_t id = x->cursor;
                int r;

                if (x->cursor == x->id_min)
                        x->cursor_done = true;
                else
                        x->cursor--;
                r = id_free(x, id);
                if (r < 0)
                        return r;
                if (r > 0) {
                        *out = id;
                        return 0;
                }
        }
        return -ENOSPC;
}

/* An account as either source knows it. */
struct acct {
        bool found, local, valid;
        uid_t uid;
        gid_t gid;
        char *dir, *shell;
        char **members;                 /* NSS groups only */
        struct slots_pw pw;
        struct slots_gr gr;
};

static void acct_clear(struct acct *a)
{
        slots_pw_clear(&a->pw);
        slots_gr_clear(&a->gr);
        memset(a, 0, sizeof(*a));
}

static int find_user(struct prov_run *x, const char *name, struct acct *a)
{
        const struct slots_acct_user *u = slots_accounts_user(x->db, name);
        int r;

        memset(a, 0, sizeof(*a));
        if (u) {
                a->found = a->local = true;
                a->valid = u->valid;
                a->uid = u->uid;
                a->gid = u->gid;
                a->dir = (char *) u->dir;
                a->shell = (char *) u->shell;
                return 0;
        }
        if (!x->o->host)
                return 0;
        r = slots_nss_user(name, &a->pw);
        if (r < 0)
                return prov_nss_failed(x, r, name);
        if (r > 0) {
                a->found = a->valid = true;
                a->uid = a->pw.uid;
                a->gid = a->pw.gid;
                a->dir = a->pw.dir;
                a->shell = a->pw.shell;
        }
        return 0;
}

static int find_group(struct prov_run *x, const char *name, struct acct *a)
{
        const struct slots_acct_group *g = slots_accounts_group(x->db, name);
        int r;

        memset(a, 0, sizeof(*a));
        if (g) {
                a->found = a->local = true;
                a->valid = g->valid;
                a->gid = g->gid;
                return 0;
        }
        if (!x->o->host)
                return 0;
        r = slots_nss_group(name, &a->gr);
        if (r < 0)
                return prov_nss_group_failed(x, r, name);
        if (r > 0) {
                a->found = a->valid = true;
                a->gid = a->gr.gid;
        }
        return 0;
}

static char *slot_home(struct prov_run *x, const char *slot)
{
        char *s;

        if (asprintf(&s, "%s%shome/%s", x->c->slots_root, strcmp(x->c->slots_root, "/") ? "/" : "", slot) < 0)
                return NULL;
        return s;
}

static int plan_shared(struct prov_run *x)
{
        struct acct g;
        int r;

        snprintf(x->shared, sizeof(x->shared), "%sshared", x->c->prefix);
        r = find_group(x, x->shared, &g);
        if (r < 0)
                return r;
        if (g.found && !g.valid) {
                PROBLEM(x, x->shared, "repair the line with vigr", "the group's line in /etc/group is malformed");
                acct_clear(&g);
                return 0;
        }
        if (prov_dir_entry(x, x->shared, PROV_SERVED, !g.found ? PROV_NONE : g.local ? PROV_LOCAL : PROV_SERVED)) {
                acct_clear(&g);
                return 0;
        }
        if (g.found && x->c->uid_base && g.gid != x->c->uid_base) {
                PROBLEM(x, x->shared,
                        g.local ? prov_fmt_fix(
                                          x, "groupmod -g %u %s, or change uid_base in the config for the whole fleet",
                                          (unsigned) x->c->uid_base, x->shared)
                                : prov_ldif_set(x, true, x->shared, "gidNumber", NULL, x->c->uid_base, NULL),
                        "group %s exists with gid %u, planned %u (uid_base)", x->shared, (unsigned) g.gid,
                        (unsigned) x->c->uid_base);
                acct_clear(&g);
                return 0;
        }
        if (g.found) {
                /* Any gid is fine for a group the admin made; only new ids come from the range. */
                x->shared_gid = g.gid;
                r = 0;
                if (g.local && !slots_accounts_has_gshadow(x->db, x->shared)) {
                        r = slots_accounts_add_gshadow(x->db, x->shared);
                        if (r == 0)
                                r = prov_acct_line(x, "add gshadow entry for group %s", x->shared);
                }
                acct_clear(&g);
                return r;
        }
        if (x->c->uid_base) {
                char who[256];

                x->shared_gid = x->c->uid_base;
                r = id_holder(x, x->shared_gid, true, who, sizeof(who));
                if (r < 0)
                        return prov_nss_failed(x, r, x->shared);
                if (r > 0) {
                        PROBLEM(x, x->shared,
                                prov_fmt_fix(
                                        x,
                                        "renumber or remove the group %s, or change uid_base in the config for the "
                                        "whole fleet",
                                        who),
                                "planned gid %u for the group %s (uid_base) is taken by the group %s",
                                (unsigned) x->shared_gid, x->shared, who);
                        return 0;
                }
        } else {
                r = next_id(x, &x->shared_gid);
        }
        if (r == -ENOSPC) {
                PROBLEM(x, x->shared, "widen uid_min/uid_max in the config", "no free id left in %s",
                        x->range);
                return 0;
        }
        if (r < 0)
                return r;
        r = slots_accounts_add_group(x->db, x->shared, x->shared_gid);
        if (r == 0)
                r = prov_acct_line(x, "create group %s (gid %u)", x->shared, (unsigned) x->shared_gid);
        return r;
}

/*
 * A slot whose account exists (in the files or through NSS): its uid, primary
 * gid, home and shell against the plan, and its group's gid against its uid.
 * want is the uid uid_base fixes (0 without).  Conflicts are PROBLEMs; -errno
 * when a lookup failed.
 */
static int check_user(struct prov_run *x, const char *name, const struct acct *u, const struct acct *g,
                      const char *home, uid_t want)
{
        const struct slots_config *c = x->c;
        char who[256];
        bool uid_ok = true;
        int r;

        if (want && u->uid != want) {
                PROBLEM(x, name,
                        u->local ? prov_fmt_fix(x,
                                                "remove it (userdel %s) so that it is created again, or renumber "
                                                "it (usermod -u %u %s, groupmod -g %u %s), or change uid_base in "
                                                "the config for the whole fleet",
                                                name, (unsigned) want, name, (unsigned) want, name)
                                 : prov_ldif_set(x, false, name, "uidNumber", "gidNumber", want, NULL),
                        "%s exists with uid %u, planned %u (uid_base + %u)", name, (unsigned) u->uid, (unsigned) want,
                        (unsigned) (want - c->uid_base));
                uid_ok = false;
        } else if (!want && (u->uid < x->id_min || u->uid > x->id_max)) {
                uid_t planned = 0;

                r = next_id(x, &planned);
                if (r < 0 && r != -ENOSPC)
                        return r;
                if (planned)
                        snprintf(who, sizeof(who), "planned %u", (unsigned) planned);
                else
                        snprintf(who, sizeof(who), "no id free");
                PROBLEM(x, name,
                        prov_fmt_fix(x, "remove it (userdel %s) or fix it with usermod -u and groupmod -g, or set "
                                   "uid_min/uid_max to a range that holds %u", name, (unsigned) u->uid),
                        "%s exists with uid %u, %s: %u is outside %s", name, (unsigned) u->uid, who,
                        (unsigned) u->uid, x->range);
                uid_ok = false;
        }
        /* GID = UID is checked against a uid that can stay; a wrong uid is fixed first. */
        if (uid_ok && u->gid != u->uid)
                PROBLEM(x, name,
                        u->local
                                ? prov_fmt_fix(x, "usermod -g %u %s (with a group %s of gid %u), or remove the account",
                                               (unsigned) u->uid, name, name, (unsigned) u->uid)
                                : prov_ldif_set(x, false, name, "gidNumber", NULL, u->uid, NULL),
                        "%s has primary gid %u, planned %u (its group %s, GID = UID)", name, (unsigned) u->gid,
                        (unsigned) u->uid, name);
        if (strcmp(u->dir, home) != 0)
                PROBLEM(x, name,
                        u->local ? prov_fmt_fix(x, "usermod -d %s %s", home, name)
                                 : prov_ldif_set(x, false, name, "homeDirectory", NULL, 0, home),
                        "%s has home %s, planned %s", name, u->dir, home);
        /* The shell is judged with the rest of the slot's identity (plan_identity). */
        if (uid_ok && g->found && g->gid != u->uid)
                PROBLEM(x, name,
                        g->local ? prov_fmt_fix(x, "groupmod -g %u %s, or remove the group (groupdel %s)",
                                           (unsigned) u->uid, name, name)
                                 : prov_ldif_set(x, true, name, "gidNumber", NULL, u->uid, NULL),
                        "group %s exists with gid %u, planned %u (the uid of %s)", name,
                        (unsigned) g->gid, (unsigned) u->uid, name);
        if (uid_ok && !g->found && !u->local) {
                /* No local half of a directory account: its group belongs in the directory too. */
                PROBLEM(x, name, prov_dir_fix(x, "add the group %s with gidNumber %u", name, (unsigned) u->uid),
                        "%s comes from the name service, but its group %s exists nowhere", name, name);
        } else if (uid_ok && !g->found) {
                /* The group will be made with gid = uid: that gid must be free. */
                int k = id_holder(x, u->uid, true, who, sizeof(who));

                if (k < 0)
                        return prov_nss_failed(x, k, name);
                if (k > 0)
                        PROBLEM(x, name,
                                prov_fmt_fix(x, "renumber or remove the group %s, or remove %s so that it is "
                                           "created again with a free id", who, name),
                                "planned gid %u for the group %s (the uid of %s) is taken by the group %s",
                                (unsigned) u->uid, name, name, who);
        }
        return 0;
}

/*
 * A slot whose group exists but whose account does not: the account will take
 * the group's gid as its uid, so that gid must fit the plan and be free as a uid.
 */
static int check_group(struct prov_run *x, const char *name, const struct acct *g, uid_t want)
{
        const struct slots_config *c = x->c;
        char who[256];
        int k;

        if (!g->local) {
                PROBLEM(x, name,
                        prov_dir_fix(x, "add the account %s with uidNumber and gidNumber %u", name,
                                want ? (unsigned) want : (unsigned) g->gid),
                        "the group %s comes from the name service, but the account %s exists nowhere", name,
                        name);
        } else if (want && g->gid != want) {
                PROBLEM(x, name,
                        prov_fmt_fix(x, "remove the group (groupdel %s) so that it is created again, or renumber it "
                                   "(groupmod -g %u %s), or change uid_base in the config for the whole fleet",
                                name, (unsigned) want, name),
                        "group %s exists with gid %u, planned %u (uid_base + %u)", name, (unsigned) g->gid,
                        (unsigned) want, (unsigned) (want - c->uid_base));
        } else if (!want && (g->gid < x->id_min || g->gid > x->id_max)) {
                PROBLEM(x, name,
                        prov_fmt_fix(x, "remove the group (groupdel %s) or renumber it (groupmod -g), or set "
                                   "uid_min/uid_max to a range that holds %u", name, (unsigned) g->gid),
                        "group %s exists with gid %u, outside %s", name, (unsigned) g->gid, x->range);
        } else {
                k = id_holder(x, g->gid, false, who, sizeof(who));
                if (k < 0)
                        return prov_nss_failed(x, k, name);
                if (k > 0)
                        PROBLEM(x, name,
                                prov_fmt_fix(x, "remove the group %s (groupdel %s) so that a free id is chosen, or "
                                           "renumber the account %s", name, name, who),
                                "planned uid %u for %s (the gid of its existing group %s) is taken by the "
                                "account %s", (unsigned) g->gid, name, name, who);
        }
        return 0;
}

/*
 * A slot with neither account nor group: its id is uid_base's (free as a uid and
 * as a gid, or another host's slot would differ) or the next free one of the range.
 */
static int choose_id(struct prov_run *x, const char *name, uid_t want, uid_t *id)
{
        char who[256];
        int r;

        if (want) {
                *id = want;
                for (int group = 0; group < 2; group++) {
                        int k = id_holder(x, want, group, who, sizeof(who));

                        if (k < 0)
                                return prov_nss_failed(x, k, name);
                        if (k > 0)
                                PROBLEM(x, name,
                                        prov_fmt_fix(x,
                                                     "renumber or remove the %s %s, or change uid_base in the config "
                                                     "for the whole fleet",
                                                     group ? "group" : "account", who),
                                        "planned %s %u for %s (uid_base + %u) is taken by the %s %s",
                                        group ? "gid" : "uid", (unsigned) want, name,
                                        (unsigned) (want - x->c->uid_base), group ? "group" : "account", who);
                }
                return 0;
        }
        r = next_id(x, id);
        if (r == -ENOSPC) {
                PROBLEM(x, name, "widen uid_min/uid_max in the config, or make the pool smaller",
                        "no free id left for %s in %s", name, x->range);
                return 0;
        }
        return r;
}

/* Nothing conflicts: adds what is missing of the slot's group, its account and its shared membership. */
static int plan_missing(struct prov_run *x, const char *name, const struct acct *u, const struct acct *g,
                        const char *home, uid_t id)
{
        int r = 0;

        /* prov_dir_entry let only a served account and group through: nothing local is added. */
        if (x->c->accounts_in_directory && (u->local || g->local || !u->found || !g->found))
                return slots_error_set(x->e, -EPERM, name, "a local account or group was planned although "
                                       "\"accounts\" is \"directory\"; nothing was changed");
        if (!g->found) {
                r = slots_accounts_add_group(x->db, name, id);
                if (r == 0)
                        r = prov_acct_line(x, "create group %s (gid %u)", name, (unsigned) id);
        } else if (g->local && !slots_accounts_has_gshadow(x->db, name)) {
                r = slots_accounts_add_gshadow(x->db, name);
                if (r == 0)
                        r = prov_acct_line(x, "add gshadow entry for group %s", name);
        }
        if (r < 0)
                return r;
        if (!u->found) {
                r = slots_accounts_add_user(x->db, name, id, id, home, x->c->shell, x->o->lastchg);
                if (r == 0)
                        r = prov_acct_line(x,
                                           "create account %s (uid %u, group %s, home %s, shell %s, password locked)",
                                           name, (unsigned) id, name, home, x->c->shell);
        } else if (u->local && !slots_accounts_has_shadow(x->db, name)) {
                r = slots_accounts_add_shadow(x->db, name, x->o->lastchg);
                if (r == 0)
                        r = prov_acct_line(x, "add locked shadow entry for %s", name);
        }
        if (r < 0)
                return r;
        if (slots_accounts_group(x->db, x->shared)) {
                /* Both files: a run killed between the group and gshadow renames left one without it. */
                if (!slots_accounts_is_member(x->db, x->shared, name) ||
                    !slots_accounts_gshadow_lists(x->db, x->shared, name)) {
                        r = slots_accounts_add_member(x->db, x->shared, name);
                        if (r == 0)
                                r = prov_acct_line(x, "add %s to group %s", name, x->shared);
                }
        } else if (x->o->host) {
                struct slots_gr gr;
                int k = slots_nss_group(x->shared, &gr);

                if (k < 0)
                        return prov_nss_group_failed(x, k, x->shared);
                if (k > 0 && !slots_gr_has_member(&gr, name))
                        PROBLEM(x, x->shared,
                                prov_ldif_fix(x, true, x->shared,
                                              &(struct slots_dirfix_change){ SLOTS_DIRFIX_ADD, "memberUid", name },
                                              1, "add %s to %s", name, x->shared),
                                "the group comes from the name service, not /etc/group, and does not list %s",
                                name);
                if (k > 0)
                        slots_gr_clear(&gr);
        }
        return r;
}

/* The password fields of a local account as pam_unix reads them: its passwd line's, its shadow line's (or none). */
static int local_password(struct prov_run *x, const char *name, struct slots_pwfields *f)
{
        const struct slots_acct_user *a = slots_accounts_user(x->db, name);
        int r = slots_accounts_password(x->db, name, &f->shadow);

        f->shadow_known = r == 0;
        if (r == 0 && a && !(f->passwd = strdup(a->passwd)))
                r = -ENOMEM;
        return r;
}

/*
 * What of the slot's identity another account could borrow or use (identity.c's
 * verdict): subordinate ids (/etc/subuid, /etc/subgid of the tree), a group but
 * its own and the shared one, a usable password, another shell.  Each is a
 * PROBLEM with the verdict's fix, which names a directory entry's change itself
 * (its ldapmodify line); -errno when the files cannot be read.
 */
static int plan_identity(struct prov_run *x, const char *name, const struct acct *u, const struct acct *g,
                         uid_t id_now)
{
        struct slots_identity_names other = { 0 };
        struct slots_subids su = { 0 }, sg = { 0 };
        struct slots_identity_group *groups = NULL;
        struct slots_identity_verdict v = { 0 };
        char **names = NULL;
        struct slots_identity id = { .name = name, .want_shell = x->c->shell, .shared = x->shared,
                                     .subuid = &su, .subgid = &sg, .directory = u->found && !u->local };
        uid_t uid = u->found ? u->uid : (uid_t) -1;
        struct slots_pwfields pf = { 0 };
        int r;

        r = slots_identity_names_look(x->idfiles, x->nsswitch, name, id_now, g->found ? g->gid : id_now, &other);
        slots_identity_names_into(&other, &id);
        /* A planned id another name holds is check_user's and choose_id's conflict, said once. */
        if (!u->found)
                id.n_uid_names = 0;
        if (!g->found)
                id.n_gid_names = 0;
        id.member_ok = x->c->service;
        if (r == 0)
                r = slots_subid_parse(x->subuid ? x->subuid : "", name, uid, (long) id.uid, &su);
        if (r == 0)
                r = slots_subid_parse(x->subgid ? x->subgid : "", name, uid, (long) id.gid, &sg);
        if (r == 0 && u->found) {
                id.shell = u->shell;
                r = prov_identity_groups(x, name, !u->local, u->gid, &groups, &id.n_groups, &names);
                id.groups = groups;
                if (r == 0 && u->local)
                        r = local_password(x, name, &pf);
                else if (r == 0 && (r = slots_pwfields_lookup(name, &pf)) != -ENOMEM)
                        r = 0;  /* a directory account: through NSS, as pam_unix reads it */
                id.passwd_field = pf.passwd;
                id.shadow_field = pf.shadow;
                id.shadow_known = pf.shadow_known;
        }
        if (r == 0)
                r = slots_identity_judge(&id, &v);
        for (size_t k = 0; r == 0 && k < SLOTS_IDENT_N; k++)
                if (v.p[k].detail)
                        PROBLEM(x, name, v.p[k].fix, "%s", v.p[k].detail);
        if (r == -ENOMEM)
                slots_error_set(x->e, r, name, "out of memory");
        slots_identity_verdict_free(&v);
        slots_subids_free(&su);
        slots_subids_free(&sg);
        slots_identity_names_free(&other);
        free(groups);
        prov_identity_names_free(names);
        slots_pwfields_clear(&pf);
        return r;
}

/*
 * Checks one slot against the plan: its account, else its group, else the id
 * it will get.  When nothing conflicts (in this slot or one before it), plans
 * what is missing.  Conflicts are PROBLEMs.
 */
static int plan_slot(struct prov_run *x, struct pslot *s)
{
        const struct slots_config *c = x->c;
        struct acct u, g;
        char *home = slot_home(x, s->name);
        /* With uid_base every id is fixed by the slot's number, the same on every host. */
        uid_t want = c->uid_base ? c->uid_base + (uid_t) (s - x->slots + 1) : 0;
        uid_t id = 0;
        int r;

        if (!home)
                return slots_error_set(x->e, -ENOMEM, s->name, "out of memory");
        r = find_user(x, s->name, &u);
        if (r == 0)
                r = find_group(x, s->name, &g);
        else
                memset(&g, 0, sizeof(g));
        if (r < 0)
                goto out;

        if (u.found && !u.valid) {
                PROBLEM(x, s->name, "repair the line with vipw", "the account's line in /etc/passwd is malformed");
                goto out;
        }
        if (g.found && !g.valid) {
                PROBLEM(x, s->name, "repair the line with vigr", "the group's line in /etc/group is malformed");
                goto out;
        }
        if (prov_dir_entry(x, s->name, !u.found ? PROV_NONE : u.local ? PROV_LOCAL : PROV_SERVED,
                           !g.found ? PROV_NONE : g.local ? PROV_LOCAL : PROV_SERVED))
                goto out;
        if (u.found) {
                id = u.uid;
                r = check_user(x, s->name, &u, &g, home, want);
        } else if (g.found) {
                id = g.gid;
                r = check_group(x, s->name, &g, want);
        } else {
                r = choose_id(x, s->name, want, &id);
        }
        if (r == 0)
                r = plan_identity(x, s->name, &u, &g, id);
        if (r < 0)
                goto out;
        s->uid = id;
        if (x->problems == 0)
                r = plan_missing(x, s->name, &u, &g, home, id);
out:
        if (r == -EINVAL)
                r = slots_error_invalid(x->e, r, c->path,
                                    "the home or shell of %s holds ':', ',' or a newline, which account files "
                                    "cannot hold", s->name);
        else if (r == -ENOMEM)
                slots_error_set(x->e, r, s->name, "out of memory");
        else if (r == -EBADMSG)
                r = slots_error_set(x->e, r, x->shared,
                                    "its line in /etc/group or /etc/gshadow is malformed; repair it with vigr");
        acct_clear(&u);
        acct_clear(&g);
        free(home);
        return r;
}

/* The image's account files as the source of the service lookup (slots-provision --root). */
static int image_user(void *data, const char *name, struct slots_pw *out)
{
        const struct slots_acct_user *u = slots_accounts_user(data, name);

        if (!u || !u->valid)
                return 0;
        *out = (struct slots_pw){ .uid = u->uid, .gid = u->gid };
        return 1;
}

static int image_gr(const struct slots_acct_group *g, struct slots_gr *out)
{
        *out = (struct slots_gr){ .gid = g->gid, .name = strdup(g->name) };
        return out->name ? 1 : -ENOMEM;
}

static int image_group(void *data, const char *name, struct slots_gr *out)
{
        const struct slots_acct_group *g = slots_accounts_group(data, name);

        return g && g->valid ? image_gr(g, out) : 0;
}

static int image_gid(void *data, gid_t gid, struct slots_gr *out)
{
        const struct slots_acct_group *g = slots_accounts_group_by_gid(data, gid);

        return g ? image_gr(g, out) : 0;
}

static int plan_service(struct prov_run *x)
{
        const struct slots_config *c = x->c;
        const struct slots_service_source image = { image_user, image_group, image_gid, x->db };
        struct slots_service s;
        int r, failed = 0;

        r = slots_service_lookup(c, x->o->host ? NULL : &image, SLOTS_SERVICE_USER | SLOTS_SERVICE_GROUP, &s);
        if (r < 0)
                return slots_error_set(x->e, r, c->service, "out of memory");
        if (s.user > 0)
                x->svc_uid = s.pw.uid;
        if (s.user < 0)
                failed = s.user;
        else if (s.user > 0)
                failed = s.group < 0 ? s.group : s.named < 0 ? s.named : 0;
        if (failed) {
                /* Only NSS fails: the image's files are in memory (an allocation, then). */
                r = x->o->host ? prov_nss_failed(x, failed, s.user < 0 || !c->service_group ? c->service : c->service_group)
                               : slots_error_set(x->e, failed, c->service, "out of memory");
        } else if (s.user == 0) {
                if (x->o->host)
                        PROBLEM(x, c->service, "create the service account first, or fix \"service\" in the config",
                                "the service account does not exist");
                else
                        PROBLEM(x, c->service,
                                "add the service account to the image's /etc/passwd first, or fix \"service\"",
                                "the service account is not in the tree's /etc/passwd");
        } else if (s.group == 0) {
                if (x->o->host)
                        PROBLEM(x, c->service_group, "create the group, or fix \"service_group\" in the config",
                                "the service group does not exist");
                else
                        PROBLEM(x, c->service_group,
                                "add the group to the image's /etc/group first, or fix \"service_group\"",
                                "the service group is not in the tree's /etc/group");
        } else {
                x->table_gid = s.gid;
                x->table_group = s.group_name;
                s.group_name = NULL;
        }
        slots_service_clear(&s);
        return r;
}

/* Is the service account listed in group (local files, else NSS)?  1, 0 or -errno. */
static int service_in_group(struct prov_run *x, const char *group)
{
        struct slots_gr gr;
        int k;

        if (slots_accounts_group(x->db, group))
                return slots_accounts_is_member(x->db, group, x->c->service);
        if (!x->o->host)
                return 0;
        k = slots_nss_group(group, &gr);
        if (k <= 0)
                return k < 0 ? prov_nss_group_failed(x, k, group) : 0;
        k = slots_gr_has_member(&gr, x->c->service);
        slots_gr_clear(&gr);
        return k;
}

/*
 * The service is never a slot: a service account in a slot's group or the shared
 * group could reach every slot's files (and a slot the service's).  Invalid config.
 */
static int plan_service_apart(struct prov_run *x)
{
        char name[SLOTS_NAME_MAX];
        int r;

        for (unsigned i = 0; i <= x->c->slots; i++) {
                const char *g = i ? slots_slot_name(i, name) : x->shared;

                r = service_in_group(x, g);
                if (r < 0)
                        return r;
                if (r > 0) {
                        r = slots_error_invalid(x->e, -EBADMSG, x->c->path,
                                            "the service account %s is a member of group %s; the service is "
                                            "never a slot", x->c->service, g);
                        prov_service_apart_fix(x, g, slots_accounts_group(x->db, g) != NULL);
                        return r;
                }
        }
        return 0;
}

/* run_as_group: the group slots may run with (sudo -g), the service account its member. */
static int plan_run_as_group(struct prov_run *x)
{
        const char *name = x->c->run_as_group;
        struct acct g;
        bool found;
        gid_t gid;
        int r;

        if (!name)
                return 0;
        r = find_group(x, name, &g);
        if (r < 0)
                return r;
        if (g.found && !g.valid) {
                PROBLEM(x, name, "repair the line with vigr", "the group's line in /etc/group is malformed");
                acct_clear(&g);
                return 0;
        }
        if (g.found && !g.local) {
                acct_clear(&g);
                r = service_in_group(x, name);
                if (r == 0)
                        PROBLEM(x, name, prov_ldif_fix(x, true, name, &(struct slots_dirfix_change){
                                                 SLOTS_DIRFIX_ADD, "memberUid", x->c->service }, 1,
                                                 "add %s to %s", x->c->service, name),
                                "run_as_group comes from the name service and does not list %s", x->c->service);
                return r < 0 ? r : 0;
        }
        found = g.found;
        acct_clear(&g);
        if (!found) {
                r = next_id(x, &gid);
                if (r == -ENOSPC) {
                        PROBLEM(x, name, "widen uid_min/uid_max in the config", "no free id left in %s",
                                x->range);
                        return 0;
                }
                if (r == 0)
                        r = slots_accounts_add_group(x->db, name, gid);
                if (r == 0)
                        r = prov_acct_line(x, "create group %s (gid %u)", name, (unsigned) gid);
                if (r < 0)
                        return r;
        } else if (!slots_accounts_has_gshadow(x->db, name)) {
                r = slots_accounts_add_gshadow(x->db, name);
                if (r == 0)
                        r = prov_acct_line(x, "add gshadow entry for group %s", name);
                if (r < 0)
                        return r;
        }
        if (!slots_accounts_is_member(x->db, name, x->c->service) ||
            !slots_accounts_gshadow_lists(x->db, name, x->c->service)) {
                r = slots_accounts_add_member(x->db, name, x->c->service);
                if (r == 0)
                        r = prov_acct_line(x, "add %s to group %s", x->c->service, name);
        }
        return r == -EBADMSG ? slots_error_set(x->e, r, name, "its line in /etc/group or /etc/gshadow is "
                                               "malformed; repair it with vigr") : r;
}

int prov_plan_accounts(struct prov_run *x)
{
        int r;

        x->cursor = x->id_max;
        x->cursor_done = false;
        /* Without a tree (rootfd -1: the plan alone, as its unit test runs it) the texts are given. */
        r = prov_identity_files(x);
        if (r < 0)
                return r;
        r = plan_service(x);
        if (r < 0)
                return r;
        r = plan_shared(x);
        if (r < 0)
                return r;
        x->slots = calloc(x->c->slots, sizeof(*x->slots));
        if (!x->slots)
                return slots_error_set(x->e, -ENOMEM, "slots", "out of memory");
        for (unsigned i = 0; i < x->c->slots; i++) {
                slots_slot_name(i + 1, x->slots[i].name);
                x->slot = i + 1;
                r = plan_slot(x, &x->slots[i]);
                x->slot = 0;
                if (r < 0)
                        return r;
        }
        prov_index_slots(x);
        r = plan_service_apart(x);
        if (r == 0)
                r = plan_run_as_group(x);
        return r;
}
