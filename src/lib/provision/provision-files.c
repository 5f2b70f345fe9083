/* The files slots-provision writes: the table, the slotctl config and the sudoers drop-in (rendered in dropin.c). */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fsutil.h"
#include "path.h"
#include "provision-int.h"
#include "replace.h"
#include "store.h"
#include "table-index.h"

int prov_table_check(struct prov_run *x)
{
        struct slots_store s;
        int r;

        slots_error_clear(x->e);
        r = slots_store_open(&s, x->rootfd, x->c->table, x->c->slots, x->table_gid, 0, x->e);
        if (r == 0) {
                slots_store_close(&s);
                return 0;
        }
        if (x->e->kind == SLOTS_ERR_INVALID)
                return r;
        /* A table or folder that is not there yet is created later. */
        if (r == -ENOENT)
                return 0;
        PROBLEM(x, x->c->table, x->e->fix, "%s", x->e->reason);
        slots_error_clear(x->e);
        return 0;
}

/* 1 when the table at dfd/base (st) is as the store's policy says, 0 when it needs the repair, -errno. */
static int table_ok(struct prov_run *x, int dfd, const char *base, struct stat *st, bool *acl)
{
        const struct slots_table_policy p = { .path = x->c->table, .group = x->table_gid,
                                              .group_name = x->table_group };
        struct slots_table_verdict v;
        int fd = slots_open_regular(dfd, base, st);

        if (fd < 0)
                return slots_error_set(x->e, fd, x->c->table, "cannot open: %s", strerror(-fd));
        memset(&v, 0, sizeof(v));
        if (slots_table_verdict(fd, st, &p, &v)) {
                slots_close(fd);
                return 1;
        }
        slots_close(fd);
        *acl = (v.problems & SLOTS_POLICY_ACL) != 0;
        return 0;
}

/*
 * The table's index (slots.json(5)) when it does not name the table as it is, as
 * after a run killed between the table's rename and the index's: made again
 * under the table's lock, which also removes a killed writer's temps.  Not a
 * change of the host's state, so no line of its own; never in a dry run.
 */
static int index_step(struct prov_run *x, int dfd, const char *base, const struct stat *st)
{
        enum slots_slot_state state;
        struct slots_store s;
        const char *why;
        int r;

        if (x->dry || slots_tindex_lookup(dfd, base, st, x->c->slots, 1, &state, &why) == 0)
                return 0;
        r = slots_store_open(&s, x->rootfd, x->c->table, x->c->slots, x->table_gid, SLOTS_STORE_WRITE, x->e);
        if (r < 0)
                return r;
        r = slots_store_reindex(&s, x->e);
        slots_store_close(&s);
        return r;
}

int prov_table_step(struct prov_run *x)
{
        bool acl = false;
        const struct slots_file_mode def = { .uid = 0, .gid = x->table_gid, .mode = SLOTS_TABLE_MODE };
        const char *path = x->c->table, *base;
        char b1[64], b2[64], b3[64], *text = NULL;
        struct slots_store s;
        struct stat st;
        char *dir = strdup(path);
        size_t len = 0;
        int dfd, fd, r;

        if (!dir)
                return slots_error_set(x->e, -ENOMEM, path, "out of memory");
        *strrchr(dir, '/') = '\0';
        dfd = prov_open_dirs(x, dir[0] ? dir : "/");
        free(dir);
        base = strrchr(path, '/') + 1;
        if (dfd < 0 && dfd != -ENOENT)
                return slots_error_set(x->e, dfd, path, "cannot open its folder: %s", strerror(-dfd));
        if (dfd < 0 || fstatat(dfd, base, &st, AT_SYMLINK_NOFOLLOW) < 0) {
                slots_close(dfd);
                prov_change(x, "create table %s (root:%s %04o, empty)", path, x->table_group, SLOTS_TABLE_MODE);
                if (x->dry)
                        return 0;
                r = slots_store_open(&s, x->rootfd, path, x->c->slots, x->table_gid, SLOTS_STORE_WRITE, x->e);
                if (r < 0)
                        return r;
                r = s.exists ? 0 : slots_store_save(&s, x->e);
                slots_store_close(&s);
                return r;
        }
        if (!S_ISREG(st.st_mode)) {
                slots_close(dfd);
                return slots_error_refuse(x->e, -EINVAL, path, "is not a regular file");
        }
        /* The store's one verdict (owner, group, mode, and an ACL that would let others in). */
        r = table_ok(x, dfd, base, &st, &acl);
        if (r > 0) {
                r = index_step(x, dfd, base, &st);
                slots_close(dfd);
                return r;
        }
        slots_close(dfd);
        if (r < 0)
                return r;
        prov_change(x, "repair table %s: %s:%s %04o%s -> root:%s %04o (content kept)", path,
                    prov_uid_str(x, st.st_uid, b1, sizeof(b1)), prov_gid_str(x, st.st_gid, b2, sizeof(b2)),
                    st.st_mode & 07777, acl ? " with an ACL" : "", prov_gid_str(x, x->table_gid, b3, sizeof(b3)),
                    SLOTS_TABLE_MODE);
        if (x->dry)
                return 0;
        /* Under the table's lock, so slots-admin never sees a half-repaired file; the content is not touched. */
        r = slots_store_open(&s, x->rootfd, path, x->c->slots, x->table_gid, SLOTS_STORE_WRITE, x->e);
        if (r < 0)
                return r;
        fd = slots_open_regular(s.dirfd, s.name, &st);
        if (fd < 0) {
                r = slots_error_set(x->e, fd, path, "cannot open: %s", strerror(-fd));
                goto out;
        }
        /*
         * The same bytes through the owner-preserving replace with the owner and mode forced:
         * a reader sees the old file or the repaired one, never a half-repaired mode that
         * would lock the service out if the run were killed in between.
         */
        r = slots_read_all(fd, SLOTS_TABLE_MAX, &text, &len);
        slots_close(fd);
        if (r < 0) {
                slots_error_set(x->e, r, path, "cannot read: %s", strerror(-r));
                goto out;
        }
        r = slots_replace(s.dirfd, s.name, path, text, len, &def, SLOTS_REPLACE_FORCE_MODE, x->e);
        free(text);
        /* The same bytes in a new file: the index names the old one. */
        if (r == 0)
                r = slots_store_reindex(&s, x->e);
out:
        slots_store_close(&s);
        return r;
}


