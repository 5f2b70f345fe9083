/*
 * The account plan of slots-provision (provision-accounts.c) over account files held in
 * memory: no root, no files, no NSS.  Each row: the starting passwd and group (shadow,
 * subuid, subgid), the config, and the plan (the account lines it would write) or the
 * conflicts with their fixes, the slot's identity (identity.c's verdict) among them.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "identity-look.h"
#include "provision-int.h"
#include "strbuf.h"
#include "unit.h"
#include "unit-text.h"

/* What prov_identity_files() read for the run (provision.c frees it with the run). */
static void free_idfiles(struct prov_run *x)
{
        for (int i = 0; x->idfiles && i < 3; i++)
                slots_idfile_free(&x->idfiles[i]);
        free(x->idfiles);
        free(x->nsswitch);
}

/* Every conflict and warning as "KIND object: text | fix: fix" lines. */
static void collect(void *arg, const struct slots_prov_msg *m)
{
        struct strbuf *b = arg;

        if (m->kind == SLOTS_PROV_CHANGE)
                return;
        strbuf_addf(b, "%s %s: %s | fix: %s\n", m->kind == SLOTS_PROV_PROBLEM ? "conflict" : "warning", m->object,
                    m->text, m->fix);
}

#define PASSWD "root:x:0:0:root:/root:/bin/bash\nsvc:x:1000:1000::/home/svc:/bin/sh\n"
#define GROUP "root:x:0:\nsvc:x:1000:\n"
/* Two slots in 20000-20009 (or from uid_base), slots_root /srv/slots, shell /bin/bash. */
#define KEYS "\"service\": \"svc\", \"slots\": 2, \"slots_root\": \"/srv/slots\", \"shell\": \"/bin/bash\""
#define CONF "{" KEYS ", \"uid_min\": 20000, \"uid_max\": 20009}"
#define CONF_BASE "{" KEYS ", \"uid_base\": 30000}"

