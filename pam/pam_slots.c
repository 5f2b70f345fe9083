/* pam_slots: applies the per-slot limits of the slots config at session open (pam_slots(8)). */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <syslog.h>
#include <unistd.h>

#define PAM_SM_SESSION
#include <security/pam_ext.h>
#include <security/pam_modules.h>

#include "config.h"
#include "env.h"
#include "error.h"
#include "escape.h"
#include "fsutil.h"
#include "ids.h"
#include "rlimits.h"
#include "scope.h"
#include "setid-filter.h"
#include "store.h"
#include "table.h"
#include "table-index.h"

struct options {
        const char *config;     /* points into argv, or the built-in default */
        bool debug;
        bool require_assigned;
        const char *unknown;    /* the first option the module does not know, or NULL */
};

/*
 * Module arguments.  The config path never comes from the environment: the
 * module runs inside setuid programs (sudo, su) whose environment the invoking
 * user controls, so SLOTS_CONFIG is deliberately not honoured here.  An unknown
 * option is kept, not skipped: a misspelt require_assigned must not drop the
 * check (doas refuses an unknown keyword too).
 */
static void parse_options(int argc, const char **argv, struct options *o)
{
        o->config = SLOTS_DEFAULT_CONFIG;
        o->debug = false;
        o->require_assigned = false;
        o->unknown = NULL;
        for (int i = 0; i < argc; i++) {
                if (strcmp(argv[i], "debug") == 0)
                        o->debug = true;
                else if (strcmp(argv[i], "require_assigned") == 0)
                        o->require_assigned = true;
                else if (strncmp(argv[i], "config=", 7) == 0)
                        o->config = argv[i] + 7;
                else if (!o->unknown)
                        o->unknown = argv[i];
        }
}

/* The slot number of the session's user, or 0 when there is no user or it is not a slot name. */
static unsigned session_slot(pam_handle_t *pamh, const char **user)
{
        const void *item = NULL;

        *user = NULL;
        if (pam_get_item(pamh, PAM_USER, &item) != PAM_SUCCESS || !item)
                return 0;
        *user = item;
        return slots_slot_parse(*user);
}

/*
 * Whoever can write the table decides who gets a session: the store's verdict
 * on the table open at fd (-1: the store's file, s), the group not judged.
 */
static int table_writable(pam_handle_t *pamh, int fd, const struct stat *st, const struct slots_store *s,
                          const char *table, const char *slot)
{
        const struct slots_table_policy p = { .path = table, .group = (gid_t) -1 };
        struct slots_table_verdict v;
        bool ok = s ? slots_store_verdict(s, &p, &v) : slots_table_verdict(fd, st, &p, &v);

        if (ok || !v.writable)
                return 0;
        pam_syslog(pamh, LOG_ERR, "%s: require_assigned: %s: someone but root may write it (%s); refused; fix: %s",
                   slot, table, v.e.reason, v.e.fix);
        return -1;
}

/*
 * Slot n's state from the table's index (table-index.h), when the index can be
 * trusted for the table file as it is now; 1 when it cannot (read the table),
 * -1 when the table refuses the session.
 */
static int state_from_index(pam_handle_t *pamh, const struct options *o, const struct slots_config *cfg,
                            unsigned n, const char *slot, enum slots_slot_state *state)
{
        struct slots_tindex_answer a;
        bool believed = slots_tindex_ask(cfg->table, cfg->slots, n, &a) == 0;
        bool refused = a.table_fd >= 0 && table_writable(pamh, a.table_fd, &a.table, NULL, cfg->table, slot) < 0;

        slots_close(a.table_fd);
        if (refused)
                return -1;
        if (believed) {
                *state = a.state;
                return 0;
        }
        if (o->debug)
                pam_syslog(pamh, LOG_DEBUG, "%s: require_assigned: index of %s not used (%s); reading the table",
                           slot, cfg->table, a.why);
        return 1;
}

/* Slot n's state from the whole table; -1 when it cannot be read or refuses the session. */
static int state_from_table(pam_handle_t *pamh, const struct slots_config *cfg, unsigned n, const char *slot,
                            enum slots_slot_state *state)
{
        struct slots_store s;
        struct slots_error e;
        char buf[2 * SLOTS_ERR_TEXT + 64];
        int r;

