/*
 * The config (slots.conf(5)): defaults, strictness, cross-key rules, each error
 * with the exact line and column and a reason that names the key.
 */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "config.h"
#include "fsutil.h"
#include "unit.h"

/* A table row that does not hold: reported, and the table goes on. */
#define FILE_NAME "test.conf"

/*
 * Layout of most texts: lines 1-3 are "{", service, slots; the key under test is
 * on line 4, starting at column 3, its value at column strlen(key) + 7.
 */
#define HEAD "{\n  \"service\": \"video\",\n  \"slots\": 8,\n"
#define ONE(k, v) HEAD "  \"" k "\": " v "\n}\n"
/* limits: lines 1-4 as above ("limits": {), the entries from line 5, at column 5. */
#define LIM(body) HEAD "  \"limits\": {\n" body "  }\n}\n"
/* slice: the same layout as limits ("slice": { on line 4, the entries from line 5, at column 5). */
#define SLC(body) HEAD "  \"slice\": {\n" body "  }\n}\n"
/* docs_root on line 4, private_paths on line 5, shared_dirs on line 6 ('[' at column 18). */
#define SHARED(priv, shared) \
        HEAD "  \"docs_root\": \"/srv/docs\",\n  \"private_paths\": " priv ",\n  \"shared_dirs\": " shared "\n}\n"

/* docs_root on line 4, user_tree on line 5 (its value at column 16), shared_dirs or private_paths on line 6. */
#define TREE(tree, shared) \
        HEAD "  \"docs_root\": \"/srv/docs\",\n  \"user_tree\": " tree ",\n  \"shared_dirs\": " shared "\n}\n"
#define TREEP(tree, priv) \
        HEAD "  \"docs_root\": \"/srv/docs\",\n  \"user_tree\": " tree ",\n  \"private_paths\": " priv "\n}\n"

#define C32 "abcdefghijklmnopqrstuvwxyz012345"

