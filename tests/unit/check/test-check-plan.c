/*
 * The user-tree plan: the trees each slot probes are exactly the pairwise rule's (its own, its
 * sample, every tree the model does not surely refuse it), over pools drawn at random with
 * shared groups, named ACL entries, open trees, walks of their own and walks that failed.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "check-int.h"
#include "unit.h"

#define IDS 6   /* the small universe the models name: root, the service, three shared groups, a slot */

static unsigned long rnd_state;

static unsigned rnd(unsigned n)
{
        rnd_state = rnd_state * 6364136223846793005UL + 1442695040888963407UL;
        return (unsigned) ((rnd_state >> 33) % n);
}

/* An id the models may name: root, the service (900), a shared group (500..502) or some slot's. */
static unsigned some_id(size_t n_slots)
{
        static const unsigned fixed[] = { 0, 900, 500, 501, 502 };
        unsigned pick = rnd(IDS);

        return pick < N_ELEM(fixed) ? fixed[pick] : 1000 + rnd((unsigned) n_slots);
}

/* A model as the kernel could hold it; `closed` most of the time, as a pool's folders are. */
static void some_model(struct slots_perm_model *m, size_t n_slots, bool closed)
{
        memset(m, 0, sizeof(*m));
        m->dir = true;
        m->owner = some_id(n_slots);
        m->group = some_id(n_slots);
        m->user_obj = 7;
        m->group_obj = rnd(8);
        m->other = closed ? (rnd(2) ? 0 : 1) : rnd(8);
        m->n_users = rnd(3);
        m->n_groups = rnd(2);
        for (size_t i = 0; i < m->n_users; i++)
                m->users[i] = (struct slots_perm_entry) { some_id(n_slots), rnd(8) };
        for (size_t i = 0; i < m->n_groups; i++)
                m->groups[i] = (struct slots_perm_entry) { some_id(n_slots), rnd(8) };
        m->extended = m->n_users || m->n_groups;
        m->has_mask = m->extended;
        m->mask = m->extended ? rnd(8) : 0;
}

/* The walk of a tree: the shared folders (docs, _users), then the tree's own, or a failed walk. */
static void some_walk(struct slots_perm_path *w, const struct slots_perm_model *shared, size_t n_slots, size_t j)
{
        static const char *const folders[] = { "/", "/docs", "/docs/_users" };
        unsigned kind = rnd(12);
        char end[64];

        if (kind == 0) {
                w->err = 13;
                return;
        }
        w->n = N_ELEM(folders) + 1;
        w->steps = calloc(w->n, sizeof(*w->steps));
        assert_non_null(w->steps);
        for (size_t i = 0; i < N_ELEM(folders); i++) {
                w->steps[i].path = strdup(folders[i]);
                w->steps[i].traverse = true;
                w->steps[i].have_model = true;
                w->steps[i].m = shared[i];
        }
        /* A walk of its own: a folder above differs from the others'. */
        if (kind == 1)
                some_model(&w->steps[1 + rnd(2)].m, n_slots, true);
        snprintf(end, sizeof(end), "/docs/_users/u%zu", j);
        w->steps[w->n - 1].path = strdup(end);
        w->steps[w->n - 1].traverse = false;
        w->steps[w->n - 1].have_model = kind != 2;
        some_model(&w->steps[w->n - 1].m, n_slots, kind != 3);
        w->steps[w->n - 1].m.truncated = kind == 4;
        for (size_t i = 0; i < w->n; i++)
                assert_non_null(w->steps[i].path);
}

/* The rule as it reads: every pair of a slot and a tree, in slot order. */
static size_t reference(const struct check_run *k, size_t self, size_t *out)
{
        size_t sample = SIZE_MAX, n = 0;

        for (size_t d = 1; d < k->n_slots; d++)
                if (k->slots[(self + d) % k->n_slots].tree) {
                        sample = (self + d) % k->n_slots;
                        break;
                }
        for (size_t j = 0; j < k->n_slots; j++) {
                const struct slotinfo *o = &k->slots[j];

                if (!o->tree)
                        continue;
                if (j != self && j != sample && slots_perm_path_denies(&o->tree_walk, &k->slots[self].id, SLOTS_PERM_R))
                        continue;
                out[n++] = j;
        }
        return n;
}

/* What a pool of the tests holds, and what the plan added to it. */
static void pool_free(struct check_run *k)
{
        for (size_t i = 0; i < k->n_slots; i++) {
                free(k->slots[i].tree);
                free(k->slots[i].tree_slot);
                free(k->slots[i].plan.paths);
                free(k->slots[i].plan.ops);
                slots_perm_path_free(&k->slots[i].tree_walk);
        }
        free(k->slots);
}

