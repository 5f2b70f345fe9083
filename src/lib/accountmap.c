/* The account databases read once for a run over many accounts: passwd, group and shadow by name and id. */
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <pwd.h>
#include <shadow.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "accountmap.h"
#include "fsutil.h"
#include "privdrop.h"

#define NSSWITCH "/etc/nsswitch.conf"
#define ENT_BUF_MAX ((size_t) 1 << 24)

struct amap_group {
        char *name;
        gid_t gid;
};

/* One member of one group: the group is groups[group], the order it was listed in. */
struct amap_member {
        const char *user;
        size_t group;
};

struct amap_user {
        struct slots_pw pw;
        char *passwd;                   /* the password field as listed */
        size_t seq;                     /* the order it was listed in */
};

struct amap_shadow {
        char *name;
        char *hash;
        size_t seq;
};

struct slots_accountmap {
        struct amap_user *pw;           /* sorted by name, the first listed of each name only */
        size_t n_pw;
        struct amap_group *groups;      /* in the order listed (membership keeps it) */
        size_t n_groups;
        size_t *by_name, *by_gid;       /* into groups: sorted, the first listed of each only */
        size_t n_by_name, n_by_gid;
        struct amap_member *members;    /* sorted by user, then the group's place */
        size_t n_members;
        char **member_names;            /* what members point into */
        size_t n_member_names;
        bool groups_complete;           /* the group enumeration is all there is, and it ended */
        struct amap_shadow *shadow;     /* sorted by name, the first listed of each only */
        size_t n_shadow;
};

/* A growing array: *p holds *n of size each, room for *cap; false when memory ran out. */
static bool grow(void *p, size_t *cap, size_t n, size_t size)
{
        void **a = p;
        size_t c = *cap ? *cap * 2 : 64;
        void *q;

        if (n < *cap)
                return true;
        if (c > SIZE_MAX / size || !(q = realloc(*a, c * size)))
                return false;
        *a = q;
        *cap = c;
        return true;
}

/* ---- reading ---- */

/* One getXXent_r into a buffer that grows on ERANGE: 1 with an entry, 0 at the end, -errno when it failed. */
#define NEXT_ENT(type, fn, bufp, sizep, ent)                                            \
        ({                                                                              \
                struct type *res_ = NULL;                                               \
                int r_;                                                                 \
                for (;;) {                                                              \
                        if (!*(bufp)) {                                                 \
                                *(bufp) = malloc(*(sizep));                             \
                                if (!*(bufp)) {                                         \
                                        r_ = -ENOMEM;                                   \
                                        break;                                          \
                                }                                                       \
                        }                                                               \
                        r_ = fn((ent), *(bufp), *(sizep), &res_);                       \
                        if (r_ == ERANGE && *(sizep) < ENT_BUF_MAX) {                   \
                                free(*(bufp));                                          \
                                *(bufp) = NULL;                                         \
                                *(sizep) *= 2;                                          \
                                continue;                                               \
                        }                                                               \
                        r_ = r_ == 0 && res_ ? 1 : r_ == 0 || r_ == ENOENT ? 0 : r_ > 0 ? -r_ : r_; \
                        break;                                                          \
                }                                                                       \
                r_;                                                                     \
        })

/* The passwd enumeration: every entry listed, in order. */
static int read_passwd(struct slots_accountmap *m)
{
        size_t cap = 0, size = 1024;
        char *buf = NULL;
        struct passwd pw;
        int r;

        setpwent();
        while ((r = NEXT_ENT(passwd, getpwent_r, &buf, &size, &pw)) == 1) {
                struct slots_pw *p;

                if (!grow(&m->pw, &cap, m->n_pw, sizeof(*m->pw))) {
                        r = -ENOMEM;
                        break;
                }
                m->pw[m->n_pw].seq = m->n_pw;
                m->pw[m->n_pw].passwd = strdup(pw.pw_passwd ? pw.pw_passwd : "");
                p = &m->pw[m->n_pw++].pw;
                *p = (struct slots_pw){ .uid = pw.pw_uid, .gid = pw.pw_gid, .name = strdup(pw.pw_name),
                                        .dir = strdup(pw.pw_dir ? pw.pw_dir : ""),
                                        .shell = strdup(pw.pw_shell ? pw.pw_shell : "") };
                if (!p->name || !p->dir || !p->shell || !m->pw[m->n_pw - 1].passwd) {
                        r = -ENOMEM;
                        break;
                }
        }
        endpwent();
        free(buf);
        return r == -ENOMEM ? r : 0;
}

