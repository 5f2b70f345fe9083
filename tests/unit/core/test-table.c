/*
 * The slot table format (slots.json(5)): canonical round trip, refusals with
 * file, line and column, pending entries, free/test slot choice, changes.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>
#include <jansson.h>

#include "ids.h"
#include "table.h"
#include "unit.h"

#define FILE_NAME "slots.json"
#define U1 "aa73da63e26b40a1bb701c2b4c024870"
#define C16 "0123456789abcdef"
#define C64 C16 C16 C16 C16

static struct slots_table *parse_ok(const char *text, unsigned pool)
{
        struct slots_table *t = NULL;
        struct slots_error e;

        slots_error_clear(&e);
        if (slots_table_parse(text, strlen(text), FILE_NAME, pool, &t, &e) != 0)
                fail_msg("refused: %s:%u:%u: %s\n%s", e.object, e.line, e.column, e.reason, text);
        return t;
}

static void assert_dump(const struct slots_table *t, const char *expected)
{
        size_t len = 0;
        char *got = slots_table_dump(t, &len);

        assert_non_null(got);
        assert_int_equal(len, strlen(got));
        if (strcmp(got, expected) != 0)
                fail_msg("dump differs.\n--- got:\n%s--- expected:\n%s", got, expected);
        free(got);
}

/* ---- canonical text: parse -> dump is byte-identical ---- */

static const struct {
        const char *what;
        unsigned pool;
        const char *text;
} canonical[] = {
        { "empty", 8, "{\n  \"slots\": {},\n  \"version\": 1\n}\n" },
        { "the slots.json(5) example", 8,
          "{\n"
          "  \"slots\": {\n"
          "    \"slot02\": {\n"
          "      \"since\": \"2026-10-01T09:12:00Z\",\n"
          "      \"user\": \"" U1 "\"\n"
          "    }\n"
          "  },\n"
          "  \"version\": 1\n"
          "}\n" },
        { "assigned, pending, and unknown keys in entries", 8,
          "{\n"
          "  \"slots\": {\n"
          "    \"slot01\": {\n"
          "      \"flags\": [\n"
          "        1,\n"
          "        \"two\",\n"
          "        null\n"
          "      ],\n"
          "      \"meta\": {\n"
          "        \"by\": \"admin\",\n"
          "        \"ok\": true\n"
          "      },\n"
          "      \"note\": \"caf\xc3\xa9 a/b \\\"q\\\" \\\\ \\t\",\n"
          "      \"since\": \"2026-10-01T09:12:00Z\",\n"
          "      \"user\": \"alice\",\n"
          "      \"x-weight\": 2.5\n"
          "    },\n"
          "    \"slot03\": {\n"
          "      \"cleanup\": \"pending\",\n"
          "      \"released\": \"2026-10-02T10:00:00Z\",\n"
          "      \"why\": \"processes\"\n"
          "    }\n"
          "  },\n"
          "  \"version\": 1\n"
          "}\n" },
        /* keys sort as strings: slot10 < slot100 < slot11 */
        { "sorted as strings", 200,
          "{\n"
          "  \"slots\": {\n"
          "    \"slot09\": {\n"
          "      \"user\": \"u9\"\n"
          "    },\n"
          "    \"slot10\": {\n"
          "      \"user\": \"u10\"\n"
          "    },\n"
          "    \"slot100\": {\n"
          "      \"user\": \"u100\"\n"
          "    },\n"
          "    \"slot11\": {\n"
          "      \"user\": \"u11\"\n"
          "    }\n"
          "  },\n"
          "  \"version\": 1\n"
          "}\n" },
};

static void test_round_trip(void **state)
{
        (void) state;
        for (size_t i = 0; i < N_ELEM(canonical); i++) {
                struct slots_table *t = parse_ok(canonical[i].text, canonical[i].pool);
                assert_dump(t, canonical[i].text);
                slots_table_free(t);
        }
}

/* Any valid spelling comes out canonical. */
static void test_canonicalize(void **state)
{
        static const char compact[] =
                "{\"version\":1,\"slots\":{\"slot02\":{\"user\":\"" U1 "\",\"since\":\"2026-10-01T09:12:00Z\"}}}";
        struct slots_table *t;

        (void) state;
        t = parse_ok(compact, 8);
        assert_dump(t, canonical[1].text);
        slots_table_free(t);
        t = parse_ok("\n\n  {\"slots\":{},\t\"version\":1}  \n", 8);
        assert_dump(t, canonical[0].text);
        slots_table_free(t);
}

