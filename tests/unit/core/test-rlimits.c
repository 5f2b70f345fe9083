/*
 * Resource limits: the value syntax on both sides of each rule, overlay, and
 * apply in a forked child (the limits really set, and a failure that names the item).
 */
#include <errno.h>
#include <grp.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>
#include <jansson.h>

#include "rlimits.h"
#include "unit.h"

#define INF RLIM_INFINITY
#define K ((rlim_t) 1 << 10)
#define M ((rlim_t) 1 << 20)
#define G ((rlim_t) 1 << 30)
#define T ((rlim_t) 1 << 40)
#define BAD false, 0, 0, 0
#define OK true

/*
 * Each value is parsed as {"default": {"<item>": <value>}} on one line: the
 * value starts at column 18 + strlen(item); a refusal reports `column` (the
 * value, an inner value, or a key) on line 1 and names the item.
 */
static const struct row {
        const char *item;
        const char *value;
        bool ok;
        rlim_t soft, hard;
        int nice;
        unsigned column;        /* refusals only */
} rows[] = {
        /* plain numbers */
        { "nofile", "1024", OK, 1024, 1024, 0, 0 },
        { "nofile", "0", OK, 0, 0, 0, 0 },
        { "nproc", "1", OK, 1, 1, 0, 0 },
        { "cpu", "60", OK, 60, 60, 0, 0 },
        { "nofile", "\"1024\"", OK, 1024, 1024, 0, 0 },
        { "cpu", "\"60\"", OK, 60, 60, 0, 0 },
        { "nofile", "9223372036854775807", OK, INT64_MAX, INT64_MAX, 0, 0 },
        /* unlimited, for every kind */
        { "nofile", "\"unlimited\"", OK, INF, INF, 0, 0 },
        { "cpu", "\"unlimited\"", OK, INF, INF, 0, 0 },
        { "as", "\"unlimited\"", OK, INF, INF, 0, 0 },
        { "as", "\"Unlimited\"", BAD, 20 },
        { "as", "\"infinity\"", BAD, 20 },
        { "as", "\"unlimited \"", BAD, 20 },
        /* size suffixes: powers of 1024, sizes only */
        { "as", "\"512K\"", OK, 512 * K, 512 * K, 0, 0 },
        { "as", "\"1M\"", OK, M, M, 0, 0 },
        { "data", "\"2G\"", OK, 2 * G, 2 * G, 0, 0 },
        { "fsize", "\"1T\"", OK, T, T, 0, 0 },
        { "stack", "\"8M\"", OK, 8 * M, 8 * M, 0, 0 },
        { "memlock", "\"64K\"", OK, 64 * K, 64 * K, 0, 0 },
        { "core", "\"0K\"", OK, 0, 0, 0, 0 },
        { "core", "0", OK, 0, 0, 0, 0 },
        { "as", "\"1P\"", BAD, 20 },
        { "as", "\"1k\"", BAD, 20 },
        { "as", "\"1KB\"", BAD, 20 },
        { "as", "\"1KK\"", BAD, 20 },
        { "as", "\"K\"", BAD, 20 },
        { "nproc", "\"1K\"", BAD, 23 },
        { "nofile", "\"1M\"", BAD, 24 },
        { "cpu", "\"1K\"", BAD, 21 },
        { "cpu", "\"60s\"", BAD, 21 },
        /* strict syntax */
        { "data", "\"10M \"", BAD, 22 },
        { "data", "\" 10M\"", BAD, 22 },
        { "data", "\"-1\"", BAD, 22 },
        { "data", "-1", BAD, 22 },
        { "data", "\"+1\"", BAD, 22 },
        { "data", "\"1.5G\"", BAD, 22 },
        { "data", "1.5", BAD, 22 },
        { "data", "\"\"", BAD, 22 },
        { "data", "\"0x10\"", BAD, 22 },
        { "data", "true", BAD, 22 },
        { "data", "null", BAD, 22 },
        { "data", "[1]", BAD, 22 },
        /* overflow: the largest finite value is RLIM_INFINITY - 1 */
        { "as", "\"18446744073709551614\"", OK, INF - 1, INF - 1, 0, 0 },
        { "as", "\"18446744073709551615\"", BAD, 20 },
        { "as", "\"18446744073709551616\"", BAD, 20 },
        { "as", "\"99999999999999999999999\"", BAD, 20 },
        { "as", "\"16777215T\"", OK, 16777215 * T, 16777215 * T, 0, 0 },
        { "as", "\"16777216T\"", BAD, 20 },
        { "as", "\"17179869183G\"", OK, 17179869183 * G, 17179869183 * G, 0, 0 },
        { "as", "\"17179869184G\"", BAD, 20 },
        /* {"soft", "hard"} */
        { "cpu", "{\"soft\": 60, \"hard\": 120}", OK, 60, 120, 0, 0 },
        { "cpu", "{\"hard\": 120, \"soft\": 60}", OK, 60, 120, 0, 0 },
        { "cpu", "{\"soft\": 60, \"hard\": 60}", OK, 60, 60, 0, 0 },
        { "as", "{\"soft\": \"1G\", \"hard\": \"unlimited\"}", OK, G, INF, 0, 0 },
        { "as", "{\"soft\": \"unlimited\", \"hard\": \"unlimited\"}", OK, INF, INF, 0, 0 },
        { "cpu", "{\"soft\": 120, \"hard\": 60}", BAD, 21 },
        { "as", "{\"soft\": \"unlimited\", \"hard\": \"1G\"}", BAD, 20 },
        { "cpu", "{\"soft\": 60}", BAD, 21 },
        { "cpu", "{\"hard\": 60}", BAD, 21 },
        { "cpu", "{}", BAD, 21 },
        { "cpu", "{\"soft\": 60, \"hard\": 120, \"max\": 1}", BAD, 47 },
        { "cpu", "{\"soft\": \"1K\", \"hard\": 120}", BAD, 30 },
        { "nproc", "{\"soft\": -1, \"hard\": 1}", BAD, 32 },
        { "nproc", "{\"soft\": 1, \"hard\": {\"soft\": 1}}", BAD, 43 },
        /* nice: -20..19 */
        { "nice", "-20", OK, 0, 0, -20, 0 },
        { "nice", "19", OK, 0, 0, 19, 0 },
        { "nice", "0", OK, 0, 0, 0, 0 },
        { "nice", "-21", BAD, 22 },
        { "nice", "20", BAD, 22 },
        { "nice", "\"5\"", BAD, 22 },
        { "nice", "5.0", BAD, 22 },
        { "nice", "\"unlimited\"", BAD, 22 },
        { "nice", "{\"soft\": 1, \"hard\": 1}", BAD, 22 },
        /* unknown items: the key is reported */
        { "rss", "1", BAD, 14 },
        { "NOFILE", "1", BAD, 14 },
        { "", "1", BAD, 14 },
};

