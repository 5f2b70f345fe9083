/* passwd, group, shadow and gshadow as text: parse, look up, plan additions, render (written by accounts-write.c). */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "accounts.h"
#include "fsutil.h"
#include "path.h"

#define ACCT_FILE_MAX ((size_t) 256 << 20)
#define NOT_FOUND SIZE_MAX

/* ---- small hash indexes: name -> entry, id -> entry (first one wins) ---- */

struct nslot {
        const char *key;
        size_t val;
};

struct nidx {
        struct nslot *t;
        size_t cap, n;
};

struct islot {
        uint32_t key;
        bool used;
        size_t val;
};

struct iidx {
        struct islot *t;
        size_t cap, n;
};

static size_t hash_str(const char *s)
{
        size_t h = 1469598103934665603ULL;

        for (; *s; s++)
                h = (h ^ (unsigned char) *s) * 1099511628211ULL;
        return h;
}

static size_t hash_id(uint32_t id)
{
        uint64_t x = id * 0x9e3779b97f4a7c15ULL;

        return (size_t) (x ^ (x >> 29));
}

static size_t nidx_get(const struct nidx *ix, const char *key)
{
        if (!ix->cap)
                return NOT_FOUND;
        for (size_t i = hash_str(key) & (ix->cap - 1);; i = (i + 1) & (ix->cap - 1)) {
                if (!ix->t[i].key)
                        return NOT_FOUND;
                if (strcmp(ix->t[i].key, key) == 0)
                        return ix->t[i].val;
        }
}

static int nidx_put(struct nidx *ix, const char *key, size_t val)
{
        if ((ix->n + 1) * 2 > ix->cap) {
                struct nidx big = { .cap = ix->cap ? ix->cap * 2 : 64 };

                big.t = calloc(big.cap, sizeof(*big.t));
                if (!big.t)
                        return -ENOMEM;
                for (size_t i = 0; i < ix->cap; i++)
                        if (ix->t[i].key)
                                (void) nidx_put(&big, ix->t[i].key, ix->t[i].val);
                free(ix->t);
                *ix = big;
        }
        for (size_t i = hash_str(key) & (ix->cap - 1);; i = (i + 1) & (ix->cap - 1)) {
                if (!ix->t[i].key) {
                        ix->t[i] = (struct nslot){ .key = key, .val = val };
                        ix->n++;
                        return 0;
                }
                if (strcmp(ix->t[i].key, key) == 0)
                        return 0;       /* the first entry of a name wins */
        }
}

static size_t iidx_get(const struct iidx *ix, uint32_t key)
{
        if (!ix->cap)
                return NOT_FOUND;
        for (size_t i = hash_id(key) & (ix->cap - 1);; i = (i + 1) & (ix->cap - 1)) {
                if (!ix->t[i].used)
                        return NOT_FOUND;
                if (ix->t[i].key == key)
                        return ix->t[i].val;
        }
}

static int iidx_put(struct iidx *ix, uint32_t key, size_t val)
{
        if ((ix->n + 1) * 2 > ix->cap) {
                struct iidx big = { .cap = ix->cap ? ix->cap * 2 : 64 };

                big.t = calloc(big.cap, sizeof(*big.t));
                if (!big.t)
                        return -ENOMEM;
                for (size_t i = 0; i < ix->cap; i++)
                        if (ix->t[i].used)
                                (void) iidx_put(&big, ix->t[i].key, ix->t[i].val);
                free(ix->t);
                *ix = big;
        }
        for (size_t i = hash_id(key) & (ix->cap - 1);; i = (i + 1) & (ix->cap - 1)) {
                if (!ix->t[i].used) {
                        ix->t[i] = (struct islot){ .key = key, .used = true, .val = val };
                        ix->n++;
                        return 0;
                }
                if (ix->t[i].key == key)
                        return 0;
        }
}

/* ---- the files ---- */

struct line {
        const char *p;                  /* into the file's text, or own */
        size_t len;
        char *own;                      /* a line added or rewritten here */
        size_t cap;                     /* bytes allocated at own, when append_member grew it; else 0 */
        struct nidx *members;           /* the members field as a set of names, once a long one was asked */
};

