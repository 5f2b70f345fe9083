/* Account lookups through NSS that tell "not found" from "the lookup failed". */
#include <dlfcn.h>
#include <errno.h>
#include <grp.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "nss.h"

/*
 * "Not found" is a return of 0 with no entry, and nothing else.  getpwnam_r(3)
 * lists ENOENT, ESRCH, EBADF and EPERM as "not found" too, for other systems;
 * glibc never returns them for a name or id that is not there: it returns 0
 * when every source consulted answered NOTFOUND, and the errno of the last
 * source otherwise.  That errno is ENOENT exactly when the directory is down:
 * libnss-ldapd cannot reach nslcd's socket (nslcd stopped), or nslcd cannot
 * reach the LDAP server, and libnss-extrausers has no files.  Reading ENOENT as
 * "not found" would create a local duplicate of every directory account, so
 * every nonzero return is a failed lookup.
 */
static bool not_found(int r)
{
        Dl_info info;

        if (r == 0)
                return true;
        /*
         * The one exception: nss_wrapper, the test double the unit-level tests preload,
         * answers ENOENT for a name its files lack.  Only when getpwnam_r itself is
         * nss_wrapper's (never from an environment variable alone).
         */
        return r == ENOENT && dladdr((void *) getpwnam_r, &info) && info.dli_fname &&
               strstr(info.dli_fname, "libnss_wrapper");
}

void slots_pw_clear(struct slots_pw *p)
{
        free(p->name);
        free(p->dir);
        free(p->shell);
        memset(p, 0, sizeof(*p));
}

void slots_gr_clear(struct slots_gr *g)
{
        if (g->members)
                for (char **m = g->members; *m; m++)
                        free(*m);
        free(g->members);
        free(g->name);
        memset(g, 0, sizeof(*g));
}

static int copy_pw(const struct passwd *pw, struct slots_pw *out)
{
        memset(out, 0, sizeof(*out));
        out->uid = pw->pw_uid;
        out->gid = pw->pw_gid;
        out->name = strdup(pw->pw_name);
        out->dir = strdup(pw->pw_dir ? pw->pw_dir : "");
        out->shell = strdup(pw->pw_shell ? pw->pw_shell : "");
        if (!out->name || !out->dir || !out->shell) {
                slots_pw_clear(out);
                return -ENOMEM;
        }
        return 1;
}

static int copy_gr(const struct group *gr, struct slots_gr *out)
{
        size_t n = 0;

        memset(out, 0, sizeof(*out));
        out->gid = gr->gr_gid;
        out->name = strdup(gr->gr_name);
        while (gr->gr_mem && gr->gr_mem[n])
                n++;
        out->members = calloc(n + 1, sizeof(char *));
        if (!out->name || !out->members)
                goto oom;
        for (size_t i = 0; i < n; i++)
                if (!(out->members[i] = strdup(gr->gr_mem[i])))
                        goto oom;
        return 1;
oom:
        slots_gr_clear(out);
        return -ENOMEM;
}

/* Calls one *_r lookup with a buffer of start bytes that grows on ERANGE. */
#define LOOKUP(type, start, call, copy)                                         \
        do {                                                                    \
                size_t size = (start);                                          \
                for (;;) {                                                      \
                        struct type ent, *res = NULL;                           \
                        char *buf = malloc(size);                               \
                        int r;                                                  \
                        if (!buf)                                               \
                                return -ENOMEM;                                 \
                        r = call;                                               \
                        if (r == ERANGE && size < (1u << 24)) {                 \
                                free(buf);                                      \
                                size *= 2;                                      \
                                continue;                                       \
                        }                                                       \
                        if (res) {                                              \
                                r = copy(res, out);                             \
                                free(buf);                                      \
                                return r;                                       \
                        }                                                       \
                        free(buf);                                              \
                        if (not_found(r))                                       \
                                return 0;                                       \
                        return -r;                                              \
                }                                                               \
        } while (0)

int slots_nss_user(const char *name, struct slots_pw *out)
{
        LOOKUP(passwd, 1024, getpwnam_r(name, &ent, buf, size, &res), copy_pw);
}

int slots_nss_uid(uid_t uid, struct slots_pw *out)
{
        LOOKUP(passwd, 1024, getpwuid_r(uid, &ent, buf, size, &res), copy_pw);
}

int slots_nss_group(const char *name, struct slots_gr *out)
{
        LOOKUP(group, 1024, getgrnam_r(name, &ent, buf, size, &res), copy_gr);
}

int slots_nss_gid(gid_t gid, struct slots_gr *out)
{
        LOOKUP(group, 1024, getgrgid_r(gid, &ent, buf, size, &res), copy_gr);
}

static int copy_gr_name(const struct group *gr, char **out)
{
        *out = strdup(gr->gr_name);
        return *out ? 1 : -ENOMEM;
}

int slots_nss_gid_name(gid_t gid, size_t hint, char **out)
{
        LOOKUP(group, hint < 1024 ? 1024 : hint, getgrgid_r(gid, &ent, buf, size, &res), copy_gr_name);
}

bool slots_gr_has_member(const struct slots_gr *g, const char *name)
{
        if (!g->members)
                return false;
        for (char **m = g->members; *m; m++)
                if (strcmp(*m, name) == 0)
                        return true;
        return false;
}

