/*
 * check's per-slot rows about the account and what it reaches: account, slot-folders,
 * password-locked, runner-reachable, private-unreachable, user-tree.
 */
#include <errno.h>
#include <fcntl.h>
#include <pwd.h>
#include <shadow.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "acl.h"
#include "check-ident.h"
#include "check-int.h"
#include "cleanup.h"
#include "error.h"
#include "fsutil.h"
#include "logindefs.h"

/* ---- account and password-locked ---- */

static void uid_range(struct check_run *k, uid_t *min, uid_t *max, bool *ok)
{
        struct slots_error e;

        *ok = true;
        if (k->cfg->uid_range_set) {
                *min = k->cfg->uid_min;
                *max = k->cfg->uid_max;
                return;
        }
        if (slots_logindefs_uid_range(k->rootfd, min, max, &e) < 0)
                *ok = false;
}

/* Slot s's uid: uid_base + n when uid_base is set, else inside uid_min-uid_max (*range_ok: that range is known). */
static void account_uid(struct check_run *k, const struct slotinfo *s, bool *range_ok, struct strbuf *d,
                        struct strbuf *f)
{
        const struct slots_config *c = k->cfg;
        uid_t min = 0, max = 0;

        uid_range(k, &min, &max, range_ok);
        if (c->uid_base) {
                /* uid_base fixes the id: the same slot has the same uid on every host. */
                *range_ok = true;
                if (s->pw.uid != c->uid_base + s->n) {
                        strbuf_sep(d, "; ");
                        strbuf_addf(d, "uid %u, planned %u (uid_base + %u)", (unsigned) s->pw.uid,
                                (unsigned) (c->uid_base + s->n), s->n);
                        strbuf_sep(f, " && ");
                        strbuf_addf(f, "run slots-provision, which prints the fix");
                }
        } else if (*range_ok && (s->pw.uid < min || s->pw.uid > max)) {
                strbuf_sep(d, "; ");
                strbuf_addf(d, "uid %u is outside %u-%u", (unsigned) s->pw.uid, (unsigned) min, (unsigned) max);
                strbuf_sep(f, " && ");
                strbuf_addf(f, "widen uid_min/uid_max in %s, or recreate %s inside the range", c->path, s->name);
        }
}

/* The home folder dir of slot s: a folder (no symlink), the slot's own, 0700; what is wrong into d and f. */
static void account_home(const struct slotinfo *s, const char *dir, struct strbuf *d, struct strbuf *f)
{
        struct stat st;
        int fd;

        fd = open(dir, O_PATH | O_NOFOLLOW | O_CLOEXEC);
        if (fd < 0 || fstat(fd, &st) < 0) {
                strbuf_sep(d, "; ");
                strbuf_addf(d, "home %s: %s", dir, strerror(errno));
                strbuf_sep(f, " && ");
                strbuf_addf(f, "install -d -m 0700 -o %s -g %s %s", s->name, s->name, dir);
        } else if (!S_ISDIR(st.st_mode)) {
                strbuf_sep(d, "; ");
                strbuf_addf(d, "home %s is %s, not a folder", dir, S_ISLNK(st.st_mode) ? "a symlink" : "a file");
                strbuf_sep(f, " && ");
                strbuf_addf(f, "move %s away; slots-provision creates the folder", dir);
        } else {
                if (st.st_uid != s->pw.uid) {
                        char u[64];
                        strbuf_sep(d, "; ");
                        strbuf_addf(d, "home %s is owned by %s", dir, slots_perm_user_name(NULL, st.st_uid, u, sizeof(u)));
                        strbuf_sep(f, " && ");
                        strbuf_addf(f, "chown %s:%s %s", s->name, s->name, dir);
                }
                if ((st.st_mode & 07777) != 0700) {
                        strbuf_sep(d, "; ");
                        strbuf_addf(d, "home %s is %04o, not 0700", dir, st.st_mode & 07777);
                        strbuf_sep(f, " && ");
                        strbuf_addf(f, "chmod 0700 %s", dir);
                }
        }
        slots_close(fd);
}

