/*
 * libFuzzer target: the limit parser shared by the config loader and pam_slots
 * (slots_limits_parse) on any JSON text jansson accepts, plus the overlay.
 */
#include <errno.h>
#include <jansson.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz-common.h"
#include "rlimits.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        const struct slots_jsrc src = { .file = "fuzz.conf", .text = (const char *) data, .len = size };
        struct slots_jpath path[1] = { { .key = "limits" } };
        struct slots_limits l, base;
        struct slots_error e;
        json_error_t jerr;
        json_t *root;
        int r;

        root = json_loadb((const char *) data, size, JSON_REJECT_DUPLICATES, &jerr);
        if (!root)
                return 0;
        memset(&e, 0, sizeof(e));
        /* The document itself is the limits object: the path to it has no steps. */
        r = slots_limits_parse(root, &src, path, 0, &l, &e);
        if (r == 0) {
                for (int i = 0; i < SLOTS_LIMIT_MAX_ITEM; i++) {
                        const struct slots_limit *x = &l.item[i];

                        FUZZ_ASSERT(slots_limit_item_name(i) != NULL);
                        FUZZ_ASSERT(slots_limit_item_from_name(slots_limit_item_name(i)) == i);
                        if (!x->set)
                                continue;
                        if (i == SLOTS_LIMIT_NICE)
                                FUZZ_ASSERT(x->nice >= -20 && x->nice <= 19);
                        else
                                FUZZ_ASSERT(x->soft <= x->hard);
                }
                memset(&base, 0, sizeof(base));
                base.item[SLOTS_LIMIT_CPU].set = true;
                base.item[SLOTS_LIMIT_CPU].soft = base.item[SLOTS_LIMIT_CPU].hard = 1;
                slots_limits_overlay(&base, &l);
                for (int i = 0; i < SLOTS_LIMIT_MAX_ITEM; i++)
                        if (l.item[i].set)
                                FUZZ_ASSERT(memcmp(&base.item[i], &l.item[i], sizeof(l.item[i])) == 0);
        } else {
                FUZZ_ASSERT(r == -EBADMSG);
                FUZZ_ASSERT(strcmp(e.object, "fuzz.conf") == 0 && e.reason[0] != '\0');
                fuzz_check_position((const char *) data, size, e.line, e.column);
        }
        json_decref(root);
        return 0;
}
