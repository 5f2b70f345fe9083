/* The run of slots-provision: one config check, then the two passes over its steps. */
/*
 * A run is two passes over the same steps; the account files are locked from
 * their first read until the planned ones are written:
 *
 *   1. the check (x->quiet): the accounts are planned in memory (the files are
 *      parsed once, additions go into that copy) and the slot folders, table,
 *      drop-in and slotctl config are looked at.  It changes nothing and reports
 *      only PROBLEMs: a conflict a careful admin must settle (a uid taken, a
 *      symlink where a folder belongs).  Any PROBLEM ends the run here, before
 *      the first change (a refusal naming their count), with every conflict named.
 *   2. the change (x->quiet false): the planned account files are written as one
 *      transaction, then each step makes or repairs its objects, reporting one
 *      CHANGE per object.  With --dry-run (x->dry) the same pass runs, writes
 *      nothing and reports what it would do.  A system call that fails here is a
 *      WARNING and the run goes on to the end, then fails naming the first.
 *
 * The steps live by concern in provision-accounts.c, provision-folders.c,
 * provision-shared.c and provision-files.c; every message goes through
 * provision-report.c and reaches the command through opts->report.  None prints.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "accounts.h"
#include "fsutil.h"
#include "logindefs.h"
#include "nss.h"
#include "path.h"
#include "identity-look.h"
#include "provision-int.h"
#include "provision-slice.h"

/* A file this run replaces must be a regular file or missing: anything else is found before any change. */
static int file_check(struct prov_run *x, const char *path)
{
        const char *base;
        struct stat st;
        int dfd = slots_open_parent_in(x->rootfd, path, &base);

        if (dfd < 0)
                return 0;       /* a folder still to be made, or reported by open_dirs later */
        if (fstatat(dfd, base, &st, AT_SYMLINK_NOFOLLOW) == 0 && !S_ISREG(st.st_mode))
                PROBLEM(x, path, prov_fmt_fix(x, "move it away; slots-provision then writes the file"),
                        "is %s, not a regular file; not replacing it",
                        S_ISLNK(st.st_mode) ? "a symlink" : S_ISDIR(st.st_mode) ? "a folder" : "a special file");
        slots_close(dfd);
        return 0;
}

/* Config rules that only matter here: paths the provisioning writes must be neither private nor odd. */
static int prov_config_rules(const struct slots_config *c, struct slots_error *e)
{
        const char *const written[] = { c->slots_root, c->table, c->slotctl_config, SUDOERS_DIR };
        const char *const keys[] = { "slots_root", "table", "slotctl_config", "sudoers drop-in" };

        for (size_t i = 0; i < sizeof(written) / sizeof(written[0]); i++)
                if (slots_config_is_private(c, written[i])) {
                        slots_error_invalid(e, -EBADMSG, c->path, "%s %s is a private path (or lies below one)",
                                        keys[i], written[i]);
                        slots_error_fix(e, "move it out of private_paths, or fix \"%s\"", keys[i]);
                        return -EBADMSG;
                }
        if (strpbrk(c->slots_root, ":,\n") || strpbrk(c->shell, ":,\n"))
                return slots_error_invalid(e, -EBADMSG, c->path,
                                       "slots_root and shell must not hold ':', ',' or a newline (account files "
                                       "cannot hold them)");
        if (strcmp(c->table, "/") == 0 || strcmp(c->slotctl_config, "/") == 0)
                return slots_error_invalid(e, -EBADMSG, c->path, "table and slotctl_config must name files");
        return 0;
}

static void ctx_free(struct prov_run *x)
{
        for (size_t i = 0; i < x->n_dry_made; i++)
                free(x->dry_made[i]);
        free(x->dry_made);
        for (size_t i = 0; i < x->n_acct_lines; i++)
                free(x->acct_lines[i].text);
        free(x->acct_lines);
        free(x->by_uid);
        free(x->slots);
        free(x->table_group);
        free(x->range);
        free(x->subuid);
        free(x->subgid);
        for (int i = 0; x->idfiles && i < 3; i++)
                slots_idfile_free(&x->idfiles[i]);
        free(x->idfiles);
        free(x->nsswitch);
        free(x->failed_obj);
        free(x->failed_text);
        strbuf_free(&x->text);
        strbuf_free(&x->fix);
        slots_accounts_free(x->db);
        slots_close(x->etcfd);
}

/* A message that could not be formatted ends the run: no line is reported cut short. */
static int oom_check(struct prov_run *x)
{
        if (!x->oom)
                return 0;
        return slots_error_set(x->e, -ENOMEM, x->c->path, "out of memory while reporting; run slots-provision "
                                                          "again");
}

/*
 * uid_base's ids (slotshared at uid_base, slotNN at uid_base + NN) outside every subordinate
 * range useradd may hand out (login.defs): else the next useradd gives another account a range
 * holding them, and through newuidmap it runs as the slots.
 */
