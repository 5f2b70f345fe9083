/*
 * LD_PRELOAD shim for tests: makes NSS lookups fail the way an unreachable directory server
 * does (the *_r call returns EIO and no entry), for the names and ids listed in
 * SLOTS_TEST_NSS_FAIL ("slot02", "uid:997", "gid:997", "*" for every lookup, comma-separated).
 * An enumeration (getpwent_r, getgrent_r) leaves out the entries whose name or id is listed, as
 * a directory that is down lists nothing, and with "*" it fails.  Everything else goes to glibc.  nss_wrapper cannot fake a failure: its files only answer
 * "found" or "not found".
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dlfcn.h>
#include <errno.h>
#include <grp.h>
#include <pwd.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static bool listed(const char *key)
{
        const char *list = getenv("SLOTS_TEST_NSS_FAIL");
        size_t n = strlen(key);

        if (!list)
                return false;
        for (const char *p = list; *p;) {
                const char *c = strchr(p, ',');
                size_t k = c ? (size_t) (c - p) : strlen(p);

                if ((k == 1 && *p == '*') || (k == n && memcmp(p, key, n) == 0))
                        return true;
                if (!c)
                        break;
                p = c + 1;
        }
        return false;
}

static bool id_listed(const char *kind, unsigned id)
{
        char key[32];

        snprintf(key, sizeof(key), "%s:%u", kind, id);
        return listed(key);
}

#define NEXT(name) ((__typeof__(&name)) dlsym(RTLD_NEXT, #name))

int getpwnam_r(const char *name, struct passwd *pw, char *buf, size_t size, struct passwd **res)
{
        if (listed(name)) {
                *res = NULL;
                return EIO;
        }
        return NEXT(getpwnam_r)(name, pw, buf, size, res);
}

int getpwuid_r(uid_t uid, struct passwd *pw, char *buf, size_t size, struct passwd **res)
{
        if (id_listed("uid", (unsigned) uid)) {
                *res = NULL;
                return EIO;
        }
        return NEXT(getpwuid_r)(uid, pw, buf, size, res);
}

int getgrnam_r(const char *name, struct group *gr, char *buf, size_t size, struct group **res)
{
        if (listed(name)) {
                *res = NULL;
                return EIO;
        }
        return NEXT(getgrnam_r)(name, gr, buf, size, res);
}

int getgrgid_r(gid_t gid, struct group *gr, char *buf, size_t size, struct group **res)
{
        if (id_listed("gid", (unsigned) gid)) {
                *res = NULL;
                return EIO;
        }
        return NEXT(getgrgid_r)(gid, gr, buf, size, res);
}

/* An enumerated entry the shim's list hides: its name, or its id under kind. */
static bool hidden(const char *name, const char *kind, unsigned id)
{
        return listed(name) || id_listed(kind, id);
}

int getpwent_r(struct passwd *pw, char *buf, size_t size, struct passwd **res)
{
        int r;

        if (listed("*")) {
                *res = NULL;
                return EIO;
        }
        while ((r = NEXT(getpwent_r)(pw, buf, size, res)) == 0 && *res && hidden(pw->pw_name, "uid", pw->pw_uid))
                ;
        return r;
}

int getgrent_r(struct group *gr, char *buf, size_t size, struct group **res)
{
        int r;

        if (listed("*")) {
                *res = NULL;
                return EIO;
        }
        while ((r = NEXT(getgrent_r)(gr, buf, size, res)) == 0 && *res && hidden(gr->gr_name, "gid", gr->gr_gid))
                ;
        return r;
}