static int parse_text(const char *text, struct slots_limits *out, struct slots_error *e)
{
        const struct slots_jsrc src = { .file = "limits.json", .text = text, .len = strlen(text) };
        const struct slots_jpath path[1] = { { .key = "default" } };
        json_error_t jerr;
        json_t *root = json_loads(text, JSON_REJECT_DUPLICATES, &jerr);
        int r;

        if (!root)
                fail_msg("test text does not parse: %s: %s", text, jerr.text);
        r = slots_limits_parse(json_object_get(root, "default"), &src, path, 1, out, e);
        json_decref(root);
        return r;
}

static void test_parse(void **state)
{
        int failures = 0;

        (void) state;
        for (size_t i = 0; i < N_ELEM(rows); i++) {
                const struct row *w = &rows[i];
                int item = slots_limit_item_from_name(w->item);
                struct slots_limits l;
                struct slots_error e;
                char text[256];
                int r;

                snprintf(text, sizeof(text), "{\"default\": {\"%s\": %s}}", w->item, w->value);
                slots_error_clear(&e);
                r = parse_text(text, &l, &e);
                if (w->ok) {
                        const struct slots_limit *it = &l.item[item];
                        if (r != 0) {
                                ROW_FAIL("%s = %s: refused: %s", w->item, w->value, e.reason);
                                continue;
                        }
                        for (int j = 0; j < SLOTS_LIMIT_MAX_ITEM; j++)
                                if (l.item[j].set != (j == item))
                                        ROW_FAIL("%s = %s: item %s set=%d", w->item, w->value,
                                                 slots_limit_item_name(j), l.item[j].set);
                        if (item == SLOTS_LIMIT_NICE ? it->nice != w->nice
                                                     : it->soft != w->soft || it->hard != w->hard)
                                ROW_FAIL("%s = %s: got %llu/%llu nice %d, expected %llu/%llu nice %d", w->item,
                                         w->value, (unsigned long long) it->soft, (unsigned long long) it->hard,
                                         it->nice, (unsigned long long) w->soft, (unsigned long long) w->hard,
                                         w->nice);
                        continue;
                }
                if (r != -EBADMSG)
                        ROW_FAIL("%s = %s: expected -EBADMSG, got %d", w->item, w->value, r);
                else if (strcmp(e.object, "limits.json") != 0)
                        ROW_FAIL("%s = %s: error names \"%s\"", w->item, w->value, e.object);
                else if (e.line != 1 || e.column != w->column)
                        ROW_FAIL("%s = %s: reported at %u:%u, expected 1:%u (%s)", w->item, w->value, e.line,
                                 e.column, w->column, e.reason);
                else if (snprintf(text, sizeof(text), "\"%s\"", w->item) < 0 || !strstr(e.reason, text))
                        ROW_FAIL("%s = %s: reason \"%s\" does not name the item", w->item, w->value, e.reason);
        }
        if (failures)
                fail_msg("%d row checks failed", failures);
}

