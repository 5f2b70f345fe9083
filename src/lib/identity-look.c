/* The facts of a slot account that identity.c judges, looked up: its password fields, groups, subordinate ids. */
#include <crypt.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <pwd.h>
#include <shadow.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fsutil.h"
#include "identity-look.h"
#include "nss.h"
#include "privdrop.h"

#define PWFIELD_BUF_MAX ((size_t) 1 << 20)
#define GROUP_BUF_MAX ((size_t) 1 << 24)        /* where nss.c's lookups stop growing */

/* One lookup by name into a buffer that grows on ERANGE; the field copied into *out. */
static int lookup(const char *name, bool shadow, char **out)
{
        size_t size = 1024;

        *out = NULL;
        for (;;) {
                struct passwd pw, *pres = NULL;
                struct spwd sp, *sres = NULL;
                const char *field = NULL;
                char *buf = malloc(size);
                int r;

                if (!buf)
                        return -ENOMEM;
                r = shadow ? getspnam_r(name, &sp, buf, size, &sres) : getpwnam_r(name, &pw, buf, size, &pres);
                if (r == ERANGE && size < PWFIELD_BUF_MAX) {
                        free(buf);
                        size *= 2;
                        continue;
                }
                if (sres)
                        field = sres->sp_pwdp ? sres->sp_pwdp : "";
                else if (pres)
                        field = pres->pw_passwd ? pres->pw_passwd : "";
                if (field)
                        *out = strdup(field);
                explicit_bzero(buf, size);
                free(buf);
                /* Only glibc's 0 with no entry is "not found" (as nss.c takes it). */
                if (!field)
                        return r ? -r : 0;
                return *out ? 1 : -ENOMEM;
        }
}

int slots_pwfield_passwd(const char *name, char **out)
{
        return lookup(name, false, out);
}

int slots_pwfield_shadow(const char *name, char **out)
{
        /* Unreadable /etc/shadow may answer "no entry": that is no answer. */
        if (geteuid() != 0) {
                *out = NULL;
                return -EACCES;
        }
        return lookup(name, true, out);
}

int slots_pwfields_lookup(const char *name, struct slots_pwfields *f)
{
        int r;

        memset(f, 0, sizeof(*f));
        r = slots_pwfield_passwd(name, &f->passwd);
        if (r <= 0)
                return r < 0 ? r : -ENOENT;
        r = slots_pwfield_shadow(name, &f->shadow);
        if (r == -ENOMEM) {
                slots_pwfields_clear(f);
                return r;
        }
        f->shadow_known = r >= 0;
        f->shadow_err = r < 0 ? r : 0;
        return 0;
}

static void clear_field(char **p)
{
        if (*p)
                explicit_bzero(*p, strlen(*p));
        free(*p);
        *p = NULL;
}

void slots_pwfields_clear(struct slots_pwfields *f)
{
        clear_field(&f->passwd);
        clear_field(&f->shadow);
}

enum slots_hash_method slots_hash_method_of(const char *hash, bool *have_lib)
{
        static int (*fn)(const char *);
        static bool tried;
        int cs;

        if (!tried) {
                void *h = dlopen("libcrypt.so.1", RTLD_NOW | RTLD_LOCAL);

                tried = true;
                if (h)
                        *(void **) &fn = dlsym(h, "crypt_checksalt");
        }
        *have_lib = fn != NULL;
        if (!fn)
                return SLOTS_HASH_UNASKED;
        cs = fn(hash);
        return cs == CRYPT_SALT_INVALID || cs == CRYPT_SALT_METHOD_DISABLED ? SLOTS_HASH_NO_METHOD : SLOTS_HASH_METHOD;
}

void slots_pwfields_into(const struct slots_pwfields *f, struct slots_identity *id, bool *have_lib)
{
        enum slots_pw_source src;
        const char *h;
        bool lib = true;

        id->passwd_field = f->passwd;
        id->shadow_field = f->shadow;
        id->shadow_known = f->shadow_known;
        h = slots_identity_password(id, &src);
        id->hash_method = SLOTS_HASH_UNASKED;
        if (h && h[0] && h[0] != '!' && h[0] != '*')
                id->hash_method = slots_hash_method_of(h, &lib);
        if (have_lib)
                *have_lib = lib;
}