static const struct bad {
        const char *what;
        const char *text;
        unsigned line, column;
        const char *needle;     /* the reason must contain it: the key (or entry) at fault */
} bad[] = {
        /* JSON itself */
        { "empty text", "", 1, 1, "expected" },
        { "not an object", "[]\n", 1, 1, "object" },
        { "trailing comma", HEAD "}\n", 4, 1, "expected" },
        { "missing comma", "{\n  \"service\": \"video\"\n  \"slots\": 8\n}\n", 3, 9, "expected" },
        { "garbage after", "{\n  \"service\": \"video\",\n  \"slots\": 8\n}\n}\n", 5, 1, "end of file" },
        { "duplicate key", HEAD "  \"shell\": \"/bin/sh\",\n  \"shell\": \"/bin/sh\"\n}\n", 5, 9, "\"shell\"" },
        { "duplicate service", "{\n  \"service\": \"a\",\n  \"slots\": 8,\n  \"service\": \"b\"\n}\n", 4, 11,
          "\"service\"" },
        { "integer too big", ONE("uid_min", "99999999999999999999"), 4, 33, "too big" },
        { "invalid UTF-8", ONE("shell", "\"/bin/\xff\""), 4, 17, "0xff" },

        /* unknown keys */
        { "unknown key", ONE("shells", "\"/bin/sh\""), 4, 3, "shells" },
        { "key case matters", ONE("Shell", "\"/bin/sh\""), 4, 3, "Shell" },
        { "unknown key, empty", ONE("", "1"), 4, 3, "unknown key \"\"" },

        /* every key with a wrong type */
        { "service number", "{\n  \"service\": 5,\n  \"slots\": 8\n}\n", 2, 14, "service" },
        { "service null", "{\n  \"service\": null,\n  \"slots\": 8\n}\n", 2, 14, "service" },
        { "slots string", "{\n  \"service\": \"video\",\n  \"slots\": \"8\"\n}\n", 3, 12, "slots" },
        { "slots real", "{\n  \"service\": \"video\",\n  \"slots\": 8.0\n}\n", 3, 12, "slots" },
        { "slots bool", "{\n  \"service\": \"video\",\n  \"slots\": true\n}\n", 3, 12, "slots" },
        { "service_group bool", ONE("service_group", "true"), 4, 20, "service_group" },
        { "prefix array", ONE("prefix", "[]"), 4, 13, "prefix" },
        { "uid_min string", ONE("uid_min", "\"1000\""), 4, 14, "uid_min" },
        { "uid_max real", ONE("uid_max", "1.5"), 4, 14, "uid_max" },
        { "shell number", ONE("shell", "1"), 4, 12, "shell" },
        { "app_root null", ONE("app_root", "null"), 4, 15, "app_root" },
        { "launcher object", ONE("launcher", "{}"), 4, 15, "launcher" },
        { "docs_root bool", ONE("docs_root", "false"), 4, 16, "docs_root" },
        { "user_tree number", ONE("user_tree", "3"), 4, 16, "user_tree" },
        { "shared_dirs string", ONE("shared_dirs", "\"pub\""), 4, 18, "shared_dirs" },
        { "shared_dirs entry number", ONE("shared_dirs", "[5]"), 4, 19, "shared_dirs" },
        { "slots_root number", ONE("slots_root", "1"), 4, 17, "slots_root" },
        { "private_paths object", ONE("private_paths", "{\"a\": 1}"), 4, 20, "private_paths" },
        { "private_paths entry null", ONE("private_paths", "[\"/a\", null]"), 4, 27, "private_paths" },
        { "table array", ONE("table", "[]"), 4, 12, "table" },
        { "slotctl_config number", ONE("slotctl_config", "2"), 4, 21, "slotctl_config" },
        { "limits array", ONE("limits", "[]"), 4, 13, "limits" },
        { "limits.default array", ONE("limits", "{\"default\": []}"), 4, 25, "default" },
        { "limit bool", ONE("limits", "{\"default\": {\"nofile\": true}}"), 4, 36, "nofile" },

        /* required keys */
        { "no service", "{\n  \"slots\": 8\n}\n", 1, 1, "\"service\"" },
        { "no slots", "{\n  \"service\": \"video\"\n}\n", 1, 1, "\"slots\"" },
        { "nothing", "{}", 1, 1, "\"service\"" },

        /* pool size: 1 and 9999 are fine (see the valid table) */
        { "slots 0", "{\n  \"service\": \"video\",\n  \"slots\": 0\n}\n", 3, 12, "slots" },
        { "slots 10000", "{\n  \"service\": \"video\",\n  \"slots\": 10000\n}\n", 3, 12, "slots" },
        { "slots -1", "{\n  \"service\": \"video\",\n  \"slots\": -1\n}\n", 3, 12, "slots" },

        /* names */
        { "service upper case", "{\n  \"service\": \"Video\",\n  \"slots\": 8\n}\n", 2, 14, "service" },
        { "service leading digit", "{\n  \"service\": \"1video\",\n  \"slots\": 8\n}\n", 2, 14, "service" },
        { "service empty", "{\n  \"service\": \"\",\n  \"slots\": 8\n}\n", 2, 14, "service" },
        { "service 33 chars", "{\n  \"service\": \"" C32 "6\",\n  \"slots\": 8\n}\n", 2, 14, "service" },
        { "service with /", "{\n  \"service\": \"a/b\",\n  \"slots\": 8\n}\n", 2, 14, "service" },
        { "service_group space", ONE("service_group", "\"a b\""), 4, 20, "service_group" },
        { "prefix 27 chars", ONE("prefix", "\"abcdefghijklmnopqrstuvwxyz0\""), 4, 13, "prefix" },

        /* relative where absolute is needed */
        { "table relative", ONE("table", "\"etc/slots/slots.json\""), 4, 12, "table" },
        { "shell relative", ONE("shell", "\"nologin\""), 4, 12, "shell" },
        { "slots_root relative", ONE("slots_root", "\"var/lib/slots\""), 4, 17, "slots_root" },
        { "docs_root relative", ONE("docs_root", "\"srv/docs\""), 4, 16, "docs_root" },
        { "app_root empty", ONE("app_root", "\"\""), 4, 15, "app_root" },
        { "private_paths relative", ONE("private_paths", "[\"etc\"]"), 4, 21, "private_paths" },
        /* absolute where relative is needed */
        { "shared_dirs absolute", ONE("shared_dirs", "[\"/pub\"]"), 4, 19, "shared_dirs" },
        { "user_tree absolute", ONE("user_tree", "\"/u/{user}\""), 4, 16, "user_tree" },
        /* "..", ".", empty components, trailing slash */
        { "docs_root ..", ONE("docs_root", "\"/srv/../etc\""), 4, 16, "docs_root" },
        { "slotctl_config ..", ONE("slotctl_config", "\"/etc/slots/../shadow\""), 4, 21, "slotctl_config" },
        { "user_tree ..", ONE("user_tree", "\"_users/../{user}\""), 4, 16, "user_tree" },
        { "shared_dirs ..", ONE("shared_dirs", "[\"pub/..\"]"), 4, 19, "shared_dirs" },
        { "private_paths ..", ONE("private_paths", "[\"/srv/docs/..\"]"), 4, 21, "private_paths" },
        { "app_root .", ONE("app_root", "\"/srv/./app\""), 4, 15, "app_root" },
        { "slots_root //", ONE("slots_root", "\"/var/lib//slots\""), 4, 17, "slots_root" },
        { "table trailing /", ONE("table", "\"/etc/slots/\""), 4, 12, "table" },
        { "launcher ..", ONE("launcher", "\"..\""), 4, 15, "launcher" },
        { "launcher with /", ONE("launcher", "\"bin/run\""), 4, 15, "launcher" },
        { "user_tree without {user}", ONE("user_tree", "\"_users\""), 4, 16, "user_tree" },

        /* uid range */
        { "uid_min alone", ONE("uid_min", "1000"), 4, 3, "uid_max" },
        { "uid_max alone", ONE("uid_max", "1100"), 4, 3, "uid_min" },
        { "uid_min 0", HEAD "  \"uid_min\": 0,\n  \"uid_max\": 1100\n}\n", 4, 14, "uid_min" },
        { "uid_min negative", HEAD "  \"uid_min\": -5,\n  \"uid_max\": 1100\n}\n", 4, 14, "uid_min" },
        { "uid_max (uid_t)-1", HEAD "  \"uid_min\": 1000,\n  \"uid_max\": 4294967295\n}\n", 5, 14, "uid_max" },
        { "uid_max below uid_min", HEAD "  \"uid_min\": 2000,\n  \"uid_max\": 1000\n}\n", 5, 14, "uid_max" },
        /* 8 slots and the shared group need 9 ids: 1000..1007 is one short */
        { "uid range too small", HEAD "  \"uid_min\": 1000,\n  \"uid_max\": 1007\n}\n", 5, 14, "uid_max" },
        /* uid_base: 8 slots end at uid_base + 8, which may be 4294967293 at most */
        { "uid_base 0", ONE("uid_base", "0"), 4, 15, "uid_base" },
        { "uid_base string", ONE("uid_base", "\"60000\""), 4, 15, "uid_base" },
        { "uid_base one past the largest", ONE("uid_base", "4294967286"), 4, 15, "uid_base" },
        { "uid_base with a uid range",
          HEAD "  \"uid_min\": 1000,\n  \"uid_max\": 1100,\n  \"uid_base\": 60000\n}\n", 6, 3, "uid_base" },

        /* shared folders and private paths */
        { "shared_dirs without docs_root", ONE("shared_dirs", "[\"pub\"]"), 4, 3, "docs_root" },
        { "private inside shared", SHARED("[\"/srv/docs/pub/.env\"]", "[\"common\", \"pub\"]"), 6, 29,
          "shared folder /srv/docs/pub" },
        { "private is shared", SHARED("[\"/srv/docs/pub\"]", "[\"common\", \"pub\"]"), 6, 29,
          "shared folder /srv/docs/pub" },
        { "shared inside private", SHARED("[\"/srv/docs\"]", "[\"common\", \"pub\"]"), 6, 19,
          "shared folder /srv/docs/common" },
        { "private /", SHARED("[\"/\"]", "[\"common\"]"), 6, 19, "shared folder /srv/docs/common" },
        { "docs_root /", HEAD "  \"docs_root\": \"/\",\n  \"private_paths\": [\"/pub/.env\"],\n"
                         "  \"shared_dirs\": [\"pub\"]\n}\n", 6, 19, "shared folder /pub overlaps" },

        /* user_tree that can name a shared folder or a private path (issue 13) */
        { "user_tree {user} is a shared folder", TREE("\"{user}\"", "[\"Workflow\"]"), 5, 16,
          "shared folder \"Workflow\"" },
        { "user_tree inside a shared folder", TREE("\"Workflow/{user}\"", "[\"pub\", \"Workflow\"]"), 5, 16,
          "shared folder \"Workflow\"" },
        { "shared folder inside a user tree", TREE("\"u-{user}\"", "[\"u-alice/pub\"]"), 5, 16,
          "shared folder \"u-alice/pub\"" },
        { "user_tree {user}.d names a shared x.d", TREE("\"{user}.d\"", "[\"team.d\"]"), 5, 16, "team.d" },
        { "user_tree can name a private path", TREEP("\"_users/{user}\"", "[\"/srv/docs/_users/admin\"]"), 5,
          16, "private path /srv/docs/_users/admin" },
        { "a private path holds the user trees", TREEP("\"_users/{user}\"", "[\"/srv/docs/_users\"]"), 5, 16,
          "private path /srv/docs/_users" },
        { "docs_root inside a private path", TREEP("\"_users/{user}\"", "[\"/srv\"]"), 5, 16, "inside the private" },

        /* limits */
        { "limit unknown item", LIM("    \"default\": {\"nproc\": 10, \"foo\": 1}\n"), 5, 30, "\"foo\"" },
        { "limit K on nofile", LIM("    \"default\": {\"nofile\": \"1K\"}\n"), 5, 27, "\"nofile\"" },
        { "limit bad unit KB", LIM("    \"default\": {\"as\": \"1KB\"}\n"), 5, 23, "\"as\"" },
        { "limit soft > hard", LIM("    \"default\": {\"cpu\": {\"soft\": 120, \"hard\": 60}}\n"), 5, 24,
          "\"cpu\"" },
        { "slot limit soft > hard", LIM("    \"slot02\": {\"cpu\": {\"soft\": 120, \"hard\": 60}}\n"), 5, 23,
          "\"cpu\"" },
        { "limit unknown soft/hard key", LIM("    \"default\": {\"cpu\": {\"soft\": 1, \"max\": 2}}\n"), 5, 36,
          "\"max\"" },
        { "limit nice 20", LIM("    \"slot01\": {\"nice\": 20}\n"), 5, 24, "\"nice\"" },
        { "limits slot09 outside 8", LIM("    \"slot09\": {\"nofile\": 10}\n"), 5, 5, "slot09" },
        { "limits slot9999 outside 8", LIM("    \"slot9999\": {\"nofile\": 10}\n"), 5, 5, "slot9999" },
        { "limits outside, second line",
          LIM("    \"default\": {\"nofile\": 10},\n    \"slot09\": {\"nofile\": 10}\n"), 6, 5, "slot09" },
        { "limits key slot1", LIM("    \"slot1\": {\"nofile\": 10}\n"), 5, 5, "\"slot1\"" },
        { "limits key slot00", LIM("    \"slot00\": {\"nofile\": 10}\n"), 5, 5, "\"slot00\"" },
        { "limits key defaults", LIM("    \"defaults\": {\"nofile\": 10}\n"), 5, 5, "\"defaults\"" },
        /* slice: systemd's syntax, each value at its own column */
        { "slice array", ONE("slice", "[]"), 4, 12, "slice" },
        { "slice.pool array", ONE("slice", "{\"pool\": []}"), 4, 21, "pool" },
        { "slice key Pool", SLC("    \"Pool\": {}\n"), 5, 5, "\"Pool\"" },
        { "slice key slot1", SLC("    \"slot1\": {}\n"), 5, 5, "\"slot1\"" },
        { "slice slot09 outside 8", SLC("    \"slot09\": {\"TasksMax\": 10}\n"), 5, 5, "slot09" },
        { "slice unknown property", SLC("    \"default\": {\"MemoryLimit\": 1}\n"), 5, 17, "MemoryLimit" },
        { "slice property case", SLC("    \"default\": {\"memorymax\": 1}\n"), 5, 17, "memorymax" },
        { "MemoryMax 2GB", SLC("    \"default\": {\"MemoryMax\": \"2GB\"}\n"), 5, 30, "MemoryMax" },
        { "MemoryMax 1.5G", SLC("    \"default\": {\"MemoryMax\": \"1.5G\"}\n"), 5, 30, "MemoryMax" },
        { "MemoryMax negative", SLC("    \"default\": {\"MemoryMax\": -1}\n"), 5, 30, "MemoryMax" },
        { "MemoryMax space", SLC("    \"default\": {\"MemoryMax\": \" 2G\"}\n"), 5, 30, "MemoryMax" },
        { "MemoryMax lower k", SLC("    \"default\": {\"MemoryMax\": \"2k\"}\n"), 5, 30, "MemoryMax" },
        { "MemoryMax max", SLC("    \"default\": {\"MemoryMax\": \"max\"}\n"), 5, 30, "MemoryMax" },
        { "MemoryMax 0%", SLC("    \"default\": {\"MemoryMax\": \"0%\"}\n"), 5, 30, "MemoryMax" },
        { "MemoryMax overflow", SLC("    \"default\": {\"MemoryMax\": \"16777216T\"}\n"), 5, 30, "MemoryMax" },
        { "MemoryMax bool", SLC("    \"default\": {\"MemoryMax\": true}\n"), 5, 30, "MemoryMax" },
        { "MemoryHigh 101%", SLC("    \"default\": {\"MemoryHigh\": \"101%\"}\n"), 5, 31, "MemoryHigh" },
        { "MemorySwapMax 50%", SLC("    \"default\": {\"MemorySwapMax\": \"50%\"}\n"), 5, 34, "MemorySwapMax" },
        { "TasksMax 0", SLC("    \"default\": {\"TasksMax\": 0}\n"), 5, 29, "TasksMax" },
        { "TasksMax 1K", SLC("    \"default\": {\"TasksMax\": \"1K\"}\n"), 5, 29, "TasksMax" },
        { "CPUQuota a number", SLC("    \"pool\": {\"CPUQuota\": 50}\n"), 5, 26, "CPUQuota" },
        { "CPUQuota 0%", SLC("    \"default\": {\"CPUQuota\": \"0%\"}\n"), 5, 29, "CPUQuota" },
        { "CPUQuota 1.5%", SLC("    \"default\": {\"CPUQuota\": \"1.5%\"}\n"), 5, 29, "CPUQuota" },
        { "CPUQuota infinity", SLC("    \"default\": {\"CPUQuota\": \"infinity\"}\n"), 5, 29, "CPUQuota" },
        { "CPUWeight 0", SLC("    \"default\": {\"CPUWeight\": 0}\n"), 5, 30, "CPUWeight" },
        { "CPUWeight 10001", SLC("    \"default\": {\"CPUWeight\": 10001}\n"), 5, 30, "CPUWeight" },
        { "IOWeight a string", SLC("    \"default\": {\"IOWeight\": \"100\"}\n"), 5, 29, "IOWeight" },
        { "slot slice second line", SLC("    \"slot02\": {},\n    \"slot03\": {\"TasksMax\": \"-5\"}\n"), 6, 28,
          "TasksMax" },
        /* the executor keys: the service is never a slot, -g never a slot's or the table's group */
        { "service slot03", "{\n  \"service\": \"slot03\",\n  \"slots\": 8\n}\n", 2, 14, "slot name" },
        { "service slot09 beyond the pool", "{\n  \"service\": \"slot09\",\n  \"slots\": 8\n}\n", 2, 14,
          "slot name" },
        { "run_as_group slot02", ONE("run_as_group", "\"slot02\""), 4, 19, "run_as_group" },
        { "run_as_group shared", ONE("run_as_group", "\"slotshared\""), 4, 19, "run_as_group" },
        { "run_as_group the service", ONE("run_as_group", "\"video\""), 4, 19, "run_as_group" },
        { "run_as_group the table's",
          HEAD "  \"run_as_group\": \"readers\",\n  \"service_group\": \"readers\"\n}\n", 4, 19, "run_as_group" },
        { "run_as_group upper case", ONE("run_as_group", "\"Agents\""), 4, 19, "run_as_group" },
        { "slotctl relative", ONE("slotctl", "\"bin/slotctl\""), 4, 14, "slotctl" },
        { "sudo_env string", ONE("sudo_env", "\"PATH\""), 4, 15, "sudo_env" },
        { "sudo_env digit first", ONE("sudo_env", "[\"PATH\", \"1X\"]"), 4, 24, "entry 2" },
        { "sudo_env bare *", ONE("sudo_env", "[\"*\"]"), 4, 16, "entry 1" },
        { "sudo_env = in name", ONE("sudo_env", "[\"A=B\"]"), 4, 16, "entry 1" },
        { "sudo_env * inside", ONE("sudo_env", "[\"A*B\"]"), 4, 16, "entry 1" },
        { "sudo_env space", ONE("sudo_env", "[\"A B\"]"), 4, 16, "entry 1" },
        { "probe empty", ONE("probe", "[]"), 4, 12, "probe" },
        { "probe not the launcher", ONE("probe", "[\"/bin/sh\", \"-c\"]"), 4, 13, "{launcher}" },
        { "probe number", ONE("probe", "[\"{launcher}\", 5]"), 4, 27, "entry 2" },
        /* accounts: one of two words, exactly */
        { "accounts ldap", ONE("accounts", "\"ldap\""), 4, 15, "\"directory\"" },
        { "accounts Directory", ONE("accounts", "\"Directory\""), 4, 15, "\"local\"" },
        { "accounts true", ONE("accounts", "true"), 4, 15, "accounts" },
        { "accounts empty", ONE("accounts", "\"\""), 4, 15, "accounts" },
};