        slots_error_clear(&e);
        memset(&s, 0, sizeof(s));
        r = slots_store_open(&s, AT_FDCWD, cfg->table, cfg->slots, (gid_t) -1, 0, &e);
        if (r < 0) {
                pam_syslog(pamh, LOG_ERR, "%s: require_assigned: cannot read the slot table: %s", slot,
                           slots_error_format(&e, buf, sizeof(buf)));
                return -1;
        }
        r = s.exists ? table_writable(pamh, -1, NULL, &s, cfg->table, slot) : 0;
        if (r == 0)
                *state = slots_table_get(s.table, n, NULL, NULL, NULL);
        slots_store_close(&s);
        return r;
}

/* 0 when slot n holds a user in the config's table; otherwise logs why not and returns -1. */
static int check_assigned(pam_handle_t *pamh, const struct options *o, const struct slots_config *cfg,
                          unsigned n, const char *slot)
{
        enum slots_slot_state state;
        int r = state_from_index(pamh, o, cfg, n, slot, &state);

        if (r > 0)
                r = state_from_table(pamh, cfg, n, slot, &state);
        if (r < 0)
                return -1;
        switch (state) {
        case SLOTS_SLOT_ASSIGNED:
                return 0;
        case SLOTS_SLOT_PENDING:
                pam_syslog(pamh, LOG_ERR, "%s: require_assigned: %s: slot's release is not finished "
                           "(cleanup pending); refused", slot, cfg->table);
                return -1;
        default:
                pam_syslog(pamh, LOG_ERR, "%s: require_assigned: %s: slot is not assigned; refused",
                           slot, cfg->table);
                return -1;
        }
}

static const char *rlim_str(rlim_t v, char buf[static 24])
{
        if (v == RLIM_INFINITY)
                return "unlimited";
        snprintf(buf, 24, "%ju", (uintmax_t) v);
        return buf;
}

/* "nofile=1024:2048 nice=5 ..." for the debug line. */
static void describe_limits(const struct slots_limits *l, char *buf, size_t size)
{
        char s[24], h[24];
        size_t used = 0;
        int w;

        buf[0] = '\0';
        for (int i = 0; i < SLOTS_LIMIT_MAX_ITEM && used < size; i++) {
                const struct slots_limit *it = &l->item[i];

                if (!it->set)
                        continue;
                if (i == SLOTS_LIMIT_NICE)
                        w = snprintf(buf + used, size - used, " %s=%d", slots_limit_item_name(i), it->nice);
                else
                        w = snprintf(buf + used, size - used, " %s=%s:%s", slots_limit_item_name(i),
                                     rlim_str(it->soft, s), rlim_str(it->hard, h));
                if (w < 0)
                        break;
                used += (size_t) w;
        }
        if (buf[0] == '\0')
                snprintf(buf, size, " (none)");
}

/* slot n's limits set on this process, logged with debug; 0, or -EPERM with a pam_syslog line. */
static int apply_limits(pam_handle_t *pamh, const struct options *o, const struct slots_config *cfg, unsigned n,
                        const char *slot)
{
        enum slots_limit_item failed = SLOTS_LIMIT_NICE;
        struct slots_limits lim;
        char buf[2 * SLOTS_ERR_TEXT + 64];
        int r;

        slots_config_limits_for(cfg, n, &lim);
        r = slots_limits_apply(&lim, &failed);
        if (r < 0) {
                const struct slots_limit *it = &lim.item[failed];
                char s[24], h[24];

                if (failed == SLOTS_LIMIT_NICE)
                        pam_syslog(pamh, LOG_ERR, "%s: cannot set limit nice to %d: %s", slot, it->nice,
                                   strerror(-r));
                else
                        pam_syslog(pamh, LOG_ERR, "%s: cannot set limit %s to soft %s, hard %s: %s", slot,
                                   slots_limit_item_name(failed), rlim_str(it->soft, s),
                                   rlim_str(it->hard, h), strerror(-r));
                return -EPERM;
        }
        if (o->debug) {
                describe_limits(&lim, buf, sizeof(buf));
                pam_syslog(pamh, LOG_DEBUG, "%s: limits from %s applied:%s", slot, o->config, buf);
        }
        return 0;
}

/*
 * No set-id file and no file capability gives the session's commands another identity:
 * PR_SET_NO_NEW_PRIVS on this process, which every program that opens a slot session
 * (sudo, su, runuser, login, cron, atd) is, or forks the command from, so the command
 * inherits the flag and can never clear it.  0, or -1 with a pam_syslog line: the
 * session is refused then, since a slot's command must not run without it.
 */
