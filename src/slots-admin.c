/* slots-admin: the command line for the slot table (assign, release, status, check). */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <grp.h>
#include <jansson.h>
#include <pwd.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/acl.h>
#include <acl/libacl.h>
#include <unistd.h>

#include "arena.h"
#include "assign.h"
#include "cleanup.h"
#include "check.h"
#include "cmdutil.h"
#include "escape.h"
#include "config.h"
#include "ids.h"
#include "nss.h"
#include "privdrop.h"
#include "selfcheck.h"
#include "release.h"
#include "service.h"
#include "store.h"
#include "tree.h"

static const char usage_text[] =
        "Usage: slots-admin [--config FILE] COMMAND [ARGS]\n"
        "\n"
        "Manage the slot table: which application user holds which slot account.\n"
        "\n"
        "Commands:\n"
        "  assign USER [SLOT]        give USER the slot SLOT, or the lowest free slot; prints the slot\n"
        "  release USER              free the slot USER holds and clean it for the next user\n"
        "  release --slot SLOT       the same by slot; also finishes a release left pending\n"
        "  status [--json] [USER|SLOT]\n"
        "                            one row per slot, the table file's owner and mode, the test slot\n"
        "  check [--json]            read-only self-check of the host, as the slots see it; exit 1 on\n"
        "                            any failure, each with its fix\n"
        "\n"
        "Options:\n"
        "  --config FILE             config file (default: $SLOTS_CONFIG or /etc/slots/slots.conf)\n"
        "  --json                    machine-readable output (status, check)\n"
        "  --slot SLOT               select by slot (release)\n"
        "  -h, --help                show this help and exit\n"
        "  -V, --version             show the version and exit\n"
        "\n"
        "Exit status: 0 done (a no-op counts as done), 1 refused or failed (nothing changed),\n"
        "2 usage error or an invalid config or table.  See slots-admin(8).\n";

struct opts {
        const char *config;
        const char *slot;
        bool json;
};

/* What a command works on: the config, the service group and the open table. */
struct ctx {
        struct slots_config *cfg;
        gid_t group;
        char *group_name;
        struct slots_store store;
        bool store_open;
};

static void ctx_done(struct ctx *x)
{
        if (x->store_open) {
                /* The tree is in the arena, which goes whole at exit: no walk over every entry to free it. */
                if (slots_arena_active()) {
                        slots_table_forget(x->store.table);
                        x->store.table = NULL;
                }
                slots_store_close(&x->store);
        }
        free(x->group_name);
        slots_config_free(x->cfg);
}

static int usage_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static int usage_error(const char *fmt, ...)
{
        va_list ap;

        fprintf(stderr, "%s: ", cmd_name);
        va_start(ap, fmt);
        vfprintf(stderr, fmt, ap);
        va_end(ap);
        fprintf(stderr, "\nTry 'slots-admin --help'.\n");
        return EXIT_USAGE;
}

/* Loads config and service group, then opens the table (locked when writing). */
static int ctx_open(struct ctx *x, const struct opts *o, const char *what, unsigned flags)
{
        struct slots_error e;
        int r;

        r = cmd_load_config(o->config, &x->cfg);
        if (r != EXIT_DONE)
                return r;
        r = slots_service_group(x->cfg, &x->group, &x->group_name, &e);
        if (r < 0) {
                cmd_report(what, &e, NULL);
                return EXIT_REFUSED;
        }
        slots_error_clear(&e);
        r = slots_store_open(&x->store, AT_FDCWD, x->cfg->table, x->cfg->slots, x->group, flags, &e);
        if (r < 0) {
                cmd_report(e.kind == SLOTS_ERR_INVALID ? "invalid table" : what, &e, NULL);
                return cmd_exit_for(r, &e);
        }
        x->store_open = true;
        return EXIT_DONE;
}

static int need_root(const char *what)
{
        if (geteuid() == 0)
                return EXIT_DONE;
        fprintf(stderr, "%s: %s: permission denied: only root changes the slot table\n", cmd_name, what);
        fprintf(stderr, "%s: fix: run it as root (sudo slots-admin ...)\n", cmd_name);
        return EXIT_REFUSED;
}

