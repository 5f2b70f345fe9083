/* The config file (slots.conf(5)): strict parse, defaults resolved in one place. */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "config.h"
#include "fsutil.h"
#include "ids.h"
#include "jsonpos.h"
#include "path.h"

#define CONFIG_MAX ((size_t) 1 << 20)

enum kind {
        K_NAME,         /* account or group name */
        K_PREFIX,       /* group name prefix */
        K_POOL,         /* 1..9999 */
        K_ID,           /* uid */
        K_ABSPATH,      /* absolute, normalized path */
        K_FILENAME,     /* one path component */
        K_USERTREE,     /* relative path holding {user} */
        K_RELPATHS,     /* array of relative paths */
        K_ABSPATHS,     /* array of absolute paths */
        K_LIMITS,
        K_SLICE,
        K_ENVNAMES,     /* array of environment names, "X*" a prefix */
        K_ARGV,         /* non-empty array of strings */
        K_ACCOUNTS,     /* "local" or "directory" */
};

const char *const slots_config_default_sudo_env[] = {
        "PATH", "LANG", "LC_ALL", "TERM", "TZ", "TMPDIR", "HOME", "GOCACHE", "GOMODCACHE", "GOFLAGS",
        "GOTOOLCHAIN", "GOPROXY", "GONOSUMDB", "GOPRIVATE", "NODE_OPTIONS", "PILOT_EXECUTOR", "CLAUDE_*",
        "ANTHROPIC_*", NULL,
};

#define PROBE_MAX 64

static const struct key {
        const char *name;
        enum kind kind;
        size_t offset;
} keys[] = {
        { "service", K_NAME, offsetof(struct slots_config, service) },
        { "service_group", K_NAME, offsetof(struct slots_config, service_group) },
        { "prefix", K_PREFIX, offsetof(struct slots_config, prefix) },
        { "slots", K_POOL, offsetof(struct slots_config, slots) },
        { "uid_min", K_ID, offsetof(struct slots_config, uid_min) },
        { "uid_max", K_ID, offsetof(struct slots_config, uid_max) },
        { "uid_base", K_ID, offsetof(struct slots_config, uid_base) },
        { "shell", K_ABSPATH, offsetof(struct slots_config, shell) },
        { "app_root", K_ABSPATH, offsetof(struct slots_config, app_root) },
        { "launcher", K_FILENAME, offsetof(struct slots_config, launcher) },
        { "docs_root", K_ABSPATH, offsetof(struct slots_config, docs_root) },
        { "user_tree", K_USERTREE, offsetof(struct slots_config, user_tree) },
        { "shared_dirs", K_RELPATHS, offsetof(struct slots_config, shared_dirs) },
        { "slots_root", K_ABSPATH, offsetof(struct slots_config, slots_root) },
        { "private_paths", K_ABSPATHS, offsetof(struct slots_config, private_paths) },
        { "table", K_ABSPATH, offsetof(struct slots_config, table) },
        { "slotctl_config", K_ABSPATH, offsetof(struct slots_config, slotctl_config) },
        { "limits", K_LIMITS, 0 },
        { "slotctl", K_ABSPATH, offsetof(struct slots_config, slotctl) },
        { "run_as_group", K_NAME, offsetof(struct slots_config, run_as_group) },
        { "sudo_env", K_ENVNAMES, 0 },
        { "probe", K_ARGV, 0 },
        { "slice", K_SLICE, 0 },
        { "accounts", K_ACCOUNTS, 0 },
};

static const char known_keys[] =
        "service, service_group, prefix, slots, uid_min, uid_max, uid_base, shell, app_root, launcher, docs_root, "
        "user_tree, shared_dirs, slots_root, private_paths, table, slotctl_config, limits, slotctl, run_as_group, "
        "sudo_env, probe, slice, accounts";

const char *slots_config_default_path(void)
{
        const char *p = secure_getenv("SLOTS_CONFIG");

        return p && p[0] ? p : SLOTS_DEFAULT_CONFIG;
}

