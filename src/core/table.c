/* The slot table format (slots.json(5)): validate, query, change, serialize. */
#include <errno.h>
#include <stdio.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "ids.h"
#include "jsonpos.h"
#include "table.h"

/* A held slot while the table is checked: its user, its key, its place in the file. */
struct slots_held {
        const char *user;
        const char *slot;
        size_t at;
};

struct slots_table {
        json_t *root;   /* the whole document: unknown keys ride along on rewrite */
        json_t *slots;  /* borrowed from root */
        size_t len;     /* the size of the text it was parsed from: the dump's first guess */
        bool sorted;    /* every object's keys are in the dump's order: no JSON_SORT_KEYS needed */
        /*
         * The held slots sorted by user, as the parse's duplicate check left them: who holds
         * what without a pass over every entry.  Dropped at the first change (NULL then).
         */
        struct slots_held *held;
        size_t n_held;
};

/* Before any change: the index's users point into entries a change may replace. */
static void drop_index(struct slots_table *t)
{
        free(t->held);
        t->held = NULL;
        t->n_held = 0;
}

/*
 * Whether every object in v (at any depth) has its keys in strcmp order, the
 * order JSON_SORT_KEYS writes.  jansson keeps insertion order, so a table read
 * from a sorted file dumps the same bytes without sorting (sorting was an
 * eighth of assign's instructions at 1,000 slots).
 */
static bool keys_sorted(json_t *v)
{
        const char *key, *prev = NULL;
        json_t *m;
        size_t i;

        if (json_is_object(v)) {
                json_object_foreach(v, key, m) {
                        if ((prev && strcmp(prev, key) >= 0) || !keys_sorted(m))
                                return false;
                        prev = key;
                }
        } else if (json_is_array(v)) {
                json_array_foreach(v, i, m)
                        if (!keys_sorted(m))
                                return false;
        }
        return true;
}

static int key_cmp(const void *a, const void *b)
{
        return strcmp(*(const char *const *) a, *(const char *const *) b);
}

/*
 * Puts the members of obj (whose values are already sorted inside) in key
 * order: a new object built in that order replaces obj as member `name` of
 * parent.  Returns the object now in place, or NULL on ENOMEM (obj unchanged).
 */
static json_t *resort(json_t *parent, const char *name, json_t *obj)
{
        size_t n = json_object_size(obj), i = 0;
        const char **keys = malloc((n ? n : 1) * sizeof(*keys));
        json_t *out = json_object(), *m;
        const char *key;

        if (!keys || !out)
                goto fail;
        json_object_foreach(obj, key, m)
                keys[i++] = key;
        qsort(keys, n, sizeof(*keys), key_cmp);
        for (i = 0; i < n; i++)
                if (json_object_set(out, keys[i], json_object_get(obj, keys[i])) < 0)
                        goto fail;
        free(keys);
        if (json_object_set_new(parent, name, out) < 0)
                return NULL;
        return out;
fail:
        free(keys);
        json_decref(out);
        return NULL;
}

/* After an entry (obj, member `name` of parent) changed: its keys in order again, or the dump sorts. */
static json_t *keep_sorted(struct slots_table *t, json_t *parent, const char *name, json_t *obj)
{
        const char *key, *prev = NULL;
        json_t *m, *out;

        if (!t->sorted)
                return obj;
        json_object_foreach(obj, key, m) {
                if (prev && strcmp(prev, key) >= 0)
                        break;
                prev = key;
        }
        if (!key)
                return obj;
        out = resort(parent, name, obj);
        if (!out) {
                t->sorted = false;
                return obj;
        }
        return out;
}

struct slots_table *slots_table_new(void)
{
        struct slots_table *t = calloc(1, sizeof(*t));

        if (!t)
                return NULL;
        /* In key order: "slots" before "version" (see keys_sorted). */
        t->root = json_pack("{s:{}, s:i}", "slots", "version", 1);
        if (!t->root) {
                free(t);
                return NULL;
        }
        t->slots = json_object_get(t->root, "slots");
        t->sorted = true;
        return t;
}

void slots_table_free(struct slots_table *t)
{
        if (!t)
                return;
        json_decref(t->root);
        slots_table_forget(t);
}

void slots_table_forget(struct slots_table *t)
{
        if (!t)
                return;
        free(t->held);
        free(t);
}

