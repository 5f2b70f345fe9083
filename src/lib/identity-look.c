/* The facts of a slot account that identity.c judges, looked up: its password fields, groups, subordinate ids. */
#include <crypt.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <pwd.h>
#include <shadow.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fsutil.h"
#include "identity-look.h"
#include "privdrop.h"

#define PWFIELD_BUF_MAX ((size_t) 1 << 20)
#define GROUP_BUF_MAX ((size_t) 1 << 24)        /* where nss.c's lookups stop growing */

/* One lookup by name into a buffer that grows on ERANGE; the field copied into *out. */
static int lookup(const char *name, bool shadow, char **out)
{
        size_t size = 1024;

        *out = NULL;
        for (;;) {
                struct passwd pw, *pres = NULL;
                struct spwd sp, *sres = NULL;
                const char *field = NULL;
                char *buf = malloc(size);
                int r;

                if (!buf)
                        return -ENOMEM;
                r = shadow ? getspnam_r(name, &sp, buf, size, &sres) : getpwnam_r(name, &pw, buf, size, &pres);
                if (r == ERANGE && size < PWFIELD_BUF_MAX) {
                        free(buf);
                        size *= 2;
                        continue;
                }
                if (sres)
                        field = sres->sp_pwdp ? sres->sp_pwdp : "";
                else if (pres)
                        field = pres->pw_passwd ? pres->pw_passwd : "";
                if (field)
                        *out = strdup(field);
                explicit_bzero(buf, size);
                free(buf);
                /* Only glibc's 0 with no entry is "not found" (as nss.c takes it). */
                if (!field)
                        return r ? -r : 0;
                return *out ? 1 : -ENOMEM;
        }
}

int slots_pwfield_passwd(const char *name, char **out)
{
        return lookup(name, false, out);
}

int slots_pwfield_shadow(const char *name, char **out)
{
        /* Unreadable /etc/shadow may answer "no entry": that is no answer. */
        if (geteuid() != 0) {
                *out = NULL;
                return -EACCES;
        }
        return lookup(name, true, out);
}

int slots_pwfields_lookup(const char *name, struct slots_pwfields *f)
{
        int r;

        memset(f, 0, sizeof(*f));
        r = slots_pwfield_passwd(name, &f->passwd);
        if (r <= 0)
                return r < 0 ? r : -ENOENT;
        r = slots_pwfield_shadow(name, &f->shadow);
        if (r == -ENOMEM) {
                slots_pwfields_clear(f);
                return r;
        }
        f->shadow_known = r >= 0;
        f->shadow_err = r < 0 ? r : 0;
        return 0;
}

static void clear_field(char **p)
{
        if (*p)
                explicit_bzero(*p, strlen(*p));
        free(*p);
        *p = NULL;
}

void slots_pwfields_clear(struct slots_pwfields *f)
{
        clear_field(&f->passwd);
        clear_field(&f->shadow);
}

enum slots_hash_method slots_hash_method_of(const char *hash, bool *have_lib)
{
        static int (*fn)(const char *);
        static bool tried;
        int cs;

        if (!tried) {
                void *h = dlopen("libcrypt.so.1", RTLD_NOW | RTLD_LOCAL);

                tried = true;
                if (h)
                        *(void **) &fn = dlsym(h, "crypt_checksalt");
        }
        *have_lib = fn != NULL;
        if (!fn)
                return SLOTS_HASH_UNASKED;
        cs = fn(hash);
        return cs == CRYPT_SALT_INVALID || cs == CRYPT_SALT_METHOD_DISABLED ? SLOTS_HASH_NO_METHOD : SLOTS_HASH_METHOD;
}

void slots_pwfields_into(const struct slots_pwfields *f, struct slots_identity *id, bool *have_lib)
{
        enum slots_pw_source src;
        const char *h;
        bool lib = true;

        id->passwd_field = f->passwd;
        id->shadow_field = f->shadow;
        id->shadow_known = f->shadow_known;
        h = slots_identity_password(id, &src);
        id->hash_method = SLOTS_HASH_UNASKED;
        if (h && h[0] && h[0] != '!' && h[0] != '*')
                id->hash_method = slots_hash_method_of(h, &lib);
        if (have_lib)
                *have_lib = lib;
}

/*
 * rootfd's account file path (/etc/passwd, /etc/group) whole into *text: 0 (*text NULL when
 * there is no such file), -errno when it cannot be read.
 */
static int account_file(int rootfd, const char *path, char **text)
{
        const struct slots_read how = { .path = path, .max = (size_t) 64 << 20, .content_fails = true };
        size_t len = 0;
        struct slots_error e;
        int fd, r;

        *text = NULL;
        fd = slots_open_in(rootfd, path, O_RDONLY | O_NONBLOCK | O_NOCTTY);
        if (fd == -ENOENT)
                return 0;
        if (fd < 0)
                return fd;
        r = slots_read_text_fd(fd, &how, NULL, text, &len, &e);
        slots_close(fd);
        if (r < 0) {
                free(*text);
                *text = NULL;
        }
        return r;
}

/*
 * Whether an account file's text (r: account_file()'s answer) has an entry "name:": 1 yes, 0
 * no (the name service's then: a directory's), -errno when the file could not be read.
 */