struct dbfile {
        char *text;
        size_t len;
        bool exists, changed;
        struct line *lines;
        size_t n, cap;
        size_t insert_at;               /* where new lines go: before the trailing NIS lines */
};

struct uent {
        struct slots_acct_user pub;
        char *buf;
        size_t line;
};

struct gent {
        struct slots_acct_group pub;
        char *buf;
        size_t line;
};

/* shadow and gshadow: only the name and the line matter here. */
struct sent {
        char *name;
        size_t line;
};

struct slots_accounts {
        struct dbfile f[SLOTS_ACCT_NFILES];
        struct uent *users;
        size_t n_users, cap_users;
        struct gent *groups;
        size_t n_groups, cap_groups;
        struct sent *sh[2];             /* shadow, gshadow */
        size_t n_sh[2], cap_sh[2];
        struct nidx user_by_name, group_by_name, sh_by_name[2];
        struct iidx user_by_uid, group_by_gid;
};

static const char *const file_names[SLOTS_ACCT_NFILES] = { "passwd", "group", "shadow", "gshadow" };

const char *slots_accounts_file_name(enum slots_acct_file f)
{
        return file_names[f];
}

struct slots_accounts *slots_accounts_new(void)
{
        return calloc(1, sizeof(struct slots_accounts));
}

static void members_free(struct line *l)
{
        for (size_t i = 0; l->members && i < l->members->cap; i++)
                free((char *) l->members->t[i].key);
        if (l->members)
                free(l->members->t);
        free(l->members);
        l->members = NULL;
}

static void dbfile_clear(struct dbfile *d)
{
        for (size_t i = 0; i < d->n; i++) {
                free(d->lines[i].own);
                members_free(&d->lines[i]);
        }
        free(d->lines);
        free(d->text);
        memset(d, 0, sizeof(*d));
}

static void entries_clear(struct slots_accounts *a, int which)
{
        /* which: -1 all, else the file whose entries go */
        if (which < 0 || which == SLOTS_ACCT_PASSWD) {
                for (size_t i = 0; i < a->n_users; i++)
                        free(a->users[i].buf);
                free(a->users);
                a->users = NULL;
                a->n_users = a->cap_users = 0;
                free(a->user_by_name.t);
                free(a->user_by_uid.t);
                memset(&a->user_by_name, 0, sizeof(a->user_by_name));
                memset(&a->user_by_uid, 0, sizeof(a->user_by_uid));
        }
        if (which < 0 || which == SLOTS_ACCT_GROUP) {
                for (size_t i = 0; i < a->n_groups; i++)
                        free(a->groups[i].buf);
                free(a->groups);
                a->groups = NULL;
                a->n_groups = a->cap_groups = 0;
                free(a->group_by_name.t);
                free(a->group_by_gid.t);
                memset(&a->group_by_name, 0, sizeof(a->group_by_name));
                memset(&a->group_by_gid, 0, sizeof(a->group_by_gid));
        }
        for (int k = 0; k < 2; k++) {
                if (which >= 0 && which != SLOTS_ACCT_SHADOW + k)
                        continue;
                for (size_t i = 0; i < a->n_sh[k]; i++)
                        free(a->sh[k][i].name);
                free(a->sh[k]);
                a->sh[k] = NULL;
                a->n_sh[k] = a->cap_sh[k] = 0;
                free(a->sh_by_name[k].t);
                memset(&a->sh_by_name[k], 0, sizeof(a->sh_by_name[k]));
        }
}

void slots_accounts_free(struct slots_accounts *a)
{
        if (!a)
                return;
        entries_clear(a, -1);
        for (int i = 0; i < SLOTS_ACCT_NFILES; i++)
                dbfile_clear(&a->f[i]);
        free(a);
}

static int grow(void **arr, size_t *cap, size_t need, size_t size)
{
        void *p;
        size_t ncap;

        if (need <= *cap)
                return 0;
        ncap = *cap ? *cap * 2 : 64;
        while (ncap < need)
                ncap *= 2;
        p = realloc(*arr, ncap * size);
        if (!p)
                return -ENOMEM;
        *arr = p;
        *cap = ncap;
        return 0;
}

