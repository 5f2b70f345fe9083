/* Which users' trees each slot's probe lists: its own, a sample, and every one the model does not surely refuse it. */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>

#include "check-int.h"

/* A uid, or a gid a slot is in, and the slot: sorted by id, so the slots an entry names are found by search. */
struct id_slot {
        unsigned id;
        size_t slot;
};

struct plan_index {
        struct id_slot *uids, *gids;
        size_t n_uids, n_gids;
        size_t *sample;         /* per slot: the slot whose tree is its sample, SIZE_MAX for none */
        size_t *held_first;     /* per slot j (n + 1): where the slots sampling j's tree start in held */
        size_t *held;
        bool *prefix_denies;    /* per slot: the folders above every tree refuse it */
        const struct slots_perm_path *prefix;  /* the walk whose folders above its end the trees share */
        size_t *stamp, *cand;   /* per slot: the tree it is a candidate for (+1); the candidates */
};

static int by_id(const void *a, const void *b)
{
        const struct id_slot *x = a, *y = b;

        if (x->id != y->id)
                return x->id < y->id ? -1 : 1;
        return x->slot < y->slot ? -1 : x->slot > y->slot;
}

static int tree_slot_add(struct slotinfo *s, size_t j)
{
        size_t *t = realloc(s->tree_slot, (s->n_tree + 1) * sizeof(*t));

        if (!t)
                return -ENOMEM;
        s->tree_slot = t;
        s->tree_slot[s->n_tree++] = j;
        return 0;
}

/* The sample of each slot: the next slot after it, in pool order round the end, whose user has a tree. */
static void pick_samples(const struct check_run *k, size_t *sample)
{
        size_t next = SIZE_MAX;

        for (size_t step = 2 * k->n_slots; step-- > 0;) {
                size_t i = step % k->n_slots;

                sample[i] = next == i ? SIZE_MAX : next;
                if (k->slots[i].tree)
                        next = i;
        }
}

/* Whether o's walk is the reference's but for its end: then the folders above judge every slot alike. */
static bool shares_prefix(const struct slots_perm_path *w, const struct slots_perm_path *ref)
{
        if (w->err || ref->err || w->n == 0 || w->n != ref->n)
                return false;
        for (size_t i = 0; i + 1 < w->n; i++)
                if (!slots_perm_step_same(&w->steps[i], &ref->steps[i]))
                        return false;
        return true;
}

static int index_build(const struct check_run *k, struct plan_index *x)
{
        size_t n = k->n_slots, nu = 0, ng = 0, c;

        for (size_t i = 0; i < n; i++)
                if (k->slots[i].have_id)
                        ng += 1 + (size_t) k->slots[i].id.n_groups;
        x->uids = calloc(n ? n : 1, sizeof(*x->uids));
        x->gids = calloc(ng ? ng : 1, sizeof(*x->gids));
        x->sample = calloc(n ? n : 1, sizeof(*x->sample));
        x->held_first = calloc(n + 1, sizeof(*x->held_first));
        x->held = calloc(n ? n : 1, sizeof(*x->held));
        x->prefix_denies = calloc(n ? n : 1, sizeof(*x->prefix_denies));
        x->stamp = calloc(n ? n : 1, sizeof(*x->stamp));
        x->cand = calloc(n ? n : 1, sizeof(*x->cand));
        if (!x->uids || !x->gids || !x->sample || !x->held_first || !x->held || !x->prefix_denies || !x->stamp ||
            !x->cand)
                return -ENOMEM;
        ng = 0;
        for (size_t i = 0; i < n; i++) {
                const struct slotinfo *s = &k->slots[i];

                if (!s->have_id)
                        continue;
                x->uids[nu++] = (struct id_slot) { s->id.uid, i };
                x->gids[ng++] = (struct id_slot) { s->id.gid, i };
                for (int g = 0; g < s->id.n_groups; g++)
                        x->gids[ng++] = (struct id_slot) { s->id.groups[g], i };
        }
        qsort(x->uids, nu, sizeof(*x->uids), by_id);
        qsort(x->gids, ng, sizeof(*x->gids), by_id);
        x->n_uids = nu;
        x->n_gids = ng;

        /* The slots sampling each tree, grouped by that tree's slot (a counting sort). */
        pick_samples(k, x->sample);
        for (size_t i = 0; i < n; i++)
                if (x->sample[i] != SIZE_MAX)
                        x->held_first[x->sample[i] + 1]++;
        for (size_t j = 0; j < n; j++)
                x->held_first[j + 1] += x->held_first[j];
        for (size_t i = 0; i < n; i++)
                if (x->sample[i] != SIZE_MAX)
                        x->stamp[x->sample[i]]++;
        for (size_t i = n; i-- > 0;)
                if (x->sample[i] != SIZE_MAX) {
                        c = x->sample[i];
                        x->held[x->held_first[c] + --x->stamp[c]] = i;
                }

        /* The folders above the first tree that could be followed: most pools put every tree under one. */
        for (size_t j = 0; j < n && !x->prefix; j++)
                if (k->slots[j].tree && !k->slots[j].tree_walk.err && k->slots[j].tree_walk.n)
                        x->prefix = &k->slots[j].tree_walk;
        for (size_t i = 0; i < n && x->prefix; i++)
                if (k->slots[i].have_id)
                        x->prefix_denies[i] = slots_perm_steps_deny(x->prefix->steps, x->prefix->n - 1,
                                                                    &k->slots[i].id, SLOTS_PERM_R);
        return 0;
}