void slots_config_free(struct slots_config *c)
{
        if (!c)
                return;
        for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
                if (keys[i].kind == K_RELPATHS || keys[i].kind == K_ABSPATHS || keys[i].kind == K_POOL ||
                    keys[i].kind == K_ID || keys[i].kind == K_LIMITS || keys[i].kind == K_SLICE || keys[i].kind == K_ENVNAMES ||
                    keys[i].kind == K_ARGV || keys[i].kind == K_ACCOUNTS)
                        continue;
                free(*(char **) ((char *) c + keys[i].offset));
        }
        for (size_t i = 0; i < c->n_shared_dirs; i++)
                free(c->shared_dirs[i]);
        free(c->shared_dirs);
        for (size_t i = 0; i < c->n_private_paths; i++)
                free(c->private_paths[i]);
        free(c->private_paths);
        for (size_t i = 0; i < c->n_sudo_env; i++)
                free(c->sudo_env[i]);
        free(c->sudo_env);
        for (size_t i = 0; i < c->n_probe; i++)
                free(c->probe[i]);
        free(c->probe);
        free(c->slot_limits);
        free(c->slot_slice);
        free(c->path);
        free(c);
}

static bool name_valid(const char *s, size_t max)
{
        size_t n = strlen(s);

        if (n == 0 || n > max)
                return false;
        if (!((s[0] >= 'a' && s[0] <= 'z') || s[0] == '_'))
                return false;
        for (size_t i = 1; i < n; i++)
                if (!((s[i] >= 'a' && s[i] <= 'z') || (s[i] >= '0' && s[i] <= '9') || s[i] == '_' ||
                      s[i] == '-'))
                        return false;
        return true;
}

/* Relative (absolute when abs) path of plain components: no empty, ".", ".." component. */
static bool path_valid(const char *s, bool abs)
{
        const char *p = s;

        if (abs) {
                if (s[0] != '/')
                        return false;
                if (s[1] == '\0')
                        return true;
                p = s + 1;
        } else if (s[0] == '/' || s[0] == '\0') {
                return false;
        }
        for (;;) {
                const char *end = strchr(p, '/');
                size_t len = end ? (size_t) (end - p) : strlen(p);

                if (len == 0 || (len == 1 && p[0] == '.') || (len == 2 && p[0] == '.' && p[1] == '.'))
                        return false;
                if (!end)
                        return true;
                p = end + 1;
        }
}

static int set_string(char **dst, const char *v)
{
        char *s = strdup(v);

        if (!s)
                return -ENOMEM;
        free(*dst);
        *dst = s;
        return 0;
}

static int parse_paths(const struct slots_jsrc *src, const struct slots_jpath *p, json_t *v, bool abs,
                       char ***out, size_t *n_out, struct slots_error *e)
{
        struct slots_jpath q[2] = { p[0], { 0 } };
        size_t i;
        json_t *item;

        if (!json_is_array(v))
                return slots_json_fail(e, src, p, 1, false, "\"%s\" must be an array of %s paths", p[0].key,
                            abs ? "absolute" : "relative");
        *out = calloc(json_array_size(v) + 1, sizeof(char *));
        if (!*out)
                return -ENOMEM;
        json_array_foreach(v, i, item) {
                q[1] = (struct slots_jpath){ .key = NULL, .index = i };
                if (!json_is_string(item) || !path_valid(json_string_value(item), abs))
                        return slots_json_fail(e, src, q, 2, false,
                                    "\"%s\" entry %zu must be %s path without \".\", \"..\" or empty "
                                    "components", p[0].key, i + 1, abs ? "an absolute" : "a relative");
                (*out)[i] = strdup(json_string_value(item));
                if (!(*out)[i])
                        return -ENOMEM;
                *n_out = i + 1;
        }
        return 0;
}

/* An environment name sudoers can carry literally: [A-Za-z_][A-Za-z0-9_]*, or such a prefix and "*". */
static bool env_name_valid(const char *s)
{
        size_t n = strlen(s);

        if (n > 0 && s[n - 1] == '*')
                n--;
        if (n == 0 || n > 128 || (s[0] >= '0' && s[0] <= '9'))
                return false;
        for (size_t i = 0; i < n; i++)
                if (!((s[i] >= 'a' && s[i] <= 'z') || (s[i] >= 'A' && s[i] <= 'Z') ||
                      (s[i] >= '0' && s[i] <= '9') || s[i] == '_'))
                        return false;
        return true;
}

