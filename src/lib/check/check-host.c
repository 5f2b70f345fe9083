/* check's host-wide rows: config, table, roots, service-apart, slotctl-config, pending-cleanup. */
#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check-ident.h"
#include "check-int.h"
#include "dirfix.h"
#include "error.h"
#include "fsutil.h"
#include "jsonpos.h"
#include "nss.h"
#include "path.h"
#include "service.h"
#include "store.h"

#define SLOTCTL_MAX ((size_t) 1 << 20)

/* ---- config ---- */

bool check_config(struct check_run *k)
{
        const char *path = k->o->config ? k->o->config : slots_config_default_path();
        struct strbuf d = { 0 }, f = { 0 };
        struct slots_error e;
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
                check_add_row(k, SLOTS_CHECK_FAIL, "config", NULL, &d, &f);
                goto out;
        }
        /* The config decides what runs as whom: the config reader's one rule, nobody but root may change it. */
        slots_error_clear(&e);
        r = slots_config_writers_at(AT_FDCWD, path, &e);
        if (r < 0) {
                strbuf_addf(&d, "%s",
                            e.kind == SLOTS_ERR_REFUSED ? e.reason : slots_error_format(&e, buf, sizeof(buf)));
                strbuf_addf(&f, "%s", e.fix[0] ? e.fix : "see why it cannot be looked at, then run the check again");
                check_add_row(k, SLOTS_CHECK_FAIL, "config", NULL, &d, &f);
                goto out;
        }
        strbuf_addf(&d, "%s: service %s, %u slots", path, k->cfg->service, k->cfg->slots);
        check_add_row(k, SLOTS_CHECK_PASS, "config", NULL, &d, NULL);
out:
        strbuf_free(&d);
        strbuf_free(&f);
        return k->cfg != NULL;
}

/* ---- the service account and group ---- */

void check_resolve_service(struct check_run *k)
{
        struct slots_service s;

        if (slots_service_lookup(k->cfg, NULL, SLOTS_SERVICE_USER | SLOTS_SERVICE_GROUP, &s) < 0) {
                k->err = -ENOMEM;
                return;
        }
        /* A failed lookup is reported as a missing account or group: check only reports. */
        k->svc_found = s.user;
        k->svc_pw = s.pw;
        s.pw = (struct slots_pw){ 0 };
        if (k->svc_found > 0 && slots_ident_of(k->cfg->service, &k->svc, &k->svc_groups) == 0)
                k->have_svc = true;
        k->have_group = s.group > 0;
        k->group = s.gid;
        if (k->have_group) {
                k->group_name = s.group_name;
                s.group_name = NULL;
        } else {
                k->group_name = strdup(k->cfg->service_group ? k->cfg->service_group : k->cfg->service);
        }
        slots_service_clear(&s);
        if (!k->group_name)
                k->err = -ENOMEM;
}

/* ---- table ---- */

/* The table's kind of file: a regular file, never a link; -1 with the detail and fix filled. */
static int table_file(struct check_run *k, int dirfd, const char *base, struct stat *st, struct strbuf *d,
                      struct strbuf *f)
{
        const char *path = k->cfg->table;

        if (fstatat(dirfd, base, st, AT_SYMLINK_NOFOLLOW) < 0) {
                strbuf_addf(d, "%s: %s", path, strerror(errno));
                if (errno == ENOENT)
                        strbuf_addf(f, "slots-provision creates it, empty, root:%s %04o", k->group_name, SLOTS_TABLE_MODE);
                else
                        strbuf_addf(f, "make %s readable by root", path);
                return -1;
        }
        if (S_ISLNK(st->st_mode)) {
                strbuf_addf(d, "%s is a symlink; the table is never read through one", path);
                strbuf_addf(f, "replace the link with the file it points to (cp --remove-destination \"$(readlink -f "
                        "%s)\" %s), then chown root:%s %s && chmod %04o %s", path, path, k->group_name, path,
                        SLOTS_TABLE_MODE, path);
                return -1;
        }
        if (!S_ISREG(st->st_mode)) {
                strbuf_addf(d, "%s is not a regular file", path);
                strbuf_addf(f, "move it away; slots-provision creates an empty table");
                return -1;
        }
        return 0;
}

