/* What cleanup.c and cleanup-own.c share: how the folders release walks are opened, and the mailbox. */
#pragma once

#include <sys/types.h>

#include "error.h"
#include "nss.h"

/* A folder inside rootfd, resolved by slots_open_in(). */
int cleanup_open_dir_in(int rootfd, const char *path);

/*
 * A folder whose every entry root may remove or hand over (a temp folder, a shared
 * folder's way): through the owner chain.  -ENOENT quietly; any other refusal names
 * the component and the fix.
 */
int cleanup_open_walk_root(int rootfd, const char *path, uid_t trusted_uid, gid_t trusted_gid, struct slots_error *e);

/*
 * A folder slots may write (/run/user/<uid>, a shared folder): its parent through
 * the owner chain, itself opened without following, owned by the slot, root or
 * trusted_uid (-EPERM).  -ENOENT quietly.
 */
int cleanup_open_slot_end(int rootfd, const char *dir, uid_t slot_uid, uid_t trusted_uid, gid_t trusted_gid,
                          struct slots_error *e);

/* Empties the slot's mailbox /var/mail/<slot>. */
int cleanup_clean_mail(int rootfd, const struct slots_pw *slot, struct slots_error *e);
