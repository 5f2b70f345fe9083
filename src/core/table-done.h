/* The table's finished-releases file beside it: which pending slots are free since the table's last write. */
#pragma once

#include <sys/stat.h>

#include "error.h"
#include "table.h"

/*
 * "<table>.done" in the table's folder.  A release writes the table once, in its
 * step 1 (the user leaves, the slot is "cleanup": "pending"); when its cleanup is
 * done it adds a line here instead of writing the table again.  The first line
 * names the one table file the others are about (device, inode, size,
 * modification time): "table DEV INO SIZE SEC.NSEC"; each other line is
 * "<slot> <released>", a pending entry of that file that is finished.  Every
 * write of the table makes a new file, so the lines go with it: a reader believes
 * them only when the first line names the table file it read, and only from a
 * regular file of root's (or the caller's) with one link that nobody else may
 * write.
 */
#define SLOTS_DONE_SUFFIX ".done"
#define SLOTS_DONE_MAX ((size_t) 4 << 20)

/* The reads of the table and this file a reader makes while saves keep replacing both, before it stops folding. */
#define SLOTS_DONE_READS 10

/*
 * Frees in t (the content of the table file dirfd/table_name whose fstat is
 * table_st) each pending slot the finished-releases file finishes, when that
 * file is believed.  A file missing, unreadable, about another table file or not
 * believed frees nothing: its slots stay pending, the side a reader may safely
 * err on.  Returns how many slots it freed, or -ESTALE when the table file at
 * table_name is no longer the one table_st names (a save in between: read the
 * table again; t is unchanged then).
 */
int slots_done_fold(int dirfd, const char *table_name, const struct stat *table_st, unsigned pool,
                    struct slots_table *t);

/*
 * Adds "<slot n> <released>" to the finished-releases file of the table
 * dirfd/table_name, whose fstat (taken under the table's lock, which the caller
 * holds) is table_st.  A file about an older table file, or none, is replaced by
 * a whole new one, root:<table's group> 0640 with its first line and this one;
 * else the line is appended in one write.  Nothing is synced: a line lost to a
 * crash leaves the slot pending, for release --slot to finish again.  A symlink
 * or a file not believed is refused.  Returns 0 or -errno (e says why).
 */
int slots_done_add(int dirfd, const char *table_name, const char *display, const struct stat *table_st, unsigned n,
                   const char *released, struct slots_error *e);

/* Removes the file: after a save of the table it is about no file any more. */
void slots_done_remove(int dirfd, const char *table_name);

/* Removes the temps a writer killed before its rename left (table lock held). */
int slots_done_clean_stale(int dirfd, const char *table_name);