static void test_new_table(void **state)
{
        struct slots_table *t = slots_table_new();

        (void) state;
        assert_non_null(t);
        assert_dump(t, canonical[0].text);
        slots_table_free(t);
}

/* ---- refusals: -EBADMSG, the file, the exact position, and what is wrong ---- */

/* Lines 1-3 are "{", "version", "slots": {; entries from line 4 at column 5. */
#define TBL(body) "{\n  \"version\": 1,\n  \"slots\": {\n" body "  }\n}\n"

static const struct bad {
        const char *what;
        const char *text;
        unsigned line, column;
        const char *needle;
        enum slots_table_problem problem;       /* what check reports, never read from the words */
} bad[] = {
        { "empty file", "", 1, 1, "expected", SLOTS_TABLE_SYNTAX },
        { "truncated", "{\n  \"version\": 1,\n  \"slots\": {\n    \"slot01\": {\"user\": \"ab\"", 4, 27,
          "expected", SLOTS_TABLE_SYNTAX },
        { "truncated in a string", "{\n  \"version\": 1,\n  \"slots\": {\n    \"slot01\": {\"user\": \"a", 4, 25,
          "premature end", SLOTS_TABLE_SYNTAX },
        { "not an object", "[]\n", 1, 1, "object", SLOTS_TABLE_SCHEMA },
        { "duplicate slot", TBL("    \"slot01\": {\"user\": \"a\"},\n    \"slot01\": {\"user\": \"b\"}\n"), 5, 12,
          "\"slot01\"", SLOTS_TABLE_SYNTAX },
        { "duplicate key in entry", TBL("    \"slot01\": {\"user\": \"a\", \"user\": \"b\"}\n"), 4, 34,
          "\"user\"", SLOTS_TABLE_SYNTAX },
        { "duplicate version", "{\n  \"version\": 1,\n  \"version\": 1,\n  \"slots\": {}\n}\n", 3, 11,
          "\"version\"", SLOTS_TABLE_SYNTAX },
        { "version 2", "{\n  \"version\": 2,\n  \"slots\": {}\n}\n", 2, 14, "version", SLOTS_TABLE_VERSION },
        { "version 0", "{\n  \"version\": 0,\n  \"slots\": {}\n}\n", 2, 14, "version", SLOTS_TABLE_VERSION },
        { "version \"1\"", "{\n  \"version\": \"1\",\n  \"slots\": {}\n}\n", 2, 14, "version", SLOTS_TABLE_VERSION },
        { "version 1.0", "{\n  \"version\": 1.0,\n  \"slots\": {}\n}\n", 2, 14, "version", SLOTS_TABLE_VERSION },
        { "no version", "{\n  \"slots\": {}\n}\n", 1, 1, "version", SLOTS_TABLE_VERSION },
        { "no slots", "{\n  \"version\": 1\n}\n", 1, 1, "\"slots\"", SLOTS_TABLE_SCHEMA },
        { "slots array", "{\n  \"version\": 1,\n  \"slots\": []\n}\n", 3, 12, "\"slots\"", SLOTS_TABLE_SCHEMA },
        /* slot names and the pool (8) */
        { "slot09 outside 8", TBL("    \"slot09\": {\"user\": \"a\"}\n"), 4, 5, "\"slot09\"", SLOTS_TABLE_OUT_OF_POOL },
        { "slot9999 outside 8", TBL("    \"slot9999\": {\"user\": \"a\"}\n"), 4, 5, "\"slot9999\"", SLOTS_TABLE_OUT_OF_POOL },
        { "slot00", TBL("    \"slot00\": {\"user\": \"a\"}\n"), 4, 5, "\"slot00\"", SLOTS_TABLE_OUT_OF_POOL },
        { "slot1", TBL("    \"slot1\": {\"user\": \"a\"}\n"), 4, 5, "\"slot1\"", SLOTS_TABLE_OUT_OF_POOL },
        { "slot001", TBL("    \"slot001\": {\"user\": \"a\"}\n"), 4, 5, "\"slot001\"", SLOTS_TABLE_OUT_OF_POOL },
        { "SLOT01", TBL("    \"SLOT01\": {\"user\": \"a\"}\n"), 4, 5, "\"SLOT01\"", SLOTS_TABLE_OUT_OF_POOL },
        { "outside, second entry", TBL("    \"slot01\": {\"user\": \"a\"},\n    \"slot10\": {\"user\": \"b\"}\n"), 5,
          5, "\"slot10\"", SLOTS_TABLE_OUT_OF_POOL },
        /* a user in two slots: the second one in the text, naming the first */
        { "user in two slots", TBL("    \"slot01\": {\"user\": \"a\"},\n    \"slot03\": {\"user\": \"a\"}\n"), 5,
          24, "slot03: the same user already holds slot01", SLOTS_TABLE_DUPLICATE },
        { "two users in two slots each: the smaller user's second slot",
          TBL("    \"slot01\": {\"user\": \"b\"},\n    \"slot02\": {\"user\": \"a\"},\n"
              "    \"slot03\": {\"user\": \"b\"},\n    \"slot04\": {\"user\": \"a\"}\n"), 7, 24,
          "slot04: the same user already holds slot02", SLOTS_TABLE_DUPLICATE },
        { "user in two slots, text order",
          TBL("    \"slot05\": {\"user\": \"" U1 "\"},\n    \"slot02\": {\"user\": \"b\"},\n"
              "    \"slot01\": {\"user\": \"" U1 "\"}\n"), 6, 24, "slot01: the same user already holds slot05", SLOTS_TABLE_DUPLICATE },
        /* user ids */
        { "user leading .", TBL("    \"slot01\": {\"user\": \".hidden\"}\n"), 4, 24, "slot01: invalid user id", SLOTS_TABLE_USER },
        { "user leading -", TBL("    \"slot01\": {\"user\": \"-x\"}\n"), 4, 24, "slot01: invalid user id", SLOTS_TABLE_USER },
        { "user with /", TBL("    \"slot01\": {\"user\": \"a/b\"}\n"), 4, 24, "slot01: invalid user id", SLOTS_TABLE_USER },
        { "user ..", TBL("    \"slot01\": {\"user\": \"..\"}\n"), 4, 24, "slot01: invalid user id", SLOTS_TABLE_USER },
        { "user empty", TBL("    \"slot01\": {\"user\": \"\"}\n"), 4, 24, "slot01: invalid user id", SLOTS_TABLE_USER },
        { "user 65 chars", TBL("    \"slot01\": {\"user\": \"" C64 "x\"}\n"), 4, 24, "slot01: invalid user id", SLOTS_TABLE_USER },
        { "user newline", TBL("    \"slot01\": {\"user\": \"a\\nb\"}\n"), 4, 24, "slot01: invalid user id", SLOTS_TABLE_USER },
        { "user number", TBL("    \"slot01\": {\"user\": 5}\n"), 4, 24, "slot01: invalid user id", SLOTS_TABLE_USER },
        { "user null", TBL("    \"slot01\": {\"user\": null}\n"), 4, 24, "slot01: invalid user id", SLOTS_TABLE_USER },
        { "user with NUL", TBL("    \"slot01\": {\"user\": \"ab\\u0000cd\"}\n"), 4, 35, "\\u0000", SLOTS_TABLE_SYNTAX },
        { "second user bad", TBL("    \"slot01\": {\"user\": \"ok\"},\n    \"slot02\": {\"user\": \"no way\"}\n"), 5,
          24, "slot02: invalid user id", SLOTS_TABLE_USER },
        /* entry shape */
        { "neither user nor cleanup", TBL("    \"slot01\": {\"since\": \"2026-10-01T09:12:00Z\"}\n"), 4, 15,
          "slot01: the entry has neither", SLOTS_TABLE_SCHEMA },
        { "empty entry", TBL("    \"slot01\": {}\n"), 4, 15, "slot01: the entry has neither", SLOTS_TABLE_SCHEMA },
        { "entry not an object", TBL("    \"slot01\": \"alice\"\n"), 4, 15, "slot01: the entry must be an object", SLOTS_TABLE_SCHEMA },
        { "cleanup done", TBL("    \"slot01\": {\"cleanup\": \"done\"}\n"), 4, 27, "slot01: \"cleanup\"", SLOTS_TABLE_SCHEMA },
        { "cleanup number", TBL("    \"slot01\": {\"cleanup\": 1}\n"), 4, 27, "\"cleanup\"", SLOTS_TABLE_SCHEMA },
        { "user and cleanup", TBL("    \"slot01\": {\"user\": \"a\", \"cleanup\": \"pending\"}\n"), 4, 24,
          "slot01: an entry has either", SLOTS_TABLE_SCHEMA },
        { "since number", TBL("    \"slot01\": {\"user\": \"a\", \"since\": 5}\n"), 4, 38, "\"since\"", SLOTS_TABLE_SCHEMA },
        { "since before user: a number since wins over a bad user",
          TBL("    \"slot01\": {\"user\": \".x\", \"since\": 5}\n"), 4, 39, "\"since\"", SLOTS_TABLE_SCHEMA },
        { "released before cleanup, both numbers", TBL("    \"slot01\": {\"released\": 1, \"cleanup\": 2}\n"), 4, 28,
          "\"released\"", SLOTS_TABLE_SCHEMA },
        { "released bool", TBL("    \"slot01\": {\"cleanup\": \"pending\", \"released\": true}\n"), 4, 50,
          "\"released\"", SLOTS_TABLE_SCHEMA },
};