/* Several items at once, and a reused struct is cleared first. */
static void test_parse_several(void **state)
{
        struct slots_limits l;
        struct slots_error e;

        (void) state;
        memset(&l, 0xff, sizeof(l));
        assert_int_equal(parse_text("{\"default\": {\"nofile\": 10, \"nproc\": \"20\", \"nice\": 3}}", &l, &e),
                         0);
        for (int i = 0; i < SLOTS_LIMIT_MAX_ITEM; i++)
                assert_int_equal(l.item[i].set,
                                 i == SLOTS_LIMIT_NOFILE || i == SLOTS_LIMIT_NPROC || i == SLOTS_LIMIT_NICE);
        assert_int_equal(l.item[SLOTS_LIMIT_NOFILE].soft, 10);
        assert_int_equal(l.item[SLOTS_LIMIT_NPROC].hard, 20);
        assert_int_equal(l.item[SLOTS_LIMIT_NICE].nice, 3);

        /* an empty object sets nothing */
        assert_int_equal(parse_text("{\"default\": {}}", &l, &e), 0);
        for (int i = 0; i < SLOTS_LIMIT_MAX_ITEM; i++)
                assert_false(l.item[i].set);

        /* the second of two items is the one reported */
        assert_int_equal(parse_text("{\"default\": {\"nofile\": 10,\n \"as\": \"1X\"}}", &l, &e), -EBADMSG);
        assert_int_equal(e.line, 2);
        assert_int_equal(e.column, 8);
}

/* Not an object: reported at the object's own position, naming its key. */
static void test_parse_not_object(void **state)
{
        struct slots_limits l;
        struct slots_error e;

        (void) state;
        assert_int_equal(parse_text("{\"default\":\n  [1]}", &l, &e), -EBADMSG);
        assert_int_equal(e.line, 2);
        assert_int_equal(e.column, 3);
        assert_non_null(strstr(e.reason, "default"));
}

/* A limits object that is the whole document: path of 0 steps. */
static void test_parse_at_root(void **state)
{
        static const char good[] = "{\"nofile\": 10}", bad_item[] = "{\"nofile\": 10, \"x\": 1}", notobj[] = "[1]";
        const struct slots_jpath none[1] = { { .key = NULL, .index = 0 } };
        struct slots_jsrc src = { .file = "root.json" };
        struct slots_limits l;
        struct slots_error e;
        json_t *root;

        (void) state;
        src.text = good;
        src.len = strlen(good);
        root = json_loads(good, 0, NULL);
        assert_int_equal(slots_limits_parse(root, &src, none, 0, &l, &e), 0);
        assert_int_equal(l.item[SLOTS_LIMIT_NOFILE].soft, 10);
        json_decref(root);

        src.text = bad_item;
        src.len = strlen(bad_item);
        root = json_loads(bad_item, 0, NULL);
        assert_int_equal(slots_limits_parse(root, &src, none, 0, &l, &e), -EBADMSG);
        assert_int_equal(e.line, 1);
        assert_int_equal(e.column, 16);
        json_decref(root);

        src.text = notobj;
        src.len = strlen(notobj);
        root = json_loads(notobj, 0, NULL);
        assert_int_equal(slots_limits_parse(root, &src, none, 0, &l, &e), -EBADMSG);
        assert_int_equal(e.line, 1);
        assert_int_equal(e.column, 1);
        assert_non_null(strstr(e.reason, "limits: must be an object"));
        json_decref(root);
}