void check_account(struct check_run *k, const struct slotinfo *s)
{
        const struct slots_config *c = k->cfg;
        struct strbuf d = { 0 }, f = { 0 }, note = { 0 };
        char *home = NULL, *shared_name = NULL;
        gid_t shared_gid = 0;
        const char *dir;
        bool range_ok, directory = false;
        int r;

        if (s->found == 0) {
                check_ident_missing(k, s);
                return;
        }
        if (s->found < 0) {
                check_add_rowf(k, SLOTS_CHECK_FAIL, "account", s->name,
                               "repair the name service (nsswitch.conf, sssd, LDAP) so that getent passwd works",
                               "the lookup of %s failed: %s", s->name, strerror(-s->found));
                return;
        }
        if (asprintf(&shared_name, "%sshared", c->prefix) < 0) {
                k->err = -ENOMEM;
                goto out;
        }
        r = slots_amap_group(k->accounts, shared_name, &shared_gid);
        check_ident_place(k, s, shared_name, r, shared_gid, &directory, &d, &f);
        account_uid(k, s, &range_ok, &d, &f);
        if (asprintf(&home, "%s/home/%s", c->slots_root, s->name) < 0) {
                k->err = -ENOMEM;
                goto out;
        }
        if (strcmp(s->pw.dir, home) != 0) {
                strbuf_sep(&d, "; ");
                strbuf_addf(&d, "home is %s, not %s", s->pw.dir, home);
                strbuf_sep(&f, " && ");
                check_ident_home_fix(s, home, directory, &f);
        }
        /* The folder the account will have once the fix above is applied: never one at a wrong path. */
        dir = home;
        account_home(s, dir, &d, &f);
        /* The slots of k->slots get a password-locked row of their own; the others (free, pending) not. */
        check_ident_account(k, s, s >= k->slots && s < k->slots + k->n_slots, &d, &f, &note);
        if (d.len) {
                check_add_row(k, SLOTS_CHECK_FAIL, "account", s->name, &d, &f);
        } else {
                strbuf_addf(&d, "uid %u, group %s, in %s and no other group, home %s 0700, shell %s, no "
                            "subordinate ids", (unsigned) s->pw.uid, s->name, shared_name, dir, c->shell);
                if (!range_ok)
                        strbuf_addf(&d, " (uid range unknown: login.defs unreadable)");
                if (note.len)
                        strbuf_addf(&d, " (%s)", strbuf_str(&note));
                check_add_row(k, SLOTS_CHECK_PASS, "account", s->name, &d, NULL);
        }
out:
        strbuf_free(&note);
        free(shared_name);
        free(home);
        strbuf_free(&d);
        strbuf_free(&f);
}

/*
 * The slot's home, state and run folders: exactly slotNN:slotNN 0700, and for a
 * free slot also empty, without ACL or xattr (what release leaves, assign checks).
 */
void check_folders(struct check_run *k, const struct slotinfo *s)
{
        struct slots_error e;
        gid_t gid;
        int r;

        if (s->found <= 0)
                return;         /* the account row says why */
        if (geteuid() != 0) {
                check_add_rowf(k, SLOTS_CHECK_SKIP, "slot-folders", s->name, NULL,
                               "needs root: home, state and run are the slot's own, 0700");
                return;
        }
        if (slots_amap_group(k->accounts, s->name, &gid) <= 0)
                gid = s->pw.gid;
        slots_error_clear(&e);
        r = slots_check_folders(k->rootfd, k->cfg, s->name, s->pw.uid, gid, s->user != NULL, &e);
        if (r < 0)
                check_add_rowf(k, SLOTS_CHECK_FAIL, "slot-folders", s->name, e.fix[0] ? e.fix : NULL, "%s: %s",
                               e.object, e.reason);
        else
                check_add_rowf(k, SLOTS_CHECK_PASS, "slot-folders", s->name, NULL, "home, state and run %s:%s 0700%s",
                               s->name, s->name, s->user ? "" : ", empty, no ACL or xattr");
}