static int no_new_privs(pam_handle_t *pamh, const struct options *o, const char *slot)
{
        errno = 0;
        if (prctl(PR_SET_NO_NEW_PRIVS, 1L, 0L, 0L, 0L) < 0 || prctl(PR_GET_NO_NEW_PRIVS, 0L, 0L, 0L, 0L) != 1) {
                pam_syslog(pamh, LOG_ERR, "%s: cannot set no_new_privs (PR_SET_NO_NEW_PRIVS): %s; refused; "
                           "fix: allow prctl(PR_SET_NO_NEW_PRIVS) to the program that opens the session "
                           "(a seccomp filter or an old kernel refuses it)", slot,
                           errno ? strerror(errno) : "the flag reads 0 after it was set");
                return -1;
        }
        if (o->debug)
                pam_syslog(pamh, LOG_DEBUG, "%s: no_new_privs set", slot);
        return 0;
}

PAM_EXTERN int pam_sm_open_session(pam_handle_t *pamh, int flags, int argc, const char **argv)
{
        struct options o;
        struct slots_config *cfg = NULL;
        struct slots_error e;
        char slot[SLOTS_NAME_MAX], buf[2 * SLOTS_ERR_TEXT + 64];
        const char *user;
        unsigned n;
        int r, ret;

        (void) flags;   /* PAM_SILENT: the module never talks to the user anyway */
        parse_options(argc, argv, &o);
        n = session_slot(pamh, &user);
        if (n == 0) {
                /* The name alone decides: no config is read for an account that is no slot. */
                if (o.unknown)
                        pam_syslog(pamh, LOG_ERR, "unknown option ignored for an account that is no slot: %s",
                                   slots_escape_buf(o.unknown, buf, sizeof(buf)));
                if (o.debug)
                        pam_syslog(pamh, LOG_DEBUG, "%s: not a slot account; ignored",
                                   user ? user : "(no user)");
                return PAM_IGNORE;
        }
        slots_slot_name(n, slot);
        if (o.unknown) {
                pam_syslog(pamh, LOG_ERR, "%s: unknown option %s: refused; fix: correct it in the PAM service "
                           "file (options: config=FILE, debug, require_assigned)", slot,
                           slots_escape_buf(o.unknown, buf, sizeof(buf)));
                return PAM_PERM_DENIED;
        }

        slots_error_clear(&e);
        /* The one reader of the config, with the checks a module inside setuid programs needs. */
        r = slots_config_load_flags(AT_FDCWD, o.config, SLOTS_CONFIG_ROOT_ONLY, &cfg, &e);
        if (r < 0) {
                /* A symlink's target is a name from the file system: escaped, like every name in syslog. */
                char shown[4 * sizeof(buf)], fix[4 * SLOTS_ERR_TEXT];

                pam_syslog(pamh, LOG_ERR, "%s: cannot use the config: %s%s%s", slot,
                           slots_escape_buf(slots_error_format(&e, buf, sizeof(buf)), shown, sizeof(shown)),
                           e.fix[0] ? "; fix: " : "", slots_escape_buf(e.fix, fix, sizeof(fix)));
                return PAM_PERM_DENIED;
        }
        if (n > cfg->slots) {
                if (o.debug)
                        pam_syslog(pamh, LOG_DEBUG, "%s: not in the pool of %s (%u slots); ignored", slot,
                                   o.config, cfg->slots);
                ret = PAM_IGNORE;
                goto out;
        }
        if (o.require_assigned && check_assigned(pamh, &o, cfg, n, slot) < 0) {
                ret = PAM_PERM_DENIED;
                goto out;
        }

        if (apply_limits(pamh, &o, cfg, n, slot) < 0 || no_new_privs(pamh, &o, slot) < 0 ||
            slots_pam_setid_filter(pamh, slot, o.debug) < 0) {
                ret = PAM_PERM_DENIED;
                goto out;
        }
        ret = slots_pam_scope(pamh, cfg, n, o.debug);
        if (ret == PAM_SUCCESS)
                ret = slots_pam_env(pamh, cfg, slot, o.debug);
out:
        slots_config_free(cfg);
        return ret;
}

/* Limits belong to the process and end with it: nothing to undo. */
PAM_EXTERN int pam_sm_close_session(pam_handle_t *pamh, int flags, int argc, const char **argv)
{
        const char *user;

        (void) flags;
        (void) argc;
        (void) argv;
        return session_slot(pamh, &user) ? PAM_SUCCESS : PAM_IGNORE;
}
