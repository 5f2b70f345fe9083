/* The self-check's slice row: a slot's slice unit as provisioning renders it, its live limits, no process in a free slot's. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check-int.h"
#include "fsutil.h"
#include "sdmanager.h"
#include "slice.h"

#define UNIT_DIR "/etc/systemd/system"
#define CHECK "slice"

/* The cgroup file a property sets and what it holds for v; NULL where the kernel's value cannot be foretold. */
static const char *live_want(enum slots_slice_key key, const struct slots_slice_value *v, char buf[static 48])
{
        uint64_t page = (uint64_t) sysconf(_SC_PAGESIZE);

        if (v->kind == SLOTS_SLICE_PERCENT && key != SLOTS_SLICE_CPU_QUOTA)
                return NULL;    /* of the host's memory or the kernel's ceiling: systemd works it out */
        switch (key) {
        case SLOTS_SLICE_MEMORY_MAX:
        case SLOTS_SLICE_MEMORY_HIGH:
        case SLOTS_SLICE_MEMORY_SWAP_MAX:
                /* the kernel keeps whole pages */
                if (v->kind == SLOTS_SLICE_INFINITY)
                        return "max";
                snprintf(buf, 48, "%" PRIu64, v->n / page * page);
                return buf;
        case SLOTS_SLICE_TASKS_MAX:
                if (v->kind == SLOTS_SLICE_INFINITY)
                        return "max";
                snprintf(buf, 48, "%" PRIu64, v->n);
                return buf;
        case SLOTS_SLICE_CPU_QUOTA:
                /* systemd's period is 100 ms: N% of a CPU is N ms of it */
                snprintf(buf, 48, "%" PRIu64 " 100000", v->n * 1000);
                return buf;
        case SLOTS_SLICE_IO_WEIGHT:
                snprintf(buf, 48, "default %" PRIu64, v->n);
                return buf;
        default:
                snprintf(buf, 48, "%" PRIu64, v->n);
                return buf;
        }
}

static const char *const live_file[SLOTS_SLICE_MAX_KEY] = {
        [SLOTS_SLICE_MEMORY_MAX] = "memory.max",
        [SLOTS_SLICE_MEMORY_HIGH] = "memory.high",
        [SLOTS_SLICE_MEMORY_SWAP_MAX] = "memory.swap.max",
        [SLOTS_SLICE_TASKS_MAX] = "pids.max",
        [SLOTS_SLICE_CPU_QUOTA] = "cpu.max",
        [SLOTS_SLICE_CPU_WEIGHT] = "cpu.weight",
        [SLOTS_SLICE_IO_WEIGHT] = "io.weight",
};

/* The first line of dir/name into buf; 0 or -errno. */
static int read_line(const char *dir, const char *name, char *buf, size_t size)
{
        char path[4200];
        ssize_t n;
        int fd, err;

        snprintf(path, sizeof(path), "%s/%s", dir, name);
        fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
        if (fd < 0)
                return -errno;
        n = read(fd, buf, size - 1);
        err = errno;
        close(fd);
        if (n < 0)
                return -err;
        buf[n] = '\0';
        buf[strcspn(buf, "\n")] = '\0';
        return 0;
}