/* The password-locked row when the verdict finds no usable password: why not, from where pam_unix reads it. */
static void password_pass(struct check_run *k, const struct slotinfo *s, const char *h, enum slots_pw_source src)
{
        const char *entry = src == SLOTS_PW_PASSWD ? "passwd" : "shadow";

        if (src == SLOTS_PW_NO_SHADOW)
                check_add_rowf(k, SLOTS_CHECK_PASS, "password-locked", s->name, NULL,
                               "locked (the passwd field says shadow, and there is no shadow entry)");
        else if (h[0] == '!' || h[0] == '*')
                check_add_rowf(k, SLOTS_CHECK_PASS, "password-locked", s->name, NULL,
                               "locked (%s entry starts with %c)", entry, h[0]);
        else
                check_add_rowf(k, SLOTS_CHECK_PASS, "password-locked", s->name, NULL, "no usable hash in the %s entry",
                               entry);
}

void check_password(struct check_run *k, const struct slotinfo *s)
{
        /* A directory's account is locked in the directory: the verdict's fix says so. */
        struct slots_identity id = { .name = s->name, .directory = check_ident_local(k, false, s->name) == 0 };
        struct slots_identity_verdict v;
        const struct slots_identity_problem *p = &v.p[SLOTS_IDENT_PASSWORD];
        struct slots_pwfields pf;
        enum slots_pw_source src;
        const char *h;
        bool have_lib;
        int r;

        if (s->found <= 0) {
                check_add_rowf(k, SLOTS_CHECK_SKIP, "password-locked", s->name, NULL, "no account %s", s->name);
                return;
        }
        r = check_ident_pwfields(k->accounts, s->name, &pf);
        if (r < 0) {
                check_add_rowf(k, SLOTS_CHECK_FAIL, "password-locked", s->name,
                               "repair /etc/passwd or the name service", "cannot read the passwd entry of %s: %s",
                               s->name, strerror(-r));
                slots_pwfields_clear(&pf);
                return;
        }
        slots_pwfields_into(&pf, &id, &have_lib);
        h = slots_identity_password(&id, &src);
        /* The passwd field says shadow, and the shadow entry could not be read. */
        if (src == SLOTS_PW_UNKNOWN) {
                check_add_rowf(k, SLOTS_CHECK_FAIL, "password-locked", s->name,
                               "run the check as root; repair /etc/shadow or the name service",
                               "cannot read the shadow entry of %s: %s", s->name, strerror(-pf.shadow_err));
                slots_pwfields_clear(&pf);
                return;
        }
        if (slots_identity_judge(&id, &v) < 0) {
                k->err = -ENOMEM;
        } else if (p->detail && h[0] && !have_lib) {
                check_add_rowf(k, SLOTS_CHECK_FAIL, "password-locked", s->name,
                               "install libcrypt1 (libxcrypt), or lock the account: usermod -L",
                               "cannot load libcrypt.so.1 to tell whether the %s entry of %s holds a usable hash",
                               src == SLOTS_PW_PASSWD ? "passwd" : "shadow", s->name);
        } else if (p->detail) {
                check_add_rowf(k, SLOTS_CHECK_FAIL, "password-locked", s->name, p->fix, "%s", p->detail);
        } else {
                password_pass(k, s, h ? h : "", src);
        }
        slots_identity_verdict_free(&v);
        slots_pwfields_clear(&pf);
}

/* ---- runner-reachable ---- */

/*
 * As the service, which cannot probe as the slot: the model of each step the service could
 * read decides, x on each folder passed and r and x on the launcher.  Returns 1 when some step
 * refuses the slot (d and f get why and the fix), 0 when every step allows it, -1 when the
 * walk stopped before the end with no refusal on the way (undecided; d says where).
 */
static int runner_by_model(struct check_run *k, const struct slotinfo *s, const struct launcher *l, struct strbuf *d,
                           struct strbuf *f)
{
        struct slots_perm_names nm = check_names_for(k);
        bool denied = false;
        char fix[FIX_MAX];