static const struct plan_row {
        const char *what, *passwd, *group, *conf;
        const char *plan;               /* the account lines, each ending in "\n" ("" when all is kept) */
        const char *conflicts;          /* substrings of the messages, tab-separated; NULL for none */
        const char *shadow, *subuid, *subgid;   /* NULL: empty */
} plan_rows[] = {
        { "an empty pool is created from the top of the range", PASSWD, GROUP, CONF,
          "create group slotshared (gid 20009)\n"
          "create group slot01 (gid 20008)\n"
          "create account slot01 (uid 20008, group slot01, home /srv/slots/home/slot01, shell /bin/bash, "
          "password locked)\n"
          "add slot01 to group slotshared\n"
          "create group slot02 (gid 20007)\n"
          "create account slot02 (uid 20007, group slot02, home /srv/slots/home/slot02, shell /bin/bash, "
          "password locked)\n"
          "add slot02 to group slotshared\n",
          NULL, NULL, NULL, NULL },
        { "a taken id is passed over", PASSWD "other:x:20009:20009::/:/bin/sh\n", GROUP "other:x:20009:\n", CONF,
          "create group slotshared (gid 20008)\n"
          "create group slot01 (gid 20007)\n"
          "create account slot01 (uid 20007, group slot01, home /srv/slots/home/slot01, shell /bin/bash, "
          "password locked)\n"
          "add slot01 to group slotshared\n"
          "create group slot02 (gid 20006)\n"
          "create account slot02 (uid 20006, group slot02, home /srv/slots/home/slot02, shell /bin/bash, "
          "password locked)\n"
          "add slot02 to group slotshared\n",
          NULL, NULL, NULL, NULL },
        { "a whole pool is kept",
          PASSWD "slot01:x:20008:20008::/srv/slots/home/slot01:/bin/bash\n"
                 "slot02:x:20007:20007::/srv/slots/home/slot02:/bin/bash\n",
          GROUP "slotshared:x:20009:slot01,slot02\nslot01:x:20008:\nslot02:x:20007:\n", CONF,
          /* shadow and gshadow are empty here: only their entries are added (with the members) */
          "add gshadow entry for group slotshared\n"
          "add gshadow entry for group slot01\n"
          "add locked shadow entry for slot01\n"
          "add gshadow entry for group slot02\n"
          "add locked shadow entry for slot02\n",
          NULL, NULL, NULL, NULL },
        { "uid_base fixes each id", PASSWD, GROUP, CONF_BASE,
          "create group slotshared (gid 30000)\n"
          "create group slot01 (gid 30001)\n"
          "create account slot01 (uid 30001, group slot01, home /srv/slots/home/slot01, shell /bin/bash, "
          "password locked)\n"
          "add slot01 to group slotshared\n"
          "create group slot02 (gid 30002)\n"
          "create account slot02 (uid 30002, group slot02, home /srv/slots/home/slot02, shell /bin/bash, "
          "password locked)\n"
          "add slot02 to group slotshared\n",
          NULL, NULL, NULL, NULL },
        { "a slot with another shell: a conflict with its fix",
          PASSWD "slot01:x:20008:20008::/srv/slots/home/slot01:/bin/sh\n", GROUP "slot01:x:20008:\n", CONF, NULL,
          "conflict slot01: slot01 has shell /bin/sh, configured /bin/bash | fix: usermod -s /bin/bash slot01\n",
          NULL, NULL, NULL },
        { "a slot with another home",
          PASSWD "slot01:x:20008:20008::/home/slot01:/bin/bash\n", GROUP "slot01:x:20008:\n", CONF, NULL,
          "conflict slot01: slot01 has home /home/slot01, planned /srv/slots/home/slot01 | fix: usermod -d "
          "/srv/slots/home/slot01 slot01", NULL, NULL, NULL },
        { "a slot outside the range",
          PASSWD "slot01:x:500:500::/srv/slots/home/slot01:/bin/bash\n", GROUP "slot01:x:500:\n", CONF, NULL,
          "conflict slot01: slot01 exists with uid 500, planned 20008: 500 is outside 20000-20009 (uid_min-uid_max)",
          NULL, NULL, NULL },
        { "uid_base: the slot's uid is another account's",
          PASSWD "app:x:30001:30001::/:/bin/sh\n", GROUP, CONF_BASE, NULL,
          "planned uid 30001 for slot01 (uid_base + 1) is taken by the account app | fix: renumber or remove the "
          "account app", NULL, NULL, NULL },
        { "a primary gid that is not the uid",
          PASSWD "slot01:x:20008:1000::/srv/slots/home/slot01:/bin/bash\n", GROUP "slot01:x:20008:\n", CONF, NULL,
          "slot01 has primary gid 1000, planned 20008 (its group slot01, GID = UID) | fix: usermod -g 20008 slot01",
          NULL, NULL, NULL },
        { "a group whose gid another group holds as the slot's uid",
          PASSWD "slot01:x:20008:20008::/srv/slots/home/slot01:/bin/bash\n", GROUP "other:x:20008:\n", CONF, NULL,
          "planned gid 20008 for the group slot01 (the uid of slot01) is taken by the group other", NULL, NULL, NULL },
        { "a malformed line", PASSWD "slot01:x:abc:20008::/srv/slots/home/slot01:/bin/bash\n", GROUP, CONF, NULL,
          "conflict slot01: the account's line in /etc/passwd is malformed | fix: repair the line with vipw",
          NULL, NULL, NULL },
        { "the shared group at another gid than uid_base", PASSWD, GROUP "slotshared:x:555:\n", CONF_BASE, NULL,
          "group slotshared exists with gid 555, planned 30000 (uid_base) | fix: groupmod -g 30000 slotshared",
          NULL, NULL, NULL },
        { "no service account in the image", "root:x:0:0::/:/bin/sh\n", "root:x:0:\n", CONF, NULL,
          "conflict svc: the service account is not in the tree's /etc/passwd", NULL, NULL, NULL },
        /* The slot's identity (identity.c's verdict), each a conflict with its fix. */
        { "a slot with subordinate ids (by name and by uid)", PASSWD, GROUP, CONF, NULL,
          "conflict slot01: slot01 has subordinate uids 100000-165535 (/etc/subuid) and gids 100000-165535 "
          "(/etc/subgid): in a user namespace of its own it runs processes under other ids | fix: usermod "
          "--del-subuids 100000-165535 --del-subgids 100000-165535 slot01",
          NULL, "slot01:100000:65536\n", "slot01:100000:65536\n" },
        { "subordinate ids of an existing slot, by its uid",
          PASSWD "slot01:x:20008:20008::/srv/slots/home/slot01:/bin/bash\n", GROUP "slot01:x:20008:\n", CONF, NULL,
          "slot01 has subordinate uids 200000-200999 (/etc/subuid): in a user namespace",
          "slot01:!:1::::::\n", "20008:200000:1000\n", NULL },
        { "a slot in the sudo group",
          PASSWD "slot01:x:20008:20008::/srv/slots/home/slot01:/bin/bash\n",
          GROUP "sudo:x:27:alice,slot01\nslot01:x:20008:\n", CONF, NULL,
          "conflict slot01: slot01 is a member of sudo: a slot belongs to no group but its own and slotshared | "
          "fix: gpasswd -d slot01 sudo\n",
          "slot01:!:1::::::\n", NULL, NULL },
        { "a slot in the service's group", PASSWD "slot01:x:20008:20008::/srv/slots/home/slot01:/bin/bash\n",
          "root:x:0:\nsvc:x:1000:slot01\nslot01:x:20008:\n", CONF, NULL,
          "slot01 is a member of svc: a slot belongs to no group but its own and slotshared | fix: gpasswd -d "
          "slot01 svc", "slot01:!:1::::::\n", NULL, NULL },
        { "a slot with a usable password", PASSWD "slot01:x:20008:20008::/srv/slots/home/slot01:/bin/bash\n",
          GROUP "slot01:x:20008:\n", CONF, NULL,
          "conflict slot01: slot01 has a usable password\t| fix: usermod -L slot01\n", "slot01:$6$salt$hash:1::::::\n",
          NULL, NULL },
        { "a slot with an empty password field", PASSWD "slot01:x:20008:20008::/srv/slots/home/slot01:/bin/bash\n",
          GROUP "slot01:x:20008:\n", CONF, NULL,
          "slot01 has an empty password field in its shadow entry: it needs no password at all | fix: usermod -L "
          "slot01", "slot01::1::::::\n", NULL, NULL },
        /* pam_unix reads the passwd field unless it is x: a hash there is the password, whatever shadow holds. */
        { "a hash in the passwd field beside a locked shadow entry",
          PASSWD "slot01:abJnggxhB/yWI:20008:20008::/srv/slots/home/slot01:/bin/bash\n", GROUP "slot01:x:20008:\n",
          CONF, NULL,
          "conflict slot01: slot01 has a usable password hash (DES) in its passwd entry: it could log in with a "
          "password (pam_unix reads the passwd field, not the shadow entry, unless it is x) | fix: usermod -L slot01\n",
          "slot01:!:1::::::\n", NULL, NULL },
        { "an empty passwd field beside a locked shadow entry",
          PASSWD "slot01::20008:20008::/srv/slots/home/slot01:/bin/bash\n", GROUP "slot01:x:20008:\n", CONF, NULL,
          "conflict slot01: slot01 has an empty password field in its passwd entry", "slot01:!:1::::::\n", NULL,
          NULL },
        { "x in passwd and no shadow entry: no password matches",
          PASSWD "slot01:x:20008:20008::/srv/slots/home/slot01:/bin/bash\n",
          GROUP "slotshared:x:20009:slot01\nslot01:x:20008:\n", CONF, NULL, NULL, NULL, NULL, NULL },
        { "a locked slot in its own and the shared group is kept",
          PASSWD "slot01:x:20008:20008::/srv/slots/home/slot01:/bin/bash\n",
          GROUP "slotshared:x:20009:slot01\nslot01:x:20008:\n", CONF,
          "add gshadow entry for group slotshared\n"
          "add gshadow entry for group slot01\n"
          "create group slot02 (gid 20007)\n"
          "create account slot02 (uid 20007, group slot02, home /srv/slots/home/slot02, shell /bin/bash, "
          "password locked)\n"
          "add slot02 to group slotshared\n",
          NULL, "slot01:*:1::::::\n", "alice:100000:65536\n", NULL },
        { "a range whose last id is taken", PASSWD "other:x:20000:20000::/:/bin/sh\n", GROUP,
          "{" KEYS ", \"uid_min\": 20000, \"uid_max\": 20002}", NULL,
          "no free id left for slot02 in 20000-20002", NULL, NULL, NULL },
};

