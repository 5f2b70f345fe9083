/*
 * check's sudo-env verdict: whether sudo took the executor's line and its command has no_new_privs
 * and the seccomp filter against set-id files.
 */
#include <stdbool.h>
#include <string.h>

#include "check-int.h"

#define NNP_FIX "put pam_slots in sudo's session stack: pam-auth-update --enable slots, or the line " \
                "'session required pam_slots.so' in /etc/pam.d/sudo (pam_slots(8))"
#define RUN_FIX "the launcher must run the command it is given, as for sudo-kill"

/* The one-digit value of key ("NoNewPrivs:") in a /proc/PID/status text; -1 when there is no such line. */
static int status_digit(const char *status, const char *key)
{
        size_t n = strlen(key);
        const char *p = status;

        while (p && strncmp(p, key, n) != 0)
                if ((p = strchr(p, '\n')))
                        p++;
        if (!p)
                return -1;
        p += n;
        p += strspn(p, " \t");
        if (p[0] >= '0' && p[0] <= '9' && (p[1] == '\n' || p[1] == '\0'))
                return p[0] - '0';
        return -1;
}

bool check_sudo_env_verdict(struct check_run *k, const struct slotinfo *s, int r, const char *out, const char *err,
                            const char *cwd)
{
        int nnp = status_digit(out, "NoNewPrivs:"), seccomp = status_digit(out, "Seccomp:");

        /* err is exact here (JSON keeps it); the command escapes it for the terminal. */
        if (strstr(err, "not allowed to set") || strstr(err, "password is required") ||
            strstr(err, "not allowed to preserve"))
                check_add_rowf(k, SLOTS_CHECK_FAIL, "sudo-env", s->name,
                               "run slots-provision: its drop-in keeps exactly the names of sudo_env",
                               "sudo refuses: %s", err);
        else if (r < 0)
                return false;
        else if (r != 0)
                check_add_rowf(
                        k, SLOTS_CHECK_FAIL, "sudo-env", s->name,
                        "run it as the service and read the message: sudo -n -u slotNN --preserve-env=LIST -- ...",
                        "in %s: with --preserve-env for the %zu names of sudo_env, the run exits %d%s%s", cwd,
                        k->cfg->n_sudo_env, r, err[0] ? ": " : "", err);
        else if (nnp < 0)
                check_add_rowf(k, SLOTS_CHECK_FAIL, "sudo-env", s->name, RUN_FIX,
                               "in %s: /bin/cat /proc/self/status through the launcher printed no NoNewPrivs line",
                               cwd);
        else if (nnp == 0)
                check_add_rowf(k, SLOTS_CHECK_FAIL, "sudo-env", s->name, NNP_FIX,
                               "the command runs without no_new_privs (NoNewPrivs: 0): a set-id file can give the slot "
                               "another identity");
        else if (seccomp != 2)
                check_add_rowf(k, SLOTS_CHECK_FAIL, "sudo-env", s->name, NNP_FIX,
                               "the command runs without a seccomp filter (Seccomp: %d, want 2): a slot can make a "
                               "set-id file; the pam_slots that opened the session predates the filter or is not "
                               "the one installed", seccomp);
        else
                check_add_rowf(k, SLOTS_CHECK_PASS, "sudo-env", s->name, NULL,
                               "sudo accepts --preserve-env for the %zu names of sudo_env; the command has "
                               "no_new_privs and a seccomp filter (Seccomp: 2)", k->cfg->n_sudo_env);
        return true;
}
