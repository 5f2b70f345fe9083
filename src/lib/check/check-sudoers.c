/*
 * check's host-wide rows about the sudoers drop-in: the file on the host against its rendering,
 * byte for byte (sudoers-dropin), and what sudo's own listing grants each slot of the pool
 * (sudo-grants).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check-int.h"
#include "child.h"
#include "dropin.h"
#include "error.h"
#include "fsutil.h"

#define LIST_TIMEOUT_MS 20000

/* ---- sudoers-dropin: the drop-in on the host is, byte for byte, what slots-provision writes ---- */

#define DROPIN_MAX ((size_t) 16 << 20)
#define DIFF_SHOWN 100          /* bytes of a differing line shown, around where it differs */

bool check_text_first_diff(const char *a, size_t alen, const char *b, size_t blen, struct text_diff *d)
{
        size_t i = 0, start = 0;

        memset(d, 0, sizeof(*d));
        d->line = 1;
        while (i < alen && i < blen && a[i] == b[i]) {
                if (a[i] == '\n') {
                        d->line++;
                        start = i + 1;
                }
                i++;
        }
        if (i == alen && i == blen)
                return false;
        d->column = i - start + 1;
        if (start < alen) {
                const char *nl = memchr(a + start, '\n', alen - start);
                d->a = a + start;
                d->alen = nl ? (size_t) (nl - d->a) : alen - start;
                d->a_newline = nl != NULL;
        }
        if (start < blen) {
                const char *nl = memchr(b + start, '\n', blen - start);
                d->b = b + start;
                d->blen = nl ? (size_t) (nl - d->b) : blen - start;
                d->b_newline = nl != NULL;
        }
        return true;
}

/* A line quoted in a detail: whole up to DIFF_SHOWN bytes, else that much around column col, "..." where cut. */
static void quote_line(struct strbuf *b, const char *line, size_t len, size_t col)
{
        size_t from = len > DIFF_SHOWN && col > DIFF_SHOWN / 2 ? col - DIFF_SHOWN / 2 : 0;
        size_t n = len > from ? len - from : 0;

        strbuf_addf(b, "\"%s%.*s%s\"", from ? "..." : "", (int) (n > DIFF_SHOWN ? DIFF_SHOWN : n), line + from,
                    n > DIFF_SHOWN ? "..." : "");
}

/* What the first difference is, in words: found is the host's drop-in, want the rendering. */
static void describe_diff(struct strbuf *b, const struct text_diff *d, const char *path)
{
        if (!d->a) {
                strbuf_addf(b, "%s ends after line %zu, where slots-provision writes line %zu as ", path, d->line - 1,
                            d->line);
                quote_line(b, d->b, d->blen, 0);
        } else if (!d->b) {
                strbuf_addf(b, "%s has more lines than slots-provision writes, from line %zu: ", path, d->line);
                quote_line(b, d->a, d->alen, 0);
        } else if (d->alen == d->blen && memcmp(d->a, d->b, d->alen) == 0) {
                strbuf_addf(b, "%s: line %zu %s a newline at its end, unlike what slots-provision writes", path,
                            d->line, d->a_newline ? "has" : "lacks");
        } else {
                strbuf_addf(b, "%s differs from what slots-provision writes at line %zu, column %zu: it is ", path,
                            d->line, d->column);
                quote_line(b, d->a, d->alen, d->column - 1);
                strbuf_addf(b, " where slots-provision writes ");
                quote_line(b, d->b, d->blen, d->column - 1);
        }
}

/* The row for a drop-in the resolver would not open (fd: its -errno, e: its words). */
static void dropin_unopened(struct check_run *k, const char *path, int fd, const struct slots_error *e)
{
        struct strbuf d = { 0 }, f = { 0 };

        if (fd == -ENOENT)
                strbuf_addf(&d, "%s does not exist", path);
        else if (fd == -ELOOP)
                strbuf_addf(&d, "%s is a symbolic link; the drop-in is never read through one", path);
        else if (fd == -EINVAL)
                strbuf_addf(&d, "%s is not a regular file", path);
        else
                strbuf_addf(&d, "%s: %s", e->object[0] ? e->object : path, e->reason[0] ? e->reason : strerror(-fd));
        /* A folder on the way is fixed as the resolver says; the file itself is written anew. */
        if (fd == -EPERM && e->fix[0] && strcmp(e->object, path) != 0)
                strbuf_addf(&f, "%s, then slots-provision", e->fix);
        else
                strbuf_addf(&f, "%s%s%sslots-provision (it writes the drop-in root:root 0440 from %s), then "
                            "visudo -c", fd == -ENOENT ? "" : "rm ", fd == -ENOENT ? "" : path,
                            fd == -ENOENT ? "" : " && ", k->cfg->path);
        check_add_row(k, SLOTS_CHECK_FAIL, "sudoers-dropin", NULL, &d, &f);
        strbuf_free(&d);
        strbuf_free(&f);
}