/* Refuses with the contract's message shape; the table was not touched. */
static int refuse(const char *what, const char *object, const char *reason, const char *fix)
{
        struct slots_error e;

        slots_error_refuse(&e, -EPERM, object, "%s", reason);
        cmd_report(what, &e, fix);
        return EXIT_REFUSED;
}

static int save(struct ctx *x, const char *what)
{
        struct slots_error e;
        int r = slots_store_save(&x->store, &e);

        if (r < 0) {
                cmd_report(what, &e, NULL);
                return EXIT_REFUSED;
        }
        return EXIT_DONE;
}

/* The gid of group slotNN (the group a user's tree gets), else the account's primary group. */
static int slot_group(const char *name, const struct slots_pw *slot, gid_t *gid, struct slots_error *e)
{
        struct slots_gr gr = { 0 };
        int r = slots_nss_group(name, &gr);

        if (r < 0)
                return slots_error_set(e, r, name, "group lookup failed: %s", strerror(-r));
        *gid = r > 0 ? gr.gid : slot->gid;
        slots_gr_clear(&gr);
        return 0;
}

/* A tree walk's note (an entry left alone): a warning on stderr, escaped; the first 20 of them. */
static void tree_note(void *data, const char *path, const char *why)
{
        unsigned long *shown = data;
        char *p;

        if ((*shown)++ >= 20)
                return;
        p = slots_escape(path);
        fprintf(stderr, "%s: warning: %s: %s\n", cmd_name, p ? p : "(out of memory)", why);
        free(p);
}

static void tree_notes_done(unsigned long shown)
{
        if (shown > 20)
                fprintf(stderr, "%s: warning: and %lu more entries left alone\n", cmd_name, shown - 20);
}

/*
 * Prepares USER's tree for slot n when docs_root is set.  The assignment is
 * saved already: on failure it stands, and the same assign again (idempotent)
 * finishes the tree.
 */
static int prepare_tree(struct ctx *x, const char *user, unsigned n)
{
        char what[96], name[SLOTS_NAME_MAX], fix[SLOTS_ERR_TEXT + 256];
        unsigned long notes = 0;
        struct slots_tree_stats stats = { .note = tree_note, .note_data = &notes };
        struct slots_pw slot = { 0 }, svc = { 0 };
        struct slots_error e;
        uid_t svc_uid = 0;
        gid_t slot_gid = 0;
        int r;

        if (!x->cfg->docs_root)
                return EXIT_DONE;
        slots_slot_name(n, name);
        slots_error_clear(&e);
        r = slots_nss_user(name, &slot);
        if (r <= 0)
                r = r == 0 ? slots_error_set(&e, -ENOENT, name, "the slot account does not exist")
                           : slots_error_set(&e, r, name, "account lookup failed: %s", strerror(-r));
        else
                r = slot_group(name, &slot, &slot_gid, &e);
        if (r == 0 && (r = slots_service_user(x->cfg, &svc, &e)) == 0)
                svc_uid = svc.uid;
        slots_pw_clear(&svc);
        if (r == 0)
                r = slots_tree_prepare(AT_FDCWD, x->cfg, user, slot_gid, svc_uid, x->group, &stats, &e);
        slots_pw_clear(&slot);
        tree_notes_done(notes);
        if (r == 0) {
                cmd_log("prepared the tree of user %s for %s: %lu entries, %lu changed, %lu hard-linked "
                        "files left alone", user, name, stats.entries, stats.changed, stats.linked);
                return EXIT_DONE;
        }
        snprintf(what, sizeof(what), "cannot prepare the user's tree for %s", name);
        snprintf(fix, sizeof(fix), "%s, then run the same assign again (the assignment stands, and assign is "
                 "idempotent): slots-admin assign %s %s", e.fix[0] ? e.fix : "remove the cause", user, name);
        e.fix[0] = '\0';
        cmd_report(what, &e, fix);
        cmd_log("assigned %s to user %s, but preparing the tree failed", name, user);
        return EXIT_REFUSED;
}