static int uid_base_safe(struct prov_run *x)
{
        const struct slots_config *c = x->c;
        unsigned long lo, end, first = c->uid_base, last = (unsigned long) c->uid_base + c->slots;
        int r = slots_logindefs_subids(x->rootfd, &lo, &end, x->e);

        if (r < 0 || last < lo || first >= end)
                return r;
        slots_error_invalid(x->e, -EBADMSG, c->path,
                            "\"uid_base\" %lu puts the pool's ids %lu-%lu inside the subordinate ids useradd hands "
                            "out (%lu-%lu by /etc/login.defs: SUB_UID_MIN .. SUB_UID_MAX + SUB_UID_COUNT - 1): the "
                            "next useradd gives another account a range holding the slots' uids", first, first, last,
                            lo, end - 1);
        if (lo > c->slots + 1UL)
                slots_error_fix(x->e, "set \"uid_base\" to at most %lu (above UID_MAX, below SUB_UID_MIN: 60000, "
                                "say) or at least %lu in %s", lo - c->slots - 1, end, c->path);
        else
                slots_error_fix(x->e, "set \"uid_base\" to at least %lu in %s", end, c->path);
        return -EBADMSG;
}

/*
 * The range ids are handed out from: uid_min-uid_max, else login.defs' system range.  With
 * uid_base every id of the pool is fixed, and only run_as_group takes one from the system
 * range, as groupadd --system would.
 */
static int id_range(struct prov_run *x)
{
        const struct slots_config *c = x->c;
        int r;

        if (c->uid_range_set) {
                x->id_min = c->uid_min;
                x->id_max = c->uid_max;
        } else {
                r = c->uid_base ? uid_base_safe(x) : 0;
                if (r == 0)
                        r = slots_logindefs_uid_range(x->rootfd, &x->id_min, &x->id_max, x->e);
                if (r < 0)
                        return r;
                if (!c->uid_base && x->id_max - x->id_min + 1 < c->slots + 1) {
                        slots_error_invalid(x->e, -EBADMSG, "/etc/login.defs",
                                            "SYS_UID_MIN %u..SYS_UID_MAX %u holds %u ids; the pool needs %u (slots "
                                            "and the shared group)", (unsigned) x->id_min, (unsigned) x->id_max,
                                            (unsigned) (x->id_max - x->id_min + 1), c->slots + 1);
                        slots_error_fix(x->e, "set uid_min and uid_max in %s", c->path);
                        return -EBADMSG;
                }
        }
        if (asprintf(&x->range, "%u-%u%s", (unsigned) x->id_min, (unsigned) x->id_max,
                     c->uid_range_set ? " (uid_min-uid_max)" : " (SYS_UID_MIN-SYS_UID_MAX of login.defs)") < 0) {
                x->range = NULL;
                return slots_error_set(x->e, -ENOMEM, c->path, "out of memory");
        }
        return 0;
}

/* The first pass: the accounts planned in memory, then the objects each later step writes, looked at. */
static int check_pass(struct prov_run *x)
{
        const struct slots_config *c = x->c;
        int r;

        x->quiet = true;
        r = prov_plan_accounts(x);
        if (r < 0 || x->problems)
                return r;
        r = prov_slot_folders(x);
        if (r == 0)
                r = prov_table_check(x);
        if (r == 0)
                r = prov_sudoers_check(x);
        if (r == 0)
                r = file_check(x, c->slotctl_config);
        if (r == 0)
                r = prov_slice_check(x);
        if (r == 0 && prov_sudo_installed(x)) {
                char name[128],
                        *path = slots_path_join(SUDOERS_DIR, slots_dropin_sudoers_name(c, name, sizeof(name)));

                r = path ? file_check(x, path) : slots_error_set(x->e, -ENOMEM, SUDOERS_DIR, "out of memory");
                free(path);
        }
        return r;
}

/* The second pass after the account files are written: each step in order, every change reported. */
static int change_pass(struct prov_run *x)
{
        int r;

        prov_report_accounts(x);
        r = prov_slot_folders(x);
        if (r == 0 && x->problems)
                r = slots_error_set(x->e, -EIO, x->c->slots_root, "the slot folders could not all be made");
        if (r == 0)
                r = prov_releases(x);
        if (r == 0)
                r = prov_shared_dirs(x);
        if (r == 0)
                r = prov_table_step(x);
        if (r == 0)
                r = prov_files_step(x);
        if (r == 0)
                r = prov_slice_step(x);
        if (r == 0)
                r = oom_check(x);
        /* An I/O error on the way is a failed run, not a warning: exit 1, naming the first one. */
        if (r == 0 && x->failures)
                r = slots_error_set(x->e, -EIO, x->failed_obj, "%s (%u step%s failed; run slots-provision again once "
                                    "fixed)", x->failed_text, x->failures, x->failures == 1 ? "" : "s");
        return r;
}