static int add_group(struct slots_accountmap *m, const struct group *gr, size_t *cap, size_t *mcap,
                     size_t *ncap)
{
        struct amap_group *g;

        if (!grow(&m->groups, cap, m->n_groups, sizeof(*m->groups)))
                return -ENOMEM;
        g = &m->groups[m->n_groups++];
        *g = (struct amap_group){ .name = strdup(gr->gr_name), .gid = gr->gr_gid };
        if (!g->name)
                return -ENOMEM;
        for (char **u = gr->gr_mem; u && *u; u++) {
                char *c = strdup(*u);

                if (!c || !grow(&m->member_names, ncap, m->n_member_names, sizeof(char *)) ||
                    !grow(&m->members, mcap, m->n_members, sizeof(*m->members))) {
                        free(c);
                        return -ENOMEM;
                }
                m->member_names[m->n_member_names++] = c;
                m->members[m->n_members++] = (struct amap_member){ .user = c, .group = m->n_groups - 1 };
        }
        return 0;
}

/* The group enumeration; *ended: it reached its end (no source failed on the way). */
static int read_group(struct slots_accountmap *m, bool *ended)
{
        size_t cap = 0, mcap = 0, ncap = 0, size = 1024;
        char *buf = NULL;
        struct group gr;
        int r;

        setgrent();
        while ((r = NEXT_ENT(group, getgrent_r, &buf, &size, &gr)) == 1)
                if ((r = add_group(m, &gr, &cap, &mcap, &ncap)) < 0)
                        break;
        endgrent();
        free(buf);
        *ended = r == 0;
        return r == -ENOMEM ? r : 0;
}

static int read_shadow(struct slots_accountmap *m)
{
        size_t cap = 0, size = 1024;
        char *buf = NULL;
        struct spwd sp;
        int r;

        setspent();
        while ((r = NEXT_ENT(spwd, getspent_r, &buf, &size, &sp)) == 1) {
                struct amap_shadow *s;

                if (!grow(&m->shadow, &cap, m->n_shadow, sizeof(*m->shadow))) {
                        r = -ENOMEM;
                        break;
                }
                s = &m->shadow[m->n_shadow];
                *s = (struct amap_shadow){ .name = strdup(sp.sp_namp), .hash = strdup(sp.sp_pwdp ? sp.sp_pwdp : ""),
                                           .seq = m->n_shadow };
                m->n_shadow++;
                if (!s->name || !s->hash) {
                        r = -ENOMEM;
                        break;
                }
        }
        endspent();
        if (buf)
                explicit_bzero(buf, size);
        free(buf);
        return r == -ENOMEM ? r : 0;
}

/* ---- the indexes ---- */

static int cmp_pw(const void *a, const void *b)
{
        const struct amap_user *x = a, *y = b;
        int c = strcmp(x->pw.name, y->pw.name);

        return c ? c : (x->seq > y->seq) - (x->seq < y->seq);
}

static int cmp_group_name(const void *a, const void *b, void *arg)
{
        const struct amap_group *g = arg;
        size_t x = *(const size_t *) a, y = *(const size_t *) b;
        int c = strcmp(g[x].name, g[y].name);

        return c ? c : (x > y) - (x < y);
}

static int cmp_group_gid(const void *a, const void *b, void *arg)
{
        const struct amap_group *g = arg;
        size_t x = *(const size_t *) a, y = *(const size_t *) b;

        return g[x].gid != g[y].gid ? (g[x].gid > g[y].gid) - (g[x].gid < g[y].gid) : (x > y) - (x < y);
}

