/*
 * check's findings on one slot account's identity: identity.c's verdict on it, its password
 * field, and the processes that carry it.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check-ident.h"
#include "dirfix.h"
#include "escape.h"
#include "fsutil.h"
#include "nss.h"
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
static int ident_groups(const struct check_run *k, const struct slotinfo *s, struct slots_identity_group **out,
                        size_t *n, char ***names)
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
                /* A group named but not in /etc/group is the directory's: its member is removed there. */
                g[*n].directory = r > 0 && check_ident_local(k, true, nm[*n]) == 0;
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
static gid_t slot_gid(const struct check_run *k, const struct slotinfo *s)
{
        gid_t gid;

        if (slots_amap_group(k->accounts, s->name, &gid) <= 0)
                gid = s->pw.gid;
        return gid;
}

/*
 * The slot's own processes without no_new_privs: ones that predate pam_slots (an upgrade) or
 * came by a way that opened no session through it; a set-id file gives them another identity.
 */
static void ident_no_nnp(const struct check_run *k, const struct slotinfo *s, gid_t gid, struct strbuf *d,
                         struct strbuf *f)
{
        struct slots_procs_report rep;

        slots_procs_table_find(k->procs, s->pw.uid, gid, SLOTS_FIND_NO_NNP, &rep);
        if (rep.survivors == 0)
                return;
        strbuf_sep(d, "; ");
        strbuf_addf(d, "%u process%s of %s without no_new_privs (from before pam_slots, or a way around it):",
                    rep.survivors, rep.survivors == 1 ? "" : "es", s->name);
        strbuf_sep(f, " && ");
        strbuf_addf(f, "end them: kill -KILL");
        for (unsigned i = 0; i < rep.survivors && i < SLOTS_PROCS_SHOWN; i++) {
                char comm[4 * sizeof(rep.shown[i].comm)];

                strbuf_addf(d, "%s process %d (%s)", i ? "," : "", (int) rep.shown[i].pid,
                            slots_escape_buf(rep.shown[i].comm, comm, sizeof(comm)));
                strbuf_addf(f, " %d", (int) rep.shown[i].pid);
        }
        if (rep.survivors > SLOTS_PROCS_SHOWN)
                strbuf_addf(d, ", ...");
        strbuf_addf(f, " (or release the slot, which ends them all; a new session through pam_slots has the flag)");
}