/* What is wrong with the drop-in read (st, text) against the rendering want, into d and f. */
static void dropin_judge(const struct stat *st, const char *text, size_t len, const char *want, size_t wlen,
                         const char *path, const char *config, struct strbuf *d, struct strbuf *f)
{
        struct text_diff diff;

        if (st->st_nlink > 1) {
                strbuf_addf(d, "%s has %ju hard links: another name of it may be in a folder someone else can "
                            "change", path, (uintmax_t) st->st_nlink);
                strbuf_addf(f, "find the other names (find / -xdev -samefile %s) and remove them, or rm %s && "
                            "slots-provision", path, path);
        }
        if (st->st_uid != 0 || st->st_gid != 0 || (st->st_mode & 07777) != 0440) {
                strbuf_sep(d, "; ");
                strbuf_addf(d, "%s is %04o, uid %u, gid %u, not root:root 0440", path, st->st_mode & 07777,
                            (unsigned) st->st_uid, (unsigned) st->st_gid);
                strbuf_sep(f, " && ");
                strbuf_addf(f, "chown root:root %s && chmod 0440 %s", path, path);
        }
        if (check_text_first_diff(text, len, want, wlen, &diff)) {
                strbuf_sep(d, "; ");
                describe_diff(d, &diff, path);
                strbuf_sep(f, " && ");
                strbuf_addf(f, "slots-provision (it rewrites %s from %s; keep local rules in a file of their own), "
                            "then visudo -c", path, config);
        }
}

/*
 * The drop-in is opened through the resolver from /: no symlink anywhere, /etc and
 * /etc/sudoers.d and the file owned by root and writable by nobody else, a regular
 * file (a FIFO is refused before it is opened); then one link only, root:root 0440,
 * and its bytes equal to slots_dropin_sudoers() of the config.  So every slot of
 * the pool is named in every rule exactly as slots-provision writes it.
 */
void check_sudoers_dropin(struct check_run *k)
{
        const struct slots_config *c = k->cfg;
        const struct slots_chase how = {
                .flags = SLOTS_CHASE_NO_SYMLINKS | SLOTS_CHASE_MUST_REG | SLOTS_CHASE_TRUSTED,
                .trusted_uid = (uid_t) -1,
                .trusted_gid = (gid_t) -1,
                .open_flags = O_RDONLY | O_NOCTTY,
        };
        struct strbuf d = { 0 }, f = { 0 };
        char name[128], path[sizeof(SLOTS_SUDOERS_DIR) + 128], first[SLOTS_NAME_MAX], last[SLOTS_NAME_MAX];
        char *want = NULL, *text = NULL;
        struct slots_error e;
        struct stat st;
        size_t wlen = 0, len = 0;
        int fd = -1, r;

        if (check_sudo_missing(k, "sudoers-dropin", NULL, ": slots-provision writes no drop-in"))
                return;
        slots_dropin_sudoers_name(c, name, sizeof(name));
        snprintf(path, sizeof(path), "%s/%s", SLOTS_SUDOERS_DIR, name);
        slots_error_clear(&e);
        want = slots_dropin_sudoers(c, &wlen, &e);
        if (!want) {
                if (e.kind == SLOTS_ERR_INVALID)
                        check_add_rowf(k, SLOTS_CHECK_FAIL, "sudoers-dropin", NULL,
                                       "fix the config (slots-provision refuses it too)", "%s: %s", e.object, e.reason);
                else
                        k->err = -ENOMEM;
                return;
        }
        slots_error_clear(&e);
        fd = slots_chase(AT_FDCWD, path, &how, NULL, &e);
        if (fd == -EACCES && geteuid() != 0) {
                check_add_rowf(
                        k, SLOTS_CHECK_SKIP, "sudoers-dropin", NULL, NULL,
                        "needs root: %s is root:root 0440 (check runs as %s; sudo-grants shows what sudo makes of it)",
                        path, c->service);
                goto out;
        }
        if (fd < 0) {
                dropin_unopened(k, path, fd, &e);
                goto out;
        }
        r = fstat(fd, &st) < 0 ? -errno : slots_read_all(fd, DROPIN_MAX, &text, &len);
        if (r < 0) {
                check_add_rowf(k, SLOTS_CHECK_FAIL, "sudoers-dropin", NULL, "run the check again", "cannot read %s: %s",
                               path, strerror(-r));
                goto out;
        }
        dropin_judge(&st, text, len, want, wlen, path, c->path, &d, &f);
        if (d.len) {
                check_add_row(k, SLOTS_CHECK_FAIL, "sudoers-dropin", NULL, &d, &f);
                goto out;
        }
        check_add_rowf(
                k, SLOTS_CHECK_PASS, "sudoers-dropin", NULL, NULL,
                "%s: root:root 0440, one link, byte for byte what slots-provision writes from %s (every rule names "
                "%s to %s)",
                path, c->path, slots_slot_name(1, first), slots_slot_name(c->slots, last));
out:
        slots_close(fd);
        free(want);
        free(text);
        strbuf_free(&d);
        strbuf_free(&f);
}

