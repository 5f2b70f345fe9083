/* The provisioning of the pool's slice units: written into /etc/systemd/system, the stale removed, systemd reloaded. */
#pragma once

#include <stdbool.h>

#include "config.h"
#include "error.h"
#include "provision.h"

struct slots_prov_slice_opts {
        int rootfd;                     /* the tree: AT_FDCWD for the host, or an image's root */
        bool host;                      /* the live host: only there is systemd asked, and only as PID 1 */
        bool dry_run;                   /* report, change nothing */
        void (*report)(void *arg, const struct slots_prov_msg *m);
        void *arg;
};

/*
 * Brings <root>/etc/systemd/system to the config's slices (slots-provision(8)):
 * "slots-<service>.slice" with slice.pool and one "slots-<service>-slotNN.slice"
 * per slot with slice.default overlaid by slice.slotNN, each written by an
 * owner-preserving atomic replace (root:root 0644) only where its bytes differ,
 * one change line each; units of slots outside the pool (all of them without
 * slice) that this code wrote are removed.  On the host with systemd as PID 1
 * systemd is reloaded after a change; on a host without it nothing is written
 * and one warning says so.  *changes counts the change lines.  Returns 0 or
 * -errno with e set.
 */
int slots_provision_slices(const struct slots_config *c, const struct slots_prov_slice_opts *o, unsigned *changes,
                           struct slots_error *e);

/* The step of the provision run (provision.c): slots_provision_slices() with the run's tree, mode and report. */
struct prov_run;
int prov_slice_step(struct prov_run *x);

/*
 * The same in the run's first pass: a dry run that reports nothing, so that a unit it would
 * refuse (a masked one) refuses the run before its first change.
 */
int prov_slice_check(struct prov_run *x);