static void index_free(struct plan_index *x)
{
        free(x->uids);
        free(x->gids);
        free(x->sample);
        free(x->held_first);
        free(x->held);
        free(x->prefix_denies);
        free(x->stamp);
        free(x->cand);
}

/* Tree j goes into slot i's plan when it is i's own, i's sample, or the model does not surely refuse it to i. */
static int consider(struct check_run *k, struct plan_index *x, size_t i, size_t j, bool shared)
{
        struct slotinfo *s = &k->slots[i];
        const struct slots_perm_path *w = &k->slots[j].tree_walk;
        bool denied;

        if (!s->have_id)
                return 0;
        if (i == j || x->sample[i] == j)
                denied = false;
        else if (shared)
                denied = x->prefix_denies[i] || slots_perm_steps_deny(&w->steps[w->n - 1], 1, &s->id, SLOTS_PERM_R);
        else
                denied = slots_perm_path_denies(w, &s->id, SLOTS_PERM_R);
        if (denied)
                return 0;
        if (check_plan_add(&s->plan, k->slots[j].tree, PROBE_LIST) < 0 || tree_slot_add(s, j) < 0)
                return -ENOMEM;
        return 0;
}

/* Marks slot i a candidate for tree j once. */
static void candidate(struct plan_index *x, size_t j, size_t i, size_t *n)
{
        if (x->stamp[i] != j + 1) {
                x->stamp[i] = j + 1;
                x->cand[(*n)++] = i;
        }
}

/* Every slot with that id (in a sorted index). */
static void candidates_by(struct plan_index *x, const struct id_slot *ix, size_t n_ix, unsigned id, size_t j,
                          size_t *n)
{
        size_t lo = 0, hi = n_ix;

        while (lo < hi) {
                size_t mid = lo + (hi - lo) / 2;

                if (ix[mid].id < id)
                        lo = mid + 1;
                else
                        hi = mid;
        }
        for (; lo < n_ix && ix[lo].id == id; lo++)
                candidate(x, j, ix[lo].slot, n);
}

/*
 * The trees each slot with an account probes, appended to its plan in slot
 * order.  A tree's walk shares its folders above the end with the others (the
 * slots those refuse are known once per slot); at its own folder a slot the
 * model names nowhere gets the other bits, so when those refuse, only its own
 * slot, the slots sampling it and the slots it names need a look: a pool of n
 * users costs about 2n probes and n looks, not n * n.
 */
int check_plan_tree_probes(struct check_run *k)
{
        struct plan_index x = { 0 };
        int r = index_build(k, &x);

        for (size_t j = 0; j < k->n_slots && r == 0; j++) {
                const struct slotinfo *o = &k->slots[j];
                const struct slots_perm_step *end;
                size_t n = 0;
                bool shared;

                if (!o->tree)
                        continue;
                shared = x.prefix && shares_prefix(&o->tree_walk, x.prefix);
                end = shared ? &o->tree_walk.steps[o->tree_walk.n - 1] : NULL;
                if (!end || !slots_perm_step_denies_others(end, SLOTS_PERM_R)) {
                        /* Open to the slots it names nowhere, or a walk of its own: each slot is looked at. */
                        for (size_t i = 0; i < k->n_slots && r == 0; i++)
                                r = consider(k, &x, i, j, shared);
                        continue;
                }
                candidate(&x, j, j, &n);
                for (size_t h = x.held_first[j]; h < x.held_first[j + 1]; h++)
                        candidate(&x, j, x.held[h], &n);
                candidates_by(&x, x.uids, x.n_uids, end->m.owner, j, &n);
                for (size_t e = 0; e < end->m.n_users; e++)
                        candidates_by(&x, x.uids, x.n_uids, end->m.users[e].id, j, &n);
                candidates_by(&x, x.gids, x.n_gids, end->m.group, j, &n);
                for (size_t e = 0; e < end->m.n_groups; e++)
                        candidates_by(&x, x.gids, x.n_gids, end->m.groups[e].id, j, &n);
                for (size_t c = 0; c < n && r == 0; c++)
                        r = consider(k, &x, x.cand[c], j, shared);
        }
        index_free(&x);
        return r;
}
