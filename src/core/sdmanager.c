/* systemd's manager over D-Bus (sd-bus): the connection, a job and its end, a reload, the slices' cgroups. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <systemd/sd-bus.h>
#include <time.h>
#include <unistd.h>

#include "sdmanager.h"

#define DEST "org.freedesktop.systemd1"
#define PATH "/org/freedesktop/systemd1"
#define IFACE "org.freedesktop.systemd1.Manager"
#define CGROUP_ROOT "/sys/fs/cgroup"

int slots_manager_connect(sd_bus **ret, struct slots_error *e)
{
        sd_bus *bus = NULL;
        int r;

        *ret = NULL;
        if (geteuid() == 0) {
                r = sd_bus_new(&bus);
                if (r >= 0)
                        r = sd_bus_set_address(bus, "unix:path=/run/systemd/private");
                if (r >= 0)
                        r = sd_bus_start(bus);
                if (r >= 0) {
                        *ret = bus;
                        return 0;
                }
                sd_bus_unref(bus);
                bus = NULL;
        }
        r = sd_bus_open_system(&bus);
        if (r < 0)
                return slots_error_set(e, r, "systemd", "cannot connect to systemd's manager: %s", strerror(-r));
        *ret = bus;
        return 0;
}

static uint64_t now_usec(void)
{
        struct timespec ts;

        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (uint64_t) ts.tv_sec * 1000000 + (uint64_t) ts.tv_nsec / 1000;
}

struct job_wait {
        const char *path;       /* NULL until the method returned it */
        char result[32];        /* empty until JobRemoved came */
};

static int on_job_removed(sd_bus_message *m, void *userdata, sd_bus_error *err)
{
        struct job_wait *w = userdata;
        const char *path = NULL, *unit = NULL, *result = NULL;
        uint32_t id;

        (void) err;
        if (sd_bus_message_read(m, "uoss", &id, &path, &unit, &result) < 0)
                return 0;
        if (w->path && strcmp(path, w->path) == 0)
                snprintf(w->result, sizeof(w->result), "%s", result);
        return 0;
}

/* Runs the bus until w has its result or the deadline passes. */
static int wait_result(sd_bus *bus, struct job_wait *w, uint64_t deadline)
{
        while (!w->result[0]) {
                uint64_t now = now_usec();
                int r = sd_bus_process(bus, NULL);

                if (r < 0)
                        return r;
                if (r > 0)
                        continue;
                if (now >= deadline)
                        return -ETIMEDOUT;
                r = sd_bus_wait(bus, deadline - now);
                if (r < 0)
                        return r;
        }
        return 0;
}

int slots_manager_job(sd_bus *bus, sd_bus_message *m, const char *unit, uint64_t timeout_usec,
                      struct slots_error *e)
{
        sd_bus_error err = SD_BUS_ERROR_NULL;
        sd_bus_message *reply = NULL;
        sd_bus_slot *slot = NULL;
        struct job_wait w = { 0 };
        uint64_t deadline = now_usec() + timeout_usec;
        int r;

        /*
         * The match first: the job may end before the method's reply is read.  sd_bus_call()
         * queues what comes meanwhile; wait_result() dispatches it once the job's path is known.
         */
        /* systemd's private socket is a direct connection: its messages carry no sender to match */
        r = sd_bus_match_signal(bus, &slot, sd_bus_is_bus_client(bus) > 0 ? DEST : NULL, PATH, IFACE, "JobRemoved",
                                on_job_removed, &w);
        if (r < 0)
                return slots_error_set(e, r, unit, "cannot watch systemd's jobs: %s", strerror(-r));
        r = sd_bus_call(bus, m, timeout_usec, &err, &reply);
        if (r < 0) {
                r = slots_error_set(e, sd_bus_error_has_name(&err, "org.freedesktop.systemd1.NoSuchUnit") ? -ENOENT : r,
                                    unit, "systemd refused %s: %s", sd_bus_message_get_member(m),
                                    err.message ? err.message : strerror(-r));
                goto out;
        }
        r = sd_bus_message_read(reply, "o", &w.path);
        if (r < 0) {
                r = slots_error_set(e, r, unit, "systemd's reply to %s holds no job", sd_bus_message_get_member(m));
                goto out;
        }
        r = wait_result(bus, &w, deadline);
        if (r == -ETIMEDOUT) {
                r = slots_error_set(e, r, unit, "systemd's job %s did not end within %llu s", w.path,
                                    (unsigned long long) (timeout_usec / 1000000));
                goto out;
        }
        if (r < 0) {
                r = slots_error_set(e, r, unit, "lost systemd while its job ran: %s", strerror(-r));
                goto out;
        }
        if (strcmp(w.result, "done") != 0)
                r = slots_error_set(e, -EIO, unit, "systemd's job for it ended \"%s\", not \"done\"", w.result);
out:
        sd_bus_message_unref(reply);
        sd_bus_slot_unref(slot);
        sd_bus_error_free(&err);
        return r < 0 ? r : 0;
}

