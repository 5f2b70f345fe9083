/* Whole numbers with a binary size suffix (K, M, G, T), the one reader the limits and the slice share. */
#include <errno.h>

#include "size.h"

int slots_digits(const char *s, uint64_t *v)
{
        int i = 0;

        *v = 0;
        for (; s[i] >= '0' && s[i] <= '9'; i++) {
                uint64_t d = (uint64_t) (s[i] - '0');

                if (*v > (UINT64_MAX - d) / 10)
                        return -ERANGE;
                *v = *v * 10 + d;
        }
        return i;
}

int slots_size_parse(const char *s, bool suffix, uint64_t *out)
{
        uint64_t v, mult = 1;
        int i = slots_digits(s, &v);

        if (i <= 0)
                return i < 0 ? i : -EINVAL;
        if (s[i] != '\0') {
                if (!suffix || s[i + 1] != '\0')
                        return -EINVAL;
                switch (s[i]) {
                case 'K': mult = UINT64_C(1) << 10; break;
                case 'M': mult = UINT64_C(1) << 20; break;
                case 'G': mult = UINT64_C(1) << 30; break;
                case 'T': mult = UINT64_C(1) << 40; break;
                default: return -EINVAL;
                }
        }
        if (v > UINT64_MAX / mult)
                return -ERANGE;
        *out = v * mult;
        return 0;
}