/* Splits buf in place at ':' into at most max fields; returns the number of fields. */
static size_t split_fields(char *buf, char **fields, size_t max)
{
        size_t n = 0;
        char *p = buf;

        for (;;) {
                char *c = strchr(p, ':');

                if (n < max)
                        fields[n] = p;
                n++;
                if (!c)
                        break;
                *c = '\0';
                p = c + 1;
        }
        return n;
}

/* Decimal id as the files hold it: digits only, below (uint32_t) -1. */
static bool parse_id(const char *s, uint32_t *out)
{
        uint64_t v = 0;

        if (!*s)
                return false;
        for (; *s; s++) {
                if (*s < '0' || *s > '9')
                        return false;
                v = v * 10 + (uint64_t) (*s - '0');
                if (v >= UINT32_MAX)
                        return false;
        }
        *out = (uint32_t) v;
        return true;
}

static bool nis_line(const struct line *l)
{
        return l->len > 0 && (l->p[0] == '+' || l->p[0] == '-');
}

/* Indexes one line of file f; lines without a name (comments, blank, NIS) are only kept. */
static int index_line(struct slots_accounts *a, enum slots_acct_file f, size_t li)
{
        const struct line *l = &a->f[f].lines[li];
        char *buf, *fld[8];
        size_t nf;
        int r = 0;

        if (l->len == 0 || l->p[0] == '#' || nis_line(l))
                return 0;
        buf = strndup(l->p, l->len);
        if (!buf)
                return -ENOMEM;
        nf = split_fields(buf, fld, 8);
        if (!fld[0][0]) {
                free(buf);
                return 0;
        }
        if (f == SLOTS_ACCT_PASSWD) {
                struct uent *u;
                uint32_t uid = 0, gid = 0;

                if (grow((void **) &a->users, &a->cap_users, a->n_users + 1, sizeof(*a->users)) < 0)
                        goto oom;
                u = &a->users[a->n_users];
                memset(u, 0, sizeof(*u));
                u->buf = buf;
                u->line = li;
                u->pub.name = fld[0];
                u->pub.passwd = nf >= 2 ? fld[1] : "";
                u->pub.line = (unsigned) li + 1;
                u->pub.valid = nf == 7 && parse_id(fld[2], &uid) && parse_id(fld[3], &gid);
                u->pub.uid = uid;
                u->pub.gid = gid;
                u->pub.dir = nf == 7 ? fld[5] : "";
                u->pub.shell = nf == 7 ? fld[6] : "";
                a->n_users++;
                r = nidx_put(&a->user_by_name, u->pub.name, a->n_users - 1);
                if (r == 0 && u->pub.valid)
                        r = iidx_put(&a->user_by_uid, uid, a->n_users - 1);
                return r;
        }
        if (f == SLOTS_ACCT_GROUP) {
                struct gent *g;
                uint32_t gid = 0;

                if (grow((void **) &a->groups, &a->cap_groups, a->n_groups + 1, sizeof(*a->groups)) < 0)
                        goto oom;
                g = &a->groups[a->n_groups];
                memset(g, 0, sizeof(*g));
                g->buf = buf;
                g->line = li;
                g->pub.name = fld[0];
                g->pub.line = (unsigned) li + 1;
                g->pub.valid = nf == 4 && parse_id(fld[2], &gid);
                g->pub.gid = gid;
                a->n_groups++;
                r = nidx_put(&a->group_by_name, g->pub.name, a->n_groups - 1);
                if (r == 0 && g->pub.valid)
                        r = iidx_put(&a->group_by_gid, gid, a->n_groups - 1);
                return r;
        }
        {
                int k = f - SLOTS_ACCT_SHADOW;

                if (grow((void **) &a->sh[k], &a->cap_sh[k], a->n_sh[k] + 1, sizeof(*a->sh[k])) < 0)
                        goto oom;
                a->sh[k][a->n_sh[k]] = (struct sent){ .name = buf, .line = li };
                a->n_sh[k]++;
                return nidx_put(&a->sh_by_name[k], buf, a->n_sh[k] - 1);
        }
oom:
        free(buf);
        return -ENOMEM;
}

