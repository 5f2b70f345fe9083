/*
 * A sketch, for sizing only: what a reader and writer made for the slot table
 * format (instead of a general JSON tree) would cost on the same text that
 * bench/table-cost measures.  It reads into an array indexed by slot number
 * (user, since, released, cleanup as spans of the text; any other key of an
 * entry kept as its raw text), checks slot names, user ids and a user in two
 * slots, assigns the lowest free slot and writes the text back in the format
 * slots-admin writes (sorted keys, two-space indent).  Strings with escapes
 * and top-level keys other than "version" and "slots" are refused, so it is
 * not a drop-in replacement; the tools do not use it.
 *
 * Usage: proto-codec TABLE POOL [ITER]   (prints median CPU microseconds)
 */
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

struct span {
        const char *p;
        size_t n;
};

struct entry {
        bool present;
        struct span user, since, released, cleanup;
        struct span extra;              /* raw '"key": value' pairs, ", "-joined as read */
        char name[12];
};

struct table {
        unsigned pool;
        struct entry *e;                /* [pool + 1] */
};

struct rd {
        const char *p, *end;
};

static void ws(struct rd *r)
{
        while (r->p < r->end && (*r->p == ' ' || *r->p == '\n' || *r->p == '\t' || *r->p == '\r'))
                r->p++;
}

static bool lit(struct rd *r, char c)
{
        ws(r);
        if (r->p < r->end && *r->p == c) {
                r->p++;
                return true;
        }
        return false;
}

/* A string without escapes or control characters (a full reader would decode). */
static bool str(struct rd *r, struct span *s)
{
        const char *q;

        ws(r);
        if (r->p >= r->end || *r->p != '"')
                return false;
        q = memchr(r->p + 1, '"', (size_t) (r->end - r->p - 1));
        if (!q || memchr(r->p + 1, '\\', (size_t) (q - r->p - 1)))
                return false;
        s->p = r->p + 1;
        s->n = (size_t) (q - s->p);
        r->p = q + 1;
        return true;
}

/* Skips any JSON value (for keys this version does not know). */
static bool skip_value(struct rd *r, int depth)
{
        struct span s;

        ws(r);
        if (r->p >= r->end || depth > 64)
                return false;
        if (*r->p == '"')
                return str(r, &s);
        if (*r->p == '{' || *r->p == '[') {
                char close = *r->p == '{' ? '}' : ']';
                bool obj = *r->p == '{';

                r->p++;
                if (lit(r, close))
                        return true;
                do {
                        if (obj && (!str(r, &s) || !lit(r, ':')))
                                return false;
                        if (!skip_value(r, depth + 1))
                                return false;
                } while (lit(r, ','));
                return lit(r, close);
        }
        while (r->p < r->end && strchr("-+.0123456789eEtrufalsn", *r->p))
                r->p++;
        return true;
}

static bool user_ok(struct span u)
{
        if (u.n < 1 || u.n > 64 || u.p[0] == '.' || u.p[0] == '-')
                return false;
        for (size_t i = 0; i < u.n; i++) {
                char c = u.p[i];
                if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' ||
                      c == '_' || c == '-'))
                        return false;
        }
        return true;
}

static unsigned slot_of(struct span s)
{
        unsigned n = 0;

        if (s.n < 6 || s.n > 8 || memcmp(s.p, "slot", 4) != 0 || (s.n > 6 && s.p[4] == '0'))
                return 0;
        for (size_t i = 4; i < s.n; i++) {
                if (s.p[i] < '0' || s.p[i] > '9')
                        return 0;
                n = n * 10 + (unsigned) (s.p[i] - '0');
        }
        return n;
}

static int cmp_span(const void *a, const void *b)
{
        const struct span *x = *(const struct span *const *) a, *y = *(const struct span *const *) b;
        int c = memcmp(x->p, y->p, x->n < y->n ? x->n : y->n);

        return c ? c : (x->n > y->n) - (x->n < y->n);
}