static void test_item_names(void **state)
{
        static const char *const names[SLOTS_LIMIT_MAX_ITEM] = {
                "nproc", "nofile", "as", "data", "stack", "cpu", "fsize", "core", "memlock", "nice",
        };

        (void) state;
        for (int i = 0; i < SLOTS_LIMIT_MAX_ITEM; i++) {
                assert_string_equal(slots_limit_item_name(i), names[i]);
                assert_int_equal(slots_limit_item_from_name(names[i]), i);
        }
        assert_null(slots_limit_item_name(SLOTS_LIMIT_MAX_ITEM));
        assert_int_equal(slots_limit_item_from_name("rss"), -1);
        assert_int_equal(slots_limit_item_from_name("Nofile"), -1);
        assert_int_equal(slots_limit_item_from_name(""), -1);
}

static void set_limit(struct slots_limits *l, enum slots_limit_item i, rlim_t soft, rlim_t hard)
{
        l->item[i] = (struct slots_limit){ .set = true, .soft = soft, .hard = hard };
}

static void test_overlay(void **state)
{
        struct slots_limits base, top;

        (void) state;
        memset(&base, 0, sizeof(base));
        memset(&top, 0, sizeof(top));
        set_limit(&base, SLOTS_LIMIT_NOFILE, 10, 10);
        set_limit(&base, SLOTS_LIMIT_NPROC, 5, 5);
        set_limit(&top, SLOTS_LIMIT_NPROC, 20, 30);
        set_limit(&top, SLOTS_LIMIT_CPU, 1, 2);
        top.item[SLOTS_LIMIT_NICE] = (struct slots_limit){ .set = true, .nice = -3 };

        slots_limits_overlay(&base, &top);
        /* from base, untouched by the unset item of top */
        assert_true(base.item[SLOTS_LIMIT_NOFILE].set);
        assert_int_equal(base.item[SLOTS_LIMIT_NOFILE].soft, 10);
        /* replaced */
        assert_int_equal(base.item[SLOTS_LIMIT_NPROC].soft, 20);
        assert_int_equal(base.item[SLOTS_LIMIT_NPROC].hard, 30);
        /* added */
        assert_true(base.item[SLOTS_LIMIT_CPU].set);
        assert_int_equal(base.item[SLOTS_LIMIT_CPU].hard, 2);
        assert_int_equal(base.item[SLOTS_LIMIT_NICE].nice, -3);
        /* still unset */
        assert_false(base.item[SLOTS_LIMIT_AS].set);
        assert_false(base.item[SLOTS_LIMIT_CORE].set);
}

/* ---- apply, in a forked child: the test process keeps its own limits ---- */

static int resource_of(enum slots_limit_item i)
{
        static const int res[SLOTS_LIMIT_MAX_ITEM] = {
                RLIMIT_NPROC, RLIMIT_NOFILE, RLIMIT_AS, RLIMIT_DATA, RLIMIT_STACK,
                RLIMIT_CPU, RLIMIT_FSIZE, RLIMIT_CORE, RLIMIT_MEMLOCK, -1,
        };
        return res[i];
}

static rlim_t nr_open(void)
{
        unsigned long long v = 0;
        FILE *f = fopen("/proc/sys/fs/nr_open", "r");

        if (!f)
                return 0;
        if (fscanf(f, "%llu", &v) != 1)
                v = 0;
        fclose(f);
        return (rlim_t) v;
}