static void test_bad(void **state)
{
        int failures = 0;

        (void) state;
        for (size_t i = 0; i < N_ELEM(bad); i++) {
                const struct bad *b = &bad[i];
                struct slots_config *c = NULL;
                struct slots_error e;
                int r;

                slots_error_clear(&e);
                r = slots_config_parse(b->text, strlen(b->text), FILE_NAME, &c, &e);
                if (r != -EBADMSG)
                        ROW_FAIL("%s: expected -EBADMSG, got %d (%s)", b->what, r, e.reason);
                else if (c)
                        ROW_FAIL("%s: a config was returned on failure", b->what);
                else if (strcmp(e.object, FILE_NAME) != 0)
                        ROW_FAIL("%s: the error names \"%s\", not the file", b->what, e.object);
                else if (e.line != b->line || e.column != b->column)
                        ROW_FAIL("%s: reported at %u:%u, expected %u:%u (%s)", b->what, e.line, e.column,
                                 b->line, b->column, e.reason);
                else if (!strstr(e.reason, b->needle))
                        ROW_FAIL("%s: reason \"%s\" does not name %s", b->what, e.reason, b->needle);
                if (r == 0)
                        slots_config_free(c);
        }
        if (failures)
                fail_msg("%d of %zu rows failed", failures, N_ELEM(bad));
}

