/* The read-only self-check (slots-admin(8), "check"): every layer of the slot chain, as the slots see it. */
#include <crypt.h>
#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <grp.h>
#include <jansson.h>
#include <poll.h>
#include <pwd.h>
#include <shadow.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <acl/libacl.h>
#include <sys/acl.h>

#include "cleanup.h"
#include "config.h"
#include "error.h"
#include "fsutil.h"
#include "logindefs.h"
#include "nss.h"
#include "privdrop.h"
#include "selfcheck.h"
#include "strbuf.h"
#include "table.h"

/*
 * Its argv and envp arrays of string literals are still char *: with -Wwrite-strings they
 * want const (and a cast at execve), left to the split of this file.
 */
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wdiscarded-qualifiers"
#endif

#define SUDO_DEFAULT "/usr/bin/sudo"
#define SUDO_TIMEOUT_MS 5000
#define PROBE_TIMEOUT_MS 10000
#define TABLE_MAX SLOTS_TABLE_MAX
#define SLOTCTL_MAX ((size_t) 1 << 20)
#define FIX_MAX 4096

/* ---- the report ---- */

const char *slots_check_status_name(enum slots_check_status s)
{
        switch (s) {
        case SLOTS_CHECK_PASS:
                return "PASS";
        case SLOTS_CHECK_FAIL:
                return "FAIL";
        case SLOTS_CHECK_SKIP:
                return "SKIP";
        }
        return "?";
}

void slots_check_report_free(struct slots_check_report *rep)
{
        for (size_t i = 0; i < rep->n; i++) {
                free(rep->rows[i].detail);
                free(rep->rows[i].fix);
        }
        free(rep->rows);
        memset(rep, 0, sizeof(*rep));
}

static int report_add(struct slots_check_report *rep, enum slots_check_status st, const char *check,
                      const char *slot, const char *detail, const char *fix)
{
        struct slots_check_row *row;

        if (rep->n == rep->cap) {
                size_t cap = rep->cap ? rep->cap * 2 : 32;
                struct slots_check_row *rows = realloc(rep->rows, cap * sizeof(*rows));
                if (!rows)
                        return -ENOMEM;
                rep->rows = rows;
                rep->cap = cap;
        }
        row = &rep->rows[rep->n];
        memset(row, 0, sizeof(*row));
        row->status = st;
        row->check = check;
        snprintf(row->slot, sizeof(row->slot), "%s", slot ? slot : "-");
        row->detail = strdup(detail);
        row->fix = st == SLOTS_CHECK_FAIL ? strdup(fix && fix[0] ? fix : "see slots-admin(8), CHECK") : NULL;
        if (!row->detail || (st == SLOTS_CHECK_FAIL && !row->fix)) {
                free(row->detail);
                free(row->fix);
                return -ENOMEM;
        }
        rep->n++;
        if (st == SLOTS_CHECK_PASS)
                rep->passed++;
        else if (st == SLOTS_CHECK_FAIL)
                rep->failed++;
        else
                rep->skipped++;
        return 0;
}

/* ---- the permission model: mode bits and POSIX ACL evaluated as the kernel does ---- */

static unsigned permset_bits(acl_permset_t ps)
{
        unsigned p = 0;

        if (acl_get_perm(ps, ACL_READ) == 1)
                p |= SLOTS_PERM_R;
        if (acl_get_perm(ps, ACL_WRITE) == 1)
                p |= SLOTS_PERM_W;
        if (acl_get_perm(ps, ACL_EXECUTE) == 1)
                p |= SLOTS_PERM_X;
        return p;
}

void slots_perm_from_stat(struct slots_perm_model *m, const struct stat *st, acl_t acl)
{
        acl_entry_t e;
        int r;

        memset(m, 0, sizeof(*m));
        m->owner = st->st_uid;
        m->group = st->st_gid;
        m->dir = S_ISDIR(st->st_mode);
        m->user_obj = (st->st_mode >> 6) & 7;
        m->group_obj = (st->st_mode >> 3) & 7;
        m->other = st->st_mode & 7;
        if (!acl)
                return;
        for (r = acl_get_entry(acl, ACL_FIRST_ENTRY, &e); r == 1; r = acl_get_entry(acl, ACL_NEXT_ENTRY, &e)) {
                struct slots_perm_entry *list;
                acl_permset_t ps;
                acl_tag_t tag;
                size_t *n;
                unsigned p;
                void *q;

                if (acl_get_tag_type(e, &tag) < 0 || acl_get_permset(e, &ps) < 0)
                        continue;
                p = permset_bits(ps);
                switch (tag) {
                case ACL_USER_OBJ:
                        m->user_obj = p;
                        break;
                case ACL_GROUP_OBJ:
                        m->group_obj = p;
                        break;
                case ACL_OTHER:
                        m->other = p;
                        break;
                case ACL_MASK:
                        m->mask = p;
                        m->has_mask = m->extended = true;
                        break;
                case ACL_USER:
                case ACL_GROUP:
                        q = acl_get_qualifier(e);
                        if (!q)
                                break;
                        list = tag == ACL_USER ? m->users : m->groups;
                        n = tag == ACL_USER ? &m->n_users : &m->n_groups;
                        m->extended = true;
                        if (*n == SLOTS_PERM_ENTRIES)
                                m->truncated = true;
                        else
                                list[(*n)++] = (struct slots_perm_entry){
                                        .id = tag == ACL_USER ? (unsigned) *(uid_t *) q : (unsigned) *(gid_t *) q,
                                        .perm = p,
                                };
                        acl_free(q);
                        break;
                default:
                        break;
                }
        }
}

static bool in_group(const struct slots_ident *id, gid_t gid)
{
        if (id->gid == gid)
                return true;
        for (int i = 0; i < id->n_groups; i++)
                if (id->groups[i] == gid)
                        return true;
        return false;
}

/* posix_acl_permission(): owner, named user, group class (masked), other, in that order. */
struct slots_perm_verdict slots_perm_eval(const struct slots_perm_model *m, const struct slots_ident *id,
                                          unsigned want)
{
        struct slots_perm_verdict v = { .entry = -1 };
        unsigned mask = m->has_mask ? m->mask : 7;
        bool found = false;

        if (id->uid == m->owner) {
                v.via = SLOTS_VIA_OWNER;
                v.allowed = (m->user_obj & want) == want;
                return v;
        }
        for (size_t i = 0; i < m->n_users; i++)
                if (m->users[i].id == id->uid) {
                        v.via = SLOTS_VIA_USER;
                        v.entry = (int) i;
                        v.allowed = (m->users[i].perm & mask & want) == want;
                        v.masked = !v.allowed && (m->users[i].perm & want) == want;
                        return v;
                }
        v.via = SLOTS_VIA_GROUP;
        if (in_group(id, m->group)) {
                found = true;
                if ((m->group_obj & want) == want)
                        goto masked;
        }
        for (size_t i = 0; i < m->n_groups; i++)
                if (in_group(id, m->groups[i].id)) {
                        if (!found)
                                v.entry = (int) i;
                        found = true;
                        if ((m->groups[i].perm & want) == want) {
                                v.entry = (int) i;
                                goto masked;
                        }
                }
        if (found)
                return v;
        v.via = SLOTS_VIA_OTHER;
        v.allowed = (m->other & want) == want;
        return v;
masked:
        v.allowed = (mask & want) == want;
        v.masked = !v.allowed;
        return v;
}

static const char *perm_str(unsigned p, char buf[static 4])
{
        buf[0] = p & SLOTS_PERM_R ? 'r' : '-';
        buf[1] = p & SLOTS_PERM_W ? 'w' : '-';
        buf[2] = p & SLOTS_PERM_X ? 'x' : '-';
        buf[3] = '\0';
        return buf;
}

/* chmod's letters for a set of bits: "rx", "x". */
static const char *perm_letters(unsigned p, char buf[static 4])
{
        char *o = buf;

        if (p & SLOTS_PERM_R)
                *o++ = 'r';
        if (p & SLOTS_PERM_W)
                *o++ = 'w';
        if (p & SLOTS_PERM_X)
                *o++ = 'x';
        *o = '\0';
        return buf;
}

/* What setfacl does after -m or -x unless told otherwise: the mask becomes the union of the group class. */
static void recompute_mask(struct slots_perm_model *m)
{
        unsigned u = m->group_obj;

        if (!m->extended)
                return;
        for (size_t i = 0; i < m->n_users; i++)
                u |= m->users[i].perm;
        for (size_t i = 0; i < m->n_groups; i++)
                u |= m->groups[i].perm;
        m->mask = u;
        m->has_mask = true;
}

static void remove_entry(struct slots_perm_entry *list, size_t *n, int i)
{
        memmove(&list[i], &list[i + 1], (*n - (size_t) i - 1) * sizeof(*list));
        (*n)--;
}

static const char *name_user(const struct slots_perm_names *nm, uid_t uid, char *buf, size_t size)
{
        if (nm && nm->user)
                return nm->user(nm->arg, uid, buf, size);
        snprintf(buf, size, "%u", (unsigned) uid);
        return buf;
}

static const char *name_group(const struct slots_perm_names *nm, gid_t gid, char *buf, size_t size)
{
        if (nm && nm->group)
                return nm->group(nm->arg, gid, buf, size);
        snprintf(buf, size, "%u", (unsigned) gid);
        return buf;
}

