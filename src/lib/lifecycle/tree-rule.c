/* The rule a tree walk applies to each entry of a user's tree: owner, group, mode, the slot's ACL entry, set-id bits. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "acl.h"
#include "fsutil.h"
#include "tree-int.h"

#define SETID_BITS ((mode_t) (S_ISUID | S_ISGID))

/* Tells the admin about an entry left alone on purpose; the walk goes on. */
static void note(const struct tree_walk *t, const char *path, const char *why)
{
        if (t->stats->note)
                t->stats->note(t->stats->note_data, path, why);
}

static int fail(struct slots_error *e, const struct slots_walk_entry *en, int r, const char *what)
{
        char shown[SLOTS_ERR_TEXT];

        slots_walk_shown(en->path, en->root_len, shown, sizeof(shown));
        return slots_error_set(e, r, shown, "%s: %s", what, strerror(-r));
}

/* A file linked during the walk: the change was undone. */
static void linked_note(struct tree_walk *t, const struct slots_walk_entry *en, unsigned long nlink)
{
        char why[160];

        t->stats->linked++;
        snprintf(why, sizeof(why), "has %lu hard links: left alone (it was linked during the walk; a walk never "
                 "widens a file that also has a name elsewhere)", nlink);
        note(t, en->path, why);
}

/* Whether the entry names the slot by its owner or its group. */
static bool names_slot(const struct tree_walk *t, uid_t uid, gid_t gid)
{
        return uid == t->slot_uid || gid == t->slot_gid;
}

/*
 * An entry the walk takes from its owner: another account's in a tree the walk takes
 * whole (assign, and the user's own tree at release), where everything is the service's
 * whoever made it; and at release --slot, the slot's own in any tree.
 */
static bool foreign(const struct tree_walk *t, uid_t uid)
{
        if (uid == t->svc_uid)
                return false;
        if (t->mode == TREE_RELEASE_SLOT)
                return uid == t->slot_uid;
        /* assign again for the slot's own user: what the holder made is its own until release */
        return t->mode != TREE_PREPARE || uid != t->slot_uid;
}

static int prepare_fd(struct tree_walk *t, int fd, const struct stat *st, const struct slots_walk_entry *en,
                      struct slots_error *e);

/* The content of fd into nfd: 0 or -errno. */
static int copy_content(int fd, int nfd)
{
        char buf[65536];
        off_t off = 0;
        ssize_t n;

        while ((n = copy_file_range(fd, &off, nfd, NULL, (size_t) 1 << 30, 0)) > 0)
                ;
        if (n == 0)
                return 0;
        if (errno != EXDEV && errno != EINVAL && errno != ENOSYS && errno != EOPNOTSUPP)
                return -errno;
        while ((n = pread(fd, buf, sizeof(buf), off)) > 0) {
                if (write(nfd, buf, (size_t) n) != n)
                        return -EIO;
                off += n;
        }
        return n < 0 ? -errno : 0;
}

/*
 * In place of the name of the regular file fd: a copy, a new inode of the service's with
 * its owner's bits only (at assign then granted as any entry), renamed over the name.
 */
static int copy_in_place(struct tree_walk *t, const struct slots_walk_entry *en, int fd, struct slots_error *e)
{
        char proc[64], tmp[64];
        struct stat st, nst;
        int nfd = openat(en->parent_fd, ".", O_TMPFILE | O_RDWR | O_CLOEXEC, 0), r = 0;

        if (nfd < 0)
                return fail(e, en, -errno, "cannot make a copy of a file with another name");
        if (fstat(fd, &st) < 0 || fchown(nfd, t->svc_uid, t->svc_gid) < 0 || fchmod(nfd, st.st_mode & 0700) < 0)
                r = -errno;
        if (r == 0)
                r = copy_content(fd, nfd);
        snprintf(proc, sizeof(proc), "/proc/self/fd/%d", nfd);
        snprintf(tmp, sizeof(tmp), ".slots-copy.%lu", (unsigned long) st.st_ino);
        if (r == 0 && linkat(AT_FDCWD, proc, en->parent_fd, tmp, AT_SYMLINK_FOLLOW) < 0)
                r = -errno;
        if (r == 0 && renameat(en->parent_fd, tmp, en->parent_fd, en->name) < 0) {
                r = -errno;
                (void) unlinkat(en->parent_fd, tmp, 0);
        }
        if (r < 0) {
                close(nfd);
                return fail(e, en, r, "cannot put a copy in place of a file with another name");
        }
        r = t->mode == TREE_PREPARE && fstat(nfd, &nst) == 0 ? prepare_fd(t, nfd, &nst, en, e) : 0;
        close(nfd);
        return r;
}

