/*
 * The arena (arena.c): aligned blocks that never overlap, the latest block given
 * back and reused, large blocks unmapped when freed, everything dropped at once,
 * and jansson parsing and writing a table through it.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <jansson.h>

#include "arena.h"
#include "table.h"
#include "unit.h"

/* Sizes a jansson tree asks for (a key, a string, a pair, buckets) and the edges of the large-block rule. */
static const size_t sizes[] = { 0, 1, 7, 8, 9, 15, 16, 17, 62, 72, 128, 4095, 65535, 65536, 65537, 300000 };

static void test_blocks(void **state)
{
        void *p[N_ELEM(sizes)];
        int failures = 0;

        (void) state;
        for (size_t i = 0; i < N_ELEM(sizes); i++) {
                p[i] = slots_arena_malloc(sizes[i]);
                if (!p[i]) {
                        ROW_FAIL("size %zu: NULL", sizes[i]);
                        continue;
                }
                if ((uintptr_t) p[i] % _Alignof(double) || (uintptr_t) p[i] % _Alignof(void *))
                        ROW_FAIL("size %zu: %p is not aligned", sizes[i], p[i]);
                memset(p[i], (int) (i + 1), sizes[i]);
        }
        /* Each block still holds what was written to it: none overlaps another. */
        for (size_t i = 0; i < N_ELEM(sizes); i++)
                for (size_t k = 0; p[i] && k < sizes[i]; k++)
                        if (((unsigned char *) p[i])[k] != (unsigned char) (i + 1)) {
                                ROW_FAIL("size %zu: byte %zu overwritten", sizes[i], k);
                                break;
                        }
        if (failures)
                fail_msg("%d of %zu sizes failed", failures, N_ELEM(sizes));
        slots_arena_drop();
        assert_int_equal(slots_arena_mapped(), 0);
}

static void test_reuse(void **state)
{
        void *a, *b, *c;

        (void) state;
        /* The latest block, freed, is the next one handed out (jansson's dump: one pair per object). */
        a = slots_arena_malloc(72);
        slots_arena_free(a);
        b = slots_arena_malloc(72);
        assert_ptr_equal(a, b);
        /* A block that is not the latest stays where it is: the next block comes after both. */
        c = slots_arena_malloc(16);
        slots_arena_free(b);
        assert_ptr_not_equal(slots_arena_malloc(72), b);
        /* NULL is a no-op, as for free(). */
        slots_arena_free(NULL);
        assert_non_null(c);
        slots_arena_drop();
}

static void test_large(void **state)
{
        size_t before;
        void *big, *small;

        (void) state;
        small = slots_arena_malloc(32);
        assert_non_null(small);
        before = slots_arena_mapped();
        big = slots_arena_malloc(1 << 20);
        assert_non_null(big);
        assert_true(slots_arena_mapped() >= before + (1 << 20));
        memset(big, 0xa5, 1 << 20);
        /* A large block (a big object's old buckets) is given back at its free, even when not the latest. */
        assert_non_null(slots_arena_malloc(32));
        slots_arena_free(big);
        assert_int_equal(slots_arena_mapped(), before);
        assert_null(slots_arena_malloc(SIZE_MAX));
        assert_null(slots_arena_malloc(SIZE_MAX - 8));
        slots_arena_drop();
        assert_int_equal(slots_arena_mapped(), 0);
}

/* Many small blocks: the arena grows chunk by chunk and every block stays intact. */
static void test_many(void **state)
{
        enum { N = 100000 };
        uint32_t **p = calloc(N, sizeof(*p));

        (void) state;
        assert_non_null(p);
        for (uint32_t i = 0; i < N; i++) {
                p[i] = slots_arena_malloc(sizeof(**p) * (1 + i % 9));
                assert_non_null(p[i]);
                p[i][0] = i;
        }
        for (uint32_t i = 0; i < N; i++)
                if (p[i][0] != i)
                        fail_msg("block %u holds %u", i, p[i][0]);
        assert_true(slots_arena_mapped() > (size_t) N * 8);
        slots_arena_drop();
        free(p);
}

/* jansson with the arena as its allocator: a table parses, changes and writes the same bytes. */
#define SLOT01 "    \"slot01\": {\n      \"since\": \"2026-10-01T09:12:00Z\",\n      \"user\": \"alice\"\n    },\n"
#define SLOT02 "    \"slot02\": {\n      \"since\": \"s\",\n      \"user\": \"bob\"\n    },\n"
#define SLOT03 "    \"slot03\": {\n      \"cleanup\": \"pending\",\n      \"released\": \"r\"\n    }\n"
#define TABLE(slots) "{\n  \"slots\": {\n" slots "  },\n  \"version\": 1\n}\n"

static void test_jansson(void **state)
{
        static const char text[] = TABLE(SLOT01 SLOT03), after[] = TABLE(SLOT01 SLOT02 SLOT03);
        struct slots_table *t = NULL;
        struct slots_error e;
        size_t len;
        char *got;

        (void) state;
        assert_false(slots_arena_active());
        slots_arena_use();
        assert_true(slots_arena_active());
        for (int round = 0; round < 3; round++) {
                slots_error_clear(&e);
                assert_int_equal(slots_table_parse(text, strlen(text), "slots.json", 8, &t, &e), 0);
                assert_true(slots_arena_mapped() > 0);
                assert_int_equal(slots_table_find_user(t, "alice"), 1);
                assert_int_equal(slots_table_assign(t, 2, "bob", "s"), 0);
                got = slots_table_dump(t, &len);
                assert_non_null(got);
                assert_string_equal(got, after);
                free(got);
                /* Round 0 frees the tree value by value; the others leave it to the drop. */
                if (round == 0)
                        slots_table_free(t);
                else
                        slots_table_forget(t);
                slots_arena_drop();
                assert_int_equal(slots_arena_mapped(), 0);
        }
}

int main(void)
{
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_blocks),
                cmocka_unit_test(test_reuse),
                cmocka_unit_test(test_large),
                cmocka_unit_test(test_many),
                cmocka_unit_test(test_jansson),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
