/*
 * Loads pam_slots.so the way libpam does (dlopen RTLD_NOW), finds its session
 * hooks, and calls them directly for the results a stack cannot show: what
 * close_session returns, and that non-slot accounts are ignored without any
 * config (the default path is not read), and that it stays loaded after dlclose
 * (-z nodelete).  Usage: test-dlopen MODULE.so CONFDIR
 * (CONFDIR holds a "slots-dlopen" service file; pam_start needs one).
 */
#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

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
        static const struct {
                const char *hook, *user, *arg;
                int rc;
        } calls[] = {
                { "pam_sm_close_session", "slot01", NULL, PAM_SUCCESS },
                { "pam_sm_close_session", "slot100", NULL, PAM_SUCCESS },
                { "pam_sm_close_session", "alice", NULL, PAM_IGNORE },
                { "pam_sm_close_session", "root", NULL, PAM_IGNORE },
                { "pam_sm_close_session", "slot1", NULL, PAM_IGNORE },
                { "pam_sm_close_session", NULL, NULL, PAM_IGNORE },
                /* A config that does not exist: the name alone decides, nothing is read. */
                { "pam_sm_open_session", "root", "config=/nonexistent/slots.conf", PAM_IGNORE },
                { "pam_sm_open_session", "alice", "config=/nonexistent/slots.conf", PAM_IGNORE },
                { "pam_sm_open_session", "slot0100", "config=/nonexistent/slots.conf", PAM_IGNORE },
                { "pam_sm_open_session", NULL, "config=/nonexistent/slots.conf", PAM_IGNORE },
                { "pam_sm_open_session", "root", NULL, PAM_IGNORE },
        };
        const struct pam_conv c = { conv, NULL };
        void *h;
        int failed = 0;

        if (argc != 3) {
                fprintf(stderr, "usage: test-dlopen MODULE.so CONFDIR\n");
                return 99;
        }
        /* RTLD_NOW: an unresolved symbol fails here, as "PAM adding faulty module" would. */
        h = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
        if (!h) {
                fprintf(stderr, "FAIL dlopen %s: %s\n", argv[1], dlerror());
                return 1;
        }
        for (size_t i = 0; i < sizeof(calls) / sizeof(calls[0]); i++) {
                hook_fn *fn = (hook_fn *) dlsym(h, calls[i].hook);
                const char *args[1] = { calls[i].arg };
                pam_handle_t *pamh = NULL;
                int r;

                if (!fn) {
                        fprintf(stderr, "FAIL %s: no symbol %s\n", argv[1], calls[i].hook);
                        failed = 1;
                        continue;
                }
                /* The stack is never run: the hook is called directly. */
                if (pam_start_confdir("slots-dlopen", calls[i].user, &c, argv[2], &pamh) != PAM_SUCCESS) {
                        fprintf(stderr, "FAIL pam_start_confdir\n");
                        return 1;
                }
                r = fn(pamh, PAM_SILENT, calls[i].arg ? 1 : 0, args);
                if (r != calls[i].rc) {
                        fprintf(stderr, "FAIL %s(%s%s%s): %s, want %s\n", calls[i].hook,
                                calls[i].user ? calls[i].user : "no user", calls[i].arg ? ", " : "",
                                calls[i].arg ? calls[i].arg : "", pam_strerror(pamh, r),
                                pam_strerror(pamh, calls[i].rc));
                        failed = 1;
                } else {
                        printf("ok %s(%s%s%s): %s\n", calls[i].hook, calls[i].user ? calls[i].user : "no user",
                               calls[i].arg ? ", " : "", calls[i].arg ? calls[i].arg : "",
                               pam_strerror(pamh, r));
                }
                pam_end(pamh, PAM_SUCCESS);
        }
        if (dlclose(h) != 0) {
                fprintf(stderr, "FAIL dlclose: %s\n", dlerror());
                failed = 1;
        }
        /* Linked -z nodelete (pam_slots(8)): still loaded after libpam's dlclose, not loaded again. */
        h = dlopen(argv[1], RTLD_NOW | RTLD_NOLOAD);
        if (!h) {
                fprintf(stderr, "FAIL %s was unloaded at dlclose (not linked -z nodelete)\n", argv[1]);
                failed = 1;
        } else {
                printf("ok still loaded after dlclose\n");
                (void) dlclose(h);
        }
        return failed;
}