/*
 * A file of another account with a second name elsewhere: a chown cannot take it back
 * (the other name keeps the same inode), so a regular file (fd, when open) is replaced
 * by a copy of the service's; anything else (a FIFO, a socket, a symlink: no content)
 * loses its name here.  Either way the admin hears of it.
 */
static int drop_linked(struct tree_walk *t, const struct slots_walk_entry *en, int fd, unsigned long nlink,
                       uid_t uid, struct slots_error *e)
{
        bool copy = fd >= 0 && S_ISREG(en->sx->stx_mode);
        char why[200];
        int r = 0;

        if (copy)
                r = copy_in_place(t, en, fd, e);
        else if (unlinkat(en->parent_fd, en->name, 0) < 0 && errno != ENOENT)
                r = fail(e, en, -errno, "cannot remove a second name of another account's file");
        if (r < 0)
                return r;
        t->stats->linked++;
        snprintf(why, sizeof(why), "has %lu hard links and is uid %u's, not the service's: %s (a chown cannot take a "
                 "file back from its other name)", nlink, (unsigned) uid,
                 copy ? "replaced by a copy of the service's" : "removed from the tree");
        note(t, en->path, why);
        return 0;
}

/* ---- assign: the slot's uid by an ACL entry, nothing for the group or others ---- */

/* The slot's permission on an entry: rwx on a folder, rw on a file, and x where anyone had it. */
static unsigned slot_perm(mode_t mode)
{
        if (S_ISDIR(mode))
                return 7;
        return (mode & 0111) ? 7 : 6;
}

/*
 * The ACL an entry gets at assign: its owner's bits kept (rwx on a default
 * ACL), the slot's entry, the mask the slot's permission, and nothing for
 * anyone else: no owning group, no other, no other named entry (a named
 * group can be borrowed as the slot's own could; a named user is another
 * account reaching a user's data).
 */
static int acl_want(const struct tree_walk *t, unsigned owner, unsigned sp, struct slots_acl *want)
{
        size_t n = 0;

        want->entries = calloc(5, sizeof(*want->entries));
        if (!want->entries)
                return -ENOMEM;
        want->entries[n++] = (struct slots_acl_entry) { .tag = SLOTS_ACL_USER_OBJ, .perm = owner };
        want->entries[n++] = (struct slots_acl_entry) { .tag = SLOTS_ACL_USER, .perm = sp, .id = t->slot_uid };
        want->entries[n++] = (struct slots_acl_entry) { .tag = SLOTS_ACL_GROUP_OBJ, .perm = 0 };
        want->entries[n++] = (struct slots_acl_entry) { .tag = SLOTS_ACL_MASK, .perm = sp };
        want->entries[n++] = (struct slots_acl_entry) { .tag = SLOTS_ACL_OTHER, .perm = 0 };
        /* Already in the order the kernel wants: by tag, then by id. */
        want->n = n;
        return 0;
}

static bool acl_same(const struct slots_acl *a, const struct slots_acl *b)
{
        if (a->n != b->n)
                return false;
        for (size_t i = 0; i < a->n; i++)
                if (a->entries[i].tag != b->entries[i].tag || a->entries[i].perm != b->entries[i].perm ||
                    ((a->entries[i].tag == SLOTS_ACL_USER || a->entries[i].tag == SLOTS_ACL_GROUP) &&
                     a->entries[i].id != b->entries[i].id))
                        return false;
        return true;
}

/* The ACL of fd of type as assign wants it; 1 when it must be written (*want filled), 0 when it is right. */
static int acl_plan(const struct tree_walk *t, int fd, acl_type_t type, unsigned owner, unsigned sp,
                    struct slots_acl *want)
{
        struct slots_acl cur = { 0 };
        int r = slots_acl_get(fd, type, &cur);

