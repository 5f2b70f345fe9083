/* slots-admin status: the table's rows, its file's verdict and the test slot, as text or JSON. */
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "accountmap.h"
#include "arena.h"
#include "cmdutil.h"
#include "ids.h"
#include "nss.h"
#include "service.h"
#include "status.h"
#include "verbs.h"
#include "store.h"

/* What status shows: the config, the table, the accounts' uids and the verdict on the table file. */
struct status {
        struct slots_config *cfg;
        gid_t group;
        char *group_name;
        struct slots_store store;
        bool store_open;
        unsigned only;                  /* 0: every slot */
        long *uids;                     /* [1..pool]: the account's uid, or -1 */
        char owner[64], grp[64], mode[8];
        bool ok;                        /* the table exists and is as the policy says */
        struct slots_table_verdict verdict;
        unsigned assigned, pending, test;
};

/* Account uids of the pool: one enumeration (accountmap.c), a lookup by name for each slot it did not list. */
static int pool_uids(unsigned pool, long *uids)
{
        uids[0] = -1;
        return slots_amap_pool_uids(NULL, pool, uids);
}

static int refuse(const char *object, const char *reason)
{
        struct slots_error e;

        slots_error_refuse(&e, -EPERM, object, "%s", reason);
        cmd_report("cannot show status", &e, NULL);
        return EXIT_REFUSED;
}

/* Config (a warning when someone but root can change it), service group, the table read unlocked. */
static int status_open(struct status *x, const char *config)
{
        struct slots_error e;
        int r;

        r = cmd_load_config(config, &x->cfg);
        if (r != EXIT_DONE)
                return r;
        cmd_warn_config_writers(x->cfg);
        slots_error_clear(&e);
        if (slots_service_group(x->cfg, &x->group, &x->group_name, &e) < 0) {
                cmd_report("cannot show status", &e, NULL);
                return EXIT_REFUSED;
        }
        slots_error_clear(&e);
        r = slots_store_open(&x->store, AT_FDCWD, x->cfg->table, x->cfg->slots, x->group, 0, &e);
        if (r < 0) {
                cmd_report(e.kind == SLOTS_ERR_INVALID ? "invalid table" : "cannot show status", &e, NULL);
                return cmd_exit_for(r, &e);
        }
        x->store_open = true;
        return EXIT_DONE;
}

/* Everything the rendering needs, read once. */
static int status_gather(struct status *x, const char *only)
{
        const struct slots_table_policy p = { .group = x->group, .group_name = x->group_name,
                                              .user_name = slots_uid_name, .group_name_of = slots_gid_name };

        if (only) {
                x->only = slots_slot_parse(only);
                if (x->only == 0)
                        x->only = slots_table_find_user(x->store.table, only);
                if (x->only == 0 || x->only > x->cfg->slots)
                        return refuse(only, x->only ? "the slot is outside the pool" : "the user holds no slot");
        }
        x->uids = calloc(x->cfg->slots + 1, sizeof(long));
        if (!x->uids)
                return refuse(x->cfg->table, "out of memory");
        if (pool_uids(x->cfg->slots, x->uids) < 0)
                fprintf(stderr, "%s: warning: some slot account lookups failed; they show as missing\n", cmd_name);
        if (x->store.exists) {
                slots_uid_name(x->store.st.st_uid, x->owner, sizeof(x->owner));
                slots_gid_name(x->store.st.st_gid, x->grp, sizeof(x->grp));
                snprintf(x->mode, sizeof(x->mode), "%04o", x->store.st.st_mode & 07777);
        }
        x->ok = x->store.exists && slots_store_verdict(&x->store, &p, &x->verdict);
        slots_table_count(x->store.table, &x->assigned, &x->pending);
        x->test = slots_table_test_slot(x->store.table, x->cfg->slots);
        return EXIT_DONE;
}