/* sudo_env (names) and probe (argv): arrays of strings, each checked. */
static int parse_strings(const struct slots_jsrc *src, const struct slots_jpath *p, json_t *v, bool env,
                         char ***out, size_t *n_out, struct slots_error *e)
{
        struct slots_jpath q[2] = { p[0], { 0 } };
        size_t i;
        json_t *item;

        if (!json_is_array(v) || (!env && (json_array_size(v) == 0 || json_array_size(v) > PROBE_MAX)))
                return slots_json_fail(e, src, p, 1, false, env ?
                            "\"sudo_env\" must be an array of environment names (\"PATH\", \"CLAUDE_*\")" :
                            "\"probe\" must be an array of 1 to 64 strings, the first \"{launcher}\"");
        *out = calloc(json_array_size(v) + 1, sizeof(char *));
        if (!*out)
                return -ENOMEM;
        json_array_foreach(v, i, item) {
                const char *s = json_string_value(item);

                q[1] = (struct slots_jpath){ .key = NULL, .index = i };
                if (env && (!s || !env_name_valid(s)))
                        return slots_json_fail(e, src, q, 2, false,
                                    "\"sudo_env\" entry %zu must be an environment name (letters, digits, _, "
                                    "not starting with a digit), optionally ending in * to match a prefix",
                                    i + 1);
                if (!env && (!s || strlen(s) != json_string_length(item) ||
                             (i == 0 && strcmp(s, "{launcher}") != 0)))
                        return slots_json_fail(e, src, q, 2, false, i == 0 ?
                                    "\"probe\" must start with \"{launcher}\": sudo lets the service run "
                                    "only the launcher" : "\"probe\" entry %zu must be a string without NUL",
                                    i + 1);
                (*out)[i] = strdup(s);
                if (!(*out)[i])
                        return -ENOMEM;
                *n_out = i + 1;
        }
        return 0;
}

static int parse_limits(const struct slots_jsrc *src, json_t *v, struct slots_config *c,
                        struct slots_error *e)
{
        struct slots_jpath p[2] = { { .key = "limits" }, { 0 } };
        const char *key;
        json_t *sub;
        int r;

        if (!json_is_object(v))
                return slots_json_fail(e, src, p, 1, false,
                            "\"limits\" must be an object: {\"default\": {...}, \"slot03\": {...}}");
        c->has_limits = true;
        c->slot_limits = calloc(json_object_size(v) + 1, sizeof(*c->slot_limits));
        if (!c->slot_limits)
                return -ENOMEM;
        json_object_foreach(v, key, sub) {
                unsigned n = 0;

                p[1].key = key;
                if (strcmp(key, "default") == 0) {
                        r = slots_limits_parse(sub, src, p, 2, &c->limits_default, e);
                } else if ((n = slots_slot_parse(key)) != 0) {
                        struct slots_slot_limits *sl = &c->slot_limits[c->n_slot_limits++];
                        sl->slot = n;
                        r = slots_limits_parse(sub, src, p, 2, &sl->limits, e);
                } else {
                        return slots_json_fail(e, src, p, 2, true,
                                    "\"limits\" has key \"%s\"; only \"default\" and slot names (slot01, "
                                    "...) are allowed", key);
                }
                if (r < 0)
                        return r;
        }
        return 0;
}

static int parse_slice(const struct slots_jsrc *src, json_t *v, struct slots_config *c, struct slots_error *e)
{
        struct slots_jpath p[2] = { { .key = "slice" }, { 0 } };
        const char *key;
        json_t *sub;
        int r;

        if (!json_is_object(v))
                return slots_json_fail(e, src, p, 1, false,
                            "\"slice\" must be an object: {\"pool\": {...}, \"default\": {...}, \"slot03\": {...}}");
        c->has_slice = true;
        c->slot_slice = calloc(json_object_size(v) + 1, sizeof(*c->slot_slice));
        if (!c->slot_slice)
                return -ENOMEM;
        json_object_foreach(v, key, sub) {
                unsigned n = 0;

                p[1].key = key;
                if (strcmp(key, "pool") == 0) {
                        r = slots_slice_props_parse(sub, src, p, 2, &c->slice_pool, e);
                } else if (strcmp(key, "default") == 0) {
                        r = slots_slice_props_parse(sub, src, p, 2, &c->slice_default, e);
                } else if ((n = slots_slot_parse(key)) != 0) {
                        struct slots_slot_slice *ss = &c->slot_slice[c->n_slot_slice++];
                        ss->slot = n;
                        r = slots_slice_props_parse(sub, src, p, 2, &ss->props, e);
                } else {
                        return slots_json_fail(e, src, p, 2, true,
                                    "\"slice\" has key \"%s\"; only \"pool\", \"default\" and slot names "
                                    "(slot01, ...) are allowed", key);
                }
                if (r < 0)
                        return r;
        }
        return 0;
}

static int parse_key(const struct slots_jsrc *src, const struct key *k, json_t *v, struct slots_config *c,
                     struct slots_error *e)
{
        const struct slots_jpath p[1] = { { .key = k->name } };
        char **dst = (char **) ((char *) c + k->offset);
        const char *s = json_string_value(v);

