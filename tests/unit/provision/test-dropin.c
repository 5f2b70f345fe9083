/*
 * The two files slots-provision renders from the config alone (dropin.c), as tables: for
 * each config, what the sudoers drop-in must and must not hold (a launcher or none, slotctl,
 * app_root "/", characters a regular expression would read, run_as_group, the runas list
 * past ten slots, every sudo_env shape that turns secure_path off or keeps it), the configs a
 * sudoers rule cannot carry (invalid, nothing rendered), the slotctl config's whole text, and
 * the drop-in's file name.  The byte-exact files of the example host are tests/provision/golden.
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

#include "dropin.h"
#include "unit.h"
#include "unit-text.h"

#define CONF(extra) "{\"service\": \"web-app\", \"slots\": 2" extra "}"
#define CONF2(extra) "{\"service\": \"web-app2\", \"slots\": 2" extra "}"
#define RUN ", \"app_root\": \"/opt/web\", \"launcher\": \"run\""
#define ROOT_RUN ", \"app_root\": \"/\", \"launcher\": \"run\""

static const struct {
        const char *what;
        const char *conf;
        const char *has[4];
        const char *lacks[2];
} sudoers[] = {
        { "no launcher: true and kill only", CONF(""),
          { "Cmnd_Alias SLOTS_WEB_APP_CTL = /usr/bin/true \"\", /usr/bin/kill ^-s [A-Z0-9]+ -- ",
            "web-app ALL = (web-app : ALL) !SLOTS_WEB_APP_CTL\n", "NOPASSWD: NOSETENV: SLOTS_WEB_APP_CTL\n",
            "Defaults!SLOTS_WEB_APP_CTL env_reset, !setenv, !requiretty, !use_pty\n" },
          { "_RUN", NULL } },
        { "a launcher: releases and current by name, no env kept", CONF(RUN ", \"sudo_env\": []"),
          { "Cmnd_Alias SLOTS_WEB_APP_RUN = /opt/web/releases/*/bin/run, /opt/web/current/bin/run\n",
            "Defaults!SLOTS_WEB_APP_RUN fast_glob, env_reset, !setenv, !requiretty, !use_pty, always_set_home, "
            "!env_check, !env_keep\n",
            "!SLOTS_WEB_APP_CTL, !SLOTS_WEB_APP_RUN\n" },
          { "NOPASSWD: SETENV", NULL } },
        { "sudo_env kept exactly; PATH turns secure_path off", CONF(RUN ", \"sudo_env\": [\"LANG\", \"PATH\"]"),
          { "env_keep = \"LANG PATH\", !secure_path\n" }, { "!env_keep", NULL } },
        { "sudo_env without PATH keeps secure_path", CONF(RUN ", \"sudo_env\": [\"LANG\"]"),
          { "env_keep = \"LANG\"\n" }, { "secure_path", NULL } },
        { "through slotctl: its first argument matched as a regular expression",
          CONF(RUN ", \"slotctl\": \"/opt/web/current/bin/slotctl\""),
          { "Cmnd_Alias SLOTS_WEB_APP_RUN = /opt/web/current/bin/slotctl ^/opt/web/(releases/[^/.][^/]*|current)"
            "/bin/run( .*)?$\n" }, { "releases/*", NULL } },
        { "the alias from the service name: upper case, '-' as '_', digits kept", CONF2(""),
          { "Cmnd_Alias SLOTS_WEB_APP2_CTL = /usr/bin/true \"\", ",
            "web-app2 ALL = (slot01, slot02) NOPASSWD: NOSETENV: SLOTS_WEB_APP2_CTL\n",
            "web-app2 ALL = (web-app2 : ALL) !SLOTS_WEB_APP2_CTL\n" },
          { "--preserve-env", "_RUN" } },
        { "app_root \"/\": the launcher's paths start at the root, never \"//\"", CONF2(ROOT_RUN),
          { "Cmnd_Alias SLOTS_WEB_APP2_RUN = /releases/*/bin/run, /current/bin/run\n",
            "#   sudo -n -u slotNN --preserve-env=LIST -- LAUNCHER ARGS...\n",
            "!SLOTS_WEB_APP2_CTL, !SLOTS_WEB_APP2_RUN\n" },
          { "//", "SLOTCTL" } },
        { "app_root \"/\" through slotctl: the expression starts at the root",
          CONF2(ROOT_RUN ", \"slotctl\": \"/usr/bin/slotctl\""),
          { "SLOTS_WEB_APP2_RUN = /usr/bin/slotctl ^/(releases/[^/.][^/]*|current)/bin/run( .*)?$\n",
            "-- SLOTCTL LAUNCHER ARGS...\n" },
          { "^//", NULL } },
        { "'.' and '+' in app_root and launcher match only themselves in slotctl's expression",
          CONF2(", \"app_root\": \"/opt/web.v2\", \"launcher\": \"run+x.sh\", \"slotctl\": \"/opt/sl.ctl\""),
          { "= /opt/sl.ctl ^/opt/web[.]v2/(releases/[^/.][^/]*|current)/bin/run[+]x[.]sh( .*)?$\n" },
          { "web.v2/", NULL } },
        { "run_as_group: the launcher's rule names the group, the CTL rule none",
          CONF2(RUN ", \"run_as_group\": \"render\""),
          { "(slot01, slot02) NOPASSWD: NOSETENV: SLOTS_WEB_APP2_CTL, \\\n\t(slot01, slot02 : render) NOPASSWD: "
            "NOSETENV: SLOTS_WEB_APP2_RUN\n",
            "#   sudo -n -u slotNN [-g RUN_AS_GROUP] --preserve-env=LIST -- LAUNCHER ARGS...\n" },
          { NULL, NULL } },
        { "twelve slots: the runas list breaks its line after every tenth",
          "{\"service\": \"web\", \"slots\": 12}",
          { "(slot01, slot02, slot03, slot04, slot05, slot06, slot07, slot08, slot09, slot10, \\\n\tslot11, "
            "slot12)" },
          { "slot13", NULL } },
        { "sudo_env \"PATH*\" covers PATH: secure_path off",
          CONF2(RUN ", \"sudo_env\": [\"LANG\", \"PATH*\"]"),
          { "env_keep = \"LANG PATH*\", !secure_path\n" }, { NULL, NULL } },
        { "sudo_env \"P*\" covers PATH too",
          CONF2(RUN ", \"sudo_env\": [\"P*\"]"),
          { "env_keep = \"P*\", !secure_path\n" }, { NULL, NULL } },
        { "sudo_env \"PATHS*\" and \"LC_*\" do not: secure_path stays",
          CONF2(RUN ", \"sudo_env\": [\"PATHS*\", \"LC_*\"]"),
          { "env_keep = \"PATHS* LC_*\"\n" }, { "secure_path", NULL } },
};