int slots_accounts_set_text(struct slots_accounts *a, enum slots_acct_file f, const char *text, size_t len,
                            bool exists)
{
        struct dbfile *d = &a->f[f];
        const char *p, *end;
        int r;

        entries_clear(a, (int) f);
        dbfile_clear(d);
        d->text = malloc(len + 1);
        if (!d->text)
                return -ENOMEM;
        memcpy(d->text, text, len);
        d->text[len] = '\0';
        d->len = len;
        d->exists = exists;
        for (p = d->text, end = d->text + len; p < end;) {
                const char *eol = memchr(p, '\n', (size_t) (end - p));
                size_t n = eol ? (size_t) (eol - p) : (size_t) (end - p);

                if (grow((void **) &d->lines, &d->cap, d->n + 1, sizeof(*d->lines)) < 0)
                        return -ENOMEM;
                d->lines[d->n++] = (struct line){ .p = p, .len = n };
                p += n + 1;
        }
        d->insert_at = 0;
        for (size_t i = d->n; i > 0; i--)
                if (!nis_line(&d->lines[i - 1])) {
                        d->insert_at = i;
                        break;
                }
        for (size_t i = 0; i < d->n; i++) {
                r = index_line(a, f, i);
                if (r < 0)
                        return r;
        }
        return 0;
}

int slots_accounts_load(int etcfd, const char *etc_display, struct slots_accounts **ret,
                        struct slots_error *e)
{
        struct slots_accounts *a = slots_accounts_new();
        char display[4096];
        int r = 0;

        if (!a)
                return slots_error_set(e, -ENOMEM, etc_display, "out of memory");
        for (int f = 0; f < SLOTS_ACCT_NFILES; f++) {
                struct slots_read how = { .max = ACCT_FILE_MAX, .content_fails = true };
                char *text = NULL;
                size_t len = 0;

                slots_path_join_to(display, sizeof(display), etc_display, file_names[f]);
                how.path = display;
                r = slots_read_text(etcfd, file_names[f], &how, NULL, &text, &len, e);
                if (r == -ENOENT) {
                        slots_error_clear(e);
                        r = slots_accounts_set_text(a, (enum slots_acct_file) f, "", 0, false);
                        if (r < 0)
                                goto oom;
                        continue;
                }
                /* Never read through, never replaced: what a symlink points at may be anyone's file. */
                if (r == -ELOOP || r == -EINVAL)
                        slots_error_fix(e, "put the account file itself at %s (shadow-utils keeps the previous one "
                                        "as %s-), then run slots-provision again", display, display);
                else if (r == -EFBIG || r == -EBADMSG)
                        slots_error_fix(e, "repair it (vipw, vigr) before provisioning");
                if (r < 0)
                        goto fail;
                r = slots_accounts_set_text(a, (enum slots_acct_file) f, text, len, true);
                free(text);
                if (r < 0)
                        goto oom;
        }
        *ret = a;
        return 0;
oom:
        slots_error_set(e, r, etc_display, "out of memory");
fail:
        slots_accounts_free(a);
        return r;
}

const struct slots_acct_user *slots_accounts_user(const struct slots_accounts *a, const char *name)
{
        size_t i = nidx_get(&a->user_by_name, name);

        return i == NOT_FOUND ? NULL : &a->users[i].pub;
}

const struct slots_acct_user *slots_accounts_user_by_uid(const struct slots_accounts *a, uid_t uid)
{
        size_t i = iidx_get(&a->user_by_uid, (uint32_t) uid);

        return i == NOT_FOUND ? NULL : &a->users[i].pub;
}

const struct slots_acct_group *slots_accounts_group(const struct slots_accounts *a, const char *name)
{
        size_t i = nidx_get(&a->group_by_name, name);

        return i == NOT_FOUND ? NULL : &a->groups[i].pub;
}

const struct slots_acct_group *slots_accounts_group_by_gid(const struct slots_accounts *a, gid_t gid)
{
        size_t i = iidx_get(&a->group_by_gid, (uint32_t) gid);

        return i == NOT_FOUND ? NULL : &a->groups[i].pub;
}

