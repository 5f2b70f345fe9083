/* libFuzzer target: the config parser (slots_config_parse) on arbitrary bytes. */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "fuzz-common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        struct slots_config *c = NULL;
        struct slots_error e;
        char *text;
        int r;

        /* An exact-size copy without a NUL: the parser must honour len and never read past it. */
        text = malloc(size ? size : 1);
        if (!text)
                return 0;
        memcpy(text, data, size);
        memset(&e, 0, sizeof(e));
        r = slots_config_parse(text, size, "fuzz.conf", &c, &e);
        if (r == 0) {
                struct slots_limits l;
                char *tree;

                FUZZ_ASSERT(c && c->service && c->slots >= 1 && c->slots <= 9999);
                FUZZ_ASSERT(c->table && c->table[0] == '/' && c->slots_root && c->user_tree);
                for (unsigned n = 1; n <= c->slots && n <= 16; n++)
                        slots_config_limits_for(c, n, &l);
                tree = slots_config_user_tree(c, "aa73da63e26b40a1bb701c2b4c024870");
                FUZZ_ASSERT(tree && !strstr(tree, "{user}") && tree[0] != '/');
                free(tree);
                (void) slots_config_is_private(c, "/srv/x/docs/_users/u");
                slots_config_free(c);
        } else {
                /* Every refusal says which file and why, at a place inside the text. */
                FUZZ_ASSERT(r == -EBADMSG || r == -ENOMEM);
                FUZZ_ASSERT(c == NULL);
                FUZZ_ASSERT(strcmp(e.object, "fuzz.conf") == 0 && e.reason[0] != '\0');
                fuzz_check_position(text, size, e.line, e.column);
        }
        free(text);
        return 0;
}