int slots_manager_reload(sd_bus *bus, struct slots_error *e)
{
        sd_bus_error err = SD_BUS_ERROR_NULL;
        int r = sd_bus_call_method(bus, DEST, PATH, IFACE, "Reload", &err, NULL, "");

        if (r < 0)
                r = slots_error_set(e, r, "systemd", "cannot reload systemd's units: %s",
                                    err.message ? err.message : strerror(-r));
        sd_bus_error_free(&err);
        return r < 0 ? r : 0;
}

int slots_manager_stop(sd_bus *bus, const char *unit, uint64_t timeout_usec, struct slots_error *e)
{
        sd_bus_message *m = NULL;
        int r = sd_bus_message_new_method_call(bus, &m, DEST, PATH, IFACE, "StopUnit");

        if (r >= 0)
                r = sd_bus_message_append(m, "ss", unit, "replace");
        if (r < 0) {
                sd_bus_message_unref(m);
                return slots_error_set(e, r, unit, "cannot build StopUnit: %s", strerror(-r));
        }
        r = slots_manager_job(bus, m, unit, timeout_usec, e);
        sd_bus_message_unref(m);
        if (r == -ENOENT) {
                slots_error_clear(e);
                return 0;
        }
        return r;
}

int slots_slice_cgroup(const char *unit, char *buf, size_t size)
{
        size_t len = strlen(unit), o, sfx = strlen(".slice");
        int w;

        if (len <= sfx || strcmp(unit + len - sfx, ".slice") != 0)
                return -EINVAL;
        w = snprintf(buf, size, "%s", CGROUP_ROOT);
        if (w < 0 || (size_t) w >= size)
                return -ENAMETOOLONG;
        o = (size_t) w;
        /* every prefix of the name that ends before a "-" is a parent slice */
        for (size_t i = 0; i + sfx < len; i++) {
                if (unit[i] != '-')
                        continue;
                w = snprintf(buf + o, size - o, "/%.*s.slice", (int) i, unit);
                if (w < 0 || (size_t) w >= size - o)
                        return -ENAMETOOLONG;
                o += (size_t) w;
        }
        w = snprintf(buf + o, size - o, "/%s", unit);
        if (w < 0 || (size_t) w >= size - o)
                return -ENAMETOOLONG;
        return 0;
}

int slots_cgroup_populated(const char *dir)
{
        char path[4096], text[256];
        ssize_t n;
        int fd, w = snprintf(path, sizeof(path), "%s/cgroup.events", dir);
        const char *p;

        if (w < 0 || (size_t) w >= sizeof(path))
                return -ENAMETOOLONG;
        fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
        if (fd < 0)
                return errno == ENOENT ? 0 : -errno;
        n = read(fd, text, sizeof(text) - 1);
        w = n < 0 ? errno : 0;
        close(fd);
        /* a cgroup removed between the open and the read is empty */
        if (n < 0)
                return w == ENODEV || w == ENOENT ? 0 : -w;
        text[n] = '\0';
        p = strstr(text, "populated ");
        if (!p)
                return -EBADMSG;
        return p[strlen("populated ")] == '1';
}