static int cmp_member(const void *a, const void *b)
{
        const struct amap_member *x = a, *y = b;
        int c = strcmp(x->user, y->user);

        return c ? c : (x->group > y->group) - (x->group < y->group);
}

static int cmp_shadow(const void *a, const void *b)
{
        const struct amap_shadow *x = a, *y = b;
        int c = strcmp(x->name, y->name);

        return c ? c : (x->seq > y->seq) - (x->seq < y->seq);
}

/* The passwd map sorted by name, each name's first entry kept (the one getpwnam answers). */
static void index_passwd(struct slots_accountmap *m)
{
        size_t k = 0;

        if (m->n_pw)
                qsort(m->pw, m->n_pw, sizeof(*m->pw), cmp_pw);
        for (size_t i = 0; i < m->n_pw; i++) {
                if (k && strcmp(m->pw[k - 1].pw.name, m->pw[i].pw.name) == 0) {
                        slots_pw_clear(&m->pw[i].pw);
                        explicit_bzero(m->pw[i].passwd, strlen(m->pw[i].passwd));
                        free(m->pw[i].passwd);
                        continue;
                }
                m->pw[k++] = m->pw[i];
        }
        m->n_pw = k;
}

/* Sorted indexes into groups by cmp, each key's first kept (same(a, b): the same key). */
static size_t *index_groups(struct slots_accountmap *m, int (*cmp)(const void *, const void *, void *),
                            bool (*same)(const struct amap_group *, const struct amap_group *), size_t *n)
{
        size_t *ix = malloc((m->n_groups + 1) * sizeof(*ix)), k = 0;

        *n = 0;
        if (!ix)
                return NULL;
        for (size_t i = 0; i < m->n_groups; i++)
                ix[i] = i;
        qsort_r(ix, m->n_groups, sizeof(*ix), cmp, m->groups);
        for (size_t i = 0; i < m->n_groups; i++)
                if (!k || !same(&m->groups[ix[k - 1]], &m->groups[ix[i]]))
                        ix[k++] = ix[i];
        *n = k;
        return ix;
}

static bool same_name(const struct amap_group *a, const struct amap_group *b)
{
        return strcmp(a->name, b->name) == 0;
}

static bool same_gid(const struct amap_group *a, const struct amap_group *b)
{
        return a->gid == b->gid;
}

static void index_shadow(struct slots_accountmap *m)
{
        size_t k = 0;

        if (m->n_shadow)
                qsort(m->shadow, m->n_shadow, sizeof(*m->shadow), cmp_shadow);
        for (size_t i = 0; i < m->n_shadow; i++) {
                if (k && strcmp(m->shadow[k - 1].name, m->shadow[i].name) == 0) {
                        explicit_bzero(m->shadow[i].hash, strlen(m->shadow[i].hash));
                        free(m->shadow[i].hash);
                        free(m->shadow[i].name);
                        continue;
                }
                m->shadow[k++] = m->shadow[i];
        }
        m->n_shadow = k;
}

static int read_nsswitch(char **text)
{
        struct slots_error e;
        size_t len;
        int r = slots_read_text(AT_FDCWD, NSSWITCH, &(struct slots_read){ .path = NSSWITCH, .max = 1 << 20 },
                                NULL, text, &len, &e);

        if (r < 0)
                *text = NULL;
        return r == -ENOMEM ? r : 0;
}

