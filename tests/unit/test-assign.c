/*
 * Assign's decision table (slots-admin(8) "assign"): for a table, a user and the
 * slot asked for, the verdict and the slot it is about; and the refusal each
 * verdict prints, with its fix.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "assign.h"
#include "unit.h"

#define TBL(entries) "{\"version\": 1, \"slots\": {" entries "}}"

/* Pool of 3: slot01 held by alice, slot02 pending, slot03 free -- unless the row brings its own. */
#define WORLD TBL("\"slot01\": {\"user\": \"alice\"}, \"slot02\": {\"cleanup\": \"pending\"}")
#define FULL_WORLD TBL("\"slot01\": {\"user\": \"alice\"}, \"slot02\": {\"cleanup\": \"pending\"}, " \
                       "\"slot03\": {\"user\": \"carol\"}")

static const struct {
        const char *what;
        const char *table;
        const char *user;
        unsigned want;                  /* 0: the lowest free slot */
        enum slots_assign_verdict verdict;
        unsigned slot;
} rows[] = {
        { "a new user gets the lowest free slot", WORLD, "bob", 0, SLOTS_ASSIGN_GIVE, 3 },
        { "a new user gets the free slot asked for", WORLD, "bob", 3, SLOTS_ASSIGN_GIVE, 3 },
        { "the empty table: slot01", TBL(""), "bob", 0, SLOTS_ASSIGN_GIVE, 1 },
        { "the same user again, no slot asked", WORLD, "alice", 0, SLOTS_ASSIGN_AGAIN, 1 },
        { "the same user again, her slot asked", WORLD, "alice", 1, SLOTS_ASSIGN_AGAIN, 1 },
        { "the user holds another slot", WORLD, "alice", 3, SLOTS_ASSIGN_HELD_ELSEWHERE, 1 },
        { "held elsewhere comes before out of pool", WORLD, "alice", 9, SLOTS_ASSIGN_HELD_ELSEWHERE, 1 },
        { "a slot outside the pool", WORLD, "bob", 4, SLOTS_ASSIGN_OUT_OF_POOL, 4 },
        { "slot9999 outside the pool", WORLD, "bob", 9999, SLOTS_ASSIGN_OUT_OF_POOL, 9999 },
        { "every slot held or pending", FULL_WORLD, "bob", 0, SLOTS_ASSIGN_FULL, 0 },
        { "a slot held by another user", WORLD, "bob", 1, SLOTS_ASSIGN_TAKEN, 1 },
        { "a pending slot", WORLD, "bob", 2, SLOTS_ASSIGN_PENDING, 2 },
        { "a pending slot is never the lowest free", TBL("\"slot01\": {\"cleanup\": \"pending\"}"), "bob", 0,
          SLOTS_ASSIGN_GIVE, 2 },
        { "full, yet the holder gets hers again", FULL_WORLD, "carol", 0, SLOTS_ASSIGN_AGAIN, 3 },
};

static void test_choose(void **state)
{
        int failures = 0;

        (void) state;
        for (size_t i = 0; i < N_ELEM(rows); i++) {
                struct slots_table *t = NULL;
                struct slots_error e;
                enum slots_assign_verdict v;
                unsigned n = 12345;

                slots_error_clear(&e);
                if (slots_table_parse(rows[i].table, strlen(rows[i].table), "slots.json", 3, &t, &e) != 0) {
                        ROW_FAIL("%s: the table does not parse: %s", rows[i].what, e.reason);
                        continue;
                }
                v = slots_assign_choose(t, 3, rows[i].user, rows[i].want, &n);
                if (v != rows[i].verdict || n != rows[i].slot)
                        ROW_FAIL("%s: verdict %d about slot %u, expected %d about slot %u", rows[i].what, (int) v, n,
                                 (int) rows[i].verdict, rows[i].slot);
                slots_table_free(t);
        }
        if (failures)
                fail_msg("%d of %zu rows failed", failures, N_ELEM(rows));
}

/* Each refusal: refused (exit 1), names the table, and says what to do. */
static const struct {
        enum slots_assign_verdict verdict;
        unsigned slot;
        const char *reason;
        const char *fix;
} refusals[] = {
        { SLOTS_ASSIGN_HELD_ELSEWHERE, 1, "the user already holds slot01",
          "release it first: slots-admin release --slot slot01" },
        { SLOTS_ASSIGN_OUT_OF_POOL, 4, "slot04 is outside the pool of 3 slots",
          "choose slot01 to slot03, or raise \"slots\" in /etc/slots/slots.conf and run slots-provision" },
        { SLOTS_ASSIGN_FULL, 0, "the pool is full: all 3 slots are held or pending",
          "release a slot, or raise \"slots\" in /etc/slots/slots.conf and run slots-provision" },
        { SLOTS_ASSIGN_TAKEN, 1, "the slot is held by another user",
          "release it first: slots-admin release --slot slot01" },
        { SLOTS_ASSIGN_PENDING, 2, "the slot's last release did not finish (cleanup pending)",
          "finish the release: slots-admin release --slot slot02" },
};

static void test_refusal(void **state)
{
        struct slots_config c = { .path = (char *) "/etc/slots/slots.conf", .table = (char *) "/t/slots.json",
                                  .slots = 3 };
        struct slots_error e;
        int failures = 0;

        (void) state;
        for (size_t i = 0; i < N_ELEM(refusals); i++) {
                slots_error_clear(&e);
                if (slots_assign_refusal(refusals[i].verdict, refusals[i].slot, &c, &e) != -EPERM)
                        ROW_FAIL("verdict %d: not refused", (int) refusals[i].verdict);
                else if (e.kind != SLOTS_ERR_REFUSED || strcmp(e.object, "/t/slots.json") != 0)
                        ROW_FAIL("verdict %d: kind %d about \"%s\"", (int) refusals[i].verdict, (int) e.kind,
                                 e.object);
                else if (strcmp(e.reason, refusals[i].reason) != 0 || strcmp(e.fix, refusals[i].fix) != 0)
                        ROW_FAIL("verdict %d: \"%s\" / \"%s\"", (int) refusals[i].verdict, e.reason, e.fix);
        }
        for (enum slots_assign_verdict v = SLOTS_ASSIGN_GIVE; v <= SLOTS_ASSIGN_AGAIN; v++)
                if (slots_assign_refusal(v, 1, &c, &e) != 0)
                        ROW_FAIL("verdict %d is not a refusal", (int) v);
        if (failures)
                fail_msg("%d refusals wrong", failures);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_choose),
                cmocka_unit_test(test_refusal),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
