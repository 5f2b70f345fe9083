/* The folders slots-provision makes or repairs: configured roots, the slot folders, release traversal bits. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fsutil.h"
#include "path.h"
#include "provision-int.h"

/* A dry pass reports a missing folder once, however many files go into it. */
static bool dry_seen(struct prov_run *x, const char *path)
{
        char **n;

        if (x->quiet)
                return false;
        for (size_t i = 0; i < x->n_dry_made; i++)
                if (strcmp(x->dry_made[i], path) == 0)
                        return true;
        n = realloc(x->dry_made, (x->n_dry_made + 1) * sizeof(*n));
        if (n) {
                x->dry_made = n;
                if ((n[x->n_dry_made] = strdup(path)))
                        x->n_dry_made++;
        }
        return false;
}

/*
 * A configured root (app_root, docs_root, slots_root, /etc/sudoers.d) through
 * the resolver: no symlink in any component, owned by root (or, with
 * service_may_own, the service) all the way and writable by nobody else.  A
 * refusal is reported here; -ENOENT is left to the caller.
 */
int prov_open_root(struct prov_run *x, const char *path, const char *what, bool service_may_own)
{
        struct slots_error e;
        int fd;

        slots_error_clear(&e);
        fd = slots_open_root_dir(x->rootfd, path, what, service_may_own ? x->svc_uid : (uid_t) -1,
                                 service_may_own ? x->table_gid : (gid_t) -1, &e);
        if (fd < 0 && fd != -ENOENT)
                FAILED(x, e.object, e.fix[0] ? e.fix : NULL, "%s", e.reason);
        return fd;
}

/* What the resolver met on the way to a folder provision opens, reported as it goes. */
struct dirs_way {
        struct prov_run *x;
        unsigned depth;         /* components reached below the root */
};

/* A step made, or finished (a run killed between mkdir and chmod left it root's with mode 0). */
static int dirs_step(void *data, const struct slots_chase_step *s)
{
        struct dirs_way *d = data;
        struct prov_run *x = d->x;
        struct strbuf key = { 0 };

        if (strcmp(s->path, "/") == 0)
                return 0;
        d->depth++;
        if (s->made == SLOTS_CHASE_MADE)
                prov_change(x, "create folder %s (root:root 0755)", s->path);
        if (s->made != SLOTS_CHASE_FINISHED &&
            !(x->dry && S_ISDIR(s->st->st_mode) && s->st->st_uid == 0 && !(s->st->st_mode & 07777)))
                return 0;
        /* A dry pass finds it again for the next file in it: report it once. */
        strbuf_addf(&key, "finish:%s", s->path);
        x->oom |= key.oom;
        if (!x->dry || !dry_seen(x, strbuf_str(&key)))
                prov_change(x, "finish folder %s (root:root 0755)", s->path);
        strbuf_free(&key);
        return 0;
}

/* A dry pass: each folder of path past the first depth components, to be made (reported once). */
static void dry_missing(struct prov_run *x, const char *path, unsigned depth)
{
        char *p = strdup(path);
        unsigned k = 0;

        x->oom |= !p;
        for (char *s = p ? p + 1 : NULL; s; s++) {
                if (*s == '/' || *s == '\0') {
                        char save = *s;

                        *s = '\0';
                        if (++k > depth && !dry_seen(x, p))
                                prov_change(x, "create folder %s (root:root 0755)", p);
                        *s = save;
                        if (!save)
                                break;
                }
        }
        free(p);
}

/*
 * Opens the absolute folder path inside the root through the resolver: no symlink, root's all
 * the way and writable by nobody else; missing components made root:root 0755 (SLOTS_CHASE_MKDIR,
 * changes reported).  In a dry pass returns -ENOENT when it does not exist yet.  Existing
 * components are the admin's and stay as they are.
 */
int prov_open_dirs(struct prov_run *x, const char *path)
{
        struct dirs_way d = { .x = x };
        const struct slots_chase how = {
                .flags = SLOTS_CHASE_NO_SYMLINKS | SLOTS_CHASE_MUST_DIR | SLOTS_CHASE_TRUSTED |
                         (x->dry ? 0 : SLOTS_CHASE_MKDIR),
                .trusted_uid = (uid_t) -1, .trusted_gid = (gid_t) -1, .open_flags = O_RDONLY | O_DIRECTORY,
                .mkdir_mode = 0755, .step = dirs_step, .data = &d,
        };
        struct slots_error e;
        int fd;

        slots_error_clear(&e);
        fd = slots_chase(x->rootfd, path, &how, NULL, &e);
        if (fd == -ENOENT && x->dry)
                dry_missing(x, path, d.depth);
        else if (fd < 0)
                FAILED(x, e.object, e.fix[0] ? e.fix : NULL, "%s", e.reason);
        return fd;
}