int slots_account_text(int rootfd, const char *path, char **text)
{
        const struct slots_read how = { .path = path, .max = (size_t) 64 << 20, .content_fails = true };
        size_t len = 0;
        struct slots_error e;
        int fd, r;

        *text = NULL;
        fd = slots_open_in(rootfd, path, O_RDONLY | O_NONBLOCK | O_NOCTTY);
        if (fd == -ENOENT)
                return 0;
        if (fd < 0)
                return fd;
        r = slots_read_text_fd(fd, &how, NULL, text, &len, &e);
        slots_close(fd);
        if (r < 0) {
                free(*text);
                *text = NULL;
        }
        return r;
}

/*
 * Whether an account file's text (r: slots_account_text()'s answer) has an entry "name:": 1 yes, 0
 * no (the name service's then: a directory's), -errno when the file could not be read.
 */
static int local_entry(int r, const char *text, const char *name)
{
        size_t nl = strlen(name);

        for (const char *p = text; r == 0 && p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL)
                if (strncmp(p, name, nl) == 0 && p[nl] == ':')
                        r = 1;
        return r;
}

/*
 * A lookup buffer that holds the longest line of the group file's text as glibc's files
 * module parses it: the line, then a pointer to each member (one at most each two bytes).
 * Other sources that need more still get it: the lookup grows on ERANGE, up to nss.c's cap.
 */
static size_t group_buffer(const char *text)
{
        size_t longest = 0, need;

        for (const char *p = text; p && *p;) {
                const char *nl = strchr(p, '\n');
                size_t l = nl ? (size_t) (nl - p) : strlen(p);

                if (l > longest)
                        longest = l;
                p = nl ? nl + 1 : NULL;
        }
        need = longest + 1 + (longest / 2 + 3) * sizeof(char *);
        return need < GROUP_BUF_MAX ? need : GROUP_BUF_MAX;
}

/*
 * The groups that name the account: its primary group first, then each other once, each by
 * name.  One getgrouplist() and one lookup by gid a group: no enumeration of the pool.
 */
static int look_groups(const char *text, const char *name, gid_t gid, struct slots_identity_facts *f,
                       struct slots_error *e)
{
        size_t hint = group_buffer(text);
        gid_t *gids = NULL;
        int n = 0, r;

        r = slots_grouplist(name, gid, &gids, &n);
        if (r < 0) {
                return slots_error_set(e, r, name, "cannot list its groups: %s", strerror(-r));
        }
        f->groups = calloc((size_t) n + 1, sizeof(*f->groups));
        f->group_names = calloc((size_t) n + 1, sizeof(*f->group_names));
        if (!f->groups || !f->group_names)
                r = -ENOMEM;
        for (int i = 0; r >= 0 && i < n; i++) {
                char **nm = &f->group_names[f->id.n_groups];

                if (i > 0 && gids[i] == gid)
                        continue;
                r = slots_nss_gid_name(gids[i], hint, nm);
                if (r == 0 && asprintf(nm, "gid %u (no group)", (unsigned) gids[i]) < 0)
                        *nm = NULL, r = -ENOMEM;
                if (r < 0)
                        break;
                f->groups[f->id.n_groups++] = (struct slots_identity_group){
                        .name = *nm, .primary = i == 0,
                        .directory = r > 0 && local_entry(0, text, *nm) == 0,
                };
        }
        free(gids);
        f->id.groups = f->groups;
        if (r < 0)
                return slots_error_set(e, r, name, "cannot name its groups: %s", strerror(-r));
        return 0;
}

/* A growing list of names (each malloc'ed): 0, or -ENOMEM. */
static int add_name(struct slots_identity_name **list, size_t *n, const char *name, size_t len, const char *where)
{
        struct slots_identity_name *l = realloc(*list, (*n + 1) * sizeof(*l));
        char *copy;

        if (!l)
                return -ENOMEM;
        *list = l;
        if (!(copy = strndup(name, len)))
                return -ENOMEM;
        l[(*n)++] = (struct slots_identity_name){ .name = copy, .where = where };
        return 0;
}

/* Each name of a comma-separated member list into the list. */
static int add_list(struct slots_identity_name **list, size_t *n, const char *s, size_t len, const char *where)
{
        int r = 0;

        while (len && r == 0) {
                const char *c = memchr(s, ',', len);
                size_t one = c ? (size_t) (c - s) : len;

                if (one)
                        r = add_name(list, n, s, one, where);
                s += one + (c != NULL);
                len -= one + (c != NULL);
        }
        return r;
}