        if (r < 0)
                return r;
        r = acl_want(t, owner, sp, want);
        if (r == 0)
                r = acl_same(&cur, want) ? 0 : 1;
        slots_acl_free(&cur);
        return r;
}

/*
 * A link made while the grant was written: the slot's entry goes again and
 * the old mode comes back without set-id bits (its other name is never widened).
 */
static int undo_if_linked(struct tree_walk *t, int fd, const struct stat *st, const struct slots_walk_entry *en, struct slots_error *e)
{
        struct stat now;

        if (S_ISDIR(st->st_mode))
                return 0;
        if (fstat(fd, &now) < 0)
                return fail(e, en, -errno, "cannot stat");
        if (now.st_nlink <= 1)
                return 0;
        if (slots_acl_strip(fd, false, t->slot_uid, (gid_t) -1) < 0 || fchown(fd, st->st_uid, st->st_gid) < 0 ||
            fchmod(fd, st->st_mode & 07777 & ~SETID_BITS) < 0)
                return fail(e, en, -errno, "cannot undo a change to a file linked meanwhile");
        if (foreign(t, st->st_uid)) {
                int r = drop_linked(t, en, fd, (unsigned long) now.st_nlink, st->st_uid, e);

                return r < 0 ? r : 1;
        }
        linked_note(t, en, (unsigned long) now.st_nlink);
        return 1;
}

/* assign's rule on an open folder, file or FIFO with one link. */
static int prepare_fd(struct tree_walk *t, int fd, const struct stat *st, const struct slots_walk_entry *en, struct slots_error *e)
{
        bool dir = S_ISDIR(st->st_mode);
        unsigned sp = slot_perm(st->st_mode), owner = dir ? 7 : (st->st_mode >> 6) & 7;
        mode_t closed = (mode_t) (owner << 6);
        struct slots_acl acc = { 0 }, def = { 0 };
        int r, ra, rd = 0;

        ra = acl_plan(t, fd, SLOTS_ACL_ACCESS, owner, sp, &acc);
        if (ra >= 0 && dir)
                rd = acl_plan(t, fd, SLOTS_ACL_DEFAULT, 7, 7, &def);
        r = ra < 0 ? ra : rd;
        if (r < 0) {
                r = fail(e, en, r, "cannot read the ACL");
                goto out;
        }
        if (!ra && !rd && !foreign(t, st->st_uid) && (st->st_mode & 07777) == (closed | (mode_t) (sp << 3)))
                goto out;
        /* The group and others lose their bits first: the grant never widens anything, even for a moment. */
        if (fchmod(fd, closed) < 0) {
                r = fail(e, en, -errno, "cannot change mode");
                goto out;
        }
        /* Another account's entry is the service's before the slot is granted anything on it. */
        if (foreign(t, st->st_uid) && fchown(fd, t->svc_uid, t->svc_gid) < 0) {
                r = fail(e, en, -errno, "cannot change owner");
                goto out;
        }
        r = slots_acl_set(fd, SLOTS_ACL_ACCESS, &acc);
        if (r == 0 && dir)
                r = slots_acl_set(fd, SLOTS_ACL_DEFAULT, &def);
        if (r < 0) {
                r = fail(e, en, r, r == -EOPNOTSUPP ? "cannot grant the slot by an ACL entry (the file system "
                                                        "has no POSIX ACLs)"
                                                      : "cannot set the ACL");
                if (r == -EOPNOTSUPP)
                        slots_error_fix(e, "keep docs_root on a file system with POSIX ACLs (ext4, xfs, btrfs, tmpfs)");
                goto out;
        }
        r = undo_if_linked(t, fd, st, en, e);
        if (r == 0)
                t->stats->changed++;
        r = r < 0 ? r : 0;
out:
        slots_acl_free(&acc);
        slots_acl_free(&def);
        return r;
}

/* ---- release: to the service, group bits closed, the slot's ACL entries gone ---- */