/*
 * Makes dirfd/name (path) a folder with owner and mode; dirfd < 0 means the
 * parent is still to be created (dry pass).  A symlink or another file where
 * the folder belongs is a PROBLEM and is not followed.  Returns the folder's
 * fd, or with want_fd false 0 (a folder that is right then costs one look by
 * name, for the 3n slot folders); -ENOENT (dry: to be created) or -errno.
 */
static int folder(struct prov_run *x, int dirfd, const char *path, const char *name, uid_t uid, gid_t gid, mode_t mode,
                  bool want_fd)
{
        char b1[64], b2[64], b3[64], b4[64];
        struct slots_dir_found f;
        unsigned flags = 0;
        int r;

        if (dirfd < 0) {
                prov_change(x, "create folder %s (%s:%s %04o)", path, prov_uid_str(x, uid, b1, sizeof(b1)),
                       prov_gid_str(x, gid, b2, sizeof(b2)), mode);
                return -ENOENT;
        }
        if (x->dry)
                flags |= SLOTS_ENSURE_DRY_RUN;
        if (!want_fd)
                flags |= SLOTS_ENSURE_NO_FD;
        /* Folders come in runs: after one that was missing, the next is made before it is looked for. */
        if (x->dir_missing)
                flags |= SLOTS_ENSURE_MKDIR_FIRST;
        r = slots_ensure_dir(dirfd, name, uid, gid, mode, flags, &f);
        x->dir_missing = f.created;
        if (r == -ELOOP) {
                PROBLEM(x, path,
                        prov_fmt_fix(x, "remove the link (rm %s); slots-provision then creates the folder", path),
                        "is a symlink where a folder belongs; not following it");
                return r;
        }
        if (r == -ENOTDIR) {
                PROBLEM(x, path, prov_fmt_fix(x, "move it away; slots-provision then creates the folder"),
                        "is not a folder");
                return r;
        }
        if (r < 0 && !(r == -ENOENT && x->dry)) {
                PROBLEM(x, path, NULL, x->dry ? "cannot inspect: %s" : "cannot create or repair the folder: %s",
                        strerror(-r));
                return r;
        }
        if (f.created)
                prov_change(x, "create folder %s (%s:%s %04o)", path, prov_uid_str(x, uid, b1, sizeof(b1)),
                       prov_gid_str(x, gid, b2, sizeof(b2)), mode);
        else if (f.changed)
                prov_change(x, "repair folder %s: %s:%s %04o -> %s:%s %04o", path,
                            prov_uid_str(x, f.uid, b1, sizeof(b1)), prov_gid_str(x, f.gid, b2, sizeof(b2)), f.mode,
                            prov_uid_str(x, uid, b3, sizeof(b3)), prov_gid_str(x, gid, b4, sizeof(b4)), mode);
        return r;
}

int prov_slot_folders(struct prov_run *x)
{
        static const char *const kinds[] = { "home", "state", "run" };
        const char *root = x->c->slots_root;
        int rootdir, r = 0;

        /* What exists of slots_root must pass the resolver before anything is made below it. */
        rootdir = prov_open_root(x, root, "slots_root", false);
        if (rootdir < 0 && rootdir != -ENOENT)
                return 0;       /* reported */
        slots_close(rootdir);
        rootdir = prov_open_dirs(x, root);
        if (rootdir < 0 && rootdir != -ENOENT)
                return 0;       /* reported */
        /* slots_root is ours: re-assert it like the folders below it. */
        if (rootdir >= 0) {
                const char *base;
                int parent = slots_open_parent_in(x->rootfd, root, &base);

                if (parent >= 0 && strcmp(root, "/") != 0)
                        (void) folder(x, parent, root, base, 0, 0, 0755, false);
                slots_close(parent);
        }
        for (size_t k = 0; k < 3; k++) {
                char *kpath = slots_path_join(root, kinds[k]);
                int kfd;

                if (!kpath) {
                        r = -ENOMEM;
                        break;
                }
                kfd = folder(x, rootdir, kpath, kinds[k], 0, 0, 0755, true);
                if (kfd < 0 && kfd != -ENOENT) {
                        free(kpath);
                        continue;
                }
                for (unsigned i = 0; i < x->c->slots; i++) {
                        const struct pslot *s = &x->slots[i];
                        char *spath = slots_path_join(kpath, s->name);

                        if (!spath) {
                                r = -ENOMEM;
                                break;
                        }
                        x->slot = i + 1;
                        (void) folder(x, kfd, spath, s->name, s->uid, s->uid, 0700, false);
                        x->slot = 0;
                        free(spath);
                }
                slots_close(kfd);
                free(kpath);
        }
        slots_close(rootdir);
        if (r < 0)
                slots_error_set(x->e, r, root, "out of memory");
        return r;
}