/* The members an entry's checks read, found in one pass over it instead of a lookup each. */
struct entry_keys {
        json_t *user, *since, *released, *cleanup;
        bool sorted;            /* its keys in strcmp order, and those of every value in it (keys_sorted) */
};

static void entry_keys(json_t *entry, struct entry_keys *k)
{
        const char *key, *prev = NULL;
        json_t *v;

        *k = (struct entry_keys) { .sorted = true };
        json_object_foreach(entry, key, v) {
                if (strcmp(key, "user") == 0)
                        k->user = v;
                else if (strcmp(key, "since") == 0)
                        k->since = v;
                else if (strcmp(key, "released") == 0)
                        k->released = v;
                else if (strcmp(key, "cleanup") == 0)
                        k->cleanup = v;
                if (k->sorted && ((prev && strcmp(prev, key) >= 0) || !keys_sorted(v)))
                        k->sorted = false;
                prev = key;
        }
}

static int check_entry(const struct slots_jsrc *src, const char *slot, json_t *entry, struct entry_keys *k,
                       enum slots_table_problem *problem, struct slots_error *e)
{
        struct slots_jpath p[3] = { { .key = "slots" }, { .key = slot }, { 0 } };
        static const char *const strings[] = { "since", "released", "cleanup" };
        json_t *values[3];

        *problem = SLOTS_TABLE_SCHEMA;
        if (!json_is_object(entry))
                return slots_json_fail(e, src, p, 2, false, "%s: the entry must be an object", slot);
        entry_keys(entry, k);
        values[0] = k->since;
        values[1] = k->released;
        values[2] = k->cleanup;
        for (size_t i = 0; i < sizeof(strings) / sizeof(strings[0]); i++) {
                p[2].key = strings[i];
                if (values[i] && !json_is_string(values[i]))
                        return slots_json_fail(e, src, p, 3, false, "%s: \"%s\" must be a string", slot, strings[i]);
        }
        p[2].key = "user";
        if (k->user) {
                if (!json_is_string(k->user) || !slots_user_valid(json_string_value(k->user))) {
                        *problem = SLOTS_TABLE_USER;
                        return slots_json_fail(e, src, p, 3, false,
                                   "%s: invalid user id (1-64 of A-Z a-z 0-9 . _ -, not starting "
                                   "with . or -)", slot);
                }
                if (k->cleanup)
                        return slots_json_fail(e, src, p, 3, false,
                                   "%s: an entry has either \"user\" or \"cleanup\", not both", slot);
                *problem = SLOTS_TABLE_OK;
                return 0;
        }
        p[2].key = "cleanup";
        if (!k->cleanup)
                return slots_json_fail(e, src, p, 2, false,
                           "%s: the entry has neither \"user\" nor \"cleanup\": \"pending\"", slot);
        if (strcmp(json_string_value(k->cleanup), "pending") != 0)
                return slots_json_fail(e, src, p, 3, false, "%s: \"cleanup\" must be \"pending\"", slot);
        *problem = SLOTS_TABLE_OK;
        return 0;
}

static int user_cmp(const void *a, const void *b)
{
        const struct slots_held *x = a, *y = b;

        return strcmp(x->user, y->user);
}

static int held_cmp(const void *a, const void *b)
{
        const struct slots_held *x = a, *y = b;
        int c = strcmp(x->user, y->user);

        if (c)
                return c;
        return x->at < y->at ? -1 : x->at > y->at;
}

int slots_table_parse(const char *text, size_t len, const char *file, unsigned pool,
                      struct slots_table **ret, struct slots_error *e)
{
        enum slots_table_problem problem;

        return slots_table_parse_problem(text, len, file, pool, ret, &problem, e);
}

/*
 * Whether the top-level keys are in order and every value but "slots" (whose
 * order the entries' pass found: slots_sorted) too: keys_sorted(root) without a
 * second walk over the entries.
 */
static bool root_sorted(json_t *root, json_t *slots, bool slots_sorted)
{
        const char *key, *prev = NULL;
        json_t *v;

        json_object_foreach(root, key, v) {
                if ((prev && strcmp(prev, key) >= 0) || (v == slots ? !slots_sorted : !keys_sorted(v)))
                        return false;
                prev = key;
        }
        return true;
}