static json_t *json_slot_row(const struct status *x, unsigned n)
{
        const char *user, *since, *released;
        enum slots_slot_state st = slots_table_get(x->store.table, n, &user, &since, &released);
        char name[SLOTS_NAME_MAX];
        json_t *row;

        row = json_pack("{s:s, s:o, s:b, s:o, s:o}", "slot", slots_slot_name(n, name), "uid",
                        x->uids[n] >= 0 ? json_integer(x->uids[n]) : json_null(), "account", x->uids[n] >= 0,
                        "user", user ? json_string(user) : json_null(), "since",
                        since ? json_string(since) : json_null());
        if (row && st == SLOTS_SLOT_PENDING) {
                json_object_set_new(row, "cleanup", json_string("pending"));
                json_object_set_new(row, "released", released ? json_string(released) : json_null());
        }
        return row;
}

static int print_json(const struct status *x)
{
        json_t *root, *slots = json_array(), *table;
        char name[SLOTS_NAME_MAX];
        bool e = x->store.exists;

        for (unsigned n = 1; n <= x->cfg->slots; n++)
                if (!x->only || n == x->only)
                        json_array_append_new(slots, json_slot_row(x, n));
        table = json_pack("{s:s, s:o, s:o, s:o, s:b}", "path", x->cfg->table, "owner",
                          e ? json_string(x->owner) : json_null(), "group", e ? json_string(x->grp) : json_null(),
                          "mode", e ? json_string(x->mode) : json_null(), "ok", x->ok);
        root = json_pack("{s:i, s:o, s:o, s:i, s:i, s:i, s:o}", "version", CMD_JSON_VERSION, "table", table,
                         "slots", slots, "assigned",
                         (int) x->assigned, "pending", (int) x->pending, "free",
                         (int) (x->cfg->slots - x->assigned - x->pending), "test_slot",
                         x->test ? json_string(slots_slot_name(x->test, name)) : json_null());
        if (!root)
                return refuse(x->cfg->table, "out of memory");
        if (json_dumpf(root, stdout, JSON_INDENT(2) | JSON_PRESERVE_ORDER) == 0)
                putchar('\n');
        json_decref(root);
        return EXIT_DONE;
}

/* The rows go out through one buffer, each field padded as printf's "%-Ns" would pad it. */
struct rowbuf {
        char b[1 << 16];
        size_t len;
};

static void rb_flush(struct rowbuf *r)
{
        if (r->len)
                (void) fwrite(r->b, 1, r->len, stdout);
        r->len = 0;
}

/* s, then spaces up to width, then sep (a space, or the end of the line). */
static void rb_field(struct rowbuf *r, const char *s, size_t width, char sep)
{
        size_t l = strlen(s), pad = l < width ? width - l : 0;

        if (l + pad + 1 > sizeof(r->b) - r->len) {
                rb_flush(r);
                if (l + pad + 1 > sizeof(r->b)) {
                        printf("%-*s%c", (int) width, s, sep);
                        return;
                }
        }
        memcpy(r->b + r->len, s, l);
        memset(r->b + r->len + l, ' ', pad);
        r->len += l + pad;
        r->b[r->len++] = sep;
}

static const char *uid_str(long uid, char buf[static 24])
{
        char *p = buf + 23;

        *p = '\0';
        do
                *--p = (char) ('0' + uid % 10);
        while ((uid /= 10) > 0);
        return p;
}

