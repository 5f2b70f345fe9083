/* The two files slots-provision renders from the config: the slotctl config and the sudoers drop-in. */
#include <errno.h>
#include <jansson.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "accounts.h"
#include "dropin.h"
#include "ids.h"

/*
 * allowed_cwd: the docs root, where the executor runs a user's commands, and the slots' state
 * folders (<slots_root>/state), where a slot runs on its own, as the test slot's probe does.
 */
char *slots_dropin_slotctl_json(const struct slots_config *c, size_t *len)
{
        json_t *o = json_object(), *cwd = json_array(), *exec = json_array();
        char *text = NULL, *glob = NULL, *state = NULL;

        if (!o || !cwd || !exec)
                goto out;
        if (c->docs_root) {
                if (json_object_set_new(o, "docs_root", json_string(c->docs_root)) < 0 ||
                    json_array_append_new(cwd, json_string(c->docs_root)) < 0)
                        goto out;
        }
        if (c->slots_root) {
                if (asprintf(&state, "%s/state", strcmp(c->slots_root, "/") ? c->slots_root : "") < 0) {
                        state = NULL;
                        goto out;
                }
                if (json_array_append_new(cwd, json_string(state)) < 0)
                        goto out;
        }
        if (c->app_root && c->launcher) {
                if (asprintf(&glob, "%s/releases/*/bin/%s", strcmp(c->app_root, "/") ? c->app_root : "",
                             c->launcher) < 0) {
                        glob = NULL;
                        goto out;
                }
                if (json_array_append_new(exec, json_string(glob)) < 0)
                        goto out;
        }
        if (json_object_set(o, "allowed_cwd", cwd) < 0 || json_object_set(o, "allowed_exec", exec) < 0)
                goto out;
        text = json_dumps(o, JSON_SORT_KEYS | JSON_INDENT(2));
        if (text) {
                char *t = NULL;
                if (asprintf(&t, "%s\n", text) < 0)
                        t = NULL;
                free(text);
                text = t;
        }
        if (text)
                *len = strlen(text);
out:
        free(glob);
        free(state);
        json_decref(cwd);
        json_decref(exec);
        json_decref(o);
        return text;
}

const char *slots_dropin_sudoers_name(const struct slots_config *c, char *buf, size_t size)
{
        /* sudo skips drop-ins whose name holds a '.' or ends in '~'; config names have neither. */
        snprintf(buf, size, "slots-%s", c->service);
        return buf;
}

/* Characters a sudoers command path can hold without escaping (no space, ',', ':', '=', '\\' or glob). */
static bool sudoers_safe(const char *s)
{
        for (; *s; s++)
                if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || (*s >= '0' && *s <= '9') ||
                      strchr("/._+-@", *s)))
                        return false;
        return true;
}

/* Writes s as a POSIX extended regular expression that matches s literally (s is sudoers_safe). */
static void regex_literal(FILE *f, const char *s)
{
        for (; *s; s++)
                fprintf(f, *s == '.' || *s == '+' ? "[%c]" : "%c", *s);
}

/*
 * "(slot01, ..., slotNN[ : group])", written out: sudo 1.9.13 never matches a
 * Runas_Alias of users that is followed by a group list, so no alias here.
 */
static void runas_list(FILE *f, const struct slots_config *c, const char *group)
{
        fputc('(', f);
        for (unsigned i = 1; i <= c->slots; i++) {
                char name[SLOTS_NAME_MAX];

                fprintf(f, "%s%s", slots_slot_name(i, name), i < c->slots ? "," : "");
                if (i < c->slots)
                        fputs(i % 10 == 0 ? " \\\n\t" : " ", f);
        }
        fprintf(f, "%s%s)", group ? " : " : "", group ? group : "");
}

/* The path of one release's launcher, or NULL with asprintf's failure. */
static char *launcher_path(const struct slots_config *c, const char *release)
{
        char *p;

        if (asprintf(&p, "%s/%s/bin/%s", strcmp(c->app_root, "/") ? c->app_root : "", release, c->launcher) < 0)
                return NULL;
        return p;
}