/* What an entry becomes at release; false when it stays as it is. */
static bool release_target(const struct tree_walk *t, const struct stat *st, uid_t *nu, gid_t *ng, mode_t *nm)
{
        mode_t mode = st->st_mode & 07777;

        *nu = st->st_uid == t->slot_uid || foreign(t, st->st_uid) ? t->svc_uid : st->st_uid;
        *ng = t->mode == TREE_RELEASE_ALL || st->st_gid == t->slot_gid ? t->svc_gid : st->st_gid;
        /*
         * The user's own tree keeps nothing for any group (a run that kept the service's
         * groups finds nothing); another user's tree keeps its group bits, the ACL mask
         * of its current holder's entry.
         */
        if (t->mode == TREE_RELEASE_ALL)
                *nm = mode & 0700;
        else
                *nm = S_ISDIR(st->st_mode) ? mode & ~(mode_t) 0007 : mode & ~(SETID_BITS | S_ISVTX | 0007);
        if (t->mode == TREE_RELEASE_SLOT && !names_slot(t, st->st_uid, st->st_gid))
                return false;
        return *nu != st->st_uid || *ng != st->st_gid || *nm != mode;
}

/* Whether fd's access ACL has an entry naming the slot's uid or gid. */
static bool acl_names_slot(const struct tree_walk *t, int fd)
{
        struct slots_acl acl = { 0 };
        bool named = false;

        if (slots_acl_get(fd, SLOTS_ACL_ACCESS, &acl) <= 0)
                return false;
        for (size_t i = 0; i < acl.n; i++)
                named |= (acl.entries[i].tag == SLOTS_ACL_USER && acl.entries[i].id == t->slot_uid) ||
                         (acl.entries[i].tag == SLOTS_ACL_GROUP && acl.entries[i].id == t->slot_gid);
        slots_acl_free(&acl);
        return named;
}

/* release's rule on an open folder, file or FIFO with one link. */
static int release_fd(struct tree_walk *t, int fd, const struct stat *st, const struct slots_walk_entry *en, struct slots_error *e)
{
        bool dir = S_ISDIR(st->st_mode), changed = false, whole = t->mode == TREE_RELEASE_ALL;
        uid_t nu;
        gid_t ng;
        mode_t nm;
        int r;

        if (release_target(t, st, &nu, &ng, &nm)) {
                /*
                 * The mode narrows first: should the chown fail, the entry still names the
                 * slot, so the next release finds it again.
                 */
                if (nm != (st->st_mode & 07777) && fchmod(fd, nm) < 0)
                        return fail(e, en, -errno, "cannot change mode");
                if ((nu != st->st_uid || ng != st->st_gid) &&
                    fchown(fd, nu == st->st_uid ? (uid_t) -1 : nu, ng == st->st_gid ? (gid_t) -1 : ng) < 0)
                        return fail(e, en, -errno, "cannot change owner or group");
                changed = true;
                if ((r = undo_if_linked(t, fd, st, en, e)) != 0)
                        return r < 0 ? r : 0;
        }
        /*
         * An entry whose ACL grants the slot something is of the tree the slot was
         * given, found again by a release --slot that no longer knows its user: it is
         * given back as that user's tree is, nothing for any group.  The group bits
         * close before the ACL goes, so a release stopped in between finds it again.
         */
        if (t->mode == TREE_RELEASE_SLOT && acl_names_slot(t, fd)) {
                struct stat now;

                if (fstat(fd, &now) < 0)
                        return fail(e, en, -errno, "cannot stat");
                if ((now.st_mode & 07777) != (now.st_mode & 0700) && fchmod(fd, now.st_mode & 0700) < 0)
                        return fail(e, en, -errno, "cannot change mode");
                changed = whole = true;
        }
        /*
         * What is given back as a user's tree loses its ACLs whole, every named entry
         * with them: the slot's, and any other the slot or the service added while it
         * held the tree (assign left none).  No grant stays behind a closed mask for a
         * later chmod g+rx to bring back.  Elsewhere only the slot's entries go, and
         * an ACL left with no named entry.
         */
        if (!whole) {
                r = slots_acl_strip(fd, dir, t->slot_uid, t->slot_gid);
                if (r < 0)
                        return fail(e, en, r, "cannot remove the slot's ACL entries");
                changed |= r > 0;
        }
        r = slots_acl_remove(fd, SLOTS_ACL_ACCESS, !whole);
        if (r >= 0 && dir) {
                int rd = slots_acl_remove(fd, SLOTS_ACL_DEFAULT, !whole);

                r = rd < 0 ? rd : r | rd;
        }
        if (r < 0)
                return fail(e, en, r, "cannot remove the ACL");
        changed |= r > 0;
        if (changed)
                t->stats->changed++;
        return 0;
}

