/* systemd's manager over D-Bus (sd-bus): the connection, a job and its end, a reload, the slices' cgroups. */
#pragma once

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "error.h"

typedef struct sd_bus sd_bus;
typedef struct sd_bus_message sd_bus_message;

/*
 * Connects to systemd: its private socket when the caller is root (no
 * dbus-daemon needed, as systemctl does), else the system bus.
 */
int slots_manager_connect(sd_bus **ret, struct slots_error *e);

/*
 * Sends m (a Manager method that returns a job: StartTransientUnit, StopUnit)
 * and waits for that job's JobRemoved until timeout_usec has passed.  0 when
 * its result is "done"; else a failure that names unit and the result.
 * Consumes nothing: the caller unrefs m.
 */
int slots_manager_job(sd_bus *bus, sd_bus_message *m, const char *unit, uint64_t timeout_usec,
                      struct slots_error *e);

/* Manager.Reload: systemd reads the unit files again (it returns once done). */
int slots_manager_reload(sd_bus *bus, struct slots_error *e);

/* Manager.StopUnit(unit, "replace") and its job's end; a unit systemd does not know is stopped. */
int slots_manager_stop(sd_bus *bus, const char *unit, uint64_t timeout_usec, struct slots_error *e);

/*
 * The cgroup folder of a slice, below /sys/fs/cgroup: each "-" of its name is
 * a level ("slots-a-b.slice" is slots.slice/slots-a.slice/slots-a-b.slice).
 * 0 or -ENAMETOOLONG.
 */
int slots_slice_cgroup(const char *unit, char *buf, size_t size);

/*
 * Whether the cgroup folder (absolute) holds a process: 1 populated, 0 empty
 * or gone, -errno when its cgroup.events cannot be read.
 */
int slots_cgroup_populated(const char *dir);
