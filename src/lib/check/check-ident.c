/*
 * check's findings on one slot account's identity: identity.c's verdict on it, its password
 * field, and the processes that carry it.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check-ident.h"
#include "escape.h"
#include "procs.h"
#include "identity-look.h"

int check_ident_pwfields(const struct slots_accountmap *m, const char *name, struct slots_pwfields *f)
{
        int r;

        memset(f, 0, sizeof(*f));
        r = slots_amap_passwd_field(m, name, &f->passwd);
        if (r == 0)
                return slots_pwfields_lookup(name, f);
        if (r > 0)
                r = slots_amap_shadow(m, name, &f->shadow);
        if (r == 0)
                r = slots_pwfield_shadow(name, &f->shadow);
        if (r == -ENOMEM) {
                slots_pwfields_clear(f);
                return r;
        }
        f->shadow_known = r >= 0;
        f->shadow_err = r < 0 ? r : 0;
        return 0;
}

/* The groups that name the account, as the verdict takes them: its primary group, then the others. */
static int ident_groups(const struct ctx *k, const struct slotinfo *s, struct slots_identity_group **out, size_t *n,
                        char ***names)
{
        size_t max = 1 + (s->have_id ? (size_t) s->id.n_groups : 0);
        struct slots_identity_group *g = calloc(max, sizeof(*g));
        char **nm = calloc(max, sizeof(*nm));

        *out = g;
        *names = nm;
        *n = 0;
        if (!g || !nm)
                return -ENOMEM;
        for (size_t i = 0; i < max; i++) {
                gid_t gid = i == 0 ? s->pw.gid : s->id.groups[i - 1];
                int r;

                if (i > 0 && gid == s->pw.gid)
                        continue;
                r = slots_amap_gid(k->accounts, gid, &nm[*n]);
                if (r == 0 || (r < 0 && r != -ENOMEM))
                        if (asprintf(&nm[*n], "gid %u (no group)", (unsigned) gid) < 0)
                                nm[*n] = NULL;
                if (r == -ENOMEM || !nm[*n])
                        return -ENOMEM;
                g[*n].name = nm[*n];
                g[*n].primary = i == 0;
                (*n)++;
        }
        return 0;
}

/* The verdict's problems of each kind in order, into d and f. */
static void add_verdict(const struct slots_identity_verdict *v, struct strbuf *d, struct strbuf *f)
{
        for (int i = 0; i < SLOTS_IDENT_N; i++) {
                if (!v->p[i].detail)
                        continue;
                strbuf_sep(d, "; ");
                strbuf_addf(d, "%s", v->p[i].detail);
                strbuf_sep(f, " && ");
                strbuf_addf(f, "%s", v->p[i].fix);
        }
}

/* The gid of the group named like the slot, else its primary gid. */
static gid_t slot_gid(const struct ctx *k, const struct slotinfo *s)
{
        gid_t gid;

        if (slots_amap_group(k->accounts, s->name, &gid) <= 0)
                gid = s->pw.gid;
        return gid;
}

/* Processes that carry the slot's identity: any of a free slot's, another account's through its group. */
static void ident_processes(struct ctx *k, const struct slotinfo *s, struct strbuf *d, struct strbuf *f,
                            struct strbuf *note)
{
        bool free_slot = s->user == NULL;
        struct slots_procs_report rep;
        struct slots_error e;
        gid_t gid = slot_gid(k, s);
        bool borrowed = false;