static void test_sudoers(void **state)
{
        int failures = 0;

        (void) state;
        for (size_t i = 0; i < N_ELEM(sudoers); i++) {
                struct slots_config *c = unit_config(sudoers[i].conf);
                struct slots_error e;
                size_t len = 0;
                char *text;

                slots_error_clear(&e);
                text = slots_dropin_sudoers(c, &len, &e);
                if (!text || strlen(text) != len || len == 0 || text[len - 1] != '\n') {
                        ROW_FAIL("%s: no drop-in: %s", sudoers[i].what, e.reason);
                } else {
                        failures += unit_holds(sudoers[i].what, text, sudoers[i].has, N_ELEM(sudoers[i].has),
                                               sudoers[i].lacks, N_ELEM(sudoers[i].lacks));
                }
                free(text);
                slots_config_free(c);
        }
        if (failures)
                fail_msg("%d failures", failures);
}

/* Paths a sudoers rule cannot carry literally: invalid, naming the config, nothing rendered. */
static const char *const unsafe[] = {
        CONF(", \"app_root\": \"/opt/web,x\", \"launcher\": \"run\""),
        CONF(", \"app_root\": \"/opt/we b\", \"launcher\": \"run\""),
        CONF(", \"app_root\": \"/opt/web\", \"launcher\": \"r*n\""),
        CONF(", \"app_root\": \"/opt/web\", \"launcher\": \"run\", \"slotctl\": \"/opt/slot:ctl\""),
        CONF(", \"app_root\": \"/opt/web\", \"launcher\": \"run\", \"slotctl\": \"/opt/slot=ctl\""),
        /* Even with no launcher, app_root and slotctl are looked at. */
        CONF(", \"app_root\": \"/opt/w\\\\b\""),
};