/* The store's verdict on owner, group, mode and ACL (a missing service group: its fix comes first). */
static void table_policy(struct check_run *k, int dirfd, const char *base, struct strbuf *d, struct strbuf *f)
{
        const char *path = k->cfg->table;
        const struct slots_table_policy p = {
                .path = path, .group = k->have_group ? k->group : (gid_t) -1, .group_name = k->group_name,
                .user_name = slots_uid_name, .group_name_of = slots_gid_name,
        };
        struct slots_table_verdict v;
        struct stat st;
        char g[64];
        int fd, err;

        fd = openat(dirfd, base, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
        err = fd < 0 || fstat(fd, &st) < 0 ? errno : 0;
        if (err || !S_ISREG(st.st_mode)) {
                strbuf_sep(d, "; ");
                strbuf_addf(d, "cannot %s it as root: %s", fd < 0 ? "open" : "look at",
                            err ? strerror(err) : "not a regular file");
                slots_close(fd);
                return;
        }
        if (!k->have_group) {
                strbuf_sep(d, "; ");
                strbuf_addf(d, "group is %s, not the service group %s", slots_gid_name(st.st_gid, g, sizeof(g)),
                            k->group_name);
                strbuf_sep(f, " && ");
                strbuf_addf(f, "create the group %s (slots-provision), then chgrp %s %s", k->group_name,
                            k->group_name, path);
        }
        if (!slots_table_verdict(fd, &st, &p, &v)) {
                strbuf_sep(d, "; ");
                strbuf_addf(d, "%s", v.e.reason);
                strbuf_sep(f, " && ");
                strbuf_addf(f, "%s", v.e.fix);
        }
        slots_close(fd);
}

/* The content: readable as root, within the size, and parsed into k->table; -1 when it cannot be read. */
static int table_content(struct check_run *k, int dirfd, const char *base, struct strbuf *d, struct strbuf *f)
{
        const char *path = k->cfg->table;
        enum slots_table_problem problem = SLOTS_TABLE_SYNTAX;
        struct slots_error e;
        struct stat st;
        char *text = NULL;
        size_t len;
        int r;

        slots_error_clear(&e);
        r = slots_read_text(dirfd, base, &(struct slots_read){ .path = path, .max = SLOTS_TABLE_MAX }, &st, &text,
                            &len, &e);
        if (r < 0 && e.kind == SLOTS_ERR_INVALID) {
                /* Too big or a NUL byte: no position to show. */
                strbuf_sep(d, "; ");
                strbuf_addf(d, "%s", e.reason);
                strbuf_sep(f, " && ");
                strbuf_addf(f, "correct %s (see slots.json(5)), or restore it from a backup", path);
                return 0;
        }
        if (r < 0) {
                strbuf_sep(d, "; ");
                strbuf_addf(d, "cannot read it as root: %s", strerror(-r));
                return -1;
        }
        r = slots_table_parse_problem(text, len, path, k->cfg->slots, &k->table, &problem, &e);
        free(text);
        if (r < 0) {
                /* A parser message may quote a token of the file, which may be a user id: show only where. */
                strbuf_sep(d, "; ");
                strbuf_addf(d, "does not parse at %s:%u:%u (%s)", path, e.line, e.column,
                        problem == SLOTS_TABLE_OUT_OF_POOL ? "a slot outside the pool" :
                        problem == SLOTS_TABLE_USER ? "an invalid user id" :
                        problem == SLOTS_TABLE_DUPLICATE ? "a user in two slots" :
                        problem == SLOTS_TABLE_VERSION ? "an unsupported version" : "invalid JSON or entry");
                strbuf_sep(f, " && ");
                strbuf_addf(f, "correct %s at line %u (see slots.json(5)), or restore it from a backup", path,
                        e.line);
                k->table = NULL;
        }
        return 0;
}

/* Readable by the service account: as that account, from / down to the file; -1 when out of memory. */
static int table_reach(struct check_run *k, struct strbuf *d, struct strbuf *f)
{
        const char *path = k->cfg->table;
        struct probe_plan plan = { 0 };
        struct probe_res *res = NULL;
        struct slots_perm_model after;
        struct slots_perm_path w = { 0 };
        struct reach rr;
        int r = 0;

        if (!k->have_svc) {
                strbuf_sep(d, "; ");
                strbuf_addf(d, "the service account %s does not exist", k->cfg->service);
                strbuf_sep(f, " && ");
                strbuf_addf(f, "create the service account %s, or fix \"service\" in %s", k->cfg->service,
                        k->cfg->path);
                return 0;
        }
        if (slots_perm_path_read(path, &w) < 0)
                return -1;
        if (w.err)
                goto out;
        for (size_t i = 0; i < w.n && r == 0; i++)
                r = check_plan_add(&plan, w.steps[i].path, w.steps[i].traverse ? PROBE_SEARCH : PROBE_READ);
        res = r == 0 ? check_probe_shared(w.n * sizeof(*res)) : NULL;
        if (!res) {
                r = -1;
                goto out;
        }
        r = check_run_probes(&k->svc, &plan, 0, plan.n, res, check_probe_timeout(k));
        /* The file as the policy's fix leaves it: root:<group> 0640 (chmod sets the mask of a file with an ACL). */
        after = w.steps[w.n - 1].m;
        after.owner = 0;
        if (k->have_group)
                after.group = k->group;
        after.user_obj = SLOTS_PERM_R | SLOTS_PERM_W;
        after.other = 0;
        if (after.extended)
                after.mask = SLOTS_PERM_R;
        else
                after.group_obj = SLOTS_PERM_R;
        check_reach_explain(k, &w, res, r, &k->svc, k->cfg->service, SLOTS_PERM_R, NULL, &after, &rr);
        r = 0;
        if (!rr.ok) {
                strbuf_sep(d, "; ");
                strbuf_addf(d, "the service account %s cannot read it: %s", k->cfg->service, strbuf_str(&rr.note));
                if (rr.why.len)
                        strbuf_addf(d, "; why: %s", strbuf_str(&rr.why));
                if (rr.fix.len || !f->len) {
                        strbuf_sep(f, " && ");
                        strbuf_addf(f, "%s", rr.fix.len ? strbuf_str(&rr.fix) : "see the detail");
                }
        }
        check_reach_free(&rr);
out:
        check_probe_shared_free(res, w.n * sizeof(*res));
        slots_perm_path_free(&w);
        free(plan.paths);
        free(plan.ops);
        return r;
}

void check_table(struct check_run *k)
{
        const char *path = k->cfg->table, *base;
        struct strbuf d = { 0 }, f = { 0 };
        unsigned assigned, pending;
        struct stat st;
        int dirfd;

        k->table = NULL;
        dirfd = slots_open_parent_in(AT_FDCWD, path, &base);
        if (dirfd < 0) {
                strbuf_addf(&d, "%s: cannot open its folder: %s", path, strerror(-dirfd));
                strbuf_addf(&f, "slots-provision creates it");
                goto fail;
        }
        if (table_file(k, dirfd, base, &st, &d, &f) < 0)
                goto fail;
        table_policy(k, dirfd, base, &d, &f);
        if (table_content(k, dirfd, base, &d, &f) < 0)
                goto fail;
        if (table_reach(k, &d, &f) < 0) {
                k->err = -ENOMEM;
                goto fail;
        }
        if (d.len)
                goto fail;
        slots_table_count(k->table, &assigned, &pending);
        strbuf_addf(&d, "%s: root:%s %04o, %u assigned, %u pending, readable by %s", path, k->group_name,
                    SLOTS_TABLE_MODE, assigned, pending, k->cfg->service);
        check_add_row(k, SLOTS_CHECK_PASS, "table", NULL, &d, NULL);
        k->table_ok = true;
        goto out;
fail:
        if (d.len && strncmp(strbuf_str(&d), path, strlen(path)) != 0) {
                struct strbuf t = { 0 };
                strbuf_addf(&t, "%s: %s", path, strbuf_str(&d));
                strbuf_free(&d);
                d = t;
        }
        check_add_row(k, SLOTS_CHECK_FAIL, "table", NULL, &d, &f);
out:
        slots_close(dirfd);
        strbuf_free(&d);
        strbuf_free(&f);
}

/* ---- pending-cleanup ---- */

void check_pending(struct check_run *k)
{
        unsigned n_pending = 0;

        if (!k->table) {
                check_add_rowf(k, SLOTS_CHECK_SKIP, "pending-cleanup", NULL, NULL, "the table could not be read");
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
                check_add_rowf(k, SLOTS_CHECK_FAIL, "pending-cleanup", name, fix,
                               "the release of %s did not finish (\"cleanup\": \"pending\" since %s); the slot is "
                               "out of the pool",
                               name, released ? released : "an unknown time");
        }
        if (n_pending == 0)
                check_add_rowf(k, SLOTS_CHECK_PASS, "pending-cleanup", NULL, NULL,
                               "no slot is left \"cleanup\": \"pending\"");
}

/* ---- the slotctl config ---- */

/* A slotctl list entry covers docs_root: the same folder or one above it, or a glob that matches it. */
static bool cwd_covers(const char *entry, const char *docs)
{
        return slots_path_under(docs, entry) || fnmatch(entry, docs, FNM_PATHNAME) == 0;
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

/* What the slotctl config must say for this config (docs root, state folders, launcher), into d and f. */
static void slotctl_content(struct check_run *k, json_t *root, const char *path, struct strbuf *d, struct strbuf *f)
{
        const struct slots_config *c = k->cfg;
        char pattern[4096];
        json_t *v;

        if (c->docs_root) {
                v = json_object_get(root, "docs_root");
                if (!json_is_string(v) || strcmp(json_string_value(v), c->docs_root) != 0) {
                        strbuf_sep(d, "; ");
                        strbuf_addf(d, "its docs_root is %s%s%s, not %s as in %s", json_is_string(v) ? "\"" : "",
                                json_is_string(v) ? json_string_value(v) : "missing", json_is_string(v) ? "\"" : "",
                                c->docs_root, c->path);
                        strbuf_sep(f, " && ");
                        strbuf_addf(f, "slots-provision (it rewrites %s), or set \"docs_root\": \"%s\" there", path,
                                c->docs_root);
                }
                v = json_object_get(root, "allowed_cwd");
                if (!json_any(v, cwd_covers, c->docs_root)) {
                        strbuf_sep(d, "; ");
                        strbuf_addf(d, "allowed_cwd does not cover the docs root %s", c->docs_root);
                        strbuf_sep(f, " && ");
                        strbuf_addf(f, "slots-provision (it rewrites %s), or add \"%s\" to \"allowed_cwd\" there", path,
                                c->docs_root);
                }
        }
        if (c->slots_root) {
                char state[4096];

                /* The test slot's probe runs in its state folder (check_chain in check-chain.c). */
                snprintf(state, sizeof(state), "%s/state", strcmp(c->slots_root, "/") ? c->slots_root : "");
                if (!json_any(json_object_get(root, "allowed_cwd"), cwd_covers, state)) {
                        strbuf_sep(d, "; ");
                        strbuf_addf(d, "allowed_cwd does not cover the slots' state folders %s, where the test "
                                "slot's probe runs", state);
                        strbuf_sep(f, " && ");
                        strbuf_addf(f, "slots-provision (it rewrites %s), or add \"%s\" to \"allowed_cwd\" there",
                                path, state);
                }
        }
        if (c->app_root && c->launcher) {
                v = json_object_get(root, "allowed_exec");
                snprintf(pattern, sizeof(pattern), "%s/releases/*/bin/%s", c->app_root, c->launcher);
                for (size_t i = 0; i < k->n_launchers; i++)
                        if (!json_any(v, exec_names, k->launchers[i].path)) {
                                strbuf_sep(d, "; ");
                                strbuf_addf(d, "allowed_exec does not name the launcher %s", k->launchers[i].path);
                                strbuf_sep(f, " && ");
                                strbuf_addf(f, "slots-provision (it rewrites %s), or add \"%s\" to \"allowed_exec\" "
                                        "there", path, pattern);
                                break;
                        }
                if (k->n_launchers == 0 && !json_any(v, exec_names, pattern)) {
                        strbuf_sep(d, "; ");
                        strbuf_addf(d, "allowed_exec does not name %s", pattern);
                        strbuf_sep(f, " && ");
                        strbuf_addf(f, "slots-provision (it rewrites %s), or add \"%s\" to \"allowed_exec\" there",
                                path, pattern);
                }
        }
}

void check_slotctl(struct check_run *k)
{
        const struct slots_config *c = k->cfg;
        const char *path = c->slotctl_config, *base;
        struct strbuf d = { 0 }, f = { 0 };
        struct stat st;
        json_error_t jerr;
        json_t *root = NULL;
        struct slots_error e;
        char *text = NULL;
        size_t len;
        int dirfd, r;

        if (!c->docs_root && !(c->app_root && c->launcher)) {
                check_add_rowf(k, SLOTS_CHECK_SKIP, "slotctl-config", NULL, NULL,
                               "%s sets neither docs_root nor app_root and launcher", c->path);
                return;
        }
        dirfd = slots_open_parent_in(AT_FDCWD, path, &base);
        slots_error_clear(&e);
        r = dirfd < 0 ? dirfd
                      : slots_read_text(dirfd, base, &(struct slots_read){ .path = path, .max = SLOTCTL_MAX }, &st,
                                        &text, &len, &e);
        if (r < 0 && (dirfd < 0 || e.kind != SLOTS_ERR_INVALID)) {
                strbuf_addf(&d, "%s: %s", path,
                        r == -ELOOP ? "is a symlink" : r == -EINVAL ? "is not a regular file" : strerror(-r));
                strbuf_addf(&f, "slots-provision writes it (root:root 0644)");
                goto fail;
        }
        if (st.st_uid != 0 || (st.st_mode & 022) || !(st.st_mode & S_IROTH)) {
                strbuf_addf(&d, "%s is %04o owned by uid %u, not root:root 0644", path, st.st_mode & 07777,
                        (unsigned) st.st_uid);
                strbuf_addf(&f, "chown root:root %s && chmod 0644 %s", path, path);
        }
        if (r >= 0 && !(root = json_loadb(text, len, JSON_REJECT_DUPLICATES, &jerr)))
                r = slots_json_load_error(&e, path, &jerr);
        if (r == -ENOMEM) {
                /* Not the file's fault: jansson ran out of memory. */
                strbuf_sep(&d, "; ");
                strbuf_addf(&d, "%s: %s", path, e.reason);
                goto fail;
        }
        if (r < 0 || !json_is_object(root)) {
                strbuf_sep(&d, "; ");
                strbuf_addf(&d, "%s does not parse: %s", path, r < 0 ? e.reason : "not a JSON object");
                strbuf_sep(&f, " && ");
                strbuf_addf(&f, "slots-provision rewrites it");
                goto fail;
        }
        slotctl_content(k, root, path, &d, &f);
        if (d.len)
                goto fail;
        strbuf_addf(&d, "%s: docs_root and allowed_cwd match %s", path, c->path);
        if (c->app_root && c->launcher)
                strbuf_addf(&d, "; allowed_exec names the launcher in use (%s)",
                        k->release_note ? k->release_note : "");
        check_add_row(k, SLOTS_CHECK_PASS, "slotctl-config", NULL, &d, NULL);
        goto out;
fail:
        check_add_row(k, SLOTS_CHECK_FAIL, "slotctl-config", NULL, &d, &f);
out:
        json_decref(root);
        free(text);
        slots_close(dirfd);
        strbuf_free(&d);
        strbuf_free(&f);
}

/* ---- service-apart: the service account is never a slot ---- */

/* The service's groups (from NSS) must hold no slot's group of the pool and not <prefix>shared. */
void check_service_apart(struct check_run *k)
{
        char shared[64];

        if (!k->have_svc) {
                check_add_rowf(k, SLOTS_CHECK_SKIP, "service-apart", NULL, NULL, "no service account %s",
                               k->cfg->service);
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
                        struct strbuf fix = { 0 };

                        /* A group the local /etc/group does not hold is changed where it is kept. */
                        if (check_ident_local(k, true, gr.name) == 0)
                                slots_dirfix(&fix, true, gr.name, &(struct slots_dirfix_change){
                                                     SLOTS_DIRFIX_DELETE, "memberUid", k->cfg->service }, 1);
                        else
                                strbuf_addf(&fix, "gpasswd -d %s %s", k->cfg->service, gr.name);
                        check_add_rowf(k, SLOTS_CHECK_FAIL, "service-apart", NULL, strbuf_str(&fix),
                                       "the service account %s is in group %s: the service is never a slot",
                                       k->cfg->service, gr.name);
                        strbuf_free(&fix);
                }
                slots_gr_clear(&gr);
                if (bad)
                        return;
        }
        check_add_rowf(k, SLOTS_CHECK_PASS, "service-apart", NULL, NULL, "%s is in no slot's group and not in %s",
                       k->cfg->service, shared);
}

/* ---- roots: the configured folders, reached with no symlink, owned by root or the service ---- */

/*
 * app_root, docs_root, slots_root, the table's folder and /etc/sudoers.d go
 * through the resolver as provision and assign open them: no symlink in any
 * component, owned by root (app_root and docs_root: or the service) all the
 * way, writable by nobody else.  A root that does not exist is left to the
 * rows that need it.
 */
void check_roots(struct check_run *k)
{
        const struct slots_config *c = k->cfg;
        struct strbuf d = { 0 }, f = { 0 }, ok = { 0 }, absent = { 0 };
        char *table_dir = NULL;
        const char *slash = strrchr(c->table, '/');
        struct {
                const char *what, *path;
                bool service_may_own, key;      /* key: a config key, which can point elsewhere */
        } roots[] = {
                { "app_root", c->app_root, true, true },
                { "docs_root", c->docs_root, true, true },
                { "slots_root", c->slots_root, false, true },
                { "the table's folder", NULL, false, false },
                { "/etc/sudoers.d", "/etc/sudoers.d", false, false },
        };

        if (slash && asprintf(&table_dir, "%.*s", slash == c->table ? 1 : (int) (slash - c->table), c->table) < 0) {
                k->err = -ENOMEM;
                return;
        }
        roots[3].path = table_dir;
        for (size_t i = 0; i < sizeof(roots) / sizeof(roots[0]); i++) {
                bool svc = roots[i].service_may_own;
                struct slots_error e;
                int fd;

                if (!roots[i].path)
                        continue;
                slots_error_clear(&e);
                fd = slots_open_root_dir(k->rootfd >= 0 ? k->rootfd : AT_FDCWD, roots[i].path, roots[i].what,
                                         svc && k->have_svc ? k->svc.uid : (uid_t) -1,
                                         svc && k->have_group ? k->group : (gid_t) -1, &e);
                if (fd >= 0) {
                        close(fd);
                        strbuf_sep(&ok, ", ");
                        strbuf_addf(&ok, "%s", roots[i].what);
                } else if (fd == -ENOENT || (fd == -EACCES && geteuid() != 0)) {
                        /* As the service, a folder it may not open is root's to check. */
                        strbuf_sep(&absent, ", ");
                        strbuf_addf(&absent, "%s %s%s", roots[i].what, roots[i].path,
                                fd == -EACCES ? " (not open to the service; run check as root)" : "");
                } else if (fd == -ENOMEM) {
                        k->err = -ENOMEM;
                } else {
                        const char *why = e.reason;
                        size_t wl = strlen(roots[i].what);
                        bool key = roots[i].key;

                        if (strncmp(why, roots[i].what, wl) == 0 && strncmp(why + wl, ": ", 2) == 0)
                                why += wl + 2;
                        strbuf_sep(&d, "; ");
                        if (strcmp(e.object, roots[i].path) != 0)
                                strbuf_addf(&d, "%s %s: ", roots[i].what, roots[i].path);
                        else if (key)
                                strbuf_addf(&d, "%s ", roots[i].what);
                        strbuf_addf(&d, "%s: %s", e.object, why);
                        strbuf_sep(&f, " && ");
                        if (fd == -ELOOP && !key)
                                strbuf_addf(&f, "replace the link %s with the folder it points at", e.object);
                        else
                                strbuf_addf(&f, "%s", e.fix[0] ? e.fix : "see the detail");
                }
        }
        if (d.len) {
                check_add_row(k, SLOTS_CHECK_FAIL, "roots", NULL, &d, &f);
        } else {
                strbuf_addf(&d, "%s: no symlink on the way, owned by root or the service, writable by nobody else",
                        ok.len ? strbuf_str(&ok) : "no configured folder exists");
                if (absent.len)
                        strbuf_addf(&d, "; not looked at: %s", strbuf_str(&absent));
                check_add_row(k, SLOTS_CHECK_PASS, "roots", NULL, &d, NULL);
        }
        free(table_dir);
        strbuf_free(&d);
        strbuf_free(&f);
        strbuf_free(&ok);
        strbuf_free(&absent);
}
