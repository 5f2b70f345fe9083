/* The shared folders below docs_root: made, and what lies below them given the shared group. */
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

#define SHARE_MAX_DEPTH 64

/* Group <prefix>shared, setgid on folders, g+rwX; owner and the bits of others stay. */
static void share_one(struct ctx *x, int fd, const char *path, const struct stat *st)
{
        char b1[64], b2[64];
        bool dir = S_ISDIR(st->st_mode);
        mode_t old = st->st_mode & 07777, want;
        bool chgrp = st->st_gid != x->shared_gid;

        if (dir)
                want = old | S_ISGID | S_IRWXG;
        else
                want = old | S_IRGRP | S_IWGRP | ((old & (S_IXUSR | S_IXGRP | S_IXOTH)) ? S_IXGRP : 0);
        /* chown drops set-id bits of a file; they are not put back. */
        if (!dir && chgrp)
                want &= ~(mode_t) (S_ISUID | S_ISGID);
        if (!chgrp && want == old)
                return;
        if (chgrp)
                prov_change(x, "share %s: group %s -> %s, mode %04o -> %04o", path,
                       prov_gid_str(x, st->st_gid, b1, sizeof(b1)), prov_gid_str(x, x->shared_gid, b2, sizeof(b2)), old,
                       want);
        else
                prov_change(x, "share %s: mode %04o -> %04o", path, old, want);
        if (x->dry)
                return;
        if ((chgrp && fchown(fd, (uid_t) -1, x->shared_gid) < 0) || fchmod(fd, want) < 0)
                FAILED(x, path, NULL, "cannot change group or mode: %s", strerror(errno));
}

static int share_walk(struct ctx *x, int fd, const char *path, dev_t dev, int depth)
{
        struct stat st;
        char **names;
        size_t n;
        int err, r = 0;

        if (fstat(fd, &st) < 0) {
                FAILED(x, path, NULL, "cannot inspect: %s", strerror(errno));
                return 0;
        }
        share_one(x, fd, path, &st);
        if (depth >= SHARE_MAX_DEPTH) {
                WARN(x, path, NULL, "deeper than %d levels: not walked further", SHARE_MAX_DEPTH);
                return 0;
        }
        names = prov_list_dir(fd, &n, &err);
        if (err) {
                FAILED(x, path, NULL, "cannot list: %s", strerror(-err));
                return err == -ENOMEM ? err : 0;
        }
        for (size_t i = 0; i < n && r == 0; i++) {
                char *cpath = slots_path_join(path, names[i]);
                struct stat cst, ost;
                int cfd;

                if (!cpath) {
                        r = -ENOMEM;
                        break;
                }
                if (fstatat(fd, names[i], &cst, AT_SYMLINK_NOFOLLOW) < 0) {
                        if (errno != ENOENT)
                                FAILED(x, cpath, NULL, "cannot inspect: %s", strerror(errno));
                        free(cpath);
                        continue;
                }
                /* Never a symlink, a device or a FIFO, never another file system, never a private path. */
                if (!(S_ISDIR(cst.st_mode) || S_ISREG(cst.st_mode)) || cst.st_dev != dev ||
                    slots_config_is_private(x->c, cpath)) {
                        free(cpath);
                        continue;
                }
                /* A hard link could be any file of this file system (/etc/shadow): leave it. */
                if (S_ISREG(cst.st_mode) && cst.st_nlink > 1) {
                        WARN(x, cpath, NULL, "has %lu hard links: its group and mode are left alone",
                             (unsigned long) cst.st_nlink);
                        free(cpath);
                        continue;
                }
                cfd = openat(fd, names[i],
                             (S_ISDIR(cst.st_mode) ? O_RDONLY | O_DIRECTORY : O_RDONLY | O_NONBLOCK | O_NOCTTY) |
                                     O_NOFOLLOW | O_CLOEXEC);
                /* Gone or swapped since the look: not ours to repair.  Unreadable: said so. */
                if ((cfd < 0 && errno != ENOENT && errno != ELOOP && errno != ENOTDIR && errno != ENXIO) ||
                    (cfd >= 0 && fstat(cfd, &ost) < 0)) {
                        FAILED(x, cpath, NULL, "cannot inspect: %s", strerror(errno));
                        slots_close(cfd);
                        free(cpath);
                        continue;
                }
                if (cfd >= 0 && ost.st_ino == cst.st_ino && ost.st_dev == cst.st_dev &&
                    (ost.st_mode & S_IFMT) == (cst.st_mode & S_IFMT) && (S_ISDIR(ost.st_mode) || ost.st_nlink == 1)) {
                        if (S_ISDIR(ost.st_mode))
                                r = share_walk(x, cfd, cpath, dev, depth + 1);
                        else
                                share_one(x, cfd, cpath, &ost);
                }
                slots_close(cfd);
                free(cpath);
        }
        prov_free_names(names, n);
        return r;
}

