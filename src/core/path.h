/* Path text, not the file system: two parts joined, and whether a path lies at or below another. */
#pragma once

#include <stdbool.h>
#include <stddef.h>

/*
 * dir and name joined by one '/': a trailing '/' of dir is not doubled ("/" and
 * "x" give "/x", "/a/" and "x" give "/a/x").  malloc'ed; NULL on ENOMEM.
 */
char *slots_path_join(const char *dir, const char *name);

/*
 * The same join into buf, cut to fit size: a name for a message, never a path
 * to open.  Returns buf.
 */
const char *slots_path_join_to(char *buf, size_t size, const char *dir, const char *name);

/*
 * True when path is base or lies below it, component-wise ("/ab" is not below
 * "/a").  Both are absolute and normalized; a trailing '/' of base is ignored,
 * and every path lies below "/".
 */
bool slots_path_under(const char *path, const char *base);