/*
 * Whether st is one of the private paths itself, whatever the name it was
 * reached by (a hard link, a bind mount, a rename): compared by device and inode.
 */
static bool private_inode(struct prov_run *x, const struct stat *st)
{
        for (size_t i = 0; i < x->c->n_private_paths; i++) {
                struct slots_chase how = { .open_flags = O_PATH };
                struct stat ps;
                int fd = slots_chase(x->rootfd, x->c->private_paths[i], &how, NULL, NULL);
                bool same = fd >= 0 && fstat(fd, &ps) == 0 && ps.st_dev == st->st_dev && ps.st_ino == st->st_ino;

                slots_close(fd);
                if (same)
                        return true;
        }
        return false;
}

/* Changes the permission bits of an object root or the service owns; others are reported. */
static bool traverse_fix(struct prov_run *x, int fd, const char *path, mode_t set, mode_t add)
{
        char b[64];
        struct stat st;
        mode_t old, want;

        if (fstat(fd, &st) < 0) {
                FAILED(x, path, NULL, "cannot inspect: %s", strerror(errno));
                return false;
        }
        if (st.st_uid != 0 && st.st_uid != x->svc_uid) {
                WARN(x, path,
                     prov_fmt_fix(x,
                                  "chown it to root or %s if it belongs to the application, then run slots-provision "
                                  "again",
                                  x->c->service),
                     "owned by %s, not root or %s: left unchanged, so slots may not reach the launcher",
                     prov_uid_str(x, st.st_uid, b, sizeof(b)), x->c->service);
                return false;
        }
        /* The launcher may be a private file under another name: a hard link is never loosened. */
        if (!S_ISDIR(st.st_mode) && st.st_nlink > 1) {
                WARN(x, path, prov_fmt_fix(x, "replace the link with a copy of the launcher, then run slots-provision "
                                      "again"),
                     "has %lu hard links: its mode is left alone (the other name may be a private file)",
                     (unsigned long) st.st_nlink);
                return false;
        }
        if (private_inode(x, &st)) {
                WARN(x, path, NULL, "is a private path reached by another name: left unchanged");
                return false;
        }
        old = st.st_mode & 07777;
        /* A folder keeps its setgid and sticky bits; the launcher gets exactly its mode (no set-id). */
        if (!set)
                want = old | add;
        else if (S_ISDIR(st.st_mode))
                want = (old & (S_ISGID | S_ISVTX)) | set;
        else
                want = set;
        if (want == old)
                return true;
        prov_change(x, "set mode of %s: %04o -> %04o", path, old, want);
        if (!x->dry && fchmod(fd, want) < 0)
                FAILED(x, path, NULL, "cannot change the mode: %s", strerror(errno));
        return true;
}

static int cmp_names(const void *a, const void *b)
{
        return strcmp(*(char *const *) a, *(char *const *) b);
}

/* The entries of a directory fd, sorted, without "." and ".."; *n set.  NULL with n 0 when empty. */
static char **list_dir(int dirfd, size_t *n, int *err)
{
        char **names = NULL;
        size_t cap = 0;
        struct dirent *de;
        DIR *d;
        int fd = openat(dirfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC), r;

        *n = 0;
        *err = 0;
        if (fd < 0 || !(d = fdopendir(fd))) {
                *err = -errno;
                slots_close(fd);
                return NULL;
        }
        while ((errno = 0, de = readdir(d))) {
                if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
                        continue;
                if (*n == cap) {
                        char **nn = realloc(names, (cap = cap ? cap * 2 : 16) * sizeof(*names));
                        if (!nn)
                                goto oom;
                        names = nn;
                }
                if (!(names[*n] = strdup(de->d_name)))
                        goto oom;
                (*n)++;
        }
        /* A listing cut short would leave the rest unrepaired, with no word of it. */
        if (errno) {
                r = -errno;
                goto fail;
        }
        closedir(d);
        if (*n)
                qsort(names, *n, sizeof(*names), cmp_names);
        return names;
oom:
        r = -ENOMEM;
fail:
        closedir(d);
        for (size_t i = 0; i < *n; i++)
                free(names[i]);
        free(names);
        *n = 0;
        *err = r;
        return NULL;
}

static void free_names(char **names, size_t n)
{
        for (size_t i = 0; i < n; i++)
                free(names[i]);
        free(names);
}

