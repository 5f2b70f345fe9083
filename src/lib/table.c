/* The slot table format (slots.json(5)): validate, query, change, serialize. */
#include <errno.h>
#include <stdio.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ids.h"
#include "jsonpos.h"
#include "table.h"

struct slots_table {
        json_t *root;   /* the whole document: unknown keys ride along on rewrite */
        json_t *slots;  /* borrowed from root */
};

struct slots_table *slots_table_new(void)
{
        struct slots_table *t = calloc(1, sizeof(*t));

        if (!t)
                return NULL;
        t->root = json_pack("{s:i, s:{}}", "version", 1, "slots");
        if (!t->root) {
                free(t);
                return NULL;
        }
        t->slots = json_object_get(t->root, "slots");
        return t;
}

void slots_table_free(struct slots_table *t)
{
        if (!t)
                return;
        json_decref(t->root);
        free(t);
}

static int check_entry(const struct slots_jsrc *src, const char *slot, json_t *entry, struct slots_error *e)
{
        struct slots_jpath p[3] = { { .key = "slots" }, { .key = slot }, { 0 } };
        json_t *user = json_object_get(entry, "user");
        json_t *cleanup = json_object_get(entry, "cleanup");
        static const char *const strings[] = { "since", "released", "cleanup" };

        if (!json_is_object(entry))
                return slots_json_fail(e, src, p, 2, false, "%s: the entry must be an object", slot);
        for (size_t i = 0; i < sizeof(strings) / sizeof(strings[0]); i++) {
                json_t *v = json_object_get(entry, strings[i]);
                p[2].key = strings[i];
                if (v && !json_is_string(v))
                        return slots_json_fail(e, src, p, 3, false, "%s: \"%s\" must be a string", slot, strings[i]);
        }
        p[2].key = "user";
        if (user) {
                if (!json_is_string(user) || !slots_user_valid(json_string_value(user)))
                        return slots_json_fail(e, src, p, 3, false,
                                   "%s: invalid user id (1-64 of A-Z a-z 0-9 . _ -, not starting "
                                   "with . or -)", slot);
                if (cleanup)
                        return slots_json_fail(e, src, p, 3, false,
                                   "%s: an entry has either \"user\" or \"cleanup\", not both", slot);
                return 0;
        }
        p[2].key = "cleanup";
        if (!cleanup)
                return slots_json_fail(e, src, p, 2, false,
                           "%s: the entry has neither \"user\" nor \"cleanup\": \"pending\"", slot);
        if (strcmp(json_string_value(cleanup), "pending") != 0)
                return slots_json_fail(e, src, p, 3, false, "%s: \"cleanup\" must be \"pending\"", slot);
        return 0;
}

int slots_table_parse(const char *text, size_t len, const char *file, unsigned pool,
                      struct slots_table **ret, struct slots_error *e)
{
        const struct slots_jsrc src = { .file = file, .text = text, .len = len };
        struct slots_table *t;
        json_error_t jerr;
        json_t *root, *slots, *version, *entry, *seen = NULL;
        const char *slot;
        int r;

        root = json_loadb(text, len, JSON_REJECT_DUPLICATES, &jerr);
        if (!root) {
                slots_error_set(e, -EBADMSG, file, "%s", jerr.text);
                slots_error_at(e, (unsigned) (jerr.line > 0 ? jerr.line : 1),
                               (unsigned) (jerr.column > 0 ? jerr.column : 1));
                return -EBADMSG;
        }
        if (!json_is_object(root)) {
                r = slots_json_fail(e, &src, NULL, 0, false, "the table must be a JSON object");
                goto fail;
        }
        version = json_object_get(root, "version");
        if (!json_is_integer(version) || json_integer_value(version) != 1) {
                const struct slots_jpath p = { .key = "version" };
                r = slots_json_fail(e, &src, &p, 1, false,
                        "unsupported table version (this slots-admin reads \"version\": 1)");
                goto fail;
        }
        slots = json_object_get(root, "slots");
        if (!json_is_object(slots)) {
                const struct slots_jpath p = { .key = "slots" };
                r = slots_json_fail(e, &src, &p, 1, false, "\"slots\" must be an object of slot entries");
                goto fail;
        }
        seen = json_object();   /* user -> slot, to find a user in two slots */
        if (!seen) {
                r = -ENOMEM;
                goto fail;
        }
        json_object_foreach(slots, slot, entry) {
                const struct slots_jpath p[3] = { { .key = "slots" }, { .key = slot }, { .key = "user" } };
                unsigned n = slots_slot_parse(slot);
                const char *other;
                char pooltxt[64];

                if (n == 0 || n > pool) {
                        snprintf(pooltxt, sizeof(pooltxt), "%u", pool);
                        r = slots_json_fail(e, &src, p, 2, true, "\"%s\" is not a slot of the pool of %s", slot, pooltxt);
                        goto fail;
                }
                r = check_entry(&src, slot, entry, e);
                if (r < 0)
                        goto fail;
                /* A user in two slots: report the later one, naming the earlier. */
                if (json_object_get(entry, "user")) {
                        const char *user = json_string_value(json_object_get(entry, "user"));

                        other = json_string_value(json_object_get(seen, user));
                        if (other) {
                                r = slots_json_fail(e, &src, p, 3, false, "%s: the same user already holds %s", slot,
                                        other);
                                goto fail;
                        }
                        if (json_object_set_new(seen, user, json_string(slot)) < 0) {
                                r = -ENOMEM;
                                goto fail;
                        }
                }
        }
        json_decref(seen);
        t = calloc(1, sizeof(*t));
        if (!t) {
                json_decref(root);
                return -ENOMEM;
        }
        t->root = root;
        t->slots = slots;
        *ret = t;
        return 0;
fail:
        json_decref(seen);
        json_decref(root);
        return r;
}

