/*
 * The pool as LDIF (ldif.c), for every kind of config: the whole text of a small pool
 * against a golden copy; slots_root "/" and a prefix of its own; base DNs that LDIF cannot
 * carry as text (not ASCII, a trailing space) come out base64, for each length of the last
 * group; and each refusal (no uid_base, a base DN that is empty or more than one line,
 * slots_root or shell not ASCII) with its kind, object and fix, and no text.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "ldif.h"
#include "unit.h"
#include "unit-text.h"

/* The LDIF of a config, checked to be as long as it says and to end with a newline. */
static char *ldif_of(const char *conf, const char *base)
{
        struct slots_config *c = unit_config(conf);
        struct slots_error e;
        size_t len = 7;
        int err = 0;
        char *text;

        slots_error_clear(&e);
        text = slots_ldif(c, base, &len, &err, &e);
        slots_config_free(c);
        if (!text)
                fail_msg("no LDIF for %s below \"%s\": %s: %s", conf, base, e.object, e.reason);
        assert_int_equal(strlen(text), len);
        assert_true(len > 0 && text[len - 1] == '\n');
        return text;
}

static const char golden[] =
        "# The slot pool of the service video-studio: 2 slots, ids 70000..70002 (uid_base 70000).\n"
        "# Load with: ldapadd -f FILE (the entry ou=slots,dc=example,dc=org must exist)\n"
        "\n"
        "dn: cn=slot01,ou=slots,dc=example,dc=org\n"
        "objectClass: posixGroup\n"
        "cn: slot01\n"
        "gidNumber: 70001\n"
        "\n"
        "dn: uid=slot01,ou=slots,dc=example,dc=org\n"
        "objectClass: account\n"
        "objectClass: posixAccount\n"
        "objectClass: shadowAccount\n"
        "uid: slot01\n"
        "cn: slot01\n"
        "uidNumber: 70001\n"
        "gidNumber: 70001\n"
        "homeDirectory: /var/lib/slots/video-studio/home/slot01\n"
        "loginShell: /usr/sbin/nologin\n"
        "userPassword: {crypt}!\n"
        "\n"
        "dn: cn=slot02,ou=slots,dc=example,dc=org\n"
        "objectClass: posixGroup\n"
        "cn: slot02\n"
        "gidNumber: 70002\n"
        "\n"
        "dn: uid=slot02,ou=slots,dc=example,dc=org\n"
        "objectClass: account\n"
        "objectClass: posixAccount\n"
        "objectClass: shadowAccount\n"
        "uid: slot02\n"
        "cn: slot02\n"
        "uidNumber: 70002\n"
        "gidNumber: 70002\n"
        "homeDirectory: /var/lib/slots/video-studio/home/slot02\n"
        "loginShell: /usr/sbin/nologin\n"
        "userPassword: {crypt}!\n"
        "\n"
        "dn: cn=slotshared,ou=slots,dc=example,dc=org\n"
        "objectClass: posixGroup\n"
        "cn: slotshared\n"
        "gidNumber: 70000\n"
        "memberUid: slot01\n"
        "memberUid: slot02\n";

/* The defaults: every entry of a two-slot pool, byte for byte. */
static void test_golden(void **state)
{
        char *text;

        (void) state;
        text = ldif_of("{\"service\": \"video-studio\", \"slots\": 2, \"uid_base\": 70000}",
                       "ou=slots,dc=example,dc=org");
        if (strcmp(text, golden) != 0)
                fail_msg("the LDIF differs from the golden copy:\n%s", text);
        free(text);
}

/* Parts of the text that other configs and base DNs must (and must not) produce. */
static const struct {
        const char *what;
        const char *conf;
        const char *base;
        const char *has[4];
        const char *lacks[1];
} rows[] = {
        { "slots_root \"/\": homes directly below /home, no double slash",
          "{\"service\": \"web\", \"slots\": 1, \"uid_base\": 5000, \"slots_root\": \"/\"}", "dc=x",
          { "homeDirectory: /home/slot01\n", "uidNumber: 5001\n" }, { "//" } },
        { "a prefix and a shell of its own",
          "{\"service\": \"web\", \"slots\": 1, \"uid_base\": 5000, \"prefix\": \"web\", \"shell\": \"/bin/sh\","
          " \"slots_root\": \"/srv/pool\"}", "dc=x",
          { "dn: cn=webshared,dc=x\n", "cn: webshared\ngidNumber: 5000\nmemberUid: slot01\n",
            "loginShell: /bin/sh\n", "homeDirectory: /srv/pool/home/slot01\n" }, { "slotshared" } },
        { "twelve slots: each in the shared group, the last id uid_base + 12",
          "{\"service\": \"web\", \"slots\": 12, \"uid_base\": 5000}", "dc=x",
          { "memberUid: slot11\nmemberUid: slot12\n", "uidNumber: 5012\n", "ids 5000..5012" }, { "slot13" } },
        /* Base64 for a DN that is not ASCII; the last group of 3 bytes has 1 byte here... */
        { "a base DN that is not ASCII is base64 (one byte in the last group)",
          "{\"service\": \"web\", \"slots\": 1, \"uid_base\": 5000}", "ou=Z\xc3\xbcrich,dc=example",
          { "dn:: Y249c2xvdDAxLG91PVrDvHJpY2gsZGM9ZXhhbXBsZQ==\n",
            "dn:: dWlkPXNsb3QwMSxvdT1aw7xyaWNoLGRjPWV4YW1wbGU=\n",
            "dn:: Y249c2xvdHNoYXJlZCxvdT1aw7xyaWNoLGRjPWV4YW1wbGU=\n" }, { "dn: " } },
        /* ...two bytes, and none (a trailing space is not a SAFE-STRING either). */
        { "a base DN that ends in a space is base64 (two bytes in the last group)",
          "{\"service\": \"web\", \"slots\": 1, \"uid_base\": 5000}", "ou=a,dc=b ",
          { "dn:: Y249c2xvdDAxLG91PWEsZGM9YiA=\n" }, { "dn: " } },
        { "a space in front of the comma and one at the end: base64 with no padding",
          "{\"service\": \"web\", \"slots\": 1, \"uid_base\": 5000}", "ou=caf\xc3\xa9 ,dc=x",
          { "dn:: Y249c2xvdDAxLG91PWNhZsOpICxkYz14\n" }, { "dn: " } },
        /* The one value rule (dirfix.c's): a control byte is no safe string either. */
        { "a base DN with a tab is base64",
          "{\"service\": \"web\", \"slots\": 1, \"uid_base\": 5000}", "ou=a\tb",
          { "dn:: Y249c2xvdDAxLG91PWEJYg==\n" }, { "dn: " } },
};

