/*
 * The two files slots-provision renders from the config alone (provision.c): the sudoers
 * drop-in and the slotctl config.  Each row is a config and what its rendering must and
 * must not hold; the byte-exact files of the example host are tests/provision/golden.
 */
#include <errno.h>
#include <jansson.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "config.h"
#include "provision.h"
#include "unit.h"

#define CONF(extra) "{\"service\": \"web-app\", \"slots\": 2" extra "}"
#define RUN ", \"app_root\": \"/opt/web\", \"launcher\": \"run\""

static const struct {
        const char *what;
        const char *conf;
        const char *has[4];             /* lines or parts the drop-in holds */
        const char *lacks;              /* and one it must not hold (NULL: none) */
} sudoers[] = {
        { "no launcher: true and kill only", CONF(""),
          { "Cmnd_Alias SLOTS_WEB_APP_CTL = /usr/bin/true \"\", /usr/bin/kill ^-s [A-Z0-9]+ -- ",
            "web-app ALL = (web-app : ALL) !SLOTS_WEB_APP_CTL\n", "NOPASSWD: NOSETENV: SLOTS_WEB_APP_CTL\n" },
          "_RUN" },
        { "a launcher: releases and current by name, no env kept", CONF(RUN ", \"sudo_env\": []"),
          { "Cmnd_Alias SLOTS_WEB_APP_RUN = /opt/web/releases/*/bin/run, /opt/web/current/bin/run\n",
            "Defaults!SLOTS_WEB_APP_RUN fast_glob, env_reset, !setenv, !requiretty, !env_check, !env_keep\n",
            "!SLOTS_WEB_APP_CTL, !SLOTS_WEB_APP_RUN\n" },
          "NOPASSWD: SETENV" },
        { "sudo_env kept exactly; PATH turns secure_path off", CONF(RUN ", \"sudo_env\": [\"LANG\", \"PATH\"]"),
          { "env_keep = \"LANG PATH\", !secure_path\n" }, "!env_keep" },
        { "sudo_env without PATH keeps secure_path", CONF(RUN ", \"sudo_env\": [\"LANG\"]"),
          { "env_keep = \"LANG\"\n" }, "secure_path" },
        { "through slotctl: its first argument matched as a regular expression",
          CONF(RUN ", \"slotctl\": \"/opt/web/current/bin/slotctl\""),
          { "Cmnd_Alias SLOTS_WEB_APP_RUN = /opt/web/current/bin/slotctl ^/opt/web/(releases/[^/.][^/]*|current)"
            "/bin/run( .*)?$\n" }, "releases/*" },
};

static struct slots_config *config(const char *text)
{
        struct slots_config *c = NULL;
        struct slots_error e;

        slots_error_clear(&e);
        if (slots_config_parse(text, strlen(text), "slots.conf", &c, &e) != 0)
                fail_msg("the config does not parse: %s: %s\n%s", e.object, e.reason, text);
        return c;
}

static void test_sudoers(void **state)
{
        int failures = 0;

        (void) state;
        for (size_t i = 0; i < N_ELEM(sudoers); i++) {
                struct slots_config *c = config(sudoers[i].conf);
                struct slots_error e;
                size_t len = 0;
                char *text;

                slots_error_clear(&e);
                text = slots_provision_sudoers(c, &len, &e);
                if (!text || strlen(text) != len) {
                        ROW_FAIL("%s: no drop-in: %s", sudoers[i].what, e.reason);
                } else {
                        for (size_t k = 0; k < N_ELEM(sudoers[i].has) && sudoers[i].has[k]; k++)
                                if (!strstr(text, sudoers[i].has[k]))
                                        ROW_FAIL("%s: lacks \"%s\" in:\n%s", sudoers[i].what, sudoers[i].has[k], text);
                        if (sudoers[i].lacks && strstr(text, sudoers[i].lacks))
                                ROW_FAIL("%s: holds \"%s\" in:\n%s", sudoers[i].what, sudoers[i].lacks, text);
                }
                free(text);
                slots_config_free(c);
        }
        if (failures)
                fail_msg("%d failures", failures);
}

/* What a sudoers rule cannot carry literally is an invalid config, and nothing is rendered. */
static void test_sudoers_unsafe(void **state)
{
        struct slots_config *c = config(CONF(", \"app_root\": \"/opt/web,x\", \"launcher\": \"run\""));
        struct slots_error e;
        size_t len = 0;

        (void) state;
        slots_error_clear(&e);
        assert_null(slots_provision_sudoers(c, &len, &e));
        assert_int_equal(e.kind, SLOTS_ERR_INVALID);
        assert_non_null(strstr(e.reason, "a sudoers rule cannot carry"));
        slots_config_free(c);
}

/* The slotctl config: JSON with a final newline, the docs root and the launcher's places. */
static void test_slotctl(void **state)
{
        struct slots_config *c = config(CONF(RUN ", \"docs_root\": \"/srv/docs\""));
        json_error_t jerr;
        size_t len = 0;
        char *text;
        json_t *j;

        (void) state;
        text = slots_provision_slotctl_json(c, &len);
        assert_non_null(text);
        assert_int_equal(strlen(text), len);
        assert_true(len > 0 && text[len - 1] == '\n');
        j = json_loadb(text, len, 0, &jerr);
        if (!j)
                fail_msg("not JSON: %s\n%s", jerr.text, text);
        assert_string_equal(json_string_value(json_object_get(j, "docs_root")), "/srv/docs");
        json_decref(j);
        free(text);
        slots_config_free(c);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_sudoers),
                cmocka_unit_test(test_sudoers_unsafe),
                cmocka_unit_test(test_slotctl),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