bool slots_accounts_has_shadow(const struct slots_accounts *a, const char *name)
{
        return nidx_get(&a->sh_by_name[0], name) != NOT_FOUND;
}

bool slots_accounts_has_gshadow(const struct slots_accounts *a, const char *name)
{
        return nidx_get(&a->sh_by_name[1], name) != NOT_FOUND;
}

size_t slots_accounts_n_groups(const struct slots_accounts *a)
{
        return a->n_groups;
}

const struct slots_acct_group *slots_accounts_group_at(const struct slots_accounts *a, size_t i)
{
        return i < a->n_groups ? &a->groups[i].pub : NULL;
}

int slots_accounts_password(const struct slots_accounts *a, const char *name, char **out)
{
        size_t i = nidx_get(&a->sh_by_name[0], name);
        const struct line *l;
        const char *p, *end, *q;

        *out = NULL;
        if (i == NOT_FOUND)
                return 0;
        l = &a->f[SLOTS_ACCT_SHADOW].lines[a->sh[0][i].line];
        p = memchr(l->p, ':', l->len);
        if (!p)
                return 0;
        p++;
        end = l->p + l->len;
        q = memchr(p, ':', (size_t) (end - p));
        *out = strndup(p, (size_t) ((q ? q : end) - p));
        return *out ? 0 : -ENOMEM;
}

/* The fourth field (members) of a group or gshadow line; NULL when the line does not have four fields. */
static const char *members_field(const struct line *l, size_t *len)
{
        const char *p = l->p, *end = l->p + l->len;

        /* Exactly three colons: the members follow the third (memchr: the list can be long). */
        for (int colons = 0; colons < 3; colons++) {
                const char *q = memchr(p, ':', (size_t) (end - p));

                if (!q)
                        return NULL;
                p = q + 1;
        }
        if (memchr(p, ':', (size_t) (end - p)))
                return NULL;
        *len = (size_t) (end - p);
        return p;
}

static bool list_has(const char *list, size_t len, const char *name)
{
        size_t n = strlen(name);
        const char *p = list, *end = list + len;

        /*
         * Finds name with memmem and accepts a hit only between commas or the
         * ends: a memchr and memcmp per member would make a pool's 1,000 checks
         * of its shared group a fifth of provisioning's instructions.
         */
        if (n == 0) {
                while (p <= end) {
                        const char *c = memchr(p, ',', (size_t) (end - p));

                        if ((c ? c : end) == p)
                                return true;
                        if (!c)
                                break;
                        p = c + 1;
                }
                return false;
        }
        while (p < end) {
                const char *hit = memmem(p, (size_t) (end - p), name, n);

                if (!hit)
                        return false;
                if ((hit == list || hit[-1] == ',') && (hit + n == end || hit[n] == ','))
                        return true;
                p = hit + 1;
        }
        return false;
}

static int members_add(struct nidx *set, const char *name, size_t n)
{
        char *k = strndup(name, n);
        int r;

        if (!k)
                return -ENOMEM;
        if (nidx_get(set, k) != NOT_FOUND) {
                free(k);
                return 0;
        }
        r = nidx_put(set, k, 0);
        if (r < 0)
                free(k);
        return r;
}

/*
 * Whether user is in the members field m of line l.  A long list is made a set
 * of names the first time it is asked and kept with the line (append_member
 * adds to it): a pool's n checks of its shared group are then n lookups, not n
 * scans of an n-name list.  Without memory the list is scanned.
 */
static bool line_has(struct line *l, const char *m, size_t mlen, const char *user)
{
        if (!l->members && mlen >= 256) {
                const char *p = m, *end = m + mlen;

                l->members = calloc(1, sizeof(*l->members));
                for (;;) {
                        const char *c = memchr(p, ',', (size_t) (end - p));

                        if (!l->members || members_add(l->members, p, (size_t) ((c ? c : end) - p)) < 0) {
                                members_free(l);
                                break;
                        }
                        if (!c)
                                break;
                        p = c + 1;
                }
        }
        if (l->members)
                return nidx_get(l->members, user) != NOT_FOUND;
        return list_has(m, mlen, user);
}