/* A path as a shell word; placeholders such as <docs>/<user> are left for the admin to fill in. */
static void sb_path(struct strbuf *b, const char *path)
{
        bool plain = true;

        for (const char *p = path; *p; p++)
                if (!(strchr("/._-+:@,=%<>", *p) || (*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
                      (*p >= '0' && *p <= '9')))
                        plain = false;
        if (plain) {
                strbuf_addf(b, "%s", path);
                return;
        }
        strbuf_addf(b, "'");
        for (const char *p = path; *p; p++)
                strbuf_addf(b, *p == '\'' ? "'\\''" : "%c", *p);
        strbuf_addf(b, "'");
}

static int fix_done(struct strbuf *b, char *buf, size_t size, int r)
{
        if (b->oom)
                r = -ENOMEM;
        if (r == 0) {
                snprintf(buf, size, "%s", strbuf_str(b));
                r = (int) b->len;
        }
        strbuf_free(b);
        return r;
}

int slots_perm_fix_grant(const struct slots_perm_model *m0, const struct slots_ident *id, unsigned want,
                         const char *display, const struct slots_perm_names *names, char *buf, size_t size)
{
        struct slots_perm_model m = *m0, t;
        struct strbuf b = { 0 };
        char p1[4], p2[4], nb[64];

        for (int step = 0; step < 4; step++) {
                struct slots_perm_verdict v = slots_perm_eval(&m, id, want);

                if (v.allowed)
                        return fix_done(&b, buf, size, 0);
                strbuf_sep(&b, " && ");
                if (v.masked) {
                        /* The entry grants it; only the mask takes it away. */
                        m.mask |= want;
                        strbuf_addf(&b, "setfacl -m m::%s ", perm_str(m.mask, p1));
                } else if (v.via == SLOTS_VIA_OWNER) {
                        m.user_obj |= want;
                        strbuf_addf(&b, "chmod u+%s ", perm_letters(want, p1));
                } else if (v.via == SLOTS_VIA_USER) {
                        /* Removing the entry is the smaller change when the rest of the ACL then allows. */
                        t = m;
                        remove_entry(t.users, &t.n_users, v.entry);
                        recompute_mask(&t);
                        if (slots_perm_eval(&t, id, want).allowed) {
                                strbuf_addf(&b, "setfacl -x u:%s ", name_user(names, id->uid, nb, sizeof(nb)));
                        } else {
                                t = m;
                                t.users[v.entry].perm |= want;
                                recompute_mask(&t);
                                strbuf_addf(&b, "setfacl -m u:%s:%s ", name_user(names, id->uid, nb, sizeof(nb)),
                                        perm_str(t.users[v.entry].perm, p2));
                        }
                        m = t;
                } else if (v.via == SLOTS_VIA_GROUP) {
                        if (!m.extended) {
                                m.group_obj |= want;
                                strbuf_addf(&b, "chmod g+%s ", perm_letters(want, p1));
                        } else if (v.entry < 0) {
                                m.group_obj |= want;
                                recompute_mask(&m);
                                strbuf_addf(&b, "setfacl -m g::%s ", perm_str(m.group_obj, p1));
                        } else {
                                m.groups[v.entry].perm |= want;
                                recompute_mask(&m);
                                strbuf_addf(&b, "setfacl -m g:%s:%s ",
                                        name_group(names, m.groups[v.entry].id, nb, sizeof(nb)),
                                        perm_str(m.groups[v.entry].perm, p1));
                        }
                } else {
                        m.other |= want;
                        strbuf_addf(&b, "chmod o+%s ", perm_letters(want, p1));
                }
                sb_path(&b, display);
        }
        return fix_done(&b, buf, size, -E2BIG);
}

/* Which of r, w, x (x only for a folder) id still gets; the verdict of the first one it gets. */
static bool perm_any(const struct slots_perm_model *m, const struct slots_ident *id, struct slots_perm_verdict *out)
{
        static const unsigned wants[] = { SLOTS_PERM_R, SLOTS_PERM_W, SLOTS_PERM_X };

        for (size_t i = 0; i < sizeof(wants) / sizeof(wants[0]); i++) {
                struct slots_perm_verdict v;

                if (wants[i] == SLOTS_PERM_X && !m->dir)
                        continue;
                v = slots_perm_eval(m, id, wants[i]);
                if (v.allowed) {
                        *out = v;
                        return true;
                }
        }
        return false;
}

int slots_perm_fix_deny(const struct slots_perm_model *m0, const struct slots_ident *id, const char *display,
                        const struct slots_perm_names *names, char *buf, size_t size)
{
        struct slots_perm_model m = *m0;
        struct strbuf b = { 0 };
        char nb[64];

        for (int step = 0; step < 4; step++) {
                struct slots_perm_verdict v;

                if (!perm_any(&m, id, &v))
                        return fix_done(&b, buf, size, 0);
                strbuf_sep(&b, " && ");
                switch (v.via) {
                case SLOTS_VIA_OWNER:
                        /* The account owns it: only a new owner takes its access away for good. */
                        m.owner = names ? names->new_owner : 0;
                        strbuf_addf(&b, "chown %s ", name_user(names, m.owner, nb, sizeof(nb)));
                        break;
                case SLOTS_VIA_USER:
                        remove_entry(m.users, &m.n_users, v.entry);
                        recompute_mask(&m);
                        strbuf_addf(&b, "setfacl -x u:%s ", name_user(names, id->uid, nb, sizeof(nb)));
                        break;
                case SLOTS_VIA_GROUP:
                        if (v.entry >= 0) {
                                strbuf_addf(&b, "setfacl -x g:%s ",
                                        name_group(names, m.groups[v.entry].id, nb, sizeof(nb)));
                                remove_entry(m.groups, &m.n_groups, v.entry);
                                recompute_mask(&m);
                        } else if (m.extended) {
                                m.group_obj = 0;
                                recompute_mask(&m);
                                strbuf_addf(&b, "setfacl -m g::--- ");
                        } else {
                                m.group_obj = 0;
                                strbuf_addf(&b, "chmod g-rwx ");
                        }
                        break;
                case SLOTS_VIA_OTHER:
                        m.other = 0;
                        strbuf_addf(&b, "chmod o-rwx ");
                        break;
                }
                sb_path(&b, display);
        }
        return fix_done(&b, buf, size, -E2BIG);
}

/* ---- the context of one run ---- */

enum probe_op {
        PROBE_SEARCH,           /* faccessat X_OK on a folder */
        PROBE_EXEC,             /* faccessat X_OK and open O_RDONLY on the launcher */
        PROBE_READ,             /* open and read one byte */
        PROBE_PRIVATE,          /* open, list, write access, search: all must be refused */
        PROBE_LIST,             /* opendir */
};

enum {
        GOT_OPEN = 1 << 0,
        GOT_LIST = 1 << 1,
        GOT_WRITE = 1 << 2,
        GOT_SEARCH = 1 << 3,
        GOT_EXEC = 1 << 4,
        GOT_READ = 1 << 5,
        GOT_DONE = 1 << 6,      /* the child reached this item */
};

struct probe_res {
        int err;                /* errno of the first refused attempt, 0 when none was refused */
        unsigned got;           /* GOT_* bits for what succeeded */
};

struct probe_plan {
        const char **paths;
        enum probe_op *ops;
        size_t n, cap;
};

struct step {
        char *path;             /* where the walk found it, symlinks resolved */
        bool traverse;          /* a folder passed through (needs x), or the end of the path */
        bool have_model;
        struct slots_perm_model m;
};

struct walk {
        struct step *steps;
        size_t n;
        int err;                /* 0, or why the path could not be followed (as root) */
        char *err_path;
};

struct slotinfo {
        unsigned n;
        char name[SLOTS_NAME_MAX];
        const char *user;       /* the assigned user: used to build paths, never printed */
        int found;              /* slots_nss_user: 1, 0 (no such account) or -errno */
        struct slots_pw pw;
        struct slots_ident id;
        gid_t *groups;
        bool have_id;
        char *tree;             /* docs_root/<user_tree of user> */
        char *tree_shown;       /* the same as printed: <docs>/.../<user> */
        struct walk tree_walk;
        int probe_r;            /* slots_run_as result of this slot's probe */
        struct probe_res *res;  /* one per plan item */
};

struct launcher {
        char *path;
        char *release;
        struct walk walk;
        size_t first;           /* its first plan item */
};

struct ctx {
        const struct slots_check_opts *o;
        struct slots_check_report *rep;
        int err;                /* -ENOMEM once an allocation failed */
        struct slots_config *cfg;
        int rootfd;

        int svc_found;
        struct slots_pw svc_pw;
        struct slots_ident svc;
        gid_t *svc_groups;
        bool have_svc;
        gid_t group;
        char *group_name;
        bool have_group;

        struct slots_table *table;
        bool table_ok;
        unsigned test;

        struct slotinfo *slots;
        size_t n_slots;
        struct launcher *launchers;
        size_t n_launchers;
        bool releases_missing;  /* app_root/releases could not be read */
        char *release_note;     /* how the release in use was chosen */
        struct walk *private_walks;
        struct probe_plan plan;
        size_t private_first, tree_first;
};

static void add_row(struct ctx *k, enum slots_check_status st, const char *check, const char *slot,
                    const struct strbuf *detail, const struct strbuf *fix)
{
        if ((detail && detail->oom) || (fix && fix->oom)) {
                k->err = -ENOMEM;
                return;
        }
        if (report_add(k->rep, st, check, slot, detail ? strbuf_str(detail) : "", fix ? strbuf_str(fix) : NULL) < 0)
                k->err = -ENOMEM;
}

static void add_rowf(struct ctx *k, enum slots_check_status st, const char *check, const char *slot,
                     const char *fix, const char *fmt, ...) __attribute__((format(printf, 6, 7)));

static void add_rowf(struct ctx *k, enum slots_check_status st, const char *check, const char *slot,
                     const char *fix, const char *fmt, ...)
{
        struct strbuf d = { 0 }, f = { 0 };
        va_list ap;

        va_start(ap, fmt);
        strbuf_vaddf(&d, fmt, ap);
        va_end(ap);
        if (fix)
                strbuf_addf(&f, "%s", fix);
        add_row(k, st, check, slot, &d, fix ? &f : NULL);
        strbuf_free(&d);
        strbuf_free(&f);
}

static const char *user_name_cb(void *arg, uid_t uid, char *buf, size_t size)
{
        struct slots_pw pw;

        (void) arg;
        if (slots_nss_uid(uid, &pw) > 0) {
                snprintf(buf, size, "%s", pw.name);
                slots_pw_clear(&pw);
        } else {
                snprintf(buf, size, "%u", (unsigned) uid);
        }
        return buf;
}

static const char *group_name_cb(void *arg, gid_t gid, char *buf, size_t size)
{
        struct slots_gr gr;

        (void) arg;
        if (slots_nss_gid(gid, &gr) > 0) {
                snprintf(buf, size, "%s", gr.name);
                slots_gr_clear(&gr);
        } else {
                snprintf(buf, size, "%u", (unsigned) gid);
        }
        return buf;
}

static struct slots_perm_names names_for(const struct ctx *k)
{
        return (struct slots_perm_names){
                .user = user_name_cb,
                .group = group_name_cb,
                .new_owner = k->have_svc ? k->svc.uid : 0,
        };
}

/* "0750 root:video-studio" (+acl) for a model. */
static void sb_mode(struct strbuf *b, const struct slots_perm_model *m)
{
        char u[64], g[64];
        unsigned mode = m->user_obj << 6 | (m->has_mask ? m->mask : m->group_obj) << 3 | m->other;

        strbuf_addf(b, "%04o %s:%s%s", mode, user_name_cb(NULL, m->owner, u, sizeof(u)),
                group_name_cb(NULL, m->group, g, sizeof(g)), m->extended ? " with an ACL" : "");
}

/* Why the model gives `who` what it does (v from slots_perm_eval): the bit or ACL entry that decided. */
static void sb_why(struct strbuf *b, const struct slots_perm_model *m, const struct slots_perm_verdict *v,
                   const char *who, const char *shown, unsigned want)
{
        char p1[4], p2[4], nb[64];

        switch (v->via) {
        case SLOTS_VIA_OWNER:
                strbuf_addf(b, "%s is ", shown);
                sb_mode(b, m);
                strbuf_addf(b, " and %s owns it: the owner has %s", who, perm_str(m->user_obj, p1));
                return;
        case SLOTS_VIA_USER:
                strbuf_addf(b, "the ACL entry user:%s:%s on %s", who, perm_str(m->users[v->entry].perm, p1), shown);
                if (v->masked)
                        strbuf_addf(b, " is cut to %s by mask::%s",
                                perm_str(m->users[v->entry].perm & m->mask, p2), perm_str(m->mask, p1));
                return;
        case SLOTS_VIA_GROUP:
                if (v->entry >= 0)
                        strbuf_addf(b, "%s has the ACL entry group:%s:%s", shown,
                                group_name_cb(NULL, m->groups[v->entry].id, nb, sizeof(nb)),
                                perm_str(m->groups[v->entry].perm, p1));
                else
                        strbuf_addf(b, "%s is group %s with %s", shown, group_name_cb(NULL, m->group, nb, sizeof(nb)),
                                perm_str(m->group_obj, p1));
                if (v->masked)
                        strbuf_addf(b, ", cut by mask::%s", perm_str(m->mask, p2));
                strbuf_addf(b, " and %s is in that group", who);
                return;
        case SLOTS_VIA_OTHER:
                strbuf_addf(b, "%s is ", shown);
                sb_mode(b, m);
                strbuf_addf(b, ": others have %s", perm_str(m->other, p1));
                if (!v->allowed)
                        strbuf_addf(b, ", no %s", perm_letters(want, p2));
                return;
        }
}

/* ---- walking a path as the kernel resolves it: every folder passed and the object at the end ---- */

static void walk_free(struct walk *w)
{
        for (size_t i = 0; i < w->n; i++)
                free(w->steps[i].path);
        free(w->steps);
        free(w->err_path);
        memset(w, 0, sizeof(*w));
}

static int model_of_fd(int fd, struct slots_perm_model *m)
{
        char proc[64];
        struct stat st;
        acl_t acl;

        if (fstat(fd, &st) < 0)
                return -errno;
        /* An O_PATH fd carries no xattrs; its /proc link reaches the same inode without a path lookup. */
        snprintf(proc, sizeof(proc), "/proc/self/fd/%d", fd);
        acl = S_ISLNK(st.st_mode) ? NULL : acl_get_file(proc, ACL_TYPE_ACCESS);
        slots_perm_from_stat(m, &st, acl);
        if (acl)
                acl_free(acl);
        return 0;
}

static int walk_add(struct walk *w, const char *path, bool traverse, int fd)
{
        struct step *s = realloc(w->steps, (w->n + 1) * sizeof(*s));

        if (!s)
                return -ENOMEM;
        w->steps = s;
        s = &w->steps[w->n];
        memset(s, 0, sizeof(*s));
        s->path = strdup(path);
        if (!s->path)
                return -ENOMEM;
        s->traverse = traverse;
        s->have_model = model_of_fd(fd, &s->m) == 0;
        w->n++;
        return 0;
}

static char *path_join(const char *dir, const char *name)
{
        char *p;

        if (asprintf(&p, "%s%s%s", dir, strcmp(dir, "/") == 0 ? "" : "/", name) < 0)
                return NULL;
        return p;
}

static int walk_step(void *data, const struct slots_chase_step *s)
{
        return walk_add(data, s->path, !s->last, s->fd);
}

/*
 * Follows path from "/" as the kernel would (the resolver, symlinks followed)
 * and records each folder it passes and the object at the end with its owner,
 * mode and ACL.  Only reads.  Returns 0 or -ENOMEM; a path that cannot be
 * followed sets w->err and w->err_path.
 */
static int walk_path(const char *path, struct walk *w)
{
        struct slots_chase how = { .open_flags = O_PATH, .step = walk_step, .data = w };
        struct slots_error e;
        int fd;

        memset(w, 0, sizeof(*w));
        slots_error_clear(&e);
        fd = slots_chase(AT_FDCWD, path, &how, NULL, &e);
        if (fd >= 0) {
                close(fd);
                return 0;
        }
        if (fd == -ENOMEM)
                return fd;
        w->err = -fd;
        w->err_path = strdup(e.object[0] ? e.object : path);
        return w->err_path ? 0 : -ENOMEM;
}

static const struct step *walk_end(const struct walk *w)
{
        return !w->err && w->n ? &w->steps[w->n - 1] : NULL;
}

/* ---- probes: a forked child drops to the account and tries; results land in shared memory ---- */

static int plan_add(struct probe_plan *p, const char *path, enum probe_op op)
{
        if (p->n == p->cap) {
                size_t cap = p->cap ? p->cap * 2 : 32;
                const char **paths = realloc(p->paths, cap * sizeof(*paths));
                enum probe_op *ops;

                if (!paths)
                        return -ENOMEM;
                p->paths = paths;
                ops = realloc(p->ops, cap * sizeof(*ops));
                if (!ops)
                        return -ENOMEM;
                p->ops = ops;
                p->cap = cap;
        }
        p->paths[p->n] = path;
        p->ops[p->n] = op;
        p->n++;
        return 0;
}

struct probe_job {
        const struct probe_plan *plan;
        size_t first, n;
        struct probe_res *res;
};

static int probe_open(const char *path, int flags)
{
        int fd = open(path, flags | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);

        if (fd < 0)
                return -errno;
        close(fd);
        return 0;
}

static void probe_one(const char *path, enum probe_op op, struct probe_res *res)
{
        struct stat st;
        DIR *d;
        char c;
        int fd;

        res->err = 0;
        res->got = 0;
#define REFUSED(e)                                                              \
        do {                                                                    \
                if (!res->err)                                                  \
                        res->err = (e);                                         \
        } while (0)
        switch (op) {
        case PROBE_SEARCH:
                if (faccessat(AT_FDCWD, path, X_OK, AT_EACCESS) == 0)
                        res->got |= GOT_SEARCH;
                else
                        REFUSED(errno);
                break;
        case PROBE_EXEC:
                if (faccessat(AT_FDCWD, path, X_OK, AT_EACCESS) == 0)
                        res->got |= GOT_EXEC;
                else
                        REFUSED(errno);
                if (probe_open(path, O_RDONLY) == 0)
                        res->got |= GOT_OPEN;
                else
                        REFUSED(errno);
                break;
        case PROBE_READ:
                fd = open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
                if (fd < 0) {
                        REFUSED(errno);
                        break;
                }
                res->got |= GOT_OPEN;
                if (read(fd, &c, 1) >= 0)
                        res->got |= GOT_READ;
                else
                        REFUSED(errno);
                close(fd);
                break;
        case PROBE_PRIVATE:
                if (probe_open(path, O_RDONLY) == 0)
                        res->got |= GOT_OPEN;
                else
                        REFUSED(errno);
                d = opendir(path);
                if (d) {
                        res->got |= GOT_LIST;
                        closedir(d);
                }
                if (faccessat(AT_FDCWD, path, W_OK, AT_EACCESS) == 0)
                        res->got |= GOT_WRITE;
                if (stat(path, &st) == 0 && S_ISDIR(st.st_mode) && faccessat(AT_FDCWD, path, X_OK, AT_EACCESS) == 0)
                        res->got |= GOT_SEARCH;
                break;
        case PROBE_LIST:
                d = opendir(path);
                if (d) {
                        res->got |= GOT_LIST;
                        closedir(d);
                } else {
                        REFUSED(errno);
                }
                break;
        }
#undef REFUSED
        res->got |= GOT_DONE;
}

static int probe_child(void *arg)
{
        struct probe_job *j = arg;

        for (size_t i = 0; i < j->n; i++)
                probe_one(j->plan->paths[j->first + i], j->plan->ops[j->first + i], &j->res[i]);
        return 0;
}

/*
 * Runs fn in a child as id: dropped from root, or as is when check already runs
 * as that account (the service; it cannot set its groups then).  -EPERM otherwise.
 */
static int run_as_id(const struct slots_ident *id, int (*fn)(void *arg), void *arg, int timeout_ms)
{
        struct timespec t0, t;
        int status;
        pid_t pid, w;

        if (geteuid() == 0)
                return slots_run_as(id, fn, arg, timeout_ms);
        if (geteuid() != id->uid)
                return -EPERM;
        clock_gettime(CLOCK_MONOTONIC, &t0);
        pid = fork();
        if (pid < 0)
                return -errno;
        if (pid == 0) {
                int r = fn(arg);
                _exit(r < 0 ? 125 : r > 125 ? 125 : r);
        }
        for (;;) {
                w = waitpid(pid, &status, WNOHANG);
                if (w == pid)
                        break;
                if (w < 0 && errno != EINTR)
                        return -errno;
                clock_gettime(CLOCK_MONOTONIC, &t);
                if ((t.tv_sec - t0.tv_sec) * 1000L + (t.tv_nsec - t0.tv_nsec) / 1000000L >= timeout_ms) {
                        (void) kill(pid, SIGKILL);
                        (void) waitpid(pid, &status, 0);
                        return -ETIMEDOUT;
                }
                (void) poll(NULL, 0, 2);
        }
        return WIFEXITED(status) ? WEXITSTATUS(status) : -ECHILD;
}

static int svc_run(const struct ctx *k, int (*fn)(void *arg), void *arg, int timeout_ms)
{
        return run_as_id(&k->svc, fn, arg, timeout_ms);
}

/*
 * Runs plan items [first, first+n) as id.  out[i] gets each result; an item
 * the child never reached keeps got == 0 (no GOT_DONE).  Returns the
 * slots_run_as result: 0, or -errno (-ETIMEDOUT, -EPERM: the drop failed).
 */
static int run_probes(const struct slots_ident *id, const struct probe_plan *plan, size_t first, size_t n,
                      struct probe_res *out, int timeout_ms)
{
        struct probe_job j = { .plan = plan, .first = first, .n = n };
        size_t size = (n ? n : 1) * sizeof(struct probe_res);
        int r;

        j.res = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
        if (j.res == MAP_FAILED)
                return -errno;
        memset(j.res, 0, size);
        /* A slot's own kill(-1) loop cannot end a probe that keeps real and saved uid 0. */
        r = id->uid && geteuid() == 0 ? slots_run_as_unkillable(id, probe_child, &j, timeout_ms)
                                       : run_as_id(id, probe_child, &j, timeout_ms);
        memcpy(out, j.res, n * sizeof(*out));
        munmap(j.res, size);
        return r;
}

static int probe_timeout(const struct ctx *k)
{
        return k->o->probe_timeout_ms > 0 ? k->o->probe_timeout_ms : PROBE_TIMEOUT_MS;
}

static const char *probe_failure(int r)
{
        switch (r) {
        case -ETIMEDOUT:
                return "the probe did not finish in time (a hung network file system?)";
        case -EPERM:
                return "the probe could not drop to the account's groups and uid";
        case -ECHILD:
                return "the probe died from a signal";
        default:
                return strerror(-r);
        }
}

/* ---- config ---- */

static bool check_config(struct ctx *k)
{
        const char *path = k->o->config ? k->o->config : slots_config_default_path();
        struct strbuf d = { 0 }, f = { 0 };
        struct slots_error e;
        struct stat st;
        char buf[2 * SLOTS_ERR_TEXT + 64];
        int r;

        slots_error_clear(&e);
        r = slots_config_load(AT_FDCWD, path, &k->cfg, &e);
        if (r < 0) {
                strbuf_addf(&d, "%s", slots_error_format(&e, buf, sizeof(buf)));
                if (e.fix[0])
                        strbuf_addf(&f, "%s", e.fix);
                else if (r == -EBADMSG)
                        strbuf_addf(&f, "correct %s at the line and column named (see slots.conf(5))", path);
                else
                        strbuf_addf(&f, "make %s a readable regular file (see slots.conf(5)), or name another "
                                "with --config or SLOTS_CONFIG", path);
                add_row(k, SLOTS_CHECK_FAIL, "config", NULL, &d, &f);
                goto out;
        }
        /* The config decides what runs as whom: nobody but root may change it. */
        if (stat(path, &st) == 0 && (st.st_uid != 0 || (st.st_mode & 022))) {
                strbuf_addf(&d, "%s is %04o owned by uid %u: someone other than root can change it", path,
                        st.st_mode & 07777, (unsigned) st.st_uid);
                strbuf_addf(&f, "chown root:root %s && chmod go-w %s", path, path);
                add_row(k, SLOTS_CHECK_FAIL, "config", NULL, &d, &f);
                goto out;
        }
        strbuf_addf(&d, "%s: service %s, %u slots", path, k->cfg->service, k->cfg->slots);
        add_row(k, SLOTS_CHECK_PASS, "config", NULL, &d, NULL);
out:
        strbuf_free(&d);
        strbuf_free(&f);
        return k->cfg != NULL;
}

/* ---- the service account and group ---- */

static void resolve_service(struct ctx *k)
{
        struct slots_gr gr = { 0 };

        k->svc_found = slots_nss_user(k->cfg->service, &k->svc_pw);
        if (k->svc_found > 0 && slots_ident_of(k->cfg->service, &k->svc, &k->svc_groups) == 0)
                k->have_svc = true;
        if (k->cfg->service_group) {
                if (slots_nss_group(k->cfg->service_group, &gr) > 0) {
                        k->group = gr.gid;
                        k->have_group = true;
                }
                k->group_name = strdup(k->cfg->service_group);
        } else if (k->svc_found > 0) {
                k->group = k->svc_pw.gid;
                k->have_group = true;
                if (slots_nss_gid(k->group, &gr) > 0)
                        k->group_name = strdup(gr.name);
                else if (asprintf(&k->group_name, "%u", (unsigned) k->group) < 0)
                        k->group_name = NULL;
        } else {
                k->group_name = strdup(k->cfg->service);
        }
        slots_gr_clear(&gr);
        if (!k->group_name)
                k->err = -ENOMEM;
}

/* ---- reachability: the walk explains, the probe decides ---- */

/*
 * For a path the account must reach: the first probe refusal, the steps the
 * model denies (with why and the fix), and the verdict.  res holds one result
 * per walk step (a search per folder, then the end).
 */
struct reach {
        bool ok;                /* the probe's verdict */
        struct strbuf why, fix, note;
};

static void reach_explain(struct ctx *k, const struct walk *w, const struct probe_res *res, int probe_r,
                          const struct slots_ident *id, const char *who, unsigned want_end,
                          const char *end_shown, const struct slots_perm_model *end_after, struct reach *out)
{
        struct slots_perm_names nm = names_for(k);
        bool model_denies = false;
        size_t probe_fail = SIZE_MAX;
        char fix[FIX_MAX];

        memset(out, 0, sizeof(*out));
        for (size_t i = 0; i < w->n; i++) {
                const struct step *s = &w->steps[i];
                unsigned want = s->traverse ? SLOTS_PERM_X : want_end;
                const char *shown = !s->traverse && end_shown ? end_shown : s->path;
                struct slots_perm_verdict v;

                if (probe_r == 0 && probe_fail == SIZE_MAX &&
                    (!(res[i].got & GOT_DONE) || res[i].err))
                        probe_fail = i;
                if (!s->have_model)
                        continue;
                v = slots_perm_eval(&s->m, id, want);
                if (v.allowed)
                        continue;
                model_denies = true;
                strbuf_sep(&out->why, "; ");
                sb_why(&out->why, &s->m, &v, who, shown, want);
                /* The end as another fix leaves it: only what is still missing then. */
                if (slots_perm_fix_grant(!s->traverse && end_after ? end_after : &s->m, id, want, shown, &nm, fix,
                                         sizeof(fix)) > 0) {
                        strbuf_sep(&out->fix, " && ");
                        strbuf_addf(&out->fix, "%s", fix);
                }
        }
        if (probe_r < 0) {
                out->ok = false;
                strbuf_addf(&out->note, "%s", probe_failure(probe_r));
                return;
        }
        out->ok = probe_fail == SIZE_MAX;
        if (!out->ok) {
                const struct step *s = &w->steps[probe_fail];
                unsigned want = s->traverse ? SLOTS_PERM_X : want_end;

                strbuf_addf(&out->note, "as %s, %s %s fails: %s", who, s->traverse ? "search of" : "access to",
                        !s->traverse && end_shown ? end_shown : s->path, strerror(res[probe_fail].err));
                /* The model has no reason for this refusal: something beyond modes and ACLs made it. */
                if (s->have_model && slots_perm_eval(&s->m, id, want).allowed) {
                        strbuf_sep(&out->why, "; ");
                        strbuf_addf(&out->why, "the modes and ACLs of %s allow it, so an LSM (AppArmor, SELinux) or a "
                                "mount option (noexec) refuses it; the probe wins", s->path);
                        strbuf_sep(&out->fix, " && ");
                        strbuf_addf(&out->fix, "look at the LSM policy (aa-status, getenforce) and at the mount "
                                "options of %s (findmnt -T %s)", s->path, s->path);
                }
        } else if (model_denies) {
                strbuf_addf(&out->note, "the probe got through although the modes and ACLs say no (%s); the "
                        "probe wins", strbuf_str(&out->why));
        }
}

static void reach_free(struct reach *r)
{
        strbuf_free(&r->why);
        strbuf_free(&r->fix);
        strbuf_free(&r->note);
}

/* ---- table ---- */

static void check_table(struct ctx *k)
{
        const char *path = k->cfg->table, *base;
        enum slots_table_problem problem;
        struct strbuf d = { 0 }, f = { 0 };
        char mode[8];
        struct probe_plan plan = { 0 };
        struct probe_res *res = NULL;
        struct walk w = { 0 };
        struct slots_error e;
        struct stat st;
        char *text = NULL;
        size_t len;
        int dirfd, fd = -1, r;

        k->table = NULL;
        dirfd = slots_open_parent_in(AT_FDCWD, path, &base);
        if (dirfd < 0) {
                strbuf_addf(&d, "%s: cannot open its folder: %s", path, strerror(-dirfd));
                strbuf_addf(&f, "slots-provision creates it");
                goto fail;
        }
        if (fstatat(dirfd, base, &st, AT_SYMLINK_NOFOLLOW) < 0) {
                strbuf_addf(&d, "%s: %s", path, strerror(errno));
                if (errno == ENOENT)
                        strbuf_addf(&f, "slots-provision creates it, empty, root:%s 0640", k->group_name);
                else
                        strbuf_addf(&f, "make %s readable by root", path);
                goto fail;
        }
        if (S_ISLNK(st.st_mode)) {
                strbuf_addf(&d, "%s is a symlink; the table is never read through one", path);
                strbuf_addf(&f, "replace the link with the file it points to (cp --remove-destination \"$(readlink -f "
                        "%s)\" %s), then chown root:%s %s && chmod 0640 %s", path, path, k->group_name, path, path);
                goto fail;
        }
        if (!S_ISREG(st.st_mode)) {
                strbuf_addf(&d, "%s is not a regular file", path);
                strbuf_addf(&f, "move it away; slots-provision creates an empty table");
                goto fail;
        }
        snprintf(mode, sizeof(mode), "%04o", st.st_mode & 07777);
        if (st.st_uid != 0) {
                char u[64];
                strbuf_addf(&d, "owner is %s, not root", user_name_cb(NULL, st.st_uid, u, sizeof(u)));
                strbuf_addf(&f, "chown root:%s %s", k->group_name, path);
        } else if (!k->have_group || st.st_gid != k->group) {
                char g[64];
                strbuf_sep(&d, "; ");
                strbuf_addf(&d, "group is %s, not the service group %s", group_name_cb(NULL, st.st_gid, g, sizeof(g)),
                        k->group_name);
                if (k->have_group)
                        strbuf_addf(&f, "chgrp %s %s", k->group_name, path);
                else
                        strbuf_addf(&f, "create the group %s (slots-provision), then chgrp %s %s", k->group_name,
                                k->group_name, path);
        }
        if ((st.st_mode & 07777) != 0640) {
                strbuf_sep(&d, "; ");
                strbuf_addf(&d, "mode is %s, not 0640", mode);
                strbuf_sep(&f, " && ");
                strbuf_addf(&f, "chmod 0640 %s", path);
        }

        fd = slots_open_regular(dirfd, base, &st);
        r = fd < 0 ? fd : slots_read_all(fd, TABLE_MAX, &text, &len);
        if (r < 0) {
                strbuf_sep(&d, "; ");
                strbuf_addf(&d, "cannot read it as root: %s", strerror(-r));
                goto fail;
        }
        slots_error_clear(&e);
        problem = SLOTS_TABLE_SYNTAX;
        r = memchr(text, '\0', len) ? slots_error_invalid(&e, -EBADMSG, path, "contains a NUL byte")
                                    : slots_table_parse_problem(text, len, path, k->cfg->slots, &k->table,
                                                                &problem, &e);
        if (r < 0) {
                /* A parser message may quote a token of the file, which may be a user id: show only where. */
                strbuf_sep(&d, "; ");
                strbuf_addf(&d, "does not parse at %s:%u:%u (%s)", path, e.line, e.column,
                        problem == SLOTS_TABLE_OUT_OF_POOL ? "a slot outside the pool" :
                        problem == SLOTS_TABLE_USER ? "an invalid user id" :
                        problem == SLOTS_TABLE_DUPLICATE ? "a user in two slots" :
                        problem == SLOTS_TABLE_VERSION ? "an unsupported version" : "invalid JSON or entry");
                strbuf_sep(&f, " && ");
                strbuf_addf(&f, "correct %s at line %u (see slots.json(5)), or restore it from a backup", path,
                        e.line);
                k->table = NULL;
        }

        /* Readable by the service account: as that account, from / down to the file. */
        if (!k->have_svc) {
                strbuf_sep(&d, "; ");
                strbuf_addf(&d, "the service account %s does not exist", k->cfg->service);
                strbuf_sep(&f, " && ");
                strbuf_addf(&f, "create the service account %s, or fix \"service\" in %s", k->cfg->service,
                        k->cfg->path);
        } else if (walk_path(path, &w) < 0) {
                k->err = -ENOMEM;
        } else if (!w.err) {
                struct slots_perm_model after;
                struct reach rr;

                for (size_t i = 0; i < w.n; i++)
                        if (plan_add(&plan, w.steps[i].path, w.steps[i].traverse ? PROBE_SEARCH : PROBE_READ) < 0)
                                k->err = -ENOMEM;
                res = calloc(w.n, sizeof(*res));
                if (!res || k->err) {
                        k->err = -ENOMEM;
                        goto fail;
                }
                r = run_probes(&k->svc, &plan, 0, plan.n, res, probe_timeout(k));
                /* The file as the owner, group and mode fixes above leave it: root:<group> 0640. */
                after = w.steps[w.n - 1].m;
                after.owner = 0;
                if (k->have_group)
                        after.group = k->group;
                after.user_obj = SLOTS_PERM_R | SLOTS_PERM_W;
                after.other = 0;
                if (after.extended)
                        after.mask = SLOTS_PERM_R;      /* chmod sets the mask of a file with an ACL */
                else
                        after.group_obj = SLOTS_PERM_R;
                reach_explain(k, &w, res, r, &k->svc, k->cfg->service, SLOTS_PERM_R, NULL, &after, &rr);
                if (!rr.ok) {
                        strbuf_sep(&d, "; ");
                        strbuf_addf(&d, "the service account %s cannot read it: %s", k->cfg->service, strbuf_str(&rr.note));
                        if (rr.why.len)
                                strbuf_addf(&d, "; why: %s", strbuf_str(&rr.why));
                        if (rr.fix.len || !f.len) {
                                strbuf_sep(&f, " && ");
                                strbuf_addf(&f, "%s", rr.fix.len ? strbuf_str(&rr.fix) : "see the detail");
                        }
                }
                reach_free(&rr);
        }
        if (d.len)
                goto fail;
        {
                unsigned assigned, pending;
                slots_table_count(k->table, &assigned, &pending);
                strbuf_addf(&d, "%s: root:%s 0640, %u assigned, %u pending, readable by %s", path, k->group_name,
                        assigned, pending, k->cfg->service);
        }
        add_row(k, SLOTS_CHECK_PASS, "table", NULL, &d, NULL);
        k->table_ok = true;
        goto out;
fail:
        if (d.len && strncmp(strbuf_str(&d), path, strlen(path)) != 0) {
                struct strbuf t = { 0 };
                strbuf_addf(&t, "%s: %s", path, strbuf_str(&d));
                strbuf_free(&d);
                d = t;
        }
        add_row(k, SLOTS_CHECK_FAIL, "table", NULL, &d, &f);
out:
        walk_free(&w);
        free(res);
        free(plan.paths);
        free(plan.ops);
        free(text);
        slots_close(fd);
        slots_close(dirfd);
        strbuf_free(&d);
        strbuf_free(&f);
}

/* ---- pending-cleanup ---- */

static void check_pending(struct ctx *k)
{
        unsigned n_pending = 0;

        if (!k->table) {
                add_rowf(k, SLOTS_CHECK_SKIP, "pending-cleanup", NULL, NULL, "the table could not be read");
                return;
        }
        for (unsigned n = 1; n <= k->cfg->slots; n++) {
                const char *released;
                char name[SLOTS_NAME_MAX], fix[96];

                if (slots_table_get(k->table, n, NULL, NULL, &released) != SLOTS_SLOT_PENDING)
                        continue;
                n_pending++;
                slots_slot_name(n, name);
                snprintf(fix, sizeof(fix), "slots-admin release --slot %s", name);
                add_rowf(k, SLOTS_CHECK_FAIL, "pending-cleanup", name, fix,
                         "the release of %s did not finish (\"cleanup\": \"pending\" since %s); the slot is "
                         "out of the pool", name, released ? released : "an unknown time");
        }
        if (n_pending == 0)
                add_rowf(k, SLOTS_CHECK_PASS, "pending-cleanup", NULL, NULL,
                         "no slot is left \"cleanup\": \"pending\"");
}

/* ---- the releases in use and the slotctl config ---- */

/*
 * The release in use: the one <app_root>/current points at when it is a
 * symlink to a folder of <app_root>/releases; else every folder there (any of
 * them may be the one a deploy switches to next).
 */
static void find_releases(struct ctx *k)
{
        const struct slots_config *c = k->cfg;
        char target[4096], *rel = NULL, *cur = NULL;
        struct dirent **list = NULL;
        ssize_t n;
        int count = 0;

        if (asprintf(&rel, "%s/releases", c->app_root) < 0 || asprintf(&cur, "%s/current", c->app_root) < 0) {
                k->err = -ENOMEM;
                goto out;
        }
        n = readlink(cur, target, sizeof(target) - 1);
        if (n > 0) {
                const char *name;
                size_t rl = strlen(rel);

                target[n] = '\0';
                while (n > 1 && target[n - 1] == '/')
                        target[--n] = '\0';
                if (target[0] == '/' && strncmp(target, rel, rl) == 0 && target[rl] == '/')
                        name = target + rl + 1;
                else if (strncmp(target, "releases/", 9) == 0)
                        name = target + 9;
                else
                        name = NULL;
                if (name && *name && !strchr(name, '/') && strcmp(name, ".") && strcmp(name, "..")) {
                        k->launchers = calloc(1, sizeof(*k->launchers));
                        if (!k->launchers || !(k->launchers[0].release = strdup(name)) ||
                            asprintf(&k->launchers[0].path, "%s/%s/bin/%s", rel, name, c->launcher) < 0 ||
                            asprintf(&k->release_note, "release %s, which %s points at", name, cur) < 0) {
                                k->err = -ENOMEM;
                                goto out;
                        }
                        k->n_launchers = 1;
                        goto out;
                }
                if (asprintf(&k->release_note, "every release: %s points outside %s", cur, rel) < 0)
                        k->release_note = NULL;
        }
        count = scandir(rel, &list, NULL, alphasort);
        if (count < 0) {
                k->releases_missing = true;
                goto out;
        }
        k->launchers = calloc((size_t) count + 1, sizeof(*k->launchers));
        if (!k->launchers) {
                k->err = -ENOMEM;
                goto out;
        }
        for (int i = 0; i < count; i++) {
                struct launcher *l = &k->launchers[k->n_launchers];
                struct stat st;

                if (list[i]->d_name[0] == '.')
                        continue;
                {
                        char *dir = path_join(rel, list[i]->d_name);
                        bool is_dir = dir && lstat(dir, &st) == 0 && S_ISDIR(st.st_mode);
                        free(dir);
                        if (!is_dir)
                                continue;
                }
                if (!(l->release = strdup(list[i]->d_name)) ||
                    asprintf(&l->path, "%s/%s/bin/%s", rel, list[i]->d_name, c->launcher) < 0) {
                        k->err = -ENOMEM;
                        break;
                }
                k->n_launchers++;
        }
        if (!k->release_note &&
            asprintf(&k->release_note, "every release: %s is not a symlink into %s", cur, rel) < 0)
                k->release_note = NULL;
out:
        for (int i = 0; list && i < count; i++)
                free(list[i]);
        free(list);
        free(rel);
        free(cur);
}

/* true when path is base or below it */
static bool path_under(const char *path, const char *base)
{
        size_t n = strlen(base);

        while (n > 1 && base[n - 1] == '/')
                n--;
        if (n == 1 && base[0] == '/')
                return true;
        return strncmp(path, base, n) == 0 && (path[n] == '\0' || path[n] == '/');
}

/* A slotctl list entry covers docs_root: the same folder or one above it, or a glob that matches it. */
static bool cwd_covers(const char *entry, const char *docs)
{
        return path_under(docs, entry) || fnmatch(entry, docs, FNM_PATHNAME) == 0;
}

/*
 * An entry names the launcher: literally or as a glob, by the configured path or
 * with its symlinks resolved (app_root behind a link), or as another path to the
 * same file (<app_root>/current/bin/<launcher>).
 */
static bool exec_names(const char *entry, const char *launcher)
{
        char *real, *other;
        bool same;

        if (strcmp(entry, launcher) == 0 || fnmatch(entry, launcher, FNM_PATHNAME) == 0)
                return true;
        real = realpath(launcher, NULL);
        if (!real)
                return false;
        same = strcmp(entry, real) == 0 || fnmatch(entry, real, FNM_PATHNAME) == 0;
        if (!same && entry[0] == '/' && !strpbrk(entry, "*?[")) {
                other = realpath(entry, NULL);
                same = other && strcmp(other, real) == 0;
                free(other);
        }
        free(real);
        return same;
}

/* A string or an array of strings: calls fn for each until it returns true. */
static bool json_any(json_t *v, bool (*fn)(const char *entry, const char *arg), const char *arg)
{
        size_t i;
        json_t *item;

        if (json_is_string(v))
                return fn(json_string_value(v), arg);
        json_array_foreach(v, i, item)
                if (json_is_string(item) && fn(json_string_value(item), arg))
                        return true;
        return false;
}

static void check_slotctl(struct ctx *k)
{
        const struct slots_config *c = k->cfg;
        const char *path = c->slotctl_config, *base;
        struct strbuf d = { 0 }, f = { 0 };
        struct stat st;
        json_error_t jerr;
        json_t *root = NULL, *v;
        char *text = NULL, pattern[4096];
        size_t len;
        int dirfd, fd = -1;

        if (!c->docs_root && !(c->app_root && c->launcher)) {
                add_rowf(k, SLOTS_CHECK_SKIP, "slotctl-config", NULL, NULL,
                         "%s sets neither docs_root nor app_root and launcher", c->path);
                return;
        }
        dirfd = slots_open_parent_in(AT_FDCWD, path, &base);
        fd = dirfd < 0 ? dirfd : slots_open_regular(dirfd, base, &st);
        if (fd < 0) {
                strbuf_addf(&d, "%s: %s", path,
                        fd == -ELOOP ? "is a symlink" : fd == -EINVAL ? "is not a regular file" : strerror(-fd));
                strbuf_addf(&f, "slots-provision writes it (root:root 0644)");
                goto fail;
        }
        if (st.st_uid != 0 || (st.st_mode & 022) || !(st.st_mode & S_IROTH)) {
                strbuf_addf(&d, "%s is %04o owned by uid %u, not root:root 0644", path, st.st_mode & 07777,
                        (unsigned) st.st_uid);
                strbuf_addf(&f, "chown root:root %s && chmod 0644 %s", path, path);
        }
        if (slots_read_all(fd, SLOTCTL_MAX, &text, &len) < 0 ||
            !(root = json_loadb(text, len, JSON_REJECT_DUPLICATES, &jerr)) || !json_is_object(root)) {
                strbuf_sep(&d, "; ");
                strbuf_addf(&d, "%s does not parse: %s", path, root ? "not a JSON object" : jerr.text);
                strbuf_sep(&f, " && ");
                strbuf_addf(&f, "slots-provision rewrites it");
                goto fail;
        }
        if (c->docs_root) {
                v = json_object_get(root, "docs_root");
                if (!json_is_string(v) || strcmp(json_string_value(v), c->docs_root) != 0) {
                        strbuf_sep(&d, "; ");
                        strbuf_addf(&d, "its docs_root is %s%s%s, not %s as in %s", json_is_string(v) ? "\"" : "",
                                json_is_string(v) ? json_string_value(v) : "missing", json_is_string(v) ? "\"" : "",
                                c->docs_root, c->path);
                        strbuf_sep(&f, " && ");
                        strbuf_addf(&f, "slots-provision (it rewrites %s), or set \"docs_root\": \"%s\" there", path,
                                c->docs_root);
                }
                v = json_object_get(root, "allowed_cwd");
                if (!json_any(v, cwd_covers, c->docs_root)) {
                        strbuf_sep(&d, "; ");
                        strbuf_addf(&d, "allowed_cwd does not cover the docs root %s", c->docs_root);
                        strbuf_sep(&f, " && ");
                        strbuf_addf(&f, "slots-provision (it rewrites %s), or add \"%s\" to \"allowed_cwd\" there", path,
                                c->docs_root);
                }
        }
        if (c->app_root && c->launcher) {
                v = json_object_get(root, "allowed_exec");
                snprintf(pattern, sizeof(pattern), "%s/releases/*/bin/%s", c->app_root, c->launcher);
                for (size_t i = 0; i < k->n_launchers; i++)
                        if (!json_any(v, exec_names, k->launchers[i].path)) {
                                strbuf_sep(&d, "; ");
                                strbuf_addf(&d, "allowed_exec does not name the launcher %s", k->launchers[i].path);
                                strbuf_sep(&f, " && ");
                                strbuf_addf(&f, "slots-provision (it rewrites %s), or add \"%s\" to \"allowed_exec\" "
                                        "there", path, pattern);
                                break;
                        }
                if (k->n_launchers == 0 && !json_any(v, exec_names, pattern)) {
                        strbuf_sep(&d, "; ");
                        strbuf_addf(&d, "allowed_exec does not name %s", pattern);
                        strbuf_sep(&f, " && ");
                        strbuf_addf(&f, "slots-provision (it rewrites %s), or add \"%s\" to \"allowed_exec\" there",
                                path, pattern);
                }
        }
        if (d.len)
                goto fail;
        strbuf_addf(&d, "%s: docs_root and allowed_cwd match %s", path, c->path);
        if (c->app_root && c->launcher)
                strbuf_addf(&d, "; allowed_exec names the launcher in use (%s)",
                        k->release_note ? k->release_note : "");
        add_row(k, SLOTS_CHECK_PASS, "slotctl-config", NULL, &d, NULL);
        goto out;
fail:
        add_row(k, SLOTS_CHECK_FAIL, "slotctl-config", NULL, &d, &f);
out:
        json_decref(root);
        free(text);
        slots_close(fd != dirfd ? fd : -1);
        slots_close(dirfd);
        strbuf_free(&d);
        strbuf_free(&f);
}

/* ---- the slots to look at: every assigned slot and the test slot ---- */

static int add_slot(struct ctx *k, unsigned n, const char *user)
{
        struct slotinfo *s = &k->slots[k->n_slots++];

        s->n = n;
        slots_slot_name(n, s->name);
        s->user = user;
        s->found = slots_nss_user(s->name, &s->pw);
        if (s->found > 0 && slots_ident_of(s->name, &s->id, &s->groups) == 0)
                s->have_id = true;
        if (user && k->cfg->docs_root) {
                char *rel = slots_config_user_tree(k->cfg, user), *shown = slots_config_user_tree(k->cfg, "<user>");

                if (!rel || !shown || asprintf(&s->tree, "%s/%s", k->cfg->docs_root, rel) < 0 ||
                    asprintf(&s->tree_shown, "<docs>/%s", shown) < 0) {
                        free(rel);
                        free(shown);
                        return -ENOMEM;
                }
                free(rel);
                free(shown);
                if (walk_path(s->tree, &s->tree_walk) < 0)
                        return -ENOMEM;
        }
        return 0;
}

static int collect_slots(struct ctx *k)
{
        unsigned pool = k->cfg->slots;
        int r;

        k->slots = calloc(pool + 1, sizeof(*k->slots));
        if (!k->slots)
                return -ENOMEM;
        k->test = k->table ? slots_table_test_slot(k->table, pool) : pool;
        for (unsigned n = 1; n <= pool; n++) {
                const char *user = NULL;

                if (k->table && slots_table_get(k->table, n, &user, NULL, NULL) == SLOTS_SLOT_ASSIGNED) {
                        r = add_slot(k, n, user);
                        if (r < 0)
                                return r;
                } else if (n == k->test) {
                        r = add_slot(k, n, NULL);
                        if (r < 0)
                                return r;
                }
        }
        return 0;
}

/* One plan for all slots: the folders to each launcher, the private paths, the users' trees. */
static int build_plan(struct ctx *k)
{
        const struct slots_config *c = k->cfg;

        for (size_t i = 0; i < k->n_launchers; i++) {
                struct launcher *l = &k->launchers[i];

                if (walk_path(l->path, &l->walk) < 0)
                        return -ENOMEM;
                l->first = k->plan.n;
                if (l->walk.err)
                        continue;
                for (size_t j = 0; j < l->walk.n; j++) {
                        const struct step *s = &l->walk.steps[j];
                        /* The launcher itself by its configured path: exec follows the same links. */
                        if (plan_add(&k->plan, s->traverse ? s->path : l->path,
                                     s->traverse ? PROBE_SEARCH : PROBE_EXEC) < 0)
                                return -ENOMEM;
                }
        }
        k->private_first = k->plan.n;
        k->private_walks = calloc(c->n_private_paths + 1, sizeof(*k->private_walks));
        if (!k->private_walks)
                return -ENOMEM;
        for (size_t i = 0; i < c->n_private_paths; i++) {
                if (walk_path(c->private_paths[i], &k->private_walks[i]) < 0 ||
                    plan_add(&k->plan, c->private_paths[i], PROBE_PRIVATE) < 0)
                        return -ENOMEM;
        }
        k->tree_first = k->plan.n;
        for (size_t i = 0; i < k->n_slots; i++)
                if (k->slots[i].tree && plan_add(&k->plan, k->slots[i].tree, PROBE_LIST) < 0)
                        return -ENOMEM;
        return 0;
}

static void run_slot_probes(struct ctx *k)
{
        for (size_t i = 0; i < k->n_slots; i++) {
                struct slotinfo *s = &k->slots[i];

                s->res = calloc(k->plan.n + 1, sizeof(*s->res));
                if (!s->res) {
                        k->err = -ENOMEM;
                        return;
                }
                if (!s->have_id) {
                        s->probe_r = -ENOENT;
                        continue;
                }
                s->probe_r = run_probes(&s->id, &k->plan, 0, k->plan.n, s->res, probe_timeout(k));
        }
}

/* ---- account and password-locked ---- */

static void uid_range(struct ctx *k, uid_t *min, uid_t *max, bool *ok)
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

static void check_account(struct ctx *k, const struct slotinfo *s)
{
        const struct slots_config *c = k->cfg;
        struct strbuf d = { 0 }, f = { 0 };
        struct slots_gr gr = { 0 }, shared = { 0 };
        char *home = NULL, *shared_name = NULL;
        uid_t min = 0, max = 0;
        struct stat st;
        bool range_ok;
        int fd = -1, r;

        if (s->found == 0) {
                add_rowf(k, SLOTS_CHECK_FAIL, "account", s->name, "slots-provision creates it",
                         "no account %s (looked up through NSS)", s->name);
                return;
        }
        if (s->found < 0) {
                add_rowf(k, SLOTS_CHECK_FAIL, "account", s->name,
                         "repair the name service (nsswitch.conf, sssd, LDAP) so that getent passwd works",
                         "the lookup of %s failed: %s", s->name, strerror(-s->found));
                return;
        }
        r = slots_nss_gid(s->pw.gid, &gr);
        if (r <= 0 || strcmp(gr.name, s->name) != 0) {
                strbuf_addf(&d, "primary group is %s, not %s", r > 0 ? gr.name : "a gid without a group", s->name);
                strbuf_addf(&f, "usermod -g %s %s", s->name, s->name);
        }
        if (asprintf(&shared_name, "%sshared", c->prefix) < 0) {
                k->err = -ENOMEM;
                goto out;
        }
        r = slots_nss_group(shared_name, &shared);
        if (r <= 0) {
                strbuf_sep(&d, "; ");
                strbuf_addf(&d, "the group %s does not exist", shared_name);
                strbuf_sep(&f, " && ");
                strbuf_addf(&f, "slots-provision creates it");
        } else if (!s->have_id || !in_group(&s->id, shared.gid)) {
                strbuf_sep(&d, "; ");
                strbuf_addf(&d, "not a member of %s", shared_name);
                strbuf_sep(&f, " && ");
                strbuf_addf(&f, "usermod -a -G %s %s", shared_name, s->name);
        }
        uid_range(k, &min, &max, &range_ok);
        if (c->uid_base) {
                /* uid_base fixes the id: the same slot has the same uid on every host. */
                range_ok = true;
                if (s->pw.uid != c->uid_base + s->n) {
                        strbuf_sep(&d, "; ");
                        strbuf_addf(&d, "uid %u, planned %u (uid_base + %u)", (unsigned) s->pw.uid,
                                (unsigned) (c->uid_base + s->n), s->n);
                        strbuf_sep(&f, " && ");
                        strbuf_addf(&f, "run slots-provision, which prints the fix");
                }
        } else if (range_ok && (s->pw.uid < min || s->pw.uid > max)) {
                strbuf_sep(&d, "; ");
                strbuf_addf(&d, "uid %u is outside %u-%u", (unsigned) s->pw.uid, (unsigned) min, (unsigned) max);
                strbuf_sep(&f, " && ");
                strbuf_addf(&f, "widen uid_min/uid_max in %s, or recreate %s inside the range", c->path, s->name);
        }
        if (asprintf(&home, "%s/home/%s", c->slots_root, s->name) < 0) {
                k->err = -ENOMEM;
                goto out;
        }
        if (strcmp(s->pw.dir, home) != 0) {
                strbuf_sep(&d, "; ");
                strbuf_addf(&d, "home is %s, not %s", s->pw.dir, home);
                strbuf_sep(&f, " && ");
                strbuf_addf(&f, "usermod -d %s %s", home, s->name);
        }
        fd = open(s->pw.dir, O_PATH | O_NOFOLLOW | O_CLOEXEC);
        if (fd < 0 || fstat(fd, &st) < 0) {
                strbuf_sep(&d, "; ");
                strbuf_addf(&d, "home %s: %s", s->pw.dir, strerror(errno));
                strbuf_sep(&f, " && ");
                strbuf_addf(&f, "install -d -m 0700 -o %s -g %s %s", s->name, s->name, s->pw.dir);
        } else if (!S_ISDIR(st.st_mode)) {
                strbuf_sep(&d, "; ");
                strbuf_addf(&d, "home %s is %s, not a folder", s->pw.dir, S_ISLNK(st.st_mode) ? "a symlink" : "a file");
                strbuf_sep(&f, " && ");
                strbuf_addf(&f, "move %s away; slots-provision creates the folder", s->pw.dir);
        } else {
                if (st.st_uid != s->pw.uid) {
                        char u[64];
                        strbuf_sep(&d, "; ");
                        strbuf_addf(&d, "home %s is owned by %s", s->pw.dir, user_name_cb(NULL, st.st_uid, u, sizeof(u)));
                        strbuf_sep(&f, " && ");
                        strbuf_addf(&f, "chown %s:%s %s", s->name, s->name, s->pw.dir);
                }
                if ((st.st_mode & 07777) != 0700) {
                        strbuf_sep(&d, "; ");
                        strbuf_addf(&d, "home %s is %04o, not 0700", s->pw.dir, st.st_mode & 07777);
                        strbuf_sep(&f, " && ");
                        strbuf_addf(&f, "chmod 0700 %s", s->pw.dir);
                }
        }
        if (d.len) {
                add_row(k, SLOTS_CHECK_FAIL, "account", s->name, &d, &f);
        } else {
                strbuf_addf(&d, "uid %u, group %s, in %s, home %s 0700", (unsigned) s->pw.uid, s->name, shared_name,
                        s->pw.dir);
                if (!range_ok)
                        strbuf_addf(&d, " (uid range unknown: login.defs unreadable)");
                add_row(k, SLOTS_CHECK_PASS, "account", s->name, &d, NULL);
        }
out:
        slots_close(fd);
        slots_gr_clear(&gr);
        slots_gr_clear(&shared);
        free(shared_name);
        free(home);
        strbuf_free(&d);
        strbuf_free(&f);
}

/*
 * The slot's home, state and run folders: exactly slotNN:slotNN 0700, and for a
 * free slot also empty, without ACL or xattr (what release leaves, assign checks).
 */
static void check_folders(struct ctx *k, const struct slotinfo *s)
{
        struct slots_gr gr = { 0 };
        struct slots_error e;
        gid_t gid;
        int r;

        if (s->found <= 0)
                return;         /* the account row says why */
        if (geteuid() != 0) {
                add_rowf(k, SLOTS_CHECK_SKIP, "slot-folders", s->name, NULL,
                         "needs root: home, state and run are the slot's own, 0700");
                return;
        }
        r = slots_nss_group(s->name, &gr);
        gid = r > 0 ? gr.gid : s->pw.gid;
        slots_gr_clear(&gr);
        slots_error_clear(&e);
        r = slots_check_folders(k->rootfd, k->cfg, s->name, s->pw.uid, gid, s->user != NULL, &e);
        if (r < 0)
                add_rowf(k, SLOTS_CHECK_FAIL, "slot-folders", s->name, e.fix[0] ? e.fix : NULL, "%s: %s", e.object,
                         e.reason);
        else
                add_rowf(k, SLOTS_CHECK_PASS, "slot-folders", s->name, NULL, "home, state and run %s:%s 0700%s",
                         s->name, s->name, s->user ? "" : ", empty, no ACL or xattr");
}

/* The hash field of name: the shadow entry, else the passwd field.  *out is malloc'ed. */
static int password_field(const char *name, char **out, bool *from_shadow)
{
        size_t size = 1024;

        for (;;) {
                struct spwd sp, *sres = NULL;
                struct passwd pw, *pres = NULL;
                char *buf = malloc(size);
                int r;

                if (!buf)
                        return -ENOMEM;
                r = getspnam_r(name, &sp, buf, size, &sres);
                if (r == ERANGE && size < (1u << 20)) {
                        free(buf);
                        size *= 2;
                        continue;
                }
                if (sres) {
                        *out = strdup(sres->sp_pwdp ? sres->sp_pwdp : "");
                        *from_shadow = true;
                        explicit_bzero(buf, size);
                        free(buf);
                        return *out ? 0 : -ENOMEM;
                }
                if (r != 0 && r != ENOENT) {
                        free(buf);
                        return -r;
                }
                r = getpwnam_r(name, &pw, buf, size, &pres);
                if (r == ERANGE && size < (1u << 20)) {
                        free(buf);
                        size *= 2;
                        continue;
                }
                if (!pres) {
                        free(buf);
                        return r ? -r : -ENOENT;
                }
                *out = strdup(pres->pw_passwd ? pres->pw_passwd : "");
                *from_shadow = false;
                explicit_bzero(buf, size);
                free(buf);
                return *out ? 0 : -ENOMEM;
        }
}


/*
 * crypt_checksalt() from libcrypt, loaded on first use: this check is its only
 * user, so assign, release and status do not load the library at every start.
 * Returns its verdict, or -1 when the library or the function is missing.
 */
static int checksalt(const char *hash)
{
        static int (*fn)(const char *);
        static bool tried;

        if (!tried) {
                void *h = dlopen("libcrypt.so.1", RTLD_NOW | RTLD_LOCAL);

                tried = true;
                if (h)
                        *(void **) &fn = dlsym(h, "crypt_checksalt");
        }
        return fn ? fn(hash) : -1;
}
static void check_password(struct ctx *k, const struct slotinfo *s)
{
        char fix[96], method[16] = "";
        char *hash = NULL;
        bool from_shadow = false;
        int r;

        if (s->found <= 0) {
                add_rowf(k, SLOTS_CHECK_SKIP, "password-locked", s->name, NULL, "no account %s", s->name);
                return;
        }
        r = password_field(s->name, &hash, &from_shadow);
        snprintf(fix, sizeof(fix), "usermod -L %s", s->name);
        if (r < 0) {
                add_rowf(k, SLOTS_CHECK_FAIL, "password-locked", s->name,
                         "run the check as root; repair /etc/shadow or the name service",
                         "cannot read the shadow entry of %s: %s", s->name, strerror(-r));
                return;
        }
        if (hash[0] == '\0') {
                add_rowf(k, SLOTS_CHECK_FAIL, "password-locked", s->name, fix,
                         "%s has an empty password field: it needs no password at all", s->name);
        } else if (hash[0] == '!' || hash[0] == '*') {
                add_rowf(k, SLOTS_CHECK_PASS, "password-locked", s->name, NULL, "locked (%s entry starts with %c)",
                         from_shadow ? "shadow" : "passwd", hash[0]);
        } else {
                int cs = checksalt(hash);

                if (cs < 0) {
                        add_rowf(k, SLOTS_CHECK_FAIL, "password-locked", s->name,
                                 "install libcrypt1 (libxcrypt), or lock the account: usermod -L",
                                 "cannot load libcrypt.so.1 to tell whether the %s entry of %s holds a usable hash",
                                 from_shadow ? "shadow" : "passwd", s->name);
                } else if (cs == CRYPT_SALT_INVALID || cs == CRYPT_SALT_METHOD_DISABLED) {
                        add_rowf(k, SLOTS_CHECK_PASS, "password-locked", s->name, NULL,
                                 "no usable hash in the %s entry", from_shadow ? "shadow" : "passwd");
                } else {
                        /* Name the method, never print the hash. */
                        if (hash[0] == '$') {
                                size_t n = strcspn(hash + 1, "$");
                                snprintf(method, sizeof(method), "$%.*s$", n < 8 ? (int) n : 8, hash + 1);
                        } else {
                                snprintf(method, sizeof(method), "DES");
                        }
                        add_rowf(k, SLOTS_CHECK_FAIL, "password-locked", s->name, fix,
                                 "%s has a usable password hash (%s) in its %s entry: it could log in with a password",
                                 s->name, method, from_shadow ? "shadow" : "passwd");
                }
        }
        explicit_bzero(hash, strlen(hash));
        free(hash);
}

/* ---- runner-reachable ---- */

static void check_runner(struct ctx *k, const struct slotinfo *s)
{
        const struct slots_config *c = k->cfg;
        struct strbuf d = { 0 }, f = { 0 }, pass = { 0 };
        bool failed = false;

        if (!s->have_id) {
                add_rowf(k, SLOTS_CHECK_SKIP, "runner-reachable", s->name, NULL, "no account %s", s->name);
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
                reach_explain(k, &l->walk, &s->res[l->first], s->probe_r, &s->id, s->name,
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
                reach_free(&rr);
        }
        if (failed) {
                add_row(k, SLOTS_CHECK_FAIL, "runner-reachable", s->name, &d, &f);
        } else {
                struct strbuf t = { 0 };
                strbuf_addf(&t, "reaches %s", strbuf_str(&pass));
                add_row(k, SLOTS_CHECK_PASS, "runner-reachable", s->name, &t, NULL);
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

static void check_private(struct ctx *k, const struct slotinfo *s)
{
        const struct slots_config *c = k->cfg;
        struct slots_perm_names nm = names_for(k);
        struct strbuf d = { 0 }, f = { 0 }, notes = { 0 };
        unsigned refused = 0, absent = 0;
        char fix[FIX_MAX];

        if (c->n_private_paths == 0) {
                add_rowf(k, SLOTS_CHECK_SKIP, "private-unreachable", s->name, NULL, "%s lists no private_paths",
                         c->path);
                return;
        }
        if (!s->have_id) {
                add_rowf(k, SLOTS_CHECK_SKIP, "private-unreachable", s->name, NULL, "no account %s", s->name);
                return;
        }
        if (s->probe_r < 0) {
                add_rowf(k, SLOTS_CHECK_FAIL, "private-unreachable", s->name, "run the check again; see the detail",
                         "as %s: %s", s->name, probe_failure(s->probe_r));
                return;
        }
        for (size_t i = 0; i < c->n_private_paths; i++) {
                const char *p = c->private_paths[i];
                const struct probe_res *res = &s->res[k->private_first + i];
                const struct step *end = walk_end(&k->private_walks[i]);
                struct slots_perm_verdict v;

                if (k->private_walks[i].err == ENOENT) {
                        absent++;
                        continue;
                }
                if (!(res->got & GOT_DONE) || !(res->got & ~GOT_DONE)) {
                        refused++;
                        /* Refused only because a folder above keeps the slot out: fragile, say so. */
                        if (end && end->have_model && perm_any(&end->m, &s->id, &v)) {
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
                if (end && end->have_model && perm_any(&end->m, &s->id, &v)) {
                        strbuf_addf(&d, ": ");
                        sb_why(&d, &end->m, &v, s->name, p, SLOTS_PERM_R);
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
                add_row(k, SLOTS_CHECK_FAIL, "private-unreachable", s->name, &d, &f);
        } else {
                strbuf_addf(&d, "%u private path%s refuse open, list, write and search", refused, refused == 1 ? "" : "s");
                if (absent)
                        strbuf_addf(&d, "; %u do%s not exist", absent, absent == 1 ? "es" : "");
                if (notes.len)
                        strbuf_addf(&d, "; %s", strbuf_str(&notes));
                add_row(k, SLOTS_CHECK_PASS, "private-unreachable", s->name, &d, NULL);
        }
        strbuf_free(&d);
        strbuf_free(&f);
        strbuf_free(&notes);
}

/* ---- user-tree ---- */

static void check_tree(struct ctx *k, const struct slotinfo *s)
{
        struct slots_perm_names nm = names_for(k);
        struct strbuf d = { 0 }, f = { 0 };
        const struct step *end;
        unsigned others = 0;
        size_t item = k->tree_first;
        char fix[FIX_MAX];

        if (!k->cfg->docs_root) {
                add_rowf(k, SLOTS_CHECK_SKIP, "user-tree", s->name, NULL, "%s sets no docs_root", k->cfg->path);
                return;
        }
        if (!s->have_id) {
                add_rowf(k, SLOTS_CHECK_SKIP, "user-tree", s->name, NULL, "no account %s", s->name);
                return;
        }
        if (s->user) {
                const char *shown = s->tree_shown;
                struct stat st;
                int fd = open(s->tree, O_PATH | O_NOFOLLOW | O_CLOEXEC);
                bool have_st = fd >= 0 && fstat(fd, &st) == 0;

                slots_close(fd);
                end = walk_end(&s->tree_walk);
                if (have_st && S_ISLNK(st.st_mode)) {
                        strbuf_addf(&d, "the tree %s of %s's user is a symlink; assign never follows one", shown, s->name);
                        strbuf_addf(&f, "move the link away, then install -d -m 2770 -g %s %s (<user>: slots-admin status "
                                "%s)", s->name, shown, s->name);
                } else if (!end || !have_st) {
                        strbuf_addf(&d, "the tree %s of %s's user: %s", shown, s->name,
                                strerror(s->tree_walk.err ? s->tree_walk.err : ENOENT));
                        strbuf_addf(&f, "install -d -m 2770 -g %s %s (<user>: slots-admin status %s)", s->name, shown,
                                s->name);
                } else if (!S_ISDIR(st.st_mode)) {
                        strbuf_addf(&d, "the tree %s of %s's user is not a folder", shown, s->name);
                        strbuf_addf(&f, "move it away, then install -d -m 2770 -g %s %s (<user>: slots-admin status %s)",
                                s->name, shown, s->name);
                } else {
                        const struct slots_perm_model *m = &end->m;

                        if (m->group != s->pw.gid) {
                                char g[64];
                                strbuf_addf(&d, "%s is group %s, not %s", shown,
                                        group_name_cb(NULL, m->group, g, sizeof(g)), s->name);
                                strbuf_addf(&f, "chgrp %s %s", s->name, shown);
                        }
                        /* The setgid bit from the fstat: the model keeps permission bits only. */
                        if (!(st.st_mode & S_ISGID)) {
                                strbuf_sep(&d, "; ");
                                strbuf_addf(&d, "%s is not setgid: new files would not get group %s", shown, s->name);
                                strbuf_sep(&f, " && ");
                                strbuf_addf(&f, "chmod g+s %s", shown);
                        }
                        if ((m->group_obj & 7) != 7 || (m->has_mask && (m->mask & 7) != 7)) {
                                strbuf_sep(&d, "; ");
                                strbuf_addf(&d, "%s does not give its group rwx", shown);
                                strbuf_sep(&f, " && ");
                                strbuf_addf(&f, "chmod g+rwx %s", shown);
                        }
                        if (m->other) {
                                char p[4];
                                strbuf_sep(&d, "; ");
                                strbuf_addf(&d, "%s gives others %s", shown, perm_str(m->other, p));
                                strbuf_sep(&f, " && ");
                                strbuf_addf(&f, "chmod o-rwx %s", shown);
                        }
                        if (d.len)
                                strbuf_addf(&f, " (<user>: slots-admin status %s)", s->name);
                }
        }
        if (s->probe_r < 0) {
                strbuf_sep(&d, "; ");
                strbuf_addf(&d, "as %s: %s", s->name, probe_failure(s->probe_r));
                strbuf_sep(&f, " && ");
                strbuf_addf(&f, "run the check again; see the detail");
        }
        for (size_t i = 0; i < k->n_slots && s->probe_r == 0; i++) {
                const struct slotinfo *o = &k->slots[i];
                const struct probe_res *res;

                if (!o->tree)
                        continue;
                res = &s->res[item++];
                if (o == s) {
                        if (res->err) {
                                const struct step *own = walk_end(&s->tree_walk);
                                strbuf_sep(&d, "; ");
                                strbuf_addf(&d, "as %s, its own tree %s cannot be listed: %s", s->name, s->tree_shown,
                                        strerror(res->err));
                                strbuf_sep(&f, " && ");
                                if (own && slots_perm_fix_grant(&own->m, &s->id, SLOTS_PERM_R | SLOTS_PERM_X,
                                                                s->tree_shown, &nm, fix, sizeof(fix)) > 0)
                                        strbuf_addf(&f, "%s", fix);
                                else
                                        strbuf_addf(&f, "give %s x on every folder above %s", s->name, s->tree_shown);
                        }
                        continue;
                }
                others++;
                if (!(res->got & GOT_LIST))
                        continue;
                strbuf_sep(&d, "; ");
                strbuf_addf(&d, "as %s, the tree of %s's user (%s) can be listed", s->name, o->name, o->tree_shown);
                end = walk_end(&o->tree_walk);
                if (end && slots_perm_fix_deny(&end->m, &s->id, o->tree_shown, &nm, fix, sizeof(fix)) > 0) {
                        strbuf_sep(&f, " && ");
                        strbuf_addf(&f, "%s (<user>: slots-admin status %s)", fix, o->name);
                } else {
                        strbuf_sep(&f, " && ");
                        strbuf_addf(&f, "look at how %s reaches %s (bind mounts, LSM policy)", s->name, o->tree_shown);
                }
        }
        if (d.len) {
                add_row(k, SLOTS_CHECK_FAIL, "user-tree", s->name, &d, &f);
        } else if (!s->user && others == 0) {
                add_rowf(k, SLOTS_CHECK_SKIP, "user-tree", s->name, NULL,
                         "no user is assigned: no tree to keep out of");
        } else {
                if (s->user)
                        strbuf_addf(&d, "%s: group %s, setgid, nothing for others; ", s->tree_shown, s->name);
                strbuf_addf(&d, "cannot list the %u other user tree%s", others, others == 1 ? "" : "s");
                add_row(k, SLOTS_CHECK_PASS, "user-tree", s->name, &d, NULL);
        }
        strbuf_free(&d);
        strbuf_free(&f);
}

/* ---- sudo-preflight ---- */


struct sudo_job {
        const char *sudo;
        const char *slot;
        int out;                /* write end of the pipe for sudo's messages */
};

static int sudo_child(void *arg)
{
        const struct sudo_job *j = arg;
        char *const argv[] = { (char *) j->sudo, "-n", "-u", (char *) j->slot, "/usr/bin/true", NULL };
        char *const envp[] = { "PATH=/usr/sbin:/usr/bin:/sbin:/bin", "LANG=C", "LC_ALL=C", NULL };
        int null = open("/dev/null", O_RDONLY | O_CLOEXEC);

        if (null < 0 || dup2(null, STDIN_FILENO) < 0 || dup2(j->out, STDOUT_FILENO) < 0 ||
            dup2(j->out, STDERR_FILENO) < 0)
                return 124;
        closefrom(3);
        execve(j->sudo, argv, envp);
        return 124;
}

static void check_sudo(struct ctx *k, const struct slotinfo *s)
{
        const char *sudo = k->o->sudo ? k->o->sudo : SUDO_DEFAULT;
        int timeout = k->o->sudo_timeout_ms > 0 ? k->o->sudo_timeout_ms : SUDO_TIMEOUT_MS;
        struct sudo_job j = { .sudo = sudo, .slot = s->name };
        char out[512] = "", fix[512];
        struct timespec t0, t1;
        struct stat st;
        int pipefd[2], r;
        ssize_t n;
        long ms;

        if (stat(sudo, &st) < 0 || !S_ISREG(st.st_mode) || !(st.st_mode & 0111)) {
                add_rowf(k, SLOTS_CHECK_SKIP, "sudo-preflight", s->name, NULL, "sudo is not installed (no %s)", sudo);
                return;
        }
        if (!k->have_svc) {
                add_rowf(k, SLOTS_CHECK_FAIL, "sudo-preflight", s->name,
                         "create the service account, or fix \"service\"",
                         "the service account %s does not exist", k->cfg->service);
                return;
        }
        if (s->found <= 0) {
                add_rowf(k, SLOTS_CHECK_SKIP, "sudo-preflight", s->name, NULL, "no account %s", s->name);
                return;
        }
        /* Only the read end is non-blocking: sudo writes to a plain pipe. */
        if (pipe2(pipefd, O_CLOEXEC) < 0 || fcntl(pipefd[0], F_SETFL, O_NONBLOCK) < 0) {
                add_rowf(k, SLOTS_CHECK_FAIL, "sudo-preflight", s->name, "run the check again",
                         "cannot make a pipe: %s", strerror(errno));
                return;
        }
        j.out = pipefd[1];
        clock_gettime(CLOCK_MONOTONIC, &t0);
        r = svc_run(k, sudo_child, &j, timeout);
        clock_gettime(CLOCK_MONOTONIC, &t1);
        close(pipefd[1]);
        n = read(pipefd[0], out, sizeof(out) - 1);
        close(pipefd[0]);
        out[n > 0 ? n : 0] = '\0';
        out[strcspn(out, "\n")] = '\0';
        ms = (t1.tv_sec - t0.tv_sec) * 1000L + (t1.tv_nsec - t0.tv_nsec) / 1000000L;
        snprintf(fix, sizeof(fix),
                 "let %s run /usr/bin/true as %s without a password in /etc/sudoers.d/slots-%s (slots-provision "
                 "writes it), then visudo -c", k->cfg->service, s->name, k->cfg->service);
        if (r == 0)
                add_rowf(k, SLOTS_CHECK_PASS, "sudo-preflight", s->name, NULL,
                         "as %s, sudo -n -u %s /usr/bin/true exits 0 (%ld ms)", k->cfg->service, s->name, ms);
        else if (r == -ETIMEDOUT)
                add_rowf(k, SLOTS_CHECK_FAIL, "sudo-preflight", s->name,
                         "find what sudo waits for (PAM modules, LDAP/sssd, DNS for the host name: sudo -n -u slotNN "
                         "/usr/bin/true as the service account) and make it answer",
                         "as %s, sudo -n -u %s /usr/bin/true did not finish within %d ms; killed", k->cfg->service,
                         s->name, timeout);
        else if (r == 124)
                add_rowf(k, SLOTS_CHECK_FAIL, "sudo-preflight", s->name, "reinstall sudo",
                         "as %s, %s cannot be run", k->cfg->service, sudo);
        else if (r == -ECHILD && snprintf(fix, sizeof(fix), "find the process of %s that ends the slot's processes "
                                          "(ps -o pid,stat,cmd -u %s) and end it, or release the slot (release "
                                          "ends every process of it)", s->name, s->name) > 0)
                /* sudo passes its command's death by a signal on: sudoers let it run, something killed it. */
                add_rowf(k, SLOTS_CHECK_FAIL, "sudo-preflight", s->name, fix,
                         "as %s, sudo -n -u %s /usr/bin/true was killed by a signal: sudo ran it, and a process "
                         "of %s is ending the slot's processes (a kill(-1) loop?)", k->cfg->service, s->name,
                         s->name);
        else if (r < 0)
                add_rowf(k, SLOTS_CHECK_FAIL, "sudo-preflight", s->name, fix, "as %s, sudo -n -u %s /usr/bin/true: %s",
                         k->cfg->service, s->name, probe_failure(r));
        else
                add_rowf(k, SLOTS_CHECK_FAIL, "sudo-preflight", s->name, fix,
                         "as %s, sudo -n -u %s /usr/bin/true exits %d%s%s", k->cfg->service, s->name, r,
                         out[0] ? ": " : "", out);
}

/* ---- the real chain: sudo -> [slotctl] -> launcher, as the service, the way the platform runs it ---- */

#define CHAIN_TIMEOUT_MS 20000
#define CHAIN_ARGV_MAX (PROBE_MAX_ARGS + 16)
#define PROBE_MAX_ARGS 64

struct chain_job {
        char *argv[CHAIN_ARGV_MAX];
        char *envp[64];
        const char *cwd;        /* where sudo starts */
        bool cwd_in_argv;       /* the probe names {cwd}: it may start in / when the service cannot enter cwd */
        int out, err;           /* write ends of the pipes */
};

#define CHAIN_NO_CWD 123        /* the service cannot enter cwd and the probe does not name it */

static int chain_child(void *arg)
{
        const struct chain_job *j = arg;
        int null = open("/dev/null", O_RDONLY | O_CLOEXEC);

        if (null < 0 || dup2(null, STDIN_FILENO) < 0 || dup2(j->out, STDOUT_FILENO) < 0 ||
            dup2(j->err, STDERR_FILENO) < 0)
                return 124;
        closefrom(3);
        if (chdir(j->cwd) < 0 && (!j->cwd_in_argv || chdir("/") < 0))
                return CHAIN_NO_CWD;
        execve(j->argv[0], j->argv, j->envp);
        return 124;
}

/* Reads what is in a pipe (non-blocking) into buf; the first line only when first_line. */
static void chain_read(int fd, char *buf, size_t size, bool first_line)
{
        ssize_t n = read(fd, buf, size - 1);

        buf[n > 0 ? n : 0] = '\0';
        if (first_line)
                buf[strcspn(buf, "\n")] = '\0';
}

/* sudo_env as --preserve-env names (a prefix "X*" gives X_SLOTS_CHECK) and their marker values. */
static void chain_env(const struct ctx *k, struct chain_job *j, char *list, size_t size, char vals[][160],
                      size_t *nenv)
{
        size_t o = 0;

        list[0] = '\0';
        for (size_t i = 0; i < k->cfg->n_sudo_env && *nenv < 60; i++) {
                const char *n = k->cfg->sudo_env[i];
                size_t len = strlen(n);
                bool prefix = n[len - 1] == '*';

                if (strcmp(n, "PATH") == 0)
                        continue;       /* set below, and listed */
                snprintf(vals[*nenv], 160, "%.*s%s=slots-check", (int) (prefix ? len - 1 : len), n,
                         prefix ? "SLOTS_CHECK" : "");
                j->envp[*nenv] = vals[*nenv];
                (*nenv)++;
                o += (size_t) snprintf(list + o, o < size ? size - o : 0, "%s%.*s%s", o ? "," : "",
                                       (int) (prefix ? len - 1 : len), n, prefix ? "SLOTS_CHECK" : "");
        }
        for (size_t i = 0; i < k->cfg->n_sudo_env; i++)
                if (strcmp(k->cfg->sudo_env[i], "PATH") == 0)
                        o += (size_t) snprintf(list + o, o < size ? size - o : 0, "%sPATH", o ? "," : "");
}

/*
 * Runs, as the service, sudo -n -u SLOT [-g GROUP] [--preserve-env=LIST] -- [SLOTCTL] PROBE
 * in cwd.  Returns the status; out gets stdout, err the first stderr line.
 */
static int chain_run(struct ctx *k, const struct slotinfo *s, const char *launcher, const char *cwd,
                     bool with_env, char *out, size_t outsize, char *err, size_t errsize)
{
        const char *sudo = k->o->sudo ? k->o->sudo : SUDO_DEFAULT;
        static char vals[60][160];
        char list[4096], pe[4200] = "", *subst[PROBE_MAX_ARGS] = { NULL };
        struct chain_job j = { .cwd = cwd };
        int po[2] = { -1, -1 }, pr[2] = { -1, -1 }, r;
        size_t a = 0, nenv = 0;

        j.envp[nenv++] = "PATH=/usr/local/bin:/usr/bin:/bin";
        j.envp[nenv++] = "LANG=C";
        if (with_env) {
                chain_env(k, &j, list, sizeof(list), vals, &nenv);
                snprintf(pe, sizeof(pe), "--preserve-env=%s", list);
        }
        j.envp[nenv] = NULL;
        j.argv[a++] = (char *) sudo;
        j.argv[a++] = "-n";
        j.argv[a++] = "-u";
        j.argv[a++] = (char *) s->name;
        if (k->cfg->run_as_group) {
                j.argv[a++] = "-g";
                j.argv[a++] = k->cfg->run_as_group;
        }
        if (pe[0])
                j.argv[a++] = pe;
        j.argv[a++] = "--";
        if (k->cfg->slotctl)
                j.argv[a++] = k->cfg->slotctl;
        for (size_t i = 0; i < k->cfg->n_probe && i < PROBE_MAX_ARGS; i++) {
                const char *t = k->cfg->probe[i];
                struct strbuf b = { 0 };

                for (const char *p = t; *p;) {
                        if (strncmp(p, "{launcher}", 10) == 0) {
                                strbuf_addf(&b, "%s", launcher);
                                p += 10;
                        } else if (strncmp(p, "{cwd}", 5) == 0) {
                                strbuf_addf(&b, "%s", cwd);
                                j.cwd_in_argv = true;
                                p += 5;
                        } else {
                                strbuf_addf(&b, "%c", *p++);
                        }
                }
                if (b.oom || !b.s) {
                        strbuf_free(&b);
                        r = -ENOMEM;
                        goto out;
                }
                subst[i] = b.s;
                j.argv[a++] = subst[i];
        }
        j.argv[a] = NULL;
        if (pipe2(po, O_CLOEXEC) < 0 || pipe2(pr, O_CLOEXEC) < 0 || fcntl(po[0], F_SETFL, O_NONBLOCK) < 0 ||
            fcntl(pr[0], F_SETFL, O_NONBLOCK) < 0) {
                r = -errno;
                goto out;
        }
        j.out = po[1];
        j.err = pr[1];
        r = svc_run(k, chain_child, &j, CHAIN_TIMEOUT_MS);
        close(po[1]);
        close(pr[1]);
        po[1] = pr[1] = -1;
        chain_read(po[0], out, outsize, false);
        chain_read(pr[0], err, errsize, true);
out:
        for (int i = 0; i < 2; i++) {
                if (po[i] >= 0)
                        close(po[i]);
                if (pr[i] >= 0)
                        close(pr[i]);
        }
        for (size_t i = 0; i < PROBE_MAX_ARGS; i++)
                free(subst[i]);
        return r;
}

/* The launcher the platform runs: through current when it exists, else the release check found. */
static char *chain_launcher(const struct ctx *k)
{
        struct stat st;
        char *p = NULL;

        if (asprintf(&p, "%s/current/bin/%s", strcmp(k->cfg->app_root, "/") ? k->cfg->app_root : "",
                     k->cfg->launcher) < 0)
                return NULL;
        if (lstat(p, &st) == 0 || k->n_launchers == 0)
                return p;
        free(p);
        return strdup(k->launchers[0].path);
}

static bool chain_ready(struct ctx *k, const struct slotinfo *s, const char *check)
{
        const char *sudo = k->o->sudo ? k->o->sudo : SUDO_DEFAULT;
        struct stat st;

        if (!k->cfg->app_root || !k->cfg->launcher) {
                add_rowf(k, SLOTS_CHECK_SKIP, check, s->name, NULL, "%s sets no app_root and launcher", k->cfg->path);
                return false;
        }
        if (stat(sudo, &st) < 0 || !S_ISREG(st.st_mode) || !(st.st_mode & 0111)) {
                add_rowf(k, SLOTS_CHECK_SKIP, check, s->name, NULL, "sudo is not installed (no %s)", sudo);
                return false;
        }
        if (!k->have_svc || s->found <= 0) {
                add_rowf(k, SLOTS_CHECK_SKIP, check, s->name, NULL, "no service account or no account %s", s->name);
                return false;
        }
        return true;
}

/* One chain row: the probe in cwd (shown as shown) must exit 0 and print cwd. */
static void chain_one(struct ctx *k, const struct slotinfo *s, const char *launcher, const char *cwd,
                      const char *shown)
{
        char out[4096], err[1024], esc[4200], fix[600];
        int r = chain_run(k, s, launcher, cwd, false, out, sizeof(out), err, sizeof(err));

        snprintf(fix, sizeof(fix), "run it as %s and read the launcher's message: sudo -n -u %s -- %s%s%s ... "
                 "(the launcher must work for the slot in %s)", k->cfg->service, s->name,
                 k->cfg->slotctl ? k->cfg->slotctl : "", k->cfg->slotctl ? " " : "", launcher, shown);
        /* Exact here (JSON keeps it); the command escapes it for the terminal. */
        snprintf(esc, sizeof(esc), "%s", err);
        if (r == -ENOMEM) {
                k->err = -ENOMEM;
        } else if (r == -ETIMEDOUT) {
                add_rowf(k, SLOTS_CHECK_FAIL, "chain", s->name, fix, "in %s: the probe did not finish within %d ms",
                         shown, CHAIN_TIMEOUT_MS);
        } else if (r == CHAIN_NO_CWD) {
                add_rowf(k, SLOTS_CHECK_SKIP, "chain", s->name, NULL,
                         "in %s: %s cannot enter the folder and the probe does not name {cwd} for the launcher to "
                         "change into", shown, k->cfg->service);
        } else if (r != 0) {
                add_rowf(k, SLOTS_CHECK_FAIL, "chain", s->name, fix, "in %s: the launcher exits %d%s%s", shown, r,
                         esc[0] ? ": " : "", esc);
        } else {
                out[strcspn(out, "\n")] = '\0';
                if (strcmp(out, cwd) != 0)
                        add_rowf(k, SLOTS_CHECK_FAIL, "chain", s->name, fix,
                                 "in %s: the probe ran but did not print its working folder%s%s", shown,
                                 esc[0] ? ": " : "", esc);
                else
                        add_rowf(k, SLOTS_CHECK_PASS, "chain", s->name, NULL, "in %s: sudo -> %s%s exits 0", shown,
                                 k->cfg->slotctl ? "slotctl -> " : "", "launcher");
        }
}

/* The probe in the docs root, each shared folder and the user's tree (the test slot: its state folder). */
static void check_chain(struct ctx *k, const struct slotinfo *s)
{
        char *launcher, *dir = NULL;

        if (!chain_ready(k, s, "chain"))
                return;
        launcher = chain_launcher(k);
        if (!launcher) {
                k->err = -ENOMEM;
                return;
        }
        if (!s->user) {
                if (asprintf(&dir, "%s/state/%s", k->cfg->slots_root, s->name) >= 0)
                        chain_one(k, s, launcher, dir, dir);
                free(dir);
                free(launcher);
                return;
        }
        if (k->cfg->docs_root) {
                chain_one(k, s, launcher, k->cfg->docs_root, k->cfg->docs_root);
                for (size_t i = 0; i < k->cfg->n_shared_dirs; i++) {
                        if (asprintf(&dir, "%s/%s", k->cfg->docs_root, k->cfg->shared_dirs[i]) < 0)
                                break;
                        chain_one(k, s, launcher, dir, dir);
                        free(dir);
                }
                if (s->tree)
                        chain_one(k, s, launcher, s->tree, s->tree_shown ? s->tree_shown : "<docs>/<user>");
        }
        free(launcher);
}

/* sudo accepts the executor's --preserve-env list for the launcher. */
static void check_sudo_env(struct ctx *k, const struct slotinfo *s)
{
        char out[4096], err[1024], esc[4200];
        char *launcher;
        const char *cwd = "/";
        int r;

        if (!chain_ready(k, s, "sudo-env"))
                return;
        launcher = chain_launcher(k);
        if (!launcher) {
                k->err = -ENOMEM;
                return;
        }
        r = chain_run(k, s, launcher, cwd, true, out, sizeof(out), err, sizeof(err));
        /* Exact here (JSON keeps it); the command escapes it for the terminal. */
        snprintf(esc, sizeof(esc), "%s", err);
        if (strstr(err, "not allowed to set") || strstr(err, "password is required") ||
            strstr(err, "not allowed to preserve"))
                add_rowf(k, SLOTS_CHECK_FAIL, "sudo-env", s->name,
                         "run slots-provision: its drop-in keeps exactly the names of sudo_env", "sudo refuses: %s", esc);
        else if (r < 0 && r != -ENOMEM)
                add_rowf(k, SLOTS_CHECK_FAIL, "sudo-env", s->name, "run the check again", "cannot run sudo: %s",
                         probe_failure(r));
        else if (r != -ENOMEM)
                add_rowf(k, SLOTS_CHECK_PASS, "sudo-env", s->name, NULL,
                         "sudo accepts --preserve-env for the %zu names of sudo_env", k->cfg->n_sudo_env);
        else
                k->err = -ENOMEM;
        free(launcher);
}

/* sudo-kill: the service starts a run in its own process group, as the platform does, and ends it. */
struct kill_job {
        char *run[CHAIN_ARGV_MAX];      /* sudo ... -- [slotctl] launcher /bin/sleep 30 */
        const char *sudo, *slot;
        uid_t slot_uid;
};

enum { KILL_OK, KILL_NOT_STARTED = 10, KILL_REFUSED, KILL_SURVIVED, KILL_FORK };

/* True when a process of uid is in process group pgid (read from /proc). */
static bool group_has(pid_t pgid, uid_t uid)
{
        DIR *d = opendir("/proc");
        struct dirent *de;
        bool found = false;

        if (!d)
                return false;
        while (!found && (de = readdir(d))) {
                char path[300], buf[512], *p;
                struct stat st;
                long pg;
                int fd;
                ssize_t n;

                if (de->d_name[0] < '1' || de->d_name[0] > '9')
                        continue;
                snprintf(path, sizeof(path), "/proc/%s/stat", de->d_name);
                fd = open(path, O_RDONLY | O_CLOEXEC);
                if (fd < 0)
                        continue;
                n = fstat(fd, &st) == 0 ? read(fd, buf, sizeof(buf) - 1) : -1;
                close(fd);
                if (n <= 0 || st.st_uid != uid)
                        continue;
                buf[n] = '\0';
                /* pid (comm) state ppid pgrp: comm may hold anything, so start after its last ')' */
                p = strrchr(buf, ')');
                if (p && sscanf(p + 1, " %*c %*d %ld", &pg) == 1 && pg == (long) pgid)
                        found = true;
        }
        closedir(d);
        return found;
}

static int wait_ms(pid_t pid, int ms, int *status)
{
        for (int i = 0; i < ms / 10; i++) {
                pid_t w = waitpid(pid, status, WNOHANG);
                if (w == pid)
                        return 0;
                (void) poll(NULL, 0, 10);
        }
        return -ETIMEDOUT;
}

static int kill_child(void *arg)
{
        const struct kill_job *j = arg;
        char pg[32];
        pid_t run, k;
        int status, r = KILL_NOT_STARTED, null = open("/dev/null", O_RDWR | O_CLOEXEC);

        if (null < 0)
                return KILL_FORK;
        run = fork();
        if (run < 0)
                return KILL_FORK;
        if (run == 0) {
                (void) setpgid(0, 0);
                if (dup2(null, 0) < 0 || dup2(null, 1) < 0 || dup2(null, 2) < 0 || chdir("/") < 0)
                        _exit(124);
                execve(j->run[0], j->run, (char *const[]){ "PATH=/usr/local/bin:/usr/bin:/bin", "LANG=C", NULL });
                _exit(124);
        }
        (void) setpgid(run, run);
        for (int i = 0; i < 500 && !group_has(run, j->slot_uid); i++)
                if (waitpid(run, &status, WNOHANG) == run || poll(NULL, 0, 10) < 0)
                        return KILL_NOT_STARTED;
        if (!group_has(run, j->slot_uid))
                goto out;
        snprintf(pg, sizeof(pg), "-%ld", (long) run);
        k = fork();
        if (k == 0) {
                char *const argv[] = { (char *) j->sudo, "-n", "-u", (char *) j->slot, "kill", "-s", "TERM", "--",
                                       pg, NULL };
                if (dup2(null, 0) < 0 || dup2(null, 1) < 0 || dup2(null, 2) < 0)
                        _exit(124);
                execve(j->sudo, argv, (char *const[]){ "PATH=/usr/local/bin:/usr/bin:/bin", "LANG=C", NULL });
                _exit(124);
        }
        if (k < 0 || wait_ms(k, 5000, &status) < 0 || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
                r = KILL_REFUSED;
                goto out;
        }
        r = wait_ms(run, 5000, &status) == 0 && !group_has(run, j->slot_uid) ? KILL_OK : KILL_SURVIVED;
out:
        if (r != KILL_OK) {
                (void) kill(run, SIGKILL);
                (void) waitpid(run, &status, 0);
        }
        return r;
}

static void check_sudo_kill(struct ctx *k, const struct slotinfo *s)
{
        struct kill_job j = { .sudo = k->o->sudo ? k->o->sudo : SUDO_DEFAULT, .slot = s->name };
        char *launcher, fix[512];
        size_t a = 0;
        int r;

        if (!chain_ready(k, s, "sudo-kill"))
                return;
        launcher = chain_launcher(k);
        if (!launcher) {
                k->err = -ENOMEM;
                return;
        }
        j.slot_uid = s->pw.uid;
        j.run[a++] = (char *) j.sudo;
        j.run[a++] = "-n";
        j.run[a++] = "-u";
        j.run[a++] = (char *) s->name;
        j.run[a++] = "--";
        if (k->cfg->slotctl)
                j.run[a++] = k->cfg->slotctl;
        j.run[a++] = launcher;
        j.run[a++] = "/bin/sleep";
        j.run[a++] = "30";
        j.run[a] = NULL;
        r = svc_run(k, kill_child, &j, 20000);
        snprintf(fix, sizeof(fix), "let %s run \"kill -s SIGNAL -- -PGID\" as %s in /etc/sudoers.d/slots-%s "
                 "(slots-provision writes it), then visudo -c", k->cfg->service, s->name, k->cfg->service);
        if (r == KILL_OK)
                add_rowf(k, SLOTS_CHECK_PASS, "sudo-kill", s->name, NULL,
                         "as %s, sudo -n -u %s kill -s TERM -- -PGID ended a run's process group", k->cfg->service,
                         s->name);
        else if (r == KILL_NOT_STARTED)
                add_rowf(k, SLOTS_CHECK_SKIP, "sudo-kill", s->name, NULL,
                         "the launcher did not keep \"/bin/sleep 30\" running as %s to be ended", s->name);
        else if (r == KILL_REFUSED)
                add_rowf(k, SLOTS_CHECK_FAIL, "sudo-kill", s->name, fix,
                         "as %s, sudo -n -u %s kill -s TERM -- -PGID is refused or does not finish within 5 s",
                         k->cfg->service, s->name);
        else if (r == KILL_SURVIVED)
                add_rowf(k, SLOTS_CHECK_FAIL, "sudo-kill", s->name, "find what keeps the slot's processes alive",
                         "the run's process group of %s outlived the kill by 5 s", s->name);
        else
                add_rowf(k, SLOTS_CHECK_FAIL, "sudo-kill", s->name, "run the check again", "cannot run the kill: %s",
                         r < 0 ? probe_failure(r) : "fork failed");
        free(launcher);
}

/* ---- service-apart: the service account is never a slot ---- */

/* The service's groups (from NSS) must hold no slot's group of the pool and not <prefix>shared. */
static void check_service_apart(struct ctx *k)
{
        char shared[64];

        if (!k->have_svc) {
                add_rowf(k, SLOTS_CHECK_SKIP, "service-apart", NULL, NULL, "no service account %s", k->cfg->service);
                return;
        }
        snprintf(shared, sizeof(shared), "%sshared", k->cfg->prefix);
        for (int i = 0; i < k->svc.n_groups; i++) {
                struct slots_gr gr;
                unsigned n;
                bool bad;

                if (slots_nss_gid(k->svc.groups[i], &gr) <= 0)
                        continue;
                n = slots_slot_parse(gr.name);
                bad = (n >= 1 && n <= k->cfg->slots) || strcmp(gr.name, shared) == 0;
                if (bad) {
                        char fix[200];

                        snprintf(fix, sizeof(fix), "gpasswd -d %s %s", k->cfg->service, gr.name);
                        add_rowf(k, SLOTS_CHECK_FAIL, "service-apart", NULL, fix,
                                 "the service account %s is in group %s: the service is never a slot",
                                 k->cfg->service, gr.name);
                }
                slots_gr_clear(&gr);
                if (bad)
                        return;
        }
        add_rowf(k, SLOTS_CHECK_PASS, "service-apart", NULL, NULL, "%s is in no slot's group and not in %s",
                 k->cfg->service, shared);
}

/* ---- the run ---- */

static void ctx_free(struct ctx *k)
{
        for (size_t i = 0; i < k->n_slots; i++) {
                struct slotinfo *s = &k->slots[i];
                slots_pw_clear(&s->pw);
                free(s->groups);
                free(s->tree);
                free(s->tree_shown);
                walk_free(&s->tree_walk);
                free(s->res);
        }
        free(k->slots);
        for (size_t i = 0; i < k->n_launchers; i++) {
                free(k->launchers[i].path);
                free(k->launchers[i].release);
                walk_free(&k->launchers[i].walk);
        }
        free(k->launchers);
        if (k->private_walks && k->cfg)
                for (size_t i = 0; i < k->cfg->n_private_paths; i++)
                        walk_free(&k->private_walks[i]);
        free(k->private_walks);
        free(k->plan.paths);
        free(k->plan.ops);
        free(k->release_note);
        slots_table_free(k->table);
        slots_pw_clear(&k->svc_pw);
        free(k->svc_groups);
        free(k->group_name);
        slots_config_free(k->cfg);
        slots_close(k->rootfd);
}

typedef void (*slot_check_fn)(struct ctx *k, const struct slotinfo *s);

/*
 * The accounts of the other slots of the pool (free or pending, not the test slot): a
 * missing or changed one is a FAIL row, as for the slots checked above (the next assign
 * would hand it out); the ones as planned make one PASS row, not one each.
 */
static void check_other_accounts(struct ctx *k)
{
        unsigned fine = 0;

        for (unsigned n = 1; n <= k->cfg->slots && !k->err; n++) {
                struct slotinfo s = { .n = n };
                size_t i, rows = k->rep->n;

                for (i = 0; i < k->n_slots && k->slots[i].n != n; i++)
                        ;
                if (i < k->n_slots)
                        continue;
                slots_slot_name(n, s.name);
                s.found = slots_nss_user(s.name, &s.pw);
                s.have_id = s.found > 0 && slots_ident_of(s.name, &s.id, &s.groups) == 0;
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
                add_rowf(k, SLOTS_CHECK_PASS, "account", NULL, NULL,
                         "%u other slot%s of the pool (free or pending): accounts as planned", fine,
                         fine == 1 ? "" : "s");
}

int slots_selfcheck(const struct slots_check_opts *o, struct slots_check_report *rep)
{
        static const slot_check_fn per_slot[] = {
                check_account, check_folders, check_password, check_runner, check_private, check_tree, check_sudo,
                check_sudo_env, check_sudo_kill, check_chain,
        };
        /* What a check needs root for; run as the service account its rows are SKIP with this reason. */
        static const struct {
                slot_check_fn fn;
                const char *row, *why;
        } needs_root[] = {
                { check_password, "password-locked", "needs root: reads /etc/shadow" },
                { check_runner, "runner-reachable", "needs root: probes as the slot" },
                { check_private, "private-unreachable", "needs root: probes as the slot" },
                { check_tree, "user-tree", "needs root: probes as the slot" },
        };
        struct ctx k = { .o = o, .rep = rep, .rootfd = -1 };
        bool root = geteuid() == 0;

        memset(rep, 0, sizeof(*rep));
        if (!check_config(&k))
                goto out;
        k.rootfd = slots_root_open(NULL);
        resolve_service(&k);
        if (k.err)
                goto out;
        if (!root && (!k.have_svc || geteuid() != k.svc.uid)) {
                k.err = -EPERM;
                goto out;
        }
        check_table(&k);
        check_service_apart(&k);
        if (k.cfg->app_root && k.cfg->launcher)
                find_releases(&k);
        check_slotctl(&k);
        check_pending(&k);
        if (k.err || collect_slots(&k) < 0 || build_plan(&k) < 0) {
                k.err = -ENOMEM;
                goto out;
        }
        if (root)
                run_slot_probes(&k);
        if (k.err)
                goto out;

        for (size_t c = 0; c < sizeof(per_slot) / sizeof(per_slot[0]); c++) {
                const char *why = NULL, *row = NULL;

                for (size_t n = 0; !root && n < sizeof(needs_root) / sizeof(needs_root[0]); n++)
                        if (needs_root[n].fn == per_slot[c]) {
                                why = needs_root[n].why;
                                row = needs_root[n].row;
                        }
                if (why) {
                        for (size_t i = 0; i < k.n_slots; i++)
                                add_rowf(&k, SLOTS_CHECK_SKIP, row, k.slots[i].name, NULL, "%s (check runs as %s)",
                                         why, k.cfg->service);
                        continue;
                }
                if (per_slot[c] == check_runner && !(k.cfg->app_root && k.cfg->launcher)) {
                        add_rowf(&k, SLOTS_CHECK_SKIP, "runner-reachable", NULL, NULL,
                                 "%s sets no app_root and launcher", k.cfg->path);
                        continue;
                }
                if (per_slot[c] == check_runner && k.n_launchers == 0) {
                        char fix[4200];
                        snprintf(fix, sizeof(fix), "deploy a release: %s/releases/<release>/bin/%s", k.cfg->app_root,
                                 k.cfg->launcher);
                        add_rowf(&k, SLOTS_CHECK_FAIL, "runner-reachable", NULL, fix, "no release in %s/releases%s%s",
                                 k.cfg->app_root, k.releases_missing ? ": " : "",
                                 k.releases_missing ? "the folder cannot be read" : "");
                        continue;
                }
                for (size_t i = 0; i < k.n_slots; i++)
                        per_slot[c](&k, &k.slots[i]);
        }
        check_other_accounts(&k);
        if (k.n_slots == 0)
                add_rowf(&k, SLOTS_CHECK_SKIP, "account", NULL, NULL,
                         "no slot to check: none is assigned and no test slot is free");
out:
        ctx_free(&k);
        if (k.err) {
                slots_check_report_free(rep);
                return k.err;
        }
        return 0;
}