static int parse(const char *text, size_t len, unsigned pool, struct table *t)
{
        struct rd r = { text, text + len };
        struct span key, **users;
        unsigned nusers = 0;
        bool version = false, slots = false;

        t->pool = pool;
        t->e = calloc(pool + 1, sizeof(*t->e));
        users = malloc((pool + 1) * sizeof(*users));
        if (!t->e || !users || !lit(&r, '{'))
                return -1;
        do {
                if (!str(&r, &key) || !lit(&r, ':'))
                        return -1;
                if (key.n == 7 && memcmp(key.p, "version", 7) == 0) {
                        ws(&r);
                        if (r.end - r.p < 1 || *r.p != '1')
                                return -1;
                        r.p++;
                        version = true;
                } else if (key.n == 5 && memcmp(key.p, "slots", 5) == 0) {
                        slots = true;
                        if (!lit(&r, '{'))
                                return -1;
                        if (lit(&r, '}'))
                                continue;
                        do {
                                struct span name, k;
                                struct entry *e;
                                unsigned n;

                                if (!str(&r, &name) || !lit(&r, ':') || !lit(&r, '{'))
                                        return -1;
                                n = slot_of(name);
                                if (n == 0 || n > pool || t->e[n].present)
                                        return -1;
                                e = &t->e[n];
                                e->present = true;
                                memcpy(e->name, name.p, name.n);
                                if (lit(&r, '}'))
                                        return -1;
                                do {
                                        const char *kstart;
                                        struct span v;

                                        ws(&r);
                                        kstart = r.p;
                                        if (!str(&r, &k) || !lit(&r, ':'))
                                                return -1;
                                        if (k.n == 4 && memcmp(k.p, "user", 4) == 0 && str(&r, &v))
                                                e->user = v;
                                        else if (k.n == 5 && memcmp(k.p, "since", 5) == 0 && str(&r, &v))
                                                e->since = v;
                                        else if (k.n == 8 && memcmp(k.p, "released", 8) == 0 && str(&r, &v))
                                                e->released = v;
                                        else if (k.n == 7 && memcmp(k.p, "cleanup", 7) == 0 && str(&r, &v))
                                                e->cleanup = v;
                                        else if (skip_value(&r, 0)) {
                                                if (!e->extra.p)
                                                        e->extra.p = kstart;
                                                e->extra.n = (size_t) (r.p - e->extra.p);
                                        } else
                                                return -1;
                                } while (lit(&r, ','));
                                if (!lit(&r, '}'))
                                        return -1;
                                if (e->user.p ? (!user_ok(e->user) || e->cleanup.p)
                                              : !(e->cleanup.n == 7 && memcmp(e->cleanup.p, "pending", 7) == 0))
                                        return -1;
                                if (e->user.p)
                                        users[nusers++] = &e->user;
                        } while (lit(&r, ','));
                        if (!lit(&r, '}'))
                                return -1;
                } else {
                        return -1;
                }
        } while (lit(&r, ','));
        if (!lit(&r, '}') || !version || !slots)
                return -1;
        ws(&r);
        if (r.p != r.end)
                return -1;
        /* A user in two slots: sort the user spans, compare neighbours. */
        qsort(users, nusers, sizeof(*users), cmp_span);
        for (unsigned i = 1; i < nusers; i++)
                if (cmp_span(&users[i - 1], &users[i]) == 0)
                        return -1;
        free(users);
        return 0;
}

struct out {
        char *p;
        size_t n, cap;
};

static void put(struct out *o, const char *s, size_t n)
{
        if (o->n + n > o->cap) {
                o->cap = (o->n + n) * 2;
                o->p = realloc(o->p, o->cap);
        }
        memcpy(o->p + o->n, s, n);
        o->n += n;
}

#define PUTS(o, s) put(o, s, sizeof(s) - 1)

static void put_field(struct out *o, bool *first, const char *key, struct span v)
{
        if (!v.p)
                return;
        if (!*first)
                PUTS(o, ",\n");
        *first = false;
        PUTS(o, "      \"");
        put(o, key, strlen(key));
        PUTS(o, "\": \"");
        put(o, v.p, v.n);
        put(o, "\"", 1);
}

static int cmp_name(const void *a, const void *b)
{
        return strcmp((*(const struct entry *const *) a)->name, (*(const struct entry *const *) b)->name);
}

