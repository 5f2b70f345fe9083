/*
 * libFuzzer target: the slot table parser (slots_table_parse) on arbitrary bytes, then, for a
 * table it accepts, the queries and edits slots-admin makes and a dump/parse round trip.
 */
#include <errno.h>
#include <stdint.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz-common.h"
#include "ids.h"
#include "table.h"

#define POOL 120

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Invariants of a table that parsed: each user in one slot, the free-slot answers free. */
static void check_table(const struct slots_table *t)
{
        unsigned assigned = 0, pending = 0, a, p, lowest, test;

        for (unsigned n = 1; n <= POOL; n++) {
                const char *user, *since, *released;

                switch (slots_table_get(t, n, &user, &since, &released)) {
                case SLOTS_SLOT_ASSIGNED:
                        assigned++;
                        FUZZ_ASSERT(user && slots_user_valid(user));
                        FUZZ_ASSERT(slots_table_find_user(t, user) == n);
                        break;
                case SLOTS_SLOT_PENDING:
                        pending++;
                        FUZZ_ASSERT(user == NULL);
                        break;
                case SLOTS_SLOT_FREE:
                        break;
                }
        }
        slots_table_count(t, &a, &p);
        FUZZ_ASSERT(a == assigned && p == pending);
        lowest = slots_table_lowest_free(t, POOL);
        test = slots_table_test_slot(t, POOL);
        if (assigned + pending == POOL) {
                FUZZ_ASSERT(lowest == 0 && test == 0);
                return;
        }
        FUZZ_ASSERT(lowest >= 1 && lowest <= POOL && test >= lowest && test <= POOL);
        FUZZ_ASSERT(slots_table_get(t, lowest, NULL, NULL, NULL) == SLOTS_SLOT_FREE);
        FUZZ_ASSERT(slots_table_get(t, test, NULL, NULL, NULL) == SLOTS_SLOT_FREE);
        for (unsigned n = 1; n < lowest; n++)
                FUZZ_ASSERT(slots_table_get(t, n, NULL, NULL, NULL) != SLOTS_SLOT_FREE);
        for (unsigned n = test + 1; n <= POOL; n++)
                FUZZ_ASSERT(slots_table_get(t, n, NULL, NULL, NULL) != SLOTS_SLOT_FREE);
}

/* dump, parse again, dump again: the same bytes, and the second parse accepts the first dump. */
static void round_trip(const struct slots_table *t)
{
        struct slots_table *t2 = NULL;
        struct slots_error e;
        size_t len, len2;
        char *s = slots_table_dump(t, &len), *s2;

        FUZZ_ASSERT(s && len > 0 && s[len - 1] == '\n' && strlen(s) == len);
        /* In key order at every depth, as jansson sorts it (a table read in order is not sorted again). */
        {
                json_t *doc = json_loadb(s, len, 0, NULL);
                char *sorted = doc ? json_dumps(doc, JSON_SORT_KEYS | JSON_INDENT(2)) : NULL;

                FUZZ_ASSERT(sorted && strlen(sorted) + 1 == len && memcmp(sorted, s, len - 1) == 0);
                free(sorted);
                json_decref(doc);
        }
        FUZZ_ASSERT(slots_table_parse(s, len, "dump", POOL, &t2, &e) == 0);
        s2 = slots_table_dump(t2, &len2);
        FUZZ_ASSERT(s2 && len2 == len && memcmp(s, s2, len) == 0);
        check_table(t2);
        free(s2);
        free(s);
        slots_table_free(t2);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        struct slots_table *t = NULL;
        struct slots_error e;
        char *text, since[32];
        unsigned n;
        int r;

        text = malloc(size ? size : 1);
        if (!text)
                return 0;
        memcpy(text, data, size);
        memset(&e, 0, sizeof(e));
        r = slots_table_parse(text, size, "fuzz.json", POOL, &t, &e);
        if (r != 0) {
                FUZZ_ASSERT(r == -EBADMSG || r == -ENOMEM);
                FUZZ_ASSERT(strcmp(e.object, "fuzz.json") == 0 && e.reason[0] != '\0');
                fuzz_check_position(text, size, e.line, e.column);
                free(text);
                return 0;
        }
        check_table(t);
        round_trip(t);

        /* What assign and release do, on whatever table was accepted. */
        slots_now_rfc3339(since);
        n = slots_table_find_user(t, "fuzz-user");
        if (n == 0 && (n = slots_table_lowest_free(t, POOL)) != 0) {
                FUZZ_ASSERT(slots_table_assign(t, n, "fuzz-user", since) == 0);
                FUZZ_ASSERT(slots_table_find_user(t, "fuzz-user") == n);
        }
        check_table(t);
        round_trip(t);
        if (n) {
                FUZZ_ASSERT(slots_table_mark_pending(t, n, since) == 0);
                FUZZ_ASSERT(slots_table_get(t, n, NULL, NULL, NULL) == SLOTS_SLOT_PENDING);
                FUZZ_ASSERT(slots_table_find_user(t, "fuzz-user") == 0);
                round_trip(t);
                FUZZ_ASSERT(slots_table_remove(t, n) == 0);
                FUZZ_ASSERT(slots_table_get(t, n, NULL, NULL, NULL) == SLOTS_SLOT_FREE);
                round_trip(t);
        }
        slots_table_free(t);
        free(text);
        return 0;
}
