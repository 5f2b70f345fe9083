/* The release protocol: every step that frees a slot for its next user, in order, each safe to repeat. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <systemd/sd-bus.h>
#include <time.h>
#include <unistd.h>

#include "cleanup.h"
#include "fsutil.h"
#include "ids.h"
#include "release.h"
#include "sdmanager.h"
#include "service.h"
#include "slice.h"
#include "store.h"

/* ---- the slot's own lock ---- */

int slots_release_lock(int dirfd, const char *table_name, unsigned n, bool wait, struct slots_error *e)
{
        struct flock fl = { .l_type = F_WRLCK, .l_whence = SEEK_SET, .l_start = (off_t) n, .l_len = 1 };
        char name[512];
        struct stat st;
        int fd;

        snprintf(name, sizeof(name), "%s%s", table_name, SLOTS_LOCK_SUFFIX);
        /* Never open what is not a regular file: opening a device node can act on the device. */
        if (fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) == 0 && !S_ISREG(st.st_mode))
                return slots_error_refuse(e, -EPERM, name, "the lock file is not a regular file");
        fd = openat(dirfd, name, O_RDWR | O_CREAT | O_NOFOLLOW | O_NOCTTY | O_NONBLOCK | O_CLOEXEC, 0600);
        if (fd < 0)
                return slots_error_set(e, -errno, name, "cannot open the lock file: %s",
                                       errno == ELOOP ? "it is a symlink" : strerror(errno));
        if (fstat(fd, &st) < 0) {
                int r = -errno;

                close(fd);
                return slots_error_set(e, r, name, "cannot stat the lock file: %s", strerror(-r));
        }
        if (!S_ISREG(st.st_mode) || st.st_nlink != 1) {
                close(fd);
                return slots_error_refuse(e, -EPERM, name, "the lock file is not a plain file");
        }
        /*
         * Byte n of the table's lock file, as an open-file-description lock: independent of the
         * flock on the whole file that guards the table, and gone with the holder's death.
         */
        while (fcntl(fd, wait ? F_OFD_SETLKW : F_OFD_SETLK, &fl) < 0) {
                int r = -errno;

                if (r == -EINTR)
                        continue;
                close(fd);
                if (r == -EAGAIN || r == -EACCES)
                        return -EWOULDBLOCK;
                return slots_error_set(e, r, name, "cannot lock byte %u: %s", n, strerror(-r));
        }
        return fd;
}

/* ---- step 2: accounts, processes ---- */

int slots_release_accounts(struct slots_release_job *j, const char *slot, struct slots_error *e)
{
        struct slots_gr gr = { 0 };
        struct slots_pw svc = { 0 };
        int r;

        slots_pw_clear(&j->slot);
        r = slots_nss_user(slot, &j->slot);
        if (r == 0) {
                slots_error_set(e, -ENOENT, slot, "the slot account does not exist");
                slots_error_fix(e, "create it with slots-provision");
                return -ENOENT;
        }
        if (r < 0)
                return slots_error_set(e, r, slot, "account lookup failed: %s", strerror(-r));
        r = slots_nss_group(slot, &gr);
        if (r < 0)
                return slots_error_set(e, r, slot, "group lookup failed: %s", strerror(-r));
        j->slot_gid = r > 0 ? gr.gid : j->slot.gid;
        slots_gr_clear(&gr);
        r = slots_service_user(j->cfg, &svc, e);
        if (r < 0)
                return r;
        j->svc_uid = svc.uid;
        slots_pw_clear(&svc);
        if (j->slot.uid == 0 || j->slot_gid == 0 || j->slot.gid == 0 || j->slot.uid == j->svc_uid ||
            j->slot_gid == j->svc_gid || j->slot.gid == j->svc_gid) {
                slots_error_refuse(e, -EPERM, slot, "the slot account shares its uid or group with root or the "
                                   "service; cleaning it would hit their files and processes");
                slots_error_fix(e, "give the slot its own uid and group (slots-provision reports the conflict)");
                return -EPERM;
        }
        return 0;
}

static int step_accounts(struct slots_release_job *j, struct slots_error *e)
{
        return slots_release_accounts(j, j->name, e);
}