/* The text as slots-admin writes it: keys sorted, two-space indent, final newline. */
static char *dump(const struct table *t, size_t *len)
{
        struct entry **v = malloc((t->pool + 1) * sizeof(*v));
        struct out o = { 0 };
        unsigned k = 0;

        for (unsigned n = 1; n <= t->pool; n++)
                if (t->e[n].present)
                        v[k++] = &t->e[n];
        qsort(v, k, sizeof(*v), cmp_name);
        PUTS(&o, "{\n  \"slots\": {");
        for (unsigned i = 0; i < k; i++) {
                bool first = true;

                if (i)
                        put(&o, ",", 1);
                PUTS(&o, "\n    \"");
                put(&o, v[i]->name, strlen(v[i]->name));
                PUTS(&o, "\": {\n");
                /* Sorted: cleanup, released, since, user (unknown keys would merge in here). */
                put_field(&o, &first, "cleanup", v[i]->cleanup);
                put_field(&o, &first, "released", v[i]->released);
                put_field(&o, &first, "since", v[i]->since);
                put_field(&o, &first, "user", v[i]->user);
                PUTS(&o, "\n    }");
        }
        if (k)
                PUTS(&o, "\n  },\n  \"version\": 1\n}\n");
        else
                PUTS(&o, "},\n  \"version\": 1\n}\n");
        free(v);
        *len = o.n;
        return o.p;
}

static double cpu_us(void)
{
        struct timespec ts;

        clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
        return (double) ts.tv_sec * 1e6 + (double) ts.tv_nsec / 1e3;
}

static int cmp_double(const void *a, const void *b)
{
        double x = *(const double *) a, y = *(const double *) b;

        return x < y ? -1 : x > y;
}

int main(int argc, char **argv)
{
        static const char user[] = "bench-new", since[] = "2026-10-01T09:12:00Z";
        char *text;
        size_t len;
        unsigned pool;
        int iter, fd;
        double *pu, *du;
        FILE *f;

        if (argc < 3)
                return 2;
        pool = (unsigned) strtoul(argv[2], NULL, 10);
        iter = argc > 3 ? atoi(argv[3]) : 200;
        fd = open(argv[1], O_RDONLY);
        f = fd >= 0 ? fdopen(fd, "r") : NULL;
        if (!f)
                return 1;
        fseek(f, 0, SEEK_END);
        len = (size_t) ftell(f);
        rewind(f);
        text = malloc(len);
        if (!text || fread(text, 1, len, f) != len)
                return 1;
        fclose(f);
        pu = calloc((size_t) iter, sizeof(double));
        du = calloc((size_t) iter, sizeof(double));
        for (int i = 0; i < iter; i++) {
                struct table t;
                size_t outlen;
                unsigned n;
                char *out;
                double t0 = cpu_us(), t1;

                if (parse(text, len, pool, &t) < 0) {
                        fprintf(stderr, "proto-codec: %s: not a table this sketch reads\n", argv[1]);
                        return 1;
                }
                for (n = 1; n <= pool && t.e[n].present; n++)
                        ;
                if (n > pool)
                        return 1;
                t.e[n].present = true;
                snprintf(t.e[n].name, sizeof(t.e[n].name), "slot%02u", n);
                t.e[n].user = (struct span) { user, sizeof(user) - 1 };
                t.e[n].since = (struct span) { since, sizeof(since) - 1 };
                t1 = cpu_us();
                pu[i] = t1 - t0;
                out = dump(&t, &outlen);
                du[i] = cpu_us() - t1;
                if (i == 0 && argc > 4) {
                        FILE *w = fopen(argv[4], "w");
                        if (w) {
                                fwrite(out, 1, outlen, w);
                                fclose(w);
                        }
                }
                free(out);
                free(t.e);
        }
        qsort(pu, (size_t) iter, sizeof(double), cmp_double);
        qsort(du, (size_t) iter, sizeof(double), cmp_double);
        printf("%zu bytes, pool %u, %d iterations; median CPU microseconds: parse %.1f dump %.1f\n", len, pool,
               iter, pu[iter / 2], du[iter / 2]);
        free(pu);
        free(du);
        free(text);
        return 0;
}