/* Warns about each folder on the way to app_root that others cannot traverse: the slots could not reach it. */
static void check_reachable(struct prov_run *x, const char *path)
{
        char *p = strdup(path);

        if (!p)
                return;
        for (char *s = p;; s++) {
                if (*s == '/' || *s == '\0') {
                        char save = *s;
                        struct stat st;
                        int fd;

                        *s = '\0';
                        fd = slots_open_in(x->rootfd, p[0] ? p : "/", O_PATH);
                        if (fd >= 0 && fstat(fd, &st) == 0 && S_ISDIR(st.st_mode) && !(st.st_mode & S_IXOTH))
                                WARN(x, p[0] ? p : "/", prov_fmt_fix(x, "chmod o+x %s", p[0] ? p : "/"),
                                     "others cannot traverse it (mode %04o): the slots cannot reach the launcher; "
                                     "not changed (slots-provision loosens only the releases)",
                                     st.st_mode & 07777);
                        slots_close(fd);
                        *s = save;
                        if (!save)
                                break;
                }
        }
        free(p);
}

static int open_child(struct prov_run *x, int dirfd, const char *path, const char *name, bool want_dir,
                      bool warn_missing)
{
        struct stat st;
        int fd;

        if (fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0) {
                if (errno != ENOENT || warn_missing)
                        FAILED(x, path, NULL, "cannot inspect: %s", strerror(errno));
                return -errno;
        }
        if (S_ISLNK(st.st_mode)) {
                WARN(x, path, NULL, "is a symlink: not followed and not changed");
                return -ELOOP;
        }
        if (want_dir ? !S_ISDIR(st.st_mode) : !S_ISREG(st.st_mode)) {
                if (warn_missing)
                        WARN(x, path, NULL, "is not a %s: not changed", want_dir ? "folder" : "file");
                return -EINVAL;
        }
        fd = openat(dirfd, name,
                    (want_dir ? O_RDONLY | O_DIRECTORY : O_RDONLY | O_NONBLOCK | O_NOCTTY) | O_NOFOLLOW |
                            O_CLOEXEC);
        if (fd < 0) {
                FAILED(x, path, NULL, "cannot open: %s", strerror(errno));
                return -errno;
        }
        return fd;
}

int prov_releases(struct prov_run *x)
{
        const struct slots_config *c = x->c;
        char *rel = NULL, **names = NULL;
        size_t n = 0;
        int appfd, relfd = -1, err, r = 0;

        if (!c->app_root)
                return 0;
        if (slots_config_is_private(c, c->app_root))
                return 0;
        appfd = prov_open_root(x, c->app_root, "app_root", true);
        if (appfd < 0 && appfd != -ENOENT)
                return 0;       /* reported */
        if (appfd < 0) {
                WARN(x, c->app_root, "run slots-provision again once the application is installed",
                     "app_root cannot be opened (%s): release traversal skipped", strerror(-appfd));
                return 0;
        }
        check_reachable(x, c->app_root);
        rel = slots_path_join(c->app_root, "releases");
        if (!rel) {
                r = -ENOMEM;
                goto out;
        }
        if (slots_config_is_private(c, rel))
                goto out;
        relfd = open_child(x, appfd, rel, "releases", true, true);
        if (relfd < 0)
                goto out;
        if (!traverse_fix(x, relfd, rel, 0711, 0))
                goto out;
        names = list_dir(relfd, &n, &err);
        if (err) {
                FAILED(x, rel, NULL, "cannot list: %s", strerror(-err));
                goto out;
        }
        for (size_t i = 0; i < n; i++) {
                char *rpath = slots_path_join(rel, names[i]), *bpath = NULL, *lpath = NULL;
                int rfd = -1, bfd = -1, lfd = -1;
                struct stat st;

                if (!rpath) {
                        r = -ENOMEM;
                        break;
                }
                /* Symlinks ("current") and files in releases/ are not release folders. */
                if (slots_config_is_private(c, rpath) || fstatat(relfd, names[i], &st, AT_SYMLINK_NOFOLLOW) < 0 ||
                    !S_ISDIR(st.st_mode))
                        goto next;
                rfd = open_child(x, relfd, rpath, names[i], true, true);
                if (rfd < 0 || !traverse_fix(x, rfd, rpath, 0, S_IXOTH))
                        goto next;
                bpath = slots_path_join(rpath, "bin");
                if (!bpath || slots_config_is_private(c, bpath))
                        goto next;
                bfd = open_child(x, rfd, bpath, "bin", true, false);
                if (bfd < 0 || !traverse_fix(x, bfd, bpath, 0, S_IXOTH) || !c->launcher)
                        goto next;
                lpath = slots_path_join(bpath, c->launcher);
                if (!lpath || slots_config_is_private(c, lpath))
                        goto next;
                lfd = open_child(x, bfd, lpath, c->launcher, false, false);
                if (lfd >= 0)
                        (void) traverse_fix(x, lfd, lpath, 0755, 0);
        next:
                slots_close(lfd);
                slots_close(bfd);
                slots_close(rfd);
                free(lpath);
                free(bpath);
                free(rpath);
        }
out:
        free_names(names, n);
        slots_close(relfd);
        slots_close(appfd);
        free(rel);
        if (r < 0)
                slots_error_set(x->e, r, c->app_root, "out of memory");
        return r;
}
