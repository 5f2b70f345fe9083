/* A slot account's identity verdict: subordinate ids, groups, password and shell, each with its fix. */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dirfix.h"
#include "fsutil.h"
#include "identity.h"
#include "strbuf.h"

#define SUBID_MAX ((size_t) 16 << 20)

static bool field_number(const char *s, size_t len, unsigned long *out)
{
        unsigned long v = 0;

        if (len == 0 || len > 10)
                return false;
        for (size_t i = 0; i < len; i++) {
                if (s[i] < '0' || s[i] > '9')
                        return false;
                v = v * 10 + (unsigned long) (s[i] - '0');
        }
        if (v > UINT32_MAX)
                return false;
        *out = v;
        return true;
}

/* The owner field names the account: its name, or its uid in decimal (as libsubid matches). */
static bool owner_is(const char *s, size_t len, const char *name, uid_t uid)
{
        unsigned long n;

        if (strlen(name) == len && memcmp(s, name, len) == 0)
                return true;
        return field_number(s, len, &n) && n == (unsigned long) uid;
}

/* The range of line [p, p + len) for name/uid, or another owner's holding cover, into out: 1 kept, 0 not, -ENOMEM. */
static int subid_line(const char *p, size_t len, unsigned line, const char *name, uid_t uid, long cover,
                      struct slots_subids *out)
{
        const char *c1 = memchr(p, ':', len), *c2;
        struct slots_subid one = { .line = line };
        struct slots_subid *r;
        bool own;

        c2 = c1 ? memchr(c1 + 1, ':', len - (size_t) (c1 + 1 - p)) : NULL;
        if (!c2 || !field_number(c1 + 1, (size_t) (c2 - c1 - 1), &one.start) ||
            !field_number(c2 + 1, len - (size_t) (c2 + 1 - p), &one.count) || one.count == 0)
                return 0;
        own = owner_is(p, (size_t) (c1 - p), name, uid);
        if (!own && (cover < 0 || (unsigned long) cover < one.start || (unsigned long) cover - one.start >= one.count))
                return 0;
        if (!own && !(one.owner = strndup(p, (size_t) (c1 - p))))
                return -ENOMEM;
        r = realloc(out->r, (out->n + 1) * sizeof(*r));
        if (!r) {
                free(one.owner);
                return -ENOMEM;
        }
        r[out->n++] = one;
        out->r = r;
        return 1;
}

int slots_subid_parse(const char *text, const char *name, uid_t uid, long cover, struct slots_subids *out)
{
        const char *p = text;
        unsigned line = 0;

        out->r = NULL;
        out->n = 0;
        while (p && *p) {
                const char *eol = strchr(p, '\n');
                size_t len = eol ? (size_t) (eol - p) : strlen(p);

                if (subid_line(p, len, ++line, name, uid, cover, out) < 0) {
                        slots_subids_free(out);
                        return -ENOMEM;
                }
                p = eol ? eol + 1 : NULL;
        }
        return 0;
}

int slots_subid_read(int rootfd, const char *path, const char *name, uid_t uid, long cover,
                     struct slots_subids *out, struct slots_error *e)
{
        const struct slots_read how = { .path = path, .max = SUBID_MAX, .content_fails = true };
        char *text = NULL;
        size_t len = 0;
        int fd, r;

        out->r = NULL;
        out->n = 0;
        fd = slots_open_in(rootfd, path, O_RDONLY | O_NONBLOCK | O_NOCTTY);
        if (fd == -ENOENT)
                return 0;
        if (fd < 0)
                return slots_error_set(e, fd, path, "cannot open: %s", strerror(-fd));
        r = slots_read_text_fd(fd, &how, NULL, &text, &len, e);
        slots_close(fd);
        if (r == 0) {
                r = slots_subid_parse(text, name, uid, cover, out);
                if (r < 0)
                        r = slots_error_set(e, r, path, "cannot parse: %s", strerror(-r));
        }
        free(text);
        return r;
}

void slots_subids_free(struct slots_subids *s)
{
        for (size_t i = 0; s->r && i < s->n; i++)
                free(s->r[i].owner);
        free(s->r);
        s->r = NULL;
        s->n = 0;
}

bool slots_identity_shadowed(const char *name, const char *passwd_field)
{
        return strcmp(passwd_field, "x") == 0 || strcmp(passwd_field, "*NP*") == 0 ||
               (passwd_field[0] == '#' && passwd_field[1] == '#' && strcmp(passwd_field + 2, name) == 0);
}