        for (size_t i = 0; i < l->walk.n; i++) {
                const struct slots_perm_step *st = &l->walk.steps[i];
                unsigned want = st->traverse ? SLOTS_PERM_X : SLOTS_PERM_R | SLOTS_PERM_X;
                struct slots_perm_verdict v;

                if (!st->have_model)
                        continue;
                v = slots_perm_eval(&st->m, &s->id, want);
                if (v.allowed)
                        continue;
                if (!denied) {
                        strbuf_sep(d, "; ");
                        strbuf_addf(d, "%s cannot run %s: the modes and ACLs say no (read as %s): ", s->name,
                                l->path, k->cfg->service);
                } else {
                        strbuf_addf(d, "; ");
                }
                denied = true;
                slots_perm_sb_why(d, &st->m, &v, s->name, st->path, want);
                if (slots_perm_fix_grant(&st->m, &s->id, want, st->path, &nm, fix, sizeof(fix)) > 0) {
                        strbuf_sep(f, " && ");
                        strbuf_addf(f, "%s", fix);
                }
        }
        if (denied)
                return 1;
        if (!l->walk.err && slots_perm_path_end(&l->walk))
                return 0;
        strbuf_sep(d, "; ");
        strbuf_addf(d, "as %s the modes allow %s up to %s, which %s cannot read (%s); run check as root to probe "
                "the rest as the slot", k->cfg->service, s->name, l->walk.err_path ? l->walk.err_path : l->path,
                k->cfg->service, strerror(l->walk.err ? l->walk.err : ENOENT));
        return -1;
}

/* runner-reachable as the service: one row from the models of every launcher's path. */
static void check_runner_svc(struct check_run *k, const struct slotinfo *s)
{
        struct strbuf d = { 0 }, f = { 0 }, pass = { 0 };
        int worst = 0;

        for (size_t i = 0; i < k->n_launchers; i++) {
                const struct launcher *l = &k->launchers[i];
                int r = runner_by_model(k, s, l, &d, &f);

                if (r == 1 || (r == -1 && worst == 0))
                        worst = r;
                if (r == 0) {
                        strbuf_sep(&pass, "; ");
                        strbuf_addf(&pass, "%s (%zu folders searched, launcher executable and readable)", l->path,
                                l->walk.n - 1);
                }
        }
        if (worst == 1) {
                check_add_row(k, SLOTS_CHECK_FAIL, "runner-reachable", s->name, &d, &f);
        } else if (worst == -1) {
                check_add_row(k, SLOTS_CHECK_SKIP, "runner-reachable", s->name, &d, NULL);
        } else {
                struct strbuf t = { 0 };
                strbuf_addf(&t, "reaches %s, by the modes and ACLs %s reads (no probe as the slot without root)",
                        strbuf_str(&pass), k->cfg->service);
                check_add_row(k, SLOTS_CHECK_PASS, "runner-reachable", s->name, &t, NULL);
                strbuf_free(&t);
        }
        strbuf_free(&d);
        strbuf_free(&f);
        strbuf_free(&pass);
}

void check_runner(struct check_run *k, const struct slotinfo *s)
{
        const struct slots_config *c = k->cfg;
        struct strbuf d = { 0 }, f = { 0 }, pass = { 0 };
        bool failed = false;

        if (!s->have_id) {
                check_add_rowf(k, SLOTS_CHECK_SKIP, "runner-reachable", s->name, NULL, "no account %s", s->name);
                return;
        }
        if (geteuid() != 0) {
                check_runner_svc(k, s);
                return;
        }
        if (s->user && check_held_end(s->probe_r)) {
                check_warn_held(k, s, "runner-reachable", check_probe_failure(s->probe_r));
                return;
        }
        for (size_t i = 0; i < k->n_launchers; i++) {
                const struct launcher *l = &k->launchers[i];
                struct reach rr;

                if (l->walk.err) {
                        failed = true;
                        strbuf_sep(&d, "; ");
                        strbuf_addf(&d, "the launcher %s cannot be reached even as root: %s: %s", l->path,
                                l->walk.err_path, strerror(l->walk.err));
                        strbuf_sep(&f, " && ");
                        strbuf_addf(&f, "deploy the release %s with its launcher bin/%s", l->release, c->launcher);
                        continue;
                }
                check_reach_explain(k, &l->walk, &s->res[l->first], s->probe_r, &s->id, s->name,
                                    SLOTS_PERM_R | SLOTS_PERM_X, NULL, NULL, &rr);
                if (!rr.ok) {
                        failed = true;
                        strbuf_sep(&d, "; ");
                        strbuf_addf(&d, "%s cannot run %s: %s", s->name, l->path, strbuf_str(&rr.note));
                        if (rr.why.len)
                                strbuf_addf(&d, "; why: %s", strbuf_str(&rr.why));
                        strbuf_sep(&f, " && ");
                        strbuf_addf(&f, "%s", rr.fix.len ? strbuf_str(&rr.fix) : "see the detail");
                } else {
                        strbuf_sep(&pass, "; ");
                        strbuf_addf(&pass, "%s (%zu folders searched, launcher executable and readable)", l->path,
                                l->walk.n - 1);
                        if (rr.note.len)
                                strbuf_addf(&pass, "; %s", strbuf_str(&rr.note));
                }
                check_reach_free(&rr);
        }
        if (failed) {
                check_add_row(k, SLOTS_CHECK_FAIL, "runner-reachable", s->name, &d, &f);
        } else {
                struct strbuf t = { 0 };
                strbuf_addf(&t, "reaches %s", strbuf_str(&pass));
                check_add_row(k, SLOTS_CHECK_PASS, "runner-reachable", s->name, &t, NULL);
                strbuf_free(&t);
        }
        strbuf_free(&d);
        strbuf_free(&f);
        strbuf_free(&pass);
}