        /* One read of /proc for the whole run: every slot of the pool is matched against it. */
        if (!k->procs && slots_procs_snapshot(&k->procs, &e) < 0) {
                strbuf_sep(note, "; ");
                strbuf_addf(note, "processes not looked at: %s: %s", e.object, e.reason);
                return;
        }
        slots_procs_table_find(k->procs, s->pw.uid, gid, free_slot ? SLOTS_FIND_ANY : SLOTS_FIND_BORROWED, &rep);
        if (rep.survivors == 0)
                return;
        strbuf_sep(d, "; ");
        strbuf_addf(d, "%u process%s carr%s the identity of %s%s:", rep.survivors, rep.survivors == 1 ? "" : "es",
                    rep.survivors == 1 ? "ies" : "y", s->name, free_slot ? ", a free slot" : " through its group");
        strbuf_sep(f, " && ");
        strbuf_addf(f, "kill -KILL");
        for (unsigned i = 0; i < rep.survivors && i < SLOTS_PROCS_SHOWN; i++) {
                const struct slots_proc *p = &rep.shown[i];
                char comm[4 * sizeof(p->comm)], who[64];

                strbuf_addf(d, "%s process %d (%s) of %s, %s", i ? "," : "", (int) p->pid,
                            slots_escape_buf(p->comm, comm, sizeof(comm)),
                            slots_perm_user_name(NULL, (uid_t) p->uid[0], who, sizeof(who)),
                            p->userns ? "in its user namespace" : p->uid[1] == s->pw.uid ? "as its uid" :
                            p->gid[1] == gid ? "with its egid" : "in its group");
                strbuf_addf(f, " %d", (int) p->pid);
                borrowed |= !p->userns && p->uid[0] != s->pw.uid && p->uid[1] != s->pw.uid && p->uid[2] != s->pw.uid &&
                            p->uid[3] != s->pw.uid;
        }
        if (rep.survivors > SLOTS_PROCS_SHOWN)
                strbuf_addf(d, ", ...");
        /* A process of another account in the group came from a set-gid file of the group. */
        if (borrowed || rep.survivors > SLOTS_PROCS_SHOWN)
                strbuf_addf(f, " && find / -xdev -type f -group %s -perm -2000 (set-gid files of the group: "
                            "remove them)", s->name);
}

void check_ident_account(struct ctx *k, const struct slotinfo *s, bool own_password_row, struct strbuf *d,
                         struct strbuf *f, struct strbuf *note)
{
        struct slots_identity id = { .name = s->name, .shell = s->pw.shell, .want_shell = k->cfg->shell };
        struct slots_subids subuid = { 0 }, subgid = { 0 };
        struct slots_identity_group *groups = NULL;
        struct slots_identity_verdict v = { 0 };
        struct slots_error e;
        struct slots_pwfields pf = { 0 };
        char **names = NULL, *shared = NULL;
        bool root = geteuid() == 0;
        enum slots_pw_source src;
        size_t n = 0;
        int r;

        if (asprintf(&shared, "%sshared", k->cfg->prefix) < 0) {
                shared = NULL;
                k->err = -ENOMEM;
                goto out;
        }
        if (ident_groups(k, s, &groups, &n, &names) < 0) {
                k->err = -ENOMEM;
                goto out;
        }
        id.groups = groups;
        id.n_groups = n;
        id.shared = shared;
        if (slots_subid_read(k->rootfd, "/etc/subuid", s->name, s->pw.uid, &subuid, &e) == 0 &&
            slots_subid_read(k->rootfd, "/etc/subgid", s->name, s->pw.uid, &subgid, &e) == 0) {
                id.subuid = &subuid;
                id.subgid = &subgid;
        } else {
                strbuf_sep(note, "; ");
                strbuf_addf(note, "subordinate ids not looked at: %s: %s", e.object, e.reason);
        }
        if (!own_password_row) {
                r = check_ident_pwfields(k->accounts, s->name, &pf);
                if (r == -ENOMEM) {
                        k->err = r;
                        goto out;
                }
                if (r == 0)
                        slots_pwfields_into(&pf, &id, NULL);
                if (r == 0 && !slots_identity_password(&id, &src) && src == SLOTS_PW_UNKNOWN) {
                        strbuf_sep(note, "; ");
                        strbuf_addf(note, "the shadow entry not looked at: needs root");
                }
        }
        if (slots_identity_judge(&id, &v) < 0) {
                k->err = -ENOMEM;
                goto out;
        }
        add_verdict(&v, d, f);
        if (root)
                ident_processes(k, s, d, f, note);
        else {
                strbuf_sep(note, "; ");
                strbuf_addf(note, "processes carrying its identity not looked at: needs root");
        }
out:
        slots_identity_verdict_free(&v);
        slots_pwfields_clear(&pf);
        for (size_t i = 0; names && i < n; i++)
                free(names[i]);
        free(names);
        free(groups);
        free(shared);
        slots_subids_free(&subuid);
        slots_subids_free(&subgid);
}