        switch (k->kind) {
        case K_NAME:
                if (!s || !name_valid(s, 32))
                        return slots_json_fail(e, src, p, 1, false,
                                    "\"%s\" must be an account or group name (lower case letters, digits, "
                                    "_ and -, starting with a letter or _, at most 32)", k->name);
                return set_string(dst, s);
        case K_PREFIX:
                if (!s || !name_valid(s, 26))
                        return slots_json_fail(e, src, p, 1, false,
                                    "\"prefix\" must be a group name prefix (lower case letters, digits, _ "
                                    "and -, at most 26 so that <prefix>shared fits in 32)");
                return set_string(dst, s);
        case K_POOL:
                if (!json_is_integer(v) || json_integer_value(v) < 1 ||
                    json_integer_value(v) > SLOTS_POOL_MAX)
                        return slots_json_fail(e, src, p, 1, false, "\"slots\" must be an integer from 1 to %d",
                                    SLOTS_POOL_MAX);
                c->slots = (unsigned) json_integer_value(v);
                return 0;
        case K_ID:
                if (!json_is_integer(v) || json_integer_value(v) < 1 ||
                    json_integer_value(v) >= (json_int_t) UINT32_MAX)
                        return slots_json_fail(e, src, p, 1, false, "\"%s\" must be an integer from 1 to %u", k->name,
                                    UINT32_MAX - 1);
                *(uid_t *) ((char *) c + k->offset) = (uid_t) json_integer_value(v);
                return 0;
        case K_ABSPATH:
                if (!s || !path_valid(s, true))
                        return slots_json_fail(e, src, p, 1, false,
                                    "\"%s\" must be an absolute path without \".\", \"..\", empty "
                                    "components or a trailing /", k->name);
                return set_string(dst, s);
        case K_FILENAME:
                if (!s || !path_valid(s, false) || strchr(s, '/'))
                        return slots_json_fail(e, src, p, 1, false, "\"%s\" must be a file name without /", k->name);
                return set_string(dst, s);
        case K_USERTREE:
                if (!s || !path_valid(s, false) || !strstr(s, "{user}"))
                        return slots_json_fail(e, src, p, 1, false,
                                    "\"user_tree\" must be a relative path that contains {user}, without "
                                    "\".\", \"..\" or empty components");
                return set_string(dst, s);
        case K_RELPATHS:
                return parse_paths(src, p, v, false, &c->shared_dirs, &c->n_shared_dirs, e);
        case K_ABSPATHS:
                return parse_paths(src, p, v, true, &c->private_paths, &c->n_private_paths, e);
        case K_LIMITS:
                return parse_limits(src, v, c, e);
        case K_SLICE:
                return parse_slice(src, v, c, e);
        case K_ENVNAMES:
                return parse_strings(src, p, v, true, &c->sudo_env, &c->n_sudo_env, e);
        case K_ARGV:
                return parse_strings(src, p, v, false, &c->probe, &c->n_probe, e);
        case K_ACCOUNTS:
                c->accounts_set = true;
                c->accounts_in_directory = s && strcmp(s, "directory") == 0;
                if (!s || (strcmp(s, "local") && !c->accounts_in_directory))
                        return slots_json_fail(e, src, p, 1, false,
                                    "\"accounts\" must be \"local\" (provision writes the slot accounts into "
                                    "/etc/passwd) or \"directory\" (they come from LDAP through NSS)");
                return 0;
        }
        return -EINVAL;
}

bool slots_config_is_private(const struct slots_config *c, const char *path)
{
        for (size_t i = 0; i < c->n_private_paths; i++)
                if (slots_path_under(path, c->private_paths[i]))
                        return true;
        return false;
}

static int set_strings(char ***dst, size_t *n, const char *const *v)
{
        size_t k = 0;

        while (v[k])
                k++;
        *dst = calloc(k + 1, sizeof(char *));
        if (!*dst)
                return -ENOMEM;
        for (*n = 0; *n < k; (*n)++)
                if (!((*dst)[*n] = strdup(v[*n])))
                        return -ENOMEM;
        return 0;
}

/*
 * The executor keys: the service is never a slot, and the group slots may run
 * with (sudo -g) is neither a slot's, the shared one nor the table's.
 */