/* ---- private-unreachable ---- */

static void sb_got(struct strbuf *b, unsigned got)
{
        struct strbuf t = { 0 };

        if (got & GOT_OPEN)
                strbuf_addf(&t, "open");
        if (got & GOT_LIST) {
                strbuf_sep(&t, ", ");
                strbuf_addf(&t, "list");
        }
        if (got & GOT_WRITE) {
                strbuf_sep(&t, ", ");
                strbuf_addf(&t, "write");
        }
        if (got & GOT_SEARCH) {
                strbuf_sep(&t, ", ");
                strbuf_addf(&t, "enter");
        }
        strbuf_addf(b, "%s", strbuf_str(&t));
        if (t.oom)
                b->oom = true;
        strbuf_free(&t);
}

/* A row for a slot whose probe did not end well: a WARN when its holder could have ended it. */
static bool probe_ended(struct check_run *k, const struct slotinfo *s, const char *row)
{
        if (s->user && check_held_end(s->probe_r))
                check_warn_held(k, s, row, check_probe_failure(s->probe_r));
        else if (s->probe_r < 0)
                check_add_rowf(k, SLOTS_CHECK_FAIL, row, s->name, "run the check again; see the detail", "as %s: %s",
                               s->name, check_probe_failure(s->probe_r));
        return s->probe_r < 0 || (s->user && check_held_end(s->probe_r));
}

void check_private(struct check_run *k, const struct slotinfo *s)
{
        const struct slots_config *c = k->cfg;
        struct slots_perm_names nm = check_names_for(k);
        struct strbuf d = { 0 }, f = { 0 }, notes = { 0 };
        unsigned refused = 0, absent = 0;
        char fix[FIX_MAX];

        if (c->n_private_paths == 0) {
                check_add_rowf(k, SLOTS_CHECK_SKIP, "private-unreachable", s->name, NULL, "%s lists no private_paths",
                               c->path);
                return;
        }
        if (!s->have_id) {
                check_add_rowf(k, SLOTS_CHECK_SKIP, "private-unreachable", s->name, NULL, "no account %s", s->name);
                return;
        }
        if (probe_ended(k, s, "private-unreachable"))
                return;
        for (size_t i = 0; i < c->n_private_paths; i++) {
                const char *p = c->private_paths[i];
                const struct probe_res *res = &s->res[k->private_first + i];
                const struct slots_perm_step *end = slots_perm_path_end(&k->private_walks[i]);
                struct slots_perm_verdict v;

                if (k->private_walks[i].err == ENOENT) {
                        absent++;
                        continue;
                }
                if (!(res->got & GOT_DONE) || !(res->got & ~GOT_DONE)) {
                        refused++;
                        /* Refused only because a folder above keeps the slot out: fragile, say so. */
                        if (end && end->have_model && slots_perm_any(&end->m, &s->id, &v)) {
                                strbuf_sep(&notes, "; ");
                                strbuf_addf(&notes, "%s itself is open to %s, only a folder above keeps it out", p,
                                        s->name);
                        }
                        continue;
                }
                strbuf_sep(&d, "; ");
                strbuf_addf(&d, "as %s, %s can be reached (", s->name, p);
                sb_got(&d, res->got);
                strbuf_addf(&d, ")");
                if (end && end->have_model && slots_perm_any(&end->m, &s->id, &v)) {
                        strbuf_addf(&d, ": ");
                        slots_perm_sb_why(&d, &end->m, &v, s->name, p, SLOTS_PERM_R);
                        if (slots_perm_fix_deny(&end->m, &s->id, p, &nm, fix, sizeof(fix)) > 0) {
                                strbuf_sep(&f, " && ");
                                strbuf_addf(&f, "%s", fix);
                        }
                } else {
                        strbuf_addf(&d, ": the modes and ACLs of %s refuse it, yet the probe got through; the probe wins",
                                p);
                        strbuf_sep(&f, " && ");
                        strbuf_addf(&f, "look at how %s is reached (bind mounts, LSM policy, capabilities)", p);
                }
        }
        if (d.len) {
                check_add_row(k, SLOTS_CHECK_FAIL, "private-unreachable", s->name, &d, &f);
        } else {
                strbuf_addf(&d, "%u private path%s refuse open, list, write and search", refused, refused == 1 ? "" : "s");
                if (absent)
                        strbuf_addf(&d, "; %u do%s not exist", absent, absent == 1 ? "es" : "");
                if (notes.len)
                        strbuf_addf(&d, "; %s", strbuf_str(&notes));
                check_add_row(k, SLOTS_CHECK_PASS, "private-unreachable", s->name, &d, NULL);
        }
        strbuf_free(&d);
        strbuf_free(&f);
        strbuf_free(&notes);
}

