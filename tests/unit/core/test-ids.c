/* Application user ids and slot names (slots-admin(8)): each rule on both sides of its limit. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "ids.h"
#include "unit.h"

/* 64 and 65 characters, from the allowed alphabet. */
#define C16 "0123456789abcdef"
#define C64 C16 C16 C16 C16

static const struct {
        const char *user;
        bool valid;
} users[] = {
        /* length: 1 and 64 accepted, 0 and 65 refused */
        { "a", true },
        { "7", true },
        { C64, true },
        { C64 "x", false },
        { "", false },
        /* the example of the man pages */
        { "aa73da63e26b40a1bb701c2b4c024870", true },
        /* every allowed punctuation, inside and (except . and -) first */
        { "a.b", true },
        { "a_b", true },
        { "a-b", true },
        { "_a", true },
        { "a.", true },
        { "a-", true },
        { "a..b", true },
        { "A.Z_a-z.0_9", true },
        /* leading . and - */
        { ".a", false },
        { "-a", false },
        { ".", false },
        { "..", false },
        { "-", false },
        /* path separators and other punctuation */
        { "/", false },
        { "a/b", false },
        { "../etc", false },
        { "a\\b", false },
        { "a b", false },
        { " a", false },
        { "a ", false },
        { "a\n", false },
        { "a\nb", false },
        { "\n", false },
        { "a\tb", false },
        { "a@b", false },
        { "a+b", false },
        { "a:b", false },
        { "a~", false },
        { "a*", false },
        { "{user}", false },
        { "a%s", false },
        { "caf\xc3\xa9", false },
        { "a\x7f", false },
        { "a\x01", false },
};

static void test_user_ids(void **state)
{
        (void) state;
        for (size_t i = 0; i < N_ELEM(users); i++)
                if (slots_user_valid(users[i].user) != users[i].valid)
                        fail_msg("user id #%zu \"%s\" (%zu chars): expected %s", i, users[i].user,
                                 strlen(users[i].user), users[i].valid ? "valid" : "refused");
}

static void test_user_null(void **state)
{
        (void) state;
        assert_false(slots_user_valid(NULL));
}

/*
 * A NUL inside a buffer ends the id: the validator sees only what comes before
 * it (the JSON parsers refuse \u0000 before an id ever reaches it).  Buffers are
 * exact-size so valgrind/ASan catch a read past the terminator.
 */
static void test_user_nul_inside(void **state)
{
        static const char nul_first[] = { '\0', 'a', 'b', '\0' };
        static const char nul_mid[] = { 'a', 'b', '\0', '/', '.', '.', '\0' };
        static const char nul_mid_bad[] = { '.', 'a', '\0', 'b', '\0' };
        char exact64[SLOTS_USER_MAX + 1], exact65[SLOTS_USER_MAX + 2];

        (void) state;
        assert_false(slots_user_valid(nul_first));
        assert_true(slots_user_valid(nul_mid));
        assert_false(slots_user_valid(nul_mid_bad));

        memset(exact64, 'u', SLOTS_USER_MAX);
        exact64[SLOTS_USER_MAX] = '\0';
        assert_true(slots_user_valid(exact64));
        memset(exact65, 'u', SLOTS_USER_MAX + 1);
        exact65[SLOTS_USER_MAX + 1] = '\0';
        assert_false(slots_user_valid(exact65));
        /* a NUL at position 64 makes the 65-byte buffer a 64-character id */
        exact65[SLOTS_USER_MAX] = '\0';
        assert_true(slots_user_valid(exact65));
}

static const struct {
        const char *name;
        unsigned n;     /* 0: not a slot name */
} names[] = {
        { "slot01", 1 },
        { "slot02", 2 },
        { "slot09", 9 },
        { "slot10", 10 },
        { "slot99", 99 },
        { "slot100", 100 },
        { "slot999", 999 },
        { "slot1000", 1000 },
        { "slot9999", 9999 },
        /* number 0 and above 9999 */
        { "slot00", 0 },
        { "slot0", 0 },
        { "slot000", 0 },
        { "slot10000", 0 },
        { "slot99999", 0 },
        { "slot4294967297", 0 },        /* 2^32 + 1: must not wrap to slot01 */
        /* not the canonical spelling */
        { "slot1", 0 },
        { "slot9", 0 },
        { "slot001", 0 },
        { "slot0001", 0 },
        { "slot099", 0 },
        { "slot0100", 0 },
        /* not a slot name at all */
        { "slot-1", 0 },
        { "slot+1", 0 },
        { "slot 01", 0 },
        { "slot01 ", 0 },
        { " slot01", 0 },
        { "slot01\n", 0 },
        { "SLOT01", 0 },
        { "Slot01", 0 },
        { "slot01x", 0 },
        { "slot0x1", 0 },
        { "slotab", 0 },
        { "slot", 0 },
        { "slo01", 0 },
        { "xslot01", 0 },
        { "", 0 },
        { "01", 0 },
        { "slot/01", 0 },
};

static void test_slot_names(void **state)
{
        (void) state;
        for (size_t i = 0; i < N_ELEM(names); i++) {
                unsigned got = slots_slot_parse(names[i].name);
                if (got != names[i].n)
                        fail_msg("slot name #%zu \"%s\": expected %u, got %u", i, names[i].name, names[i].n,
                                 got);
        }
        assert_int_equal(slots_slot_parse(NULL), 0);
}

static const struct {
        unsigned n;
        const char *name;
} spelled[] = {
        { 1, "slot01" }, { 9, "slot09" }, { 10, "slot10" }, { 99, "slot99" },
        { 100, "slot100" }, { 1000, "slot1000" }, { 9999, "slot9999" },
        /* Outside any pool, still what snprintf's "slot%02u" writes. */
        { 0, "slot00" }, { 4294967295u, "slot4294967295" },
};

static void test_slot_name(void **state)
{
        char buf[SLOTS_NAME_MAX];

        (void) state;
        for (size_t i = 0; i < N_ELEM(spelled); i++)
                assert_string_equal(slots_slot_name(spelled[i].n, buf), spelled[i].name);
}

/* Every slot of the largest pool: name -> parse gives the number back, and nothing else parses. */
static void test_slot_round_trip(void **state)
{
        char buf[SLOTS_NAME_MAX];

        (void) state;
        for (unsigned n = 1; n <= SLOTS_POOL_MAX; n++) {
                unsigned got = slots_slot_parse(slots_slot_name(n, buf));
                if (got != n)
                        fail_msg("slots_slot_parse(\"%s\") = %u, expected %u", buf, got, n);
        }
        /* The buffer always has room: the name of any unsigned is still NUL-terminated. */
        slots_slot_name(UINT32_MAX, buf);
        assert_true(memchr(buf, '\0', sizeof(buf)) != NULL);
        assert_int_equal(slots_slot_parse(buf), 0);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_user_ids),
                cmocka_unit_test(test_user_null),
                cmocka_unit_test(test_user_nul_inside),
                cmocka_unit_test(test_slot_names),
                cmocka_unit_test(test_slot_name),
                cmocka_unit_test(test_slot_round_trip),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