static void test_plan_matches_pairs(void **state)
{
        unsigned failures = 0, pools = 0, probed = 0, refused = 0;

        (void) state;
        for (unsigned seed = 1; seed <= 400; seed++) {
                struct check_run k = { 0 };
                struct slots_perm_model shared[3];
                size_t n = 1 + seed % 37, *want = calloc(n, sizeof(*want));
                gid_t *groups = calloc(n * 3, sizeof(*groups));

                assert_non_null(want);
                assert_non_null(groups);
                rnd_state = seed;
                for (size_t i = 0; i < N_ELEM(shared); i++)
                        some_model(&shared[i], n, false);
                /* Most draws keep the shared folders passable, so the trees' own folders decide. */
                for (size_t i = 0; i < N_ELEM(shared) && rnd(4); i++)
                        shared[i].other |= 1;
                k.slots = calloc(n, sizeof(*k.slots));
                assert_non_null(k.slots);
                k.n_slots = n;
                for (size_t i = 0; i < n; i++) {
                        struct slotinfo *s = &k.slots[i];

                        s->have_id = rnd(10) != 0;
                        /* Now and then two slots share a uid, as a broken pool may. */
                        s->id.uid = 1000 + (unsigned) (rnd(15) ? i : rnd((unsigned) n));
                        s->id.gid = rnd(5) ? 1000 + (unsigned) i : 500 + rnd(3);
                        s->id.n_groups = (int) rnd(3);
                        s->id.groups = &groups[i * 3];
                        for (int g = 0; g < s->id.n_groups; g++)
                                groups[i * 3 + (size_t) g] = g == 0 && rnd(2) ? 900 : 500 + rnd(3);
                        if (rnd(4)) {
                                s->tree = strdup("tree");
                                assert_non_null(s->tree);
                                some_walk(&s->tree_walk, shared, n, i);
                        }
                }
                assert_int_equal(check_plan_tree_probes(&k), 0);
                for (size_t i = 0; i < n; i++) {
                        const struct slotinfo *s = &k.slots[i];
                        size_t nw = s->have_id ? reference(&k, i, want) : 0;

                        if (s->n_tree != nw || s->plan.n != nw ||
                            (nw && memcmp(s->tree_slot, want, nw * sizeof(*want)) != 0))
                                ROW_FAIL("seed %u, slot %zu: %zu trees planned, the pairwise rule has %zu", seed, i,
                                         s->n_tree, nw);
                        probed += (unsigned) nw;
                        for (size_t j = 0; s->have_id && j < n; j++)
                                refused += k.slots[j].tree != NULL;
                        refused -= s->have_id ? (unsigned) nw : 0;
                }
                pool_free(&k);
                free(groups);
                free(want);
                pools++;
        }
        /* The draws reach both outcomes, or the comparison above shows nothing. */
        print_message("%u pools: %u trees probed, %u refused by the model\n", pools, probed, refused);
        assert_true(probed > 1000);
        assert_true(refused > 1000);
        assert_int_equal(failures, 0);
}

/* The common pool: every tree closed but to its slot, under one shared folder: about two probes a slot. */
static void test_plan_is_linear_in_a_closed_pool(void **state)
{
        struct check_run k = { 0 };
        struct slots_perm_model shared[3];
        size_t n = 500, total = 0;

        (void) state;
        for (size_t i = 0; i < N_ELEM(shared); i++)
                shared[i] = (struct slots_perm_model) { .dir = true, .user_obj = 7, .group_obj = 5, .other = 1 };
        k.slots = calloc(n, sizeof(*k.slots));
        assert_non_null(k.slots);
        k.n_slots = n;
        for (size_t i = 0; i < n; i++) {
                struct slotinfo *s = &k.slots[i];
                struct slots_perm_model *m;

                s->have_id = true;
                s->id = (struct slots_ident) { .uid = 1000 + (unsigned) i, .gid = 1000 + (unsigned) i };
                s->tree = strdup("tree");
                assert_non_null(s->tree);
                rnd_state = 99;
                some_walk(&s->tree_walk, shared, n, i);
                while (s->tree_walk.err || s->tree_walk.n == 0) {
                        slots_perm_path_free(&s->tree_walk);
                        some_walk(&s->tree_walk, shared, n, i);
                }
                for (size_t st = 0; st + 1 < s->tree_walk.n; st++)
                        s->tree_walk.steps[st].m = shared[st];
                /* As assign leaves it: owner the service, its group, the slot's uid by an ACL entry. */
                m = &s->tree_walk.steps[s->tree_walk.n - 1].m;
                *m = (struct slots_perm_model) { .dir = true, .owner = 900, .group = 900, .user_obj = 7,
                                                 .group_obj = 7, .other = 0, .extended = true, .has_mask = true,
                                                 .mask = 7, .n_users = 1 };
                m->users[0] = (struct slots_perm_entry) { 1000 + (unsigned) i, 7 };
                s->tree_walk.steps[s->tree_walk.n - 1].have_model = true;
        }
        assert_int_equal(check_plan_tree_probes(&k), 0);
        for (size_t i = 0; i < n; i++) {
                const struct slotinfo *s = &k.slots[i];

                assert_int_equal(s->n_tree, 2);
                assert_int_equal(s->tree_slot[0], i < n - 1 ? i : 0);
                assert_int_equal(s->tree_slot[1], i < n - 1 ? i + 1 : n - 1);
                total += s->n_tree;
        }
        assert_int_equal(total, 2 * n);
        pool_free(&k);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_plan_matches_pairs),
                cmocka_unit_test(test_plan_is_linear_in_a_closed_pool),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