/* Waits until the cgroup folder holds no process; writes cgroup.kill once half the time has passed. */
static int wait_empty(const char *unit, const char *dir, int timeout_ms, struct slots_error *e)
{
        struct timespec tick = { 0, 20 * 1000 * 1000 };
        bool killed = false;

        for (int waited = 0;; waited += 20) {
                int r = slots_cgroup_populated(dir);

                if (r == 0)
                        return 0;
                if (r < 0)
                        return slots_error_set(e, r, dir, "cannot read cgroup.events: %s", strerror(-r));
                if (waited >= timeout_ms) {
                        slots_error_set(e, -EBUSY, unit, "its cgroup %s still holds processes %d ms after systemd "
                                        "stopped it", dir, timeout_ms);
                        slots_error_fix(e, "see what runs there (systemd-cgls %s) and end it", dir);
                        return -EBUSY;
                }
                /* What systemd's stop did not end (a process moved in after it) the kernel ends at once. */
                if (!killed && waited >= timeout_ms / 2) {
                        char path[4200];
                        int fd;

                        snprintf(path, sizeof(path), "%s/cgroup.kill", dir);
                        fd = open(path, O_WRONLY | O_CLOEXEC | O_NOFOLLOW);
                        if (fd >= 0) {
                                (void) !write(fd, "1", 1);
                                close(fd);
                        }
                        killed = true;
                }
                nanosleep(&tick, NULL);
        }
}

/*
 * The slot's slice (slots-<svc>-slotNN.slice), where systemd runs and the
 * config has a slice: stopped through systemd, which stops every scope in it
 * (each with SIGKILL, pam/scope.c), then its cgroup empty.  A process that left
 * the slot's uid (a user namespace) is in that cgroup still, and ends with it.
 */
int slots_release_slice(const struct slots_config *c, const char *slot, int timeout_ms, struct slots_error *e)
{
        char unit[SLOTS_UNIT_NAME_MAX], dir[4096];
        sd_bus *bus = NULL;
        int r;

        if (!c->has_slice || !slots_systemd_booted())
                return 0;
        if (slots_slice_slot_unit(c->service, slot, unit) < 0 || slots_slice_cgroup(unit, dir, sizeof(dir)) < 0)
                return slots_error_invalid(e, -ENAMETOOLONG, slot, "the slice unit's name passes 255 characters");
        r = slots_manager_connect(&bus, e);
        if (r == 0)
                r = slots_manager_stop(bus, unit, (uint64_t) timeout_ms * 1000, e);
        sd_bus_flush_close_unref(bus);
        if (r < 0) {
                slots_error_fix(e, "see why systemd cannot stop it (systemctl status %s)", unit);
                return r;
        }
        return wait_empty(unit, dir, timeout_ms, e);
}

static int step_processes(struct slots_release_job *j, struct slots_error *e)
{
        int r = slots_release_slice(j->cfg, j->name, j->kill_timeout_ms, e);

        /* the slice first: then the /proc pass, for what runs as the slot outside it */
        if (r == 0)
                r = slots_end_processes(j->slot.uid, j->slot_gid, j->kill_timeout_ms, &j->procs, e);

        /* Nothing of the holder runs any more: the cleanup needs no head start. */
        if (r == 0 && j->lower_after_processes)
                (void) setpriority(PRIO_PROCESS, 0, j->nice_before);
        if (r == -EBUSY) {
                const struct slots_proc *p = &j->procs.shown[0];

                slots_error_fix(e, "see why it cannot be ended (ps -o pid,stat,ruid,euid,suid,egid,supgid,cmd -p %d: "
                                "a process in uninterruptible sleep, or one that acts as %s or carries its group but "
                                "whose real and saved uid are another's or root's) and end it", (int) p->pid, j->name);
        }
        return r;
}

/* ---- step 3: the user's tree ---- */

/*
 * The inodes no other account may hold after the release (step_verify): each entry of
 * the user's tree as the walk gives it back, and the slot's home, state and run folders
 * and its mailbox as they are before step 4 replaces them.
 */
