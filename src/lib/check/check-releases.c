/* Which releases check looks at: the one current points at, else every folder of releases/. */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check-int.h"
#include "path.h"

/*
 * The release current points at (release/ NAME or an absolute path into rel): 1 with it
 * the one launcher, 0 when current names none (the note says why), -ENOMEM.
 */
static int current_release(struct check_run *k, const char *rel, const char *cur)
{
        char target[4096];
        const char *name;
        size_t rl = strlen(rel);
        ssize_t n = readlink(cur, target, sizeof(target) - 1);

        /* Not a link, or none: every release.  A link that cannot be read: every release too, said so. */
        if (n < 0 && errno != EINVAL && errno != ENOENT &&
            asprintf(&k->release_note, "every release: %s cannot be read: %s", cur, strerror(errno)) < 0)
                k->release_note = NULL;
        if (n <= 0)
                return 0;
        target[n] = '\0';
        while (n > 1 && target[n - 1] == '/')
                target[--n] = '\0';
        if (target[0] == '/' && strncmp(target, rel, rl) == 0 && target[rl] == '/')
                name = target + rl + 1;
        else if (strncmp(target, "releases/", 9) == 0)
                name = target + 9;
        else
                name = NULL;
        if (!name || !*name || strchr(name, '/') || !strcmp(name, ".") || !strcmp(name, "..")) {
                if (asprintf(&k->release_note, "every release: %s points outside %s", cur, rel) < 0)
                        k->release_note = NULL;
                return 0;
        }
        k->launchers = calloc(1, sizeof(*k->launchers));
        if (!k->launchers || !(k->launchers[0].release = strdup(name)) ||
            asprintf(&k->launchers[0].path, "%s/%s/bin/%s", rel, name, k->cfg->launcher) < 0 ||
            asprintf(&k->release_note, "release %s, which %s points at", name, cur) < 0)
                return -ENOMEM;
        k->n_launchers = 1;
        return 1;
}

/* Every folder of rel not starting with '.', each a launcher; -ENOMEM, else 0. */
static int every_release(struct check_run *k, const char *rel, const char *cur)
{
        struct dirent **list = NULL;
        int count = scandir(rel, &list, NULL, alphasort), r = 0;

        if (count < 0) {
                k->releases_missing = true;
                return 0;
        }
        k->launchers = calloc((size_t) count + 1, sizeof(*k->launchers));
        if (!k->launchers)
                r = -ENOMEM;
        for (int i = 0; r == 0 && i < count; i++) {
                struct launcher *l = &k->launchers[k->n_launchers];
                char *dir;
                struct stat st;
                bool is_dir;

                if (list[i]->d_name[0] == '.')
                        continue;
                dir = slots_path_join(rel, list[i]->d_name);
                is_dir = dir && lstat(dir, &st) == 0 && S_ISDIR(st.st_mode);
                free(dir);
                if (!is_dir)
                        continue;
                if (!(l->release = strdup(list[i]->d_name)) ||
                    asprintf(&l->path, "%s/%s/bin/%s", rel, list[i]->d_name, k->cfg->launcher) < 0) {
                        r = -ENOMEM;
                        break;
                }
                k->n_launchers++;
        }
        if (r == 0 && !k->release_note &&
            asprintf(&k->release_note, "every release: %s is not a symlink into %s", cur, rel) < 0)
                k->release_note = NULL;
        for (int i = 0; i < count; i++)
                free(list[i]);
        free(list);
        return r;
}

/*
 * The release in use: the one <app_root>/current points at when it is a
 * symlink to a folder of <app_root>/releases; else every folder there (any of
 * them may be the one a deploy switches to next).
 */
void check_find_releases(struct check_run *k)
{
        char *rel = slots_path_join(k->cfg->app_root, "releases"), *cur = slots_path_join(k->cfg->app_root, "current");
        int r = -ENOMEM;

        if (rel && cur) {
                r = current_release(k, rel, cur);
                if (r == 0)
                        r = every_release(k, rel, cur);
        }
        if (r < 0)
                k->err = -ENOMEM;
        free(rel);
        free(cur);
}