static void test_bad(void **state)
{
        int failures = 0;

        (void) state;
        for (size_t i = 0; i < N_ELEM(bad); i++) {
                const struct bad *b = &bad[i];
                enum slots_table_problem problem;
                struct slots_table *t = NULL;
                struct slots_error e;
                int r;

                slots_error_clear(&e);
                r = slots_table_parse_problem(b->text, strlen(b->text), FILE_NAME, 8, &t, &problem, &e);
                if (r != -EBADMSG)
                        ROW_FAIL("%s: expected -EBADMSG, got %d", b->what, r);
                else if (e.kind != SLOTS_ERR_INVALID)
                        ROW_FAIL("%s: the error's kind is %d, not invalid", b->what, (int) e.kind);
                else if (problem != b->problem)
                        ROW_FAIL("%s: problem %d, expected %d", b->what, (int) problem, (int) b->problem);
                else if (t)
                        ROW_FAIL("%s: a table was returned on failure", b->what);
                else if (strcmp(e.object, FILE_NAME) != 0)
                        ROW_FAIL("%s: the error names \"%s\", not the file", b->what, e.object);
                else if (e.line != b->line || e.column != b->column)
                        ROW_FAIL("%s: reported at %u:%u, expected %u:%u (%s)", b->what, e.line, e.column,
                                 b->line, b->column, e.reason);
                else if (!strstr(e.reason, b->needle))
                        ROW_FAIL("%s: reason \"%s\" lacks \"%s\"", b->what, e.reason, b->needle);
                if (r == 0)
                        slots_table_free(t);
        }
        if (failures)
                fail_msg("%d of %zu rows failed", failures, N_ELEM(bad));
}