/* Field k (0-based) of the line [p, eol): its start or NULL, *len its length. */
static const char *field_at(const char *p, const char *eol, unsigned k, size_t *len)
{
        for (; k > 0 && p; k--) {
                p = memchr(p, ':', (size_t) (eol - p));
                p = p ? p + 1 : NULL;
        }
        if (!p)
                return NULL;
        *len = strcspn(p, ":\n");
        if (*len > (size_t) (eol - p))
                *len = (size_t) (eol - p);
        return p;
}

static int cmp_line_name(const void *a, const void *b, void *arg)
{
        const struct slots_idline *l = arg, *x = &l[*(const size_t *) a], *y = &l[*(const size_t *) b];
        int c = memcmp(x->name, y->name, x->nlen < y->nlen ? x->nlen : y->nlen);

        if (!c)
                c = (x->nlen > y->nlen) - (x->nlen < y->nlen);
        return c ? c : (x > y) - (x < y);
}

static int cmp_line_id(const void *a, const void *b, void *arg)
{
        const struct slots_idline *l = arg, *x = &l[*(const size_t *) a], *y = &l[*(const size_t *) b];

        return x->id != y->id ? (x->id > y->id) - (x->id < y->id) : (x > y) - (x < y);
}

static int idfile_lines(struct slots_idfile *f, unsigned id_field, unsigned list_field)
{
        size_t cap = 0;

        for (const char *p = f->text; p && *p;) {
                const char *eol = strchr(p, '\n'), *v;
                struct slots_idline l = { .name = p, .id = -1 };
                size_t len = 0;

                if (!eol)
                        eol = p + strlen(p);
                l.nlen = strcspn(p, ":\n");
                v = id_field ? field_at(p, eol, id_field, &len) : NULL;
                if (v && len && len <= 10 && strspn(v, "0123456789") >= len)
                        l.id = strtol(v, NULL, 10);
                v = list_field ? field_at(p, eol, list_field, &len) : NULL;
                l.list = v;
                l.llen = v ? len : 0;
                if (f->n == cap) {
                        struct slots_idline *q = realloc(f->l, (cap = cap ? cap * 2 : 256) * sizeof(*q));

                        if (!q)
                                return -ENOMEM;
                        f->l = q;
                }
                if (l.nlen)
                        f->l[f->n++] = l;
                p = *eol ? eol + 1 : NULL;
        }
        return 0;
}

int slots_idfile_text(const char *path, char *text, bool indexed, struct slots_idfile *f)
{
        bool group = strcmp(path, "/etc/group") == 0, gshadow = strcmp(path, "/etc/gshadow") == 0;
        int r;

        memset(f, 0, sizeof(*f));
        f->path = path;
        f->text = text;
        r = idfile_lines(f, gshadow ? 0 : 2, group || gshadow ? 3 : 0);
        if (r == 0 && indexed && f->n) {
                f->by_name = malloc(f->n * sizeof(size_t));
                f->by_id = malloc(f->n * sizeof(size_t));
                if (!f->by_name || !f->by_id)
                        r = -ENOMEM;
                for (size_t i = 0; r == 0 && i < f->n; i++)
                        f->by_name[i] = f->by_id[i] = i;
                if (r == 0) {
                        qsort_r(f->by_name, f->n, sizeof(size_t), cmp_line_name, f->l);
                        qsort_r(f->by_id, f->n, sizeof(size_t), cmp_line_id, f->l);
                }
        }
        if (r < 0)
                slots_idfile_free(f);
        return r;
}

int slots_idfile_read(int rootfd, const char *path, bool indexed, struct slots_idfile *f)
{
        char *text = NULL;
        int r = slots_account_text(rootfd, path, &text);

        memset(f, 0, sizeof(*f));
        return r < 0 ? r : slots_idfile_text(path, text, indexed, f);
}

void slots_idfile_free(struct slots_idfile *f)
{
        free(f->text);
        free(f->l);
        free(f->by_name);
        free(f->by_id);
        memset(f, 0, sizeof(*f));
}

static bool line_is(const struct slots_idline *l, const char *name)
{
        return strlen(name) == l->nlen && memcmp(l->name, name, l->nlen) == 0;
}

const struct slots_idline *slots_idfile_name(const struct slots_idfile *f, const char *name)
{
        size_t lo = 0, hi = f->n, nl = strlen(name);

        if (!f->by_name) {
                for (size_t i = 0; i < f->n; i++)
                        if (line_is(&f->l[i], name))
                                return &f->l[i];
                return NULL;
        }
        while (lo < hi) {       /* the first line of the name: the lowest place among equals */
                size_t mid = lo + (hi - lo) / 2;
                const struct slots_idline *l = &f->l[f->by_name[mid]];
                int c = memcmp(l->name, name, l->nlen < nl ? l->nlen : nl);

                if (!c)
                        c = (l->nlen > nl) - (l->nlen < nl);
                if (c < 0)
                        lo = mid + 1;
                else
                        hi = mid;
        }
        return lo < f->n && line_is(&f->l[f->by_name[lo]], name) ? &f->l[f->by_name[lo]] : NULL;
}

