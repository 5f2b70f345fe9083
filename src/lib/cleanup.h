/* Release hygiene for a slot account: processes, IPC, temp files, crontab, home/state/run. */
#pragma once

#include "config.h"
#include "error.h"
#include "nss.h"

/*
 * Ends every process of the slot's uid: a forked child that drops to the
 * slot's groups and uid sends kill(-1, SIGKILL), which reaches exactly the
 * processes whose real or saved uid is the slot's; repeated until /proc shows
 * no live process whose real or effective uid is the slot's (zombies do not
 * count), 50 rounds over about 2 s; then -EBUSY with the pid named.  Refuses
 * uid or gid 0 (-EINVAL).  The process table is the host's whatever the root.
 */
int slots_cleanup_processes(const struct slots_pw *slot, struct slots_error *e);

/*
 * Removes what the slot left, in this order: its crontab
 * (/var/spool/cron/crontabs/<slot>) and its at jobs (entries of
 * /var/spool/cron/atjobs and atspool it owns), so nothing starts again; its
 * <slots_root>/home, state and run folders, emptied in place with an unlinkat
 * walk (never following a link, never entering a mount point) and left with
 * their owner and mode but without ACLs or user.* attributes; its SysV shared
 * memory, semaphores and message queues (owner or creator uid, or gid, the
 * slot's; from /proc/sysvipc, the host's whatever the root); the entries it
 * owns at the top of /tmp, /var/tmp, /dev/shm (POSIX shared memory) and
 * /dev/mqueue, folders with all they hold, symlinks themselves; and the
 * content of its mailbox /var/mail/<slot>.  Paths resolve inside rootfd.
 * Refuses uid or gid 0.  Returns 0 or the first -errno, after trying every
 * step.
 */
int slots_cleanup_files(int rootfd, const struct slots_config *c, const struct slots_pw *slot,
                        struct slots_error *e);