/* The other side of each refusal above: accepted. */
static const struct {
        const char *what;
        unsigned pool;
        const char *text;
} good[] = {
        { "slot08 in the pool of 8", 8, TBL("    \"slot08\": {\"user\": \"a\"}\n") },
        { "slot9999 in the pool of 9999", 9999, TBL("    \"slot9999\": {\"user\": \"a\"}\n") },
        { "slot100 in the pool of 100", 100, TBL("    \"slot100\": {\"user\": \"a\"}\n") },
        { "user 64 chars", 8, TBL("    \"slot01\": {\"user\": \"" C64 "\"}\n") },
        { "user 1 char", 8, TBL("    \"slot01\": {\"user\": \"x\"}\n") },
        { "user punctuation", 8, TBL("    \"slot01\": {\"user\": \"_a.b-c\"}\n") },
        { "two users", 8, TBL("    \"slot01\": {\"user\": \"a\"},\n    \"slot02\": {\"user\": \"A\"}\n") },
        { "user only (no since)", 8, TBL("    \"slot01\": {\"user\": \"a\"}\n") },
        { "pending without released", 8, TBL("    \"slot01\": {\"cleanup\": \"pending\"}\n") },
        { "two pending", 8, TBL("    \"slot01\": {\"cleanup\": \"pending\"},\n    \"slot02\": {\"cleanup\": \"pending\"}\n") },
        { "unknown keys in an entry", 8, TBL("    \"slot01\": {\"user\": \"a\", \"x\": {\"y\": [1]}}\n") },
};

static void test_good(void **state)
{
        (void) state;
        for (size_t i = 0; i < N_ELEM(good); i++)
                slots_table_free(parse_ok(good[i].text, good[i].pool));
}

/* ---- queries ---- */

