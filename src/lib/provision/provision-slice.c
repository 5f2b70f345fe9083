/* The provisioning of the pool's slice units: written into /etc/systemd/system, the stale removed, systemd reloaded. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <systemd/sd-bus.h>
#include <unistd.h>

#include "fsutil.h"
#include "ids.h"
#include "provision-int.h"
#include "provision-slice.h"
#include "replace.h"
#include "sdmanager.h"
#include "slice.h"

#define UNIT_DIR "/etc/systemd/system"
#define UNIT_MODE 0644
/* The first line of every unit this file writes: what marks a unit as the pool's, to remove. */
#define HEADER "# Written by slots-provision from the \"slice\" key"

struct run {
        const struct slots_config *c;
        const struct slots_prov_slice_opts *o;
        struct slots_error *e;
        unsigned changes;
        int dirfd;              /* UNIT_DIR; -1 in a dry run where it does not exist yet */
};

static void report(struct run *x, enum slots_prov_kind kind, const char *object, const char *fix, const char *text)
{
        const struct slots_prov_msg m = { .kind = kind, .object = object, .text = text, .fix = fix };

        if (kind == SLOTS_PROV_CHANGE)
                x->changes++;
        if (x->o->report)
                x->o->report(x->o->arg, &m);
}

/* 1 when dirfd/name holds exactly text, root-owned, mode UNIT_MODE; 0 when not or missing; -errno. */
static int same_unit(int dirfd, const char *name, const char *text)
{
        struct stat st;
        char *old = NULL;
        size_t olen = 0;
        int fd, r;

        if (dirfd < 0)
                return 0;
        fd = slots_open_regular(dirfd, name, &st);
        if (fd < 0)
                return fd == -ENOENT ? 0 : fd;
        r = slots_read_all(fd, (size_t) 1 << 20, &old, &olen);
        slots_close(fd);
        if (r < 0)
                return r;
        r = olen == strlen(text) && memcmp(old, text, olen) == 0 && st.st_uid == 0 && st.st_gid == 0 &&
            (st.st_mode & 07777) == UNIT_MODE;
        free(old);
        return r;
}

static int write_unit(struct run *x, const char *name, const char *what, const struct slots_slice_props *p)
{
        const struct slots_file_mode def = { .uid = 0, .gid = 0, .mode = UNIT_MODE };
        char display[sizeof(UNIT_DIR) + SLOTS_UNIT_NAME_MAX], line[sizeof(display) + 64];
        char *text = slots_slice_render(what, p);
        int same, r = 0;

        snprintf(display, sizeof(display), "%s/%s", UNIT_DIR, name);
        if (!text)
                return slots_error_set(x->e, -ENOMEM, display, "out of memory");
        same = same_unit(x->dirfd, name, text);
        if (same == -ELOOP || same == -EINVAL) {
                /* root's folder: an admin's symlink (a masked unit) or device is not replaced behind its back */
                r = slots_error_refuse(x->e, same, display, "is a %s, not a unit file this pool wrote",
                                       same == -ELOOP ? "symlink (a masked unit?)" : "special file");
                slots_error_fix(x->e, "remove it (systemctl unmask %s) and run slots-provision again", name);
                goto out;
        }
        if (same < 0) {
                r = slots_error_set(x->e, same, display, "cannot read: %s", strerror(-same));
                goto out;
        }
        if (same == 1)
                goto out;
        snprintf(line, sizeof(line), "write slice unit %s (root:root 0644)", display);
        report(x, SLOTS_PROV_CHANGE, "", "", line);
        if (!x->o->dry_run)
                r = slots_replace(x->dirfd, name, display, text, strlen(text), &def, SLOTS_REPLACE_FORCE_MODE, x->e);
out:
        free(text);
        return r;
}

/* True when dirfd/name is a regular file whose first line is HEADER's: a unit of ours. */
static bool ours(int dirfd, const char *name)
{
        struct stat st;
        char head[sizeof(HEADER)];
        int fd = slots_open_regular(dirfd, name, &st);
        ssize_t n;

        if (fd < 0)
                return false;
        n = pread(fd, head, sizeof(HEADER) - 1, 0);
        slots_close(fd);
        return n == (ssize_t) sizeof(HEADER) - 1 && memcmp(head, HEADER, sizeof(HEADER) - 1) == 0;
}