/* Runs fn in a child; the child prints what went wrong and exits non-zero. */
static void in_child(int (*fn)(void))
{
        int status;
        pid_t pid;

        fflush(NULL);
        pid = fork();
        assert_true(pid >= 0);
        if (pid == 0)
                _exit(fn());
        assert_int_equal(waitpid(pid, &status, 0), pid);
        if (!WIFEXITED(status))
                fail_msg("child died with signal %d", WTERMSIG(status));
        if (WEXITSTATUS(status) == 77)
                skip();
        assert_int_equal(WEXITSTATUS(status), 0);
}

#define CHILD_CHECK(cond, ...) do { if (!(cond)) { fprintf(stderr, __VA_ARGS__); fputc('\n', stderr); return 1; } } while (0)

static int check_rlimit(enum slots_limit_item i, rlim_t soft, rlim_t hard)
{
        struct rlimit rl;

        CHILD_CHECK(getrlimit(resource_of(i), &rl) == 0, "getrlimit: %m");
        CHILD_CHECK(rl.rlim_cur == soft && rl.rlim_max == hard, "%s: %llu/%llu, expected %llu/%llu",
                    slots_limit_item_name(i), (unsigned long long) rl.rlim_cur,
                    (unsigned long long) rl.rlim_max, (unsigned long long) soft, (unsigned long long) hard);
        return 0;
}

/*
 * Lowering a limit is always allowed by the kernel; valgrind virtualizes
 * RLIMIT_NOFILE and refuses any other hard limit.  Probes by lowering by one.
 */
static bool nofile_settable(void)
{
        struct rlimit rl;

        if (getrlimit(RLIMIT_NOFILE, &rl) < 0 || rl.rlim_max < 2)
                return false;
        rl.rlim_max--;
        if (rl.rlim_cur > rl.rlim_max)
                rl.rlim_cur = rl.rlim_max;
        if (setrlimit(RLIMIT_NOFILE, &rl) == 0)
                return true;
        fprintf(stderr, "note: nofile cannot be changed here (valgrind?); not checked\n");
        return false;
}

/* Lowers every item below its current hard limit (allowed for anyone) and sets nice 19. */
static int child_apply_all(void)
{
        struct slots_limits l;
        rlim_t want_soft[SLOTS_LIMIT_MAX_ITEM], want_hard[SLOTS_LIMIT_MAX_ITEM];
        enum slots_limit_item failed = SLOTS_LIMIT_MAX_ITEM;
        int r;

        bool nofile = nofile_settable();

        memset(&l, 0, sizeof(l));
        for (int i = 0; i < SLOTS_LIMIT_NICE; i++) {
                struct rlimit cur;

                if (i == SLOTS_LIMIT_NOFILE && !nofile)
                        continue;
                /* distinct values per item, so a mix-up of resources shows */
                rlim_t hard = 4000 + 100 * (rlim_t) i, soft = hard - 7;

                /* room for the child itself, and for its log file */
                if (i == SLOTS_LIMIT_AS || i == SLOTS_LIMIT_DATA || i == SLOTS_LIMIT_STACK ||
                    i == SLOTS_LIMIT_FSIZE)
                        hard = (rlim_t) (i + 1) << 30, soft = hard / 2;
                CHILD_CHECK(getrlimit(resource_of(i), &cur) == 0, "getrlimit: %m");
                if (hard > cur.rlim_max)
                        hard = cur.rlim_max;
                if (soft > hard)
                        soft = hard;
                want_soft[i] = soft;
                want_hard[i] = hard;
                set_limit(&l, i, soft, hard);
        }
        l.item[SLOTS_LIMIT_NICE] = (struct slots_limit){ .set = true, .nice = 19 };
        r = slots_limits_apply(&l, &failed);
        CHILD_CHECK(r == 0, "apply: %s (item %d)", strerror(-r), failed);
        for (int i = 0; i < SLOTS_LIMIT_NICE; i++)
                if (l.item[i].set && check_rlimit(i, want_soft[i], want_hard[i]))
                        return 1;
        errno = 0;
        CHILD_CHECK(getpriority(PRIO_PROCESS, 0) == 19 && errno == 0, "nice is %d, expected 19",
                    getpriority(PRIO_PROCESS, 0));
        return 0;
}