static void test_sudoers_unsafe(void **state)
{
        int failures = 0;

        (void) state;
        for (size_t i = 0; i < N_ELEM(unsafe); i++) {
                struct slots_config *c = unit_config(unsafe[i]);
                struct slots_error e;
                size_t len = 0;
                char *text;

                slots_error_clear(&e);
                text = slots_dropin_sudoers(c, &len, &e);
                if (text)
                        ROW_FAIL("%s: rendered:\n%s", unsafe[i], text);
                else if (e.kind != SLOTS_ERR_INVALID || strcmp(e.object, "/etc/slots/slots.conf") != 0 ||
                         !strstr(e.reason, "only letters, digits and / . _ + - @"))
                        ROW_FAIL("%s: kind %d, %s: %s", unsafe[i], (int) e.kind, e.object, e.reason);
                free(text);
                slots_config_free(c);
        }
        if (failures)
                fail_msg("%d failures", failures);
}

/* The slotctl config: exactly the keys and lists each config gives. */
static const struct {
        const char *what;
        const char *conf;
        const char *json;               /* the whole file */
} slotctl[] = {
        { "neither docs_root nor a launcher: the state folders, no docs_root", CONF(""),
          "{\n  \"allowed_cwd\": [\n    \"/var/lib/slots/web-app/state\"\n  ],\n  \"allowed_exec\": []\n}\n" },
        { "app_root without a launcher allows no program", CONF(", \"app_root\": \"/opt/web\""),
          "{\n  \"allowed_cwd\": [\n    \"/var/lib/slots/web-app/state\"\n  ],\n  \"allowed_exec\": []\n}\n" },
        { "app_root \"/\": the releases below the root", CONF(ROOT_RUN),
          "{\n  \"allowed_cwd\": [\n    \"/var/lib/slots/web-app/state\"\n  ],\n  \"allowed_exec\": [\n    \"/releases/*/bin/run\"\n  ]\n}\n" },
        { "docs_root and a launcher", CONF(RUN ", \"docs_root\": \"/srv/docs\""),
          "{\n  \"allowed_cwd\": [\n    \"/srv/docs\",\n    \"/var/lib/slots/web-app/state\"\n  ],\n  \"allowed_exec\": [\n"
          "    \"/opt/web/releases/*/bin/run\"\n  ],\n  \"docs_root\": \"/srv/docs\"\n}\n" },
        { "docs_root only",  CONF(", \"docs_root\": \"/srv/docs\""),
          "{\n  \"allowed_cwd\": [\n    \"/srv/docs\",\n    \"/var/lib/slots/web-app/state\"\n  ],\n  \"allowed_exec\": [],\n"
          "  \"docs_root\": \"/srv/docs\"\n}\n" },
        { "slots_root \"/\": the state folders below the root", CONF(", \"slots_root\": \"/\""),
          "{\n  \"allowed_cwd\": [\n    \"/state\"\n  ],\n  \"allowed_exec\": []\n}\n" },
};

static void test_slotctl(void **state)
{
        int failures = 0;

        (void) state;
        for (size_t i = 0; i < N_ELEM(slotctl); i++) {
                struct slots_config *c = unit_config(slotctl[i].conf);
                size_t len = 0;
                char *text = slots_dropin_slotctl_json(c, &len);

                if (!text || strlen(text) != len)
                        ROW_FAIL("%s: no text", slotctl[i].what);
                else if (strcmp(text, slotctl[i].json) != 0)
                        ROW_FAIL("%s: got\n%s\nwant\n%s", slotctl[i].what, text, slotctl[i].json);
                free(text);
                slots_config_free(c);
        }
        if (failures)
                fail_msg("%d failures", failures);
}

/* The drop-in's name: sudo reads it (no '.', no '~'), and a short buffer cuts it, never overflows. */
static void test_sudoers_name(void **state)
{
        struct slots_config *c = unit_config(CONF(""));
        char buf[64], small[8];

        (void) state;
        assert_string_equal(slots_dropin_sudoers_name(c, buf, sizeof(buf)), "slots-web-app");
        assert_string_equal(slots_dropin_sudoers_name(c, small, sizeof(small)), "slots-w");
        slots_config_free(c);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_sudoers),
                cmocka_unit_test(test_sudoers_unsafe),
                cmocka_unit_test(test_slotctl),
                cmocka_unit_test(test_sudoers_name),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
