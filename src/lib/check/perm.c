/*
 * The kernel's permission model as data: mode bits and POSIX ACL evaluated like
 * generic_permission(), the fix lines derived from it, and a path's steps judged
 * (perm-path.c reads them); no file-system I/O.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "acl.h"
#include "nss.h"
#include "perm.h"
#include "strbuf.h"

void slots_perm_from_stat(struct slots_perm_model *m, const struct stat *st, const struct slots_acl *acl)
{
        memset(m, 0, sizeof(*m));
        m->owner = st->st_uid;
        m->group = st->st_gid;
        m->dir = S_ISDIR(st->st_mode);
        m->user_obj = (st->st_mode >> 6) & 7;
        m->group_obj = (st->st_mode >> 3) & 7;
        m->other = st->st_mode & 7;
        for (size_t i = 0; acl && i < acl->n; i++) {
                const struct slots_acl_entry *e = &acl->entries[i];
                struct slots_perm_entry *list = e->tag == SLOTS_ACL_USER ? m->users : m->groups;
                size_t *n = e->tag == SLOTS_ACL_USER ? &m->n_users : &m->n_groups;

                switch (e->tag) {
                case SLOTS_ACL_USER_OBJ:
                        m->user_obj = e->perm;
                        break;
                case SLOTS_ACL_GROUP_OBJ:
                        m->group_obj = e->perm;
                        break;
                case SLOTS_ACL_OTHER:
                        m->other = e->perm;
                        break;
                case SLOTS_ACL_MASK:
                        m->mask = e->perm;
                        m->has_mask = m->extended = true;
                        break;
                case SLOTS_ACL_USER:
                case SLOTS_ACL_GROUP:
                        m->extended = true;
                        if (*n == SLOTS_PERM_ENTRIES)
                                m->truncated = true;
                        else
                                list[(*n)++] = (struct slots_perm_entry){ .id = e->id, .perm = e->perm };
                        break;
                default:
                        break;
                }
        }
}

bool slots_perm_in_group(const struct slots_ident *id, gid_t gid)
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
        if (slots_perm_in_group(id, m->group)) {
                found = true;
                if ((m->group_obj & want) == want)
                        goto masked;
        }
        for (size_t i = 0; i < m->n_groups; i++)
                if (slots_perm_in_group(id, m->groups[i].id)) {
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

const char *slots_perm_str(unsigned p, char buf[static 4])
{
        buf[0] = p & SLOTS_PERM_R ? 'r' : '-';
        buf[1] = p & SLOTS_PERM_W ? 'w' : '-';
        buf[2] = p & SLOTS_PERM_X ? 'x' : '-';
        buf[3] = '\0';
        return buf;
}

/* chmod's letters for a set of bits: "rx", "x". */
const char *slots_perm_letters(unsigned p, char buf[static 4])
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
                        strbuf_addf(&b, "setfacl -m m::%s ", slots_perm_str(m.mask, p1));
                } else if (v.via == SLOTS_VIA_OWNER) {
                        m.user_obj |= want;
                        strbuf_addf(&b, "chmod u+%s ", slots_perm_letters(want, p1));
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
                                        slots_perm_str(t.users[v.entry].perm, p2));
                        }
                        m = t;
                } else if (v.via == SLOTS_VIA_GROUP) {
                        if (!m.extended) {
                                m.group_obj |= want;
                                strbuf_addf(&b, "chmod g+%s ", slots_perm_letters(want, p1));
                        } else if (v.entry < 0) {
                                m.group_obj |= want;
                                recompute_mask(&m);
                                strbuf_addf(&b, "setfacl -m g::%s ", slots_perm_str(m.group_obj, p1));
                        } else {
                                m.groups[v.entry].perm |= want;
                                recompute_mask(&m);
                                strbuf_addf(&b, "setfacl -m g:%s:%s ",
                                        name_group(names, m.groups[v.entry].id, nb, sizeof(nb)),
                                        slots_perm_str(m.groups[v.entry].perm, p1));
                        }
                } else {
                        m.other |= want;
                        strbuf_addf(&b, "chmod o+%s ", slots_perm_letters(want, p1));
                }
                sb_path(&b, display);
        }
        return fix_done(&b, buf, size, -E2BIG);
}

/* Which of r, w, x (x only for a folder) id still gets; the verdict of the first one it gets. */
bool slots_perm_any(const struct slots_perm_model *m, const struct slots_ident *id, struct slots_perm_verdict *out)
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

                if (!slots_perm_any(&m, id, &v))
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


/* The permission model's name callbacks: nss.c's one way of naming an id. */
const char *slots_perm_user_name(void *arg, uid_t uid, char *buf, size_t size)
{
        (void) arg;
        return slots_uid_name(uid, buf, size);
}

const char *slots_perm_group_name(void *arg, gid_t gid, char *buf, size_t size)
{
        (void) arg;
        return slots_gid_name(gid, buf, size);
}