/*
 * The units of slots this pool no longer has (or every one of its units when
 * the config has no slice): "slots-<service>-<slot>.slice" and the pool's, when
 * this file wrote them.  A unit of the same name an admin wrote stays.
 */
static int remove_stale(struct run *x, const char *pool)
{
        size_t plen = strlen(pool) - strlen(".slice");
        DIR *d;
        struct dirent *de;
        int fd, r = 0;

        if (x->dirfd < 0)
                return 0;
        fd = openat(x->dirfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (fd < 0 || !(d = fdopendir(fd))) {
                slots_close(fd);
                return slots_error_set(x->e, -errno, UNIT_DIR, "cannot list: %s", strerror(errno));
        }
        while (r == 0 && (de = readdir(d))) {
                char slot[SLOTS_UNIT_NAME_MAX], want[SLOTS_UNIT_NAME_MAX], line[sizeof(UNIT_DIR) + 300];
                const char *n = de->d_name;
                size_t len = strlen(n);
                unsigned k;

                if (strcmp(n, pool) == 0) {
                        if (x->c->has_slice)
                                continue;
                } else {
                        if (strncmp(n, pool, plen) != 0 || n[plen] != '-' || len <= plen + 1 + strlen(".slice") ||
                            strcmp(n + len - strlen(".slice"), ".slice") != 0)
                                continue;
                        snprintf(slot, sizeof(slot), "%.*s", (int) (len - plen - 1 - strlen(".slice")), n + plen + 1);
                        k = slots_slot_parse(slot);
                        /* a slot of the pool keeps its unit when its name is the one this pool writes */
                        if (x->c->has_slice && k >= 1 && k <= x->c->slots &&
                            slots_slice_slot_unit(x->c->service, slot, want) == 0 && strcmp(want, n) == 0)
                                continue;
                }
                if (!ours(x->dirfd, n))
                        continue;
                snprintf(line, sizeof(line), "remove slice unit %s/%s", UNIT_DIR, n);
                report(x, SLOTS_PROV_CHANGE, "", "", line);
                if (!x->o->dry_run && unlinkat(x->dirfd, n, 0) < 0 && errno != ENOENT)
                        r = slots_error_set(x->e, -errno, line + strlen("remove slice unit "), "cannot remove: %s",
                                            strerror(errno));
        }
        closedir(d);
        return r;
}

static void report_dir(struct run *x, const char *path, const struct slots_dir_found *f)
{
        char line[128];

        if (f->created)
                snprintf(line, sizeof(line), "create folder %s (root:root 0755)", path);
        else if (f->changed)
                snprintf(line, sizeof(line), "set folder %s to root:root 0755 (was %u:%u %04o)", path,
                         (unsigned) f->uid, (unsigned) f->gid, (unsigned) f->mode);
        else
                return;
        report(x, SLOTS_PROV_CHANGE, "", "", line);
}

/*
 * UNIT_DIR in the tree, made root:root 0755 where missing (reported).  In a dry
 * run where it is missing: -ENOENT, and the units are reported as written.
 */
static int open_unit_dir(struct run *x)
{
        int etc = slots_open_in(x->o->rootfd, "/etc", O_RDONLY | O_DIRECTORY), sd, fd = -ENOENT;
        unsigned dry = x->o->dry_run ? SLOTS_ENSURE_DRY_RUN : 0;
        struct slots_dir_found f1 = { 0 }, f2 = { 0 };

        if (etc < 0)
                return slots_error_set(x->e, etc, "/etc", "cannot open: %s", strerror(-etc));
        sd = slots_ensure_dir(etc, "systemd", 0, 0, 0755, dry, &f1);
        if (sd >= 0)
                fd = slots_ensure_dir(sd, "system", 0, 0, 0755, dry, &f2);
        slots_close(etc);
        slots_close(sd);
        report_dir(x, "/etc/systemd", &f1);
        if (f1.created)
                f2.created = true;
        report_dir(x, UNIT_DIR, &f2);
        if (x->o->dry_run && (sd == -ENOENT || fd == -ENOENT))
                return -ENOENT;
        if (sd < 0)
                return slots_error_set(x->e, sd, "/etc/systemd", "cannot make it a root-owned folder: %s",
                                       strerror(-sd));
        if (fd < 0)
                return slots_error_set(x->e, fd, UNIT_DIR, "cannot make it a root-owned folder: %s", strerror(-fd));
        return fd;
}

static int write_units(struct run *x, const char *pool)
{
        char what[160], name[SLOTS_UNIT_NAME_MAX], slot[SLOTS_NAME_MAX];
        struct slots_slice_props p;
        int r;

        snprintf(what, sizeof(what), "the pool of the service %s", x->c->service);
        r = write_unit(x, pool, what, &x->c->slice_pool);
        for (unsigned n = 1; r == 0 && n <= x->c->slots; n++) {
                slots_slot_name(n, slot);
                if (slots_slice_slot_unit(x->c->service, slot, name) < 0)
                        return slots_error_invalid(x->e, -ENAMETOOLONG, x->c->service,
                                                   "the slice unit's name of %s passes 255 characters", slot);
                snprintf(what, sizeof(what), "%s of the service %s", slot, x->c->service);
                slots_config_slice_for(x->c, n, &p);
                r = write_unit(x, name, what, &p);
        }
        return r;
}

static int reload(struct run *x)
{
        sd_bus *bus = NULL;
        int r = slots_manager_connect(&bus, x->e);

        if (r == 0)
                r = slots_manager_reload(bus, x->e);
        sd_bus_flush_close_unref(bus);
        return r;
}

int slots_provision_slices(const struct slots_config *c, const struct slots_prov_slice_opts *o, unsigned *changes,
                           struct slots_error *e)
{
        struct run x = { .c = c, .o = o, .e = e, .dirfd = -1 };
        char pool[SLOTS_UNIT_NAME_MAX];
        bool systemd = o->host && slots_systemd_booted();
        int r;

        *changes = 0;
        if (slots_slice_pool_unit(c->service, pool) < 0)
                return slots_error_invalid(e, -ENAMETOOLONG, c->service, "the slice unit's name passes 255 characters");
        if (o->host && !systemd) {
                if (c->has_slice)
                        report(&x, SLOTS_PROV_WARNING, "slice", "",
                               "systemd is not PID 1 here: no slice units written (sessions stay unbounded by "
                               "slices; write them into an image with --root)");
                return 0;
        }
        if (c->has_slice) {
                x.dirfd = open_unit_dir(&x);
                if (x.dirfd == -ENOENT && o->dry_run)
                        x.dirfd = -1;
                else if (x.dirfd < 0)
                        return x.dirfd;
        } else {
                /* no slice: only units an earlier config had are removed */
                x.dirfd = slots_open_in(o->rootfd, UNIT_DIR, O_RDONLY | O_DIRECTORY);
                if (x.dirfd == -ENOENT)
                        return 0;
                if (x.dirfd < 0)
                        return slots_error_set(e, x.dirfd, UNIT_DIR, "cannot open: %s", strerror(-x.dirfd));
        }
        r = c->has_slice ? write_units(&x, pool) : 0;
        if (r == 0)
                r = remove_stale(&x, pool);
        if (r == 0 && x.changes && x.dirfd >= 0)
                r = slots_fsync_dir(x.dirfd) < 0 ? slots_error_set(e, -errno, UNIT_DIR, "cannot sync") : 0;
        slots_close(x.dirfd);
        if (r == 0 && systemd && x.changes && !o->dry_run)
                r = reload(&x);
        *changes = x.changes;
        return r;
}

int prov_slice_check(struct prov_run *x)
{
        const struct slots_prov_slice_opts o = { .rootfd = x->rootfd, .host = x->o->host, .dry_run = true };
        unsigned n = 0;

        return slots_provision_slices(x->c, &o, &n, x->e);
}

int prov_slice_step(struct prov_run *x)
{
        const struct slots_prov_slice_opts o = { .rootfd = x->rootfd, .host = x->o->host, .dry_run = x->dry,
                                                 .report = x->o->report, .arg = x->o->arg };
        unsigned n = 0;
        int r = slots_provision_slices(x->c, &o, &n, x->e);

        x->changes += n;
        return r;
}
