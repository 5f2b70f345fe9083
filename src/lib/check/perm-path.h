/* The permission model of each step of a path, read through the resolver as the kernel would follow it. */
#pragma once

#include "perm.h"

/*
 * Follows path from "/" as the kernel would (the resolver, symlinks followed)
 * and records each folder it passes and the object at the end with its owner,
 * mode and ACL.  Only reads.  Returns 0 or -ENOMEM; a path that cannot be
 * followed sets w->err and w->err_path.
 */
int slots_perm_path_read(const char *path, struct slots_perm_path *w);