static int plan_one(const struct plan_row *row)
{
        struct slots_config *c = unit_config(row->conf);
        struct strbuf msgs = { 0 }, plan = { 0 };
        struct slots_prov_opts o = { .host = false, .lastchg = 1, .report = collect, .arg = &msgs };
        struct slots_error e;
        struct prov_run x = { .rootfd = -1, .etcfd = -1, .c = c, .o = &o, .e = &e, .quiet = true, .dry = true };
        const char *const files[] = { row->passwd, row->group, row->shadow ? row->shadow : "", "" };
        int failures = 0, r;

        slots_error_clear(&e);
        x.db = slots_accounts_new();
        assert_non_null(x.db);
        for (int f = 0; f < SLOTS_ACCT_NFILES; f++)
                assert_int_equal(slots_accounts_set_text(x.db, f, files[f], strlen(files[f]), true), 0);
        x.id_min = c->uid_range_set ? c->uid_min : 0;
        x.id_max = c->uid_range_set ? c->uid_max : 0;
        assert_true(asprintf(&x.range, "%u-%u (uid_min-uid_max)", (unsigned) x.id_min, (unsigned) x.id_max) > 0);
        x.subuid = row->subuid ? strdup(row->subuid) : NULL;
        x.subgid = row->subgid ? strdup(row->subgid) : NULL;
        r = prov_plan_accounts(&x);
        if (r < 0)
                ROW_FAIL("%s: the plan failed: %s: %s", row->what, e.object, e.reason);
        for (size_t i = 0; i < x.n_acct_lines; i++)
                strbuf_addf(&plan, "%s\n", x.acct_lines[i].text);
        if (!row->conflicts && x.problems)
                ROW_FAIL("%s: %u conflicts, none planned:\n%s", row->what, x.problems, strbuf_str(&msgs));
        if (row->conflicts && !x.problems)
                ROW_FAIL("%s: no conflict; the plan:\n%s", row->what, strbuf_str(&plan));
        if (row->conflicts) {
                char *all = strdup(row->conflicts), *save = NULL;

                assert_non_null(all);
                for (char *s = strtok_r(all, "\t", &save); s; s = strtok_r(NULL, "\t", &save))
                        failures += unit_holds(row->what, strbuf_str(&msgs), (const char *const *) &s, 1, NULL, 0);
                free(all);
        }
        /* A plan is only written without conflicts, so with them it is not compared. */
        if (row->plan && strcmp(strbuf_str(&plan), row->plan) != 0)
                ROW_FAIL("%s: the plan differs; wanted:\n%sgot:\n%s", row->what, row->plan, strbuf_str(&plan));
        for (size_t i = 0; i < x.n_acct_lines; i++)
                free(x.acct_lines[i].text);
        free(x.acct_lines);
        free(x.by_uid);
        free(x.slots);
        free(x.table_group);
        free(x.range);
        free(x.subuid);
        free(x.subgid);
        free_idfiles(&x);
        strbuf_free(&x.text);
        strbuf_free(&x.fix);
        strbuf_free(&msgs);
        strbuf_free(&plan);
        slots_accounts_free(x.db);
        slots_config_free(c);
        return failures;
}