static int finish_executor(const struct slots_jsrc *src, struct slots_config *c, struct slots_error *e)
{
        static const char *const default_probe[] = { "{launcher}", "/bin/pwd", NULL };
        char shared[64];

        if (slots_slot_parse(c->service)) {
                const struct slots_jpath p = { .key = "service" };
                return slots_json_fail(e, src, &p, 1, false,
                            "\"service\" is %s, a slot name; the service account is never a slot (slot "
                            "names are kept for the pool, also beyond its current size)", c->service);
        }
        snprintf(shared, sizeof(shared), "%sshared", c->prefix);
        if (c->run_as_group &&
            (slots_slot_parse(c->run_as_group) || strcmp(c->run_as_group, shared) == 0 ||
             strcmp(c->run_as_group, c->service) == 0 ||
             (c->service_group && strcmp(c->run_as_group, c->service_group) == 0))) {
                const struct slots_jpath p = { .key = "run_as_group" };
                return slots_json_fail(e, src, &p, 1, false,
                            "\"run_as_group\" is %s; it must be a group of its own, not a slot's group, %s, "
                            "the service's or the table's group (a slot run with it would reach their files)",
                            c->run_as_group, shared);
        }
        if (!c->sudo_env && set_strings(&c->sudo_env, &c->n_sudo_env, slots_config_default_sudo_env) < 0)
                return -ENOMEM;
        if (!c->probe && set_strings(&c->probe, &c->n_probe, default_probe) < 0)
                return -ENOMEM;
        return 0;
}

/* Whether one component of user_tree (with {user} in it) can be the name comp for some user id. */
static bool comp_can_be(const char *pat, size_t plen, const char *comp, size_t clen)
{
        if (plen >= 6 && strncmp(pat, "{user}", 6) == 0) {
                /* A user id: 1-64 of A-Z a-z 0-9 . _ -, not starting with . or - */
                for (size_t n = 1; n <= clen && n <= 64; n++) {
                        char ch = comp[n - 1];

                        if (!(isalnum((unsigned char) ch) || ch == '.' || ch == '_' || ch == '-') ||
                            (n == 1 && (ch == '.' || ch == '-')))
                                return false;
                        if (comp_can_be(pat + 6, plen - 6, comp + n, clen - n))
                                return true;
                }
                return false;
        }
        if (plen == 0 || clen == 0)
                return plen == 0 && clen == 0;
        return pat[0] == comp[0] && comp_can_be(pat + 1, plen - 1, comp + 1, clen - 1);
}

/*
 * Whether some user's tree can be rel (relative to docs_root), lie inside it or
 * hold it: every component they have in common can match.
 */
static bool tree_can_overlap(const char *tree, const char *rel)
{
        while (*tree && *rel) {
                size_t tl = strcspn(tree, "/"), rl = strcspn(rel, "/");

                if (!comp_can_be(tree, tl, rel, rl))
                        return false;
                tree += tl + (tree[tl] == '/');
                rel += rl + (rel[rl] == '/');
        }
        return true;
}

/*
 * A user_tree that can name a shared folder or a private path would hand it to a
 * slot at assign (a user id "Workflow" with "user_tree": "{user}").  user_tree is
 * relative without "." or "..", so it never leaves docs_root.
 */
static int check_user_tree(const struct slots_jsrc *src, const struct slots_config *c, struct slots_error *e)
{
        static const struct slots_jpath p = { .key = "user_tree" };
        size_t n = c->docs_root ? strlen(c->docs_root) : 0;

        for (size_t i = 0; i < c->n_shared_dirs; i++)
                if (tree_can_overlap(c->user_tree, c->shared_dirs[i]))
                        return slots_json_fail(e, src, &p, 1, false,
                                               "\"user_tree\" \"%s\" can name the shared folder \"%s\" (or a "
                                               "folder inside it or around it) for some user id; make its "
                                               "fixed part differ, e.g. \"_users/{user}\"",
                                               c->user_tree, c->shared_dirs[i]);
        for (size_t i = 0; c->docs_root && i < c->n_private_paths; i++) {
                const char *priv = c->private_paths[i], *rel;

                if (slots_path_under(c->docs_root, priv))
                        return slots_json_fail(e, src, &p, 1, false,
                                               "docs_root %s is inside the private path %s: every user's "
                                               "tree would be private", c->docs_root, priv);
                if (!slots_path_under(priv, c->docs_root))
                        continue;
                rel = priv + (strcmp(c->docs_root, "/") == 0 ? 1 : n + 1);
                if (tree_can_overlap(c->user_tree, rel))
                        return slots_json_fail(e, src, &p, 1, false,
                                               "\"user_tree\" \"%s\" can name the private path %s (or a folder "
                                               "inside it or around it) for some user id; make its fixed part "
                                               "differ, e.g. \"_users/{user}\"", c->user_tree, priv);
        }
        return 0;
}