static void test_apply_all(void **state)
{
        (void) state;
        in_child(child_apply_all);
}

/* Only set items are touched. */
static int child_apply_some(void)
{
        struct slots_limits l;
        struct rlimit before_core, before_as;

        memset(&l, 0, sizeof(l));
        CHILD_CHECK(getrlimit(RLIMIT_CORE, &before_core) == 0 && getrlimit(RLIMIT_AS, &before_as) == 0, "getrlimit");
        set_limit(&l, SLOTS_LIMIT_CPU, 3300, 4400);
        CHILD_CHECK(slots_limits_apply(&l, NULL) == 0, "apply: %m");
        if (check_rlimit(SLOTS_LIMIT_CPU, 3300, 4400) || check_rlimit(SLOTS_LIMIT_CORE, before_core.rlim_cur,
                                                                      before_core.rlim_max) ||
            check_rlimit(SLOTS_LIMIT_AS, before_as.rlim_cur, before_as.rlim_max))
                return 1;
        /* nothing set: nothing done */
        memset(&l, 0, sizeof(l));
        CHILD_CHECK(slots_limits_apply(&l, NULL) == 0, "empty apply: %m");
        return check_rlimit(SLOTS_LIMIT_CPU, 3300, 4400);
}

static void test_apply_some(void **state)
{
        (void) state;
        in_child(child_apply_some);
}

/* nofile "unlimited" means the kernel's ceiling, fs.nr_open (raising a hard limit needs root). */
static int child_nofile_unlimited(void)
{
        struct slots_limits l;
        rlim_t ceil = nr_open();

        CHILD_CHECK(ceil > 0, "cannot read /proc/sys/fs/nr_open");
        memset(&l, 0, sizeof(l));
        set_limit(&l, SLOTS_LIMIT_NOFILE, INF, INF);
        CHILD_CHECK(slots_limits_apply(&l, NULL) == 0, "apply nofile unlimited: %m");
        if (check_rlimit(SLOTS_LIMIT_NOFILE, ceil, ceil))
                return 1;
        set_limit(&l, SLOTS_LIMIT_NOFILE, 1024, INF);
        CHILD_CHECK(slots_limits_apply(&l, NULL) == 0, "apply nofile 1024/unlimited: %m");
        return check_rlimit(SLOTS_LIMIT_NOFILE, 1024, ceil);
}

/* Raising a hard limit needs CAP_SYS_RESOURCE (a container's root may lack it). */
static bool have_cap_sys_resource(void)
{
        char line[256];
        unsigned long long eff = 0;
        bool found = false;
        FILE *f = fopen("/proc/self/status", "r");

        if (!f)
                return false;
        while (fgets(line, sizeof(line), f))
                if (sscanf(line, "CapEff: %llx", &eff) == 1) {
                        found = true;
                        break;
                }
        fclose(f);
        return found && (eff & (1ULL << 24 /* CAP_SYS_RESOURCE */));
}

static void test_apply_nofile_unlimited(void **state)
{
        (void) state;
        if (!have_cap_sys_resource()) {
                print_message("skipped: raising nofile to fs.nr_open needs CAP_SYS_RESOURCE\n");
                skip();
        }
        in_child(child_nofile_unlimited);
}

/* As root, the child first becomes nobody so that raising a hard limit is refused. */
static int drop_to_nobody(void)
{
        if (geteuid() != 0)
                return 0;
        CHILD_CHECK(setgroups(0, NULL) == 0 && setgid(65534) == 0 && setuid(65534) == 0, "drop: %m");
        CHILD_CHECK(getuid() == 65534 && geteuid() == 65534 && getegid() == 65534, "drop did not stick");
        return 0;
}

