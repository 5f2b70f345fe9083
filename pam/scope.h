/* pam_slots' systemd scope: a slot's session placed in a scope inside the slot's slice. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "config.h"
#include "error.h"
#include "slice.h"

/* One property of the transient scope, as StartTransientUnit's a(sv) carries it. */
struct slots_scope_prop {
        const char *name;
        char type;              /* 's' string, 'u' the one pid of "au", 'i' int32, 'b' boolean */
        const char *s;
        uint32_t u;
        int32_t i;
};

#define SLOTS_SCOPE_NPROPS 5

/* "slots-<service>-<slot>-<pid>.scope"; 0 or -ENAMETOOLONG. */
int slots_scope_name(const char *service, const char *slot, pid_t pid, char buf[static SLOTS_UNIT_NAME_MAX]);

/*
 * The scope's properties: Description, Slice (the slot's), PIDs ([pid]),
 * KillSignal SIGKILL (release ends a slot; nothing may hold it up) and
 * CollectMode, so a failed scope does not keep its name.  desc is the
 * caller's buffer of 160 bytes.
 */
size_t slots_scope_props(const char *slice, const char *slot, pid_t pid, char desc[static 160],
                         struct slots_scope_prop out[static SLOTS_SCOPE_NPROPS]);

/* What the placement depends on, so that its refusals can be tested without systemd. */
struct slots_scope_env {
        bool booted;            /* systemd is PID 1 */
        int unitdirfd;          /* /etc/systemd/system */
        uint64_t timeout_usec;  /* for the job */
};

/*
 * Places pid in a scope inside slot n's slice.  Returns 1 when there is
 * nothing to do (no slice key, or no systemd), 0 when placed, or -errno with e
 * saying why not (the slot's slice unit missing: provisioning has not written
 * it; systemd unreachable, refusing, or its job failing or late).
 */
int slots_scope_place(const struct slots_config *c, unsigned n, pid_t pid, const struct slots_scope_env *env,
                      struct slots_error *e);

struct pam_handle;

/*
 * pam_slots' one call at session open, after the limits: places the calling
 * process (getpid()) and so the session in its scope.  PAM_SUCCESS when placed
 * or when there is nothing to do; PAM_PERM_DENIED with a pam_syslog line
 * naming the slot, the unit, why and the fix when it cannot be placed.
 */
int slots_pam_scope(struct pam_handle *pamh, const struct slots_config *c, unsigned n, bool debug);