static json_t *entry_of(const struct slots_table *t, unsigned n)
{
        char name[SLOTS_NAME_MAX];

        return json_object_get(t->slots, slots_slot_name(n, name));
}

enum slots_slot_state slots_table_get(const struct slots_table *t, unsigned n, const char **user,
                                      const char **since, const char **released)
{
        json_t *entry = entry_of(t, n);
        const char *u = json_string_value(json_object_get(entry, "user"));

        if (user)
                *user = u;
        if (since)
                *since = json_string_value(json_object_get(entry, "since"));
        if (released)
                *released = json_string_value(json_object_get(entry, "released"));
        if (!entry)
                return SLOTS_SLOT_FREE;
        return u ? SLOTS_SLOT_ASSIGNED : SLOTS_SLOT_PENDING;
}

unsigned slots_table_find_user(const struct slots_table *t, const char *user)
{
        const char *slot;
        json_t *entry;

        json_object_foreach(t->slots, slot, entry) {
                const char *u = json_string_value(json_object_get(entry, "user"));
                if (u && strcmp(u, user) == 0)
                        return slots_slot_parse(slot);
        }
        return 0;
}

unsigned slots_table_lowest_free(const struct slots_table *t, unsigned pool)
{
        for (unsigned n = 1; n <= pool; n++)
                if (!entry_of(t, n))
                        return n;
        return 0;
}

unsigned slots_table_test_slot(const struct slots_table *t, unsigned pool)
{
        for (unsigned n = pool; n >= 1; n--)
                if (!entry_of(t, n))
                        return n;
        return 0;
}

void slots_table_count(const struct slots_table *t, unsigned *assigned, unsigned *pending)
{
        const char *slot;
        json_t *entry;
        unsigned a = 0, p = 0;

        json_object_foreach(t->slots, slot, entry) {
                if (json_object_get(entry, "user"))
                        a++;
                else
                        p++;
        }
        if (assigned)
                *assigned = a;
        if (pending)
                *pending = p;
}

/* The entry of slot n, created empty when missing. */
static json_t *entry_make(struct slots_table *t, unsigned n)
{
        char name[SLOTS_NAME_MAX];
        json_t *entry = entry_of(t, n);

        if (entry)
                return entry;
        entry = json_object();
        if (!entry || json_object_set_new(t->slots, slots_slot_name(n, name), entry) < 0)
                return NULL;
        return entry;
}

int slots_table_assign(struct slots_table *t, unsigned n, const char *user, const char *since)
{
        json_t *entry = entry_make(t, n);

        if (!entry)
                return -ENOMEM;
        (void) json_object_del(entry, "cleanup");
        (void) json_object_del(entry, "released");
        if (json_object_set_new(entry, "user", json_string(user)) < 0 ||
            json_object_set_new(entry, "since", json_string(since)) < 0)
                return -ENOMEM;
        return 0;
}

int slots_table_mark_pending(struct slots_table *t, unsigned n, const char *released)
{
        json_t *entry = entry_make(t, n);

        if (!entry)
                return -ENOMEM;
        (void) json_object_del(entry, "user");
        (void) json_object_del(entry, "since");
        if (json_object_set_new(entry, "cleanup", json_string("pending")) < 0 ||
            json_object_set_new(entry, "released", json_string(released)) < 0)
                return -ENOMEM;
        return 0;
}

int slots_table_remove(struct slots_table *t, unsigned n)
{
        char name[SLOTS_NAME_MAX];

        (void) json_object_del(t->slots, slots_slot_name(n, name));
        return 0;
}

char *slots_table_dump(const struct slots_table *t, size_t *len)
{
        char *s = json_dumps(t->root, JSON_SORT_KEYS | JSON_INDENT(2));
        char *r;
        size_t n;

        if (!s)
                return NULL;
        n = strlen(s);
        r = realloc(s, n + 2);
        if (!r) {
                free(s);
                return NULL;
        }
        r[n] = '\n';
        r[n + 1] = '\0';
        *len = n + 1;
        return r;
}

const char *slots_now_rfc3339(char buf[static 32])
{
        time_t now = time(NULL);
        struct tm tm;

        gmtime_r(&now, &tm);
        strftime(buf, 32, "%Y-%m-%dT%H:%M:%SZ", &tm);
        return buf;
}
