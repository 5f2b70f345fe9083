/* pam_slots' systemd scope: a slot's session placed in a scope inside the slot's slice. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <syslog.h>
#include <systemd/sd-bus.h>
#include <unistd.h>

#include <security/pam_ext.h>
#include <security/pam_modules.h>

#include "ids.h"
#include "scope.h"
#include "sdmanager.h"

/* sudo's preflight has 5 s in all (slots-admin(8)); a booted guest under emulation takes up to 1 s. */
#define SCOPE_TIMEOUT_USEC (4 * 1000000ULL)

int slots_scope_name(const char *service, const char *slot, pid_t pid, char buf[static SLOTS_UNIT_NAME_MAX])
{
        char slice[SLOTS_UNIT_NAME_MAX];
        size_t base;
        int r = slots_slice_slot_unit(service, slot, slice), w;

        if (r < 0)
                return r;
        base = strlen(slice) - strlen(".slice");
        w = snprintf(buf, SLOTS_UNIT_NAME_MAX, "%.*s-%ld.scope", (int) base, slice, (long) pid);
        return w < 0 || w >= SLOTS_UNIT_NAME_MAX ? -ENAMETOOLONG : 0;
}

size_t slots_scope_props(const char *slice, const char *slot, pid_t pid, char desc[static 160],
                         struct slots_scope_prop out[static SLOTS_SCOPE_NPROPS])
{
        snprintf(desc, 160, "slots: a session of %s", slot);
        out[0] = (struct slots_scope_prop){ .name = "Description", .type = 's', .s = desc };
        out[1] = (struct slots_scope_prop){ .name = "Slice", .type = 's', .s = slice };
        out[2] = (struct slots_scope_prop){ .name = "PIDs", .type = 'u', .u = (uint32_t) pid };
        out[3] = (struct slots_scope_prop){ .name = "KillSignal", .type = 'i', .i = SIGKILL };
        out[4] = (struct slots_scope_prop){ .name = "CollectMode", .type = 's', .s = "inactive-or-failed" };
        return SLOTS_SCOPE_NPROPS;
}

static int append_prop(sd_bus_message *m, const struct slots_scope_prop *p)
{
        switch (p->type) {
        case 's':
                return sd_bus_message_append(m, "(sv)", p->name, "s", p->s);
        case 'u':
                return sd_bus_message_append(m, "(sv)", p->name, "au", 1, p->u);
        case 'i':
                return sd_bus_message_append(m, "(sv)", p->name, "i", p->i);
        default:
                return -EINVAL;
        }
}

/* StartTransientUnit(name, "fail", properties, no auxiliary units). */
static int start_message(sd_bus *bus, const char *name, const struct slots_scope_prop *p, size_t n,
                         sd_bus_message **ret)
{
        sd_bus_message *m = NULL;
        int r = sd_bus_message_new_method_call(bus, &m, "org.freedesktop.systemd1", "/org/freedesktop/systemd1",
                                               "org.freedesktop.systemd1.Manager", "StartTransientUnit");

        if (r >= 0)
                r = sd_bus_message_append(m, "ss", name, "fail");
        if (r >= 0)
                r = sd_bus_message_open_container(m, 'a', "(sv)");
        for (size_t i = 0; r >= 0 && i < n; i++)
                r = append_prop(m, &p[i]);
        if (r >= 0)
                r = sd_bus_message_close_container(m);
        if (r >= 0)
                r = sd_bus_message_append(m, "a(sa(sv))", 0);
        if (r < 0) {
                sd_bus_message_unref(m);
                return r;
        }
        *ret = m;
        return 0;
}

/* The slice unit provisioning wrote must be there: systemd would make up an unbounded one in its place. */
static int unit_present(int dirfd, const char *unit, struct slots_error *e)
{
        struct stat st;

        if (fstatat(dirfd, unit, &st, AT_SYMLINK_NOFOLLOW) < 0) {
                int r = -errno;

                slots_error_refuse(e, r, unit, "the slot's slice unit is not in /etc/systemd/system: %s",
                                   strerror(-r));
                slots_error_fix(e, "run slots-provision, which writes it");
                return r;
        }
        if (!S_ISREG(st.st_mode) || st.st_uid != 0) {
                slots_error_refuse(e, -EPERM, unit, "the slot's slice unit in /etc/systemd/system is not a "
                                   "root-owned file (a masked unit?)");
                slots_error_fix(e, "remove it and run slots-provision");
                return -EPERM;
        }
        return 0;
}

int slots_scope_place(const struct slots_config *c, unsigned n, pid_t pid, const struct slots_scope_env *env,
                      struct slots_error *e)
{
        char slot[SLOTS_NAME_MAX], slice[SLOTS_UNIT_NAME_MAX], name[SLOTS_UNIT_NAME_MAX], desc[160];
        struct slots_scope_prop props[SLOTS_SCOPE_NPROPS];
        sd_bus_message *m = NULL;
        sd_bus *bus = NULL;
        size_t np;
        int r;

        if (!c->has_slice || !env->booted)
                return 1;
        slots_slot_name(n, slot);
        if (slots_slice_slot_unit(c->service, slot, slice) < 0 || slots_scope_name(c->service, slot, pid, name) < 0)
                return slots_error_invalid(e, -ENAMETOOLONG, slot, "the slice unit's name passes 255 characters");
        r = unit_present(env->unitdirfd, slice, e);
        if (r < 0)
                return r;
        np = slots_scope_props(slice, slot, pid, desc, props);
        r = slots_manager_connect(&bus, e);
        if (r < 0)
                return r;
        r = start_message(bus, name, props, np, &m);
        if (r < 0)
                r = slots_error_set(e, r, name, "cannot build StartTransientUnit: %s", strerror(-r));
        else
                r = slots_manager_job(bus, m, name, env->timeout_usec, e);
        sd_bus_message_unref(m);
        sd_bus_flush_close_unref(bus);
        return r;
}

int slots_pam_scope(struct pam_handle *pamh, const struct slots_config *c, unsigned n, bool debug)
{
        struct slots_scope_env env = { .booted = slots_systemd_booted(), .unitdirfd = -1,
                                       .timeout_usec = SCOPE_TIMEOUT_USEC };
        char slot[SLOTS_NAME_MAX], buf[2 * SLOTS_ERR_TEXT + 64];
        struct slots_error e;
        int r;

        slots_slot_name(n, slot);
        if (!c->has_slice)
                return PAM_SUCCESS;
        if (!env.booted) {
                if (debug)
                        pam_syslog(pamh, LOG_DEBUG, "%s: systemd is not PID 1; the session stays where it is", slot);
                return PAM_SUCCESS;
        }
        slots_error_clear(&e);
        env.unitdirfd = open("/etc/systemd/system", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (env.unitdirfd < 0) {
                pam_syslog(pamh, LOG_ERR, "%s: cannot open /etc/systemd/system: %s; session refused", slot,
                           strerror(errno));
                return PAM_PERM_DENIED;
        }
        r = slots_scope_place(c, n, getpid(), &env, &e);
        close(env.unitdirfd);
        if (r < 0) {
                pam_syslog(pamh, LOG_ERR, "%s: cannot place the session in its slice: %s%s%s; session refused", slot,
                           slots_error_format(&e, buf, sizeof(buf)), e.fix[0] ? "; fix: " : "", e.fix);
                return PAM_PERM_DENIED;
        }
        if (debug)
                pam_syslog(pamh, LOG_DEBUG, "%s: session placed in a scope of its slice", slot);
        return PAM_SUCCESS;
}