bool slots_accounts_is_member(const struct slots_accounts *a, const char *group, const char *user)
{
        size_t i = nidx_get(&a->group_by_name, group), len;
        const char *m;

        if (i == NOT_FOUND)
                return false;
        m = members_field(&a->f[SLOTS_ACCT_GROUP].lines[a->groups[i].line], &len);
        return m && line_has(&a->f[SLOTS_ACCT_GROUP].lines[a->groups[i].line], m, len, user);
}

bool slots_accounts_gshadow_lists(const struct slots_accounts *a, const char *group, const char *user)
{
        size_t si = nidx_get(&a->sh_by_name[1], group), len;
        const char *m;

        if (si == NOT_FOUND)
                return true;
        m = members_field(&a->f[SLOTS_ACCT_GSHADOW].lines[a->sh[1][si].line], &len);
        /* A line this code cannot parse is kept as it is, never rewritten. */
        return !m || line_has(&a->f[SLOTS_ACCT_GSHADOW].lines[a->sh[1][si].line], m, len, user);
}

static bool field_ok(const char *s)
{
        return s && !strpbrk(s, ":,\n");
}

/* Inserts a new line (taking own) before the trailing NIS lines of f and indexes it. */
static int insert_line(struct slots_accounts *a, enum slots_acct_file f, char *own)
{
        struct dbfile *d = &a->f[f];
        size_t at = d->insert_at;
        int r;

        if (grow((void **) &d->lines, &d->cap, d->n + 1, sizeof(*d->lines)) < 0) {
                free(own);
                return -ENOMEM;
        }
        memmove(&d->lines[at + 1], &d->lines[at], (d->n - at) * sizeof(*d->lines));
        d->lines[at] = (struct line){ .p = own, .len = strlen(own), .own = own };
        d->n++;
        d->insert_at++;
        d->changed = true;
        r = index_line(a, f, at);
        /* Lines added here have no line number in the file that was read. */
        if (r == 0 && f == SLOTS_ACCT_PASSWD)
                a->users[a->n_users - 1].pub.line = 0;
        if (r == 0 && f == SLOTS_ACCT_GROUP)
                a->groups[a->n_groups - 1].pub.line = 0;
        return r;
}

static int add_line(struct slots_accounts *a, enum slots_acct_file f, const char *fmt, ...)
        __attribute__((format(printf, 3, 4)));

static int add_line(struct slots_accounts *a, enum slots_acct_file f, const char *fmt, ...)
{
        va_list ap;
        char *s;
        int n;

        va_start(ap, fmt);
        n = vasprintf(&s, fmt, ap);
        va_end(ap);
        if (n < 0)
                return -ENOMEM;
        return insert_line(a, f, s);
}

static void shadow_day(char *buf, size_t size, long lastchg)
{
        if (lastchg >= 0)
                snprintf(buf, size, "%ld", lastchg);
        else
                buf[0] = '\0';
}

int slots_accounts_add_shadow(struct slots_accounts *a, const char *name, long lastchg)
{
        char day[32];

        if (!field_ok(name) || !name[0])
                return -EINVAL;
        if (slots_accounts_has_shadow(a, name))
                return -EEXIST;
        shadow_day(day, sizeof(day), lastchg);
        return add_line(a, SLOTS_ACCT_SHADOW, "%s:!:%s::::::", name, day);
}

int slots_accounts_add_gshadow(struct slots_accounts *a, const char *name)
{
        size_t gi, mlen = 0;
        const char *m = NULL;

        if (!field_ok(name) || !name[0])
                return -EINVAL;
        if (slots_accounts_has_gshadow(a, name))
                return -EEXIST;
        /* The members the group line lists, as grpconv would copy them. */
        gi = nidx_get(&a->group_by_name, name);
        if (gi != NOT_FOUND)
                m = members_field(&a->f[SLOTS_ACCT_GROUP].lines[a->groups[gi].line], &mlen);
        return add_line(a, SLOTS_ACCT_GSHADOW, "%s:!::%.*s", name, m ? (int) mlen : 0, m ? m : "");
}