static const char mixed[] = TBL(
        "    \"slot01\": {\"user\": \"alice\", \"since\": \"2026-10-01T09:12:00Z\"},\n"
        "    \"slot02\": {\"cleanup\": \"pending\", \"released\": \"2026-10-02T10:00:00Z\"},\n"
        "    \"slot04\": {\"user\": \"bob\"}\n");

static void test_get(void **state)
{
        struct slots_table *t = parse_ok(mixed, 4);
        const char *user, *since, *released;
        unsigned assigned = 99, pending = 99;

        (void) state;
        assert_int_equal(slots_table_get(t, 1, &user, &since, &released), SLOTS_SLOT_ASSIGNED);
        assert_string_equal(user, "alice");
        assert_string_equal(since, "2026-10-01T09:12:00Z");
        assert_null(released);

        assert_int_equal(slots_table_get(t, 2, &user, &since, &released), SLOTS_SLOT_PENDING);
        assert_null(user);
        assert_null(since);
        assert_string_equal(released, "2026-10-02T10:00:00Z");

        assert_int_equal(slots_table_get(t, 3, &user, &since, &released), SLOTS_SLOT_FREE);
        assert_null(user);
        assert_null(since);
        assert_null(released);

        assert_int_equal(slots_table_get(t, 4, &user, &since, NULL), SLOTS_SLOT_ASSIGNED);
        assert_string_equal(user, "bob");
        assert_null(since);
        assert_int_equal(slots_table_get(t, 4, NULL, NULL, NULL), SLOTS_SLOT_ASSIGNED);

        assert_int_equal(slots_table_find_user(t, "alice"), 1);
        assert_int_equal(slots_table_find_user(t, "bob"), 4);
        assert_int_equal(slots_table_find_user(t, "Alice"), 0);
        assert_int_equal(slots_table_find_user(t, "alic"), 0);
        assert_int_equal(slots_table_find_user(t, ""), 0);

        slots_table_count(t, &assigned, &pending);
        assert_int_equal(assigned, 2);
        assert_int_equal(pending, 1);
        slots_table_count(t, NULL, NULL);
        slots_table_free(t);
}

/*
 * Slot choice for a table given as one character per slot of the pool:
 * 'A' assigned, 'P' pending, '.' free.  The lowest free slot skips pending
 * ones; the test slot is the highest neither assigned nor pending.
 */
static const struct {
        const char *slots;
        unsigned lowest_free, test_slot;
} choice[] = {
        { "", 0, 0 },
        { ".", 1, 1 },
        { "A", 0, 0 },
        { "P", 0, 0 },
        { "....", 1, 4 },
        { "A...", 2, 4 },
        { "AP..", 3, 4 },
        { "PA..", 3, 4 },
        { "PPPP", 0, 0 },
        { "AAAA", 0, 0 },
        { "APAP", 0, 0 },
        { "...A", 1, 3 },
        { "...P", 1, 3 },
        { "..PA", 1, 2 },
        { ".AAP", 1, 1 },
        { "AAA.", 4, 4 },
        { "A.A.", 2, 4 },
        { "AP.P", 3, 3 },
};

static void test_choice(void **state)
{
        int failures = 0;

        (void) state;
        for (size_t i = 0; i < N_ELEM(choice); i++) {
                struct slots_table *t = slots_table_new();
                unsigned pool = (unsigned) strlen(choice[i].slots), lf, ts;
                char user[32];

                assert_non_null(t);
                for (unsigned n = 1; n <= pool; n++) {
                        snprintf(user, sizeof(user), "user%u", n);
                        if (choice[i].slots[n - 1] == 'A')
                                assert_int_equal(slots_table_assign(t, n, user, "2026-01-01T00:00:00Z"), 0);
                        else if (choice[i].slots[n - 1] == 'P')
                                assert_int_equal(slots_table_mark_pending(t, n, "2026-01-01T00:00:00Z"), 0);
                }
                lf = slots_table_lowest_free(t, pool);
                ts = slots_table_test_slot(t, pool);
                if (lf != choice[i].lowest_free || ts != choice[i].test_slot)
                        ROW_FAIL("\"%s\": lowest free %u, test slot %u; expected %u, %u", choice[i].slots, lf, ts,
                                 choice[i].lowest_free, choice[i].test_slot);
                slots_table_free(t);
        }
        if (failures)
                fail_msg("%d rows failed", failures);
}