/* ---- sudo-grants: what sudo itself makes of the service's rules, for every slot at once ---- */

/* The next line of text (without its newline) into *line / *len; false at the end. */
static bool next_line(const char **p, const char **line, size_t *len)
{
        const char *nl;

        if (!**p)
                return false;
        nl = strchr(*p, '\n');
        *line = *p;
        *len = nl ? (size_t) (nl - *p) : strlen(*p);
        *p = nl ? nl + 1 : *p + *len;
        return true;
}

/* True when s[i] starts an item of the command list: right after ") ", ": " (the tags) or ", ". */
static bool item_start(const char *s, size_t i)
{
        return i >= 1 && s[i - 1] == ' ' && (i == 1 || s[i - 2] == ':' || s[i - 2] == ',');
}

/*
 * The sign of the last command in s[0, n) (what follows a privilege's Runas list) that
 * is cmd or ALL: 1 granted, -1 "!cmd" or "!ALL", 0 neither named.
 */
static int command_sign(const char *s, size_t n, const char *cmd)
{
        const char *const names[] = { cmd, "ALL" };
        int sign = 0;

        for (size_t i = 0; i < n; i++)
                for (size_t w = 0; w < 2; w++) {
                        size_t len = strlen(names[w]);
                        char after = i + len < n ? s[i + len] : '\0';

                        if (i + len > n || memcmp(s + i, names[w], len) != 0 ||
                            (after != ' ' && after != ',' && after != '\0'))
                                continue;
                        if (item_start(s, i))
                                sign = 1;
                        else if (i >= 1 && s[i - 1] == '!' && item_start(s, i - 1))
                                sign = -1;
                }
        return sign;
}

size_t check_sudo_list_grants(const char *text, const char *cmd, unsigned pool, signed char *state)
{
        const char *p = text, *line;
        size_t len, lines = 0;

        while (next_line(&p, &line, &len)) {
                const char *end = line + len, *close, *users_end, *u;
                bool all = false;
                int sign;

                while (line < end && (*line == ' ' || *line == '\t'))
                        line++;
                /* A privilege: "(RUNAS_USERS[ : RUNAS_GROUPS]) TAGS: COMMANDS". */
                if (line == end || *line != '(' || !(close = memchr(line, ')', (size_t) (end - line))))
                        continue;
                lines++;
                sign = command_sign(close + 1, (size_t) (end - close - 1), cmd);
                if (sign == 0)
                        continue;
                users_end = close;
                for (const char *q = line + 1; q < close; q++)
                        if (*q == ':') {
                                users_end = q;
                                break;
                        }
                /* Who is named: ALL (every slot), slot names, "!slotNN" (that slot taken away). */
                for (u = line + 1; u < users_end;) {
                        const char *comma = memchr(u, ',', (size_t) (users_end - u)), *te = comma ? comma : users_end;

                        while (u < te && *u == ' ')
                                u++;
                        while (te > u && te[-1] == ' ')
                                te--;
                        if (te - u == 3 && memcmp(u, "ALL", 3) == 0)
                                all = true;
                        u = comma ? comma + 1 : users_end;
                }
                if (all)
                        for (unsigned n = 1; n <= pool; n++)
                                state[n] = (signed char) sign;
                for (u = line + 1; u < users_end;) {
                        const char *comma = memchr(u, ',', (size_t) (users_end - u)), *te = comma ? comma : users_end;
                        char name[SLOTS_NAME_MAX + 1];
                        bool neg;
                        unsigned n;

                        while (u < te && *u == ' ')
                                u++;
                        while (te > u && te[-1] == ' ')
                                te--;
                        neg = u < te && *u == '!';
                        if (neg)
                                u++;
                        if ((size_t) (te - u) < sizeof(name)) {
                                memcpy(name, u, (size_t) (te - u));
                                name[te - u] = '\0';
                                n = slots_slot_parse(name);
                                /* Excluded from the list: taken away, whatever came before. */
                                if (n >= 1 && n <= pool)
                                        state[n] = neg ? -1 : (signed char) sign;
                        }
                        u = comma ? comma + 1 : users_end;
                }
        }
        return lines;
}