/* ---- user-tree ---- */

/* Whether acl gives uid rwx through a named entry that its mask lets through. */
static bool acl_grants_rwx(const struct slots_acl *acl, uid_t uid)
{
        unsigned mask = slots_acl_mask(acl);

        for (size_t i = 0; i < acl->n; i++)
                if (acl->entries[i].tag == SLOTS_ACL_USER && acl->entries[i].id == uid)
                        return (acl->entries[i].perm & mask & 7) == 7;
        return false;
}

/* What the owning group gets through acl (group:: under the mask). */
static unsigned acl_group_obj(const struct slots_acl *acl)
{
        for (size_t i = 0; i < acl->n; i++)
                if (acl->entries[i].tag == SLOTS_ACL_GROUP_OBJ)
                        return acl->entries[i].perm & slots_acl_mask(acl);
        return 0;
}

/*
 * What is wrong with the grant of an assigned slot's tree, into d and f: it
 * rests on the slot's uid (an ACL entry u:slotNN:rwx, in the default ACL
 * too), never on a group another account could borrow; its owning group and
 * others get nothing.
 */
static void tree_grant_problems(const struct check_run *k, const struct slotinfo *s, int fd, const struct stat *st,
                                struct strbuf *d, struct strbuf *f)
{
        const char *shown = s->tree_shown;
        struct slots_acl acc = { 0 }, def = { 0 };
        char p[4];

        (void) k;
        if (slots_acl_get(fd, SLOTS_ACL_ACCESS, &acc) < 0 || !acl_grants_rwx(&acc, s->pw.uid)) {
                strbuf_addf(d, "%s does not give %s rwx by its uid (an ACL entry)", shown, s->name);
                strbuf_addf(f, "setfacl -m u:%s:rwx,m::rwx %s", s->name, shown);
        }
        if (slots_acl_get(fd, SLOTS_ACL_DEFAULT, &def) < 0 || !acl_grants_rwx(&def, s->pw.uid)) {
                strbuf_sep(d, "; ");
                strbuf_addf(d, "%s has no default ACL entry for %s: new files would not be granted to it", shown,
                            s->name);
                strbuf_sep(f, " && ");
                strbuf_addf(f, "setfacl -d -m u:%s:rwx,g::-,o::- %s", s->name, shown);
        }
        /* The owning group: group:: of the ACL, or the group bits without one. */
        if (acc.n ? acl_group_obj(&acc) != 0 : (st->st_mode & 0070) != 0) {
                strbuf_sep(d, "; ");
                strbuf_addf(d, "%s gives its owning group access (a group another account can hold)", shown);
                strbuf_sep(f, " && ");
                strbuf_addf(f, "setfacl -m g::- %s", shown);
        }
        if (st->st_mode & 0007) {
                strbuf_sep(d, "; ");
                strbuf_addf(d, "%s gives others %s", shown, slots_perm_str(st->st_mode & 7, p));
                strbuf_sep(f, " && ");
                strbuf_addf(f, "chmod o-rwx %s", shown);
        }
        if (d->len)
                strbuf_addf(f, " (<user>: slots-admin status %s)", s->name);
        slots_acl_free(&acc);
        slots_acl_free(&def);
}