/* A smaller pool than the table's entries: only slots of the pool count. */
static void test_choice_large(void **state)
{
        struct slots_table *t = slots_table_new();

        (void) state;
        for (unsigned n = 1; n <= 9998; n++)
                assert_int_equal(slots_table_assign(t, n, "u", "s"), 0);
        assert_int_equal(slots_table_lowest_free(t, 9999), 9999);
        assert_int_equal(slots_table_test_slot(t, 9999), 9999);
        assert_int_equal(slots_table_mark_pending(t, 9999, "r"), 0);
        assert_int_equal(slots_table_lowest_free(t, 9999), 0);
        assert_int_equal(slots_table_test_slot(t, 9999), 0);
        assert_int_equal(slots_table_remove(t, 100), 0);
        assert_int_equal(slots_table_lowest_free(t, 9999), 100);
        assert_int_equal(slots_table_test_slot(t, 9999), 100);
        slots_table_free(t);
}

/* ---- changes ---- */

static void test_assign(void **state)
{
        struct slots_table *t = slots_table_new();
        const char *user, *since;

        (void) state;
        assert_int_equal(slots_table_assign(t, 2, U1, "2026-10-01T09:12:00Z"), 0);
        assert_dump(t, canonical[1].text);
        assert_int_equal(slots_table_get(t, 2, &user, &since, NULL), SLOTS_SLOT_ASSIGNED);
        assert_string_equal(user, U1);
        assert_int_equal(slots_table_find_user(t, U1), 2);

        /* again, later: the entry is updated, not duplicated */
        assert_int_equal(slots_table_assign(t, 2, U1, "2026-10-03T00:00:00Z"), 0);
        assert_dump(t, "{\n  \"slots\": {\n    \"slot02\": {\n      \"since\": \"2026-10-03T00:00:00Z\",\n"
                       "      \"user\": \"" U1 "\"\n    }\n  },\n  \"version\": 1\n}\n");

        /* slot100 is spelled with three digits */
        assert_int_equal(slots_table_assign(t, 100, "z", "s"), 0);
        assert_int_equal(slots_table_get(t, 100, &user, NULL, NULL), SLOTS_SLOT_ASSIGNED);
        assert_string_equal(user, "z");
        slots_table_free(t);
}

/* assign over a pending entry drops cleanup/released and keeps unknown keys. */
static void test_assign_pending(void **state)
{
        struct slots_table *t = parse_ok(
                TBL("    \"slot03\": {\"cleanup\": \"pending\", \"released\": \"2026-10-02T10:00:00Z\", \"x\": 1}\n"), 8);

        (void) state;
        assert_int_equal(slots_table_assign(t, 3, "carol", "2026-10-04T00:00:00Z"), 0);
        assert_dump(t, "{\n  \"slots\": {\n    \"slot03\": {\n      \"since\": \"2026-10-04T00:00:00Z\",\n"
                       "      \"user\": \"carol\",\n      \"x\": 1\n    }\n  },\n  \"version\": 1\n}\n");
        slots_table_free(t);
}

/* mark_pending drops user/since, adds cleanup/released, keeps unknown keys; the result parses. */
static void test_mark_pending(void **state)
{
        struct slots_table *t = parse_ok(canonical[2].text, 8);
        static const char expected[] =
                "{\n"
                "  \"slots\": {\n"
                "    \"slot01\": {\n"
                "      \"cleanup\": \"pending\",\n"
                "      \"flags\": [\n"
                "        1,\n"
                "        \"two\",\n"
                "        null\n"
                "      ],\n"
                "      \"meta\": {\n"
                "        \"by\": \"admin\",\n"
                "        \"ok\": true\n"
                "      },\n"
                "      \"note\": \"caf\xc3\xa9 a/b \\\"q\\\" \\\\ \\t\",\n"
                "      \"released\": \"2026-10-05T00:00:00Z\",\n"
                "      \"x-weight\": 2.5\n"
                "    },\n"
                "    \"slot03\": {\n"
                "      \"cleanup\": \"pending\",\n"
                "      \"released\": \"2026-10-02T10:00:00Z\",\n"
                "      \"why\": \"processes\"\n"
                "    }\n"
                "  },\n"
                "  \"version\": 1\n"
                "}\n";
        unsigned assigned, pending;
        char *text;
        size_t len;

        (void) state;
        assert_int_equal(slots_table_mark_pending(t, 1, "2026-10-05T00:00:00Z"), 0);
        assert_dump(t, expected);
        assert_int_equal(slots_table_find_user(t, "alice"), 0);
        assert_int_equal(slots_table_get(t, 1, NULL, NULL, NULL), SLOTS_SLOT_PENDING);
        slots_table_count(t, &assigned, &pending);
        assert_int_equal(assigned, 0);
        assert_int_equal(pending, 2);

        /* what was written parses again */
        text = slots_table_dump(t, &len);
        slots_table_free(t);
        t = parse_ok(text, 8);
        free(text);
        assert_dump(t, expected);

        /* a free slot can be marked pending too */
        assert_int_equal(slots_table_mark_pending(t, 8, "r"), 0);
        assert_int_equal(slots_table_get(t, 8, NULL, NULL, NULL), SLOTS_SLOT_PENDING);
        slots_table_free(t);
}

