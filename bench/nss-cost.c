/*
 * The account lookups check makes for each slot, for the last K slots of a pool
 * of N: getpwnam and getgrnam of slotNN, getgrnam of the shared group.  Run it
 * under callgrind with K and with 0: the difference over K is what one slot's
 * lookups cost at that size of /etc/passwd and /etc/group.
 *
 * Usage: nss-cost N K    (exit 1 when an account is missing)
 */
#include <grp.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
        unsigned n, k;
        char name[32];

        if (argc != 3) {
                fprintf(stderr, "usage: nss-cost N K\n");
                return 2;
        }
        n = (unsigned) strtoul(argv[1], NULL, 10);
        k = (unsigned) strtoul(argv[2], NULL, 10);
        for (unsigned i = n - k + 1; k && i <= n; i++) {
                snprintf(name, sizeof(name), "slot%02u", i);
                if (!getpwnam(name) || !getgrnam(name) || !getgrnam("slotshared")) {
                        fprintf(stderr, "nss-cost: %s or slotshared is missing\n", name);
                        return 1;
                }
        }
        return 0;
}
