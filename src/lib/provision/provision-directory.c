/*
 * The account plan's part for accounts the name service serves: failed lookups, "accounts":
 * "directory" (no local copy, nothing missing), the groups a directory lists a slot in, and
 * fixes as LDIF changes; the texts the identity's rule reads once a run (subordinate ids, the
 * account files as loaded, nsswitch.conf).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dirfix.h"
#include "fsutil.h"
#include "identity-look.h"
#include "identity.h"
#include "nss.h"
#include "privdrop.h"
#include "provision-int.h"

int prov_nss_failed(struct prov_run *x, int r, const char *what)
{
        slots_error_set(x->e, r, what, "the lookup through NSS failed: %s", strerror(-r));
        slots_error_fix(x->e, "make the name service answer (check nsswitch.conf, sssd, the LDAP server), "
                              "then run slots-provision again; nothing was changed");
        return r;
}

/* A group lookup that failed: the group database, not the membership, is what is wrong. */
int prov_nss_group_failed(struct prov_run *x, int r, const char *what)
{
        slots_error_set(x->e, r, what, "the group database did not answer: sssd? (the lookup through NSS "
                        "failed: %s)", strerror(-r));
        slots_error_fix(x->e, "make the name service answer (check nsswitch.conf, sssd, the LDAP server), "
                              "then run slots-provision again; nothing was changed");
        return r;
}

const char *prov_ldif_fix(struct prov_run *x, bool group, const char *name, const struct slots_dirfix_change *ch,
                          size_t n, const char *fmt, ...)
{
        va_list ap;

        strbuf_reset(&x->fix);
        va_start(ap, fmt);
        strbuf_vaddf(&x->fix, fmt, ap);
        va_end(ap);
        strbuf_addf(&x->fix, " where it is kept (the directory service), ");
        slots_dirfix(&x->fix, group, name, ch, n);
        strbuf_addf(&x->fix, "; then run slots-provision again");
        if (x->fix.oom) {
                x->oom = true;
                strbuf_free(&x->fix);
        }
        return strbuf_str(&x->fix);
}

const char *prov_ldif_set(struct prov_run *x, bool group, const char *name, const char *attr, const char *attr2,
                          unsigned num, const char *value)
{
        char n[16];
        const char *v = value ? value : (snprintf(n, sizeof(n), "%u", num), n);
        struct slots_dirfix_change ch[2] = { { SLOTS_DIRFIX_REPLACE, attr, v }, { SLOTS_DIRFIX_REPLACE, attr2, v } };

        if (attr2)
                return prov_ldif_fix(x, group, name, ch, 2, "set %s and %s %s on the %s %s", attr, attr2, v,
                                     group ? "group" : "account", name);
        return prov_ldif_fix(x, group, name, ch, 1, "set %s %s on the %s %s", attr, v, group ? "group" : "account",
                             name);
}

/* The fix for entries the directory lacks: load them from --ldif, or let sssd reach the directory. */
static const char *load_fix(struct prov_run *x)
{
        strbuf_reset(&x->fix);
        slots_dirfix_load(&x->fix);
        strbuf_addf(&x->fix, "; when it is loaded, this host's name service cannot reach the directory and has "
                             "nothing cached (a new host: check sssctl domain-status); then run slots-provision "
                             "again");
        if (x->fix.oom) {
                x->oom = true;
                strbuf_free(&x->fix);
        }
        return strbuf_str(&x->fix);
}

int prov_dir_entry(struct prov_run *x, const char *name, enum prov_where user, enum prov_where group)
{
        const char *file = user == PROV_LOCAL ? "/etc/passwd" : "/etc/group";

        if (!x->c->accounts_in_directory)
                return 0;
        if (user == PROV_LOCAL || group == PROV_LOCAL) {
                PROBLEM(x, name,
                        prov_fmt_fix(x, "remove the local copy (%s %s) so that the directory's entry is the "
                                     "one, or set \"accounts\": \"local\" in %s", user == PROV_LOCAL ?
                                     "userdel" : "groupdel", name, x->c->path),
                        "%s is in this host's %s, but \"accounts\" is \"directory\": a local copy splits the fleet",
                        name, file);
                return 1;
        }
        if (user == PROV_NONE && group == PROV_NONE) {
                PROBLEM(x, name, load_fix(x),
                        "the directory answers for neither the account nor the group %s (\"accounts\": "
                        "\"directory\": no local one is made)", name);
                return 1;
        }
        return 0;
}

/* The tree's path (/etc/subuid, /etc/subgid), read once a run into *text; a missing file holds no range. */
static int read_subids(struct prov_run *x, const char *path, char **text)
{
        const struct slots_read how = { .path = path, .max = (size_t) 16 << 20, .content_fails = true };
        size_t len = 0;
        int fd = slots_open_in(x->rootfd, path, O_RDONLY | O_NONBLOCK | O_NOCTTY), r;

        *text = NULL;
        if (fd == -ENOENT)
                return 0;
        if (fd < 0)
                return slots_error_set(x->e, fd, path, "cannot open: %s", strerror(-fd));
        r = slots_read_text_fd(fd, &how, NULL, text, &len, x->e);
        slots_close(fd);
        return r;
}

