/* Release hygiene for a slot account: processes, IPC, temp files, crontab, home/state/run. */
#pragma once

#include "config.h"
#include "error.h"
#include "nss.h"

/*
 * Ends every process of the slot's uid: a forked child that drops to the
 * slot's groups and uid sends kill(-1, SIGKILL), repeated until /proc shows
 * none (bounded; -EBUSY with the pid named when one survives).
 */
int slots_cleanup_processes(const struct slots_pw *slot, struct slots_error *e);

/*
 * Removes what the slot left: its home, state/ and run/ folders emptied and
 * re-created with their owner and mode; its SysV shm, semaphores and message
 * queues; its POSIX shm; its files at the top of /tmp, /var/tmp and /dev/shm
 * (never following a link); its crontab and at jobs.  Returns 0 or the first
 * -errno, after trying every step.
 */
int slots_cleanup_files(int rootfd, const struct slots_config *c, const struct slots_pw *slot,
                        struct slots_error *e);