/* The assigned user's tree of slot s: a folder (no symlink) that grants the slot as assign does. */
static void own_tree(struct check_run *k, const struct slotinfo *s, struct strbuf *d, struct strbuf *f)
{
        const char *shown = s->tree_shown;
        struct stat st;
        int fd = open(s->tree, O_PATH | O_NOFOLLOW | O_CLOEXEC);
        bool have_st = fd >= 0 && fstat(fd, &st) == 0;
        int st_err = have_st ? 0 : errno;
        const struct slots_perm_step *end = slots_perm_path_end(&s->tree_walk);

        if (have_st && S_ISLNK(st.st_mode)) {
                strbuf_addf(d, "the tree %s of %s's user is a symlink; assign never follows one", shown, s->name);
                strbuf_addf(f, "move the link away, then slots-admin assign <user> %s makes the tree (<user>: "
                        "slots-admin status %s)", s->name, s->name);
        } else if (!end || !have_st) {
                strbuf_addf(d, "the tree %s of %s's user: %s", shown, s->name,
                        strerror(s->tree_walk.err ? s->tree_walk.err : st_err ? st_err : ENOENT));
                strbuf_addf(f, "slots-admin assign <user> %s makes the tree (<user>: slots-admin status %s)",
                        s->name, s->name);
        } else if (!S_ISDIR(st.st_mode)) {
                strbuf_addf(d, "the tree %s of %s's user is not a folder", shown, s->name);
                strbuf_addf(f, "move it away, then slots-admin assign <user> %s makes the tree (<user>: "
                        "slots-admin status %s)", s->name, s->name);
        } else {
                tree_grant_problems(k, s, fd, &st, d, f);
        }
        slots_close(fd);
        if (s->foreign) {
                strbuf_sep(d, "; ");
                strbuf_addf(d, "%lu entr%s of the tree %s belong%s to another account than the service and %s "
                            "(another slot may hold it open): %s", s->foreign, s->foreign == 1 ? "y" : "ies",
                            shown, s->foreign == 1 ? "s" : "", s->name, s->foreign_first);
                strbuf_sep(f, " && ");
                strbuf_addf(f, "slots-admin assign <user> %s hands them to the service (<user>: slots-admin status "
                            "%s); its release ends any other account's process that holds them", s->name, s->name);
        }
}

/* The slot cannot list its own user's tree: what it met, and the grant that fixes it. */
static void own_unlisted(const struct slotinfo *s, int err, const struct slots_perm_names *nm, struct strbuf *d,
                         struct strbuf *f)
{
        const struct slots_perm_step *own = slots_perm_path_end(&s->tree_walk);
        char fix[FIX_MAX];

        strbuf_sep(d, "; ");
        strbuf_addf(d, "as %s, its own tree %s cannot be listed: %s", s->name, s->tree_shown, strerror(err));
        strbuf_sep(f, " && ");
        if (own && slots_perm_fix_grant(&own->m, &s->id, SLOTS_PERM_R | SLOTS_PERM_X, s->tree_shown, nm, fix,
                                        sizeof(fix)) > 0)
                strbuf_addf(f, "%s", fix);
        else
                strbuf_addf(f, "give %s x on every folder above %s", s->name, s->tree_shown);
}