/* nproc is lowered first (applied), then nofile's hard limit raised (refused): failed = nofile. */
static int child_apply_fails_nofile(void)
{
        struct slots_limits l;
        struct rlimit nofile, nproc;
        enum slots_limit_item failed = SLOTS_LIMIT_MAX_ITEM;
        rlim_t np;
        int r;

        if (drop_to_nobody())
                return 1;
        CHILD_CHECK(getrlimit(RLIMIT_NOFILE, &nofile) == 0 && getrlimit(RLIMIT_NPROC, &nproc) == 0, "getrlimit");
        if (nofile.rlim_max == INF) {
                printf("skipped: the hard nofile limit is unlimited, so raising it cannot be refused\n");
                return 77;
        }
        np = nproc.rlim_max < 5000 ? nproc.rlim_max : 5000;
        memset(&l, 0, sizeof(l));
        set_limit(&l, SLOTS_LIMIT_NPROC, np, np);
        set_limit(&l, SLOTS_LIMIT_NOFILE, nofile.rlim_cur, nofile.rlim_max + 1);
        set_limit(&l, SLOTS_LIMIT_CORE, 0, 0);
        r = slots_limits_apply(&l, &failed);
        CHILD_CHECK(r == -EPERM, "apply: expected -EPERM, got %d", r);
        CHILD_CHECK(failed == SLOTS_LIMIT_NOFILE, "failed item is %s, expected nofile",
                    slots_limit_item_name(failed));
        /* items before it stay applied, the failing one is unchanged */
        if (check_rlimit(SLOTS_LIMIT_NPROC, np, np) ||
            check_rlimit(SLOTS_LIMIT_NOFILE, nofile.rlim_cur, nofile.rlim_max))
                return 1;
        return 0;
}

static void test_apply_fails_nofile(void **state)
{
        (void) state;
        in_child(child_apply_fails_nofile);
}

/* An unprivileged process may not lower its nice value below the current one. */
static int child_apply_fails_nice(void)
{
        struct slots_limits l;
        enum slots_limit_item failed = SLOTS_LIMIT_MAX_ITEM;
        int r;

        if (drop_to_nobody())
                return 1;
        CHILD_CHECK(setpriority(PRIO_PROCESS, 0, 10) == 0, "setpriority 10: %m");
        memset(&l, 0, sizeof(l));
        set_limit(&l, SLOTS_LIMIT_CORE, 0, 0);
        l.item[SLOTS_LIMIT_NICE] = (struct slots_limit){ .set = true, .nice = -5 };
        r = slots_limits_apply(&l, &failed);
        CHILD_CHECK(r == -EACCES || r == -EPERM, "apply: expected -EACCES, got %d", r);
        CHILD_CHECK(failed == SLOTS_LIMIT_NICE, "failed item is %s, expected nice",
                    slots_limit_item_name(failed));
        errno = 0;
        CHILD_CHECK(getpriority(PRIO_PROCESS, 0) == 10, "nice changed to %d", getpriority(PRIO_PROCESS, 0));
        return check_rlimit(SLOTS_LIMIT_CORE, 0, 0);
}

static void test_apply_fails_nice(void **state)
{
        (void) state;
        in_child(child_apply_fails_nice);
}

/* soft above hard reaches the kernel only through a hand-made struct: EINVAL, item named. */
static int child_apply_soft_above_hard(void)
{
        struct slots_limits l;
        enum slots_limit_item failed = SLOTS_LIMIT_MAX_ITEM;
        int r;

        memset(&l, 0, sizeof(l));
        set_limit(&l, SLOTS_LIMIT_CPU, 20, 10);
        r = slots_limits_apply(&l, &failed);
        CHILD_CHECK(r == -EINVAL, "apply: expected -EINVAL, got %d", r);
        CHILD_CHECK(failed == SLOTS_LIMIT_CPU, "failed item is %s, expected cpu", slots_limit_item_name(failed));
        return 0;
}

static void test_apply_soft_above_hard(void **state)
{
        (void) state;
        in_child(child_apply_soft_above_hard);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_parse),
                cmocka_unit_test(test_parse_several),
                cmocka_unit_test(test_parse_not_object),
                cmocka_unit_test(test_parse_at_root),
                cmocka_unit_test(test_item_names),
                cmocka_unit_test(test_overlay),
                cmocka_unit_test(test_apply_all),
                cmocka_unit_test(test_apply_some),
                cmocka_unit_test(test_apply_nofile_unlimited),
                cmocka_unit_test(test_apply_fails_nofile),
                cmocka_unit_test(test_apply_fails_nice),
                cmocka_unit_test(test_apply_soft_above_hard),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