/*
 * The account files as loaded (before any line is planned), indexed once a run for every
 * slot's other names; on the host also nsswitch.conf, for what a directory answers.
 */
static int plan_idfiles(struct prov_run *x)
{
        static const enum slots_acct_file which[3] = { SLOTS_ACCT_PASSWD, SLOTS_ACCT_GROUP, SLOTS_ACCT_GSHADOW };
        static const char *const paths[3] = { "/etc/passwd", "/etc/group", "/etc/gshadow" };
        size_t len;
        int r = 0;

        if (!(x->idfiles = calloc(3, sizeof(*x->idfiles))))
                return slots_error_set(x->e, -ENOMEM, "slots", "out of memory");
        for (int i = 0; i < 3 && r == 0; i++) {
                char *text = slots_accounts_render(x->db, which[i], &len);

                r = text ? slots_idfile_text(paths[i], text, true, &x->idfiles[i]) : -ENOMEM;
        }
        if (r == 0 && x->o->host && slots_account_text(AT_FDCWD, "/etc/nsswitch.conf", &x->nsswitch) == -ENOMEM)
                r = -ENOMEM;
        return r < 0 ? slots_error_set(x->e, r, "slots", "out of memory") : 0;
}

int prov_identity_files(struct prov_run *x)
{
        int r = 0;

        /* Without a tree (rootfd -1: the plan alone, as its unit test runs it) the texts are given. */
        if (x->rootfd != -1 && !x->subuid && !x->subgid) {
                r = read_subids(x, "/etc/subuid", &x->subuid);
                if (r == 0)
                        r = read_subids(x, "/etc/subgid", &x->subgid);
        }
        if (r == 0 && !x->idfiles)
                r = plan_idfiles(x);
        return r;
}

/*
 * The groups that list the slot as a member: those of the account files, and for an account
 * the name service serves, those getgrouplist() finds (a directory's), each once.  Its
 * primary group (gid) is check_user's, not judged twice.  names holds what *out points to.
 */
int prov_identity_groups(struct prov_run *x, const char *name, bool served, gid_t gid,
                         struct slots_identity_group **out, size_t *n, char ***names)
{
        size_t ng = slots_accounts_n_groups(x->db);
        gid_t *nss = NULL;
        int nn = 0, r = served && x->o->host ? slots_grouplist(name, gid, &nss, &nn) : 0;
        struct slots_identity_group *g = calloc(ng + (size_t) nn + 1, sizeof(*g));
        char **nm = calloc((size_t) nn + 1, sizeof(*nm));

        *out = g;
        *names = nm;
        *n = 0;
        if (r < 0 || !g || !nm) {
                free(nss);
                return -ENOMEM;
        }
        for (size_t i = 0; i < ng; i++) {
                const struct slots_acct_group *gr = slots_accounts_group_at(x->db, i);

                if (gr && slots_accounts_is_member(x->db, gr->name, name))
                        g[(*n)++] = (struct slots_identity_group){ .name = gr->name };
        }
        for (int i = 0, k = 0; i < nn && r >= 0; i++) {
                struct slots_gr gr;
                bool seen = false;

                if (nss[i] == gid || slots_accounts_group_by_gid(x->db, nss[i]))
                        continue;
                r = slots_nss_gid(nss[i], &gr);
                if (r < 0) {
                        slots_error_set(x->e, r, name, "the group database did not answer: sssd? (the lookup "
                                        "through NSS of gid %u failed: %s)", (unsigned) nss[i], strerror(-r));
                        slots_error_fix(x->e, "make the name service answer (sssd, nslcd, the LDAP server), "
                                              "then run slots-provision again; nothing was changed");
                        break;
                }
                if (r == 0 && asprintf(&nm[k], "gid %u (no group)", (unsigned) nss[i]) < 0)
                        nm[k] = NULL;
                else if (r > 0)
                        nm[k] = gr.name, gr.name = NULL;
                if (r > 0)
                        slots_gr_clear(&gr);
                if (!nm[k]) {
                        r = -ENOMEM;
                        break;
                }
                for (size_t j = 0; j < *n; j++)
                        seen |= strcmp(g[j].name, nm[k]) == 0;
                /* Not in the account files: the directory's group, whose member is removed there. */
                if (!seen)
                        g[(*n)++] = (struct slots_identity_group){ .name = nm[k], .directory = r > 0 };
                k++;
                r = 0;
        }
        free(nss);
        return r < 0 ? r : 0;
}

void prov_identity_names_free(char **names)
{
        for (size_t i = 0; names && names[i]; i++)
                free(names[i]);
        free(names);
}

void prov_service_apart_fix(struct prov_run *x, const char *group, bool local)
{
        struct strbuf f = { 0 };

        if (local)
                strbuf_addf(&f, "remove it: gpasswd -d %s %s", x->c->service, group);
        else
                slots_dirfix(&f, true, group, &(struct slots_dirfix_change){ SLOTS_DIRFIX_DELETE, "memberUid",
                                                                           x->c->service }, 1);
        slots_error_fix(x->e, "%s", f.oom ? "remove it from the group where the group is kept" : strbuf_str(&f));
        strbuf_free(&f);
}