/*
 * A table read in key order is written without sorting (issue 18): every change
 * must leave it in key order, or the dump would differ from a sorted one.  Each
 * row changes a table and compares the dump with jansson's own sorted dump of it.
 */
#define SORTED(body) "{\n  \"slots\": {\n" body "  },\n  \"version\": 1\n}\n"
static const struct {
        const char *what;
        const char *text;
        unsigned pool;
        char op;        /* a: assign, p: mark pending, r: remove */
        unsigned slot;
} order_rows[] = {
        { "a new slot1000 goes between slot100 and slot101 (strcmp order)",
          SORTED("    \"slot100\": {\"since\": \"s\", \"user\": \"a\"},\n"
                 "    \"slot101\": {\"since\": \"s\", \"user\": \"b\"}\n"), 9999, 'a', 1000 },
        { "a new slot02 between slot01 and slot03, marked pending",
          SORTED("    \"slot01\": {\"since\": \"s\", \"user\": \"a\"},\n"
                 "    \"slot03\": {\"since\": \"s\", \"user\": \"b\"}\n"), 8, 'p', 2 },
        { "a new last slot", SORTED("    \"slot01\": {\"since\": \"s\", \"user\": \"a\"}\n"), 8, 'a', 2 },
        { "assign over a pending entry with keys before and after since/user",
          SORTED("    \"slot01\": {\"a-note\": 1, \"cleanup\": \"pending\", \"released\": \"r\", "
                 "\"zeta\": {\"b\": 1, \"a\": 2}}\n"), 8, 'a', 1 },
        { "mark pending an entry with a key after released",
          SORTED("    \"slot01\": {\"since\": \"s\", \"user\": \"a\", \"zz\": [1]}\n"), 8, 'p', 1 },
        { "a new slot before every other", SORTED("    \"slot02\": {\"since\": \"s\", \"user\": \"a\"}\n"), 8, 'a', 1 },
        { "a new slot in the middle, an unknown key after it",
          SORTED("    \"slot01\": {\"since\": \"s\", \"user\": \"a\"},\n"
                 "    \"slot03\": {\"since\": \"s\", \"user\": \"b\", \"z\": {\"a\": [1, {\"b\": 2}]}}\n"), 8, 'a', 2 },
        { "a top-level key with its keys out of order",
          "{\"extra\": {\"b\": 1, \"a\": 2}, \"slots\": {\"slot01\": {\"since\": \"s\", \"user\": \"a\"}}, "
          "\"version\": 1}", 8, 'a', 3 },
        { "an entry's value with its keys out of order, a new slot in the middle",
          SORTED("    \"slot01\": {\"m\": {\"b\": 1, \"a\": 2}, \"user\": \"a\"},\n"
                 "    \"slot03\": {\"user\": \"b\"}\n"), 8, 'a', 2 },
        { "an unsorted table is sorted as a whole",
          "{\"version\": 1, \"slots\": {\"slot03\": {\"user\": \"b\"}, \"slot01\": {\"user\": \"a\"}}}", 8, 'a', 2 },
        { "remove from a sorted table", SORTED("    \"slot01\": {\"user\": \"a\"},\n    \"slot02\": {\"user\": \"b\"}\n"),
          8, 'r', 1 },
};