const char *slots_identity_password(const struct slots_identity *id, enum slots_pw_source *src)
{
        if (id->passwd_field && !slots_identity_shadowed(id->name, id->passwd_field)) {
                *src = SLOTS_PW_PASSWD;
                return id->passwd_field;
        }
        if (!id->shadow_known) {
                *src = SLOTS_PW_UNKNOWN;
                return NULL;
        }
        *src = id->shadow_field ? SLOTS_PW_SHADOW : SLOTS_PW_NO_SHADOW;
        return id->shadow_field;
}

/* The crypt alphabet of DES and bigcrypt output (pam_unix's strip_hpux_aging keeps only these). */
static bool crypt_char(char c)
{
        return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' || c == '/';
}

bool slots_identity_password_usable(const char *hash, enum slots_hash_method method)
{
        size_t len = strlen(hash);

        if (len == 0)
                return true;
        if (hash[0] == '!' || hash[0] == '*')
                return false;
        if (strncmp(hash, "$1$", 3) == 0)
                return true;
        if (hash[0] != '$' && len >= 13) {
                /* An HP-UX aging suffix: what follows the 13th character from the first one outside the alphabet. */
                for (size_t i = 13; i < len; i++)
                        if (!crypt_char(hash[i])) {
                                len = i;
                                break;
                        }
                for (size_t i = 0; i < 13; i++)
                        if (!crypt_char(hash[i]))
                                return false;
                return (len - 13) % 11 == 0;
        }
        return method != SLOTS_HASH_NO_METHOD;
}

static void add_ranges(struct strbuf *b, const char *opt, const struct slots_subids *s)
{
        for (size_t i = 0; i < s->n; i++) {
                if (s->r[i].owner)
                        continue;
                strbuf_sep(b, " ");
                strbuf_addf(b, "%s%lu-%lu", opt, s->r[i].start, s->r[i].start + s->r[i].count - 1);
        }
}

static size_t own_ranges(const struct slots_subids *s)
{
        size_t n = 0;

        for (size_t i = 0; s && i < s->n; i++)
                n += !s->r[i].owner;
        return n;
}

/*
 * Another owner's ranges that hold the slot's id (what: "uid", "gid"): through newuidmap
 * (newgidmap) the owner maps it into a user namespace of its own and runs as it.
 */
static void foreign_ranges(const struct slots_identity *id, const char *what, unsigned long idv,
                           const struct slots_subids *s, struct strbuf *d, struct strbuf *f)
{
        for (size_t i = 0; s && i < s->n; i++) {
                const struct slots_subid *r = &s->r[i];
                unsigned long last = r->start + r->count - 1;
                bool number = r->owner && strspn(r->owner, "0123456789") == strlen(r->owner);

                if (!r->owner)
                        continue;
                strbuf_sep(d, "; ");
                strbuf_addf(d, "%s's subordinate %ss %lu-%lu (/etc/sub%s line %u) hold %s's %s %lu: through "
                            "new%smap %s runs as %s", r->owner, what, r->start, last, what, r->line, id->name, what,
                            idv, what, r->owner, id->name);
                strbuf_sep(f, " && ");
                if (number)
                        strbuf_addf(f, "sed -i '%ud' /etc/sub%s (the range of uid %s)", r->line, what, r->owner);
                else
                        strbuf_addf(f, "usermod --del-sub%ss %lu-%lu %s", what, r->start, last, r->owner);
        }
}

static void judge_subids(const struct slots_identity *id, struct strbuf *d, struct strbuf *f)
{
        size_t nu = own_ranges(id->subuid), ng = own_ranges(id->subgid);

        if (nu + ng) {
                strbuf_addf(d, "%s has subordinate ", id->name);
                if (nu) {
                        strbuf_addf(d, "uids");
                        add_ranges(d, "", id->subuid);
                        strbuf_addf(d, " (/etc/subuid)");
                }
                if (nu && ng)
                        strbuf_addf(d, " and ");
                if (ng) {
                        strbuf_addf(d, "gids");
                        add_ranges(d, "", id->subgid);
                        strbuf_addf(d, " (/etc/subgid)");
                }
                strbuf_addf(d, ": in a user namespace of its own it runs processes under other ids");
                strbuf_addf(f, "usermod");
                if (nu)
                        add_ranges(f, "--del-subuids ", id->subuid);
                if (ng)
                        add_ranges(f, "--del-subgids ", id->subgid);
                strbuf_addf(f, " %s", id->name);
        }
        foreign_ranges(id, "uid", id->uid, id->subuid, d, f);
        foreign_ranges(id, "gid", id->gid, id->subgid, d, f);
}

