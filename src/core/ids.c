/* Names the contract gives a syntax to: application user ids and slot names. */
#include <string.h>

#include "ids.h"

static bool user_char(char c)
{
        return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
               c == '.' || c == '_' || c == '-';
}

bool slots_user_valid(const char *user)
{
        size_t n;

        if (!user || user[0] == '\0' || user[0] == '.' || user[0] == '-')
                return false;
        for (n = 0; user[n]; n++)
                if (n >= SLOTS_USER_MAX || !user_char(user[n]))
                        return false;
        return true;
}

unsigned slots_slot_parse(const char *name)
{
        unsigned n = 0;
        size_t i;

        if (!name || strncmp(name, "slot", 4) != 0)
                return 0;
        for (i = 4; name[i]; i++) {
                if (name[i] < '0' || name[i] > '9' || i >= 8)
                        return 0;
                n = n * 10 + (unsigned) (name[i] - '0');
        }
        if (n < 1 || n > SLOTS_POOL_MAX)
                return 0;
        /*
         * Only the canonical spelling ("slot%02u") names a slot: refuses slot1, slot001.
         * Checked on the digits (printing the name back would cost ~900 instructions
         * a call, once per table entry); i - 4 is the number of digits.
         */
        if (i - 4 < 2 || (i - 4 > 2 && name[4] == '0'))
                return 0;
        return n;
}

const char *slots_slot_name(unsigned n, char buf[static SLOTS_NAME_MAX])
{
        char d[10];
        size_t k = 0;

        /* snprintf's "slot%02u" without snprintf: status, check and the table name every slot of a pool. */
        do
                d[k++] = (char) ('0' + n % 10);
        while ((n /= 10) > 0);
        if (k < 2)
                d[k++] = '0';
        memcpy(buf, "slot", 4);
        for (size_t i = 0; i < k; i++)
                buf[4 + i] = d[k - 1 - i];
        buf[4 + k] = '\0';
        return buf;
}