#define GRANTS_SHOWN 5          /* slots named in a FAIL; the rest are counted */

/*
 * Whether sudo's listing (its exit status r, its output out of size bytes) can be read for
 * grants; when it cannot, the sudo-grants row says why.
 */
static bool listing_usable(struct check_run *k, int r, char *out, size_t size, const char *sudo, const char *shown,
                           bool root)
{
        const struct slots_config *c = k->cfg;

        if (r == -ETIMEDOUT) {
                check_add_rowf(k, SLOTS_CHECK_FAIL, "sudo-grants", NULL,
                               "find what sudo waits for (LDAP/sssd, DNS for the host name) and make it answer",
                               "%s did not finish within %d ms; killed", shown, LIST_TIMEOUT_MS);
                return false;
        }
        if (r < 0) {
                check_add_rowf(k, SLOTS_CHECK_FAIL, "sudo-grants", NULL, "reinstall sudo", "cannot run %s: %s", sudo,
                               strerror(-r));
                return false;
        }
        if (r != 0 && !root && strstr(out, "password is required")) {
                check_add_rowf(k, SLOTS_CHECK_SKIP, "sudo-grants", NULL, NULL,
                               "sudo asks %s for a password to list its own rules (Defaults listpw); run check as root "
                               "for this row",
                               c->service);
                return false;
        }
        if (r != 0) {
                out[strcspn(out, "\n")] = '\0';
                check_add_rowf(k, SLOTS_CHECK_FAIL, "sudo-grants", NULL,
                               "visudo -c names a file sudo cannot use; slots-provision rewrites its drop-in",
                               "%s exits %d%s%s", shown, r, out[0] ? ": " : "", out);
                return false;
        }
        if (strlen(out) >= size - 1) {
                check_add_rowf(k, SLOTS_CHECK_SKIP, "sudo-grants", NULL, NULL, "%s printed more than %zu bytes", shown,
                               size - 1);
                return false;
        }
        return true;
}

/* Each set of slots missing the same commands (the bits of missing, cleared here) as one clause of d. */
static void describe_missing(struct strbuf *d, const struct slots_config *c, const char *const cmds[], size_t n_cmds,
                             unsigned char *missing)
{
        char name[SLOTS_NAME_MAX];

        for (unsigned n = 1; n <= c->slots; n++) {
                unsigned char bits = missing[n];
                size_t count = 0;

                if (!bits)
                        continue;
                strbuf_sep(d, "; ");
                strbuf_addf(d, "sudo does not let %s run", c->service);
                for (size_t i = 0, w = 0; i < n_cmds; i++)
                        if (bits & (1u << i))
                                strbuf_addf(d, "%s %s", w++ ? "," : "", cmds[i]);
                strbuf_addf(d, " as");
                for (unsigned m = n; m <= c->slots; m++) {
                        if (missing[m] != bits)
                                continue;
                        missing[m] = 0;
                        if (count++ < GRANTS_SHOWN)
                                strbuf_addf(d, "%s %s", count > 1 ? "," : "", slots_slot_name(m, name));
                }
                if (count > GRANTS_SHOWN)
                        strbuf_addf(d, " and %zu more", count - GRANTS_SHOWN);
                strbuf_addf(d, " (%zu of the %u slots of the pool)", count, c->slots);
        }
}

/*
 * One sudo run for the whole pool: as root "sudo -n -l -U <service>", as the
 * service "sudo -n -l" (its own rules; sudo asks no password when a rule is
 * NOPASSWD).  sudo parses every sudoers source to answer, so an error anywhere
 * fails here; then each slot of the pool must be granted /usr/bin/true,
 * /usr/bin/kill and (with app_root and launcher) the launcher or slotctl, with
 * sudo's rule that the last match wins.  sudo prints each privilege on one
 * line when its output is not a terminal.
 */
