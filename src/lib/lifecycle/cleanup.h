/* Release hygiene for a slot account: every object the account can leave behind, one function each. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "config.h"
#include "error.h"
#include "nss.h"

/*
 * Each function below is one part of release step 4 (see release.h), safe to
 * run again after a crash or a failure, and refuses uid or gid 0 (-EINVAL).
 * Each keeps going after a failure and returns 0 or the first -errno, the
 * error naming the object and, where there is one, the fix.  Paths resolve
 * inside rootfd; kernel objects (IPC, keys, mounts) are the host's whatever
 * rootfd is.
 */

/*
 * Scheduled jobs, so that nothing of the old user starts again: the crontab
 * /var/spool/cron/crontabs/<slot>, the at jobs it owns in
 * /var/spool/cron/atjobs and atspool, and systemd's lingering flag
 * /var/lib/systemd/linger/<slot>.
 */
int slots_cleanup_jobs(int rootfd, const struct slots_pw *slot, struct slots_error *e);

/*
 * Empties <slots_root>/home, state and run/<slot> in place (an unlinkat walk
 * that never follows a link) and sets each back to exactly slot:slot_gid 0700
 * with no ACL and no extended attribute (LSM labels, security.*, stay).
 * A missing folder is created so.  A symlink or non-folder in its place is
 * refused (-ELOOP, -ENOTDIR).
 */
int slots_cleanup_folders(int rootfd, const struct slots_config *c, const struct slots_pw *slot, gid_t slot_gid,
                          struct slots_error *e);

/*
 * Checks that home, state and run of the slot are folders (not symlinks),
 * exactly slot:slot_gid 0700 and, unless in_use (an assigned slot, whose
 * holder works there), empty and without ACL or extended attribute.  Returns
 * 0, or -EPERM (-ENOENT for a missing one, -ELOOP for a symlink) with the
 * first difference and the fix (slots-admin release --slot SLOT) in e.
 * Reads only.
 */
int slots_check_folders(int rootfd, const struct slots_config *c, const char *name, uid_t uid, gid_t gid,
                        bool in_use, struct slots_error *e);

/*
 * Removes every entry the slot owns at any depth below /tmp, /var/tmp,
 * /dev/shm, /run/lock and /run/user/<uid> (its folders with all they hold,
 * symlinks themselves, never followed; a file is unlinked whatever its link
 * count: the name goes, the inode is not changed), and empties its mailbox
 * /var/mail/<slot>.  A regular file of the slot's group with the set-gid bit
 * goes too, whoever owns it (a process that borrowed the slot's gid made it).
 * Set-id bits of the slot's files go through their fd before the name does.
 * Folders of others are searched at any depth (walk.c); a folder the walk
 * cannot read fails it; mount points are never entered, and neither are
 * docs_root, app_root and slots_root when one lies below a temp folder.
 */
int slots_cleanup_temp(int rootfd, const struct slots_config *c, const struct slots_pw *slot, struct slots_error *e);

/*
 * Hands every entry the slot owns at any depth of docs_root/<shared dir> to
 * the service: owner svc_uid, group svc_gid when it was the slot's group,
 * setuid and setgid bits of files cleared, access for others removed, ACLs
 * removed; a set-gid file of the slot's group, whoever owns it, loses the bit
 * and the group.  Acts through an fd of the entry (never a symlink's target)
 * and never widens a file with more than one link: it loses its set-id bits
 * only, and one of the slot's fails the step (-EMLINK naming it).
 */
int slots_cleanup_shared(int rootfd, const struct slots_config *c, const struct slots_pw *slot, gid_t slot_gid,
                         uid_t svc_uid, gid_t svc_gid, struct slots_error *e);

/* A note of a cleanup step (what was left alone, and why): path or object, then the reason. */
typedef void (*slots_cleanup_note_fn)(void *data, const char *what, const char *why);

/*
 * SysV shared memory, semaphores and message queues whose owner or creator is
 * the slot (from /proc/sysvipc), and its POSIX message queues: a forked child
 * makes a detached mqueue mount of this IPC namespace (fsmount, attached
 * nowhere; on a kernel without it, a mount in a private mount namespace), so
 * they are found whether /dev/mqueue is mounted or not, in a plain chroot too.
 * When no mqueue can be mounted at all (none in the kernel, no right to mount
 * one) that part is a note (note may be NULL), not a failure.
 */