/* The id rules: uid_min and uid_max together and wide enough for the pool, or uid_base alone. */
static int finish_ids(const struct slots_jsrc *src, struct slots_config *c, struct slots_error *e)
{
        if ((c->uid_min != 0) != (c->uid_max != 0)) {
                const struct slots_jpath p = { .key = c->uid_min ? "uid_min" : "uid_max" };
                return slots_json_fail(e, src, &p, 1, true, "\"uid_min\" and \"uid_max\" go together; set both");
        }
        c->uid_range_set = c->uid_min != 0;
        if (c->uid_range_set && c->uid_max < c->uid_min) {
                const struct slots_jpath p = { .key = "uid_max" };
                return slots_json_fail(e, src, &p, 1, false, "\"uid_max\" is below \"uid_min\"");
        }
        if (c->uid_range_set && c->uid_max - c->uid_min + 1 < c->slots + 1) {
                const struct slots_jpath p = { .key = "uid_max" };
                return slots_json_fail(e, src, &p, 1, false,
                            "the range uid_min..uid_max holds %u ids; the pool needs %u (slots and the "
                            "shared group)", (unsigned) (c->uid_max - c->uid_min + 1), c->slots + 1);
        }
        /* The same ids on every host: no range to allocate from, so the two ways exclude each other. */
        if (c->uid_base && c->uid_range_set) {
                const struct slots_jpath p = { .key = "uid_base" };
                return slots_json_fail(e, src, &p, 1, true,
                            "\"uid_base\" fixes every id; it cannot go with \"uid_min\" and \"uid_max\" (drop "
                            "one or the other)");
        }
        if (c->uid_base && c->uid_base > UINT32_MAX - 2 - c->slots) {
                const struct slots_jpath p = { .key = "uid_base" };
                return slots_json_fail(e, src, &p, 1, false, "\"uid_base\" + %u slots passes the largest id, %u",
                            c->slots, UINT32_MAX - 2);
        }
        return 0;
}

/* shared_dirs: below docs_root, and never over or under a private path. */
static int finish_shared(const struct slots_jsrc *src, const struct slots_config *c, struct slots_error *e)
{
        char *dir;

        if (c->n_shared_dirs && !c->docs_root) {
                const struct slots_jpath p = { .key = "shared_dirs" };
                return slots_json_fail(e, src, &p, 1, true, "\"shared_dirs\" needs \"docs_root\"");
        }
        /* A shared folder that holds a private path would hand that path to every slot. */
        for (size_t i = 0; i < c->n_shared_dirs; i++) {
                /* docs_root "/" gives "/pub", not "//pub", or slots_path_under() would never match */
                dir = slots_path_join(c->docs_root, c->shared_dirs[i]);
                if (!dir)
                        return -ENOMEM;
                for (size_t j = 0; j < c->n_private_paths; j++)
                        if (slots_path_under(c->private_paths[j], dir) || slots_path_under(dir, c->private_paths[j])) {
                                const struct slots_jpath p[2] = { { .key = "shared_dirs" },
                                                                  { .key = NULL, .index = i } };
                                int r = slots_json_fail(e, src, p, 2, false,
                                             "shared folder %s overlaps the private path %s; a private path "
                                             "must never be shared", dir, c->private_paths[j]);
                                free(dir);
                                return r;
                        }
                free(dir);
        }
        return 0;
}

/* Cross-key rules and defaults, in one place. */
static int finish(const struct slots_jsrc *src, struct slots_config *c, struct slots_error *e)
{
        static const struct slots_jpath top[1] = { { .key = NULL, .index = 0 } };
        int xr;

        if (!c->service)
                return slots_json_fail(e, src, top, 0, false, "required key \"service\" is missing");
        if (c->slots == 0)
                return slots_json_fail(e, src, top, 0, false, "required key \"slots\" is missing");
        xr = finish_ids(src, c, e);
        if (xr < 0)
                return xr;
        for (size_t i = 0; i < c->n_slot_limits; i++)
                if (c->slot_limits[i].slot > c->slots) {
                        char name[SLOTS_NAME_MAX];
                        const struct slots_jpath p[2] = {
                                { .key = "limits" },
                                { .key = slots_slot_name(c->slot_limits[i].slot, name) },
                        };
                        return slots_json_fail(e, src, p, 2, true, "\"limits\" names %s, outside the pool of %u slots",
                                    name, c->slots);
                }
        for (size_t i = 0; i < c->n_slot_slice; i++)
                if (c->slot_slice[i].slot > c->slots) {
                        char name[SLOTS_NAME_MAX];
                        const struct slots_jpath p[2] = {
                                { .key = "slice" },
                                { .key = slots_slot_name(c->slot_slice[i].slot, name) },
                        };
                        return slots_json_fail(e, src, p, 2, true, "\"slice\" names %s, outside the pool of %u slots",
                                    name, c->slots);
                }
        xr = finish_shared(src, c, e);
        if (xr < 0)
                return xr;
        if (!c->prefix && set_string(&c->prefix, "slot") < 0)
                return -ENOMEM;
        xr = finish_executor(src, c, e);
        if (xr < 0)
                return xr;
        if (!c->shell && set_string(&c->shell, "/usr/sbin/nologin") < 0)
                return -ENOMEM;
        if (!c->user_tree && set_string(&c->user_tree, "_users/{user}") < 0)
                return -ENOMEM;
        if (check_user_tree(src, c, e) < 0)
                return -EBADMSG;
        if (!c->table && set_string(&c->table, SLOTS_DEFAULT_TABLE) < 0)
                return -ENOMEM;
        if (!c->slotctl_config && set_string(&c->slotctl_config, SLOTS_DEFAULT_SLOTCTL) < 0)
                return -ENOMEM;
        if (!c->slots_root) {
                if (asprintf(&c->slots_root, "/var/lib/slots/%s", c->service) < 0) {
                        c->slots_root = NULL;
                        return -ENOMEM;
                }
        }
        return 0;
}