static int local_entry(int r, const char *text, const char *name)
{
        size_t nl = strlen(name);

        for (const char *p = text; r == 0 && p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL)
                if (strncmp(p, name, nl) == 0 && p[nl] == ':')
                        r = 1;
        return r;
}

/*
 * A lookup buffer that holds the longest line of the group file's text as glibc's files
 * module parses it: the line, then a pointer to each member (one at most each two bytes).
 * Other sources that need more still get it: the lookup grows on ERANGE, up to nss.c's cap.
 */
static size_t group_buffer(const char *text)
{
        size_t longest = 0, need;

        for (const char *p = text; p && *p;) {
                const char *nl = strchr(p, '\n');
                size_t l = nl ? (size_t) (nl - p) : strlen(p);

                if (l > longest)
                        longest = l;
                p = nl ? nl + 1 : NULL;
        }
        need = longest + 1 + (longest / 2 + 3) * sizeof(char *);
        return need < GROUP_BUF_MAX ? need : GROUP_BUF_MAX;
}

/*
 * The groups that name the account: its primary group first, then each other once, each by
 * name.  One getgrouplist() and one lookup by gid a group: no enumeration of the pool.
 */
static int look_groups(int rootfd, const char *name, gid_t gid, struct slots_identity_facts *f,
                       struct slots_error *e)
{
        char *text = NULL;
        int local = account_file(rootfd, "/etc/group", &text);
        size_t hint = group_buffer(text);
        gid_t *gids = NULL;
        int n = 0, r;

        r = slots_grouplist(name, gid, &gids, &n);
        if (r < 0) {
                free(text);
                return slots_error_set(e, r, name, "cannot list its groups: %s", strerror(-r));
        }
        f->groups = calloc((size_t) n + 1, sizeof(*f->groups));
        f->group_names = calloc((size_t) n + 1, sizeof(*f->group_names));
        if (!f->groups || !f->group_names)
                r = -ENOMEM;
        for (int i = 0; r >= 0 && i < n; i++) {
                char **nm = &f->group_names[f->id.n_groups];

                if (i > 0 && gids[i] == gid)
                        continue;
                r = slots_nss_gid_name(gids[i], hint, nm);
                if (r == 0 && asprintf(nm, "gid %u (no group)", (unsigned) gids[i]) < 0)
                        *nm = NULL, r = -ENOMEM;
                if (r < 0)
                        break;
                f->groups[f->id.n_groups++] = (struct slots_identity_group){
                        .name = *nm, .primary = i == 0,
                        .directory = r > 0 && local_entry(local, text, *nm) == 0,
                };
        }
        free(gids);
        free(text);
        f->id.groups = f->groups;
        if (r < 0)
                return slots_error_set(e, r, name, "cannot name its groups: %s", strerror(-r));
        return 0;
}

/* Both password fields; the shadow entry must be known when the passwd field points to it. */
static int look_password(const char *name, struct slots_identity_facts *f, struct slots_error *e)
{
        enum slots_pw_source src;
        int r = slots_pwfields_lookup(name, &f->pw);

        if (r < 0)
                return slots_error_set(e, r, name, "cannot read its passwd entry: %s", strerror(-r));
        slots_pwfields_into(&f->pw, &f->id, NULL);
        if (!slots_identity_password(&f->id, &src) && src == SLOTS_PW_UNKNOWN)
                return slots_error_set(e, f->pw.shadow_err, name, "cannot read its shadow entry: %s",
                                       strerror(-f->pw.shadow_err));
        return 0;
}

int slots_identity_look(int rootfd, const char *prefix, const char *shell, const char *name,
                        const struct slots_pw *pw, struct slots_identity_facts *f, struct slots_error *e)
{
        char *passwd = NULL;
        int r;

        memset(f, 0, sizeof(*f));
        f->id = (struct slots_identity){ .name = name, .shell = pw->shell, .want_shell = shell };
        if (asprintf(&f->shared, "%sshared", prefix) < 0) {
                f->shared = NULL;
                return slots_error_set(e, -ENOMEM, name, "out of memory");
        }
        f->id.shared = f->shared;
        r = account_file(rootfd, "/etc/passwd", &passwd);
        f->id.directory = local_entry(r, passwd, name) == 0;
        free(passwd);
        r = look_groups(rootfd, name, pw->gid, f, e);
        if (r == 0)
                r = slots_subid_read(rootfd, "/etc/subuid", name, pw->uid, &f->subuid, e);
        if (r == 0)
                r = slots_subid_read(rootfd, "/etc/subgid", name, pw->uid, &f->subgid, e);
        f->id.subuid = &f->subuid;
        f->id.subgid = &f->subgid;
        if (r == 0)
                r = look_password(name, f, e);
        if (r < 0)
                slots_identity_facts_free(f);
        return r;
}

void slots_identity_facts_free(struct slots_identity_facts *f)
{
        for (size_t i = 0; f->group_names && i < f->id.n_groups; i++)
                free(f->group_names[i]);
        free(f->group_names);
        free(f->groups);
        slots_subids_free(&f->subuid);
        slots_subids_free(&f->subgid);
        slots_pwfields_clear(&f->pw);
        free(f->shared);
        memset(f, 0, sizeof(*f));
}