/*
 * The launcher's alias (rel: the releases' pattern, cur: current's) and its
 * Defaults: env_keep exactly sudo_env, and secure_path off when PATH is listed.
 */
static void run_rules(FILE *f, const struct slots_config *c, const char *alias, const char *rel, const char *cur)
{
        fprintf(f, "Cmnd_Alias %s_RUN = ", alias);
        if (c->slotctl) {
                /* slotctl's first argument is a release's launcher or current's, by name. */
                fprintf(f, "%s ^", c->slotctl);
                regex_literal(f, strcmp(c->app_root, "/") ? c->app_root : "");
                fprintf(f, "/(releases/[^/.][^/]*|current)/bin/");
                regex_literal(f, c->launcher);
                fprintf(f, "( .*)?$\n");
        } else {
                fprintf(f, "%s, %s\n", rel, cur);
        }
        /* releases/ is 0711: sudo's glob(3) cannot list it, so the pattern is matched by name. */
        fprintf(f, "# releases/ is 0711, so the pattern is matched by name (fnmatch), not by listing it.\n");
        /*
         * always_set_home: HOME is the slot's own unless the caller lists it in
         * --preserve-env (sudo adds those after it resets the environment); a HOME
         * the caller merely has, kept by env_keep, is replaced.
         */
        fprintf(f, "# always_set_home: HOME is the slot's home unless --preserve-env lists it.\n");
        fprintf(f, "Defaults!%s_RUN fast_glob, env_reset, !setenv, !requiretty, !use_pty, always_set_home, "
                "!env_check, ", alias);
        if (c->n_sudo_env == 0) {
                fprintf(f, "!env_keep");
        } else {
                fprintf(f, "env_keep = \"");
                for (size_t i = 0; i < c->n_sudo_env; i++)
                        fprintf(f, "%s%s", i ? " " : "", c->sudo_env[i]);
                fprintf(f, "\"");
        }
        fprintf(f, "%s\n", slots_config_passes_env(c, "PATH") ? ", !secure_path" : "");
}

/* "SLOTS_" and the service name, upper case, '-' as '_': the prefix of the drop-in's aliases. */
static void service_alias(const struct slots_config *c, char *alias, size_t size)
{
        snprintf(alias, size, "SLOTS_");
        for (const char *p = c->service; *p && strlen(alias) < size - 1; p++) {
                char ch = *p >= 'a' && *p <= 'z' ? (char) (*p - 'a' + 'A') : (*p == '-' ? '_' : *p);
                size_t n = strlen(alias);
                alias[n] = ch;
                alias[n + 1] = '\0';
        }
}

/*
 * The drop-in allows exactly the executor's three command lines, as any slot of
 * the pool: "true" (preflight), "kill -s SIG -- -PGID", and the launcher (through
 * slotctl when configured) with --preserve-env limited to sudo_env and -g only
 * with run_as_group.  sudo refuses --preserve-env=NAME unless NAME passes
 * env_keep (or env_check) or the rule grants SETENV; the rule never grants SETENV
 * (that would also allow -E), so the command's Defaults set env_keep to exactly
 * sudo_env, turn env_check off (it would pass LANGUAGE, COLORTERM... beyond the
 * list) and, when PATH is listed, secure_path off: sudo refuses a PATH from the
 * caller whenever secure_path is set.
 */