/* The document's top: an object with "version": 1 and a "slots" object, returned in *slots. */
static int check_top(const struct slots_jsrc *src, json_t *root, json_t **slots, enum slots_table_problem *problem,
                     struct slots_error *e)
{
        json_t *version;

        if (!json_is_object(root))
                return slots_json_fail(e, src, NULL, 0, false, "the table must be a JSON object");
        version = json_object_get(root, "version");
        if (!json_is_integer(version) || json_integer_value(version) != 1) {
                const struct slots_jpath p = { .key = "version" };

                *problem = SLOTS_TABLE_VERSION;
                return slots_json_fail(e, src, &p, 1, false,
                                       "unsupported table version (this slots-admin reads \"version\": 1)");
        }
        *slots = json_object_get(root, "slots");
        if (!json_is_object(*slots)) {
                const struct slots_jpath p = { .key = "slots" };

                return slots_json_fail(e, src, &p, 1, false, "\"slots\" must be an object of slot entries");
        }
        return 0;
}

/*
 * Every entry of slots checked in one pass: a slot of the pool, its keys, the order; the
 * (user, slot) of each held slot into seen (*n_seen of them).  *sorted: keys in order.
 */
static int check_entries(const struct slots_jsrc *src, json_t *slots, unsigned pool, struct slots_held *seen,
                         size_t *n_seen, bool *sorted, enum slots_table_problem *problem, struct slots_error *e)
{
        const char *slot, *prev = NULL;
        json_t *entry;

        *sorted = true;
        json_object_foreach(slots, slot, entry) {
                const struct slots_jpath p[2] = { { .key = "slots" }, { .key = slot } };
                unsigned n = slots_slot_parse(slot);
                struct entry_keys k = { 0 };
                char pooltxt[64];
                int r;

                if (n == 0 || n > pool) {
                        *problem = SLOTS_TABLE_OUT_OF_POOL;
                        snprintf(pooltxt, sizeof(pooltxt), "%u", pool);
                        return slots_json_fail(e, src, p, 2, true, "\"%s\" is not a slot of the pool of %s", slot,
                                               pooltxt);
                }
                r = check_entry(src, slot, entry, &k, problem, e);
                if (r < 0)
                        return r;
                if (*sorted && ((prev && strcmp(prev, slot) >= 0) || !k.sorted))
                        *sorted = false;
                prev = slot;
                if (k.user) {
                        seen[*n_seen] = (struct slots_held) { json_string_value(k.user), slot, *n_seen };
                        (*n_seen)++;
                }
        }
        return 0;
}

/*
 * A user in two slots: report the later one (in the file's order), naming the
 * earlier.  A sorted array instead of a user -> slot JSON object (the object
 * cost a tenth of the parse); kept as the table's index of users.
 */
static int check_users(const struct slots_jsrc *src, struct slots_held *seen, size_t n_seen,
                       enum slots_table_problem *problem, struct slots_error *e)
{
        qsort(seen, n_seen, sizeof(*seen), held_cmp);
        for (size_t i = 1; i < n_seen; i++) {
                if (strcmp(seen[i - 1].user, seen[i].user) == 0) {
                        const struct slots_jpath p[3] = { { .key = "slots" }, { .key = seen[i].slot },
                                                          { .key = "user" } };

                        *problem = SLOTS_TABLE_DUPLICATE;
                        return slots_json_fail(e, src, p, 3, false, "%s: the same user already holds %s",
                                               seen[i].slot, seen[i - 1].slot);
                }
        }
        return 0;
}

int slots_table_parse_problem(const char *text, size_t len, const char *file, unsigned pool,
                              struct slots_table **ret, enum slots_table_problem *problem,
                              struct slots_error *e)
{
        const struct slots_jsrc src = { .file = file, .text = text, .len = len };
        struct slots_table *t;
        json_error_t jerr;
        json_t *root, *slots = NULL;
        struct slots_held *seen = NULL;
        size_t n_seen = 0;
        bool sorted = true;
        int r;