static void test_plan(void **state)
{
        int failures = 0;

        (void) state;
        for (size_t i = 0; i < N_ELEM(plan_rows); i++)
                failures += plan_one(&plan_rows[i]);
        assert_int_equal(failures, 0);
}

/* Each account line names the slot it was planned for; the shared group's names none. */
static void test_plan_slots(void **state)
{
        struct slots_config *c = unit_config(CONF);
        struct slots_prov_opts o = { .host = false, .lastchg = 1 };
        struct slots_error e;
        struct prov_run x = { .rootfd = -1, .etcfd = -1, .c = c, .o = &o, .e = &e, .quiet = true, .dry = true };

        (void) state;
        x.db = slots_accounts_new();
        assert_int_equal(slots_accounts_set_text(x.db, SLOTS_ACCT_PASSWD, PASSWD, strlen(PASSWD), true), 0);
        assert_int_equal(slots_accounts_set_text(x.db, SLOTS_ACCT_GROUP, GROUP, strlen(GROUP), true), 0);
        x.id_min = 20000;
        x.id_max = 20009;
        x.range = strdup("20000-20009");
        assert_int_equal(prov_plan_accounts(&x), 0);
        assert_int_equal(x.n_acct_lines, 7);
        for (size_t i = 0; i < x.n_acct_lines; i++) {
                const char *t = x.acct_lines[i].text;
                unsigned want = strstr(t, "slot02") ? 2 : strstr(t, "slot01") ? 1 : 0;

                assert_int_equal(x.acct_lines[i].slot, want);
                free(x.acct_lines[i].text);
        }
        free(x.acct_lines);
        free(x.by_uid);
        free(x.slots);
        free(x.table_group);
        free(x.range);
        free_idfiles(&x);
        strbuf_free(&x.text);
        strbuf_free(&x.fix);
        slots_accounts_free(x.db);
        slots_config_free(c);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_plan),
                cmocka_unit_test(test_plan_slots),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
