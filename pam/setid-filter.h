/* pam_slots' seccomp filter: a slot session gives no file the set-uid or set-gid bit. */
#pragma once

#include <stdbool.h>

struct pam_handle;

/*
 * pam_slots' call at session open, after no_new_privs: a seccomp filter on this
 * process (and so on the command it runs) that answers EPERM to the chmod family,
 * open, openat, creat and mknod when their mode carries S_ISUID or S_ISGID, and
 * ENOSYS to openat2 and io_uring, whose modes it cannot read.  Each refusal is
 * then tried (with arguments that could change nothing); a process that already
 * refuses them all gets no second filter.  0, or -1 with a pam_syslog line naming
 * the slot: the session is refused then.
 */
int slots_pam_setid_filter(struct pam_handle *pamh, const char *slot, bool debug);