        *problem = SLOTS_TABLE_SYNTAX;
        root = json_loadb(text, len, JSON_REJECT_DUPLICATES, &jerr);
        if (!root) {
                r = slots_json_load_error(e, file, &jerr);
                if (r == -ENOMEM)
                        *problem = SLOTS_TABLE_NO_MEMORY;
                return r;
        }
        *problem = SLOTS_TABLE_SCHEMA;
        r = check_top(&src, root, &slots, problem, e);
        if (r < 0)
                goto fail;
        /* (user, slot) of every held slot, sorted afterwards to find a user in two slots. */
        seen = malloc((json_object_size(slots) + 1) * sizeof(*seen));
        if (!seen) {
                *problem = SLOTS_TABLE_NO_MEMORY;
                r = slots_error_set(e, -ENOMEM, file, "out of memory");
                goto fail;
        }
        r = check_entries(&src, slots, pool, seen, &n_seen, &sorted, problem, e);
        if (r == 0)
                r = check_users(&src, seen, n_seen, problem, e);
        if (r < 0)
                goto fail;
        t = calloc(1, sizeof(*t));
        if (!t) {
                free(seen);
                json_decref(root);
                *problem = SLOTS_TABLE_NO_MEMORY;
                return slots_error_set(e, -ENOMEM, file, "out of memory");
        }
        *problem = SLOTS_TABLE_OK;
        t->root = root;
        t->slots = slots;
        t->len = len;
        t->sorted = root_sorted(root, slots, sorted);
        t->held = seen;
        t->n_held = n_seen;
        *ret = t;
        return 0;
fail:
        free(seen);
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

        if (t->held) {
                const struct slots_held key = { .user = user }, *h;

                /* held_cmp's order; with no user twice, any match is the one. */
                h = bsearch(&key, t->held, t->n_held, sizeof(*t->held), user_cmp);
                return h ? slots_slot_parse(h->slot) : 0;
        }
        json_object_foreach(t->slots, slot, entry) {
                const char *u = json_string_value(json_object_get(entry, "user"));
                if (u && strcmp(u, user) == 0)
                        return slots_slot_parse(slot);
        }
        return 0;
}