/*
 * After assign: the write kept the table's owner, group, mode and ACL.  When the
 * service account cannot read what was kept (a table left root:root by a script),
 * the service refuses every user's command although assign succeeded: say so, with
 * the fix.  Silent when the service account cannot be looked up (check reports it).
 */
static void warn_unreadable_table(const struct ctx *x)
{
        char owner[64], group[64];
        struct slots_perm_model m;
        struct slots_ident id;
        gid_t *groups = NULL;
        struct slots_acl acl;
        struct stat st;
        int fd;

        fd = openat(x->store.dirfd, x->store.name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
        /*
         * The usual table, root-owned, readable by the service account's own primary
         * group, no ACL: readable, without listing the service's groups (issue 18: that
         * reads the whole group file, a thirtieth of assign at 1,000 slots).
         */
        if (fd >= 0 && !x->cfg->service_group && fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_uid == 0 &&
            st.st_gid == x->group && (st.st_mode & S_IRGRP) && acl_extended_fd(fd) == 0) {
                close(fd);
                return;
        }
        if (fd >= 0 && slots_ident_of(x->cfg->service, &id, &groups) < 0) {
                close(fd);
                return;
        }
        if (fd >= 0 && fstat(fd, &st) == 0 && S_ISREG(st.st_mode)) {
                int got = slots_acl_get(fd, SLOTS_ACL_ACCESS, &acl);

                slots_perm_from_stat(&m, &st, got > 0 ? &acl : NULL);
                slots_acl_free(&acl);
                if (!slots_perm_eval(&m, &id, SLOTS_PERM_R).allowed) {
                        fprintf(stderr, "%s: warning: %s is %s:%s %04o: the service account %s cannot read it, so "
                                "the service refuses every user's command\n", cmd_name, x->cfg->table,
                                slots_uid_name(st.st_uid, owner, sizeof(owner)),
                                slots_gid_name(st.st_gid, group, sizeof(group)), st.st_mode & 07777u,
                                x->cfg->service);
                        fprintf(stderr, "%s: fix: chown root:%s %s && chmod 0640 %s\n", cmd_name, x->group_name,
                                x->cfg->table, x->cfg->table);
                }
        }
        if (fd >= 0)
                close(fd);
        free(groups);
}

/*
 * A slot is handed out only when its home, state and run folders are exactly
 * as a release leaves them; otherwise it is marked pending (so no assign picks
 * it) and the fix is a release --slot, which sets them back.
 */
static int check_slot_folders(struct ctx *x, const char *name, const struct slots_pw *pw, gid_t gid)
{
        char what[64], released[32];
        struct slots_error e, e2;
        unsigned n = slots_slot_parse(name);
        int r;

        slots_error_clear(&e);
        r = slots_check_folders(AT_FDCWD, x->cfg, name, pw->uid, gid, false, &e);
        if (r == 0)
                return EXIT_DONE;
        snprintf(what, sizeof(what), "cannot assign %s", name);
        if (slots_table_mark_pending(x->store.table, n, slots_now_rfc3339(released)) == 0 &&
            slots_store_save(&x->store, &e2) == 0)
                cmd_log("refused to assign %s: its folders are not as a release leaves them; cleanup pending", name);
        cmd_report(what, &e, NULL);
        return EXIT_REFUSED;
}

/*
 * Prints the slot name, the one line a caller reads from assign.  A write that
 * fails (a closed or full stdout) is a failure: the caller would get no slot.
 */
static int print_slot(const char *name)
{
        if (printf("%s\n", name) < 0 || fclose(stdout) != 0) {
                fprintf(stderr, "%s: cannot print the slot name (the assignment stands; assign again prints it): "
                        "standard output: %s\n", cmd_name, strerror(errno));
                return EXIT_REFUSED;
        }
        return EXIT_DONE;
}

static int cmd_assign(const struct opts *o, int argc, char **argv)
{
        const char *user;
        char what[64], name[SLOTS_NAME_MAX], reason[256], since[32];
        enum slots_assign_verdict v;
        struct slots_pw pw = { 0 };
        struct slots_gr gr = { 0 };
        struct slots_error e;
        struct ctx x = { 0 };
        bool has_group = false;
        unsigned n = 0;
        int r;

        if (argc < 1 || argc > 2)
                return usage_error("assign takes USER and an optional SLOT");
        user = argv[0];
        if (!slots_user_valid(user))
                return usage_error("invalid user id: it must be 1-64 of A-Z a-z 0-9 . _ -, not "
                                   "starting with . or -");
        if (argc == 2 && !(n = slots_slot_parse(argv[1])))
                return usage_error("invalid slot name: slot names are slot01 ... slot99, slot100 ... slot9999");
        snprintf(what, sizeof(what), "cannot assign %s", argc == 2 ? argv[1] : "a slot");
        r = need_root(what);
        if (r != EXIT_DONE)
                return r;
        r = ctx_open(&x, o, what, SLOTS_STORE_WRITE);
        if (r != EXIT_DONE)
                goto out;

        v = slots_assign_choose(x.store.table, x.cfg->slots, user, n, &n);
        if (v == SLOTS_ASSIGN_AGAIN) {
                /* The same assignment again is done already; the tree is prepared again (a repair). */
                r = prepare_tree(&x, user, n);
                if (r == EXIT_DONE)
                        r = print_slot(slots_slot_name(n, name));
                warn_unreadable_table(&x);
                goto out;
        }
        if (v == SLOTS_ASSIGN_TAKEN || v == SLOTS_ASSIGN_PENDING)
                snprintf(what, sizeof(what), "cannot assign %s", slots_slot_name(n, name));
        if (v != SLOTS_ASSIGN_GIVE) {
                slots_assign_refusal(v, n, x.cfg, &e);
                cmd_report(what, &e, NULL);
                r = EXIT_REFUSED;
                goto out;
        }
        slots_slot_name(n, name);
        snprintf(what, sizeof(what), "cannot assign %s", name);
        r = slots_nss_user(name, &pw);
        if (r == 0) {
                r = refuse(what, name, "the slot account does not exist", "create it: slots-provision");
                goto out;
        }
        if (r < 0) {
                snprintf(reason, sizeof(reason), "the account lookup failed: %s", strerror(-r));
                r = refuse(what, name, reason, NULL);
                goto out;
        }
        slots_error_clear(&e);
        /* Group slotNN, looked up once (issue 18: each lookup reads the group file): apartness, folders. */
        r = slots_nss_group(name, &gr);
        if (r < 0) {
                slots_error_set(&e, r, name, "group lookup failed: %s", strerror(-r));
                cmd_report(what, &e, NULL);
                r = EXIT_REFUSED;
                goto out;
        }
        has_group = r > 0;
        if (slots_assign_service_apart(x.cfg, name, has_group ? &gr : NULL, &e) < 0) {
                cmd_report(what, &e, NULL);
                r = EXIT_REFUSED;
                goto out;
        }

        /* The folders' group: group slotNN, else the account's primary group (slot_group). */
        r = check_slot_folders(&x, name, &pw, has_group ? gr.gid : pw.gid);
        if (r != EXIT_DONE)
                goto out;
        r = slots_table_assign(x.store.table, n, user, slots_now_rfc3339(since));
        if (r < 0) {
                r = refuse(what, x.cfg->table, "out of memory", NULL);
                goto out;
        }
        r = save(&x, what);
        if (r != EXIT_DONE)
                goto out;
        cmd_log("assigned %s to user %s", name, user);
        /* The slot name goes to stdout only once the tree is ready too. */
        r = prepare_tree(&x, user, n);
        if (r == EXIT_DONE)
                r = print_slot(name);
        warn_unreadable_table(&x);
out:
        slots_gr_clear(&gr);
        slots_pw_clear(&pw);
        ctx_done(&x);
        return r;
}

static int cmd_release(const struct opts *o, int argc, char **argv)
{
        char what[256], name[SLOTS_NAME_MAX], fix[SLOTS_ERR_TEXT + 256];
        struct slots_release_report rep = { 0 };
        unsigned long notes = 0;
        struct slots_config *cfg = NULL;
        const char *user = NULL;
        struct slots_error e;
        char *group_name = NULL;
        unsigned n = 0;
        gid_t group;
        int r;

        if (o->slot ? argc != 0 : argc != 1)
                return usage_error("release takes USER, or --slot SLOT");
        if (o->slot && !(n = slots_slot_parse(o->slot)))
                return usage_error("invalid slot name: slot names are slot01 ... slot99, slot100 ... slot9999");
        if (!o->slot) {
                user = argv[0];
                if (!slots_user_valid(user))
                        return usage_error("invalid user id: it must be 1-64 of A-Z a-z 0-9 . _ -, not "
                                           "starting with . or -");
        }
        snprintf(what, sizeof(what), "cannot release %s", o->slot ? o->slot : "the user's slot");
        r = need_root(what);
        if (r != EXIT_DONE)
                return r;
        r = cmd_load_config(o->config, &cfg);
        if (r != EXIT_DONE)
                return r;
        slots_error_clear(&e);
        if (slots_service_group(cfg, &group, &group_name, &e) < 0) {
                cmd_report(what, &e, NULL);
                r = EXIT_REFUSED;
                goto out;
        }
        rep.tree.note = tree_note;
        rep.tree.note_data = &notes;
        r = slots_release(cfg, group, user, n, &rep, &e);
        tree_notes_done(notes);
        if (rep.slot)
                snprintf(what, sizeof(what), "cannot release %s", slots_slot_name(rep.slot, name));
        if (rep.marked)
                cmd_log("released %s from user %s (cleanup pending)", name, rep.user);
        if (r < 0 && !rep.step) {
                cmd_report(e.kind == SLOTS_ERR_INVALID ? "invalid table" : what, &e, NULL);
                r = cmd_exit_for(r, &e);
                goto out;
        }
        if (r < 0) {
                snprintf(what, sizeof(what), "cannot release %s (%s)", name, rep.step);
                snprintf(fix, sizeof(fix), "%s, then finish the release: slots-admin release --slot %s (until "
                         "then %s stays \"cleanup\": \"pending\" and is never assigned)",
                         e.fix[0] ? e.fix : "remove the cause", name, name);
                e.fix[0] = '\0';
                cmd_report(what, &e, fix);
                cmd_log("release of %s failed at %s; cleanup pending", name, rep.step);
                r = EXIT_REFUSED;
                goto out;
        }
        if (rep.slot == 0) {
                printf("user %s holds no slot; nothing to release\n", user);
        } else if (rep.was_free) {
                printf("%s is free; nothing to release\n", name);
        } else {
                cmd_log("cleaned %s: %lu processes stopped and %lu killed in %ld ms, tree given back (%lu entries, "
                        "%lu changed), files, IPC objects and keys removed", name, rep.procs.stopped,
                        rep.procs.killed, rep.procs.elapsed_ms, rep.tree.entries, rep.tree.changed);
                cmd_log("%s is clean and free", name);
                printf("%s released\n", name);
        }
        r = EXIT_DONE;
out:
        free(group_name);
        slots_config_free(cfg);
        return r;
}

/* Account uids of the pool: one enumeration, then a lookup for each slot it did not list (LDAP). */
static int pool_uids(unsigned pool, long *uids)
{
        struct passwd *pw;
        int r = 0;

        for (unsigned n = 0; n <= pool; n++)
                uids[n] = -1;
        setpwent();
        while ((pw = getpwent())) {
                unsigned n = slots_slot_parse(pw->pw_name);
                if (n && n <= pool && uids[n] < 0)
                        uids[n] = (long) pw->pw_uid;
        }
        endpwent();
        for (unsigned n = 1; n <= pool; n++) {
                char name[SLOTS_NAME_MAX];
                struct slots_pw p;
                int k;

                if (uids[n] >= 0)
                        continue;
                k = slots_nss_user(slots_slot_name(n, name), &p);
                if (k < 0)
                        r = k;
                if (k > 0) {
                        uids[n] = (long) p.uid;
                        slots_pw_clear(&p);
                }
        }
        return r;
}

static int cmd_status(const struct opts *o, int argc, char **argv)
{
        char owner[64] = "", group[64] = "", mode[8] = "", name[SLOTS_NAME_MAX];
        struct ctx x = { 0 };
        unsigned only = 0, assigned, pending, test;
        long *uids = NULL;
        bool ok;
        int r;

        if (argc > 1)
                return usage_error("status takes at most one USER or SLOT");
        if (argc == 1 && !slots_slot_parse(argv[0]) && !slots_user_valid(argv[0]))
                return usage_error("the argument is neither a slot name nor a valid user id");
        r = ctx_open(&x, o, "cannot show status", 0);
        if (r != EXIT_DONE)
                goto out;
        if (argc == 1) {
                only = slots_slot_parse(argv[0]);
                if (only == 0)
                        only = slots_table_find_user(x.store.table, argv[0]);
                if (only == 0 || only > x.cfg->slots) {
                        r = refuse("cannot show status", argv[0],
                                   only ? "the slot is outside the pool" : "the user holds no slot", NULL);
                        goto out;
                }
        }
        uids = calloc(x.cfg->slots + 1, sizeof(long));
        if (!uids) {
                r = EXIT_REFUSED;
                goto out;
        }
        if (pool_uids(x.cfg->slots, uids) < 0)
                fprintf(stderr, "%s: warning: some slot account lookups failed; they show as missing\n",
                        cmd_name);

        if (x.store.exists) {
                slots_uid_name(x.store.st.st_uid, owner, sizeof(owner));
                slots_gid_name(x.store.st.st_gid, group, sizeof(group));
                snprintf(mode, sizeof(mode), "%04o", x.store.st.st_mode & 07777);
        }
        ok = x.store.exists && slots_store_policy_ok(&x.store.st, x.group);
        slots_table_count(x.store.table, &assigned, &pending);
        test = slots_table_test_slot(x.store.table, x.cfg->slots);

        if (o->json) {
                json_t *root, *slots = json_array(), *table;

                for (unsigned n = 1; n <= x.cfg->slots; n++) {
                        const char *user, *since, *released;
                        enum slots_slot_state st;
                        json_t *row;

                        if (only && n != only)
                                continue;
                        st = slots_table_get(x.store.table, n, &user, &since, &released);
                        row = json_pack("{s:s, s:o, s:b, s:o, s:o}", "slot", slots_slot_name(n, name), "uid",
                                        uids[n] >= 0 ? json_integer(uids[n]) : json_null(), "account",
                                        uids[n] >= 0, "user", user ? json_string(user) : json_null(),
                                        "since", since ? json_string(since) : json_null());
                        if (row && st == SLOTS_SLOT_PENDING) {
                                json_object_set_new(row, "cleanup", json_string("pending"));
                                json_object_set_new(row, "released",
                                                    released ? json_string(released) : json_null());
                        }
                        json_array_append_new(slots, row);
                }
                table = json_pack("{s:s, s:o, s:o, s:o, s:b}", "path", x.cfg->table, "owner",
                                  x.store.exists ? json_string(owner) : json_null(), "group",
                                  x.store.exists ? json_string(group) : json_null(), "mode",
                                  x.store.exists ? json_string(mode) : json_null(), "ok", ok);
                root = json_pack("{s:o, s:o, s:i, s:i, s:i, s:o}", "table", table, "slots", slots, "assigned",
                                 (int) assigned, "pending", (int) pending, "free",
                                 (int) (x.cfg->slots - assigned - pending), "test_slot",
                                 test ? json_string(slots_slot_name(test, name)) : json_null());
                if (!root) {
                        r = refuse("cannot show status", x.cfg->table, "out of memory", NULL);
                        goto out;
                }
                errno = 0;
                if (json_dumpf(root, stdout, JSON_INDENT(2) | JSON_PRESERVE_ORDER) == 0)
                        putchar('\n');
                json_decref(root);
        } else {
                printf("%-9s %-7s %-7s %-34s %s\n", "SLOT", "UID", "ACCOUNT", "USER", "SINCE");
                for (unsigned n = 1; n <= x.cfg->slots; n++) {
                        const char *user, *since, *released;
                        char uid[16];

                        if (only && n != only)
                                continue;
                        switch (slots_table_get(x.store.table, n, &user, &since, &released)) {
                        case SLOTS_SLOT_PENDING:
                                user = "(cleanup pending)";
                                since = released;
                                break;
                        case SLOTS_SLOT_FREE:
                                user = "-";
                                since = "-";
                                break;
                        case SLOTS_SLOT_ASSIGNED:
                                break;
                        }
                        snprintf(uid, sizeof(uid), "%ld", uids[n]);
                        printf("%-9s %-7s %-7s %-34s %s\n", slots_slot_name(n, name), uids[n] >= 0 ? uid : "-",
                               uids[n] >= 0 ? "yes" : "MISSING", user, since ? since : "-");
                }
                printf("\n%u assigned, %u pending, %u free\n", assigned, pending,
                       x.cfg->slots - assigned - pending);
                if (x.store.exists)
                        printf("table %s: %s:%s %s\n", x.cfg->table, owner, group, mode);
                if (!x.store.exists)
                        printf("WARN table %s does not exist -- fix: slots-provision creates it "
                               "root:%s 0640\n", x.cfg->table, x.group_name);
                else if (!ok)
                        printf("WARN table %s is %s:%s %s, not root:%s 0640; the service cannot rely on "
                               "reading it -- fix: chown root:%s %s && chmod 0640 %s\n",
                               x.cfg->table, owner, group, mode, x.group_name, x.group_name, x.cfg->table,
                               x.cfg->table);
                printf("test slot: %s\n", test ? slots_slot_name(test, name) : "none (every slot is in use)");
        }
        /* A status that never reached its reader (a full or closed stdout) is no answer. */
        if (fflush(stdout) != 0 || ferror(stdout)) {
                fprintf(stderr, "%s: cannot print the status: standard output: %s\n", cmd_name,
                        strerror(errno ? errno : EIO));
                r = EXIT_REFUSED;
                goto out;
        }
        r = EXIT_DONE;
out:
        free(uids);
        ctx_done(&x);
        return r;
}

int main(int argc, char **argv)
{
        static const struct option options[] = {
                { "config", required_argument, NULL, 'c' },
                { "json", no_argument, NULL, 'j' },
                { "slot", required_argument, NULL, 's' },
                { "help", no_argument, NULL, 'h' },
                { "version", no_argument, NULL, 'V' },
                {},
        };
        int (*run)(const struct opts *o, int argc, char **argv);
        struct opts o = { 0 };
        const char *cmd;
        int c, r;

        cmd_name = "slots-admin";
        while ((c = getopt_long(argc, argv, "hV", options, NULL)) != -1) {
                switch (c) {
                case 'c':
                        o.config = optarg;
                        break;
                case 'j':
                        o.json = true;
                        break;
                case 's':
                        o.slot = optarg;
                        break;
                case 'h':
                        fputs(usage_text, stdout);
                        return EXIT_DONE;
                case 'V':
                        printf("slots-admin %s\n", PACKAGE_VERSION);
                        return EXIT_DONE;
                default:
                        fprintf(stderr, "Try 'slots-admin --help'.\n");
                        return EXIT_USAGE;
                }
        }
        if (optind >= argc)
                return usage_error("no command given (assign, release, status, check)");
        cmd = argv[optind++];
        argc -= optind;
        argv += optind;
        if (o.json && strcmp(cmd, "status") != 0 && strcmp(cmd, "check") != 0)
                return usage_error("--json goes with status or check");
        if (o.slot && strcmp(cmd, "release") != 0)
                return usage_error("--slot goes with release");
        if (strcmp(cmd, "check") == 0)
                return argc ? usage_error("check takes no arguments") : cmd_check(o.config, o.json);
        if (strcmp(cmd, "assign") == 0)
                run = cmd_assign;
        else if (strcmp(cmd, "release") == 0)
                run = cmd_release;
        else if (strcmp(cmd, "status") == 0)
                run = cmd_status;
        else
                return usage_error("unknown command '%s' (assign, release, status, check)", cmd);
        /*
         * The table commands read one table and exit: jansson's values come from an arena
         * (issue 18), set before jansson's first allocation (the config's).
         */
        slots_arena_use();
        r = run(&o, argc, argv);
        slots_arena_drop();
        return r;
}
