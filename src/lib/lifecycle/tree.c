/* User trees under docs_root: which trees a walk takes, made at assign, found again at release. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fsutil.h"
#include "ids.h"
#include "path.h"
#include "resolve.h"
#include "strbuf.h"
#include "tree-int.h"
#include "tree.h"

/* The walks of one assign or release: the rule, the first failure, and the path for messages. */
struct trees {
        struct tree_walk t;
        struct slots_error *e;
        bool failed;                    /* e holds the first failure */
        struct strbuf path;             /* the folder being opened, for errors */
};

/* Records the first failure only: later ones are usually its consequences. */
static int fail_as(struct trees *w, const char *name, int r, const char *what, bool with_errno)
{
        char *full = NULL, shown[SLOTS_ERR_TEXT];

        if (w->failed)
                return r;
        w->failed = true;
        if (asprintf(&full, "%s%s%s", strbuf_str(&w->path), name ? "/" : "", name ? name : "") < 0)
                full = NULL;
        slots_walk_shown(full ? full : strbuf_str(&w->path), 0, shown, sizeof(shown));
        free(full);
        if (with_errno)
                return slots_error_set(w->e, r, shown, "%s: %s", what, strerror(-r));
        return slots_error_set(w->e, r, shown, "%s", what);
}

static int fail(struct trees *w, const char *name, int r, const char *what)
{
        return fail_as(w, name, r, what, true);
}

/* path set to the walk's first folder; 0 or -ENOMEM. */
static int path_set(struct trees *w, const char *path)
{
        strbuf_addf(&w->path, "%s", path);
        return w->path.oom ? -ENOMEM : 0;
}

static bool is_dot(const char *name)
{
        return name[0] == '.' && (name[1] == '\0' || (name[1] == '.' && name[2] == '\0'));
}

/*
 * Walks the tree whose root folder is fd (consumed) with the rule of w: the
 * root first, then every entry below it, at any depth, on its file system.
 */
static int walk(struct trees *w, int fd)
{
        struct slots_walk how = { .flags = SLOTS_WALK_ONE_FS, .path = w->path.s, .visit = tree_visit, .data = &w->t };
        struct slots_error sub;
        int r;

        slots_error_clear(&sub);
        r = slots_walk(fd, &how, &sub);
        close(fd);
        if (r < 0 && !w->failed) {
                w->failed = true;
                if (w->e)
                        *w->e = sub;
        }
        return r;
}

#define LINK_FIX "replace the symbolic link with a folder: symlinks on the way to a user's tree are never followed"

/*
 * The tree's own folder, name in pfd: made (mode 0) or, when a killed run left it half made
 * (root's, mode 0: only root makes such a folder), given service:gid 0700 through the fd.  It
 * is the user's: one that is there is taken as it is, not judged by the owner chain.
 */
static int make_leaf(struct trees *w, int pfd, const char *name, gid_t gid)
{
        struct stat st;
        bool made;
        int fd = slots_dir_make(pfd, name, 0, NULL, NULL, &made, NULL);

        if (fd < 0) {
                bool first = !w->failed;

                fail_as(w, name, fd, fd == -ELOOP ? "is a symbolic link" : fd == -ENOTDIR ? "is not a folder"
                                                                            : "cannot create the folder",
                        fd != -ELOOP && fd != -ENOTDIR);
                if (fd == -ELOOP && first)
                        slots_error_fix(w->e, LINK_FIX);
                return fd;
        }
        if (fstat(fd, &st) < 0 || ((made || (st.st_uid == geteuid() && !(st.st_mode & 07777))) &&
                                   (fchown(fd, w->t.svc_uid, gid) < 0 || fchmod(fd, 0700) < 0))) {
                int r = fail(w, name, -errno, "cannot set owner and mode of the new folder");

                close(fd);
                return r;
        }
        return fd;
}

/*
 * Makes the user's tree docs_root/rel: the folders on the way by the resolver's
 * SLOTS_CHASE_MKDIR (service:service 0711; one that is there owned by root or the service and
 * writable by nobody else), the tree itself by make_leaf().  Returns its fd or -errno, the
 * first failure in w->e.
 */
static int make_tree(struct trees *w, int rootfd, const char *docs_root, const char *rel, gid_t gid)
{
        const struct slots_chase way = {
                .flags = SLOTS_CHASE_PARENT | SLOTS_CHASE_MKDIR | SLOTS_CHASE_TRUSTED, .what = "user_tree",
                .trusted_uid = w->t.svc_uid, .trusted_gid = w->t.svc_gid, .open_flags = O_RDONLY | O_DIRECTORY,
                .mkdir_uid = w->t.svc_uid, .mkdir_gid = w->t.svc_gid, .mkdir_mode = 0711,
        };
        char *full = slots_path_join(docs_root, rel);
        const char *base, *slash = strrchr(rel, '/');
        struct slots_error sub;
        int pfd, fd;

        if (!full)
                return fail(w, NULL, -ENOMEM, "out of memory");
        slots_error_clear(&sub);
        pfd = slots_chase(rootfd, full, &way, &base, &sub);
        if (pfd < 0 && !w->failed) {
                w->failed = true;
                if (w->e)
                        *w->e = sub;
                if (pfd == -ELOOP)
                        slots_error_fix(w->e, LINK_FIX);
        }
        if (pfd < 0) {
                free(full);
                return pfd;
        }
        /* w->path holds docs_root: the way to the tree follows, for the messages. */
        if (slash)
                strbuf_addf(&w->path, "/%.*s", (int) (slash - rel), rel);
        fd = make_leaf(w, pfd, base, gid);
        close(pfd);
        if (fd >= 0 && strbuf_push_name(&w->path, base) < 0) {
                close(fd);
                fd = fail(w, NULL, -ENOMEM, "out of memory");
        }
        free(full);
        return fd;
}

