/* What slots-provision brings a host (or an image tree) to: accounts, folders, traversal bits, files. */
/*
 * A run is two passes over the same steps; the account files are locked from
 * their first read until the planned ones are written:
 *
 *   1. the check (x->quiet): the accounts are planned in memory (the files are
 *      parsed once, additions go into that copy) and the slot folders, table,
 *      drop-in and slotctl config are looked at.  It changes nothing and reports
 *      only PROBLEMs: a conflict a careful admin must settle (a uid taken, a
 *      symlink where a folder belongs).  Any PROBLEM ends the run here, before
 *      the first change (-EEXIST: refused), with every conflict named.
 *   2. the change (x->quiet false): the planned account files are written as one
 *      transaction, then each step makes or repairs its objects, reporting one
 *      CHANGE per object.  With --dry-run (x->dry) the same pass runs, writes
 *      nothing and reports what it would do.  A system call that fails here is a
 *      WARNING and the run goes on to the end, then fails naming the first.
 *
 * Every message goes through change(), note() or failed() and reaches the
 * command through opts->report; this file never prints.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "accounts.h"
#include "fsutil.h"
#include "ids.h"
#include "logindefs.h"
#include "nss.h"
#include "path.h"
#include "provision.h"
#include "replace.h"
#include "service.h"
#include "store.h"
#include "strbuf.h"

#define VISUDO "/usr/sbin/visudo"
#define SUDOERS_DIR SLOTS_SUDOERS_DIR
#define SHARE_MAX_DEPTH 64

struct pslot {
        char name[SLOTS_NAME_MAX];
        uid_t uid;                      /* GID = UID */
};

struct ctx {
        int rootfd, etcfd;
        const struct slots_config *c;
        const struct slots_prov_opts *o;
        struct slots_error *e;
        struct slots_accounts *db;
        uid_t id_min, id_max, cursor;
        bool cursor_done;
        char shared[64];
        gid_t shared_gid;
        uid_t svc_uid;
        gid_t table_gid;
        char *table_group;
        struct pslot *slots;
        struct pslot **by_uid;          /* the slots sorted by uid once planned (NULL: scan them) */
        char **acct_lines;              /* account changes, reported once they are written */
        size_t n_acct_lines;
        unsigned changes, problems;
        unsigned failures;              /* steps that failed (I/O errors); the run ends with exit 1 */
        char *failed_obj, *failed_text; /* the first of them */
        char **dry_made;                /* folders a dry pass has reported as created */
        size_t n_dry_made;
        bool dir_missing;               /* the last folder looked at had to be made: so, likely, has the next */
        bool quiet;                     /* the check before changing: problems only */
        bool dry;                       /* this pass changes nothing */
        bool oom;                       /* a message could not be formatted: the run ends with ENOMEM */
        struct strbuf text, fix;        /* the message being reported, and its fix */
        char *range;                    /* the id range as messages name it */
};

/* ---- reporting ---- */

static void emit(struct ctx *x, enum slots_prov_kind kind, const char *object, const char *fix,
                 const char *text)
{
        const struct slots_prov_msg m = { .kind = kind, .object = object ? object : "", .text = text,
                                          .fix = fix ? fix : "" };

        if (x->o->report)
                x->o->report(x->o->arg, &m);
}

/*
 * Formats a message into b (emptied first).  An allocation failure is remembered
 * in x->oom and ends the run with an error: a message is never cut short.
 */
static const char *vformat(struct ctx *x, struct strbuf *b, const char *fmt, va_list ap)
        __attribute__((format(printf, 3, 0)));
static const char *vformat(struct ctx *x, struct strbuf *b, const char *fmt, va_list ap)
{
        strbuf_reset(b);
        strbuf_vaddf(b, fmt, ap);
        if (b->oom) {
                x->oom = true;
                strbuf_free(b);
        }
        return strbuf_str(b);
}

