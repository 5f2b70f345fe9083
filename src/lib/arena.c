/* A bump allocator for jansson in a short-lived command: trees carved from a few mappings, dropped whole. */
#include <jansson.h>
#include <stdalign.h>
#include <stdint.h>
#include <sys/mman.h>
#include <unistd.h>

#include "arena.h"

/*
 * Why: slots-admin parses the whole table into a jansson tree, writes it
 * once and exits.  With malloc, a tree of 10,000 entries is 100,000 chunks, each
 * with its header and 16-byte rounding, and freeing it walks every one of them.
 * Here an allocation is a pointer bump, a free is nothing (or a step back when it
 * is the latest allocation: jansson's dump takes and gives back one small block per
 * object), and the whole arena goes at once.  Blocks of BIG bytes or more (a large
 * object's hash buckets, which jansson replaces as the object grows) get a mapping of
 * their own that their free gives back.  Not thread-safe: a command has one thread.
 */

/* The strictest alignment jansson's values need: pointers, size_t, json_int_t, double. */
union arena_align {
        void *p;
        size_t z;
        long long ll;
        double d;
};
#define ALIGN alignof(union arena_align)
#define ROUND(n, a) (((n) + (a) - 1) & ~((size_t) (a) - 1))

#define CHUNK_FIRST ((size_t) 256 << 10)
#define CHUNK_LAST ((size_t) 8 << 20)
#define BIG ((size_t) 64 << 10)

/* At the start of every mapping. */
struct map {
        struct map *next;
        size_t size;            /* of the whole mapping */
};
#define HEADER ROUND(sizeof(struct map), ALIGN)

static struct map *chunks;      /* bump chunks, the newest first */
static struct map *bigs;        /* blocks of their own */
static char *top, *end;         /* the free part of the newest chunk */
static char *last;              /* the latest allocation, while it is still the latest */
static size_t next_chunk = CHUNK_FIRST;
static size_t mapped;
static bool active;

static struct map *map_new(size_t size)
{
        void *p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        struct map *m = p;

        if (p == MAP_FAILED)
                return NULL;
        m->size = size;
        mapped += size;
        return m;
}

static void *big_new(size_t n)
{
        size_t page = (size_t) sysconf(_SC_PAGESIZE);
        struct map *m;

        if (n > SIZE_MAX - HEADER - page)
                return NULL;
        m = map_new(ROUND(HEADER + n, page));
        if (!m)
                return NULL;
        m->next = bigs;
        bigs = m;
        return (char *) m + HEADER;
}

/* Gives back p's mapping when p is a block of its own; false when it is not one. */
static bool big_free(void *p)
{
        for (struct map **m = &bigs; *m; m = &(*m)->next) {
                if ((char *) *m + HEADER == p) {
                        struct map *gone = *m;

                        *m = gone->next;
                        mapped -= gone->size;
                        (void) munmap(gone, gone->size);
                        return true;
                }
        }
        return false;
}

void *slots_arena_malloc(size_t n)
{
        size_t need = n ? ROUND(n, ALIGN) : ALIGN;

        if (n >= BIG)
                return big_new(n);
        if ((size_t) (end - top) < need) {
                struct map *c = map_new(next_chunk);

                if (!c)
                        return NULL;
                c->next = chunks;
                chunks = c;
                top = (char *) c + HEADER;
                end = (char *) c + c->size;
                if (next_chunk < CHUNK_LAST)
                        next_chunk *= 2;
        }
        last = top;
        top += need;
        return last;
}

void slots_arena_free(void *p)
{
        if (!p)
                return;
        if (p == last) {
                top = last;
                last = NULL;
                return;
        }
        /* Any other small block stays until the arena goes. */
        (void) big_free(p);
}

void slots_arena_use(void)
{
        json_set_alloc_funcs(slots_arena_malloc, slots_arena_free);
        active = true;
}

bool slots_arena_active(void)
{
        return active;
}

void slots_arena_drop(void)
{
        struct map *lists[] = { chunks, bigs };

        for (size_t i = 0; i < sizeof(lists) / sizeof(lists[0]); i++) {
                for (struct map *m = lists[i], *next; m; m = next) {
                        next = m->next;
                        (void) munmap(m, m->size);
                }
        }
        chunks = bigs = NULL;
        top = end = last = NULL;
        next_chunk = CHUNK_FIRST;
        mapped = 0;
}

size_t slots_arena_mapped(void)
{
        return mapped;
}