/*
 * Opens the tree docs_root/rel below docs_fd at release, no symlink followed: one that is not
 * there (or a symlink or file in its place: assign never prepared anything through it) is
 * -ENOENT, left to the caller.
 */
static int open_rel(struct trees *w, int docs_fd, const char *rel)
{
        const struct slots_chase how = { .flags = SLOTS_CHASE_NO_SYMLINKS | SLOTS_CHASE_MUST_DIR,
                                         .open_flags = O_RDONLY | O_DIRECTORY };
        char *abs;
        int fd;

        if (asprintf(&abs, "/%s", rel) < 0)
                return fail(w, NULL, -ENOMEM, "out of memory");
        fd = slots_chase(docs_fd, abs, &how, NULL, NULL);
        free(abs);
        if (fd == -ENOENT || fd == -ELOOP || fd == -ENOTDIR)
                return -ENOENT;
        if (fd < 0)
                return fail(w, rel, fd, "cannot open the folder");
        if (strbuf_push_name(&w->path, rel) < 0) {
                close(fd);
                return fail(w, NULL, -ENOMEM, "out of memory");
        }
        return fd;
}

/* Opens docs_root inside rootfd; -ENOENT is left to the caller to judge. */
static int open_docs(struct trees *w, int rootfd, const struct slots_config *c)
{
        /* No symlink on the way, and nobody but root and the service could have swapped a folder. */
        int fd = slots_open_root_dir(rootfd, c->docs_root, "docs_root", w->t.svc_uid, w->t.svc_gid, w->e);

        if (fd >= 0)
                return fd;
        if (fd == -ENOENT) {
                slots_error_set(w->e, fd, c->docs_root, "docs_root does not exist");
                slots_error_fix(w->e, "create the service's document folder, or fix \"docs_root\" in %s",
                                c->path ? c->path : "the config");
                w->failed = true;
                return fd;
        }
        w->failed = true;
        return fd;
}

int slots_tree_prepare(int rootfd, const struct slots_config *c, const char *user, uid_t slot_uid, gid_t slot_gid,
                       uid_t service_uid, gid_t service_gid, struct slots_tree_stats *stats,
                       struct slots_error *e)
{
        struct slots_tree_stats dummy = { 0 };
        struct trees w = {
                .t = {
                        .mode = TREE_PREPARE,
                        .slot_uid = slot_uid,
                        .slot_gid = slot_gid,
                        .svc_uid = service_uid,
                        .svc_gid = service_gid,
                        .stats = stats ? stats : &dummy,
                },
                .e = e,
        };
        char *rel = NULL;
        int docs = -1, fd, r;

        if (!c->docs_root)
                return 0;
        if (!slots_user_valid(user))
                return slots_error_set(e, -EINVAL, "user", "invalid user id");
        if (slot_uid == 0 || slot_uid == (uid_t) -1)
                return slots_error_refuse(e, -EINVAL, "slot", "refusing to grant a tree to uid 0");
        r = path_set(&w, c->docs_root);
        if (r < 0)
                return slots_error_set(e, r, c->docs_root, "out of memory");
        rel = slots_config_user_tree(c, user);
        if (!rel) {
                r = fail(&w, NULL, -ENOMEM, "out of memory");
                goto out;
        }
        docs = open_docs(&w, rootfd, c);
        if (docs < 0) {
                r = docs;
                goto out;
        }
        fd = make_tree(&w, rootfd, c->docs_root, rel, service_gid);
        if (fd < 0) {
                r = fd;
                goto out;
        }
        r = walk(&w, fd);
out:
        slots_close(docs);
        free(rel);
        strbuf_free(&w.path);
        return r;
}

/* Releases docs_fd/rel; a tree that does not exist is nothing to do. */
static int release_one(struct trees *w, int docs_fd, const char *rel, const char *docs_root)
{
        int fd;

        /* Errors name paths from docs_root: the walk starts there again for each tree. */
        strbuf_truncate(&w->path, strlen(docs_root));
        fd = open_rel(w, docs_fd, rel);
        if (fd == -ENOENT && !w->failed)
                return 0;
        if (fd < 0)
                return fd;
        return walk(w, fd);
}

/*
 * Whether name is the component pattern pat with some valid user id in place
 * of {user}; that user id goes to user (SLOTS_USER_MAX + 1 bytes).
 */