static int tree_fix_fd(struct tree_walk *t, int fd, const struct stat *st, const struct slots_walk_entry *en, struct slots_error *e)
{
        return t->mode == TREE_PREPARE ? prepare_fd(t, fd, st, en, e) : release_fd(t, fd, st, en, e);
}

/* ---- the visitor ---- */

static bool same_inode(const struct stat *st, const struct statx *sx)
{
        return st->st_ino == sx->stx_ino && (st->st_mode & S_IFMT) == (sx->stx_mode & S_IFMT) &&
               (uint32_t) major(st->st_dev) == sx->stx_dev_major && (uint32_t) minor(st->st_dev) == sx->stx_dev_minor;
}

/* Opens a file or FIFO of the walk, checked to be the entry looked at: fd, -ENOENT (gone), -EAGAIN, -errno. */
static int open_entry(const struct slots_walk_entry *en, struct stat *st, struct slots_error *e)
{
        int fd = openat(en->parent_fd, en->name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);

        if (fd < 0) {
                if (errno == ENOENT)
                        return -ENOENT;
                if (errno == ELOOP || errno == ENXIO)
                        return -EAGAIN;
                return fail(e, en, -errno, "cannot open");
        }
        if (fstat(fd, st) < 0) {
                int r = fail(e, en, -errno, "cannot stat");

                close(fd);
                return r;
        }
        if (!same_inode(st, en->sx)) {
                close(fd);
                return -EAGAIN;
        }
        return fd;
}

/*
 * A file with more than one name is never widened: its other name may be a
 * shared or private file.  What only narrows is done all the same, through
 * its fd: its set-id bits go when it names the slot, and at release the ACL
 * entries naming the slot.
 */
static int visit_linked(struct tree_walk *t, const struct slots_walk_entry *en, int fd, const struct stat *st,
                        struct slots_error *e)
{
        char why[160];
        int r;

        if (names_slot(t, st->st_uid, st->st_gid) && (st->st_mode & SETID_BITS)) {
                if (fchmod(fd, st->st_mode & 07777 & ~SETID_BITS) < 0)
                        return fail(e, en, -errno, "cannot clear the set-id bits");
                t->stats->changed++;
        }
        /*
         * The slot's own file is copied first: its old inode keeps the slot's entry, which marks
         * a second name in this tree as the slot's tree's for a release --slot that ends the job.
         */
        if (t->mode != TREE_PREPARE && st->st_uid == t->slot_uid)
                return drop_linked(t, en, fd, (unsigned long) st->st_nlink, st->st_uid, e);
        if (t->mode != TREE_PREPARE) {
                r = slots_acl_strip(fd, false, t->slot_uid, t->slot_gid);
                if (r < 0)
                        return fail(e, en, r, "cannot remove the slot's ACL entries");
        }
        if (t->mode == TREE_RELEASE_SLOT && !names_slot(t, st->st_uid, st->st_gid)) {
                t->stats->skipped++;
                return 0;
        }
        if (foreign(t, st->st_uid))
                return drop_linked(t, en, fd, (unsigned long) st->st_nlink, st->st_uid, e);
        t->stats->linked++;
        snprintf(why, sizeof(why), "has %lu hard links: left alone but for set-id bits (a walk never widens a file "
                 "that also has a name elsewhere)", (unsigned long) st->st_nlink);
        note(t, en->path, why);
        return 0;
}

/* A regular file or FIFO. */
static int visit_file(struct tree_walk *t, const struct slots_walk_entry *en, struct slots_error *e)
{
        struct stat st;
        int fd, r;

        /* A linked file with nothing to narrow is never opened at assign. */
        if (en->sx->stx_nlink > 1 && t->mode == TREE_PREPARE &&
            !((en->sx->stx_mode & SETID_BITS) && names_slot(t, en->sx->stx_uid, en->sx->stx_gid)) &&
            !foreign(t, en->sx->stx_uid)) {
                char why[128];

                t->stats->linked++;
                snprintf(why, sizeof(why), "has %lu hard links: left alone (a walk never widens a file that also "
                         "has a name elsewhere)", (unsigned long) en->sx->stx_nlink);
                note(t, en->path, why);
                return 0;
        }
        fd = open_entry(en, &st, e);
        if (fd == -ENOENT)
                return 0;
        if (fd < 0)
                return fd;
        r = st.st_nlink > 1 ? visit_linked(t, en, fd, &st, e) : tree_fix_fd(t, fd, &st, en, e);
        close(fd);
        return r;
}

