/* The permission model of each step of a path, read through the resolver as the kernel would follow it. */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "acl.h"
#include "error.h"
#include "perm-path.h"
#include "resolve.h"

static int model_of_fd(int fd, struct slots_perm_model *m)
{
        struct slots_acl acl = { 0 };
        struct stat st;
        int r;

        if (fstat(fd, &st) < 0)
                return -errno;
        /* A symlink has no ACL; one that cannot be read leaves the mode bits (the kernel's too, without ACLs). */
        r = S_ISLNK(st.st_mode) ? 0 : slots_acl_get(fd, SLOTS_ACL_ACCESS, &acl);
        slots_perm_from_stat(m, &st, r > 0 ? &acl : NULL);
        slots_acl_free(&acl);
        return 0;
}

static int walk_add(struct slots_perm_path *w, const char *path, bool traverse, int fd)
{
        struct slots_perm_step *s = realloc(w->steps, (w->n + 1) * sizeof(*s));

        if (!s)
                return -ENOMEM;
        w->steps = s;
        s = &w->steps[w->n];
        memset(s, 0, sizeof(*s));
        s->path = strdup(path);
        if (!s->path)
                return -ENOMEM;
        s->traverse = traverse;
        s->have_model = model_of_fd(fd, &s->m) == 0;
        w->n++;
        return 0;
}

static int walk_step(void *data, const struct slots_chase_step *s)
{
        return walk_add(data, s->path, !s->last, s->fd);
}

/*
 * Follows path from "/" as the kernel would (the resolver, symlinks followed)
 * and records each folder it passes and the object at the end with its owner,
 * mode and ACL.  Only reads.  Returns 0 or -ENOMEM; a path that cannot be
 * followed sets w->err and w->err_path.
 */
int slots_perm_path_read(const char *path, struct slots_perm_path *w)
{
        struct slots_chase how = { .open_flags = O_PATH, .step = walk_step, .data = w };
        struct slots_error e;
        int fd;

        memset(w, 0, sizeof(*w));
        slots_error_clear(&e);
        fd = slots_chase(AT_FDCWD, path, &how, NULL, &e);
        if (fd >= 0) {
                close(fd);
                return 0;
        }
        if (fd == -ENOMEM)
                return fd;
        w->err = -fd;
        w->err_path = strdup(e.object[0] ? e.object : path);
        return w->err_path ? 0 : -ENOMEM;
}