/* Whether names[0..i) already holds names[i]'s name (one name listed by a file and by NSS). */
static bool seen_before(const struct slots_identity_name *names, size_t i)
{
        for (size_t j = 0; j < i; j++)
                if (strcmp(names[j].name, names[i].name) == 0)
                        return true;
        return false;
}

/* Every other name of the uid (group: the gid), each with the command that removes it. */
static void judge_names(const struct slots_identity *id, bool group, struct strbuf *d, struct strbuf *f)
{
        const struct slots_identity_name *names = group ? id->gid_names : id->uid_names;
        size_t n = group ? id->n_gid_names : id->n_uid_names;

        for (size_t i = 0; i < n; i++) {
                const struct slots_identity_name *a = &names[i];

                if (strcmp(a->name, id->name) == 0 || seen_before(names, i))
                        continue;
                strbuf_sep(d, "; ");
                strbuf_addf(d, "%s %s has %s's %s %lu too (%s): to the kernel it is %s", group ? "group" : "account",
                            a->name, id->name, group ? "gid" : "uid",
                            group ? (unsigned long) id->gid : (unsigned long) id->uid,
                            a->where ? a->where : "the name service", id->name);
                strbuf_sep(f, " && ");
                if (a->where)
                        strbuf_addf(f, "%s %s", group ? "groupdel -f" : "userdel", a->name);
                else
                        strbuf_addf(f, "set %s of %s to a free %s in the directory", group ? "gidNumber" : "uidNumber",
                                    a->name, group ? "gid" : "uid");
        }
}

static void judge_aliases(const struct slots_identity *id, struct strbuf *d, struct strbuf *f)
{
        judge_names(id, false, d, f);
        judge_names(id, true, d, f);
}

/* Members of the slot's group but itself and the service: `sg` or newgrp makes them the group. */
static void judge_members(const struct slots_identity *id, struct strbuf *d, struct strbuf *f)
{
        for (size_t i = 0; i < id->n_members; i++) {
                const struct slots_identity_name *m = &id->members[i];

                if (strcmp(m->name, id->name) == 0 || (id->member_ok && strcmp(m->name, id->member_ok) == 0) ||
                    seen_before(id->members, i))
                        continue;
                strbuf_sep(d, "; ");
                strbuf_addf(d, "%s is a member of the group %s (%s): through sg or newgrp it runs as %s's group",
                            m->name, id->name, m->where ? m->where : "the directory", id->name);
                strbuf_sep(f, " && ");
                if (m->where)
                        strbuf_addf(f, "gpasswd -d %s %s", m->name, id->name);
                else
                        slots_dirfix(f, true, id->name,
                                     &(struct slots_dirfix_change){ SLOTS_DIRFIX_DELETE, "memberUid", m->name }, 1);
        }
}

static void judge_groups(const struct slots_identity *id, struct strbuf *d, struct strbuf *f)
{
        struct strbuf members = { 0 };

        for (size_t i = 0; i < id->n_groups; i++) {
                const struct slots_identity_group *g = &id->groups[i];

                if (g->primary) {
                        if (strcmp(g->name, id->name) == 0)
                                continue;
                        strbuf_sep(d, "; ");
                        strbuf_addf(d, "primary group is %s, not %s", g->name, id->name);
                        strbuf_sep(f, " && ");
                        if (id->directory)
                                strbuf_addf(f, "set gidNumber of %s to the gid of the group %s in the directory",
                                            id->name, id->name);
                        else
                                strbuf_addf(f, "usermod -g %s %s", id->name, id->name);
                        continue;
                }
                if (strcmp(g->name, id->name) == 0 || (id->shared && strcmp(g->name, id->shared) == 0))
                        continue;
                strbuf_sep(&members, ", ");
                strbuf_addf(&members, "%s", g->name);
                strbuf_sep(f, " && ");
                /* Where the group lives, not the account, says where its member list is changed. */
                if (g->directory)
                        slots_dirfix(f, true, g->name,
                                     &(struct slots_dirfix_change){ SLOTS_DIRFIX_DELETE, "memberUid", id->name }, 1);
                else
                        strbuf_addf(f, "gpasswd -d %s %s", id->name, g->name);
        }
        if (members.len) {
                strbuf_sep(d, "; ");
                strbuf_addf(d, "%s is a member of %s: a slot belongs to no group but its own and %s", id->name,
                            strbuf_str(&members), id->shared ? id->shared : "the shared group");
        }
        if (members.oom)
                d->oom = true;
        strbuf_free(&members);
}