static int amap_fill(struct slots_accountmap *m, const char *text, unsigned what)
{
        enum slots_nss_enum init = slots_nss_enumerable(text, "initgroups");
        bool ended = false;

        if (init == SLOTS_NSS_ENUM_NO_LINE)
                init = slots_nss_enumerable(text, "group");
        if ((what & SLOTS_AMAP_PASSWD) && slots_nss_enumerable(text, "passwd") >= SLOTS_NSS_ENUM_NAMES) {
                if (read_passwd(m) < 0)
                        return -ENOMEM;
                index_passwd(m);
        }
        if ((what & SLOTS_AMAP_GROUP) && slots_nss_enumerable(text, "group") >= SLOTS_NSS_ENUM_NAMES) {
                if (read_group(m, &ended) < 0 ||
                    !(m->by_name = index_groups(m, cmp_group_name, same_name, &m->n_by_name)) ||
                    !(m->by_gid = index_groups(m, cmp_group_gid, same_gid, &m->n_by_gid)))
                        return -ENOMEM;
                m->groups_complete = ended && init == SLOTS_NSS_ENUM_ALL &&
                                     slots_nss_enumerable(text, "group") == SLOTS_NSS_ENUM_ALL;
                if (m->n_members)
                        qsort(m->members, m->n_members, sizeof(*m->members), cmp_member);
        }
        if ((what & SLOTS_AMAP_SHADOW) && slots_nss_enumerable(text, "shadow") >= SLOTS_NSS_ENUM_NAMES) {
                if (read_shadow(m) < 0)
                        return -ENOMEM;
                index_shadow(m);
        }
        return 0;
}

int slots_accountmap_read(const char *nsswitch, unsigned what, struct slots_accountmap **out,
                          struct slots_error *e)
{
        struct slots_accountmap *m = calloc(1, sizeof(*m));
        char *text = NULL;
        int r = m ? 0 : -ENOMEM;

        *out = NULL;
        if (!r && !nsswitch)
                r = read_nsswitch(&text);
        if (!r)
                r = amap_fill(m, nsswitch ? nsswitch : text, what);
        free(text);
        if (r < 0) {
                slots_accountmap_free(m);
                return slots_error_set(e, r, "the account databases", "cannot read them: out of memory");
        }
        *out = m;
        return 0;
}

void slots_accountmap_free(struct slots_accountmap *m)
{
        if (!m)
                return;
        for (size_t i = 0; i < m->n_pw; i++) {
                slots_pw_clear(&m->pw[i].pw);
                if (m->pw[i].passwd)
                        explicit_bzero(m->pw[i].passwd, strlen(m->pw[i].passwd));
                free(m->pw[i].passwd);
        }
        free(m->pw);
        for (size_t i = 0; i < m->n_groups; i++)
                free(m->groups[i].name);
        free(m->groups);
        free(m->by_name);
        free(m->by_gid);
        for (size_t i = 0; i < m->n_member_names; i++)
                free(m->member_names[i]);
        free(m->member_names);
        free(m->members);
        for (size_t i = 0; i < m->n_shadow; i++) {
                explicit_bzero(m->shadow[i].hash, strlen(m->shadow[i].hash));
                free(m->shadow[i].hash);
                free(m->shadow[i].name);
        }
        free(m->shadow);
        free(m);
}

/* ---- queries ---- */

static const struct slots_pw *find_pw(const struct slots_accountmap *m, const char *name)
{
        size_t lo = 0, hi = m ? m->n_pw : 0;

        while (lo < hi) {
                size_t mid = lo + (hi - lo) / 2;
                int c = strcmp(m->pw[mid].pw.name, name);

                if (c == 0)
                        return &m->pw[mid].pw;
                if (c < 0)
                        lo = mid + 1;
                else
                        hi = mid;
        }
        return NULL;
}

bool slots_amap_listed(const struct slots_accountmap *m, const char *name)
{
        return find_pw(m, name) != NULL;
}

int slots_amap_user(const struct slots_accountmap *m, const char *name, struct slots_pw *out)
{
        const struct slots_pw *p = find_pw(m, name);

        if (!p)
                return slots_nss_user(name, out);
        *out = (struct slots_pw){ .uid = p->uid, .gid = p->gid, .name = strdup(p->name), .dir = strdup(p->dir),
                                  .shell = strdup(p->shell) };
        if (!out->name || !out->dir || !out->shell) {
                slots_pw_clear(out);
                return -ENOMEM;
        }
        return 1;
}