/*
 * A fleet host fails closed: with "accounts" unset, a tree whose nsswitch.conf serves passwd or
 * group from a directory (sss, ldap, ...) gets no local slot accounts, which would split the
 * fleet's ids whenever the directory is down and its cache empty.
 */
static int accounts_said(int rootfd, const struct slots_config *c, struct slots_error *e)
{
        char *text = NULL;
        bool dir;
        int r;

        if (c->accounts_set)
                return 0;
        r = slots_account_text(rootfd, "/etc/nsswitch.conf", &text);
        if (r == -ENOMEM)
                return slots_error_set(e, r, c->path, "out of memory");
        dir = r == 0 && (slots_nss_network(text, "passwd") || slots_nss_network(text, "group"));
        free(text);
        if (!dir)
                return 0;
        slots_error_invalid(e, -EBADMSG, c->path,
                            "\"accounts\" is not set, and /etc/nsswitch.conf serves passwd or group from a directory "
                            "(sss, ldap, nis, winbind): slots-provision writes no local slot accounts on a fleet "
                            "host unless told to");
        slots_error_fix(e, "set \"accounts\": \"directory\" in %s (the slots come from the directory: "
                        "slots-provision --ldif), or \"accounts\": \"local\" to write them into this host's "
                        "/etc/passwd", c->path);
        return -EBADMSG;
}

/* The config's rules only provision needs, and where the slot accounts are kept said for this host or tree. */
static int config_said(int rootfd, const struct slots_config *c, const struct slots_prov_opts *o,
                       struct slots_error *e)
{
        int r = prov_config_rules(c, e);

        if (r == 0)
                r = accounts_said(rootfd, c, e);
        if (r == 0 && c->accounts_in_directory && !o->host) {
                r = slots_error_invalid(e, -EBADMSG, c->path,
                                        "\"accounts\" is \"directory\", but a tree (--root) has no directory "
                                        "to ask for the slots' ids");
                slots_error_fix(e, "provision the host itself once it reaches the directory, or set \"accounts\": "
                                   "\"local\" for an image whose slots are local");
        }
        return r;
}

int slots_provision(int rootfd, const struct slots_config *c, const struct slots_prov_opts *o,
                    unsigned *changes, struct slots_error *e)
{
        struct prov_run x = { .rootfd = rootfd, .etcfd = -1, .c = c, .o = o, .e = e, .dry = true };
        bool locked = false, wrote = false;
        int lockfd = -1, r;

        *changes = 0;
        slots_error_clear(e);
        r = config_said(rootfd, c, o, e);
        if (r == 0)
                r = id_range(&x);
        if (r < 0)
                goto out;
        x.etcfd = slots_open_in(rootfd, "/etc", O_RDONLY | O_DIRECTORY);
        if (x.etcfd < 0) {
                r = slots_error_set(e, x.etcfd, "/etc", "cannot open: %s", strerror(-x.etcfd));
                goto out;
        }
        /* The lock covers read, plan and write, so no other tool's change is lost in between. */
        if (!o->dry_run) {
                r = slots_accounts_lock(x.etcfd, o->host, &lockfd, e);
                if (r < 0)
                        goto out;
                locked = true;
                slots_accounts_clean_stale(x.etcfd);
        }
        r = slots_accounts_load(x.etcfd, "/etc", &x.db, e);
        if (r < 0)
                goto out;
        if (o->host)
                prov_nsswitch_warn(&x);

        /* Everything is checked before anything changes. */
        r = check_pass(&x);
        if (r == 0)
                r = oom_check(&x);
        if (r < 0)
                goto out;
        if (x.problems) {
                r = slots_error_refuse(e, -EEXIST, "", "%u conflict%s found; nothing was changed", x.problems,
                                       x.problems == 1 ? "" : "s");
                goto out;
        }

        x.quiet = false;
        x.dry = o->dry_run;
        for (int f = 0; f < SLOTS_ACCT_NFILES; f++)
                wrote |= slots_accounts_changed(x.db, (enum slots_acct_file) f);
        /* The plan adds accounts for slots only: with a directory keeping them, none may be written. */
        if (c->accounts_in_directory && (slots_accounts_changed(x.db, SLOTS_ACCT_PASSWD) ||
                                         slots_accounts_changed(x.db, SLOTS_ACCT_SHADOW))) {
                r = slots_error_set(e, -EPERM, "/etc/passwd", "a local slot account was planned although "
                                    "\"accounts\" is \"directory\"; nothing was changed");
                goto out;
        }
        if (wrote && !o->dry_run) {
                r = slots_accounts_write(x.db, x.etcfd, "/etc", e);
                if (r < 0)
                        goto out;
        }
        if (locked) {
                slots_accounts_unlock(o->host, lockfd);
                locked = false;
        }
        if (wrote && !o->dry_run && o->host)
                slots_accounts_flush_caches();
        r = change_pass(&x);
out:
        if (locked)
                slots_accounts_unlock(o->host, lockfd);
        *changes = x.changes;
        ctx_free(&x);
        return r;
}