/* The other side of each limit above: accepted. */
static const struct good {
        const char *what;
        const char *text;
} good[] = {
        { "minimal", "{\"service\": \"video\", \"slots\": 8}" },
        { "slots 1", "{\"service\": \"video\", \"slots\": 1}" },
        { "slots 9999", "{\"service\": \"video\", \"slots\": 9999}" },
        { "service 32 chars", "{\"service\": \"" C32 "\", \"slots\": 8}" },
        { "service _svc", "{\"service\": \"_svc\", \"slots\": 8}" },
        { "service with - and digits", "{\"service\": \"video-studio2\", \"slots\": 8}" },
        { "prefix 26 chars", ONE("prefix", "\"abcdefghijklmnopqrstuvwxyz\"") },
        { "uid range exactly big enough", HEAD "  \"uid_min\": 1000,\n  \"uid_max\": 1008\n}\n" },
        { "uid range 1..(uid_t)-2", HEAD "  \"uid_min\": 1,\n  \"uid_max\": 4294967294\n}\n" },
        { "uid_base 1", ONE("uid_base", "1") },
        { "uid_base the largest", ONE("uid_base", "4294967285") },
        { "shell /", ONE("shell", "\"/\"") },
        { "launcher plain name", ONE("launcher", "\"run-app.sh\"") },
        { "launcher hidden", ONE("launcher", "\".run\"") },
        { "user_tree {user} twice", ONE("user_tree", "\"u/{user}/x/{user}\"") },
        { "shared_dirs empty", ONE("shared_dirs", "[]") },
        /* the other side of the user_tree rule: no user id can make these collide */
        { "user_tree _users/{user} next to shared", TREE("\"_users/{user}\"", "[\"Workflow\", \"_usersx\"]") },
        { "user_tree u-{user}: u- is no user tree", TREE("\"u-{user}\"", "[\"u-\"]") },
        { "user_tree {user}: .hidden is no user id", TREE("\"{user}\"", "[\".hidden\", \"-x\"]") },
        { "user_tree {user}.d next to pub", TREE("\"{user}.d\"", "[\"pub\"]") },
        { "private path next to the user trees", TREEP("\"_users/{user}\"", "[\"/srv/docs/_users.env\"]") },
        { "private_paths empty", ONE("private_paths", "[]") },
        { "limits empty", ONE("limits", "{}") },
        { "slice empty", ONE("slice", "{}") },
        { "slice every property at its edge",
          SLC("    \"pool\": {\"MemoryMax\": \"100%\", \"MemoryHigh\": \"1%\", \"MemorySwapMax\": 0, "
              "\"TasksMax\": \"infinity\", \"CPUQuota\": \"100000%\", \"CPUWeight\": 10000, "
              "\"IOWeight\": 1},\n    \"slot08\": {\"MemoryMax\": \"4T\", \"TasksMax\": 1, \"CPUQuota\": \"1%\", "
              "\"CPUWeight\": 1, \"IOWeight\": 10000}\n") },
        { "limits slot08 in the pool of 8", LIM("    \"slot08\": {\"nofile\": 10}\n") },
        { "limits nice -20", LIM("    \"default\": {\"nice\": -20}\n") },
        { "limits nice 19", LIM("    \"default\": {\"nice\": 19}\n") },
        { "limits soft == hard", LIM("    \"default\": {\"cpu\": {\"soft\": 60, \"hard\": 60}}\n") },
        /* prefix boundary: /srv/docs/pub is not under /srv/docs/public, nor under /srv/docs-private */
        { "private next to shared", SHARED("[\"/srv/docs/public\", \"/srv/docs-private\", \"/srv/doc\"]",
                                           "[\"pub\"]") },
        { "private elsewhere", SHARED("[\"/srv/app/.env\"]", "[\"pub\", \"a/b\"]") },
        { "whitespace around", "\n\t {\"service\": \"video\", \"slots\": 8} \n\n" },
        { "service slot1 (no slot name)", "{\"service\": \"slot1\", \"slots\": 8}" },
        { "service slots", "{\"service\": \"slots\", \"slots\": 8}" },
        { "run_as_group of its own", ONE("run_as_group", "\"video-agents\"") },
        { "sudo_env empty", ONE("sudo_env", "[]") },
        { "sudo_env prefix and names", ONE("sudo_env", "[\"PATH\", \"_X\", \"A1*\", \"lower\"]") },
        { "probe launcher only", ONE("probe", "[\"{launcher}\"]") },
        { "slotctl absolute", ONE("slotctl", "\"/srv/app/current/bin/slotctl\"") },
};

static void test_good(void **state)
{
        (void) state;
        for (size_t i = 0; i < N_ELEM(good); i++) {
                struct slots_config *c = NULL;
                struct slots_error e;
                int r;

                slots_error_clear(&e);
                r = slots_config_parse(good[i].text, strlen(good[i].text), FILE_NAME, &c, &e);
                if (r != 0)
                        fail_msg("%s: refused: %u:%u: %s", good[i].what, e.line, e.column, e.reason);
                assert_non_null(c);
                slots_config_free(c);
        }
}

static void test_minimal_defaults(void **state)
{
        static const char text[] = "{\"service\": \"video\", \"slots\": 8}";
        struct slots_config *c = NULL;
        struct slots_error e;

        (void) state;
        assert_int_equal(slots_config_parse(text, strlen(text), FILE_NAME, &c, &e), 0);
        assert_string_equal(c->path, FILE_NAME);
        assert_string_equal(c->service, "video");
        assert_null(c->service_group);
        assert_string_equal(c->prefix, "slot");
        assert_int_equal(c->slots, 8);
        assert_false(c->uid_range_set);
        assert_string_equal(c->shell, "/usr/sbin/nologin");
        assert_null(c->app_root);
        assert_null(c->launcher);
        assert_null(c->docs_root);
        assert_string_equal(c->user_tree, "_users/{user}");
        assert_string_equal(c->slots_root, "/var/lib/slots/video");
        assert_int_equal(c->n_shared_dirs, 0);
        assert_int_equal(c->n_private_paths, 0);
        assert_string_equal(c->table, "/etc/slots/slots.json");
        assert_string_equal(c->slotctl_config, "/etc/slots/slotctl.json");
        assert_false(c->has_limits);
        for (int i = 0; i < SLOTS_LIMIT_MAX_ITEM; i++)
                assert_false(c->limits_default.item[i].set);
        assert_false(c->has_slice);
        assert_int_equal(c->n_slot_slice, 0);
        assert_null(c->slotctl);
        assert_null(c->run_as_group);
        assert_int_equal(c->n_sudo_env, 18);
        assert_string_equal(c->sudo_env[0], "PATH");
        assert_string_equal(c->sudo_env[17], "ANTHROPIC_*");
        assert_null(c->sudo_env[18]);
        assert_int_equal(c->n_probe, 2);
        assert_string_equal(c->probe[0], "{launcher}");
        assert_string_equal(c->probe[1], "/bin/pwd");
        assert_null(c->probe[2]);
        assert_false(c->accounts_in_directory);
        slots_config_free(c);
}

