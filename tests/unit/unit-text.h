/*
 * For unit tests of text a config renders (include after <cmocka.h>): the config from its
 * text, and "the text holds each of these and none of those" for a row of a table.
 */
#pragma once

#include <stddef.h>
#include <string.h>

#include "config.h"

/* The config parsed from text (its path /etc/slots/slots.conf); the test fails when it does not parse. */
static inline struct slots_config *unit_config(const char *text)
{
        struct slots_config *c = NULL;
        struct slots_error e;

        slots_error_clear(&e);
        if (slots_config_parse(text, strlen(text), "/etc/slots/slots.conf", &c, &e) != 0)
                fail_msg("the config does not parse: %s: %s\n%s", e.object, e.reason, text);
        return c;
}

/*
 * The failures of one row: each non-NULL string of has[n_has] must be in text, none of
 * lacks[n_lacks]; each miss is printed with what and the text.
 */
static inline int unit_holds(const char *what, const char *text, const char *const *has, size_t n_has,
                             const char *const *lacks, size_t n_lacks)
{
        int failures = 0;

        for (size_t k = 0; k < n_has && has[k]; k++)
                if (!strstr(text, has[k]))
                        ROW_FAIL("%s: lacks \"%s\" in:\n%s", what, has[k], text);
        for (size_t k = 0; k < n_lacks && lacks[k]; k++)
                if (strstr(text, lacks[k]))
                        ROW_FAIL("%s: holds \"%s\" in:\n%s", what, lacks[k], text);
        return failures;
}