int slots_config_parse(const char *text, size_t len, const char *file, struct slots_config **ret,
                       struct slots_error *e)
{
        const struct slots_jsrc src = { .file = file, .text = text, .len = len };
        struct slots_config *c;
        json_error_t jerr;
        json_t *root, *v;
        const char *key;
        int r = 0;

        root = json_loadb(text, len, JSON_REJECT_DUPLICATES, &jerr);
        if (!root)
                return slots_json_load_error(e, file, &jerr);
        c = calloc(1, sizeof(*c));
        if (!c) {
                json_decref(root);
                return slots_error_set(e, -ENOMEM, file, "out of memory");
        }
        if (!json_is_object(root)) {
                r = slots_json_fail(e, &src, NULL, 0, false, "the config must be a JSON object");
                goto out;
        }
        json_object_foreach(root, key, v) {
                const struct key *k = NULL;

                for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++)
                        if (strcmp(keys[i].name, key) == 0)
                                k = &keys[i];
                if (!k) {
                        const struct slots_jpath p = { .key = key };
                        r = slots_json_fail(e, &src, &p, 1, true, "unknown key \"%s\" (known: %s)", key, known_keys);
                        goto out;
                }
                r = parse_key(&src, k, v, c, e);
                if (r < 0)
                        goto out;
        }
        r = finish(&src, c, e);
        if (r == 0 && !(c->path = strdup(file)))
                r = -ENOMEM;
out:
        json_decref(root);
        if (r < 0) {
                if (r == -ENOMEM)
                        slots_error_set(e, r, file, "out of memory");
                slots_config_free(c);
                return r;
        }
        *ret = c;
        return 0;
}

int slots_config_load(int rootfd, const char *path, struct slots_config **ret, struct slots_error *e)
{
        return slots_config_load_flags(rootfd, path, 0, ret, e);
}

int slots_config_writers(const struct stat *st, const char *path, uid_t also, struct slots_error *e)
{
        bool owner = st->st_uid != 0 && (also == (uid_t) -1 || st->st_uid != also);
        bool mode = st->st_mode & (S_IWGRP | S_IWOTH);

        if (!owner && !mode)
                return 0;
        slots_error_refuse(e, -EPERM, path, "%s is %04o owned by uid %ju: someone other than root can change it (%s)",
                           path, (unsigned) (st->st_mode & 07777), (uintmax_t) st->st_uid,
                           owner ? "its owner" : "it is writable by group or others");
        if (owner && mode)
                slots_error_fix(e, "chown root:root %s && chmod go-w %s", path, path);
        else if (owner)
                slots_error_fix(e, "chown root:root %s", path);
        else
                slots_error_fix(e, "chmod go-w %s", path);
        return -EPERM;
}

int slots_config_writers_at(int rootfd, const char *path, struct slots_error *e)
{
        struct stat st;
        int fd, r;

        fd = slots_open_in(rootfd, path, O_RDONLY | O_NONBLOCK | O_NOCTTY);
        if (fd < 0)
                return slots_error_set(e, fd, path, "cannot open the config: %s", strerror(-fd));
        if (fstat(fd, &st) < 0)
                r = slots_error_set(e, -errno, path, "cannot stat the config: %s", strerror(errno));
        else
                r = slots_config_writers(&st, path, (uid_t) -1, e);
        close(fd);
        return r;
}