/* Processes that carry the slot's identity: any of a free slot's, another account's through its group. */
static void ident_processes(struct check_run *k, const struct slotinfo *s, struct strbuf *d, struct strbuf *f,
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
        if (!free_slot)
                ident_no_nnp(k, s, gid, d, f);
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

/* The account files, read once a run and indexed: 0, or -ENOMEM. */
static int ident_files(struct check_run *k)
{
        static const char *const paths[3] = { "/etc/passwd", "/etc/group", "/etc/gshadow" };

        if (k->idfiles)
                return 0;
        if (!(k->idfiles = calloc(3, sizeof(*k->idfiles))))
                return -ENOMEM;
        for (int i = 0; i < 3; i++) {
                k->idfiles_err[i] = slots_idfile_read(k->rootfd, paths[i], true, &k->idfiles[i]);
                if (k->idfiles_err[i] == -ENOMEM)
                        return -ENOMEM;
                k->idfiles[i].path = paths[i];
        }
        if (slots_account_text(k->rootfd, "/etc/nsswitch.conf", &k->nsswitch) == -ENOMEM)
                return -ENOMEM;
        return 0;
}

/* Every other name of the slot's uid and gid and its group's members, into id (o holds them). */
static int ident_names(struct check_run *k, const struct slotinfo *s, struct slots_identity *id,
                       struct slots_identity_names *o, struct strbuf *note)
{
        int r = ident_files(k);

        if (r == 0)
                r = slots_identity_names_look(k->idfiles, k->nsswitch, s->name, s->pw.uid, slot_gid(k, s), o);
        if (r < 0)
                return r;
        slots_identity_names_into(o, id);
        id->member_ok = k->cfg->service;
        for (int i = 0; i < 3; i++)
                if (k->idfiles_err[i] < 0) {
                        strbuf_sep(note, "; ");
                        strbuf_addf(note, "%s not looked at: %s", k->idfiles[i].path, strerror(-k->idfiles_err[i]));
                }
        return 0;
}

/* The password fields of a slot without its own password-locked row, into id; -ENOMEM or 0. */
static int ident_password(struct check_run *k, const struct slotinfo *s, struct slots_identity *id,
                          struct slots_pwfields *pf, struct strbuf *note)
{
        enum slots_pw_source src;
        int r = check_ident_pwfields(k->accounts, s->name, pf);

        if (r == -ENOMEM)
                return r;
        if (r == 0)
                slots_pwfields_into(pf, id, NULL);
        if (r == 0 && !slots_identity_password(id, &src) && src == SLOTS_PW_UNKNOWN) {
                strbuf_sep(note, "; ");
                strbuf_addf(note, "the shadow entry not looked at: needs root");
        }
        return 0;
}

void check_ident_account(struct check_run *k, const struct slotinfo *s, bool own_password_row, struct strbuf *d,
                         struct strbuf *f, struct strbuf *note)
{
        struct slots_identity_names other = { 0 };
        struct slots_identity id = { .name = s->name, .shell = s->pw.shell, .want_shell = k->cfg->shell,
                                     .directory = check_ident_local(k, false, s->name) == 0 };
        struct slots_subids subuid = { 0 }, subgid = { 0 };
        struct slots_identity_group *groups = NULL;
        struct slots_identity_verdict v = { 0 };
        struct slots_error e;
        struct slots_pwfields pf = { 0 };
        char **names = NULL, *shared = NULL;
        size_t n = 0;

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
        if (ident_names(k, s, &id, &other, note) < 0) {
                k->err = -ENOMEM;
                goto out;
        }
        if (slots_subid_read(k->rootfd, "/etc/subuid", s->name, s->pw.uid, (long) id.uid, &subuid, &e) == 0 &&
            slots_subid_read(k->rootfd, "/etc/subgid", s->name, s->pw.uid, (long) id.gid, &subgid, &e) == 0) {
                id.subuid = &subuid;
                id.subgid = &subgid;
        } else {
                strbuf_sep(note, "; ");
                strbuf_addf(note, "subordinate ids not looked at: %s: %s", e.object, e.reason);
        }
        if (!own_password_row && ident_password(k, s, &id, &pf, note) < 0) {
                k->err = -ENOMEM;
                goto out;
        }
        if (slots_identity_judge(&id, &v) < 0) {
                k->err = -ENOMEM;
                goto out;
        }
        add_verdict(&v, d, f);
        if (geteuid() == 0)
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
        slots_identity_names_free(&other);
}

/* The names of one account file, sorted, and what the file was when they were read. */
struct local_names {
        dev_t dev;
        ino_t ino;
        off_t size;
        struct timespec mtime;
        char **names;
        size_t n;
        bool read;
};

static int cmp_name(const void *a, const void *b)
{
        return strcmp(*(char *const *) a, *(char *const *) b);
}

static int read_names(const struct check_run *k, const char *path, struct local_names *ln)
{
        const struct slots_read how = { .path = path, .max = (size_t) 64 << 20, .content_fails = true };
        int fd = slots_open_in(k->rootfd, path, O_RDONLY | O_NONBLOCK | O_NOCTTY), r;
        char *text = NULL, *line, *save = NULL;
        struct stat st;
        size_t len = 0;

        if (fd == -ENOENT)
                return 0;
        if (fd < 0)
                return fd;
        if (fstat(fd, &st) == 0 && ln->read && st.st_dev == ln->dev && st.st_ino == ln->ino &&
            st.st_size == ln->size && st.st_mtim.tv_sec == ln->mtime.tv_sec &&
            st.st_mtim.tv_nsec == ln->mtime.tv_nsec) {
                slots_close(fd);
                return 0;
        }
        r = slots_read_text_fd(fd, &how, &st, &text, &len, NULL);
        slots_close(fd);
        if (r < 0)
                return r;
        for (size_t i = 0; i < ln->n; i++)
                free(ln->names[i]);
        free(ln->names);
        *ln = (struct local_names){ .dev = st.st_dev, .ino = st.st_ino, .size = st.st_size, .mtime = st.st_mtim };
        for (line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
                char **nn = ln->n % 64 ? ln->names : realloc(ln->names, (ln->n + 64) * sizeof(*nn));
                size_t end = strcspn(line, ":");

                if (!nn || !(nn[ln->n] = strndup(line, end))) {
                        free(text);
                        ln->names = nn ? nn : ln->names;
                        return -ENOMEM;
                }
                ln->names = nn;
                ln->n++;
        }
        free(text);
        qsort(ln->names, ln->n, sizeof(*ln->names), cmp_name);
        ln->read = true;
        return 0;
}

int check_ident_local(const struct check_run *k, bool group, const char *name)
{
        /* One check run reads the files once; a later run (a test's) reads them again if they changed. */
        static struct local_names files[2];
        struct local_names *ln = &files[group];
        int r = read_names(k, group ? "/etc/group" : "/etc/passwd", ln);

        if (r < 0)
                return r;
        return ln->n && bsearch(&name, ln->names, ln->n, sizeof(*ln->names), cmp_name) ? 1 : 0;
}

void check_ident_missing(struct check_run *k, const struct slotinfo *s)
{
        struct strbuf f = { 0 };

        if (!k->cfg->accounts_in_directory) {
                check_add_rowf(k, SLOTS_CHECK_FAIL, "account", s->name, "slots-provision creates it",
                               "no account %s (looked up through NSS)", s->name);
                return;
        }
        slots_dirfix_load(&f);
        strbuf_addf(&f, "; when it is loaded, this host's name service cannot reach the directory and has nothing "
                        "cached (a new host: check sssctl domain-status)");
        check_add_rowf(k, SLOTS_CHECK_FAIL, "account", s->name, strbuf_str(&f),
                       "the directory answers for no account %s (\"accounts\": \"directory\"; looked up through NSS)",
                       s->name);
        strbuf_free(&f);
}

/* Whether the name service's entry of group lists name: 1, 0, or -errno (the lookup failed). */
static int listed_in(const char *group, const char *name)
{
        struct slots_gr gr;
        int r = slots_nss_group(group, &gr);

        if (r > 0) {
                r = slots_gr_has_member(&gr, name);
                slots_gr_clear(&gr);
        }
        return r;
}

void check_ident_place(struct check_run *k, const struct slotinfo *s, const char *shared, int r, gid_t shared_gid,
                       bool *directory, struct strbuf *d, struct strbuf *f)
{
        int in_passwd = check_ident_local(k, false, s->name), in_group = check_ident_local(k, true, s->name);

        *directory = in_passwd == 0;
        if (k->cfg->accounts_in_directory && (in_passwd > 0 || in_group > 0)) {
                strbuf_sep(d, "; ");
                strbuf_addf(d, "%s is in this host's %s, but \"accounts\" is \"directory\": a local copy splits "
                            "the fleet", s->name, in_passwd > 0 ? "/etc/passwd" : "/etc/group");
                strbuf_sep(f, " && ");
                strbuf_addf(f, "%s %s (the local copy), or set \"accounts\": \"local\" in %s",
                            in_passwd > 0 ? "userdel" : "groupdel", s->name, k->cfg->path);
        }
        if (r < 0 || (r > 0 && s->have_id && !slots_perm_in_group(&s->id, shared_gid) &&
                      listed_in(shared, s->name) > 0)) {
                /* The group entry lists it, its group list does not: the lookup of its groups failed. */
                strbuf_sep(d, "; ");
                strbuf_addf(d, "the group database did not answer: sssd? (the lookup of %s: %s)",
                            r < 0 ? shared : "the groups of the account", r < 0 ? strerror(-r) :
                            "the group lists it, its group list does not");
                strbuf_sep(f, " && ");
                strbuf_addf(f, "make the name service answer (sssd, nslcd, the LDAP server), then run the check again");
        } else if (r == 0) {
                strbuf_sep(d, "; ");
                strbuf_addf(d, "the group %s does not exist", shared);
                strbuf_sep(f, " && ");
                if (k->cfg->accounts_in_directory)
                        slots_dirfix_load(f);
                else
                        strbuf_addf(f, "slots-provision creates it");
        } else if (!s->have_id || !slots_perm_in_group(&s->id, shared_gid)) {
                strbuf_sep(d, "; ");
                strbuf_addf(d, "not a member of %s", shared);
                strbuf_sep(f, " && ");
                if (*directory || check_ident_local(k, true, shared) == 0)
                        slots_dirfix(f, true, shared,
                                     &(struct slots_dirfix_change){ SLOTS_DIRFIX_ADD, "memberUid", s->name }, 1);
                else
                        strbuf_addf(f, "usermod -a -G %s %s", shared, s->name);
        }
}

void check_ident_home_fix(const struct slotinfo *s, const char *home, bool directory, struct strbuf *f)
{
        if (directory)
                slots_dirfix(f, false, s->name,
                             &(struct slots_dirfix_change){ SLOTS_DIRFIX_REPLACE, "homeDirectory", home }, 1);
        else
                strbuf_addf(f, "usermod -d %s %s", home, s->name);
}