static void print_rows(const struct status *x)
{
        static struct rowbuf rb;

        printf("%-9s %-7s %-7s %-34s %s\n", "SLOT", "UID", "ACCOUNT", "USER", "SINCE");
        for (unsigned n = 1; n <= x->cfg->slots; n++) {
                const char *user, *since, *released;
                char uid[24], name[SLOTS_NAME_MAX];

                if (x->only && n != x->only)
                        continue;
                switch (slots_table_get(x->store.table, n, &user, &since, &released)) {
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
                rb_field(&rb, slots_slot_name(n, name), 9, ' ');
                rb_field(&rb, x->uids[n] >= 0 ? uid_str(x->uids[n], uid) : "-", 7, ' ');
                rb_field(&rb, x->uids[n] >= 0 ? "yes" : "MISSING", 7, ' ');
                rb_field(&rb, user, 34, ' ');
                rb_field(&rb, since ? since : "-", 0, '\n');
        }
        rb_flush(&rb);
}

static void print_text(const struct status *x)
{
        char name[SLOTS_NAME_MAX];

        print_rows(x);
        printf("\n%u assigned, %u pending, %u free\n", x->assigned, x->pending,
               x->cfg->slots - x->assigned - x->pending);
        if (x->store.exists)
                printf("table %s: %s:%s %s\n", x->cfg->table, x->owner, x->grp, x->mode);
        if (!x->store.exists)
                printf("WARN table %s does not exist -- fix: slots-provision creates it root:%s %04o\n",
                       x->cfg->table, x->group_name, SLOTS_TABLE_MODE);
        else if (!x->ok)
                printf("WARN table %s: %s; %s -- fix: %s\n", x->cfg->table, x->verdict.e.reason,
                       x->verdict.writable ? "someone but root may write it" : "the service cannot rely on reading it",
                       x->verdict.e.fix);
        printf("test slot: %s\n", x->test ? slots_slot_name(x->test, name) : "none (every slot is in use)");
}

/*
 * --held: the slots that keep users' trees granted and may run their code, one
 * line each with the command that frees it (the package's prerm names them).
 */
static void print_held(const struct status *x)
{
        for (unsigned n = 1; n <= x->cfg->slots; n++) {
                char name[SLOTS_NAME_MAX];
                const char *user;

                switch (slots_table_get(x->store.table, n, &user, NULL, NULL)) {
                case SLOTS_SLOT_ASSIGNED:
                        printf("%s is assigned to %s: slots-admin release %s\n", slots_slot_name(n, name), user, user);
                        break;
                case SLOTS_SLOT_PENDING:
                        slots_slot_name(n, name);
                        printf("%s's release is pending: slots-admin release --slot %s\n", name, name);
                        break;
                case SLOTS_SLOT_FREE:
                        break;
                }
        }
}

int cmd_status_show(const char *config, enum cmd_status_format format, const char *only)
{
        struct status x = { 0 };
        int r;

        r = status_open(&x, config);
        if (r == EXIT_DONE && format == CMD_STATUS_HELD)
                print_held(&x);
        else if (r == EXIT_DONE)
                r = status_gather(&x, only);
        if (r == EXIT_DONE && format == CMD_STATUS_JSON)
                r = print_json(&x);
        else if (r == EXIT_DONE && format == CMD_STATUS_TEXT)
                print_text(&x);
        /* A status that never reached its reader (a full or closed stdout) is no answer. */
        if (r == EXIT_DONE && (r = cmd_stdout_done()) < 0) {
                fprintf(stderr, "%s: cannot print the status: standard output: %s\n", cmd_name,
                        r == -EBADF ? "closed when status started" : strerror(-r));
                r = EXIT_REFUSED;
        }
        free(x.uids);
        if (x.store_open) {
                /* The tree is in the arena, which goes whole at exit: no walk over every entry to free it. */
                if (slots_arena_active()) {
                        slots_table_forget(x.store.table);
                        x.store.table = NULL;
                }
                slots_store_close(&x.store);
        }
        free(x.group_name);
        slots_config_free(x.cfg);
        return r;
}

int verb_status(const struct admin_opts *o, int argc, char **argv)
{
        if (o->held && (o->json || argc))
                return cmd_usage_error(o->json ? "--held and --json: give one of them" :
                                       "status --held takes no USER or SLOT");
        if (argc == 1 && !slots_slot_parse(argv[0]) && !slots_user_valid(argv[0]))
                return cmd_usage_error("the argument is neither a slot name nor a valid user id");
        return cmd_status_show(o->config, o->held ? CMD_STATUS_HELD : o->json ? CMD_STATUS_JSON : CMD_STATUS_TEXT,
                               argc == 1 ? argv[0] : NULL);
}