static void change(struct ctx *x, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void change(struct ctx *x, const char *fmt, ...)
{
        va_list ap;

        if (x->quiet)
                return;
        va_start(ap, fmt);
        vformat(x, &x->text, fmt, ap);
        va_end(ap);
        x->changes++;
        emit(x, SLOTS_PROV_CHANGE, NULL, NULL, strbuf_str(&x->text));
}

static void failed(struct ctx *x, const char *object, const char *fix, const char *fmt, ...)
        __attribute__((format(printf, 4, 5)));
static void note(struct ctx *x, enum slots_prov_kind kind, const char *object, const char *fix,
                 const char *fmt, ...) __attribute__((format(printf, 5, 6)));
static void note(struct ctx *x, enum slots_prov_kind kind, const char *object, const char *fix,
                 const char *fmt, ...)
{
        va_list ap;

        if (kind == SLOTS_PROV_PROBLEM)
                x->problems++;
        else if (x->quiet)
                return;
        va_start(ap, fmt);
        vformat(x, &x->text, fmt, ap);
        va_end(ap);
        emit(x, kind, object, fix, strbuf_str(&x->text));
}

static void failed(struct ctx *x, const char *object, const char *fix, const char *fmt, ...)
{
        va_list ap;

        if (x->quiet)
                return;
        va_start(ap, fmt);
        vformat(x, &x->text, fmt, ap);
        va_end(ap);
        if (x->failures++ == 0) {
                x->failed_obj = strdup(object ? object : "");
                x->failed_text = strdup(strbuf_str(&x->text));
                if (!x->failed_obj || !x->failed_text)
                        x->oom = true;
        }
        emit(x, SLOTS_PROV_WARNING, object, fix, strbuf_str(&x->text));
}

#define WARN(x, obj, fix, ...) note(x, SLOTS_PROV_WARNING, obj, fix, __VA_ARGS__)
/* A step that failed (a system call's error): reported, the run goes on, and it ends with an error. */
#define FAILED(x, obj, fix, ...) failed(x, obj, fix, __VA_ARGS__)
#define PROBLEM(x, obj, fix, ...) note(x, SLOTS_PROV_PROBLEM, obj, fix, __VA_ARGS__)

/* The fix of the next message, kept in x until the next fix is made (one per message). */
static const char *fmt_fix(struct ctx *x, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static const char *fmt_fix(struct ctx *x, const char *fmt, ...)
{
        va_list ap;

        va_start(ap, fmt);
        vformat(x, &x->fix, fmt, ap);
        va_end(ap);
        return strbuf_str(&x->fix);
}

/*
 * The fix for an account or group that NSS serves from a directory (LDAP, extrausers):
 * it is changed where it is kept, never locally with usermod or groupmod.
 */
static const char *dir_fix(struct ctx *x, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static const char *dir_fix(struct ctx *x, const char *fmt, ...)
{
        va_list ap;

        va_start(ap, fmt);
        vformat(x, &x->fix, fmt, ap);
        va_end(ap);
        strbuf_addf(&x->fix, " where it is kept (the directory service), not on this host, then run "
                             "slots-provision again; slots-provision --ldif prints the planned entries");
        if (x->fix.oom) {
                x->oom = true;
                strbuf_free(&x->fix);
        }
        return strbuf_str(&x->fix);
}

static int acct_line(struct ctx *x, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int acct_line(struct ctx *x, const char *fmt, ...)
{
        char **n, *s;
        va_list ap;
        int k;

        va_start(ap, fmt);
        k = vasprintf(&s, fmt, ap);
        va_end(ap);
        if (k < 0)
                return -ENOMEM;
        n = realloc(x->acct_lines, (x->n_acct_lines + 1) * sizeof(*n));
        if (!n) {
                free(s);
                return -ENOMEM;
        }
        x->acct_lines = n;
        x->acct_lines[x->n_acct_lines++] = s;
        return 0;
}

static int cmp_slot_uid(const void *a, const void *b)
{
        const struct pslot *p = *(const struct pslot *const *) a, *q = *(const struct pslot *const *) b;

        if (p->uid != q->uid)
                return p->uid < q->uid ? -1 : 1;
        return p < q ? -1 : p > q;      /* the first slot of a uid first, as a scan finds it */
}

/*
 * Sorts the planned slots by uid, so that naming the owner of each of the 3n
 * slot folders is a binary search, not a scan of the pool (issue 18).  Without
 * memory the scan stays.
 */
static void index_slots(struct ctx *x)
{
        x->by_uid = malloc(x->c->slots * sizeof(*x->by_uid));
        if (!x->by_uid)
                return;
        for (unsigned i = 0; i < x->c->slots; i++)
                x->by_uid[i] = &x->slots[i];
        qsort(x->by_uid, x->c->slots, sizeof(*x->by_uid), cmp_slot_uid);
}

/* The slot whose uid (and gid) is id: the first of the pool, or NULL. */
static const struct pslot *slot_by_uid(struct ctx *x, uid_t id)
{
        size_t lo = 0, hi = x->c->slots;

        if (!x->slots)
                return NULL;
        if (!x->by_uid) {
                for (unsigned i = 0; i < x->c->slots; i++)
                        if (x->slots[i].uid == id)
                                return &x->slots[i];
                return NULL;
        }
        while (lo < hi) {
                size_t mid = lo + (hi - lo) / 2;

                if (x->by_uid[mid]->uid < id)
                        lo = mid + 1;
                else
                        hi = mid;
        }
        return lo < x->c->slots && x->by_uid[lo]->uid == id ? x->by_uid[lo] : NULL;
}

/* Names for owners in messages: the accounts this run knows, numbers for the rest. */
static const char *uid_str(struct ctx *x, uid_t uid, char *buf, size_t size)
{
        const struct pslot *s;

        if (uid == 0)
                return "root";
        if (uid == x->svc_uid)
                return x->c->service;
        if ((s = slot_by_uid(x, uid)))
                return s->name;
        if (x->db && slots_accounts_user_by_uid(x->db, uid))
                snprintf(buf, size, "%s (%u)", slots_accounts_user_by_uid(x->db, uid)->name, (unsigned) uid);
        else
                snprintf(buf, size, "%u", (unsigned) uid);
        return buf;
}

static const char *gid_str(struct ctx *x, gid_t gid, char *buf, size_t size)
{
        const struct pslot *s;

        if (gid == 0)
                return "root";
        if (x->shared[0] && gid == x->shared_gid)
                return x->shared;
        if (x->table_group && gid == x->table_gid)
                return x->table_group;
        if ((s = slot_by_uid(x, (uid_t) gid)))
                return s->name;
        if (x->db && slots_accounts_group_by_gid(x->db, gid))
                snprintf(buf, size, "%s (%u)", slots_accounts_group_by_gid(x->db, gid)->name, (unsigned) gid);
        else
                snprintf(buf, size, "%u", (unsigned) gid);
        return buf;
}

/* ---- ids ---- */

static int nss_failed(struct ctx *x, int r, const char *what)
{
        slots_error_set(x->e, r, what, "the lookup through NSS failed: %s", strerror(-r));
        slots_error_fix(x->e, "make the name service answer (check nsswitch.conf, sssd, the LDAP server), "
                              "then run slots-provision again; nothing was changed");
        return r;
}

/*
 * Who holds id as a gid (group) or a uid (not group): the account files first, then NSS on
 * the host.  1 with the name in who, 0 when nobody does, -errno when a lookup failed.
 */
static int id_holder(struct ctx *x, unsigned id, bool group, char *who, size_t size)
{
        const char *name = NULL;
        int k = 0;

        if (group) {
                const struct slots_acct_group *og = slots_accounts_group_by_gid(x->db, (gid_t) id);
                name = og ? og->name : NULL;
        } else {
                const struct slots_acct_user *ou = slots_accounts_user_by_uid(x->db, (uid_t) id);
                name = ou ? ou->name : NULL;
        }
        if (name) {
                snprintf(who, size, "%s", name);
                return 1;
        }
        if (!x->o->host)
                return 0;
        if (group) {
                struct slots_gr gr;

                k = slots_nss_gid((gid_t) id, &gr);
                if (k > 0) {
                        snprintf(who, size, "%s", gr.name);
                        slots_gr_clear(&gr);
                }
        } else {
                struct slots_pw pw;

                k = slots_nss_uid((uid_t) id, &pw);
                if (k > 0) {
                        snprintf(who, size, "%s", pw.name);
                        slots_pw_clear(&pw);
                }
        }
        return k;
}

/* A source that hides a down directory from every lookup (slots_nss_masked_source) is worth a warning. */
static void nsswitch_warn(struct ctx *x)
{
        static const char *const dbs[] = { "passwd", "group" };
        char *text = NULL, src[32], next[32];
        struct stat st;
        size_t len;
        int fd = slots_open_regular(x->etcfd, "nsswitch.conf", &st);

        if (fd < 0)
                return;
        if (slots_read_all(fd, 1 << 20, &text, &len) == 0)
                for (size_t i = 0; i < sizeof(dbs) / sizeof(dbs[0]); i++)
                        if (slots_nss_masked_source(text, dbs[i], src, sizeof(src), next, sizeof(next)))
                                WARN(x, "/etc/nsswitch.conf",
                                     fmt_fix(x, "write \"%s [UNAVAIL=return] %s\" on the %s: line, or list %s last", src,
                                             next, dbs[i], src),
                                     "%s: %s is followed by %s: when %s is down, %s answers \"not found\" and a failed "
                                     "lookup cannot be told from a missing account", dbs[i], src, next, src, next);
        free(text);
        slots_close(fd);
}

/* 1 when id is neither a uid nor a gid anywhere, 0 when taken, -errno when a lookup failed. */
static int id_free(struct ctx *x, uid_t id)
{
        struct slots_pw pw;
        struct slots_gr gr;
        char what[64];
        int r;

        if (slots_accounts_user_by_uid(x->db, id) || slots_accounts_group_by_gid(x->db, id))
                return 0;
        if (!x->o->host)
                return 1;
        snprintf(what, sizeof(what), "uid %u", (unsigned) id);
        r = slots_nss_uid(id, &pw);
        if (r < 0)
                return nss_failed(x, r, what);
        if (r > 0) {
                slots_pw_clear(&pw);
                return 0;
        }
        snprintf(what, sizeof(what), "gid %u", (unsigned) id);
        r = slots_nss_gid(id, &gr);
        if (r < 0)
                return nss_failed(x, r, what);
        if (r > 0) {
                slots_gr_clear(&gr);
                return 0;
        }
        return 1;
}

/* The next free id going down from the top of the range, as shadow allocates system ids. */
static int next_id(struct ctx *x, uid_t *out)
{
        while (!x->cursor_done) {
                uid_t id = x->cursor;
                int r;

                if (x->cursor == x->id_min)
                        x->cursor_done = true;
                else
                        x->cursor--;
                r = id_free(x, id);
                if (r < 0)
                        return r;
                if (r > 0) {
                        *out = id;
                        return 0;
                }
        }
        return -ENOSPC;
}

/* An account as either source knows it. */
struct acct {
        bool found, local, valid;
        uid_t uid;
        gid_t gid;
        char *dir, *shell;
        char **members;                 /* NSS groups only */
        struct slots_pw pw;
        struct slots_gr gr;
};

static void acct_clear(struct acct *a)
{
        slots_pw_clear(&a->pw);
        slots_gr_clear(&a->gr);
        memset(a, 0, sizeof(*a));
}

static int find_user(struct ctx *x, const char *name, struct acct *a)
{
        const struct slots_acct_user *u = slots_accounts_user(x->db, name);
        int r;

        memset(a, 0, sizeof(*a));
        if (u) {
                a->found = a->local = true;
                a->valid = u->valid;
                a->uid = u->uid;
                a->gid = u->gid;
                a->dir = (char *) u->dir;
                a->shell = (char *) u->shell;
                return 0;
        }
        if (!x->o->host)
                return 0;
        r = slots_nss_user(name, &a->pw);
        if (r < 0)
                return nss_failed(x, r, name);
        if (r > 0) {
                a->found = a->valid = true;
                a->uid = a->pw.uid;
                a->gid = a->pw.gid;
                a->dir = a->pw.dir;
                a->shell = a->pw.shell;
        }
        return 0;
}

static int find_group(struct ctx *x, const char *name, struct acct *a)
{
        const struct slots_acct_group *g = slots_accounts_group(x->db, name);
        int r;

        memset(a, 0, sizeof(*a));
        if (g) {
                a->found = a->local = true;
                a->valid = g->valid;
                a->gid = g->gid;
                return 0;
        }
        if (!x->o->host)
                return 0;
        r = slots_nss_group(name, &a->gr);
        if (r < 0)
                return nss_failed(x, r, name);
        if (r > 0) {
                a->found = a->valid = true;
                a->gid = a->gr.gid;
        }
        return 0;
}

/* ---- the account plan ---- */

static char *slot_home(struct ctx *x, const char *slot)
{
        char *s;

        if (asprintf(&s, "%s%shome/%s", x->c->slots_root, strcmp(x->c->slots_root, "/") ? "/" : "", slot) < 0)
                return NULL;
        return s;
}

static int plan_shared(struct ctx *x)
{
        struct acct g;
        int r;

        snprintf(x->shared, sizeof(x->shared), "%sshared", x->c->prefix);
        r = find_group(x, x->shared, &g);
        if (r < 0)
                return r;
        if (g.found && !g.valid) {
                PROBLEM(x, x->shared, "repair the line with vigr", "the group's line in /etc/group is malformed");
                acct_clear(&g);
                return 0;
        }
        if (g.found && x->c->uid_base && g.gid != x->c->uid_base) {
                PROBLEM(x, x->shared,
                        g.local ? fmt_fix(x, "groupmod -g %u %s, or change uid_base in the config for the whole fleet",
                                          (unsigned) x->c->uid_base, x->shared)
                                : dir_fix(x, "set gidNumber %u on the group %s", (unsigned) x->c->uid_base, x->shared),
                        "group %s exists with gid %u, planned %u (uid_base)", x->shared, (unsigned) g.gid,
                        (unsigned) x->c->uid_base);
                acct_clear(&g);
                return 0;
        }
        if (g.found) {
                /* Any gid is fine for a group the admin made; only new ids come from the range. */
                x->shared_gid = g.gid;
                r = 0;
                if (g.local && !slots_accounts_has_gshadow(x->db, x->shared)) {
                        r = slots_accounts_add_gshadow(x->db, x->shared);
                        if (r == 0)
                                r = acct_line(x, "add gshadow entry for group %s", x->shared);
                }
                acct_clear(&g);
                return r;
        }
        if (x->c->uid_base) {
                char who[256];

                x->shared_gid = x->c->uid_base;
                r = id_holder(x, x->shared_gid, true, who, sizeof(who));
                if (r < 0)
                        return nss_failed(x, r, x->shared);
                if (r > 0) {
                        PROBLEM(x, x->shared,
                                fmt_fix(x, "renumber or remove the group %s, or change uid_base in the config for the "
                                        "whole fleet", who),
                                "planned gid %u for the group %s (uid_base) is taken by the group %s",
                                (unsigned) x->shared_gid, x->shared, who);
                        return 0;
                }
        } else {
                r = next_id(x, &x->shared_gid);
        }
        if (r == -ENOSPC) {
                PROBLEM(x, x->shared, "widen uid_min/uid_max in the config", "no free id left in %s",
                        x->range);
                return 0;
        }
        if (r < 0)
                return r;
        r = slots_accounts_add_group(x->db, x->shared, x->shared_gid);
        if (r == 0)
                r = acct_line(x, "create group %s (gid %u)", x->shared, (unsigned) x->shared_gid);
        return r;
}

/*
 * A slot whose account exists (in the files or through NSS): its uid, primary
 * gid, home and shell against the plan, and its group's gid against its uid.
 * want is the uid uid_base fixes (0 without).  Conflicts are PROBLEMs; -errno
 * when a lookup failed.
 */
static int check_user(struct ctx *x, const char *name, const struct acct *u, const struct acct *g,
                      const char *home, uid_t want)
{
        const struct slots_config *c = x->c;
        char who[256];
        bool uid_ok = true;
        int r;

        if (want && u->uid != want) {
                PROBLEM(x, name,
                        u->local ? fmt_fix(x, "remove it (userdel %s) so that it is created again, or renumber "
                                              "it (usermod -u %u %s, groupmod -g %u %s), or change uid_base in "
                                              "the config for the whole fleet", name, (unsigned) want,
                                           name, (unsigned) want, name)
                                 : dir_fix(x, "set uidNumber and gidNumber %u on the account %s", (unsigned) want, name),
                        "%s exists with uid %u, planned %u (uid_base + %u)", name, (unsigned) u->uid,
                        (unsigned) want, (unsigned) (want - c->uid_base));
                uid_ok = false;
        } else if (!want && (u->uid < x->id_min || u->uid > x->id_max)) {
                uid_t planned = 0;

                r = next_id(x, &planned);
                if (r < 0 && r != -ENOSPC)
                        return r;
                if (planned)
                        snprintf(who, sizeof(who), "planned %u", (unsigned) planned);
                else
                        snprintf(who, sizeof(who), "no id free");
                PROBLEM(x, name,
                        fmt_fix(x, "remove it (userdel %s) or fix it with usermod -u and groupmod -g, or set "
                                   "uid_min/uid_max to a range that holds %u", name, (unsigned) u->uid),
                        "%s exists with uid %u, %s: %u is outside %s", name, (unsigned) u->uid, who,
                        (unsigned) u->uid, x->range);
                uid_ok = false;
        }
        /* GID = UID is checked against a uid that can stay; a wrong uid is fixed first. */
        if (uid_ok && u->gid != u->uid)
                PROBLEM(x, name,
                        u->local ? fmt_fix(x, "usermod -g %u %s (with a group %s of gid %u), or remove the account",
                                           (unsigned) u->uid, name, name, (unsigned) u->uid)
                                 : dir_fix(x, "set gidNumber %u on the account %s", (unsigned) u->uid, name),
                        "%s has primary gid %u, planned %u (its group %s, GID = UID)", name,
                        (unsigned) u->gid, (unsigned) u->uid, name);
        if (strcmp(u->dir, home) != 0)
                PROBLEM(x, name,
                        u->local ? fmt_fix(x, "usermod -d %s %s", home, name)
                                 : dir_fix(x, "set homeDirectory %s on the account %s", home, name),
                        "%s has home %s, planned %s", name, u->dir, home);
        if (strcmp(u->shell, c->shell) != 0)
                PROBLEM(x, name,
                        u->local ? fmt_fix(x, "usermod -s %s %s, or set \"shell\" in the config", c->shell, name)
                                 : dir_fix(x, "set loginShell %s on the account %s", c->shell, name),
                        "%s has shell %s, planned %s", name, u->shell, c->shell);
        if (uid_ok && g->found && g->gid != u->uid)
                PROBLEM(x, name,
                        g->local ? fmt_fix(x, "groupmod -g %u %s, or remove the group (groupdel %s)",
                                           (unsigned) u->uid, name, name)
                                 : dir_fix(x, "set gidNumber %u on the group %s", (unsigned) u->uid, name),
                        "group %s exists with gid %u, planned %u (the uid of %s)", name,
                        (unsigned) g->gid, (unsigned) u->uid, name);
        if (uid_ok && !g->found && !u->local) {
                /* No local half of a directory account: its group belongs in the directory too. */
                PROBLEM(x, name, dir_fix(x, "add the group %s with gidNumber %u", name, (unsigned) u->uid),
                        "%s comes from the name service, but its group %s exists nowhere", name, name);
        } else if (uid_ok && !g->found) {
                /* The group will be made with gid = uid: that gid must be free. */
                int k = id_holder(x, u->uid, true, who, sizeof(who));

                if (k < 0)
                        return nss_failed(x, k, name);
                if (k > 0)
                        PROBLEM(x, name,
                                fmt_fix(x, "renumber or remove the group %s, or remove %s so that it is "
                                           "created again with a free id", who, name),
                                "planned gid %u for the group %s (the uid of %s) is taken by the group %s",
                                (unsigned) u->uid, name, name, who);
        }
        return 0;
}

/*
 * A slot whose group exists but whose account does not: the account will take
 * the group's gid as its uid, so that gid must fit the plan and be free as a uid.
 */
static int check_group(struct ctx *x, const char *name, const struct acct *g, uid_t want)
{
        const struct slots_config *c = x->c;
        char who[256];
        int k;

        if (!g->local) {
                PROBLEM(x, name,
                        dir_fix(x, "add the account %s with uidNumber and gidNumber %u", name,
                                want ? (unsigned) want : (unsigned) g->gid),
                        "the group %s comes from the name service, but the account %s exists nowhere", name,
                        name);
        } else if (want && g->gid != want) {
                PROBLEM(x, name,
                        fmt_fix(x, "remove the group (groupdel %s) so that it is created again, or renumber it "
                                   "(groupmod -g %u %s), or change uid_base in the config for the whole fleet",
                                name, (unsigned) want, name),
                        "group %s exists with gid %u, planned %u (uid_base + %u)", name, (unsigned) g->gid,
                        (unsigned) want, (unsigned) (want - c->uid_base));
        } else if (!want && (g->gid < x->id_min || g->gid > x->id_max)) {
                PROBLEM(x, name,
                        fmt_fix(x, "remove the group (groupdel %s) or renumber it (groupmod -g), or set "
                                   "uid_min/uid_max to a range that holds %u", name, (unsigned) g->gid),
                        "group %s exists with gid %u, outside %s", name, (unsigned) g->gid, x->range);
        } else {
                k = id_holder(x, g->gid, false, who, sizeof(who));
                if (k < 0)
                        return nss_failed(x, k, name);
                if (k > 0)
                        PROBLEM(x, name,
                                fmt_fix(x, "remove the group %s (groupdel %s) so that a free id is chosen, or "
                                           "renumber the account %s", name, name, who),
                                "planned uid %u for %s (the gid of its existing group %s) is taken by the "
                                "account %s", (unsigned) g->gid, name, name, who);
        }
        return 0;
}

/*
 * A slot with neither account nor group: its id is uid_base's (free as a uid and
 * as a gid, or another host's slot would differ) or the next free one of the range.
 */
static int choose_id(struct ctx *x, const char *name, uid_t want, uid_t *id)
{
        char who[256];
        int r;

        if (want) {
                *id = want;
                for (int group = 0; group < 2; group++) {
                        int k = id_holder(x, want, group, who, sizeof(who));

                        if (k < 0)
                                return nss_failed(x, k, name);
                        if (k > 0)
                                PROBLEM(x, name,
                                        fmt_fix(x, "renumber or remove the %s %s, or change uid_base in the config "
                                                   "for the whole fleet", group ? "group" : "account", who),
                                        "planned %s %u for %s (uid_base + %u) is taken by the %s %s",
                                        group ? "gid" : "uid", (unsigned) want, name,
                                        (unsigned) (want - x->c->uid_base), group ? "group" : "account", who);
                }
                return 0;
        }
        r = next_id(x, id);
        if (r == -ENOSPC) {
                PROBLEM(x, name, "widen uid_min/uid_max in the config, or make the pool smaller",
                        "no free id left for %s in %s", name, x->range);
                return 0;
        }
        return r;
}

/* Nothing conflicts: adds what is missing of the slot's group, its account and its shared membership. */
static int plan_missing(struct ctx *x, const char *name, const struct acct *u, const struct acct *g,
                        const char *home, uid_t id)
{
        int r = 0;

        if (!g->found) {
                r = slots_accounts_add_group(x->db, name, id);
                if (r == 0)
                        r = acct_line(x, "create group %s (gid %u)", name, (unsigned) id);
        } else if (g->local && !slots_accounts_has_gshadow(x->db, name)) {
                r = slots_accounts_add_gshadow(x->db, name);
                if (r == 0)
                        r = acct_line(x, "add gshadow entry for group %s", name);
        }
        if (r < 0)
                return r;
        if (!u->found) {
                r = slots_accounts_add_user(x->db, name, id, id, home, x->c->shell, x->o->lastchg);
                if (r == 0)
                        r = acct_line(x, "create account %s (uid %u, group %s, home %s, shell %s, password locked)",
                                      name, (unsigned) id, name, home, x->c->shell);
        } else if (u->local && !slots_accounts_has_shadow(x->db, name)) {
                r = slots_accounts_add_shadow(x->db, name, x->o->lastchg);
                if (r == 0)
                        r = acct_line(x, "add locked shadow entry for %s", name);
        }
        if (r < 0)
                return r;
        if (slots_accounts_group(x->db, x->shared)) {
                /* Both files: a run killed between the group and gshadow renames left one without it. */
                if (!slots_accounts_is_member(x->db, x->shared, name) ||
                    !slots_accounts_gshadow_lists(x->db, x->shared, name)) {
                        r = slots_accounts_add_member(x->db, x->shared, name);
                        if (r == 0)
                                r = acct_line(x, "add %s to group %s", name, x->shared);
                }
        } else if (x->o->host) {
                struct slots_gr gr;
                int k = slots_nss_group(x->shared, &gr);

                if (k < 0)
                        return nss_failed(x, k, x->shared);
                if (k > 0 && !slots_gr_has_member(&gr, name))
                        PROBLEM(x, x->shared,
                                fmt_fix(x, "add %s to %s where the group is kept (directory service)", name,
                                        x->shared),
                                "the group comes from the name service, not /etc/group, and does not list %s",
                                name);
                if (k > 0)
                        slots_gr_clear(&gr);
        }
        return r;
}

/*
 * Checks one slot against the plan: its account, else its group, else the id
 * it will get.  When nothing conflicts (in this slot or one before it), plans
 * what is missing.  Conflicts are PROBLEMs.
 */
static int plan_slot(struct ctx *x, struct pslot *s)
{
        const struct slots_config *c = x->c;
        struct acct u, g;
        char *home = slot_home(x, s->name);
        /* With uid_base every id is fixed by the slot's number, the same on every host. */
        uid_t want = c->uid_base ? c->uid_base + (uid_t) (s - x->slots + 1) : 0;
        uid_t id = 0;
        int r;

        if (!home)
                return slots_error_set(x->e, -ENOMEM, s->name, "out of memory");
        r = find_user(x, s->name, &u);
        if (r == 0)
                r = find_group(x, s->name, &g);
        else
                memset(&g, 0, sizeof(g));
        if (r < 0)
                goto out;

        if (u.found && !u.valid) {
                PROBLEM(x, s->name, "repair the line with vipw", "the account's line in /etc/passwd is malformed");
                goto out;
        }
        if (g.found && !g.valid) {
                PROBLEM(x, s->name, "repair the line with vigr", "the group's line in /etc/group is malformed");
                goto out;
        }
        if (u.found) {
                id = u.uid;
                r = check_user(x, s->name, &u, &g, home, want);
        } else if (g.found) {
                id = g.gid;
                r = check_group(x, s->name, &g, want);
        } else {
                r = choose_id(x, s->name, want, &id);
        }
        if (r < 0)
                goto out;
        s->uid = id;
        if (x->problems == 0)
                r = plan_missing(x, s->name, &u, &g, home, id);
out:
        if (r == -EINVAL)
                r = slots_error_invalid(x->e, r, c->path,
                                    "the home or shell of %s holds ':', ',' or a newline, which account files "
                                    "cannot hold", s->name);
        else if (r == -ENOMEM)
                slots_error_set(x->e, r, s->name, "out of memory");
        else if (r == -EBADMSG)
                r = slots_error_set(x->e, r, x->shared,
                                    "its line in /etc/group or /etc/gshadow is malformed; repair it with vigr");
        acct_clear(&u);
        acct_clear(&g);
        free(home);
        return r;
}

/* The image's account files as the source of the service lookup (slots-provision --root). */
static int image_user(void *data, const char *name, struct slots_pw *out)
{
        const struct slots_acct_user *u = slots_accounts_user(data, name);

        if (!u || !u->valid)
                return 0;
        *out = (struct slots_pw){ .uid = u->uid, .gid = u->gid };
        return 1;
}

static int image_gr(const struct slots_acct_group *g, struct slots_gr *out)
{
        *out = (struct slots_gr){ .gid = g->gid, .name = strdup(g->name) };
        return out->name ? 1 : -ENOMEM;
}

static int image_group(void *data, const char *name, struct slots_gr *out)
{
        const struct slots_acct_group *g = slots_accounts_group(data, name);

        return g && g->valid ? image_gr(g, out) : 0;
}

static int image_gid(void *data, gid_t gid, struct slots_gr *out)
{
        const struct slots_acct_group *g = slots_accounts_group_by_gid(data, gid);

        return g ? image_gr(g, out) : 0;
}

static int plan_service(struct ctx *x)
{
        const struct slots_config *c = x->c;
        const struct slots_service_source image = { image_user, image_group, image_gid, x->db };
        struct slots_service s;
        int r, failed = 0;

        r = slots_service_lookup(c, x->o->host ? NULL : &image, SLOTS_SERVICE_USER | SLOTS_SERVICE_GROUP, &s);
        if (r < 0)
                return slots_error_set(x->e, r, c->service, "out of memory");
        if (s.user > 0)
                x->svc_uid = s.pw.uid;
        if (s.user < 0)
                failed = s.user;
        else if (s.user > 0)
                failed = s.group < 0 ? s.group : s.named < 0 ? s.named : 0;
        if (failed) {
                /* Only NSS fails: the image's files are in memory (an allocation, then). */
                r = x->o->host ? nss_failed(x, failed, s.user < 0 || !c->service_group ? c->service : c->service_group)
                               : slots_error_set(x->e, failed, c->service, "out of memory");
        } else if (s.user == 0) {
                if (x->o->host)
                        PROBLEM(x, c->service, "create the service account first, or fix \"service\" in the config",
                                "the service account does not exist");
                else
                        PROBLEM(x, c->service,
                                "add the service account to the image's /etc/passwd first, or fix \"service\"",
                                "the service account is not in the tree's /etc/passwd");
        } else if (s.group == 0) {
                if (x->o->host)
                        PROBLEM(x, c->service_group, "create the group, or fix \"service_group\" in the config",
                                "the service group does not exist");
                else
                        PROBLEM(x, c->service_group,
                                "add the group to the image's /etc/group first, or fix \"service_group\"",
                                "the service group is not in the tree's /etc/group");
        } else {
                x->table_gid = s.gid;
                x->table_group = s.group_name;
                s.group_name = NULL;
        }
        slots_service_clear(&s);
        return r;
}

/* Is the service account listed in group (local files, else NSS)?  1, 0 or -errno. */
static int service_in_group(struct ctx *x, const char *group)
{
        struct slots_gr gr;
        int k;

        if (slots_accounts_group(x->db, group))
                return slots_accounts_is_member(x->db, group, x->c->service);
        if (!x->o->host)
                return 0;
        k = slots_nss_group(group, &gr);
        if (k <= 0)
                return k < 0 ? nss_failed(x, k, group) : 0;
        k = slots_gr_has_member(&gr, x->c->service);
        slots_gr_clear(&gr);
        return k;
}

/*
 * The service is never a slot: a service account in a slot's group or the shared
 * group could reach every slot's files (and a slot the service's).  Invalid config.
 */
static int plan_service_apart(struct ctx *x)
{
        char name[SLOTS_NAME_MAX];
        int r;

        for (unsigned i = 0; i <= x->c->slots; i++) {
                const char *g = i ? slots_slot_name(i, name) : x->shared;

                r = service_in_group(x, g);
                if (r < 0)
                        return r;
                if (r > 0) {
                        r = slots_error_invalid(x->e, -EBADMSG, x->c->path,
                                            "the service account %s is a member of group %s; the service is "
                                            "never a slot", x->c->service, g);
                        slots_error_fix(x->e, "remove it: gpasswd -d %s %s", x->c->service, g);
                        return r;
                }
        }
        return 0;
}

/* run_as_group: the group slots may run with (sudo -g), the service account its member. */
static int plan_run_as_group(struct ctx *x)
{
        const char *name = x->c->run_as_group;
        struct acct g;
        bool found;
        gid_t gid;
        int r;

        if (!name)
                return 0;
        r = find_group(x, name, &g);
        if (r < 0)
                return r;
        if (g.found && !g.valid) {
                PROBLEM(x, name, "repair the line with vigr", "the group's line in /etc/group is malformed");
                acct_clear(&g);
                return 0;
        }
        if (g.found && !g.local) {
                acct_clear(&g);
                r = service_in_group(x, name);
                if (r == 0)
                        PROBLEM(x, name, fmt_fix(x, "add %s to %s where the group is kept (directory service)",
                                                 x->c->service, name),
                                "run_as_group comes from the name service and does not list %s", x->c->service);
                return r < 0 ? r : 0;
        }
        found = g.found;
        acct_clear(&g);
        if (!found) {
                r = next_id(x, &gid);
                if (r == -ENOSPC) {
                        PROBLEM(x, name, "widen uid_min/uid_max in the config", "no free id left in %s",
                                x->range);
                        return 0;
                }
                if (r == 0)
                        r = slots_accounts_add_group(x->db, name, gid);
                if (r == 0)
                        r = acct_line(x, "create group %s (gid %u)", name, (unsigned) gid);
                if (r < 0)
                        return r;
        } else if (!slots_accounts_has_gshadow(x->db, name)) {
                r = slots_accounts_add_gshadow(x->db, name);
                if (r == 0)
                        r = acct_line(x, "add gshadow entry for group %s", name);
                if (r < 0)
                        return r;
        }
        if (!slots_accounts_is_member(x->db, name, x->c->service) ||
            !slots_accounts_gshadow_lists(x->db, name, x->c->service)) {
                r = slots_accounts_add_member(x->db, name, x->c->service);
                if (r == 0)
                        r = acct_line(x, "add %s to group %s", x->c->service, name);
        }
        return r == -EBADMSG ? slots_error_set(x->e, r, name, "its line in /etc/group or /etc/gshadow is "
                                               "malformed; repair it with vigr") : r;
}

static int plan_accounts(struct ctx *x)
{
        int r;

        x->cursor = x->id_max;
        x->cursor_done = false;
        r = plan_service(x);
        if (r < 0)
                return r;
        r = plan_shared(x);
        if (r < 0)
                return r;
        x->slots = calloc(x->c->slots, sizeof(*x->slots));
        if (!x->slots)
                return slots_error_set(x->e, -ENOMEM, "slots", "out of memory");
        for (unsigned i = 0; i < x->c->slots; i++) {
                slots_slot_name(i + 1, x->slots[i].name);
                r = plan_slot(x, &x->slots[i]);
                if (r < 0)
                        return r;
        }
        index_slots(x);
        r = plan_service_apart(x);
        if (r == 0)
                r = plan_run_as_group(x);
        return r;
}

/* ---- folders ---- */

/* A dry pass reports a missing folder once, however many files go into it. */
static bool dry_seen(struct ctx *x, const char *path)
{
        char **n;

        if (x->quiet)
                return false;
        for (size_t i = 0; i < x->n_dry_made; i++)
                if (strcmp(x->dry_made[i], path) == 0)
                        return true;
        n = realloc(x->dry_made, (x->n_dry_made + 1) * sizeof(*n));
        if (n) {
                x->dry_made = n;
                if ((n[x->n_dry_made] = strdup(path)))
                        x->n_dry_made++;
        }
        return false;
}

/*
 * A configured root (app_root, docs_root, slots_root, /etc/sudoers.d) through
 * the resolver: no symlink in any component, owned by root (or, with
 * service_may_own, the service) all the way and writable by nobody else.  A
 * refusal is reported here; -ENOENT is left to the caller.
 */
static int open_root(struct ctx *x, const char *path, const char *what, bool service_may_own)
{
        struct slots_error e;
        int fd;

        slots_error_clear(&e);
        fd = slots_open_root_dir(x->rootfd, path, what, service_may_own ? x->svc_uid : (uid_t) -1,
                                 service_may_own ? x->table_gid : (gid_t) -1, &e);
        if (fd < 0 && fd != -ENOENT)
                FAILED(x, e.object, e.fix[0] ? e.fix : NULL, "%s", e.reason);
        return fd;
}

/*
 * A folder this code creates is made with mode 0 and then given 0755: a run
 * killed in between leaves a root:root 0000 folder on the way, which only
 * that can have made.  Finish each one on path.
 */
static void finish_dirs(struct ctx *x, const char *path)
{
        char *p = strdup(path);

        if (!p)
                return;
        for (char *s = p + 1;; s++) {
                if (*s == '/' || *s == '\0') {
                        char save = *s;
                        struct stat st;
                        int fd;

                        *s = '\0';
                        fd = slots_open_in(x->rootfd, p, O_RDONLY | O_DIRECTORY);
                        if (fd >= 0 && fstat(fd, &st) == 0 && S_ISDIR(st.st_mode) && (st.st_mode & 07777) == 0 &&
                            st.st_uid == 0 && st.st_gid == 0) {
                                struct strbuf key = { 0 };

                                /* A dry pass finds it again for the next file in it: report it once. */
                                strbuf_addf(&key, "finish:%s", p);
                                x->oom |= key.oom;
                                if (!x->dry || !dry_seen(x, strbuf_str(&key)))
                                        change(x, "finish folder %s (root:root 0755)", p);
                                strbuf_free(&key);
                                if (!x->dry && fchmod(fd, 0755) < 0)
                                        FAILED(x, p, NULL, "cannot finish the folder: %s", strerror(errno));
                        }
                        slots_close(fd);
                        *s = save;
                        if (!save || fd == -ENOENT)
                                break;
                }
        }
        free(p);
}

/*
 * Opens the absolute folder path inside the root, creating missing components
 * root:root 0755 (changes reported).  In a dry pass returns -ENOENT when it
 * does not exist yet.  Existing components are the admin's and stay as they are.
 */
static int open_dirs(struct ctx *x, const char *path)
{
        char *p = strdup(path), *cut;
        size_t have;
        int fd, r;

        if (!p)
                return -ENOMEM;
        if (strcmp(path, "/") != 0)
                finish_dirs(x, path);
        /* Root writes in it: no symlink on the way, root's all the way (reported by open_root). */
        fd = open_root(x, p, NULL, false);
        if (fd != -ENOENT)
                goto done;
        /* Find the longest prefix that exists. */
        for (;;) {
                cut = strrchr(p, '/');
                if (cut == p) {
                        p[1] = '\0';
                } else {
                        *cut = '\0';
                }
                fd = open_root(x, p, NULL, false);
                if (fd != -ENOENT || strcmp(p, "/") == 0)
                        break;
        }
        if (fd < 0)
                goto done;
        have = strlen(p);
        if (have == 1)
                have = 0;
        free(p);
        p = strdup(path);
        if (!p) {
                slots_close(fd);
                return -ENOMEM;
        }
        while (p[have] == '/') {
                char *start = p + have + 1, *end = strchr(start, '/');
                struct slots_dir_found found = { .changed = false };
                char save = 0;
                int nfd;

                if (end) {
                        save = *end;
                        *end = '\0';
                }
                if (fd < 0) {
                        if (!dry_seen(x, p))
                                change(x, "create folder %s (root:root 0755)", p);
                } else {
                        nfd = slots_ensure_dir(fd, start, 0, 0, 0755,
                                               x->dry ? SLOTS_ENSURE_DRY_RUN : SLOTS_ENSURE_MKDIR_FIRST, &found);
                        slots_close(fd);
                        fd = nfd;
                        if (fd == -ENOENT && x->dry) {
                                if (!dry_seen(x, p))
                                        change(x, "create folder %s (root:root 0755)", p);
                        } else if (fd < 0) {
                                r = fd;
                                PROBLEM(x, p, "move it away", "cannot create the folder: %s", strerror(-r));
                                free(p);
                                return r;
                        } else if (found.changed) {
                                change(x, "create folder %s (root:root 0755)", p);
                        }
                }
                if (end)
                        *end = save;
                have = end ? (size_t) (end - p) : strlen(p);
        }
        if (fd < 0 && fd != -ENOENT)
                PROBLEM(x, path, "make it a folder (a symlink or file is in the way, or it cannot be opened)",
                        "cannot open the folder: %s", strerror(-fd));
done:
        free(p);
        return fd;
}

/*
 * Makes dirfd/name (path) a folder with owner and mode; dirfd < 0 means the
 * parent is still to be created (dry pass).  A symlink or another file where
 * the folder belongs is a PROBLEM and is not followed.  Returns the folder's
 * fd, or with want_fd false 0 (a folder that is right then costs one look by
 * name: issue 18, the 3n slot folders); -ENOENT (dry: to be created) or -errno.
 */
static int folder(struct ctx *x, int dirfd, const char *path, const char *name, uid_t uid, gid_t gid,
                  mode_t mode, bool want_fd)
{
        char b1[64], b2[64], b3[64], b4[64];
        struct slots_dir_found f;
        unsigned flags = 0;
        int r;

        if (dirfd < 0) {
                change(x, "create folder %s (%s:%s %04o)", path, uid_str(x, uid, b1, sizeof(b1)),
                       gid_str(x, gid, b2, sizeof(b2)), mode);
                return -ENOENT;
        }
        if (x->dry)
                flags |= SLOTS_ENSURE_DRY_RUN;
        if (!want_fd)
                flags |= SLOTS_ENSURE_NO_FD;
        /* Folders come in runs: after one that was missing, the next is made before it is looked for. */
        if (x->dir_missing)
                flags |= SLOTS_ENSURE_MKDIR_FIRST;
        r = slots_ensure_dir(dirfd, name, uid, gid, mode, flags, &f);
        x->dir_missing = f.created;
        if (r == -ELOOP) {
                PROBLEM(x, path, fmt_fix(x, "remove the link (rm %s); slots-provision then creates the folder", path),
                        "is a symlink where a folder belongs; not following it");
                return r;
        }
        if (r == -ENOTDIR) {
                PROBLEM(x, path, fmt_fix(x, "move it away; slots-provision then creates the folder"),
                        "is not a folder");
                return r;
        }
        if (r < 0 && !(r == -ENOENT && x->dry)) {
                PROBLEM(x, path, NULL, x->dry ? "cannot inspect: %s" : "cannot create or repair the folder: %s",
                        strerror(-r));
                return r;
        }
        if (f.created)
                change(x, "create folder %s (%s:%s %04o)", path, uid_str(x, uid, b1, sizeof(b1)),
                       gid_str(x, gid, b2, sizeof(b2)), mode);
        else if (f.changed)
                change(x, "repair folder %s: %s:%s %04o -> %s:%s %04o", path, uid_str(x, f.uid, b1, sizeof(b1)),
                       gid_str(x, f.gid, b2, sizeof(b2)), f.mode, uid_str(x, uid, b3, sizeof(b3)),
                       gid_str(x, gid, b4, sizeof(b4)), mode);
        return r;
}

static int slot_folders(struct ctx *x)
{
        static const char *const kinds[] = { "home", "state", "run" };
        const char *root = x->c->slots_root;
        int rootdir, r = 0;

        /* What exists of slots_root must pass the resolver before anything is made below it. */
        rootdir = open_root(x, root, "slots_root", false);
        if (rootdir < 0 && rootdir != -ENOENT)
                return 0;       /* reported */
        slots_close(rootdir);
        rootdir = open_dirs(x, root);
        if (rootdir < 0 && rootdir != -ENOENT)
                return 0;       /* reported */
        /* slots_root is ours: re-assert it like the folders below it. */
        if (rootdir >= 0) {
                const char *base;
                int parent = slots_open_parent_in(x->rootfd, root, &base);

                if (parent >= 0 && strcmp(root, "/") != 0)
                        (void) folder(x, parent, root, base, 0, 0, 0755, false);
                slots_close(parent);
        }
        for (size_t k = 0; k < 3; k++) {
                char *kpath = slots_path_join(root, kinds[k]);
                int kfd;

                if (!kpath) {
                        r = -ENOMEM;
                        break;
                }
                kfd = folder(x, rootdir, kpath, kinds[k], 0, 0, 0755, true);
                if (kfd < 0 && kfd != -ENOENT) {
                        free(kpath);
                        continue;
                }
                for (unsigned i = 0; i < x->c->slots; i++) {
                        const struct pslot *s = &x->slots[i];
                        char *spath = slots_path_join(kpath, s->name);

                        if (!spath) {
                                r = -ENOMEM;
                                break;
                        }
                        (void) folder(x, kfd, spath, s->name, s->uid, s->uid, 0700, false);
                        free(spath);
                }
                slots_close(kfd);
                free(kpath);
        }
        slots_close(rootdir);
        if (r < 0)
                slots_error_set(x->e, r, root, "out of memory");
        return r;
}

/* ---- release traversal ---- */

/*
 * Whether st is one of the private paths itself, whatever the name it was
 * reached by (a hard link, a bind mount, a rename): compared by device and inode.
 */
static bool private_inode(struct ctx *x, const struct stat *st)
{
        for (size_t i = 0; i < x->c->n_private_paths; i++) {
                struct slots_chase how = { .open_flags = O_PATH };
                struct stat ps;
                int fd = slots_chase(x->rootfd, x->c->private_paths[i], &how, NULL, NULL);
                bool same = fd >= 0 && fstat(fd, &ps) == 0 && ps.st_dev == st->st_dev && ps.st_ino == st->st_ino;

                slots_close(fd);
                if (same)
                        return true;
        }
        return false;
}

/* Changes the permission bits of an object root or the service owns; others are reported. */
static bool traverse_fix(struct ctx *x, int fd, const char *path, mode_t set, mode_t add)
{
        char b[64];
        struct stat st;
        mode_t old, want;

        if (fstat(fd, &st) < 0) {
                FAILED(x, path, NULL, "cannot inspect: %s", strerror(errno));
                return false;
        }
        if (st.st_uid != 0 && st.st_uid != x->svc_uid) {
                WARN(x, path,
                     fmt_fix(x, "chown it to root or %s if it belongs to the application, then run slots-provision "
                             "again", x->c->service),
                     "owned by %s, not root or %s: left unchanged, so slots may not reach the launcher",
                     uid_str(x, st.st_uid, b, sizeof(b)), x->c->service);
                return false;
        }
        /* The launcher may be a private file under another name: a hard link is never loosened. */
        if (!S_ISDIR(st.st_mode) && st.st_nlink > 1) {
                WARN(x, path, fmt_fix(x, "replace the link with a copy of the launcher, then run slots-provision "
                                      "again"),
                     "has %lu hard links: its mode is left alone (the other name may be a private file)",
                     (unsigned long) st.st_nlink);
                return false;
        }
        if (private_inode(x, &st)) {
                WARN(x, path, NULL, "is a private path reached by another name: left unchanged");
                return false;
        }
        old = st.st_mode & 07777;
        /* A folder keeps its setgid and sticky bits; the launcher gets exactly its mode (no set-id). */
        if (!set)
                want = old | add;
        else if (S_ISDIR(st.st_mode))
                want = (old & (S_ISGID | S_ISVTX)) | set;
        else
                want = set;
        if (want == old)
                return true;
        change(x, "set mode of %s: %04o -> %04o", path, old, want);
        if (!x->dry && fchmod(fd, want) < 0)
                FAILED(x, path, NULL, "cannot change the mode: %s", strerror(errno));
        return true;
}

static int cmp_names(const void *a, const void *b)
{
        return strcmp(*(char *const *) a, *(char *const *) b);
}

/* The entries of a directory fd, sorted, without "." and ".."; *n set.  NULL with n 0 when empty. */
static char **list_dir(int dirfd, size_t *n, int *err)
{
        char **names = NULL;
        size_t cap = 0;
        struct dirent *de;
        DIR *d;
        int fd = openat(dirfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC), r;

        *n = 0;
        *err = 0;
        if (fd < 0 || !(d = fdopendir(fd))) {
                *err = -errno;
                slots_close(fd);
                return NULL;
        }
        while ((errno = 0, de = readdir(d))) {
                if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
                        continue;
                if (*n == cap) {
                        char **nn = realloc(names, (cap = cap ? cap * 2 : 16) * sizeof(*names));
                        if (!nn)
                                goto oom;
                        names = nn;
                }
                if (!(names[*n] = strdup(de->d_name)))
                        goto oom;
                (*n)++;
        }
        /* A listing cut short would leave the rest unrepaired, with no word of it. */
        if (errno) {
                r = -errno;
                goto fail;
        }
        closedir(d);
        if (*n)
                qsort(names, *n, sizeof(*names), cmp_names);
        return names;
oom:
        r = -ENOMEM;
fail:
        closedir(d);
        for (size_t i = 0; i < *n; i++)
                free(names[i]);
        free(names);
        *n = 0;
        *err = r;
        return NULL;
}

static void free_names(char **names, size_t n)
{
        for (size_t i = 0; i < n; i++)
                free(names[i]);
        free(names);
}

/* Warns about each folder on the way to app_root that others cannot traverse: the slots could not reach it. */
static void check_reachable(struct ctx *x, const char *path)
{
        char *p = strdup(path);

        if (!p)
                return;
        for (char *s = p;; s++) {
                if (*s == '/' || *s == '\0') {
                        char save = *s;
                        struct stat st;
                        int fd;

                        *s = '\0';
                        fd = slots_open_in(x->rootfd, p[0] ? p : "/", O_PATH);
                        if (fd >= 0 && fstat(fd, &st) == 0 && S_ISDIR(st.st_mode) && !(st.st_mode & S_IXOTH))
                                WARN(x, p[0] ? p : "/", fmt_fix(x, "chmod o+x %s", p[0] ? p : "/"),
                                     "others cannot traverse it (mode %04o): the slots cannot reach the launcher; "
                                     "not changed (slots-provision loosens only the releases)",
                                     st.st_mode & 07777);
                        slots_close(fd);
                        *s = save;
                        if (!save)
                                break;
                }
        }
        free(p);
}

static int open_child(struct ctx *x, int dirfd, const char *path, const char *name, bool want_dir,
                      bool warn_missing)
{
        struct stat st;
        int fd;

        if (fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0) {
                if (errno != ENOENT || warn_missing)
                        FAILED(x, path, NULL, "cannot inspect: %s", strerror(errno));
                return -errno;
        }
        if (S_ISLNK(st.st_mode)) {
                WARN(x, path, NULL, "is a symlink: not followed and not changed");
                return -ELOOP;
        }
        if (want_dir ? !S_ISDIR(st.st_mode) : !S_ISREG(st.st_mode)) {
                if (warn_missing)
                        WARN(x, path, NULL, "is not a %s: not changed", want_dir ? "folder" : "file");
                return -EINVAL;
        }
        fd = openat(dirfd, name,
                    (want_dir ? O_RDONLY | O_DIRECTORY : O_RDONLY | O_NONBLOCK | O_NOCTTY) | O_NOFOLLOW |
                            O_CLOEXEC);
        if (fd < 0) {
                FAILED(x, path, NULL, "cannot open: %s", strerror(errno));
                return -errno;
        }
        return fd;
}

static int releases(struct ctx *x)
{
        const struct slots_config *c = x->c;
        char *rel = NULL, **names = NULL;
        size_t n = 0;
        int appfd, relfd = -1, err, r = 0;

        if (!c->app_root)
                return 0;
        if (slots_config_is_private(c, c->app_root))
                return 0;
        appfd = open_root(x, c->app_root, "app_root", true);
        if (appfd < 0 && appfd != -ENOENT)
                return 0;       /* reported */
        if (appfd < 0) {
                WARN(x, c->app_root, "run slots-provision again once the application is installed",
                     "app_root cannot be opened (%s): release traversal skipped", strerror(-appfd));
                return 0;
        }
        check_reachable(x, c->app_root);
        rel = slots_path_join(c->app_root, "releases");
        if (!rel) {
                r = -ENOMEM;
                goto out;
        }
        if (slots_config_is_private(c, rel))
                goto out;
        relfd = open_child(x, appfd, rel, "releases", true, true);
        if (relfd < 0)
                goto out;
        if (!traverse_fix(x, relfd, rel, 0711, 0))
                goto out;
        names = list_dir(relfd, &n, &err);
        if (err) {
                FAILED(x, rel, NULL, "cannot list: %s", strerror(-err));
                goto out;
        }
        for (size_t i = 0; i < n; i++) {
                char *rpath = slots_path_join(rel, names[i]), *bpath = NULL, *lpath = NULL;
                int rfd = -1, bfd = -1, lfd = -1;
                struct stat st;

                if (!rpath) {
                        r = -ENOMEM;
                        break;
                }
                /* Symlinks ("current") and files in releases/ are not release folders. */
                if (slots_config_is_private(c, rpath) || fstatat(relfd, names[i], &st, AT_SYMLINK_NOFOLLOW) < 0 ||
                    !S_ISDIR(st.st_mode))
                        goto next;
                rfd = open_child(x, relfd, rpath, names[i], true, true);
                if (rfd < 0 || !traverse_fix(x, rfd, rpath, 0, S_IXOTH))
                        goto next;
                bpath = slots_path_join(rpath, "bin");
                if (!bpath || slots_config_is_private(c, bpath))
                        goto next;
                bfd = open_child(x, rfd, bpath, "bin", true, false);
                if (bfd < 0 || !traverse_fix(x, bfd, bpath, 0, S_IXOTH) || !c->launcher)
                        goto next;
                lpath = slots_path_join(bpath, c->launcher);
                if (!lpath || slots_config_is_private(c, lpath))
                        goto next;
                lfd = open_child(x, bfd, lpath, c->launcher, false, false);
                if (lfd >= 0)
                        (void) traverse_fix(x, lfd, lpath, 0755, 0);
        next:
                slots_close(lfd);
                slots_close(bfd);
                slots_close(rfd);
                free(lpath);
                free(bpath);
                free(rpath);
        }
out:
        free_names(names, n);
        slots_close(relfd);
        slots_close(appfd);
        free(rel);
        if (r < 0)
                slots_error_set(x->e, r, c->app_root, "out of memory");
        return r;
}

/* ---- shared folders ---- */

/* Group <prefix>shared, setgid on folders, g+rwX; owner and the bits of others stay. */
static void share_one(struct ctx *x, int fd, const char *path, const struct stat *st)
{
        char b1[64], b2[64];
        bool dir = S_ISDIR(st->st_mode);
        mode_t old = st->st_mode & 07777, want;
        bool chgrp = st->st_gid != x->shared_gid;

        if (dir)
                want = old | S_ISGID | S_IRWXG;
        else
                want = old | S_IRGRP | S_IWGRP | ((old & (S_IXUSR | S_IXGRP | S_IXOTH)) ? S_IXGRP : 0);
        /* chown drops set-id bits of a file; they are not put back. */
        if (!dir && chgrp)
                want &= ~(mode_t) (S_ISUID | S_ISGID);
        if (!chgrp && want == old)
                return;
        if (chgrp)
                change(x, "share %s: group %s -> %s, mode %04o -> %04o", path,
                       gid_str(x, st->st_gid, b1, sizeof(b1)), gid_str(x, x->shared_gid, b2, sizeof(b2)), old,
                       want);
        else
                change(x, "share %s: mode %04o -> %04o", path, old, want);
        if (x->dry)
                return;
        if ((chgrp && fchown(fd, (uid_t) -1, x->shared_gid) < 0) || fchmod(fd, want) < 0)
                FAILED(x, path, NULL, "cannot change group or mode: %s", strerror(errno));
}

static int share_walk(struct ctx *x, int fd, const char *path, dev_t dev, int depth)
{
        struct stat st;
        char **names;
        size_t n;
        int err, r = 0;

        if (fstat(fd, &st) < 0) {
                FAILED(x, path, NULL, "cannot inspect: %s", strerror(errno));
                return 0;
        }
        share_one(x, fd, path, &st);
        if (depth >= SHARE_MAX_DEPTH) {
                WARN(x, path, NULL, "deeper than %d levels: not walked further", SHARE_MAX_DEPTH);
                return 0;
        }
        names = list_dir(fd, &n, &err);
        if (err) {
                FAILED(x, path, NULL, "cannot list: %s", strerror(-err));
                return err == -ENOMEM ? err : 0;
        }
        for (size_t i = 0; i < n && r == 0; i++) {
                char *cpath = slots_path_join(path, names[i]);
                struct stat cst, ost;
                int cfd;

                if (!cpath) {
                        r = -ENOMEM;
                        break;
                }
                if (fstatat(fd, names[i], &cst, AT_SYMLINK_NOFOLLOW) < 0) {
                        if (errno != ENOENT)
                                FAILED(x, cpath, NULL, "cannot inspect: %s", strerror(errno));
                        free(cpath);
                        continue;
                }
                /* Never a symlink, a device or a FIFO, never another file system, never a private path. */
                if (!(S_ISDIR(cst.st_mode) || S_ISREG(cst.st_mode)) || cst.st_dev != dev ||
                    slots_config_is_private(x->c, cpath)) {
                        free(cpath);
                        continue;
                }
                /* A hard link could be any file of this file system (/etc/shadow): leave it. */
                if (S_ISREG(cst.st_mode) && cst.st_nlink > 1) {
                        WARN(x, cpath, NULL, "has %lu hard links: its group and mode are left alone",
                             (unsigned long) cst.st_nlink);
                        free(cpath);
                        continue;
                }
                cfd = openat(fd, names[i],
                             (S_ISDIR(cst.st_mode) ? O_RDONLY | O_DIRECTORY : O_RDONLY | O_NONBLOCK | O_NOCTTY) |
                                     O_NOFOLLOW | O_CLOEXEC);
                /* Gone or swapped since the look: not ours to repair.  Unreadable: said so. */
                if ((cfd < 0 && errno != ENOENT && errno != ELOOP && errno != ENOTDIR && errno != ENXIO) ||
                    (cfd >= 0 && fstat(cfd, &ost) < 0)) {
                        FAILED(x, cpath, NULL, "cannot inspect: %s", strerror(errno));
                        slots_close(cfd);
                        free(cpath);
                        continue;
                }
                if (cfd >= 0 && ost.st_ino == cst.st_ino && ost.st_dev == cst.st_dev &&
                    (ost.st_mode & S_IFMT) == (cst.st_mode & S_IFMT) && (S_ISDIR(ost.st_mode) || ost.st_nlink == 1)) {
                        if (S_ISDIR(ost.st_mode))
                                r = share_walk(x, cfd, cpath, dev, depth + 1);
                        else
                                share_one(x, cfd, cpath, &ost);
                }
                slots_close(cfd);
                free(cpath);
        }
        free_names(names, n);
        return r;
}

static int shared_dirs(struct ctx *x)
{
        const struct slots_config *c = x->c;
        int docfd, r = 0;

        if (!c->docs_root || c->n_shared_dirs == 0)
                return 0;
        docfd = open_root(x, c->docs_root, "docs_root", true);
        if (docfd < 0 && docfd != -ENOENT)
                return 0;       /* reported */
        if (docfd < 0) {
                WARN(x, c->docs_root, "create docs_root, then run slots-provision again",
                     "docs_root cannot be opened (%s): shared folders skipped", strerror(-docfd));
                return 0;
        }
        for (size_t i = 0; i < c->n_shared_dirs && r == 0; i++) {
                char *path = slots_path_join(c->docs_root, c->shared_dirs[i]);
                char *rel = strdup(c->shared_dirs[i]), *comp, *slash;
                int dfd = dup(docfd), fd = -1;
                struct stat st;

                if (!path || !rel) {
                        r = -ENOMEM;
                        goto next;
                }
                if (dfd < 0) {
                        FAILED(x, path, NULL, "cannot open docs_root again: %s", strerror(errno));
                        goto next;
                }
                /* Walk to the parent without following anything. */
                comp = rel;
                while ((slash = strchr(comp, '/'))) {
                        int nfd;

                        *slash = '\0';
                        nfd = openat(dfd, comp, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
                        if (nfd < 0) {
                                WARN(x, path, NULL, "a folder on the way (%s) %s: not shared", comp,
                                     errno == ENOENT ? "does not exist" :
                                     errno == ELOOP || errno == ENOTDIR ? "is not a folder (or is a symlink)" :
                                                                         strerror(errno));
                                goto next;
                        }
                        slots_close(dfd);
                        dfd = nfd;
                        comp = slash + 1;
                }
                if (fstatat(dfd, comp, &st, AT_SYMLINK_NOFOLLOW) < 0) {
                        char b1[64], b2[64];

                        if (errno != ENOENT) {
                                FAILED(x, path, NULL, "cannot inspect: %s", strerror(errno));
                                goto next;
                        }
                        change(x, "create shared folder %s (%s:%s 2770)", path, uid_str(x, x->svc_uid, b1, sizeof(b1)),
                               gid_str(x, x->shared_gid, b2, sizeof(b2)));
                        if (x->dry)
                                goto next;
                        if (mkdirat(dfd, comp, 0) < 0 ||
                            (fd = openat(dfd, comp, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) < 0 ||
                            fchown(fd, x->svc_uid, x->shared_gid) < 0 || fchmod(fd, 02770) < 0)
                                FAILED(x, path, NULL, "cannot create the shared folder: %s", strerror(errno));
                        goto next;
                }
                /*
                 * What a run killed between its mkdir (mode 0) and its chmod leaves: finish it.  Only
                 * adding g+rwX to it would leave the service's own folder closed to the service.
                 */
                if (S_ISDIR(st.st_mode) && (st.st_mode & 07777) == 0 && (st.st_uid == 0 || st.st_uid == x->svc_uid)) {
                        char b1[64], b2[64];

                        change(x, "finish shared folder %s (%s:%s 2770)", path, uid_str(x, x->svc_uid, b1, sizeof(b1)),
                               gid_str(x, x->shared_gid, b2, sizeof(b2)));
                        if (x->dry)
                                goto next;
                        if ((fd = openat(dfd, comp, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) < 0 ||
                            fchown(fd, x->svc_uid, x->shared_gid) < 0 || fchmod(fd, 02770) < 0)
                                FAILED(x, path, NULL, "cannot finish the shared folder: %s", strerror(errno));
                        goto next;
                }
                if (S_ISLNK(st.st_mode) || !S_ISDIR(st.st_mode)) {
                        WARN(x, path, NULL, "is %s: not followed and not shared",
                             S_ISLNK(st.st_mode) ? "a symlink" : "not a folder");
                        goto next;
                }
                fd = openat(dfd, comp, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
                if (fd < 0) {
                        FAILED(x, path, NULL, "cannot open: %s", strerror(errno));
                        goto next;
                }
                r = share_walk(x, fd, path, st.st_dev, 0);
        next:
                slots_close(fd);
                slots_close(dfd);
                free(rel);
                free(path);
        }
        slots_close(docfd);
        if (r < 0)
                slots_error_set(x->e, r, c->docs_root, "out of memory");
        return r;
}

/* ---- the table ---- */

static int table_check(struct ctx *x)
{
        struct slots_store s;
        int r;

        slots_error_clear(x->e);
        r = slots_store_open(&s, x->rootfd, x->c->table, x->c->slots, x->table_gid, 0, x->e);
        if (r == 0) {
                slots_store_close(&s);
                return 0;
        }
        if (x->e->kind == SLOTS_ERR_INVALID)
                return r;
        /* A table or folder that is not there yet is created later. */
        if (r == -ENOENT)
                return 0;
        PROBLEM(x, x->c->table, x->e->fix, "%s", x->e->reason);
        slots_error_clear(x->e);
        return 0;
}

static int table_step(struct ctx *x)
{
        const struct slots_file_mode def = { .uid = 0, .gid = x->table_gid, .mode = 0640 };
        const char *path = x->c->table, *base;
        char b1[64], b2[64], b3[64], *text = NULL;
        struct slots_store s;
        struct stat st;
        char *dir = strdup(path);
        size_t len = 0;
        int dfd, fd, r;

        if (!dir)
                return slots_error_set(x->e, -ENOMEM, path, "out of memory");
        *strrchr(dir, '/') = '\0';
        dfd = open_dirs(x, dir[0] ? dir : "/");
        free(dir);
        base = strrchr(path, '/') + 1;
        if (dfd < 0 && dfd != -ENOENT)
                return slots_error_set(x->e, dfd, path, "cannot open its folder: %s", strerror(-dfd));
        if (dfd < 0 || fstatat(dfd, base, &st, AT_SYMLINK_NOFOLLOW) < 0) {
                slots_close(dfd);
                change(x, "create table %s (root:%s 0640, empty)", path, x->table_group);
                if (x->dry)
                        return 0;
                r = slots_store_open(&s, x->rootfd, path, x->c->slots, x->table_gid, SLOTS_STORE_WRITE, x->e);
                if (r < 0)
                        return r;
                r = s.exists ? 0 : slots_store_save(&s, x->e);
                slots_store_close(&s);
                return r;
        }
        slots_close(dfd);
        if (slots_store_policy_ok(&st, x->table_gid))
                return 0;
        if (!S_ISREG(st.st_mode))
                return slots_error_refuse(x->e, -EINVAL, path, "is not a regular file");
        change(x, "repair table %s: %s:%s %04o -> root:%s 0640 (content kept)", path, uid_str(x, st.st_uid, b1, sizeof(b1)),
               gid_str(x, st.st_gid, b2, sizeof(b2)), st.st_mode & 07777, gid_str(x, x->table_gid, b3, sizeof(b3)));
        if (x->dry)
                return 0;
        /* Under the table's lock, so slots-admin never sees a half-repaired file; the content is not touched. */
        r = slots_store_open(&s, x->rootfd, path, x->c->slots, x->table_gid, SLOTS_STORE_WRITE, x->e);
        if (r < 0)
                return r;
        fd = slots_open_regular(s.dirfd, s.name, &st);
        if (fd < 0) {
                r = slots_error_set(x->e, fd, path, "cannot open: %s", strerror(-fd));
                goto out;
        }
        /*
         * The same bytes through the owner-preserving replace with the owner and mode forced:
         * a reader sees the old file or the repaired one, never a half-repaired mode that
         * would lock the service out if the run were killed in between.
         */
        r = slots_read_all(fd, SLOTS_TABLE_MAX, &text, &len);
        slots_close(fd);
        if (r < 0) {
                slots_error_set(x->e, r, path, "cannot read: %s", strerror(-r));
                goto out;
        }
        r = slots_replace(s.dirfd, s.name, path, text, len, &def, SLOTS_REPLACE_FORCE_MODE, x->e);
        free(text);
out:
        slots_store_close(&s);
        return r;
}

/* ---- slotctl config and sudoers drop-in: checked and written here, rendered in dropin.c ---- */

/* Runs visudo -c on fd; 0 when it accepts, else a refusal (-EBADMSG) with its words in e. */
static int visudo_check(struct ctx *x, int fd, const char *display)
{
        const char *const argv[] = { VISUDO, "-c", "-f", "-", NULL };
        char out[1024];
        int r = slots_run_program(argv, fd, 30000, out, sizeof(out));

        if (r == 0)
                return 0;
        if (r < 0)
                return slots_error_set(x->e, r, display, "cannot run %s to check the drop-in: %s", VISUDO,
                                       strerror(-r));
        for (char *p = out; *p; p++)
                if (*p == '\n')
                        *p = *(p + 1) ? ' ' : '\0';
        return slots_error_refuse(x->e, -EBADMSG, display, "visudo rejects the drop-in, not installed: %s", out);
}

/* Does the tree have sudo?  The drop-in is only written where visudo and /etc/sudoers.d are. */
static bool sudo_installed(struct ctx *x)
{
        int fd = slots_open_in(x->rootfd, VISUDO, O_PATH);

        if (fd < 0)
                return false;
        slots_close(fd);
        return true;
}

/* Content and owner/mode check of a small root-owned file; 1 when it already is exactly that. */
static int same_file(int dirfd, const char *name, const char *data, size_t len, mode_t mode, struct stat *st)
{
        char *old = NULL;
        size_t olen = 0;
        int fd = slots_open_regular(dirfd, name, st), r;

        if (fd < 0)
                return fd == -ENOENT ? 0 : fd;
        r = slots_read_all(fd, (size_t) 16 << 20, &old, &olen);
        slots_close(fd);
        if (r < 0)
                return r;
        r = olen == len && memcmp(old, data, len) == 0 && st->st_uid == 0 && st->st_gid == 0 &&
            (st->st_mode & 07777) == mode;
        free(old);
        return r;
}

static int sudoers_check(struct ctx *x)
{
        char name[128], shown[sizeof(SUDOERS_DIR) + 128];
        char *text;
        size_t len;
        int fd, r;

        if (!sudo_installed(x))
                return 0;
        text = slots_provision_sudoers(x->c, &len, x->e);
        if (!text)
                return -EBADMSG;
        if (access(VISUDO, X_OK) < 0) {
                free(text);
                PROBLEM(x, VISUDO, "install sudo on this host, or run slots-provision inside the tree",
                        "the tree has sudo but this host has no visudo to check the drop-in with");
                return 0;
        }
        fd = memfd_create("slots-sudoers", MFD_CLOEXEC);
        if (fd < 0 || slots_write_all(fd, text, len) < 0 || lseek(fd, 0, SEEK_SET) < 0) {
                r = slots_error_set(x->e, -errno, "sudoers", "cannot prepare the drop-in: %s", strerror(errno));
                slots_close(fd);
                free(text);
                return r;
        }
        free(text);
        /* A refusal names the drop-in it is about. */
        slots_provision_sudoers_name(x->c, name, sizeof(name));
        slots_path_join_to(shown, sizeof(shown), SUDOERS_DIR, name);
        r = visudo_check(x, fd, shown);
        slots_close(fd);
        return r;
}

static int sudoers_step(struct ctx *x)
{
        const struct slots_file_mode def = { .uid = 0, .gid = 0, .mode = 0440 };
        struct slots_staged staged;
        char name[128], *path = NULL, *text = NULL;
        struct stat st;
        size_t len;
        int dfd = -1, fd = -1, r = 0, same;

        if (!sudo_installed(x))
                return 0;
        slots_provision_sudoers_name(x->c, name, sizeof(name));
        path = slots_path_join(SUDOERS_DIR, name);
        text = slots_provision_sudoers(x->c, &len, x->e);
        if (!path || !text) {
                r = text ? slots_error_set(x->e, -ENOMEM, SUDOERS_DIR, "out of memory") : -EBADMSG;
                goto out;
        }
        dfd = open_root(x, SUDOERS_DIR, SUDOERS_DIR, false);
        if (dfd < 0 && dfd != -ENOENT)
                goto out;       /* reported */
        if (dfd < 0) {
                WARN(x, SUDOERS_DIR, "create it and make sure /etc/sudoers has \"@includedir /etc/sudoers.d\"",
                     "sudo is installed but this folder cannot be opened (%s): drop-in not written",
                     strerror(-dfd));
                goto out;
        }
        same = same_file(dfd, name, text, len, 0440, &st);
        if (same < 0 && same != -ENOENT) {
                r = slots_error_set(x->e, same, path, "cannot read: %s", strerror(-same));
                goto out;
        }
        if (same == 1)
                goto out;
        change(x, "write sudoers drop-in %s (root:root 0440)", path);
        if (x->dry)
                goto out;
        r = slots_replace_stage(dfd, name, path, text, len, &def, SLOTS_REPLACE_FORCE_MODE, &staged, x->e);
        if (r < 0)
                goto out;
        /* What visudo checks is the very file that is renamed into place. */
        fd = openat(dfd, staged.tmp, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
        r = fd < 0 ? slots_error_set(x->e, -errno, path, "cannot reopen the new drop-in: %s", strerror(errno)) :
                     visudo_check(x, fd, path);
        if (r < 0) {
                slots_replace_abort(&staged);
                goto out;
        }
        r = slots_replace_commit(&staged, x->e);
out:
        slots_close(fd);
        slots_close(dfd);
        free(text);
        free(path);
        return r;
}

static int slotctl_step(struct ctx *x)
{
        const struct slots_file_mode def = { .uid = 0, .gid = 0, .mode = 0644 };
        const char *path = x->c->slotctl_config, *base = strrchr(path, '/') + 1;
        char *dir = strndup(path, (size_t) (base - path)), *text;
        struct stat st;
        size_t len;
        int dfd, same, r = 0;

        if (!dir)
                return slots_error_set(x->e, -ENOMEM, path, "out of memory");
        if (strlen(dir) > 1)
                dir[strlen(dir) - 1] = '\0';
        text = slots_provision_slotctl_json(x->c, &len);
        if (!text) {
                free(dir);
                return slots_error_set(x->e, -ENOMEM, path, "out of memory");
        }
        dfd = open_dirs(x, dir);
        free(dir);
        if (dfd < 0 && dfd != -ENOENT) {
                r = slots_error_set(x->e, dfd, path, "cannot open its folder: %s", strerror(-dfd));
                goto out;
        }
        same = dfd < 0 ? 0 : same_file(dfd, base, text, len, 0644, &st);
        if (same < 0) {
                r = slots_error_set(x->e, same, path, "cannot read: %s", strerror(-same));
                goto out;
        }
        if (same == 1)
                goto out;
        change(x, "write slotctl config %s (root:root 0644)", path);
        if (!x->dry)
                r = slots_replace(dfd, base, path, text, len, &def, SLOTS_REPLACE_FORCE_MODE, x->e);
out:
        slots_close(dfd);
        free(text);
        return r;
}

/*
 * The slotctl config and the drop-in are written under "<slotctl_config>.lock",
 * like the table under its own: so two runs never interleave, and the temps of
 * a run killed before its rename are removed by the next one.
 */
static int files_step(struct ctx *x)
{
        const char *path = x->c->slotctl_config, *base = strrchr(path, '/') + 1;
        char *dir = NULL, *lockname = NULL;
        int dfd = -1, lockfd = -1, r = 0;

        if (!x->dry) {
                dir = strndup(path, (size_t) (base - path));
                if (!dir || asprintf(&lockname, "%s%s", base, SLOTS_LOCK_SUFFIX) < 0) {
                        lockname = NULL;
                        r = slots_error_set(x->e, -ENOMEM, path, "out of memory");
                        goto out;
                }
                if (strlen(dir) > 1)
                        dir[strlen(dir) - 1] = '\0';
                dfd = open_dirs(x, dir);
                if (dfd < 0) {
                        r = slots_error_set(x->e, dfd, path, "cannot open its folder: %s", strerror(-dfd));
                        goto out;
                }
                lockfd = slots_lock_take(dfd, lockname, path, x->e);
                if (lockfd < 0) {
                        r = lockfd;
                        goto out;
                }
                (void) slots_replace_clean_stale(dfd, base);
                if (sudo_installed(x)) {
                        char name[128];
                        int sdfd = slots_open_root_dir(x->rootfd, SUDOERS_DIR, SUDOERS_DIR, (uid_t) -1,
                                                       (gid_t) -1, NULL);

                        if (sdfd >= 0)
                                (void) slots_replace_clean_stale(sdfd, slots_provision_sudoers_name(x->c, name,
                                                                                                  sizeof(name)));
                        slots_close(sdfd);
                }
        }
        r = slotctl_step(x);
        if (r == 0)
                r = sudoers_step(x);
out:
        slots_close(lockfd);
        slots_close(dfd);
        free(lockname);
        free(dir);
        return r;
}

/* ---- the run ---- */

/* A file this run replaces must be a regular file or missing: anything else is found before any change. */
static int file_check(struct ctx *x, const char *path)
{
        const char *base;
        struct stat st;
        int dfd = slots_open_parent_in(x->rootfd, path, &base);

        if (dfd < 0)
                return 0;       /* a folder still to be made, or reported by open_dirs later */
        if (fstatat(dfd, base, &st, AT_SYMLINK_NOFOLLOW) == 0 && !S_ISREG(st.st_mode))
                PROBLEM(x, path, fmt_fix(x, "move it away; slots-provision then writes the file"),
                        "is %s, not a regular file; not replacing it",
                        S_ISLNK(st.st_mode) ? "a symlink" : S_ISDIR(st.st_mode) ? "a folder" : "a special file");
        slots_close(dfd);
        return 0;
}

/* Config rules that only matter here: paths the provisioning writes must be neither private nor odd. */
static int check_config(const struct slots_config *c, struct slots_error *e)
{
        const char *const written[] = { c->slots_root, c->table, c->slotctl_config, SUDOERS_DIR };
        const char *const keys[] = { "slots_root", "table", "slotctl_config", "sudoers drop-in" };

        for (size_t i = 0; i < sizeof(written) / sizeof(written[0]); i++)
                if (slots_config_is_private(c, written[i])) {
                        slots_error_invalid(e, -EBADMSG, c->path, "%s %s is a private path (or lies below one)",
                                        keys[i], written[i]);
                        slots_error_fix(e, "move it out of private_paths, or fix \"%s\"", keys[i]);
                        return -EBADMSG;
                }
        if (strpbrk(c->slots_root, ":,\n") || strpbrk(c->shell, ":,\n"))
                return slots_error_invalid(e, -EBADMSG, c->path,
                                       "slots_root and shell must not hold ':', ',' or a newline (account files "
                                       "cannot hold them)");
        if (strcmp(c->table, "/") == 0 || strcmp(c->slotctl_config, "/") == 0)
                return slots_error_invalid(e, -EBADMSG, c->path, "table and slotctl_config must name files");
        return 0;
}

static void ctx_free(struct ctx *x)
{
        for (size_t i = 0; i < x->n_dry_made; i++)
                free(x->dry_made[i]);
        free(x->dry_made);
        for (size_t i = 0; i < x->n_acct_lines; i++)
                free(x->acct_lines[i]);
        free(x->acct_lines);
        free(x->by_uid);
        free(x->slots);
        free(x->table_group);
        free(x->range);
        free(x->failed_obj);
        free(x->failed_text);
        strbuf_free(&x->text);
        strbuf_free(&x->fix);
        slots_accounts_free(x->db);
        slots_close(x->etcfd);
}

/* A message that could not be formatted ends the run: no line is reported cut short. */
static int oom_check(struct ctx *x)
{
        if (!x->oom)
                return 0;
        return slots_error_set(x->e, -ENOMEM, x->c->path, "out of memory while reporting; run slots-provision "
                                                          "again");
}

static void report_accounts(struct ctx *x)
{
        for (size_t i = 0; i < x->n_acct_lines; i++)
                change(x, "%s", x->acct_lines[i]);
}

int slots_provision(int rootfd, const struct slots_config *c, const struct slots_prov_opts *o,
                    unsigned *changes, struct slots_error *e)
{
        struct ctx x = { .rootfd = rootfd, .etcfd = -1, .c = c, .o = o, .e = e, .dry = true };
        bool locked = false, wrote = false;
        int lockfd = -1, r;

        *changes = 0;
        slots_error_clear(e);
        r = check_config(c, e);
        if (r < 0)
                return r;
        if (c->uid_range_set) {
                x.id_min = c->uid_min;
                x.id_max = c->uid_max;
        } else if (!c->uid_base) {
                r = slots_logindefs_uid_range(rootfd, &x.id_min, &x.id_max, e);
                if (r < 0)
                        return r;
                if (x.id_max - x.id_min + 1 < c->slots + 1) {
                        slots_error_invalid(e, -EBADMSG, "/etc/login.defs",
                                        "SYS_UID_MIN %u..SYS_UID_MAX %u holds %u ids; the pool needs %u (slots and "
                                        "the shared group)", (unsigned) x.id_min, (unsigned) x.id_max,
                                        (unsigned) (x.id_max - x.id_min + 1), c->slots + 1);
                        slots_error_fix(e, "set uid_min and uid_max in %s", c->path);
                        return -EBADMSG;
                }
        }
        if (asprintf(&x.range, "%u-%u%s", (unsigned) x.id_min, (unsigned) x.id_max,
                     c->uid_range_set ? " (uid_min-uid_max)" : " (SYS_UID_MIN-SYS_UID_MAX of login.defs)") < 0) {
                x.range = NULL;
                return slots_error_set(e, -ENOMEM, c->path, "out of memory");
        }
        x.etcfd = slots_open_in(rootfd, "/etc", O_RDONLY | O_DIRECTORY);
        if (x.etcfd < 0) {
                r = slots_error_set(e, x.etcfd, "/etc", "cannot open: %s", strerror(-x.etcfd));
                goto out;
        }
        /* The lock covers read, plan and write, so no other tool's change is lost in between. */
        if (!o->dry_run) {
                r = slots_accounts_lock(x.etcfd, o->host, &lockfd, e);
                if (r < 0)
                        goto out;
                locked = true;
                slots_accounts_clean_stale(x.etcfd);
        }
        r = slots_accounts_load(x.etcfd, "/etc", &x.db, e);
        if (r < 0)
                goto out;

        if (o->host)
                nsswitch_warn(&x);
        /* Everything is checked before anything changes. */
        x.quiet = true;
        r = plan_accounts(&x);
        if (r < 0)
                goto out;
        if (x.problems == 0) {
                r = slot_folders(&x);
                if (r == 0)
                        r = table_check(&x);
                if (r == 0)
                        r = sudoers_check(&x);
                if (r == 0)
                        r = file_check(&x, c->slotctl_config);
                if (r == 0 && sudo_installed(&x)) {
                        char name[128], *path = slots_path_join(SUDOERS_DIR,
                                                                  slots_provision_sudoers_name(c, name, sizeof(name)));

                        r = path ? file_check(&x, path) : slots_error_set(e, -ENOMEM, SUDOERS_DIR, "out of memory");
                        free(path);
                }
                if (r < 0)
                        goto out;
        }
        r = oom_check(&x);
        if (r < 0)
                goto out;
        if (x.problems) {
                r = -EEXIST;
                goto out;
        }

        x.quiet = false;
        x.dry = o->dry_run;
        for (int f = 0; f < SLOTS_ACCT_NFILES; f++)
                wrote |= slots_accounts_changed(x.db, (enum slots_acct_file) f);
        if (wrote && !o->dry_run) {
                r = slots_accounts_write(x.db, x.etcfd, "/etc", e);
                if (r < 0)
                        goto out;
        }
        if (locked) {
                slots_accounts_unlock(o->host, lockfd);
                locked = false;
        }
        if (wrote && !o->dry_run && o->host)
                slots_accounts_flush_caches();
        report_accounts(&x);

        r = slot_folders(&x);
        if (r == 0 && x.problems)
                r = slots_error_set(e, -EIO, c->slots_root, "the slot folders could not all be made");
        if (r == 0)
                r = releases(&x);
        if (r == 0)
                r = shared_dirs(&x);
        if (r == 0)
                r = table_step(&x);
        if (r == 0)
                r = files_step(&x);
        if (r == 0)
                r = oom_check(&x);
        /* An I/O error on the way is a failed run, not a warning: exit 1, naming the first one. */
        if (r == 0 && x.failures)
                r = slots_error_set(e, -EIO, x.failed_obj, "%s (%u step%s failed; run slots-provision again once "
                                    "fixed)", x.failed_text, x.failures, x.failures == 1 ? "" : "s");
out:
        if (locked)
                slots_accounts_unlock(o->host, lockfd);
        *changes = x.changes;
        ctx_free(&x);
        return r;
}