/*
 * Opens the parent of the shared folder rel below docfd without following
 * anything; *comp is set to its last component (in rel).  -1 when reported.
 */
static int share_parent(struct ctx *x, int docfd, const char *path, char *rel, char **comp)
{
        int dfd = dup(docfd);
        char *slash;

        if (dfd < 0) {
                FAILED(x, path, NULL, "cannot open docs_root again: %s", strerror(errno));
                return -1;
        }
        *comp = rel;
        while ((slash = strchr(*comp, '/'))) {
                int nfd;

                *slash = '\0';
                nfd = openat(dfd, *comp, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
                if (nfd < 0) {
                        WARN(x, path, NULL, "a folder on the way (%s) %s: not shared", *comp,
                             errno == ENOENT ? "does not exist" :
                             errno == ELOOP || errno == ENOTDIR ? "is not a folder (or is a symlink)" :
                                                                 strerror(errno));
                        slots_close(dfd);
                        return -1;
                }
                slots_close(dfd);
                dfd = nfd;
                *comp = slash + 1;
        }
        return dfd;
}

/*
 * The shared folder itself: made (or finished, after a run killed between its
 * mkdir and its chmod) as the service's 2770 in the shared group.  Only adding
 * g+rwX to a half-made one would leave the service's own folder closed to it.
 */
static void share_make(struct ctx *x, int dfd, const char *comp, const char *path, bool finish)
{
        char b1[64], b2[64];
        int fd = -1;

        prov_change(x, "%s shared folder %s (%s:%s 2770)", finish ? "finish" : "create", path,
                    prov_uid_str(x, x->svc_uid, b1, sizeof(b1)), prov_gid_str(x, x->shared_gid, b2, sizeof(b2)));
        if (x->dry)
                return;
        if ((!finish && mkdirat(dfd, comp, 0) < 0) ||
            (fd = openat(dfd, comp, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) < 0 ||
            fchown(fd, x->svc_uid, x->shared_gid) < 0 || fchmod(fd, 02770) < 0)
                FAILED(x, path, NULL, "cannot %s the shared folder: %s", finish ? "finish" : "create",
                       strerror(errno));
        slots_close(fd);
}

/* One entry of shared_dirs: made when missing, else walked.  -errno only when memory ran out. */
static int share_dir(struct ctx *x, int docfd, const char *entry)
{
        char *path = slots_path_join(x->c->docs_root, entry), *rel = strdup(entry), *comp;
        int dfd = -1, fd = -1, r = 0;
        struct stat st;

        if (!path || !rel) {
                r = -ENOMEM;
                goto out;
        }
        dfd = share_parent(x, docfd, path, rel, &comp);
        if (dfd < 0)
                goto out;
        if (fstatat(dfd, comp, &st, AT_SYMLINK_NOFOLLOW) < 0) {
                if (errno != ENOENT)
                        FAILED(x, path, NULL, "cannot inspect: %s", strerror(errno));
                else
                        share_make(x, dfd, comp, path, false);
                goto out;
        }
        if (S_ISDIR(st.st_mode) && (st.st_mode & 07777) == 0 && (st.st_uid == 0 || st.st_uid == x->svc_uid)) {
                share_make(x, dfd, comp, path, true);
                goto out;
        }
        if (S_ISLNK(st.st_mode) || !S_ISDIR(st.st_mode)) {
                WARN(x, path, NULL, "is %s: not followed and not shared",
                     S_ISLNK(st.st_mode) ? "a symlink" : "not a folder");
                goto out;
        }
        fd = openat(dfd, comp, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (fd < 0)
                FAILED(x, path, NULL, "cannot open: %s", strerror(errno));
        else
                r = share_walk(x, fd, path, st.st_dev, 0);
out:
        slots_close(fd);
        slots_close(dfd);
        free(rel);
        free(path);
        return r;
}

int prov_shared_dirs(struct ctx *x)
{
        const struct slots_config *c = x->c;
        int docfd, r = 0;

        if (!c->docs_root || c->n_shared_dirs == 0)
                return 0;
        docfd = prov_open_root(x, c->docs_root, "docs_root", true);
        if (docfd < 0 && docfd != -ENOENT)
                return 0;       /* reported */
        if (docfd < 0) {
                WARN(x, c->docs_root, "create docs_root, then run slots-provision again",
                     "docs_root cannot be opened (%s): shared folders skipped", strerror(-docfd));
                return 0;
        }
        for (size_t i = 0; i < c->n_shared_dirs && r == 0; i++)
                r = share_dir(x, docfd, c->shared_dirs[i]);
        slots_close(docfd);
        if (r < 0)
                slots_error_set(x->e, r, c->docs_root, "out of memory");
        return r;
}