/* "accounts": the word chosen, and nothing else of the config changes with it. */
static void test_accounts(void **state)
{
        static const struct {
                const char *text;
                bool directory;
        } rows[] = {
                { ONE("accounts", "\"local\""), false },
                { ONE("accounts", "\"directory\""), true },
        };

        (void) state;
        for (size_t i = 0; i < N_ELEM(rows); i++) {
                struct slots_config *c = NULL;
                struct slots_error e;

                if (slots_config_parse(rows[i].text, strlen(rows[i].text), FILE_NAME, &c, &e) != 0)
                        fail_msg("row %zu: refused: %s", i, e.reason);
                assert_int_equal(c->accounts_in_directory, rows[i].directory);
                assert_int_equal(c->slots, 8);
                slots_config_free(c);
        }
}

static const char full_text[] =
        "{\n"
        "  \"service\": \"video-studio\",\n"
        "  \"service_group\": \"video-readers\",\n"
        "  \"prefix\": \"vs\",\n"
        "  \"slots\": 12,\n"
        "  \"uid_min\": 61000,\n"
        "  \"uid_max\": 61999,\n"
        "  \"shell\": \"/bin/bash\",\n"
        "  \"app_root\": \"/srv/app\",\n"
        "  \"launcher\": \"run-shell\",\n"
        "  \"docs_root\": \"/srv/docs\",\n"
        "  \"user_tree\": \"people/{user}/files\",\n"
        "  \"shared_dirs\": [\"common\", \"templates/2026\"],\n"
        "  \"slots_root\": \"/var/lib/vs\",\n"
        "  \"private_paths\": [\"/srv/app/.env\", \"/srv/docs/.browser\"],\n"
        "  \"table\": \"/etc/vs/table.json\",\n"
        "  \"slotctl_config\": \"/etc/vs/slotctl.json\",\n"
        "  \"limits\": {\n"
        "    \"default\": {\"nproc\": 200, \"nofile\": 1024, \"as\": \"2G\", \"cpu\": \"unlimited\"},\n"
        "    \"slot03\": {\"nofile\": {\"soft\": 2048, \"hard\": 4096}, \"nice\": 5},\n"
        "    \"slot12\": {\"core\": 0}\n"
        "  },\n"
        "  \"slice\": {\n"
        "    \"pool\": {\"MemoryMax\": \"8G\", \"CPUQuota\": \"400%\"},\n"
        "    \"default\": {\"MemoryMax\": \"2G\", \"TasksMax\": 256, \"CPUWeight\": 100},\n"
        "    \"slot03\": {\"MemoryMax\": \"infinity\", \"IOWeight\": 50},\n"
        "    \"slot12\": {\"TasksMax\": \"10%\"}\n"
        "  }\n"
        "}\n";

static void test_full(void **state)
{
        struct slots_config *c = NULL;
        struct slots_error e;

        (void) state;
        slots_error_clear(&e);
        if (slots_config_parse(full_text, strlen(full_text), FILE_NAME, &c, &e) != 0)
                fail_msg("%u:%u: %s", e.line, e.column, e.reason);
        assert_string_equal(c->service, "video-studio");
        assert_string_equal(c->service_group, "video-readers");
        assert_string_equal(c->prefix, "vs");
        assert_int_equal(c->slots, 12);
        assert_true(c->uid_range_set);
        assert_int_equal(c->uid_min, 61000);
        assert_int_equal(c->uid_max, 61999);
        assert_string_equal(c->shell, "/bin/bash");
        assert_string_equal(c->app_root, "/srv/app");
        assert_string_equal(c->launcher, "run-shell");
        assert_string_equal(c->docs_root, "/srv/docs");
        assert_string_equal(c->user_tree, "people/{user}/files");
        assert_int_equal(c->n_shared_dirs, 2);
        assert_string_equal(c->shared_dirs[0], "common");
        assert_string_equal(c->shared_dirs[1], "templates/2026");
        assert_string_equal(c->slots_root, "/var/lib/vs");
        assert_int_equal(c->n_private_paths, 2);
        assert_string_equal(c->private_paths[0], "/srv/app/.env");
        assert_string_equal(c->private_paths[1], "/srv/docs/.browser");
        assert_string_equal(c->table, "/etc/vs/table.json");
        assert_string_equal(c->slotctl_config, "/etc/vs/slotctl.json");
        assert_true(c->has_limits);
        assert_int_equal(c->n_slot_limits, 2);
        assert_true(c->has_slice);
        assert_int_equal(c->n_slot_slice, 2);
        slots_config_free(c);
}

/* slice_for: default overlaid by the slot's own entry, property by property; the pool apart. */
static const struct {
        unsigned slot;          /* 0: the pool's own */
        enum slots_slice_key key;
        bool set;
        enum slots_slice_kind kind;
        uint64_t n;
} slice_for[] = {
        { 0, SLOTS_SLICE_MEMORY_MAX, true, SLOTS_SLICE_NUMBER, UINT64_C(8) << 30 },
        { 0, SLOTS_SLICE_CPU_QUOTA, true, SLOTS_SLICE_PERCENT, 400 },
        { 0, SLOTS_SLICE_TASKS_MAX, false, 0, 0 },
        { 1, SLOTS_SLICE_MEMORY_MAX, true, SLOTS_SLICE_NUMBER, UINT64_C(2) << 30 },
        { 1, SLOTS_SLICE_TASKS_MAX, true, SLOTS_SLICE_NUMBER, 256 },
        { 1, SLOTS_SLICE_CPU_WEIGHT, true, SLOTS_SLICE_NUMBER, 100 },
        { 1, SLOTS_SLICE_CPU_QUOTA, false, 0, 0 },
        { 1, SLOTS_SLICE_IO_WEIGHT, false, 0, 0 },
        { 3, SLOTS_SLICE_MEMORY_MAX, true, SLOTS_SLICE_INFINITY, 0 },
        { 3, SLOTS_SLICE_TASKS_MAX, true, SLOTS_SLICE_NUMBER, 256 },
        { 3, SLOTS_SLICE_IO_WEIGHT, true, SLOTS_SLICE_NUMBER, 50 },
        { 12, SLOTS_SLICE_TASKS_MAX, true, SLOTS_SLICE_PERCENT, 10 },
        { 12, SLOTS_SLICE_MEMORY_MAX, true, SLOTS_SLICE_NUMBER, UINT64_C(2) << 30 },
        { 12, SLOTS_SLICE_IO_WEIGHT, false, 0, 0 },
};