static bool network_source(const char *s, size_t n)
{
        static const char *const names[] = { "ldap", "sss", "nis", "nisplus", "winbind" };

        for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
                if (strlen(names[i]) == n && strncmp(names[i], s, n) == 0)
                        return true;
        return false;
}

/*
 * The first line of nsswitch.conf's text that names db: returns where its sources start
 * (after the ':') with *end the line's end, or NULL when no line names db.
 */
static const char *db_line(const char *text, const char *db, const char **end)
{
        size_t dblen = strlen(db);

        for (const char *line = text; line && *line; line = strchr(line, '\n') ? strchr(line, '\n') + 1 : NULL) {
                const char *p = line;

                *end = strchr(line, '\n');
                if (!*end)
                        *end = line + strlen(line);
                while (p < *end && (*p == ' ' || *p == '\t'))
                        p++;
                if ((size_t) (*end - p) <= dblen || strncmp(p, db, dblen) != 0)
                        continue;
                p += dblen;
                while (p < *end && (*p == ' ' || *p == '\t'))
                        p++;
                if (p < *end && *p == ':')
                        return p + 1;
        }
        return NULL;
}

int slots_nss_masked_source(const char *text, const char *db, char *src, size_t srcsize, char *next,
                            size_t nextsize)
{
        const char *end, *p = db_line(text, db, &end), *net = NULL;
        size_t netlen = 0;
        bool guarded = false;

        if (!p)
                return 0;
        while (p < end && *p != '#') {
                const char *w;

                if (*p == ' ' || *p == '\t') {
                        p++;
                        continue;
                }
                if (*p == '[') {
                        /* An action group: does it make an unavailable source end the lookup? */
                        const char *close = memchr(p, ']', (size_t) (end - p));
                        const char *stop = close ? close : end;

                        for (const char *q = p; q < stop; q++)
                                if (strncasecmp(q, "UNAVAIL=return", 14) == 0 ||
                                    strncasecmp(q, "!SUCCESS=return", 15) == 0)
                                        guarded = true;
                        p = close ? close + 1 : end;
                        continue;
                }
                w = p;
                while (p < end && *p != ' ' && *p != '\t' && *p != '[' && *p != '#')
                        p++;
                if (net && !guarded) {
                        snprintf(src, srcsize, "%.*s", (int) netlen, net);
                        snprintf(next, nextsize, "%.*s", (int) (p - w), w);
                        return 1;
                }
                net = network_source(w, (size_t) (p - w)) ? w : NULL;
                netlen = (size_t) (p - w);
                guarded = false;
        }
        return 0;       /* the first line naming the database is the one read */
}

const char *slots_uid_name(uid_t uid, char *buf, size_t size)
{
        struct slots_pw pw;

        if (slots_nss_uid(uid, &pw) > 0) {
                snprintf(buf, size, "%s", pw.name);
                slots_pw_clear(&pw);
        } else {
                snprintf(buf, size, "%u", (unsigned) uid);
        }
        return buf;
}

const char *slots_gid_name(gid_t gid, char *buf, size_t size)
{
        struct slots_gr gr;

        if (slots_nss_gid(gid, &gr) > 0) {
                snprintf(buf, size, "%s", gr.name);
                slots_gr_clear(&gr);
        } else {
                snprintf(buf, size, "%u", (unsigned) gid);
        }
        return buf;
}

/* The sources of db's line in text, as [start, end) pairs into sources (at most max); -1 when there is none. */
static int db_sources(const char *text, const char *db, const char **src, size_t *len, int max, bool *actions)
{
        const char *end, *p = db_line(text, db, &end);
        int n = 0;

        *actions = false;
        if (!p)
                return -1;
        while (p < end && *p != '#') {
                const char *w = p, *close;

                if (*p == ' ' || *p == '\t') {
                        p++;
                        continue;
                }
                if (*p == '[') {
                        *actions = true;
                        close = memchr(p, ']', (size_t) (end - p));
                        p = close ? close + 1 : end;
                        continue;
                }
                while (p < end && *p != ' ' && *p != '\t' && *p != '[' && *p != '#')
                        p++;
                if (n == max)
                        *actions = true;        /* more sources than are looked at: trust none */
                else
                        src[n] = w, len[n++] = (size_t) (p - w);
        }
        return n;       /* the first line naming the database is the one read */
}

static bool lists_all(const char *s, size_t n)
{
        return (n == 5 && strncmp(s, "files", 5) == 0) || (n == 7 && strncmp(s, "systemd", 7) == 0);
}

enum slots_nss_enum slots_nss_enumerable(const char *text, const char *db)
{
        const char *src[16];
        size_t len[16];
        bool actions;
        int n = text ? db_sources(text, db, src, len, 16, &actions) : -1, full = 0;

        if (n < 0)
                return SLOTS_NSS_ENUM_NO_LINE;
        if (n == 0 || actions)
                return SLOTS_NSS_ENUM_NONE;
        while (full < n && lists_all(src[full], len[full]))
                full++;
        if (full == n)
                return SLOTS_NSS_ENUM_ALL;
        return full == n - 1 ? SLOTS_NSS_ENUM_NAMES : SLOTS_NSS_ENUM_NONE;
}

bool slots_nss_network(const char *text, const char *db)
{
        const char *src[16];
        size_t len[16];
        bool actions;
        int n = text ? db_sources(text, db, src, len, 16, &actions) : -1;

        for (int i = 0; i < n; i++)
                if (network_source(src[i], len[i]))
                        return true;
        return false;
}