void check_sudo_grants(struct check_run *k)
{
        const struct slots_config *c = k->cfg;
        const char *sudo = check_sudo_path(k);
        bool root = geteuid() == 0;
        const char *const argv_root[] = { sudo, "-n", "-l", "-U", c->service, NULL };
        const char *const argv_svc[] = { sudo, "-n", "-l", NULL };
        const char *cmds[3] = { "/usr/bin/true", "/usr/bin/kill", NULL };
        size_t size = (size_t) c->slots * 64 + ((size_t) 256 << 10), n_cmds = 2;
        char *out = NULL, *run = NULL, first[SLOTS_NAME_MAX], last[SLOTS_NAME_MAX], shown[128], name[128];
        char listing_root[128];
        signed char *state = NULL;
        unsigned char *missing = NULL;
        struct strbuf d = { 0 }, f = { 0 };
        int r;

        if (check_sudo_missing(k, "sudo-grants", NULL, NULL))
                return;
        if (!k->have_svc) {
                check_add_rowf(k, SLOTS_CHECK_SKIP, "sudo-grants", NULL, NULL, "no service account %s", c->service);
                return;
        }
        if (c->app_root && c->launcher) {
                if (!c->slotctl && asprintf(&run, "%s/releases/*/bin/%s", strcmp(c->app_root, "/") ? c->app_root : "",
                                            c->launcher) < 0) {
                        k->err = -ENOMEM;
                        return;
                }
                cmds[n_cmds++] = c->slotctl ? c->slotctl : run;
        }
        snprintf(shown, sizeof(shown), root ? "sudo -n -l -U %s" : "sudo -n -l as %s", c->service);
        snprintf(listing_root, sizeof(listing_root), "sudo -l -U %s", c->service);
        out = malloc(size);
        state = calloc((size_t) c->slots + 1, sizeof(*state));
        missing = calloc((size_t) c->slots + 1, sizeof(*missing));
        if (!out || !state || !missing) {
                k->err = -ENOMEM;
                goto out;
        }
        r = slots_run_program(root ? argv_root : argv_svc, -1, LIST_TIMEOUT_MS, out, size);
        if (!listing_usable(k, r, out, size, sudo, shown, root))
                goto out;
        /* Each slot's commands not granted, as bits; the slots with the same bits make one clause. */
        for (size_t i = 0; i < n_cmds; i++) {
                memset(state, 0, (size_t) c->slots + 1);
                if (check_sudo_list_grants(out, cmds[i], c->slots, state) == 0) {
                        /* No privilege as another account: sudo's own sentence may say so ("User ... is not allowed"). */
                        const char *p = strstr(out, "not allowed"), *from = p;

                        while (from && from > out && from[-1] != '\n')
                                from--;
                        strbuf_addf(&d, "%s lists no rule that lets %s run a command as another account%s%.*s%s",
                                    shown, c->service, p ? " (\"" : "", p ? (int) strcspn(from, "\n") : 0,
                                    p ? from : "", p ? "\")" : "");
                        break;
                }
                for (unsigned n = 1; n <= c->slots; n++)
                        missing[n] |= state[n] == 1 ? 0 : (unsigned char) (1u << i);
        }
        describe_missing(&d, c, cmds, n_cmds, missing);
        if (d.len) {
                strbuf_addf(&f, "slots-provision (it rewrites %s/%s), then look for a rule in another sudoers file "
                            "that takes it back: %s", SLOTS_SUDOERS_DIR, slots_dropin_sudoers_name(c, name,
                            sizeof(name)), root ? listing_root : "sudo -l");
                check_add_row(k, SLOTS_CHECK_FAIL, "sudo-grants", NULL, &d, &f);
                goto out;
        }
        check_add_rowf(
                k, SLOTS_CHECK_PASS, "sudo-grants", NULL, NULL,
                "%s: sudo reads its rules and lets %s run /usr/bin/true, /usr/bin/kill%s%s as each of the %u slots of "
                "the pool (%s to %s)",
                shown, c->service, n_cmds > 2 ? " and " : "", n_cmds > 2 ? cmds[2] : "", c->slots,
                slots_slot_name(1, first), slots_slot_name(c->slots, last));
out:
        free(out);
        free(run);
        free(state);
        free(missing);
        strbuf_free(&d);
        strbuf_free(&f);
}