int slots_accounts_add_user(struct slots_accounts *a, const char *name, uid_t uid, gid_t gid,
                            const char *home, const char *shell, long lastchg)
{
        int r;

        if (!field_ok(name) || !name[0] || !field_ok(home) || !field_ok(shell))
                return -EINVAL;
        if (slots_accounts_user(a, name))
                return -EEXIST;
        r = add_line(a, SLOTS_ACCT_PASSWD, "%s:x:%u:%u::%s:%s", name, (unsigned) uid, (unsigned) gid, home,
                     shell);
        if (r == 0 && !slots_accounts_has_shadow(a, name))
                r = slots_accounts_add_shadow(a, name, lastchg);
        return r;
}

int slots_accounts_add_group(struct slots_accounts *a, const char *name, gid_t gid)
{
        int r;

        if (!field_ok(name) || !name[0])
                return -EINVAL;
        if (slots_accounts_group(a, name))
                return -EEXIST;
        r = add_line(a, SLOTS_ACCT_GROUP, "%s:x:%u:", name, (unsigned) gid);
        if (r == 0 && !slots_accounts_has_gshadow(a, name))
                r = slots_accounts_add_gshadow(a, name);
        return r;
}

/* Appends user to the members field of line li of f. */
static int append_member(struct slots_accounts *a, enum slots_acct_file f, size_t li, const char *user)
{
        struct line *l = &a->f[f].lines[li];
        const char *m;
        size_t mlen, ulen, n;
        char *s;

        m = members_field(l, &mlen);
        if (!m)
                return -EBADMSG;
        if (line_has(l, m, mlen, user))
                return 0;
        /*
         * Appended in place when this function grew the line before (a pool adds
         * its members one by one), else copied once into room for more, so that a
         * pool of n members costs n appends, not n rebuilds of the whole line.
         */
        ulen = strlen(user);
        n = l->len + 1 + ulen + 1;
        if (l->cap && l->own == l->p && n <= l->cap) {
                s = l->own;
        } else {
                size_t cap = n < 128 ? 256 : 2 * n;

                s = malloc(cap);
                if (!s)
                        return -ENOMEM;
                memcpy(s, l->p, l->len);
                free(l->own);
                l->own = s;
                l->p = s;
                l->cap = cap;
        }
        n = l->len;
        if (mlen)
                s[n++] = ',';
        memcpy(s + n, user, ulen + 1);
        l->len = n + ulen;
        a->f[f].changed = true;
        if (l->members && members_add(l->members, user, ulen) < 0)
                members_free(l);        /* built again, or scanned, when next asked */
        return 0;
}

int slots_accounts_add_member(struct slots_accounts *a, const char *group, const char *user)
{
        size_t gi = nidx_get(&a->group_by_name, group), si;
        int r;

        if (!field_ok(user) || !user[0])
                return -EINVAL;
        if (gi == NOT_FOUND)
                return -ENOENT;
        r = append_member(a, SLOTS_ACCT_GROUP, a->groups[gi].line, user);
        if (r < 0)
                return r;
        si = nidx_get(&a->sh_by_name[1], group);
        if (si != NOT_FOUND)
                r = append_member(a, SLOTS_ACCT_GSHADOW, a->sh[1][si].line, user);
        return r;
}

bool slots_accounts_changed(const struct slots_accounts *a, enum slots_acct_file f)
{
        return a->f[f].changed;
}

char *slots_accounts_render(const struct slots_accounts *a, enum slots_acct_file f, size_t *len)
{
        const struct dbfile *d = &a->f[f];
        size_t size = 1, n = 0;
        char *out;

        for (size_t i = 0; i < d->n; i++)
                size += d->lines[i].len + 1;
        out = malloc(size);
        if (!out)
                return NULL;
        for (size_t i = 0; i < d->n; i++) {
                memcpy(out + n, d->lines[i].p, d->lines[i].len);
                n += d->lines[i].len;
                /* Every line ends in a newline; only an unchanged file could lack the last one. */
                if (i + 1 < d->n || d->changed || (d->len > 0 && d->text[d->len - 1] == '\n'))
                        out[n++] = '\n';
        }
        out[n] = '\0';
        *len = n;
        return out;
}