static void test_slice_for(void **state)
{
        struct slots_config *c = NULL;
        struct slots_error e;
        int failures = 0;

        (void) state;
        assert_int_equal(slots_config_parse(full_text, strlen(full_text), FILE_NAME, &c, &e), 0);
        for (size_t i = 0; i < N_ELEM(slice_for); i++) {
                struct slots_slice_props p;
                const struct slots_slice_value *v;

                if (slice_for[i].slot == 0)
                        p = c->slice_pool;
                else
                        slots_config_slice_for(c, slice_for[i].slot, &p);
                v = &p.v[slice_for[i].key];
                if (v->set != slice_for[i].set || (v->set && (v->kind != slice_for[i].kind || v->n != slice_for[i].n)))
                        ROW_FAIL("slot %u %s: set=%d kind=%d n=%llu, expected set=%d kind=%d n=%llu",
                                 slice_for[i].slot, slots_slice_key_name(slice_for[i].key), v->set, v->kind,
                                 (unsigned long long) v->n, slice_for[i].set, slice_for[i].kind,
                                 (unsigned long long) slice_for[i].n);
        }
        slots_config_free(c);
        assert_int_equal(failures, 0);
}

/* limits_for: default overlaid by the slot's own entry, item by item. */
static const struct {
        unsigned slot;
        enum slots_limit_item item;
        bool set;
        rlim_t soft, hard;
        int nice;
} limits_for[] = {
        { 1, SLOTS_LIMIT_NPROC, true, 200, 200, 0 },
        { 1, SLOTS_LIMIT_NOFILE, true, 1024, 1024, 0 },
        { 1, SLOTS_LIMIT_AS, true, (rlim_t) 2 << 30, (rlim_t) 2 << 30, 0 },
        { 1, SLOTS_LIMIT_CPU, true, RLIM_INFINITY, RLIM_INFINITY, 0 },
        { 1, SLOTS_LIMIT_NICE, false, 0, 0, 0 },
        { 1, SLOTS_LIMIT_CORE, false, 0, 0, 0 },
        { 3, SLOTS_LIMIT_NPROC, true, 200, 200, 0 },            /* from default */
        { 3, SLOTS_LIMIT_NOFILE, true, 2048, 4096, 0 },         /* the slot's own */
        { 3, SLOTS_LIMIT_AS, true, (rlim_t) 2 << 30, (rlim_t) 2 << 30, 0 },
        { 3, SLOTS_LIMIT_NICE, true, 0, 0, 5 },
        { 3, SLOTS_LIMIT_CORE, false, 0, 0, 0 },
        { 12, SLOTS_LIMIT_CORE, true, 0, 0, 0 },
        { 12, SLOTS_LIMIT_NOFILE, true, 1024, 1024, 0 },
        { 12, SLOTS_LIMIT_NICE, false, 0, 0, 0 },
        { 4, SLOTS_LIMIT_NOFILE, true, 1024, 1024, 0 },
        { 4, SLOTS_LIMIT_CORE, false, 0, 0, 0 },
};

static void test_limits_for(void **state)
{
        struct slots_config *c = NULL;
        struct slots_error e;

        (void) state;
        assert_int_equal(slots_config_parse(full_text, strlen(full_text), FILE_NAME, &c, &e), 0);
        for (size_t i = 0; i < N_ELEM(limits_for); i++) {
                struct slots_limits l;
                const struct slots_limit *it;

                slots_config_limits_for(c, limits_for[i].slot, &l);
                it = &l.item[limits_for[i].item];
                if (it->set != limits_for[i].set)
                        fail_msg("slot %u %s: set=%d, expected %d", limits_for[i].slot,
                                 slots_limit_item_name(limits_for[i].item), it->set, limits_for[i].set);
                if (!it->set)
                        continue;
                if (limits_for[i].item == SLOTS_LIMIT_NICE) {
                        assert_int_equal(it->nice, limits_for[i].nice);
                        continue;
                }
                if (it->soft != limits_for[i].soft || it->hard != limits_for[i].hard)
                        fail_msg("slot %u %s: %llu/%llu, expected %llu/%llu", limits_for[i].slot,
                                 slots_limit_item_name(limits_for[i].item), (unsigned long long) it->soft,
                                 (unsigned long long) it->hard, (unsigned long long) limits_for[i].soft,
                                 (unsigned long long) limits_for[i].hard);
        }
        slots_config_free(c);
}

/* Without "limits", every slot gets nothing set. */
static void test_limits_for_none(void **state)
{
        static const char text[] = "{\"service\": \"video\", \"slots\": 8}";
        struct slots_config *c = NULL;
        struct slots_limits l;
        struct slots_error e;

        (void) state;
        assert_int_equal(slots_config_parse(text, strlen(text), FILE_NAME, &c, &e), 0);
        memset(&l, 0xff, sizeof(l));
        slots_config_limits_for(c, 1, &l);
        for (int i = 0; i < SLOTS_LIMIT_MAX_ITEM; i++)
                assert_false(l.item[i].set);
        slots_config_free(c);
}

static const struct {
        const char *tree;       /* NULL: the default */
        const char *user;
        const char *expected;
} user_trees[] = {
        { NULL, "aa73da63e26b40a1bb701c2b4c024870", "_users/aa73da63e26b40a1bb701c2b4c024870" },
        { NULL, "a", "_users/a" },
        { "people/{user}/files", "bob.x", "people/bob.x/files" },
        { "u/{user}/x/{user}", "b_1", "u/b_1/x/b_1" },
        { "{user}", "z-9", "z-9" },
        { "p{user}q", "A", "pAq" },
};

static void test_user_tree(void **state)
{
        (void) state;
        for (size_t i = 0; i < N_ELEM(user_trees); i++) {
                char text[256];
                struct slots_config *c = NULL;
                struct slots_error e;
                char *t;

                if (user_trees[i].tree)
                        snprintf(text, sizeof(text), "{\"service\": \"s\", \"slots\": 2, \"user_tree\": \"%s\"}",
                                 user_trees[i].tree);
                else
                        snprintf(text, sizeof(text), "{\"service\": \"s\", \"slots\": 2}");
                assert_int_equal(slots_config_parse(text, strlen(text), FILE_NAME, &c, &e), 0);
                t = slots_config_user_tree(c, user_trees[i].user);
                assert_non_null(t);
                assert_string_equal(t, user_trees[i].expected);
                free(t);
                slots_config_free(c);
        }
}

static const struct {
        const char *path;
        bool private;
} private_paths[] = {
        { "/a/b", true },
        { "/a/b/c", true },
        { "/a/b/c/d/e", true },
        { "/a/b/", true },
        { "/a/bc", false },     /* prefix boundary */
        { "/a/b.c", false },
        { "/a/b-", false },
        { "/a", false },
        { "/", false },
        { "/x/a/b", false },
        { "/srv/.env", true },
        { "/srv/.env.bak", false },
        { "/srv/.envx/y", false },
        { "/srv", false },
};

/* slots_config_passes_env: a name of sudo_env, or a prefix "X*" of it. */
static const struct {
        const char *name;
        bool passes;
} passes_env[] = {
        { "PATH", true },               /* listed */
        { "PATHX", false },             /* a name is not a prefix */
        { "PAT", false },
        { "CLAUDE_CONFIG_DIR", true },  /* CLAUDE_* */
        { "CLAUDE_", true },            /* the prefix itself */
        { "CLAUDE", false },
        { "claude_x", false },          /* names are case-sensitive */
        { "HOME", false },              /* not in this list */
};