/* Every name of f's lines with id into the list. */
static int names_of_id(const struct slots_idfile *f, long id, struct slots_identity_name **list, size_t *n)
{
        size_t lo = 0, hi = f->n;
        int r = 0;

        if (!f->by_id) {
                for (size_t i = 0; r == 0 && i < f->n; i++)
                        if (f->l[i].id == id)
                                r = add_name(list, n, f->l[i].name, f->l[i].nlen, f->path);
                return r;
        }
        while (lo < hi) {
                size_t mid = lo + (hi - lo) / 2;

                if (f->l[f->by_id[mid]].id < id)
                        lo = mid + 1;
                else
                        hi = mid;
        }
        for (; r == 0 && lo < f->n && f->l[f->by_id[lo]].id == id; lo++)
                r = add_name(list, n, f->l[f->by_id[lo]].name, f->l[f->by_id[lo]].nlen, f->path);
        return r;
}

/* What the name service answers for the uid and gid, and a directory group's members, where nsswitch names a directory. */
static int names_directory(const char *nsswitch, const char *name, bool local_group, struct slots_identity_names *o)
{
        struct slots_pw pw;
        struct slots_gr gr;
        int r = 0;

        if (slots_nss_network(nsswitch, "passwd") && slots_nss_uid(o->uid, &pw) > 0) {
                r = add_name(&o->uid_names, &o->n_uid_names, pw.name, strlen(pw.name), NULL);
                slots_pw_clear(&pw);
        }
        if (r == 0 && slots_nss_network(nsswitch, "group") && slots_nss_gid(o->gid, &gr) > 0) {
                r = add_name(&o->gid_names, &o->n_gid_names, gr.name, strlen(gr.name), NULL);
                slots_gr_clear(&gr);
        }
        if (r == 0 && !local_group && slots_nss_group(name, &gr) > 0) {
                for (char **m = gr.members; r == 0 && m && *m; m++)
                        r = add_name(&o->members, &o->n_members, *m, strlen(*m), NULL);
                slots_gr_clear(&gr);
        }
        return r;
}

int slots_identity_names_look(const struct slots_idfile files[3], const char *nsswitch, const char *name,
                              uid_t uid, gid_t gid, struct slots_identity_names *o)
{
        const struct slots_idline *g = slots_idfile_name(&files[1], name), *gs = slots_idfile_name(&files[2], name);
        int r;

        memset(o, 0, sizeof(*o));
        o->uid = uid;
        o->gid = g && g->id >= 0 ? (gid_t) g->id : gid;
        o->own = slots_idfile_name(&files[0], name);
        r = names_of_id(&files[0], (long) uid, &o->uid_names, &o->n_uid_names);
        if (r == 0)
                r = names_of_id(&files[1], (long) o->gid, &o->gid_names, &o->n_gid_names);
        if (r == 0 && g)
                r = add_list(&o->members, &o->n_members, g->list, g->llen, files[1].path);
        if (r == 0 && gs)
                r = add_list(&o->members, &o->n_members, gs->list, gs->llen, files[2].path);
        if (r == 0)
                r = names_directory(nsswitch, name, g != NULL, o);
        if (r < 0)
                slots_identity_names_free(o);
        return r;
}

static void free_names(struct slots_identity_name *l, size_t n)
{
        for (size_t i = 0; l && i < n; i++)
                free((char *) l[i].name);
        free(l);
}

void slots_identity_names_free(struct slots_identity_names *o)
{
        free_names(o->uid_names, o->n_uid_names);
        free_names(o->gid_names, o->n_gid_names);
        free_names(o->members, o->n_members);
        memset(o, 0, sizeof(*o));
}

void slots_identity_names_into(const struct slots_identity_names *o, struct slots_identity *id)
{
        id->uid = o->uid;
        id->gid = o->gid;
        id->uid_names = o->uid_names;
        id->n_uid_names = o->n_uid_names;
        id->gid_names = o->gid_names;
        id->n_gid_names = o->n_gid_names;
        id->members = o->members;
        id->n_members = o->n_members;
}