/* The group at by_name (by_gid) matching the key, or NULL. */
int slots_amap_uid(const struct slots_accountmap *m, const char *name, uid_t *uid)
{
        const struct slots_pw *p = find_pw(m, name);
        struct slots_pw pw = { 0 };
        int r;

        if (p) {
                *uid = p->uid;
                return 1;
        }
        r = slots_nss_user(name, &pw);
        if (r > 0)
                *uid = pw.uid;
        slots_pw_clear(&pw);
        return r;
}

static const struct amap_group *find_group(const struct slots_accountmap *m, const char *name, gid_t gid)
{
        const size_t *ix = !m ? NULL : name ? m->by_name : m->by_gid;
        size_t lo = 0, hi = !ix ? 0 : name ? m->n_by_name : m->n_by_gid;

        while (lo < hi) {
                size_t mid = lo + (hi - lo) / 2;
                const struct amap_group *g = &m->groups[ix[mid]];
                int c = name ? strcmp(g->name, name) : (g->gid > gid) - (g->gid < gid);

                if (c == 0)
                        return g;
                if (c < 0)
                        lo = mid + 1;
                else
                        hi = mid;
        }
        return NULL;
}

int slots_amap_group(const struct slots_accountmap *m, const char *name, gid_t *gid)
{
        const struct amap_group *g = find_group(m, name, 0);
        struct slots_gr gr = { 0 };
        int r;

        if (g) {
                *gid = g->gid;
                return 1;
        }
        r = slots_nss_group(name, &gr);
        if (r > 0)
                *gid = gr.gid;
        slots_gr_clear(&gr);
        return r;
}

int slots_amap_gid(const struct slots_accountmap *m, gid_t gid, char **name)
{
        const struct amap_group *g = find_group(m, NULL, gid);
        struct slots_gr gr = { 0 };
        int r;

        if (g)
                r = 1, *name = strdup(g->name);
        else if ((r = slots_nss_gid(gid, &gr)) > 0)
                *name = strdup(gr.name);
        if (!g && r > 0)
                slots_gr_clear(&gr);
        if (r > 0 && !*name)
                return -ENOMEM;
        return r;
}

static bool has_gid(const gid_t *g, int n, gid_t gid)
{
        for (int i = 0; i < n; i++)
                if (g[i] == gid)
                        return true;
        return false;
}

int slots_amap_grouplist(const struct slots_accountmap *m, const char *name, gid_t gid, gid_t **groups, int *n)
{
        size_t lo = 0, hi, first;
        gid_t *g;
        int k = 1;

        if (!m || !m->groups_complete)
                return slots_grouplist(name, gid, groups, n);
        for (hi = m->n_members; lo < hi;) {
                size_t mid = lo + (hi - lo) / 2;

                if (strcmp(m->members[mid].user, name) < 0)
                        lo = mid + 1;
                else
                        hi = mid;
        }
        first = lo;
        while (hi < m->n_members && strcmp(m->members[hi].user, name) == 0)
                hi++;
        g = malloc((hi - first + 1) * sizeof(*g));
        if (!g)
                return -ENOMEM;
        g[0] = gid;
        for (size_t i = first; i < hi; i++) {
                gid_t other = m->groups[m->members[i].group].gid;

                if (!has_gid(g, k, other))
                        g[k++] = other;
        }
        *groups = g;
        *n = k;
        return 0;
}

int slots_amap_passwd_field(const struct slots_accountmap *m, const char *name, char **field)
{
        const struct slots_pw *p = find_pw(m, name);

        if (!p)
                return 0;
        /* pw is the first member of its amap_user. */
        *field = strdup(((const struct amap_user *) (const void *) p)->passwd);
        return *field ? 1 : -ENOMEM;
}

int slots_amap_shadow(const struct slots_accountmap *m, const char *name, char **hash)
{
        size_t lo = 0, hi = m ? m->n_shadow : 0;

        while (lo < hi) {
                size_t mid = lo + (hi - lo) / 2;
                int c = strcmp(m->shadow[mid].name, name);

                if (c == 0) {
                        *hash = strdup(m->shadow[mid].hash);
                        return *hash ? 1 : -ENOMEM;
                }
                if (c < 0)
                        lo = mid + 1;
                else
                        hi = mid;
        }
        return 0;
}