/* Does the tree have sudo?  The drop-in is only written where visudo and /etc/sudoers.d are. */
bool prov_sudo_installed(struct prov_run *x)
{
        int fd = slots_open_in(x->rootfd, SLOTS_VISUDO, O_PATH);

        if (fd < 0)
                return false;
        slots_close(fd);
        return true;
}

/* Content and owner/mode check of a small root-owned file; 1 when it already is exactly that. */
static int same_file(int dirfd, const char *name, const char *data, size_t len, mode_t mode, struct stat *st)
{
        char *old = NULL;
        size_t olen = 0;
        int fd = slots_open_regular(dirfd, name, st), r;

        if (fd < 0)
                return fd == -ENOENT ? 0 : fd;
        r = slots_read_all(fd, (size_t) 16 << 20, &old, &olen);
        slots_close(fd);
        if (r < 0)
                return r;
        r = olen == len && memcmp(old, data, len) == 0 && st->st_uid == 0 && st->st_gid == 0 &&
            (st->st_mode & 07777) == mode;
        free(old);
        return r;
}

int prov_sudoers_check(struct prov_run *x)
{
        char name[128], shown[sizeof(SUDOERS_DIR) + 128];
        char *text;
        size_t len;
        int fd, r;

        if (!prov_sudo_installed(x))
                return 0;
        text = slots_dropin_sudoers(x->c, &len, x->e);
        if (!text)
                return -EBADMSG;
        if (access(SLOTS_VISUDO, X_OK) < 0) {
                free(text);
                PROBLEM(x, SLOTS_VISUDO, "install sudo on this host, or run slots-provision inside the tree",
                        "the tree has sudo but this host has no visudo to check the drop-in with");
                return 0;
        }
        fd = memfd_create("slots-sudoers", MFD_CLOEXEC);
        if (fd < 0 || slots_write_all(fd, text, len) < 0 || lseek(fd, 0, SEEK_SET) < 0) {
                r = slots_error_set(x->e, -errno, "sudoers", "cannot prepare the drop-in: %s", strerror(errno));
                slots_close(fd);
                free(text);
                return r;
        }
        free(text);
        /* A refusal names the drop-in it is about. */
        slots_dropin_sudoers_name(x->c, name, sizeof(name));
        slots_path_join_to(shown, sizeof(shown), SUDOERS_DIR, name);
        r = slots_dropin_visudo(fd, shown, x->e);
        slots_close(fd);
        return r;
}

