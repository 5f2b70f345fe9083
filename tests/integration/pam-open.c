/*
 * Calls pam_slots.so's open_session hook directly, as libpam would, for one user and one
 * module argument line, and prints the PAM result: the driver of pam-config.sh.
 * Usage: pam-open MODULE.so CONFDIR USER [ARG...]   (CONFDIR holds a "slots-open" service
 * file; pam_start needs one).  Prints PAM_SUCCESS, PAM_IGNORE, PAM_PERM_DENIED, PAM_SESSION_ERR or the
 * number; exit status 0 when it got that far.  What the module logs goes to stderr too.
 */
#include <dlfcn.h>
#include <stdio.h>
#include <syslog.h>

#include <security/pam_appl.h>

typedef int hook_fn(pam_handle_t *pamh, int flags, int argc, const char **argv);

static int conv(int n, const struct pam_message **msg, struct pam_response **resp, void *data)
{
        (void) n;
        (void) msg;
        (void) resp;
        (void) data;
        return PAM_CONV_ERR;
}

int main(int argc, char **argv)
{
        const struct pam_conv c = { conv, NULL };
        pam_handle_t *pamh = NULL;
        hook_fn *fn;
        void *h;
        int r;

        if (argc < 4) {
                fprintf(stderr, "usage: pam-open MODULE.so CONFDIR USER [ARG...]\n");
                return 99;
        }
        /* pam_syslog goes through syslog(3): LOG_PERROR copies each line to stderr for the test. */
        openlog("pam-open", LOG_PERROR, LOG_AUTHPRIV);
        h = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
        if (!h) {
                fprintf(stderr, "dlopen %s: %s\n", argv[1], dlerror());
                return 99;
        }
        fn = (hook_fn *) dlsym(h, "pam_sm_open_session");
        if (!fn || pam_start_confdir("slots-open", argv[3], &c, argv[2], &pamh) != PAM_SUCCESS) {
                fprintf(stderr, "no pam_sm_open_session, or pam_start_confdir failed\n");
                return 99;
        }
        r = fn(pamh, PAM_SILENT, argc - 4, (const char **) argv + 4);
        if (r == PAM_SUCCESS)
                printf("PAM_SUCCESS\n");
        else if (r == PAM_IGNORE)
                printf("PAM_IGNORE\n");
        else if (r == PAM_PERM_DENIED)
                printf("PAM_PERM_DENIED\n");
        else if (r == PAM_SESSION_ERR)
                printf("PAM_SESSION_ERR\n");
        else
                printf("%d (%s)\n", r, pam_strerror(pamh, r));
        pam_end(pamh, PAM_SUCCESS);
        dlclose(h);
        return 0;
}