/* Both password fields (the passwd field from its local line when there is one); the shadow entry must be known when the passwd field points to it. */
static int look_password(const char *name, const char *local_field, struct slots_identity_facts *f,
                         struct slots_error *e)
{
        enum slots_pw_source src;
        int r;

        if (local_field) {
                memset(&f->pw, 0, sizeof(f->pw));
                if (!(f->pw.passwd = strndup(local_field, strcspn(local_field, ":\n"))))
                        return slots_error_set(e, -ENOMEM, name, "out of memory");
                r = slots_pwfield_shadow(name, &f->pw.shadow);
                if (r == -ENOMEM)
                        return slots_error_set(e, r, name, "out of memory");
                f->pw.shadow_known = r >= 0;
                f->pw.shadow_err = r < 0 ? r : 0;
        } else if ((r = slots_pwfields_lookup(name, &f->pw)) < 0)
                return slots_error_set(e, r, name, "cannot read its passwd entry: %s", strerror(-r));
        slots_pwfields_into(&f->pw, &f->id, NULL);
        if (!slots_identity_password(&f->id, &src) && src == SLOTS_PW_UNKNOWN)
                return slots_error_set(e, f->pw.shadow_err, name, "cannot read its shadow entry: %s",
                                       strerror(-f->pw.shadow_err));
        return 0;
}

int slots_identity_look(int rootfd, const char *prefix, const char *shell, const char *name,
                        const struct slots_pw *pw, struct slots_identity_facts *f, struct slots_error *e)
{
        static const char *const paths[3] = { "/etc/passwd", "/etc/group", "/etc/gshadow" };
        struct slots_idfile files[3] = { 0 };
        char *own_passwd = NULL, *nsswitch = NULL;
        int r = 0;

        memset(f, 0, sizeof(*f));
        f->id = (struct slots_identity){ .name = name, .shell = pw->shell, .want_shell = shell };
        if (asprintf(&f->shared, "%sshared", prefix) < 0) {
                f->shared = NULL;
                return slots_error_set(e, -ENOMEM, name, "out of memory");
        }
        f->id.shared = f->shared;
        /* Each account file read once: its own line, the other names of its ids, its group's members. */
        for (int i = 0; i < 3 && r == 0; i++)
                if ((r = slots_idfile_read(rootfd, paths[i], false, &files[i])) < 0)
                        slots_error_set(e, r, paths[i], "cannot read it: %s", strerror(-r));
        if (r == 0 && slots_account_text(rootfd, "/etc/nsswitch.conf", &nsswitch) == -ENOMEM)
                r = slots_error_set(e, -ENOMEM, name, "out of memory");
        if (r == 0 && (r = slots_identity_names_look(files, nsswitch, name, pw->uid, pw->gid, &f->names)) < 0)
                slots_error_set(e, r, name, "out of memory");
        slots_identity_names_into(&f->names, &f->id);
        f->id.directory = f->names.own == NULL;
        if (r == 0 && f->names.own) {
                size_t n = 0;
                const char *pf = field_at(f->names.own->name, f->names.own->name + strcspn(f->names.own->name, "\n"),
                                          1, &n);

                if (pf && !(own_passwd = strndup(pf, n)))
                        r = slots_error_set(e, -ENOMEM, name, "out of memory");
        }
        if (r == 0)
                r = look_groups(files[1].text, name, pw->gid, f, e);
        if (r == 0)
                r = slots_subid_read(rootfd, "/etc/subuid", name, pw->uid, (long) f->id.uid, &f->subuid, e);
        if (r == 0)
                r = slots_subid_read(rootfd, "/etc/subgid", name, pw->uid, (long) f->id.gid, &f->subgid, e);
        f->id.subuid = &f->subuid;
        f->id.subgid = &f->subgid;
        if (r == 0)
                r = look_password(name, own_passwd, f, e);
        free(own_passwd);
        free(nsswitch);
        f->names.own = NULL;    /* a line of files[0], freed here */
        for (int i = 0; i < 3; i++)
                slots_idfile_free(&files[i]);
        if (r < 0)
                slots_identity_facts_free(f);
        return r;
}

void slots_identity_facts_free(struct slots_identity_facts *f)
{
        for (size_t i = 0; f->group_names && i < f->id.n_groups; i++)
                free(f->group_names[i]);
        free(f->group_names);
        free(f->groups);
        slots_subids_free(&f->subuid);
        slots_subids_free(&f->subgid);
        slots_pwfields_clear(&f->pw);
        free(f->shared);
        slots_identity_names_free(&f->names);
        memset(f, 0, sizeof(*f));
}
