/* A row of the self-check's report and the helpers every row shares: names in fixes, runs as the service, reach. */
#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <fcntl.h>

#include "check-row.h"
#include "escape.h"
#include "fsutil.h"

#define PROBE_TIMEOUT_MS 10000
#define SUDO_DEFAULT "/usr/bin/sudo"

/* ---- the rows and what they share ---- */

int check_slot_procs(const struct slotinfo *s, struct strbuf *d)
{
        struct slots_procs_report rep;
        struct slots_error e;

        if (slots_find_processes(s->pw.uid, s->pw.gid, SLOTS_FIND_ANY, &rep, &e) < 0) {
                strbuf_addf(d, "they cannot be counted: %s: %s", e.object, e.reason);
                return -1;
        }
        for (unsigned i = 0; i < rep.survivors && i < SLOTS_PROCS_SHOWN; i++) {
                char comm[4 * sizeof(rep.shown[i].comm)];

                strbuf_addf(d, "%spid %d (%s)", i ? ", " : "", (int) rep.shown[i].pid,
                            slots_escape_buf(rep.shown[i].comm, comm, sizeof(comm)));
        }
        if (rep.survivors > SLOTS_PROCS_SHOWN)
                strbuf_addf(d, ", and %u more", rep.survivors - SLOTS_PROCS_SHOWN);
        return (int) rep.survivors;
}

bool check_held_end(int r)
{
        return r == -ETIMEDOUT || r == -ECHILD || r == -ECANCELED;
}

void check_warn_held(struct check_run *k, const struct slotinfo *s, const char *check, const char *what)
{
        struct strbuf d = { 0 };
        int n;

        strbuf_addf(&d, "as %s, %s: the slot's own processes can do that (same uid), so it says nothing of the "
                    "host, which the test slot's rows prove; processes of %s now: ", s->name, what, s->name);
        n = check_slot_procs(s, &d);
        if (n == 0)
                strbuf_addf(&d, "none");
        strbuf_addf(&d, "; if it repeats, look at them (ps -o pid,stat,cmd -u %s) or release the slot", s->name);
        check_add_row(k, SLOTS_CHECK_WARN, check, s->name, &d, NULL);
        strbuf_free(&d);
}

void check_add_row(struct check_run *k, enum slots_check_status st, const char *check, const char *slot,
                   const struct strbuf *detail, const struct strbuf *fix)
{
        if ((detail && detail->oom) || (fix && fix->oom)) {
                k->err = -ENOMEM;
                return;
        }
        if (slots_check_report_add(k->rep, st, check, slot, detail ? strbuf_str(detail) : "",
                                   fix ? strbuf_str(fix) : NULL) < 0)
                k->err = -ENOMEM;
}

void check_add_rowf(struct check_run *k, enum slots_check_status st, const char *check, const char *slot,
                    const char *fix, const char *fmt, ...)
{
        struct strbuf d = { 0 }, f = { 0 };
        va_list ap;

        va_start(ap, fmt);
        strbuf_vaddf(&d, fmt, ap);
        va_end(ap);
        if (fix)
                strbuf_addf(&f, "%s", fix);
        check_add_row(k, st, check, slot, &d, fix ? &f : NULL);
        strbuf_free(&d);
        strbuf_free(&f);
}

void check_slot_lookup(struct check_run *k, struct slotinfo *s)
{
        int n;

        s->found = slots_amap_user(k->accounts, s->name, &s->pw);
        if (s->found <= 0 || slots_amap_grouplist(k->accounts, s->name, s->pw.gid, &s->groups, &n) < 0)
                return;
        s->id = (struct slots_ident){ .uid = s->pw.uid, .gid = s->pw.gid, .groups = s->groups, .n_groups = n };
        s->have_id = true;
}

struct slots_perm_names check_names_for(const struct check_run *k)
{
        return (struct slots_perm_names){
                .user = slots_perm_user_name,
                .group = slots_perm_group_name,
                .new_owner = k->have_svc ? k->svc.uid : 0,
        };
}

int check_svc_run(const struct check_run *k, int (*fn)(void *arg), void *arg, int timeout_ms)
{
        return check_run_as_id(&k->svc, fn, arg, timeout_ms);
}

int check_probe_timeout(const struct check_run *k)
{
        return k->o->probe_timeout_ms > 0 ? k->o->probe_timeout_ms : PROBE_TIMEOUT_MS;
}

const char *check_sudo_path(const struct check_run *k)
{
        return k->o->sudo ? k->o->sudo : SUDO_DEFAULT;
}

/* ---- reachability: the walk explains, the probe decides ---- */

void check_reach_explain(struct check_run *k, const struct slots_perm_path *w, const struct probe_res *res, int probe_r,
                         const struct slots_ident *id, const char *who, unsigned want_end, const char *end_shown,
                         const struct slots_perm_model *end_after, struct reach *out)
{
        struct slots_perm_names nm = check_names_for(k);
        bool model_denies = false;
        size_t probe_fail = SIZE_MAX;
        char fix[FIX_MAX];

        memset(out, 0, sizeof(*out));
        for (size_t i = 0; i < w->n; i++) {
                const struct slots_perm_step *s = &w->steps[i];
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
                slots_perm_sb_why(&out->why, &s->m, &v, who, shown, want);
                /* The end as another fix leaves it: only what is still missing then. */
                if (slots_perm_fix_grant(!s->traverse && end_after ? end_after : &s->m, id, want, shown, &nm, fix,
                                         sizeof(fix)) > 0) {
                        strbuf_sep(&out->fix, " && ");
                        strbuf_addf(&out->fix, "%s", fix);
                }
        }
        if (probe_r < 0) {
                out->ok = false;
                strbuf_addf(&out->note, "%s", check_probe_failure(probe_r));
                return;
        }
        out->ok = probe_fail == SIZE_MAX;
        if (!out->ok) {
                const struct slots_perm_step *s = &w->steps[probe_fail];
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

void check_reach_free(struct reach *r)
{
        strbuf_free(&r->why);
        strbuf_free(&r->fix);
        strbuf_free(&r->note);
}

int check_docs_for_walk(struct check_run *k, const char *check)
{
        const struct slots_config *c = k->cfg;
        struct slots_error e;
        int docs;

        slots_error_clear(&e);
        docs = slots_open_root_dir(k->rootfd >= 0 ? k->rootfd : AT_FDCWD, c->docs_root, "docs_root",
                                   k->have_svc ? k->svc.uid : (uid_t) -1, k->have_group ? k->group : (gid_t) -1,
                                   &e);
        if (docs < 0)
                check_add_rowf(k, SLOTS_CHECK_SKIP, check, NULL, NULL, "%s cannot be walked: %s", c->docs_root,
                               docs == -ENOENT ? "it does not exist" : "see the roots row");
        return docs < 0 ? -1 : docs;
}