static int sudoers_step(struct prov_run *x)
{
        const struct slots_file_mode def = { .uid = 0, .gid = 0, .mode = 0440 };
        struct slots_staged staged;
        char name[128], *path = NULL, *text = NULL;
        struct stat st;
        size_t len;
        int dfd = -1, fd = -1, r = 0, same;

        if (!prov_sudo_installed(x)) {
                WARN(x, SLOTS_VISUDO, x->o->host ? "install sudo, then run slots-provision again"
                                                 : "install sudo in the image, then run slots-provision --root "
                                                   "again (also after a layer that adds sudo later)",
                     "sudo is not installed (no visudo): no sudoers drop-in written, so the service cannot run "
                     "commands as the slots");
                return 0;
        }
        slots_dropin_sudoers_name(x->c, name, sizeof(name));
        path = slots_path_join(SUDOERS_DIR, name);
        text = slots_dropin_sudoers(x->c, &len, x->e);
        if (!path || !text) {
                r = text ? slots_error_set(x->e, -ENOMEM, SUDOERS_DIR, "out of memory") : -EBADMSG;
                goto out;
        }
        dfd = prov_open_root(x, SUDOERS_DIR, SUDOERS_DIR, false);
        if (dfd < 0 && dfd != -ENOENT)
                goto out;       /* reported */
        if (dfd < 0) {
                WARN(x, SUDOERS_DIR, "create it and make sure /etc/sudoers has \"@includedir /etc/sudoers.d\"",
                     "sudo is installed but this folder cannot be opened (%s): drop-in not written",
                     strerror(-dfd));
                goto out;
        }
        same = same_file(dfd, name, text, len, 0440, &st);
        if (same < 0 && same != -ENOENT) {
                r = slots_error_set(x->e, same, path, "cannot read: %s", strerror(-same));
                goto out;
        }
        if (same == 1)
                goto out;
        prov_change(x, "write sudoers drop-in %s (root:root 0440)", path);
        if (x->dry)
                goto out;
        r = slots_replace_stage(dfd, name, path, text, len, &def, SLOTS_REPLACE_FORCE_MODE, &staged, x->e);
        if (r < 0)
                goto out;
        /* What visudo checks is the very file that is renamed into place. */
        fd = openat(dfd, staged.tmp, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
        r = fd < 0 ? slots_error_set(x->e, -errno, path, "cannot reopen the new drop-in: %s", strerror(errno)) :
                     slots_dropin_visudo(fd, path, x->e);
        if (r < 0) {
                slots_replace_abort(&staged);
                goto out;
        }
        r = slots_replace_commit(&staged, x->e);
out:
        slots_close(fd);
        slots_close(dfd);
        free(text);
        free(path);
        return r;
}

static int slotctl_step(struct prov_run *x)
{
        const struct slots_file_mode def = { .uid = 0, .gid = 0, .mode = 0644 };
        const char *path = x->c->slotctl_config, *base = strrchr(path, '/') + 1;
        char *dir = strndup(path, (size_t) (base - path)), *text;
        struct stat st;
        size_t len;
        int dfd, same, r = 0;

        if (!dir)
                return slots_error_set(x->e, -ENOMEM, path, "out of memory");
        if (strlen(dir) > 1)
                dir[strlen(dir) - 1] = '\0';
        text = slots_dropin_slotctl_json(x->c, &len);
        if (!text) {
                free(dir);
                return slots_error_set(x->e, -ENOMEM, path, "out of memory");
        }
        dfd = prov_open_dirs(x, dir);
        free(dir);
        if (dfd < 0 && dfd != -ENOENT) {
                r = slots_error_set(x->e, dfd, path, "cannot open its folder: %s", strerror(-dfd));
                goto out;
        }
        same = dfd < 0 ? 0 : same_file(dfd, base, text, len, 0644, &st);
        if (same < 0) {
                r = slots_error_set(x->e, same, path, "cannot read: %s", strerror(-same));
                goto out;
        }
        if (same == 1)
                goto out;
        prov_change(x, "write slotctl config %s (root:root 0644)", path);
        if (!x->dry)
                r = slots_replace(dfd, base, path, text, len, &def, SLOTS_REPLACE_FORCE_MODE, x->e);
out:
        slots_close(dfd);
        free(text);
        return r;
}

/*
 * The slotctl config and the drop-in are written under "<slotctl_config>.lock",
 * like the table under its own: so two runs never interleave, and the temps of
 * a run killed before its rename are removed by the next one.
 */
int prov_files_step(struct prov_run *x)
{
        const char *path = x->c->slotctl_config, *base = strrchr(path, '/') + 1;
        char *dir = NULL, *lockname = NULL;
        int dfd = -1, lockfd = -1, r = 0;

        if (!x->dry) {
                dir = strndup(path, (size_t) (base - path));
                if (!dir || asprintf(&lockname, "%s%s", base, SLOTS_LOCK_SUFFIX) < 0) {
                        lockname = NULL;
                        r = slots_error_set(x->e, -ENOMEM, path, "out of memory");
                        goto out;
                }
                if (strlen(dir) > 1)
                        dir[strlen(dir) - 1] = '\0';
                dfd = prov_open_dirs(x, dir);
                if (dfd < 0) {
                        r = slots_error_set(x->e, dfd, path, "cannot open its folder: %s", strerror(-dfd));
                        goto out;
                }
                lockfd = slots_lock_take(dfd, lockname, path, x->e);
                if (lockfd < 0) {
                        r = lockfd;
                        goto out;
                }
                (void) slots_replace_clean_stale(dfd, base);
                if (prov_sudo_installed(x)) {
                        char name[128];
                        int sdfd = slots_open_root_dir(x->rootfd, SUDOERS_DIR, SUDOERS_DIR, (uid_t) -1,
                                                       (gid_t) -1, NULL);

                        if (sdfd >= 0)
                                (void) slots_replace_clean_stale(sdfd, slots_dropin_sudoers_name(x->c, name,
                                                                                                  sizeof(name)));
                        slots_close(sdfd);
                }
        }
        r = slotctl_step(x);
        if (r == 0)
                r = sudoers_step(x);
out:
        slots_close(lockfd);
        slots_close(dfd);
        free(lockname);
        free(dir);
        return r;
}