/* Like sshd with its keys: a config that sets other accounts' limits only root may change. */
static int root_only(const struct stat *st, void *data, struct slots_error *e)
{
        return slots_config_writers(st, data, geteuid() == 0 ? (uid_t) -1 : geteuid(), e);
}

/* The commands that act as root: the same rule, root alone. */
static int root_owned(const struct stat *st, void *data, struct slots_error *e)
{
        return slots_config_writers(st, data, (uid_t) -1, e);
}

int slots_config_load_flags(int rootfd, const char *path, unsigned flags, struct slots_config **ret,
                            struct slots_error *e)
{
        const struct slots_read how = {
                .path = path,
                .what = "the config",
                .max = CONFIG_MAX,
                .check = flags & SLOTS_CONFIG_ROOT_ONLY ? root_only : flags & SLOTS_CONFIG_ROOT_OWNED ? root_owned : NULL,
                .data = (void *) path,
        };
        char *text = NULL;
        size_t len;
        int fd, r;

        if ((flags & SLOTS_CONFIG_ROOT_ONLY) && path[0] != '/')
                return slots_error_set(e, -EINVAL, path, "the config path is not absolute");
        if (flags & SLOTS_CONFIG_ROOT_ONLY) {
                /*
                 * Through the resolver: no symlink in any component, and every folder on the
                 * way root's (or the running user's, for tests run unprivileged) and writable
                 * by nobody else, ACLs included, so no other file can be swapped in.
                 */
                struct slots_chase chase = {
                        .flags = SLOTS_CHASE_NO_SYMLINKS | SLOTS_CHASE_TRUSTED,
                        .trusted_uid = geteuid() == 0 ? (uid_t) -1 : geteuid(),
                        .trusted_gid = geteuid() == 0 ? (gid_t) -1 : getegid(),
                        .open_flags = O_RDONLY | O_NONBLOCK | O_NOCTTY,
                };

                slots_error_clear(e);
                fd = slots_chase(rootfd, path, &chase, NULL, e);
                /* A refusal keeps the resolver's words (the component and the fix). */
                if ((fd == -EPERM || fd == -ELOOP) && e && e->reason[0])
                        return fd;
        } else {
                fd = slots_open_in(rootfd, path, O_RDONLY | O_NONBLOCK | O_NOCTTY);
        }
        if (fd < 0) {
                slots_error_set(e, fd, path, "cannot open the config: %s", strerror(-fd));
                if (fd == -ENOENT && !(flags & SLOTS_CONFIG_ROOT_ONLY))
                        slots_error_fix(e, "create it (see slots.conf(5)) or name another with --config");
                return fd;
        }
        r = slots_read_text_fd(fd, &how, NULL, &text, &len, e);
        close(fd);
        if (r == 0)
                r = slots_config_parse(text, len, path, ret, e);
        free(text);
        return r;
}

void slots_config_limits_for(const struct slots_config *c, unsigned n, struct slots_limits *out)
{
        *out = c->limits_default;
        for (size_t i = 0; i < c->n_slot_limits; i++)
                if (c->slot_limits[i].slot == n)
                        slots_limits_overlay(out, &c->slot_limits[i].limits);
}

void slots_config_slice_for(const struct slots_config *c, unsigned n, struct slots_slice_props *out)
{
        *out = c->slice_default;
        for (size_t i = 0; i < c->n_slot_slice; i++)
                if (c->slot_slice[i].slot == n)
                        slots_slice_overlay(out, &c->slot_slice[i].props);
}

bool slots_config_passes_env(const struct slots_config *c, const char *name)
{
        for (size_t i = 0; i < c->n_sudo_env; i++) {
                const char *n = c->sudo_env[i];
                size_t len = strlen(n);

                if (len && n[len - 1] == '*' ? strncmp(n, name, len - 1) == 0 : strcmp(n, name) == 0)
                        return true;
        }
        return false;
}

char *slots_config_user_tree(const struct slots_config *c, const char *user)
{
        const char *t = c->user_tree;
        size_t ulen = strlen(user), n = 0;
        char *out, *o;

        for (const char *p = t; (p = strstr(p, "{user}")); p += 6)
                n++;
        out = malloc(strlen(t) + n * ulen + 1);
        if (!out)
                return NULL;
        o = out;
        while (*t) {
                if (strncmp(t, "{user}", 6) == 0) {
                        memcpy(o, user, ulen);
                        o += ulen;
                        t += 6;
                } else {
                        *o++ = *t++;
                }
        }
        *o = '\0';
        return out;
}