static void test_key_order(void **state)
{
        (void) state;
        for (size_t i = 0; i < N_ELEM(order_rows); i++) {
                struct slots_table *t = parse_ok(order_rows[i].text, order_rows[i].pool);
                json_t *doc;
                char *got, *want;
                size_t len;
                int r;

                if (order_rows[i].op == 'a')
                        r = slots_table_assign(t, order_rows[i].slot, "new-user", "2026-10-05T00:00:00Z");
                else if (order_rows[i].op == 'p')
                        r = slots_table_mark_pending(t, order_rows[i].slot, "2026-10-05T00:00:00Z");
                else
                        r = slots_table_remove(t, order_rows[i].slot);
                assert_int_equal(r, 0);
                got = slots_table_dump(t, &len);
                assert_non_null(got);
                doc = json_loads(got, 0, NULL);
                assert_non_null(doc);
                want = json_dumps(doc, JSON_SORT_KEYS | JSON_INDENT(2));
                assert_non_null(want);
                if (strncmp(got, want, strlen(want)) != 0 || strcmp(got + strlen(want), "\n") != 0)
                        fail_msg("%s: not in key order:\n%s", order_rows[i].what, got);
                free(want);
                free(got);
                json_decref(doc);
                slots_table_free(t);
        }
}

/* Who holds what, through the parse's index of users and, after a change, without it. */
static void test_find_user_many(void **state)
{
        enum { N = 300 };
        char *text = malloc(N * 64 + 64), user[16];
        struct slots_table *t;
        size_t len = 0;

        (void) state;
        assert_non_null(text);
        len += (size_t) sprintf(text + len, "{\"version\": 1, \"slots\": {");
        /* In the file from the last slot to the first, users in another order again. */
        for (unsigned n = N; n >= 1; n--)
                len += (size_t) sprintf(text + len, "%s\"slot%02u\": {\"user\": \"u%03u\"}", n == N ? "" : ", ",
                                        n, (n * 7) % N);
        sprintf(text + len, "}}");
        t = parse_ok(text, N);
        for (int pass = 0; pass < 2; pass++) {
                for (unsigned n = 1; n <= N; n++) {
                        snprintf(user, sizeof(user), "u%03u", (n * 7) % N);
                        if (slots_table_find_user(t, user) != (pass && n == 7 ? 0 : n))
                                fail_msg("pass %d: %s found in slot %u, not %u", pass, user,
                                         slots_table_find_user(t, user), n);
                }
                assert_int_equal(slots_table_find_user(t, "u300"), 0);
                assert_int_equal(slots_table_find_user(t, "u0"), 0);
                assert_int_equal(slots_table_find_user(t, "u0000"), 0);
                /* The second pass: the index is gone with the change; the answers stay right. */
                assert_int_equal(slots_table_remove(t, 7), 0);
        }
        slots_table_free(t);
        free(text);
}

static void test_remove(void **state)
{
        struct slots_table *t = parse_ok(mixed, 4);

        (void) state;
        assert_int_equal(slots_table_remove(t, 2), 0);
        assert_int_equal(slots_table_get(t, 2, NULL, NULL, NULL), SLOTS_SLOT_FREE);
        assert_int_equal(slots_table_remove(t, 1), 0);
        assert_int_equal(slots_table_find_user(t, "alice"), 0);
        /* removing a free slot is a no-op */
        assert_int_equal(slots_table_remove(t, 3), 0);
        assert_int_equal(slots_table_remove(t, 9999), 0);
        assert_dump(t, "{\n  \"slots\": {\n    \"slot04\": {\n      \"user\": \"bob\"\n    }\n  },\n"
                       "  \"version\": 1\n}\n");
        assert_int_equal(slots_table_remove(t, 4), 0);
        assert_dump(t, canonical[0].text);
        slots_table_free(t);
}

static void test_now(void **state)
{
        char buf[32];
        struct tm tm;
        time_t before = time(NULL), after, got;
        const char *end;

        (void) state;
        assert_ptr_equal(slots_now_rfc3339(buf), buf);
        after = time(NULL);
        assert_int_equal(strlen(buf), 20);
        memset(&tm, 0, sizeof(tm));
        end = strptime(buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
        assert_non_null(end);
        assert_int_equal(*end, '\0');
        got = timegm(&tm);
        assert_true(got >= before && got <= after);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_round_trip),
                cmocka_unit_test(test_canonicalize),
                cmocka_unit_test(test_new_table),
                cmocka_unit_test(test_bad),
                cmocka_unit_test(test_good),
                cmocka_unit_test(test_get),
                cmocka_unit_test(test_choice),
                cmocka_unit_test(test_choice_large),
                cmocka_unit_test(test_assign),
                cmocka_unit_test(test_assign_pending),
                cmocka_unit_test(test_mark_pending),
                cmocka_unit_test(test_key_order),
                cmocka_unit_test(test_find_user_many),
                cmocka_unit_test(test_remove),
                cmocka_unit_test(test_now),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