static bool pattern_match(const char *pat, const char *name, char *user)
{
        const char *brace = strstr(pat, "{user}");
        size_t pre = (size_t) (brace - pat), nlen = strlen(name);

        if (!brace || strncmp(pat, name, pre) != 0)
                return false;
        for (size_t len = 1; len <= SLOTS_USER_MAX && pre + len <= nlen; len++) {
                char buf[NAME_MAX + 1], *o = buf;
                const char *p = pat;
                bool fits = true;

                memcpy(user, name + pre, len);
                user[len] = '\0';
                if (!slots_user_valid(user))
                        continue;
                while (*p && fits) {
                        if (strncmp(p, "{user}", 6) == 0) {
                                fits = (size_t) (o - buf) + len < sizeof(buf);
                                if (fits) {
                                        memcpy(o, user, len);
                                        o += len;
                                }
                                p += 6;
                        } else {
                                fits = (size_t) (o - buf) + 1 < sizeof(buf);
                                if (fits)
                                        *o++ = *p++;
                        }
                }
                *o = '\0';
                if (fits && strcmp(buf, name) == 0)
                        return true;
        }
        return false;
}

/* A pending slot: every user tree, found by matching the user_tree pattern at its {user} level. */
static int release_all_trees(struct trees *w, int docs_fd, const struct slots_config *c)
{
        char *tmpl = strdup(c->user_tree), *pat, *slash, *end;
        char user[SLOTS_USER_MAX + 1];
        struct slots_first first = { 0, NULL };
        DIR *d = NULL;
        struct dirent *de;
        int fd = docs_fd, r = 0, k;

        if (!tmpl)
                return fail(w, NULL, -ENOMEM, "out of memory");
        /* The folders before the first {user} component are fixed names. */
        pat = strstr(tmpl, "{user}");
        while (pat > tmpl && pat[-1] != '/')
                pat--;
        end = strchr(pat, '/');
        if (end)
                *end = '\0';
        if (pat > tmpl) {
                pat[-1] = '\0';
                fd = open_rel(w, docs_fd, tmpl);
                if (fd < 0) {
                        r = fd == -ENOENT && !w->failed ? 0 : fd;
                        goto out;
                }
        } else {
                fd = dup(docs_fd);
                if (fd < 0) {
                        r = fail(w, NULL, -errno, "cannot open docs_root");
                        goto out;
                }
        }
        d = fdopendir(fd);
        if (!d) {
                r = fail(w, NULL, -errno, "cannot read the folder");
                close(fd);
                goto out;
        }
        for (;;) {
                errno = 0;
                de = readdir(d);
                if (!de) {
                        if (errno)
                                r = fail(w, NULL, -errno, "cannot read the folder");
                        break;
                }
                if (is_dot(de->d_name) || !pattern_match(pat, de->d_name, user))
                        continue;
                slash = slots_config_user_tree(c, user);
                if (!slash) {
                        r = fail(w, NULL, -ENOMEM, "out of memory");
                        break;
                }
                /* One tree's failure never keeps the others from being given back. */
                k = release_one(w, docs_fd, slash, c->docs_root);
                free(slash);
                if (k == -ENOMEM) {
                        r = k;
                        break;
                }
                slots_first_keep(&first, k, NULL);
        }
        closedir(d);
out:
        free(tmpl);
        return r < 0 ? r : first.r;
}

int slots_tree_release(int rootfd, const struct slots_config *c, const char *user, uid_t slot_uid,
                       gid_t slot_gid, uid_t service_uid, gid_t service_gid,
                       struct slots_tree_stats *stats, struct slots_error *e)
{
        struct slots_tree_stats dummy = { 0 };
        struct trees w = {
                .t = {
                        .mode = user ? TREE_RELEASE_ALL : TREE_RELEASE_SLOT,
                        .slot_uid = slot_uid,
                        .slot_gid = slot_gid,
                        .svc_uid = service_uid,
                        .svc_gid = service_gid,
                        .stats = stats ? stats : &dummy,
                },
                .e = e,
        };
        char *rel = NULL;
        int docs = -1, r;

        if (!c->docs_root)
                return 0;
        if (slot_uid == 0 || slot_gid == 0)
                return slots_error_refuse(e, -EINVAL, "slot", "refusing to release a tree from uid or gid 0");
        if (user && !slots_user_valid(user))
                return slots_error_set(e, -EINVAL, "user", "invalid user id");
        r = path_set(&w, c->docs_root);
        if (r < 0)
                return slots_error_set(e, r, c->docs_root, "out of memory");
        docs = slots_open_root_dir(rootfd, c->docs_root, "docs_root", service_uid, service_gid, e);
        if (docs == -ENOENT) {
                slots_error_clear(e);
                r = 0;  /* no document tree, so no user tree either */
                goto out;
        }
        if (docs < 0) {
                r = docs;
                goto out;
        }
        if (user) {
                rel = slots_config_user_tree(c, user);
                r = rel ? release_one(&w, docs, rel, c->docs_root) : fail(&w, NULL, -ENOMEM, "out of memory");
        } else {
                r = release_all_trees(&w, docs, c);
        }
out:
        slots_close(docs);
        free(rel);
        strbuf_free(&w.path);
        return r;
}