/* "0750 root:video-studio" (+acl) for a model. */
void slots_perm_sb_mode(struct strbuf *b, const struct slots_perm_model *m)
{
        char u[64], g[64];
        unsigned mode = m->user_obj << 6 | (m->has_mask ? m->mask : m->group_obj) << 3 | m->other;

        strbuf_addf(b, "%04o %s:%s%s", mode, slots_perm_user_name(NULL, m->owner, u, sizeof(u)),
                slots_perm_group_name(NULL, m->group, g, sizeof(g)), m->extended ? " with an ACL" : "");
}

/* Why the model gives `who` what it does (v from slots_perm_eval): the bit or ACL entry that decided. */
void slots_perm_sb_why(struct strbuf *b, const struct slots_perm_model *m, const struct slots_perm_verdict *v,
            const char *who, const char *shown, unsigned want)
{
        char p1[4], p2[4], nb[64];

        switch (v->via) {
        case SLOTS_VIA_OWNER:
                strbuf_addf(b, "%s is ", shown);
                slots_perm_sb_mode(b, m);
                strbuf_addf(b, " and %s owns it: the owner has %s", who, slots_perm_str(m->user_obj, p1));
                return;
        case SLOTS_VIA_USER:
                strbuf_addf(b, "the ACL entry user:%s:%s on %s", who, slots_perm_str(m->users[v->entry].perm, p1),
                            shown);
                if (v->masked)
                        strbuf_addf(b, " is cut to %s by mask::%s",
                                slots_perm_str(m->users[v->entry].perm & m->mask, p2), slots_perm_str(m->mask, p1));
                return;
        case SLOTS_VIA_GROUP:
                if (v->entry >= 0)
                        strbuf_addf(b, "%s has the ACL entry group:%s:%s", shown,
                                slots_perm_group_name(NULL, m->groups[v->entry].id, nb, sizeof(nb)),
                         slots_perm_str(m->groups[v->entry].perm, p1));
         else
                 strbuf_addf(b, "%s is group %s with %s", shown, slots_perm_group_name(NULL, m->group, nb, sizeof(nb)),
                         slots_perm_str(m->group_obj, p1));
         if (v->masked)
                 strbuf_addf(b, ", cut by mask::%s", slots_perm_str(m->mask, p2));
         strbuf_addf(b, " and %s is in that group", who);
         return;
 case SLOTS_VIA_OTHER:
         strbuf_addf(b, "%s is ", shown);
         slots_perm_sb_mode(b, m);
         strbuf_addf(b, ": others have %s", slots_perm_str(m->other, p1));
         if (!v->allowed)
                 strbuf_addf(b, ", no %s", slots_perm_letters(want, p2));
         return;
 }
}

/* ---- a path as data: the model of each step and whether one surely refuses ---- */

void slots_perm_path_free(struct slots_perm_path *w)
{
        for (size_t i = 0; i < w->n; i++)
                free(w->steps[i].path);
        free(w->steps);
        free(w->err_path);
        memset(w, 0, sizeof(*w));
}

const struct slots_perm_step *slots_perm_path_end(const struct slots_perm_path *w)
{
        return !w->err && w->n ? &w->steps[w->n - 1] : NULL;
}

/* Whether the model judges this step at all: a step it could not read or whose ACL it could not hold never refuses. */
static bool step_judged(const struct slots_perm_step *s)
{
        return s->have_model && !s->m.truncated;
}

static unsigned step_want(const struct slots_perm_step *s, unsigned want_end)
{
        return s->traverse ? SLOTS_PERM_X : want_end;
}

bool slots_perm_steps_deny(const struct slots_perm_step *steps, size_t n, const struct slots_ident *id,
                           unsigned want_end)
{
        /* From the end: a user's tree keeps the others out at its own folder. */
        for (size_t i = n; i-- > 0;) {
                const struct slots_perm_step *s = &steps[i];

                if (step_judged(s) && !slots_perm_eval(&s->m, id, step_want(s, want_end)).allowed)
                        return true;
        }
        return false;
}

bool slots_perm_step_denies_others(const struct slots_perm_step *s, unsigned want_end)
{
        unsigned want = step_want(s, want_end);

        return step_judged(s) && (s->m.other & want) != want;
}

bool slots_perm_path_denies(const struct slots_perm_path *w, const struct slots_ident *id, unsigned want_end)
{
        return !w->err && slots_perm_steps_deny(w->steps, w->n, id, want_end);
}

bool slots_perm_step_same(const struct slots_perm_step *a, const struct slots_perm_step *b)
{
        const struct slots_perm_model *x = &a->m, *y = &b->m;

        if (strcmp(a->path, b->path) != 0 || a->traverse != b->traverse || a->have_model != b->have_model)
                return false;
        if (!a->have_model)
                return true;
        return x->owner == y->owner && x->group == y->group && x->dir == y->dir && x->extended == y->extended &&
               x->truncated == y->truncated && x->user_obj == y->user_obj && x->group_obj == y->group_obj &&
               x->other == y->other && x->mask == y->mask && x->has_mask == y->has_mask &&
               x->n_users == y->n_users && x->n_groups == y->n_groups &&
               memcmp(x->users, y->users, x->n_users * sizeof(x->users[0])) == 0 &&
               memcmp(x->groups, y->groups, x->n_groups * sizeof(x->groups[0])) == 0;
}