/* The unit file against its rendering: 0 the same, else a FAIL row added. */
static int unit_file(struct check_run *k, const struct slotinfo *s, const char *unit, const struct slots_slice_props *p)
{
        char what[160], path[sizeof(UNIT_DIR) + SLOTS_UNIT_NAME_MAX], fix[sizeof(path) + 64];
        const struct slots_read how = { .path = path, .what = "the slice unit", .max = 1 << 16 };
        struct slots_error e;
        struct text_diff d;
        char *want, *have = NULL;
        size_t len = 0;
        int r, dirfd;

        snprintf(path, sizeof(path), "%s/%s", UNIT_DIR, unit);
        snprintf(what, sizeof(what), "%s of the service %s", s->name, k->cfg->service);
        snprintf(fix, sizeof(fix), "run slots-provision, which writes %s", path);
        want = slots_slice_render(what, p);
        if (!want) {
                k->err = -ENOMEM;
                return -ENOMEM;
        }
        slots_error_clear(&e);
        dirfd = slots_open_in(k->rootfd, UNIT_DIR, O_RDONLY | O_DIRECTORY);
        r = dirfd < 0 ? slots_error_set(&e, dirfd, UNIT_DIR, "cannot open: %s", strerror(-dirfd)) :
                        slots_read_text(dirfd, unit, &how, NULL, &have, &len, &e);
        slots_close(dirfd);
        if (r < 0)
                check_add_rowf(k, SLOTS_CHECK_FAIL, CHECK, s->name, fix, "%s: %s", e.object, e.reason);
        else if (check_text_first_diff(have, len, want, strlen(want), &d)) {
                check_add_rowf(k, SLOTS_CHECK_FAIL, CHECK, s->name, fix,
                               "%s: line %zu is not what the config gives "
                               "(\"%.*s\", the config's \"%.*s\")",
                               path, d.line, d.a ? (int) d.alen : 0, d.a ? d.a : "", d.b ? (int) d.blen : 0,
                               d.b ? d.b : "");
                r = -EINVAL;
        }
        free(want);
        free(have);
        return r;
}

/* The live cgroup against the properties: 0, 1 when the slice is not active, else a FAIL row added. */
static int live(struct check_run *k, const struct slotinfo *s, const char *unit, const char *dir,
                const struct slots_slice_props *p)
{
        char have[128], want_buf[48], val[24];

        if (access(dir, F_OK) < 0)
                return 1;
        for (int i = 0; i < SLOTS_SLICE_MAX_KEY; i++) {
                const char *want;
                int r;

                if (!p->v[i].set || !(want = live_want(i, &p->v[i], want_buf)))
                        continue;
                r = read_line(dir, live_file[i], have, sizeof(have));
                if (r == -ENOENT)
                        continue;       /* a cgroup that has gone since the look above */
                if (r < 0 || strcmp(have, want) != 0) {
                        check_add_rowf(k, SLOTS_CHECK_FAIL, CHECK, s->name,
                                       "reload systemd (systemctl daemon-reload) "
                                       "so that it applies the unit file",
                                       "%s: %s is \"%s\", %s=%s wants \"%s\"", unit, live_file[i],
                                       r < 0 ? strerror(-r) : have, slots_slice_key_name(i),
                                       slots_slice_value_format(&p->v[i], val), want);
                        return -EINVAL;
                }
        }
        return 0;
}

void check_slice(struct check_run *k, const struct slotinfo *s)
{
        char unit[SLOTS_UNIT_NAME_MAX], dir[4096], fix[128];
        struct slots_slice_props p;
        int r;

        if (!k->cfg->has_slice)
                return;
        if (!slots_systemd_booted()) {
                check_add_rowf(k, SLOTS_CHECK_SKIP, CHECK, s->name, NULL,
                               "systemd is not PID 1: there are no slices here");
                return;
        }
        if (slots_slice_slot_unit(k->cfg->service, s->name, unit) < 0 ||
            slots_slice_cgroup(unit, dir, sizeof(dir)) < 0) {
                check_add_rowf(k, SLOTS_CHECK_FAIL, CHECK, s->name, NULL,
                               "the slice unit's name passes 255 characters");
                return;
        }
        slots_config_slice_for(k->cfg, s->n, &p);
        if (unit_file(k, s, unit, &p) != 0)
                return;
        r = live(k, s, unit, dir, &p);
        if (r < 0)
                return;
        if (!s->user && slots_cgroup_populated(dir) > 0) {
                snprintf(fix, sizeof(fix), "slots-admin release --slot %s", s->name);
                check_add_rowf(k, SLOTS_CHECK_FAIL, CHECK, s->name, fix,
                               "%s: processes run in the slice of a free slot", unit);
                return;
        }
        check_add_rowf(k, SLOTS_CHECK_PASS, CHECK, s->name, NULL, "%s as the config gives it%s", unit,
                       r == 1 ? "; not active (no session)" : ", its cgroup's limits applied");
}
