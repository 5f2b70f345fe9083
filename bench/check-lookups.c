/*
 * The account lookups check's rows make for each slot, for the last K slots of a pool of N,
 * the two ways: "map", through accountmap.c (the databases read once, then the map), or "nss",
 * each lookup by name through NSS as check made them before the map: the account, its groups
 * (getgrouplist), its group and the shared group by name, a name for each of its groups, and
 * the shadow entry.  Run it under callgrind with K and with 0: the difference over K is one
 * slot's lookups at that size of /etc; "map" with 0 against "nss" with 0 is the map's read.
 *
 * Usage: check-lookups N K map|nss    (exit 1 when an account is missing)
 */
#include <shadow.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "accountmap.h"

static int slot_lookups(const struct slots_accountmap *m, const char *name)
{
        struct slots_pw pw;
        struct spwd sp, *res = NULL;
        char buf[4096], *s = NULL;
        gid_t gid, *groups = NULL;
        int n = 0, r;

        if (slots_amap_user(m, name, &pw) <= 0)
                return -1;
        r = slots_amap_grouplist(m, name, pw.gid, &groups, &n) == 0 && slots_amap_group(m, name, &gid) > 0 &&
            slots_amap_group(m, "slotshared", &gid) > 0 ? 0 : -1;
        for (int i = 0; r == 0 && i < n; i++) {
                char *g = NULL;
                if (slots_amap_gid(m, groups[i], &g) <= 0)
                        r = -1;
                free(g);
        }
        if (r == 0 && slots_amap_shadow(m, name, &s) == 0 && (getspnam_r(name, &sp, buf, sizeof(buf), &res) || !res))
                r = -1;
        free(s);
        free(groups);
        slots_pw_clear(&pw);
        return r;
}

int main(int argc, char **argv)
{
        struct slots_accountmap *m = NULL;
        struct slots_error e;
        unsigned n, k;
        char name[32];

        if (argc != 4 || (strcmp(argv[3], "map") != 0 && strcmp(argv[3], "nss") != 0)) {
                fprintf(stderr, "usage: check-lookups N K map|nss\n");
                return 2;
        }
        n = (unsigned) strtoul(argv[1], NULL, 10);
        k = (unsigned) strtoul(argv[2], NULL, 10);
        if (strcmp(argv[3], "map") == 0 &&
            slots_accountmap_read(NULL, SLOTS_AMAP_PASSWD | SLOTS_AMAP_GROUP | SLOTS_AMAP_SHADOW, &m, &e) < 0)
                return 1;
        for (unsigned i = n - k + 1; k && i <= n; i++) {
                snprintf(name, sizeof(name), "slot%02u", i);
                if (slot_lookups(m, name) < 0) {
                        fprintf(stderr, "check-lookups: %s, its groups or slotshared is missing\n", name);
                        return 1;
                }
        }
        slots_accountmap_free(m);
        return 0;
}