void check_tree(struct check_run *k, const struct slotinfo *s)
{
        struct slots_perm_names nm = check_names_for(k);
        struct strbuf d = { 0 }, f = { 0 };
        const struct slots_perm_step *end;
        unsigned others;
        char fix[FIX_MAX];

        if (!k->cfg->docs_root) {
                check_add_rowf(k, SLOTS_CHECK_SKIP, "user-tree", s->name, NULL, "%s sets no docs_root", k->cfg->path);
                return;
        }
        if (!s->have_id) {
                check_add_rowf(k, SLOTS_CHECK_SKIP, "user-tree", s->name, NULL, "no account %s", s->name);
                return;
        }
        if (s->user)
                own_tree(k, s, &d, &f);
        if (s->user && check_held_end(s->probe_r) && !d.len) {
                check_warn_held(k, s, "user-tree", check_probe_failure(s->probe_r));
                goto out;
        }
        if (s->probe_r < 0 && !(s->user && check_held_end(s->probe_r))) {
                strbuf_sep(&d, "; ");
                strbuf_addf(&d, "as %s: %s", s->name, check_probe_failure(s->probe_r));
                strbuf_sep(&f, " && ");
                strbuf_addf(&f, "run the check again; see the detail");
        }
        /* The trees this slot did not probe are refused it by their modes and ACLs (check-plan.c). */
        others = (unsigned) (k->n_trees - (s->tree ? 1 : 0));
        for (size_t t = 0; t < s->n_tree && s->probe_r == 0; t++) {
                const struct slotinfo *o = &k->slots[s->tree_slot[t]];
                const struct probe_res *res = &s->res[k->plan.n + t];

                if (o == s) {
                        if (res->err)
                                own_unlisted(s, res->err, &nm, &d, &f);
                        continue;
                }
                if (!(res->got & GOT_LIST))
                        continue;
                strbuf_sep(&d, "; ");
                strbuf_addf(&d, "as %s, the tree of %s's user (%s) can be listed", s->name, o->name, o->tree_shown);
                end = slots_perm_path_end(&o->tree_walk);
                if (end && slots_perm_fix_deny(&end->m, &s->id, o->tree_shown, &nm, fix, sizeof(fix)) > 0) {
                        strbuf_sep(&f, " && ");
                        strbuf_addf(&f, "%s (<user>: slots-admin status %s)", fix, o->name);
                } else {
                        strbuf_sep(&f, " && ");
                        strbuf_addf(&f, "look at how %s reaches %s (bind mounts, LSM policy)", s->name, o->tree_shown);
                }
        }
        if (d.len) {
                check_add_row(k, SLOTS_CHECK_FAIL, "user-tree", s->name, &d, &f);
        } else if (!s->user && others == 0) {
                check_add_rowf(k, SLOTS_CHECK_SKIP, "user-tree", s->name, NULL,
                               "no user is assigned: no tree to keep out of");
        } else {
                if (s->user)
                        strbuf_addf(&d, "%s: %s's uid by an ACL entry (and its default), nothing for its group or "
                                "others; ", s->tree_shown, s->name);
                strbuf_addf(&d, "cannot list the %u other user tree%s", others, others == 1 ? "" : "s");
                check_add_row(k, SLOTS_CHECK_PASS, "user-tree", s->name, &d, NULL);
        }
out:
        strbuf_free(&d);
        strbuf_free(&f);
}


/*
 * The accounts of the other slots of the pool (free or pending, not the test slot): a
 * missing or changed one is a FAIL row, as for the slots checked above (the next assign
 * would hand it out); the ones as planned make one PASS row, not one each.
 */
void check_other_accounts(struct check_run *k)
{
        unsigned fine = 0;
        size_t next = 0;        /* k->slots is in slot order: the next one checked above */

        for (unsigned n = 1; n <= k->cfg->slots && !k->err; n++) {
                struct slotinfo s = { .n = n };
                size_t rows = k->rep->n;

                if (next < k->n_slots && k->slots[next].n == n) {
                        next++;
                        continue;
                }
                slots_slot_name(n, s.name);
                check_slot_lookup(k, &s);
                check_account(k, &s);
                if (k->rep->n == rows + 1 && k->rep->rows[rows].status == SLOTS_CHECK_PASS) {
                        free(k->rep->rows[rows].detail);
                        k->rep->n--;
                        k->rep->passed--;
                        fine++;
                }
                slots_pw_clear(&s.pw);
                free(s.groups);
        }
        if (fine)
                check_add_rowf(k, SLOTS_CHECK_PASS, "account", NULL, NULL,
                               "%u other slot%s of the pool (free or pending): accounts as planned", fine,
                               fine == 1 ? "" : "s");
}