unsigned slots_table_lowest_free(const struct slots_table *t, unsigned pool)
{
        const char *slot;
        json_t *entry;
        unsigned char *used = calloc(pool + 1, 1);
        unsigned n;

        /* Without memory for the map, one lookup per slot. */
        if (!used) {
                for (n = 1; n <= pool; n++)
                        if (!entry_of(t, n))
                                return n;
                return 0;
        }
        /* One pass over the entries instead of a name and a hash lookup per slot of the pool. */
        json_object_foreach(t->slots, slot, entry) {
                unsigned k = slots_slot_parse(slot);

                if (k >= 1 && k <= pool)
                        used[k] = 1;
        }
        for (n = 1; n <= pool && used[n]; n++)
                ;
        free(used);
        return n <= pool ? n : 0;
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

void slots_table_states(const struct slots_table *t, unsigned pool, unsigned char *states)
{
        const char *slot;
        json_t *entry;

        memset(states, SLOTS_SLOT_FREE, pool);
        json_object_foreach(t->slots, slot, entry) {
                unsigned n = slots_slot_parse(slot);

                if (n >= 1 && n <= pool)
                        states[n - 1] = json_string_value(json_object_get(entry, "user")) ?
                                SLOTS_SLOT_ASSIGNED : SLOTS_SLOT_PENDING;
        }
}

/*
 * Adds an empty entry `name` to the slots object in key order.  jansson appends a
 * new key; when it does not sort last, a new object built in one pass with it in
 * its place (the entries shared, not copied) replaces "slots", so the dump still
 * needs no sort (sorting every object was a tenth of the dump).  Without
 * memory for that the key is appended and the dump sorts.
 */
static json_t *entry_insert(struct slots_table *t, const char *name)
{
        json_t *entry = json_object(), *out = NULL, *v;
        const char *key, *after = NULL;

        if (!entry)
                return NULL;
        if (t->sorted) {
                const char *last = NULL;

                /* The usual case, a key that sorts last, costs one comparison. */
                json_object_foreach(t->slots, key, v)
                        last = key;
                if (last && strcmp(last, name) > 0) {
                        json_object_foreach(t->slots, key, v) {
                                if (strcmp(key, name) > 0) {
                                        after = key;
                                        break;
                                }
                        }
                }
        }
        if (after)
                out = json_object();
        if (out) {
                json_object_foreach(t->slots, key, v) {
                        if (key == after && json_object_set(out, name, entry) < 0)
                                break;
                        if (json_object_set(out, key, v) < 0)
                                break;
                }
                if (!key && json_object_set(t->root, "slots", out) == 0) {
                        json_decref(out);
                        json_decref(entry);     /* held by out now */
                        t->slots = out;
                        return entry;
                }
                json_decref(out);
        }
        if (after)
                t->sorted = false;
        if (json_object_set_new(t->slots, name, entry) < 0)
                return NULL;
        return entry;
}

/* The entry of slot n, created empty when missing. */
static json_t *entry_make(struct slots_table *t, unsigned n)
{
        char name[SLOTS_NAME_MAX];
        json_t *entry = entry_of(t, n);

        if (entry)
                return entry;
        return entry_insert(t, slots_slot_name(n, name));
}

int slots_table_assign(struct slots_table *t, unsigned n, const char *user, const char *since)
{
        char name[SLOTS_NAME_MAX];
        json_t *entry;

        drop_index(t);
        entry = entry_make(t, n);

        if (!entry)
                return -ENOMEM;
        (void) json_object_del(entry, "cleanup");
        (void) json_object_del(entry, "released");
        /* "since" before "user": a new entry comes out in key order. */
        if (json_object_set_new(entry, "since", json_string(since)) < 0 ||
            json_object_set_new(entry, "user", json_string(user)) < 0)
                return -ENOMEM;
        (void) keep_sorted(t, t->slots, slots_slot_name(n, name), entry);
        return 0;
}

int slots_table_mark_pending(struct slots_table *t, unsigned n, const char *released)
{
        char name[SLOTS_NAME_MAX];
        json_t *entry;

        drop_index(t);
        entry = entry_make(t, n);

        if (!entry)
                return -ENOMEM;
        (void) json_object_del(entry, "user");
        (void) json_object_del(entry, "since");
        if (json_object_set_new(entry, "cleanup", json_string("pending")) < 0 ||
            json_object_set_new(entry, "released", json_string(released)) < 0)
                return -ENOMEM;
        (void) keep_sorted(t, t->slots, slots_slot_name(n, name), entry);
        return 0;
}

int slots_table_remove(struct slots_table *t, unsigned n)
{
        char name[SLOTS_NAME_MAX];

        drop_index(t);
        (void) json_object_del(t->slots, slots_slot_name(n, name));
        return 0;
}

struct dumpbuf {
        char *p;
        size_t len, size;
};

static int dump_add(const char *text, size_t n, void *arg)
{
        struct dumpbuf *b = arg;

        if (b->len + n + 2 > b->size) {
                size_t size = b->size ? b->size : 4096;
                char *p;

                while (b->len + n + 2 > size)
                        size *= 2;
                p = realloc(b->p, size);
                if (!p)
                        return -1;
                b->p = p;
                b->size = size;
        }
        memcpy(b->p + b->len, text, n);
        b->len += n;
        return 0;
}

char *slots_table_dump(const struct slots_table *t, size_t *len)
{
        /*
         * Straight into one buffer sized after the text the table came from
         * (json_dumps builds a buffer and copies it; the newline would be a third copy).
         */
        struct dumpbuf b = { .size = t->len ? t->len + t->len / 8 + 256 : 0 };

        if (b.size && !(b.p = malloc(b.size)))
                return NULL;
        if (slots_table_dump_to(t, dump_add, &b) < 0) {
                free(b.p);
                return NULL;
        }
        b.p[b.len] = '\0';
        *len = b.len;
        return b.p;
}

int slots_table_dump_to(const struct slots_table *t, int (*out)(const char *text, size_t n, void *arg),
                        void *arg)
{
        /* A table whose keys are all in order already is written as it is, without sorting. */
        size_t flags = JSON_INDENT(2) | (t->sorted ? 0 : JSON_SORT_KEYS);

        if (json_dump_callback(t->root, out, arg, flags) < 0 || out("\n", 1, arg) < 0)
                return -1;
        return 0;
}

const char *slots_now_rfc3339(char buf[static 32])
{
        time_t now = time(NULL);
        struct tm tm;

        gmtime_r(&now, &tm);
        strftime(buf, 32, "%Y-%m-%dT%H:%M:%SZ", &tm);
        return buf;
}