static void test_rows(void **state)
{
        int failures = 0;

        (void) state;
        for (size_t i = 0; i < N_ELEM(rows); i++) {
                char *text = ldif_of(rows[i].conf, rows[i].base);

                failures += unit_holds(rows[i].what, text, rows[i].has, N_ELEM(rows[i].has), rows[i].lacks,
                                       N_ELEM(rows[i].lacks));
                free(text);
        }
        if (failures)
                fail_msg("%d failures", failures);
}

/* What the LDIF refuses: no text, the errno, the kind invalid, the object and the fix named. */
static const struct {
        const char *what;
        const char *conf;
        const char *base;
        int err;
        const char *object;
        const char *reason;             /* part of the reason */
        const char *fix;                /* part of the fix */
} refusals[] = {
        { "no uid_base: each host would pick its own ids", "{\"service\": \"web\", \"slots\": 2}", "dc=x", -EINVAL,
          "/etc/slots/slots.conf", "needs \"uid_base\"", "set \"uid_base\" in /etc/slots/slots.conf" },
        { "an empty base DN", "{\"service\": \"web\", \"slots\": 2, \"uid_base\": 5000}", "", -EINVAL, "--ldif",
          "one non-empty line", "--ldif ou=slots,dc=example,dc=org" },
        { "a base DN of two lines", "{\"service\": \"web\", \"slots\": 2, \"uid_base\": 5000}", "dc=x\ndn: cn=root",
          -EINVAL, "--ldif", "one non-empty line", "--ldif ou=slots" },
        { "a carriage return in the base DN", "{\"service\": \"web\", \"slots\": 2, \"uid_base\": 5000}",
          "dc=x\rdc=y", -EINVAL, "--ldif", "one non-empty line", "--ldif ou=slots" },
        { "slots_root not ASCII", "{\"service\": \"web\", \"slots\": 2, \"uid_base\": 5000, "
          "\"slots_root\": \"/srv/z\xc3\xbcrich\"}", "dc=x", -EBADMSG, "/etc/slots/slots.conf",
          "slots_root holds a byte that is not ASCII", "choose an ASCII path for \"slots_root\"" },
        { "shell not ASCII", "{\"service\": \"web\", \"slots\": 2, \"uid_base\": 5000, "
          "\"shell\": \"/bin/\xc3\xa9sh\"}", "dc=x", -EBADMSG, "/etc/slots/slots.conf",
          "shell holds a byte that is not ASCII", "choose an ASCII path for \"shell\"" },
};

static void test_refusals(void **state)
{
        int failures = 0;

        (void) state;
        for (size_t i = 0; i < N_ELEM(refusals); i++) {
                struct slots_config *c = unit_config(refusals[i].conf);
                struct slots_error e;
                size_t len = 7;
                int err = 0;
                char *text;

                slots_error_clear(&e);
                text = slots_ldif(c, refusals[i].base, &len, &err, &e);
                if (text)
                        ROW_FAIL("%s: LDIF printed:\n%s", refusals[i].what, text);
                else if (err != refusals[i].err || len != 0)
                        ROW_FAIL("%s: err %d, len %zu; want %d, 0", refusals[i].what, err, len, refusals[i].err);
                else if (e.kind != SLOTS_ERR_INVALID)
                        ROW_FAIL("%s: kind %d, want invalid", refusals[i].what, (int) e.kind);
                else if (strcmp(e.object, refusals[i].object) != 0)
                        ROW_FAIL("%s: object \"%s\", want \"%s\"", refusals[i].what, e.object, refusals[i].object);
                else if (!strstr(e.reason, refusals[i].reason))
                        ROW_FAIL("%s: reason \"%s\" lacks \"%s\"", refusals[i].what, e.reason, refusals[i].reason);
                else if (!strstr(e.fix, refusals[i].fix))
                        ROW_FAIL("%s: fix \"%s\" lacks \"%s\"", refusals[i].what, e.fix, refusals[i].fix);
                free(text);
                slots_config_free(c);
        }
        if (failures)
                fail_msg("%d failures", failures);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_golden),
                cmocka_unit_test(test_rows),
                cmocka_unit_test(test_refusals),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