static int step_tree(struct slots_release_job *j, struct slots_error *e)
{
        static const char *const places[] = { "home", "state", "run", NULL };
        char path[PATH_MAX];
        struct stat st;
        int r;

        for (size_t i = 0; i < sizeof(places) / sizeof(places[0]); i++) {
                if (places[i])
                        snprintf(path, sizeof(path), "%s/%s/%s", j->cfg->slots_root, places[i], j->name);
                else
                        snprintf(path, sizeof(path), "/var/mail/%s", j->name);
                if (fstatat(j->rootfd, path, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
                    slots_held_add(&j->held, st.st_dev, st.st_ino) < 0)
                        return slots_error_set(e, -ENOMEM, path, "out of memory");
        }
        j->tree.held = j->user ? &j->held : NULL;
        r = slots_tree_release(j->rootfd, j->cfg, j->user, j->slot.uid, j->slot_gid, j->svc_uid, j->svc_gid,
                               &j->tree, e);
        j->tree.held = NULL;
        return r;
}

/* ---- step 4: everything else the account can leave ---- */

static int step_jobs(struct slots_release_job *j, struct slots_error *e)
{
        return slots_cleanup_jobs(j->rootfd, &j->slot, e);
}

static int step_mounts(struct slots_release_job *j, struct slots_error *e)
{
        return slots_cleanup_mounts(&j->slot, e);
}

static int step_folders(struct slots_release_job *j, struct slots_error *e)
{
        return slots_cleanup_folders(j->rootfd, j->cfg, &j->slot, j->slot_gid, e);
}

static int step_temp(struct slots_release_job *j, struct slots_error *e)
{
        return slots_cleanup_temp(j->rootfd, j->cfg, &j->slot, e);
}

static int step_shared(struct slots_release_job *j, struct slots_error *e)
{
        return slots_cleanup_shared(j->rootfd, j->cfg, &j->slot, j->slot_gid, j->svc_uid, j->svc_gid, e);
}

/* The set-id files the sweep names one by one; the rest are counted in one note. */
#define SETID_NAMED 10

/* A set-id file the sweep cleared: the caller's note, as the tree walk's notes. */
static void setid_note(void *data, const char *path, uid_t uid, gid_t gid, mode_t mode)
{
        const struct slots_release_job *j = data;
        char why[128];

        (void) uid;
        (void) gid;
        /* The sweep counts the file after this call: files is the number of those before it. */
        if (!j->tree.note || j->setid_cleared >= SETID_NAMED)
                return;
        snprintf(why, sizeof(why), "set-id bits cleared (mode %04o, a file of %s)", (unsigned) mode, j->name);
        j->tree.note(j->tree.note_data, path, why);
}

static void setid_seen(void *data, const char *path, uid_t uid, gid_t gid, mode_t mode)
{
        struct slots_release_job *j = data;

        setid_note(j, path, uid, gid, mode);
        j->setid_cleared++;
}

/* A mount the sweep did not enter: named in the notes, since a set-id file there stays. */
static void setid_skipped(void *data, const char *path, const char *fstype)
{
        const struct slots_release_job *j = data;
        char why[128];

        if (!j->tree.note)
                return;
        snprintf(why, sizeof(why), "a mount (%s) the set-id sweep did not enter: a set-id file of %s there stays",
                 fstype, j->name);
        j->tree.note(j->tree.note_data, path, why);
}

static int step_setid(struct slots_release_job *j, struct slots_error *e)
{
        uid_t uids[] = { j->slot.uid };
        gid_t gids[] = { j->slot_gid, j->slot.gid };
        struct slots_setid_sweep s = { .uids = uids, .n_uids = 1, .gids = gids, .n_gids = 2, .svc_uid = j->svc_uid,
                                       .svc_gid = j->svc_gid, .clear = true, .seen = setid_seen, .skipped = setid_skipped,
                                       .data = j };
        int r;

        j->setid_cleared = 0;
        r = slots_cleanup_setid(j->rootfd, j->cfg, &s, e);
        if (j->setid_cleared > SETID_NAMED && j->tree.note) {
                char why[128];

                snprintf(why, sizeof(why), "and %lu more files of %s: set-id bits cleared",
                         j->setid_cleared - SETID_NAMED, j->name);
                j->tree.note(j->tree.note_data, "set-id sweep", why);
        }
        return r;
}

static int step_ipc(struct slots_release_job *j, struct slots_error *e)
{
        return slots_cleanup_ipc(&j->slot, j->tree.note, j->tree.note_data, e);
}

static int step_records(struct slots_release_job *j, struct slots_error *e)
{
        return slots_cleanup_records(j->rootfd, &j->slot, j->tree.note, j->tree.note_data, e);
}

static int step_keys(struct slots_release_job *j, struct slots_error *e)
{
        return slots_cleanup_keys(&j->slot, e);
}

/* A neighbour that held something of the holder's, ended: the caller's note names it (pid, uid, command). */
static void neighbour_note(void *data, const struct slots_proc *p)
{
        const struct slots_release_job *j = data;
        char who[128];

        if (!j->tree.note)
                return;
        snprintf(who, sizeof(who), "process %d (uid %lu, %s)", (int) p->pid, p->uid[0], p->comm);
        j->tree.note(j->tree.note_data, who, "another account's process held a file or folder of the user's tree "
                     "or the slot's folders open: ended");
}

/*
 * Nothing came back while the rest ran (a job started by cron, a process that slipped
 * through), and no other account's process holds the user's tree or the slot's folders.
 */
static int step_verify(struct slots_release_job *j, struct slots_error *e)
{
        const struct slots_neighbours nb = { &j->held, j->svc_uid, neighbour_note, j };
        struct slots_procs_report again;
        int r = slots_end_processes_held(j->slot.uid, j->slot_gid, &nb, j->kill_timeout_ms, &again, e);

        if (r < 0)
                return r;
        return slots_check_folders(j->rootfd, j->cfg, j->name, j->slot.uid, j->slot_gid, false, e);
}

const struct slots_release_step slots_release_steps[] = {
        { "step 2 of 5, looking up the accounts", true, step_accounts },
        { "step 2 of 5, ending the slot's processes", true, step_processes },
        { "step 3 of 5, giving the user's tree back to the service", false, step_tree },
        { "step 4 of 5, removing the slot's crontab, at jobs and lingering", false, step_jobs },
        { "step 4 of 5, unmounting the slot's FUSE mounts", false, step_mounts },
        { "step 4 of 5, replacing home, state and run with fresh folders", false, step_folders },
        { "step 4 of 5, removing the slot's files below /tmp, /var/tmp, /dev/shm, /run/lock, /run/user", false,
          step_temp },
        { "step 4 of 5, handing the slot's files in the shared folders to the service", false, step_shared },
        { "step 4 of 5, clearing the slot's set-id files in the folders slots write", false, step_setid },
        { "step 4 of 5, removing the slot's IPC objects", false, step_ipc },
        { "step 4 of 5, clearing the slot's kernel keyrings", false, step_keys },
        { "step 4 of 5, removing the slot's journal files and coredumps", false, step_records },
        { "step 4 of 5, checking that nothing of the slot runs and its folders are exact", false, step_verify },
        { NULL, false, NULL },
};

/* Steps 2 to 4; 0 or the first failure, with its step in *failed. */
static int run_steps(struct slots_release_job *j, const char **failed, struct slots_error *e)
{
        struct slots_first first = { 0, e };
        struct slots_error sub;

        for (const struct slots_release_step *s = slots_release_steps; s->name; s++) {
                int r;

                slots_error_clear(&sub);
                r = s->run(j, &sub);
                if (r >= 0)
                        continue;
                if (first.r == 0)
                        *failed = s->name;
                slots_first_keep(&first, r, &sub);
                if (s->stops)
                        break;
        }
        return first.r;
}

/* ---- steps 1 and 5: the table, locked only while it changes ---- */

static int kill_timeout(void)
{
        const char *v = secure_getenv("SLOTS_KILL_TIMEOUT_MS");
        long ms = v ? strtol(v, NULL, 10) : 0;

        return ms > 0 && ms <= 600000 ? (int) ms : SLOTS_RELEASE_KILL_MS;
}

/* The slot to release: user's (0 when none) or n checked against the pool (-EPERM outside it). */
static int resolve(const struct slots_store *s, const char *user, unsigned n, unsigned *out, struct slots_error *e)
{
        if (user) {
                *out = slots_table_find_user(s->table, user);
                return 0;
        }
        if (n == 0 || n > s->pool) {
                slots_error_refuse(e, -EPERM, s->path, "the slot is outside the pool of %u slots", s->pool);
                return -EPERM;
        }
        *out = n;
        return 0;
}

/*
 * Waits for the release of slot found that holds its lock, without holding the
 * table s (that release needs the table lock to finish; s is closed and *open
 * cleared).  The slot's lock fd, or -errno with e set.
 */
static int wait_other_release(struct slots_store *s, bool *open, const char *table, unsigned found,
                              struct slots_error *e)
{
        char table_name[256];
        int dfd = dup(s->dirfd), err = errno, lockfd;

        snprintf(table_name, sizeof(table_name), "%s", s->name);
        slots_store_close(s);
        *open = false;
        if (dfd < 0)
                return slots_error_set(e, -err, table, "cannot open its folder: %s", strerror(err));
        lockfd = slots_release_lock(dfd, table_name, found, true, e);
        close(dfd);
        return lockfd;
}

/* Step 1's change: the assigned slot rep->slot marked pending and saved; *tree_user the user it held. */
static int mark_pending(struct slots_store *s, const char *table, const char *holder, char **tree_user,
                        struct slots_release_report *rep, struct slots_error *e)
{
        char released[32];
        int r;

        *tree_user = strdup(holder);
        if (!*tree_user || slots_table_mark_pending(s->table, rep->slot, slots_now_rfc3339(released)) < 0)
                return slots_error_set(e, -ENOMEM, table, "out of memory");
        r = slots_store_save(s, e);
        if (r < 0)
                return r;
        rep->marked = true;
        snprintf(rep->user, sizeof(rep->user), "%s", *tree_user);
        return 0;
}

/* Steps 1 and 5's hold on the table: the store (to be closed while open is set) and the slot's lock. */
struct hold {
        struct slots_store s;
        bool open;
        int lockfd;
};

/* Step 1's look: the slot found (rep->slot, 0 when the user holds none), its lock in h, its state. */
static int find_and_lock(struct hold *h, const struct slots_config *c, gid_t service_gid, const char *user,
                         unsigned n, enum slots_slot_state *state, const char **holder,
                         struct slots_release_report *rep, struct slots_error *e)
{
        for (int attempt = 0;; attempt++) {
                unsigned found;
                int r = slots_store_open(&h->s, AT_FDCWD, c->table, c->slots, service_gid, SLOTS_STORE_WRITE, e);

                if (r < 0)
                        return r;
                h->open = true;
                r = resolve(&h->s, user, n, &found, e);
                if (r < 0)
                        return r;
                if (h->lockfd >= 0 && found != rep->slot) {
                        /* The table changed while we waited for the slot's lock: look again. */
                        slots_close(h->lockfd);
                        h->lockfd = -1;
                }
                rep->slot = found;
                if (found == 0)
                        return 0;       /* the user holds no slot */
                *state = slots_table_get(h->s.table, found, holder, NULL, NULL);
                if (*state == SLOTS_SLOT_FREE || h->lockfd >= 0)
                        return 0;
                r = slots_release_lock(h->s.dirfd, h->s.name, found, false, e);
                if (r != -EWOULDBLOCK) {
                        h->lockfd = r;
                        return r < 0 ? r : 0;
                }
                /* Another release of this slot runs: wait for it, then look again. */
                r = wait_other_release(&h->s, &h->open, c->table, found, e);
                if (r < 0)
                        return r;
                h->lockfd = r;
                if (attempt > 100)
                        return slots_error_set(e, -EAGAIN, c->table, "the table keeps changing under the release");
        }
}

/*
 * Step 1: the slot found and locked, then the user leaves the table, which is
 * closed at the end (step 5 reads it again).  1 when there is nothing
 * to release (the user holds no slot, the slot is free), 0, or -errno.
 */
static int step_mark(struct hold *h, const struct slots_config *c, gid_t service_gid, const char *user,
                     unsigned n, char **tree_user, struct slots_release_report *rep, struct slots_error *e)
{
        enum slots_slot_state state = SLOTS_SLOT_FREE;
        const char *holder = NULL;
        int r = find_and_lock(h, c, service_gid, user, n, &state, &holder, rep, e);

        if (r < 0)
                return r;
        if (rep->slot == 0)
                return 1;
        if (state == SLOTS_SLOT_FREE) {
                rep->was_free = true;
                return 1;
        }
        if (state == SLOTS_SLOT_ASSIGNED) {
                r = mark_pending(&h->s, c->table, holder, tree_user, rep, e);
                if (r < 0)
                        return r;
        }
        slots_store_close(&h->s);
        h->open = false;
        return 0;
}

/*
 * Step 5: the pending slot rep->slot leaves the table, locked and read again
 * (whatever anyone wrote since step 1 stays), in the store's one save.
 */
static int free_slot(struct hold *h, const struct slots_config *c, gid_t service_gid,
                     struct slots_release_report *rep, struct slots_error *e)
{
        int r = slots_store_open(&h->s, AT_FDCWD, c->table, c->slots, service_gid, SLOTS_STORE_WRITE, e);

        h->open = r == 0;
        if (r == 0 && slots_table_get(h->s.table, rep->slot, NULL, NULL, NULL) == SLOTS_SLOT_PENDING) {
                slots_table_remove(h->s.table, rep->slot);
                r = slots_store_save(&h->s, e);
        }
        if (r < 0)
                rep->step = "step 5 of 5, freeing the slot in the table";
        return r;
}

static int release(const struct slots_config *c, gid_t service_gid, const char *user, unsigned n,
                   const int *nice_before, struct slots_release_report *rep, struct slots_error *e)
{
        struct slots_release_job j = { .rootfd = AT_FDCWD, .cfg = c, .svc_gid = service_gid,
                                       .lower_after_processes = nice_before != NULL,
                                       .nice_before = nice_before ? *nice_before : 0 };
        struct hold h = { .lockfd = -1 };
        char name[SLOTS_NAME_MAX], *tree_user = NULL;
        int r;

        /* The caller's note callback (hard links the tree walk leaves alone) survives the reset. */
        j.tree.note = rep->tree.note;
        j.tree.note_data = rep->tree.note_data;
        memset(rep, 0, sizeof(*rep));
        j.kill_timeout_ms = kill_timeout();

        /* Step 1: find the slot, take its own lock, then the user leaves the table. */
        r = step_mark(&h, c, service_gid, user, n, &tree_user, rep, e);
        if (r != 0) {
                r = r > 0 ? 0 : r;
                goto out;
        }

        /* Steps 2 to 4, under the slot's lock only. */
        slots_slot_name(rep->slot, name);
        j.name = name;
        j.user = tree_user;
        r = run_steps(&j, &rep->step, e);
        rep->tree = j.tree;
        rep->procs = j.procs;
        rep->setid_cleared = j.setid_cleared;

        /* Step 5: the slot returns to the pool. */
        if (r == 0)
                r = free_slot(&h, c, service_gid, rep, e);
out:
        if (h.open)
                slots_store_close(&h.s);
        slots_close(h.lockfd);
        slots_held_free(&j.held);
        slots_pw_clear(&j.slot);
        free(tree_user);
        return r;
}

int slots_release(const struct slots_config *c, gid_t service_gid, const char *user, unsigned n,
                  struct slots_release_report *rep, struct slots_error *e)
{
        bool raised;
        int before, r;

        /*
         * The holder's code may keep every CPU busy (a fork bomb within its limits); at the
         * default priority each step of the release would crawl until step 2 ends it.  After
         * step 2 the priority goes back (step_processes): nothing of the holder is left.
         */
        raised = slots_nice_raise(&before);
        r = release(c, service_gid, user, n, raised ? &before : NULL, rep, e);
        if (raised)
                (void) setpriority(PRIO_PROCESS, 0, before);
        return r;
}