static void test_passes_env(void **state)
{
        static const char text[] = "{\"service\": \"s\", \"slots\": 2, \"sudo_env\": [\"PATH\", \"CLAUDE_*\"]}";
        static const char none[] = "{\"service\": \"s\", \"slots\": 2, \"sudo_env\": []}";
        struct slots_config *c = NULL;
        struct slots_error e;

        (void) state;
        assert_int_equal(slots_config_parse(text, strlen(text), FILE_NAME, &c, &e), 0);
        for (size_t i = 0; i < N_ELEM(passes_env); i++)
                if (slots_config_passes_env(c, passes_env[i].name) != passes_env[i].passes)
                        fail_msg("%s: expected %s", passes_env[i].name, passes_env[i].passes ? "passes" : "not");
        slots_config_free(c);
        assert_int_equal(slots_config_parse(none, strlen(none), FILE_NAME, &c, &e), 0);
        assert_false(slots_config_passes_env(c, "PATH"));
        slots_config_free(c);
}

static void test_is_private(void **state)
{
        static const char text[] =
                "{\"service\": \"s\", \"slots\": 2, \"private_paths\": [\"/a/b\", \"/srv/.env\"]}";
        struct slots_config *c = NULL;
        struct slots_error e;

        (void) state;
        assert_int_equal(slots_config_parse(text, strlen(text), FILE_NAME, &c, &e), 0);
        for (size_t i = 0; i < N_ELEM(private_paths); i++)
                if (slots_config_is_private(c, private_paths[i].path) != private_paths[i].private)
                        fail_msg("%s: expected %s", private_paths[i].path,
                                 private_paths[i].private ? "private" : "not private");
        slots_config_free(c);
}

static void test_is_private_none(void **state)
{
        static const char text[] = "{\"service\": \"s\", \"slots\": 2}";
        struct slots_config *c = NULL;
        struct slots_error e;

        (void) state;
        assert_int_equal(slots_config_parse(text, strlen(text), FILE_NAME, &c, &e), 0);
        assert_false(slots_config_is_private(c, "/"));
        assert_false(slots_config_is_private(c, "/etc/shadow"));
        slots_config_free(c);
}

static void test_default_path(void **state)
{
        (void) state;
        assert_int_equal(unsetenv("SLOTS_CONFIG"), 0);
        assert_string_equal(slots_config_default_path(), "/etc/slots/slots.conf");
        assert_int_equal(setenv("SLOTS_CONFIG", "", 1), 0);
        assert_string_equal(slots_config_default_path(), "/etc/slots/slots.conf");
        assert_int_equal(setenv("SLOTS_CONFIG", "/tmp/x.conf", 1), 0);
        assert_string_equal(slots_config_default_path(), "/tmp/x.conf");
        assert_int_equal(unsetenv("SLOTS_CONFIG"), 0);
}

/* ---- slots_config_load: reading the file ---- */

static char tmpdir[256];

static void write_file(const char *name, const char *text, size_t len)
{
        char path[512];
        FILE *f;

        snprintf(path, sizeof(path), "%s/%s", tmpdir, name);
        f = fopen(path, "w");
        assert_non_null(f);
        assert_int_equal(fwrite(text, 1, len, f), len);
        assert_int_equal(fclose(f), 0);
}

static int setup_dir(void **state)
{
        const char *base = getenv("TMPDIR");

        (void) state;
        snprintf(tmpdir, sizeof(tmpdir), "%s/test-config.XXXXXX", base && base[0] ? base : "/tmp");
        return mkdtemp(tmpdir) ? 0 : -1;
}

static int teardown_dir(void **state)
{
        char cmd[600];

        (void) state;
        snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
        return system(cmd) == 0 ? 0 : -1;
}

static void test_load(void **state)
{
        static const char text[] = "{\"service\": \"video\", \"slots\": 3}\n";
        static const char nul[] = "{\"service\": \"video\",\0 \"slots\": 3}\n";
        static const char bad_text[] = "{\n  \"service\": \"video\",\n  \"slots\": 0\n}\n";
        struct slots_config *c = NULL;
        struct slots_error e;
        char path[512];
        int r;

        (void) state;
        write_file("ok.conf", text, strlen(text));
        snprintf(path, sizeof(path), "%s/ok.conf", tmpdir);
        slots_error_clear(&e);
        assert_int_equal(slots_config_load(AT_FDCWD, path, &c, &e), 0);
        assert_string_equal(c->path, path);
        assert_int_equal(c->slots, 3);
        slots_config_free(c);
        c = NULL;

        /* missing: -ENOENT naming the file, with a fix */
        snprintf(path, sizeof(path), "%s/missing.conf", tmpdir);
        r = slots_config_load(AT_FDCWD, path, &c, &e);
        assert_int_equal(r, -ENOENT);
        assert_null(c);
        assert_string_equal(e.object, path);
        assert_true(e.fix[0] != '\0');

        /* a directory is not a config */
        r = slots_config_load(AT_FDCWD, tmpdir, &c, &e);
        assert_int_equal(r, -EINVAL);
        assert_null(c);

        /* a NUL byte is invalid content */
        write_file("nul.conf", nul, sizeof(nul) - 1);
        snprintf(path, sizeof(path), "%s/nul.conf", tmpdir);
        r = slots_config_load(AT_FDCWD, path, &c, &e);
        assert_int_equal(r, -EBADMSG);
        assert_null(c);

        /* invalid content names the loaded file with its position */
        write_file("bad.conf", bad_text, strlen(bad_text));
        snprintf(path, sizeof(path), "%s/bad.conf", tmpdir);
        r = slots_config_load(AT_FDCWD, path, &c, &e);
        assert_int_equal(r, -EBADMSG);
        assert_string_equal(e.object, path);
        assert_int_equal(e.line, 3);
        assert_int_equal(e.column, 12);

        /* relative paths are refused */
        assert_true(slots_config_load(AT_FDCWD, "ok.conf", &c, &e) < 0);
        assert_null(c);
}

/*
 * The one rule for a config others can write (slots_config_writers): owner and mode
 * decide, `also` lets the caller's own uid pass (pam_slots under tests), the reason
 * names mode and owner, the fix is the one command line; a refusal's kind is refused.
 */
static void test_config_writers(void **state)
{
        static const struct {
                uid_t uid;
                mode_t mode;
                uid_t also;
                int want;
                const char *reason, *fix;
        } rows[] = {
                { 0, 0644, (uid_t) -1, 0, "", "" },
                { 0, 0600, (uid_t) -1, 0, "", "" },
                { 0, 0664, (uid_t) -1, -EPERM,
                  "C is 0664 owned by uid 0: someone other than root can change it (it is writable by group or others)",
                  "chmod go-w C" },
                { 0, 0646, (uid_t) -1, -EPERM,
                  "C is 0646 owned by uid 0: someone other than root can change it (it is writable by group or others)",
                  "chmod go-w C" },
                { 4242, 0644, (uid_t) -1, -EPERM,
                  "C is 0644 owned by uid 4242: someone other than root can change it (its owner)", "chown root:root C" },
                { 4242, 0664, (uid_t) -1, -EPERM,
                  "C is 0664 owned by uid 4242: someone other than root can change it (its owner)",
                  "chown root:root C && chmod go-w C" },
                { 4242, 0644, 4242, 0, "", "" },
                { 4242, 0660, 4242, -EPERM,
                  "C is 0660 owned by uid 4242: someone other than root can change it (it is writable by group or others)",
                  "chmod go-w C" },
        };

        (void) state;
        for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
                struct stat st = { .st_uid = rows[i].uid, .st_mode = S_IFREG | rows[i].mode };
                struct slots_error e;

                slots_error_clear(&e);
                assert_int_equal(slots_config_writers(&st, "C", rows[i].also, &e), rows[i].want);
                assert_string_equal(e.reason, rows[i].reason);
                assert_string_equal(e.fix, rows[i].fix);
                if (rows[i].want)
                        assert_int_equal(e.kind, SLOTS_ERR_REFUSED);
        }
}