char *slots_dropin_sudoers(const struct slots_config *c, size_t *len, struct slots_error *e)
{
        static const char *const bins[] = { "/usr/bin", "/bin" };
        char alias[64], *out = NULL, *rel = NULL, *cur = NULL;
        bool run = c->app_root && c->launcher;
        size_t size = 0;
        FILE *f;

        if ((c->app_root && !sudoers_safe(c->app_root)) || (c->launcher && !sudoers_safe(c->launcher)) ||
            (c->slotctl && !sudoers_safe(c->slotctl))) {
                slots_error_invalid(e, -EBADMSG, c->path,
                                "app_root, launcher or slotctl holds a character a sudoers rule cannot carry "
                                "literally (only letters, digits and / . _ + - @)");
                return NULL;
        }
        service_alias(c, alias, sizeof(alias));
        if (run && (!(rel = launcher_path(c, "releases/*")) || !(cur = launcher_path(c, "current"))))
                goto oom;
        f = open_memstream(&out, &size);
        if (!f)
                goto oom;
        fprintf(f, "# Written by slots-provision from the slots config; changes here are overwritten.\n");
        fprintf(f, "# %s may run, as any slot of its pool and without a password, exactly:\n", c->service);
        fprintf(f, "#   sudo -n -u slotNN true\n");
        if (run)
                fprintf(f, "#   sudo -n -u slotNN %s--preserve-env=LIST -- %s%s ARGS...\n",
                        c->run_as_group ? "[-g RUN_AS_GROUP] " : "", c->slotctl ? "SLOTCTL " : "", "LAUNCHER");
        fprintf(f, "#   sudo -n -u slotNN kill -s SIGNAL -- -PGID\n");
        fprintf(f, "# Nothing else: no other account or command, no -E, no sudoedit.\n");
        fprintf(f, "# sudoers cannot refuse -P (--preserve-groups): a run may keep %s's groups, so nothing a\n", c->service);
        fprintf(f, "# slot must not reach is open to them (release closes the group bits of a user's tree).\n");
        /* No arguments for true; kill only as "-s SIGNAL -- -PGID" (a regular expression, sudo >= 1.9.10). */
        fprintf(f, "Cmnd_Alias %s_CTL = ", alias);
        for (size_t i = 0; i < 2; i++)
                fprintf(f, "%s/true \"\", %s/kill ^-s [A-Z0-9]+ -- -([2-9]|[1-9][0-9]+)$%s", bins[i], bins[i],
                        i ? "\n" : ", \\\n\t");
        /*
         * !use_pty: with use_pty (Debian's default) and a terminal, sudo runs the command in a
         * session of its own on a new pty, so the run's process group holds only root's sudo and
         * the executor's "kill -- -PGID" as the slot gets EPERM while the command lives on.
         */
        fprintf(f, "# !use_pty: on a terminal, use_pty moves the command out of the process group the kill ends.\n");
        fprintf(f, "Defaults!%s_CTL env_reset, !setenv, !requiretty, !use_pty\n", alias);
        if (run)
                run_rules(f, c, alias, rel, cur);
        fprintf(f, "%s ALL = ", c->service);
        runas_list(f, c, NULL);
        fprintf(f, " NOPASSWD: NOSETENV: %s_CTL", alias);
        if (run) {
                fprintf(f, ", \\\n\t");
                runas_list(f, c, c->run_as_group);
                fprintf(f, " NOPASSWD: NOSETENV: %s_RUN", alias);
        }
        fprintf(f, "\n");
        /* "sudo -g GROUP" alone runs as the caller itself, which sudo allows whatever the user list says. */
        fprintf(f, "%s ALL = (%s : ALL) !%s_CTL%s%s%s\n", c->service, c->service, alias, run ? ", !" : "",
                run ? alias : "", run ? "_RUN" : "");
        if (fclose(f) != 0)
                goto oom;
        free(rel);
        free(cur);
        *len = size;
        return out;
oom:
        free(out);
        free(rel);
        free(cur);
        slots_error_set(e, -ENOMEM, c->path, "out of memory");
        return NULL;
}

/* ---- the drop-in's check: visudo on the very bytes that are installed ---- */

int slots_dropin_visudo(int fd, const char *display, struct slots_error *e)
{
        const char *const argv[] = { SLOTS_VISUDO, "-c", "-f", "-", NULL };
        char out[1024];
        int r = slots_run_program(argv, fd, 30000, out, sizeof(out));

        if (r == 0)
                return 0;
        if (r < 0)
                return slots_error_set(e, r, display, "cannot run %s to check the drop-in: %s", SLOTS_VISUDO,
                                       strerror(-r));
        for (char *p = out; *p; p++)
                if (*p == '\n')
                        *p = *(p + 1) ? ' ' : '\0';
        return slots_error_refuse(e, -EBADMSG, display, "visudo rejects the drop-in, not installed: %s", out);
}
