/* What slots-provision reports: its change, warning and conflict records and the names they give owners. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "provision-int.h"

static void emit(struct prov_run *x, enum slots_prov_kind kind, const char *object, const char *fix, const char *text)
{
        const struct slots_prov_msg m = { .kind = kind, .slot = x->slot, .object = object ? object : "",
                                          .text = text, .fix = fix ? fix : "" };

        if (x->o->report)
                x->o->report(x->o->arg, &m);
}

/*
 * Formats a message into b (emptied first).  An allocation failure is remembered
 * in x->oom and ends the run with an error: a message is never cut short.
 */
static const char *vformat(struct prov_run *x, struct strbuf *b, const char *fmt, va_list ap)
        __attribute__((format(printf, 3, 0)));
static const char *vformat(struct prov_run *x, struct strbuf *b, const char *fmt, va_list ap)
{
        strbuf_reset(b);
        strbuf_vaddf(b, fmt, ap);
        if (b->oom) {
                x->oom = true;
                strbuf_free(b);
        }
        return strbuf_str(b);
}

void prov_change(struct prov_run *x, const char *fmt, ...)
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

void prov_note(struct prov_run *x, enum slots_prov_kind kind, const char *object, const char *fix, const char *fmt, ...)
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

void prov_failed(struct prov_run *x, const char *object, const char *fix, const char *fmt, ...)
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

/* The fix of the next message, kept in x until the next fix is made (one per message). */
const char *prov_fmt_fix(struct prov_run *x, const char *fmt, ...)
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
const char *prov_dir_fix(struct prov_run *x, const char *fmt, ...)
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

int prov_acct_line(struct prov_run *x, const char *fmt, ...)
{
        struct prov_line *n;
        va_list ap;
        char *s;
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
        x->acct_lines[x->n_acct_lines++] = (struct prov_line){ .text = s, .slot = x->slot };
        return 0;
}

/* The account changes planned in the check, each reported with the slot it was planned for. */
void prov_report_accounts(struct prov_run *x)
{
        for (size_t i = 0; i < x->n_acct_lines; i++) {
                x->slot = x->acct_lines[i].slot;
                prov_change(x, "%s", x->acct_lines[i].text);
        }
        x->slot = 0;
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
 * slot folders is a binary search, not a scan of the pool.  Without memory
 * the scan stays.
 */
void prov_index_slots(struct prov_run *x)
{
        x->by_uid = malloc(x->c->slots * sizeof(*x->by_uid));
        if (!x->by_uid)
                return;
        for (unsigned i = 0; i < x->c->slots; i++)
                x->by_uid[i] = &x->slots[i];
        qsort(x->by_uid, x->c->slots, sizeof(*x->by_uid), cmp_slot_uid);
}

/* The slot whose uid (and gid) is id: the first of the pool, or NULL. */
static const struct pslot *slot_by_uid(struct prov_run *x, uid_t id)
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

bool prov_slot_gid(struct prov_run *x, gid_t gid)
{
        return slot_by_uid(x, (uid_t) gid) != NULL;
}

/* Names for owners in messages: the accounts this run knows, numbers for the rest. */
const char *prov_uid_str(struct prov_run *x, uid_t uid, char *buf, size_t size)
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

const char *prov_gid_str(struct prov_run *x, gid_t gid, char *buf, size_t size)
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