int slots_cleanup_ipc(const struct slots_pw *slot, slots_cleanup_note_fn note, void *note_data,
                      struct slots_error *e);

/*
 * The slot's kernel keyrings: a forked child that drops to the slot's uid
 * clears its user and user-session keyrings and invalidates its persistent
 * keyring, so no key of the old user is reachable by the uid again.
 */
int slots_cleanup_keys(const struct slots_pw *slot, struct slots_error *e);

/*
 * What system services record for the uid, readable by it through an ACL, so by the
 * slot's next holder: journald's per-user files (user-<uid>.journal, the archived
 * user-<uid>@....journal and their "~" forms) in every machine folder of
 * /var/log/journal and /run/log/journal, and systemd-coredump's dumps of the uid
 * (core.<comm>.<uid>.<boot id>.<pid>.<usec>[.zst|.xz|.lz4]) in
 * /var/lib/systemd/coredump, are removed (journald keeps the active one open until it
 * rotates it).  One note counts them (note may be NULL).
 */
int slots_cleanup_records(int rootfd, const struct slots_pw *slot, slots_cleanup_note_fn note, void *note_data,
                          struct slots_error *e);

/*
 * FUSE mounts the slot made (fuse* in /proc/self/mountinfo with user_id=uid)
 * are detached (umount2 MNT_DETACH), so the walks see the folder below.
 */
int slots_cleanup_mounts(const struct slots_pw *slot, struct slots_error *e);

/*
 * The set-id sweep: what it looks for, and what it found.  A file "carries" a
 * slot when it is a regular file owned by one of uids with a set-uid or
 * set-gid bit, or a set-gid file of one of gids, whoever owns it: run by
 * anyone, it acts as that slot's next holder.
 */
struct slots_setid_sweep {
        const uid_t *uids;
        size_t n_uids;
        const gid_t *gids;
        size_t n_gids;
        uid_t svc_uid;                  /* the service: the owner chain to docs_root trusts it */
        gid_t svc_gid;
        bool clear;                     /* clear the bits through the file's fd; else only find */
        /* Each file found (cleared, with clear): the walk's path (raw bytes), its owner, group, old mode. */
        void (*seen)(void *data, const char *path, uid_t uid, gid_t gid, mode_t mode);
        /* Each mount below those folders that was not walked: its path (raw bytes) and file system type. */
        void (*skipped)(void *data, const char *path, const char *fstype);
        void *data;
        unsigned long files;            /* out: how many */
        unsigned long mounts_skipped;   /* out: how many mounts were not walked */
};

/* Whether a file of that owner, group and mode (with its type) carries one of s's slots. */
bool slots_setid_carries(const struct slots_setid_sweep *s, uid_t uid, gid_t gid, mode_t mode);

/*
 * Walks every folder a slot can write, to its end: <slots_root>/home, state and
 * run (every slot's), all of docs_root, /tmp, /var/tmp, /dev/shm, /run/lock and
 * /run/user, on the one walker (fd-relative, no symlink followed).  A mount below
 * them is walked too when its file system lives in the kernel or on a local disk
 * (tmpfs, ext4, xfs, btrfs, ...: sweep_types), to a nesting of SWEEP_MOUNT_DEPTH;
 * any other (FUSE, NFS, CIFS, autofs, a deeper one) is never entered, only shown
 * to s->skipped and counted: a process serves it, and may hang or lie.  Each file that
 * carries a slot of s is counted and shown to s->seen; with s->clear its set-uid
 * and set-gid bits are cleared through its own fd (the file, its content and its
 * other names stay: nothing is removed or widened).  A folder that cannot be
 * read to its end fails the sweep (the first failure, after the rest is walked).
 * uid or gid 0 among s's ids is refused (-EINVAL).
 */
int slots_cleanup_setid(int rootfd, const struct slots_config *c, struct slots_setid_sweep *s, struct slots_error *e);