static void judge_password(const struct slots_identity *id, struct strbuf *d, struct strbuf *f)
{
        enum slots_pw_source src;
        const char *h = slots_identity_password(id, &src);

        if (!h || !slots_identity_password_usable(h, id->hash_method))
                return;
        if (h[0] == '\0') {
                strbuf_addf(d, "%s has an empty password field in its %s entry: it needs no password at all",
                            id->name, src == SLOTS_PW_PASSWD ? "passwd" : "shadow");
        } else {
                /* Name the method, never the hash. */
                size_t n = h[0] == '$' ? strcspn(h + 1, "$") : 0;

                strbuf_addf(d, "%s has a usable password hash (", id->name);
                if (h[0] == '$')
                        strbuf_addf(d, "$%.*s$", n < 8 ? (int) n : 8, h + 1);
                else
                        strbuf_addf(d, "DES");
                strbuf_addf(d, ") in its %s entry: it could log in with a password",
                            src == SLOTS_PW_PASSWD ? "passwd" : "shadow");
        }
        /* pam_unix reads the passwd field unless it is x, whatever shadow holds. */
        if (src == SLOTS_PW_PASSWD && id->shadow_field)
                strbuf_addf(d, " (pam_unix reads the passwd field, not the shadow entry, unless it is x)");
        /* No userPassword, no password login: the directory's entry then matches none. */
        if (id->directory)
                slots_dirfix(f, false, id->name,
                             &(struct slots_dirfix_change){ SLOTS_DIRFIX_DELETE, "userPassword", NULL }, 1);
        else
                strbuf_addf(f, "usermod -L %s", id->name);
}

static void judge_shell(const struct slots_identity *id, struct strbuf *d, struct strbuf *f)
{
        if (!id->shell || !id->want_shell || strcmp(id->shell, id->want_shell) == 0)
                return;
        strbuf_addf(d, "%s has shell %s, configured %s", id->name, id->shell, id->want_shell);
        if (id->directory) {
                slots_dirfix(f, false, id->name,
                             &(struct slots_dirfix_change){ SLOTS_DIRFIX_REPLACE, "loginShell", id->want_shell }, 1);
                strbuf_addf(f, ", or set \"shell\" in the config");
        } else
                strbuf_addf(f, "usermod -s %s %s", id->want_shell, id->name);
}

int slots_identity_judge(const struct slots_identity *id, struct slots_identity_verdict *v)
{
        static void (*const judge[SLOTS_IDENT_N])(const struct slots_identity *, struct strbuf *, struct strbuf *) = {
                [SLOTS_IDENT_SUBIDS] = judge_subids,
                [SLOTS_IDENT_ALIASES] = judge_aliases,
                [SLOTS_IDENT_MEMBERS] = judge_members,
                [SLOTS_IDENT_GROUPS] = judge_groups,
                [SLOTS_IDENT_PASSWORD] = judge_password,
                [SLOTS_IDENT_SHELL] = judge_shell,
        };

        memset(v, 0, sizeof(*v));
        for (int k = 0; k < SLOTS_IDENT_N; k++) {
                struct strbuf d = { 0 }, f = { 0 };

                judge[k](id, &d, &f);
                if (d.oom || f.oom) {
                        strbuf_free(&d);
                        strbuf_free(&f);
                        slots_identity_verdict_free(v);
                        return -ENOMEM;
                }
                if (d.len == 0) {
                        strbuf_free(&f);
                        continue;
                }
                v->p[k].detail = d.s;
                v->p[k].fix = f.s;
                v->n++;
        }
        return 0;
}

void slots_identity_verdict_free(struct slots_identity_verdict *v)
{
        for (int k = 0; k < SLOTS_IDENT_N; k++) {
                free(v->p[k].detail);
                free(v->p[k].fix);
        }
        memset(v, 0, sizeof(*v));
}