/* SLOTS_CONFIG_ROOT_OWNED (assign, release): the same rule on the file read, root alone. */
static void test_load_root_owned(void **state)
{
        static const char text[] = "{\"service\": \"video\", \"slots\": 3}\n";
        struct slots_config *c = NULL;
        struct slots_error e;
        char path[512];

        (void) state;
        write_file("root-owned.conf", text, strlen(text));
        snprintf(path, sizeof(path), "%s/root-owned.conf", tmpdir);
        assert_int_equal(chmod(path, 0664), 0);
        slots_error_clear(&e);
        assert_int_equal(slots_config_load_flags(AT_FDCWD, path, SLOTS_CONFIG_ROOT_OWNED, &c, &e), -EPERM);
        assert_null(c);
        assert_int_equal(e.kind, SLOTS_ERR_REFUSED);
        assert_non_null(strstr(e.reason, "someone other than root can change it"));
        assert_int_equal(slots_config_writers_at(AT_FDCWD, path, &e), -EPERM);
        assert_int_equal(chmod(path, 0644), 0);
        if (geteuid() == 0) {
                assert_int_equal(slots_config_load_flags(AT_FDCWD, path, SLOTS_CONFIG_ROOT_OWNED, &c, &e), 0);
                slots_config_free(c);
                assert_int_equal(slots_config_writers_at(AT_FDCWD, path, &e), 0);
        } else {
                /* Not root: the caller's own file is someone else's than root's. */
                assert_int_equal(slots_config_load_flags(AT_FDCWD, path, SLOTS_CONFIG_ROOT_OWNED, &c, &e), -EPERM);
        }
}

/*
 * SLOTS_CONFIG_ROOT_ONLY (pam_slots reads the config through this one reader):
 * mode and owner decide, and the reason names what is wrong.
 */
static void test_load_root_only(void **state)
{
        static const char text[] = "{\"service\": \"video\", \"slots\": 3}\n";
        static const struct {
                mode_t mode;
                uid_t uid;              /* (uid_t) -1: the caller */
                int want;
                const char *reason;     /* part of the reason, when refused */
        } rows[] = {
                { 0644, (uid_t) -1, 0, NULL },
                { 0600, (uid_t) -1, 0, NULL },
                { 0664, (uid_t) -1, -EPERM, "is 0664 owned by uid" },
                { 0646, (uid_t) -1, -EPERM, "others (mode 0646)" },  /* the resolver words it */
                { 0644, 4242, -EPERM, "owned by uid 4242" },
        };
        struct slots_config *c = NULL;
        struct slots_error e;
        char path[512];

        (void) state;
        write_file("root-only.conf", text, strlen(text));
        snprintf(path, sizeof(path), "%s/root-only.conf", tmpdir);
        for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
                int r;

                assert_int_equal(chmod(path, rows[i].mode), 0);
                if (rows[i].uid != (uid_t) -1 && geteuid() != 0) {
                        /* Only root can hand the file to another owner: the row is not run, and says so. */
                        print_message("skipped: the row owned by uid %u (needs root)\n", (unsigned) rows[i].uid);
                        continue;
                }
                if (rows[i].uid != (uid_t) -1)
                        assert_int_equal(chown(path, rows[i].uid, (gid_t) -1), 0);
                slots_error_clear(&e);
                r = slots_config_load_flags(AT_FDCWD, path, SLOTS_CONFIG_ROOT_ONLY, &c, &e);
                assert_int_equal(r, rows[i].want);
                if (r == 0) {
                        assert_int_equal(c->slots, 3);
                        slots_config_free(c);
                        c = NULL;
                        /* without the flag the same file loads as well */
                        assert_int_equal(slots_config_load(AT_FDCWD, path, &c, &e), 0);
                        slots_config_free(c);
                        c = NULL;
                        continue;
                }
                assert_null(c);
                if (!strstr(e.reason, rows[i].reason))
                        fail_msg("mode %04o: reason \"%s\" lacks \"%s\"", rows[i].mode, e.reason, rows[i].reason);
                assert_true(e.fix[0] != '\0');
                /* without the flag (slots-admin, slots-provision) the file is read */
                assert_int_equal(slots_config_load(AT_FDCWD, path, &c, &e), 0);
                slots_config_free(c);
                c = NULL;
                if (rows[i].uid != (uid_t) -1)
                        assert_int_equal(chown(path, geteuid(), (gid_t) -1), 0);
        }
        /* a relative path is refused before anything is opened */
        assert_int_equal(slots_config_load_flags(AT_FDCWD, "root-only.conf", SLOTS_CONFIG_ROOT_ONLY, &c, &e), -EINVAL);
        assert_null(c);
}

/* Inside a root (--root DIR), an absolute symlink resolves inside that root, never on the host. */
static void test_load_in_root(void **state)
{
        static const char text[] = "{\"service\": \"image\", \"slots\": 2}\n";
        struct slots_config *c = NULL;
        struct slots_error e;
        char path[512];
        int rootfd, r;

        (void) state;
        snprintf(path, sizeof(path), "%s/etc", tmpdir);
        assert_int_equal(mkdir(path, 0755), 0);
        write_file("etc/slots.conf", text, strlen(text));
        snprintf(path, sizeof(path), "%s/etc/escape.conf", tmpdir);
        assert_int_equal(symlink("/etc/hostname", path), 0);
        snprintf(path, sizeof(path), "%s/etc/inside.conf", tmpdir);
        assert_int_equal(symlink("/etc/slots.conf", path), 0);

        rootfd = slots_root_open(tmpdir);
        assert_true(rootfd >= 0);
        r = slots_config_load(rootfd, "/etc/slots.conf", &c, &e);
        if (r == -ENOSYS) {
                /* valgrind 3.19 does not know openat2 (Linux 5.6) */
                print_message("skipped: openat2 is not available here (%s)\n", e.reason);
                close(rootfd);
                skip();
        }
        if (r != 0)
                fail_msg("%s: %s", e.object, e.reason);
        assert_string_equal(c->service, "image");
        slots_config_free(c);
        c = NULL;
        assert_int_equal(slots_config_load(rootfd, "/etc/inside.conf", &c, &e), 0);
        assert_string_equal(c->service, "image");
        slots_config_free(c);
        c = NULL;
        /* /etc/hostname of the host exists, but not inside the root */
        assert_int_equal(slots_config_load(rootfd, "/etc/escape.conf", &c, &e), -ENOENT);
        assert_int_equal(slots_config_load(rootfd, "/../../etc/hostname", &c, &e), -ENOENT);
        assert_null(c);
        close(rootfd);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_bad),
                cmocka_unit_test(test_good),
                cmocka_unit_test(test_minimal_defaults),
                cmocka_unit_test(test_accounts),
                cmocka_unit_test(test_full),
                cmocka_unit_test(test_limits_for),
                cmocka_unit_test(test_slice_for),
                cmocka_unit_test(test_limits_for_none),
                cmocka_unit_test(test_user_tree),
                cmocka_unit_test(test_is_private),
                cmocka_unit_test(test_passes_env),
                cmocka_unit_test(test_is_private_none),
                cmocka_unit_test(test_default_path),
                cmocka_unit_test(test_load),
                cmocka_unit_test(test_load_root_only),
                cmocka_unit_test(test_config_writers),
                cmocka_unit_test(test_load_root_owned),
                cmocka_unit_test(test_load_in_root),
        };

        return cmocka_run_group_tests(tests, setup_dir, teardown_dir);
}
