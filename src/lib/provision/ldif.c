/* The pool as LDIF, for loading into a directory that serves the slots to every host. */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dirfix.h"
#include "ids.h"
#include "ldif.h"

/* One value line (dirfix.c's rule); -ENOMEM. */
static int put_attr(FILE *f, const char *attr, const char *value)
{
        struct strbuf b = { 0 };
        int r = 0;

        slots_ldif_value(&b, attr, value);
        if (b.oom)
                r = -ENOMEM;
        else
                fprintf(f, "%s\n", strbuf_str(&b));
        strbuf_free(&b);
        return r;
}

static int put_dn(FILE *f, const char *rdn, const char *base_dn)
{
        char *dn;
        int r;

        if (asprintf(&dn, "%s,%s", rdn, base_dn) < 0)
                return -ENOMEM;
        r = put_attr(f, "dn", dn);
        free(dn);
        return r;
}

/* The refusals before anything is written: no uid_base, a bad base DN, a path that is not ASCII. */
static int ldif_refuse(const struct slots_config *c, const char *base_dn, struct slots_error *e)
{
        if (!c->uid_base) {
                slots_error_invalid(e, -EINVAL, c->path, "the LDIF needs \"uid_base\": without it each host "
                                    "picks its own ids");
                slots_error_fix(e, "set \"uid_base\" in %s to the first id of a range the whole fleet keeps free",
                                c->path);
                return -EINVAL;
        }
        if (!base_dn[0] || strpbrk(base_dn, "\n\r")) {
                slots_error_invalid(e, -EINVAL, "--ldif", "the base DN must be one non-empty line");
                slots_error_fix(e, "name the entry the slots go below, e.g. --ldif ou=slots,dc=example,dc=org");
                return -EINVAL;
        }
        /* RFC 2307 makes homeDirectory and loginShell IA5 strings: a directory refuses anything but ASCII. */
        for (const char *const *v = (const char *const[]) { c->slots_root, c->shell, NULL }; *v; v++)
                for (const unsigned char *p = (const unsigned char *) *v; *p; p++)
                        if (*p > 0x7f) {
                                slots_error_invalid(e, -EBADMSG, c->path,
                                                    "%s holds a byte that is not ASCII; an RFC 2307 directory "
                                                    "takes only ASCII in homeDirectory and loginShell",
                                                    *v == c->shell ? "shell" : "slots_root");
                                slots_error_fix(e, "choose an ASCII path for \"%s\"",
                                                *v == c->shell ? "shell" : "slots_root");
                                return -EBADMSG;
                        }
        return 0;
}

/* Slot i's group and account entries; -ENOMEM. */
static int put_slot(FILE *f, const struct slots_config *c, const char *base_dn, unsigned i)
{
        const char *sep = strcmp(c->slots_root, "/") ? "/" : "";
        char name[SLOTS_NAME_MAX], rdn[64], *home;
        int r;

        slots_slot_name(i, name);
        if (asprintf(&home, "%s%shome/%s", c->slots_root, sep, name) < 0)
                return -ENOMEM;
        snprintf(rdn, sizeof(rdn), "cn=%s", name);
        r = put_dn(f, rdn, base_dn);
        if (r == 0) {
                fprintf(f, "objectClass: posixGroup\ncn: %s\ngidNumber: %u\n\n", name, (unsigned) c->uid_base + i);
                snprintf(rdn, sizeof(rdn), "uid=%s", name);
                r = put_dn(f, rdn, base_dn);
        }
        if (r == 0) {
                fprintf(f, "objectClass: account\nobjectClass: posixAccount\nobjectClass: shadowAccount\n");
                fprintf(f, "uid: %s\ncn: %s\nuidNumber: %u\ngidNumber: %u\n", name, name,
                        (unsigned) c->uid_base + i, (unsigned) c->uid_base + i);
                if (put_attr(f, "homeDirectory", home) < 0 || put_attr(f, "loginShell", c->shell) < 0)
                        r = -ENOMEM;
                /* Locked: no password matches "!", for a bind or for pam_unix. */
                fprintf(f, "userPassword: {crypt}!\n\n");
        }
        free(home);
        return r;
}

char *slots_ldif(const struct slots_config *c, const char *base_dn, size_t *len, int *err,
                 struct slots_error *e)
{
        char name[SLOTS_NAME_MAX], rdn[64], *out = NULL;
        size_t n = 0;
        FILE *f;

        *len = 0;
        *err = ldif_refuse(c, base_dn, e);
        if (*err < 0)
                return NULL;
        f = open_memstream(&out, &n);
        if (!f)
                goto oom;
        fprintf(f, "# The slot pool of the service %s: %u slots, ids %u..%u (uid_base %u).\n", c->service,
                c->slots, (unsigned) c->uid_base, (unsigned) c->uid_base + c->slots, (unsigned) c->uid_base);
        fprintf(f, "# Load with: ldapadd -f FILE (the entry %s must exist)\n\n", base_dn);
        for (unsigned i = 1; i <= c->slots; i++)
                if (put_slot(f, c, base_dn, i) < 0)
                        goto oom_stream;
        snprintf(rdn, sizeof(rdn), "cn=%sshared", c->prefix);
        if (put_dn(f, rdn, base_dn) < 0)
                goto oom_stream;
        fprintf(f, "objectClass: posixGroup\ncn: %sshared\ngidNumber: %u\n", c->prefix, (unsigned) c->uid_base);
        for (unsigned i = 1; i <= c->slots; i++)
                fprintf(f, "memberUid: %s\n", slots_slot_name(i, name));
        if (ferror(f) || fclose(f) != 0) {
                free(out);
                goto oom;
        }
        *len = n;
        return out;
oom_stream:
        fclose(f);
        free(out);
oom:
        *err = slots_error_set(e, -ENOMEM, "--ldif", "out of memory");
        return NULL;
}