/*
 * Symlinks, sockets, devices: never opened or followed; at release the slot's ones change
 * owner, and another account's (but a device node) go to the service at assign and release.
 */
static int visit_other(struct tree_walk *t, const struct slots_walk_entry *en, struct slots_error *e)
{
        uid_t nu = en->sx->stx_uid;
        gid_t ng = en->sx->stx_gid;
        bool device = S_ISCHR(en->sx->stx_mode) || S_ISBLK(en->sx->stx_mode);
        bool other = foreign(t, nu) && !device; /* a device node of another's: its new owner would reach the device */

        if (other && en->sx->stx_nlink > 1)
                return drop_linked(t, en, -1, (unsigned long) en->sx->stx_nlink, nu, e);
        if (!other && (t->mode == TREE_PREPARE || !names_slot(t, nu, ng))) {
                t->stats->skipped++;
                return 0;
        }
        if (nu == t->slot_uid || other)
                nu = t->svc_uid;
        if (ng == t->slot_gid || other)
                ng = t->svc_gid;
        if (fchownat(en->parent_fd, en->name, nu, ng, AT_SYMLINK_NOFOLLOW) < 0)
                return errno == ENOENT ? 0 : fail(e, en, -errno, "cannot change owner or group");
        t->stats->changed++;
        return 0;
}

int tree_visit(void *data, enum slots_walk_event ev, const struct slots_walk_entry *en, struct slots_error *e)
{
        struct tree_walk *t = data;
        mode_t type = en->sx->stx_mode & S_IFMT;
        int r;

        if (ev == SLOTS_WALK_LEAVE)
                return 0;
        /*
         * Every inode of the user's tree, even one left alone: no neighbour may keep it open.
         * Not a file with another name: that name is not the tree's (another account's is
         * replaced by a copy here), and whoever holds it there is no neighbour of this tree.
         */
        if (ev != SLOTS_WALK_CHANGING && t->stats->held && t->mode == TREE_RELEASE_ALL &&
            (S_ISDIR(en->sx->stx_mode) || en->sx->stx_nlink <= 1) &&
            slots_held_add(t->stats->held, makedev(en->sx->stx_dev_major, en->sx->stx_dev_minor), en->sx->stx_ino) < 0)
                return fail(e, en, -ENOMEM, "cannot keep the tree's inodes");
        if (ev == SLOTS_WALK_CHANGING) {
                if (t->mode != TREE_RELEASE_SLOT)
                        return 0;
                /* Someone who still holds a slot is busy there: never let that block this release. */
                t->stats->entries++;
                t->stats->refused++;
                note(t, en->path, "kept changing during the walk: left alone");
                return SLOTS_WALK_SKIP;
        }
        if (en->other_fs) {
                t->stats->entries++;
                t->stats->skipped++;
                return 0;
        }
        if (ev == SLOTS_WALK_ENTER) {
                struct stat st;

                r = fstat(en->fd, &st) < 0 ? fail(e, en, -errno, "cannot stat")
                                          : tree_fix_fd(t, en->fd, &st, en, e);
        } else if (type == S_IFREG || type == S_IFIFO) {
                r = visit_file(t, en, e);
        } else {
                r = visit_other(t, en, e);
        }
        if (r == -EAGAIN && en->last_try) {
                if (t->mode == TREE_RELEASE_SLOT) {
                        /* Someone who still holds a slot is busy there: never let that block this release. */
                        t->stats->refused++;
                        note(t, en->path, "kept changing during the walk: left alone");
                        r = 0;
                } else {
                        r = fail(e, en, -EAGAIN, "the entry kept changing during the walk");
                        slots_error_fix(e, "run the same command again");
                }
        }
        if (r != -EAGAIN)
                t->stats->entries++;
        return r;
}
