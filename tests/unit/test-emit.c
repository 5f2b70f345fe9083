/*
 * The one emitter (src/emit.c) as golden tables: outcome records in; the text on standard
 * error and output, the --json envelope and the journal's fields (cmd_journal_fields, no
 * journald needed) out.  openlog, syslog (and __syslog_chk), sd_booted and
 * sd_journal_sendv are wrapped at link time, so the whole path of cmd_emit() is read back as
 * syslog and journald would get it; getpwuid_r is wrapped for the admin's name, getuid for
 * who runs the command (root unless a row says otherwise), whoever runs the test.
 */
#include <errno.h>
#include <fcntl.h>
#include <pwd.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>
#include <sys/uio.h>
#include <unistd.h>
#include <cmocka.h>
#include <jansson.h>

#include "emit.h"
#include "unit.h"

/* ---- the wraps: passwd, syslog, the journal ---- */

static bool pw_found = true;
static char pw_name[] = "svc";
static uid_t caller_uid;        /* what getuid answers */

uid_t __wrap_getuid(void);
uid_t __wrap_getuid(void)
{
        return caller_uid;
}

int __wrap_getpwuid_r(uid_t uid, struct passwd *pw, char *buf, size_t size, struct passwd **res);
int __wrap_getpwuid_r(uid_t uid, struct passwd *pw, char *buf, size_t size, struct passwd **res)
{
        (void) buf;
        (void) size;
        memset(pw, 0, sizeof(*pw));
        pw->pw_name = pw_name;
        pw->pw_uid = uid;
        *res = pw_found ? pw : NULL;
        return 0;
}

static struct {
        int opens, facility, lines, priority;
        char ident[64], last[4096];
} logged;

void __wrap_openlog(const char *ident, int option, int facility);
void __wrap_syslog(int priority, const char *fmt, ...);
void __wrap___syslog_chk(int priority, int flag, const char *fmt, ...);

void __wrap_openlog(const char *ident, int option, int facility)
{
        (void) option;
        logged.opens++;
        logged.facility = facility;
        snprintf(logged.ident, sizeof(logged.ident), "%s", ident);
}

static void record(int priority, const char *fmt, va_list ap)
{
        logged.lines++;
        logged.priority = priority;
        vsnprintf(logged.last, sizeof(logged.last), fmt, ap);
}

void __wrap_syslog(int priority, const char *fmt, ...)
{
        va_list ap;

        va_start(ap, fmt);
        record(priority, fmt, ap);
        va_end(ap);
}

void __wrap___syslog_chk(int priority, int flag, const char *fmt, ...)
{
        va_list ap;

        (void) flag;
        va_start(ap, fmt);
        record(priority, fmt, ap);
        va_end(ap);
}

static struct {
        int booted;             /* what sd_booted answers */
        int entries;
        char fields[512][1100]; /* the last entry's fields, "NAME=value" */
        int n;
} journal;

int __wrap_sd_booted(void);
int __wrap_sd_journal_sendv(const struct iovec *iov, int n);

int __wrap_sd_booted(void)
{
        return journal.booted;
}

static void keep_fields(const struct iovec *iov, int n)
{
        journal.n = n < 512 ? n : 512;
        for (int i = 0; i < journal.n; i++)
                snprintf(journal.fields[i], sizeof(journal.fields[i]), "%.*s", (int) iov[i].iov_len,
                         (const char *) iov[i].iov_base);
}

int __wrap_sd_journal_sendv(const struct iovec *iov, int n)
{
        journal.entries++;
        keep_fields(iov, n);
        return 0;
}

/* How many fields of the last entry are exactly `field`. */
static int has_field(const char *field)
{
        int k = 0;

        for (int i = 0; i < journal.n; i++)
                k += strcmp(journal.fields[i], field) == 0;
        return k;
}

/* The value of the last entry's field `name`, or NULL. */
static const char *field_value(const char *name)
{
        size_t n = strlen(name);

        for (int i = 0; i < journal.n; i++)
                if (strncmp(journal.fields[i], name, n) == 0 && journal.fields[i][n] == '=')
                        return journal.fields[i] + n + 1;
        return NULL;
}

/* ---- running cmd_emit with standard output and error in files ---- */

static char out_text[16384], err_text[16384];

static void read_back(int fd, char *buf, size_t size)
{
        ssize_t n = pread(fd, buf, size - 1, 0);

        assert_true(n >= 0);
        buf[n] = '\0';
        close(fd);
}

/* cmd_emit(o) with stdout and stderr caught in out_text and err_text; its exit status. */
static int emit_caught(struct cmd_outcome *o)
{
        char po[] = "/tmp/slots-emit-out.XXXXXX", pe[] = "/tmp/slots-emit-err.XXXXXX";
        int fo = mkstemp(po), fe = mkstemp(pe), so, se, r;

        assert_true(fo >= 0 && fe >= 0);
        unlink(po);
        unlink(pe);
        fflush(stdout);
        fflush(stderr);
        so = dup(1);
        se = dup(2);
        assert_int_equal(dup2(fo, 1), 1);
        assert_int_equal(dup2(fe, 2), 2);
        r = cmd_emit(o);
        fflush(stdout);
        fflush(stderr);
        assert_int_equal(dup2(so, 1), 1);
        assert_int_equal(dup2(se, 2), 2);
        close(so);
        close(se);
        read_back(fo, out_text, sizeof(out_text));
        read_back(fe, err_text, sizeof(err_text));
        return r;
}

/* ---- the golden table ---- */

enum shape { ASSIGN_REFUSED, ASSIGN_DONE, RELEASE_PENDING, PROVISIONED, DRY_RUN, HOSTILE_OBJECT };

/* The record of each row, as the verbs fill it. */
static void make(struct cmd_outcome *o, enum shape s, bool json)
{
        static const char *const three[] = { "slot01", "slot02", "slot07" };
        struct slots_error e;

        slots_error_clear(&e);
        switch (s) {
        case ASSIGN_REFUSED:
                cmd_outcome_init(o, "assign", json, false);
                o->user = "intruder";
                o->asked = "slot03";
                o->service = "svc";
                slots_error_refuse(&e, -EPERM, "/etc/slots/slots.json", "slot03 is held by another user");
                slots_error_fix(&e, "ask for another slot");
                cmd_outcome_fail(o, "cannot assign slot03", &e);
                cmd_outcome_event(o, CMD_EV_ASSIGN_REFUSED, "refused to assign slot03 to user intruder");
                break;
        case ASSIGN_DONE:
                cmd_outcome_init(o, "assign", json, false);
                o->user = "alice";
                o->slot = 2;
                o->changed = true;
                o->notes_key = "skipped";
                cmd_outcome_note(o, "slot01", "chsh -s /usr/sbin/nologin slot01", "its shell is %s", "/bin/bash");
                cmd_outcome_note(o, NULL, NULL, "and %u more free slots skipped", 3u);
                cmd_outcome_event(o, CMD_EV_ASSIGNED, "assigned slot02 to user alice");
                snprintf(o->line, sizeof(o->line), "slot02");
                o->line_name = "the slot name";
                break;
        case RELEASE_PENDING:
                cmd_outcome_init(o, "release", json, false);
                o->user = "bob";
                o->slot = 4;
                o->changed = true;
                slots_error_set(&e, -EBUSY, "slot04", "a process would not end");
                snprintf(o->fix, sizeof(o->fix), "finish the release: slots-admin release --slot slot04");
                cmd_outcome_fail_st(o, EXIT_REFUSED, "cannot release slot04 (stop)", &e);
                cmd_outcome_event(o, CMD_EV_RELEASE_PENDING, "released slot04, but it is pending");
                break;
        case PROVISIONED:
                cmd_outcome_init(o, "provision", json, false);
                o->listed = true;
                o->root = "/img";
                o->slots = three;
                o->n_slots = 3;
                o->count = 9;
                o->changed = true;
                cmd_outcome_add(o, CMD_NOTE_CHANGE, "slot01", "", "create user slot01", NULL);
                cmd_outcome_add(o, CMD_NOTE_WARNING, NULL, "/img/docs/x", "/img/docs/x has 2 links", "unlink one");
                /* A name a slot chose reaches the terminal escaped, --json exact. */
                cmd_outcome_add(o, CMD_NOTE_WARNING, "slot02", "/img/docs/y\x1b[2J", "left alone", NULL);
                cmd_outcome_event(o, CMD_EV_PROVISIONED, "provisioned: 9 changes");
                snprintf(o->line, sizeof(o->line), "9 changes");
                break;
        case DRY_RUN:
                cmd_outcome_init(o, "release", json, true);
                o->user = "carol";
                o->slot = 5;
                o->changed = true;
                snprintf(o->line, sizeof(o->line), "would release slot05 from user carol");
                o->line_name = "the dry run";
                snprintf(o->closing, sizeof(o->closing), "dry run: nothing was changed");
                break;
        case HOSTILE_OBJECT:
                cmd_outcome_init(o, "release", json, false);
                o->slot = 1;
                slots_error_set(&e, -EIO, "/srv/docs/a\x1b[2Jb", "cannot read it");
                cmd_outcome_fail(o, "cannot release slot01", &e);
                cmd_outcome_event(o, CMD_EV_RELEASE_REFUSED, "refused to release slot01");
                break;
        }
}

static const struct golden {
        enum shape shape;
        int status;
        const char *out;        /* standard output without --json */
        const char *err;        /* standard error */
        const char *fields[8];  /* journal fields that must be there, each once */
        const char *absent[4];  /* fields that must not be there */
        const char *json[6];    /* --json: "key=value" of the envelope ("error.reason=...": nested) */
} golden[] = {
        { ASSIGN_REFUSED, 1, "",
          "slots-admin: cannot assign slot03: /etc/slots/slots.json: slot03 is held by another user\n"
          "slots-admin: fix: ask for another slot\n",
          { "SLOTS_OBJECT=/etc/slots/slots.json", "SLOTS_REASON=slot03 is held by another user",
            "SLOTS_FIX=ask for another slot", "ERRNO=1", "SLOTS_SLOT=slot03", "SLOTS_USER=intruder",
            "SLOTS_RESULT=refused", "SLOTS_SERVICE=svc" },
          { "SLOTS_SLOT_COUNT" },
          { "slot=null", "user=intruder", "changed=false", "error.what=cannot assign slot03",
            "error.fix=ask for another slot", "error.object=/etc/slots/slots.json" } },
        { ASSIGN_DONE, 0, "slot02\n",
          "slots-admin: warning: skipped slot01: its shell is /bin/bash\n"
          "slots-admin: fix: chsh -s /usr/sbin/nologin slot01\n"
          "slots-admin: warning: and 3 more free slots skipped\n",
          { "SLOTS_SLOT=slot02", "SLOTS_USER=alice", "SLOTS_RESULT=done", "SLOTS_ACTION=assign",
            "MESSAGE=assigned slot02 to user alice; by admin (via sudo)", "SYSLOG_FACILITY=10" },
          { "SLOTS_OBJECT", "SLOTS_REASON", "ERRNO", "SLOTS_FIX" },
          { "slot=slot02", "changed=true", "error=null", "skipped.slot=slot01", "skipped.reason=its shell is /bin/bash",
            "dry_run=false" } },
        { RELEASE_PENDING, 1, "",
          "slots-admin: cannot release slot04 (stop): slot04: a process would not end\n"
          "slots-admin: fix: finish the release: slots-admin release --slot slot04\n",
          { "SLOTS_OBJECT=slot04", "SLOTS_FIX=finish the release: slots-admin release --slot slot04", "ERRNO=16",
            "SLOTS_RESULT=pending", "SLOTS_SLOT=slot04", "SLOTS_USER=bob" },
          { "SLOTS_SERVICE" },
          { "error.fix=finish the release: slots-admin release --slot slot04", "slot=slot04", "changed=true" } },
        { PROVISIONED, 0, "create user slot01\n9 changes\n",
          "slots-admin: warning: /img/docs/x has 2 links\nslots-admin: fix: unlink one\n"
          "slots-admin: warning: /img/docs/y\\033[2J: left alone\n",
          { "SLOTS_SLOT=slot01", "SLOTS_SLOT=slot02", "SLOTS_SLOT=slot07", "SLOTS_SLOT_COUNT=3",
            "SLOTS_ACTION=provision", "SLOTS_RESULT=done" },
          { "SLOTS_USER", "SLOTS_OBJECT" },
          { "root=/img", "changes.text=create user slot01", "warnings.object=/img/docs/x", "warnings.fix=unlink one",
            "changed=true", "error=null" } },
        { DRY_RUN, 0, "would release slot05 from user carol\n", "slots-admin: dry run: nothing was changed\n",
          { NULL }, { NULL },
          { "dry_run=true", "changed=true", "slot=slot05", "user=carol" } },
        { HOSTILE_OBJECT, 1, "", "slots-admin: cannot release slot01: /srv/docs/a\\033[2Jb: cannot read it\n",
          { "SLOTS_OBJECT=/srv/docs/a\\033[2Jb", "ERRNO=5", "SLOTS_REASON=cannot read it" },
          { "SLOTS_FIX" },
          { "error.object=/srv/docs/a\x1b[2Jb" } },
};

/* "key=value" (key "a.b": b of object a, or of a's first element) held by the envelope j. */
static bool json_holds(json_t *j, const char *kv)
{
        char key[64], *dot;
        const char *eq = strchr(kv, '='), *want = eq + 1;
        json_t *v;

        snprintf(key, sizeof(key), "%.*s", (int) (eq - kv), kv);
        dot = strchr(key, '.');
        if (dot) {
                *dot = '\0';
                v = json_object_get(j, key);
                v = json_is_array(v) ? json_array_get(v, 0) : v;
                v = json_object_get(v, dot + 1);
        } else {
                v = json_object_get(j, key);
        }
        if (strcmp(want, "null") == 0)
                return json_is_null(v);
        if (strcmp(want, "true") == 0 || strcmp(want, "false") == 0)
                return json_is_boolean(v) && json_is_true(v) == (want[0] == 't');
        return json_is_string(v) && strcmp(json_string_value(v), want) == 0;
}

/* The row's journal fields in the last entry (MESSAGE only when it is the event's own line). */
static void check_journal(const struct golden *g, size_t i, bool own_line, int *failures_p)
{
        int failures = 0;

        for (size_t k = 0; k < N_ELEM(g->fields) && g->fields[k]; k++)
                if ((own_line || strncmp(g->fields[k], "MESSAGE=", 8)) && has_field(g->fields[k]) != 1)
                        ROW_FAIL("row %zu: no journal field %s", i, g->fields[k]);
        for (size_t k = 0; k < N_ELEM(g->absent) && g->absent[k]; k++)
                if (field_value(g->absent[k]))
                        ROW_FAIL("row %zu: journal field %s=%s, want none", i, g->absent[k], field_value(g->absent[k]));
        *failures_p += failures;
}

/* slots-provision's envelope: every key of slots-provision(8), in its order. */
static bool keys_in_order(const char *text)
{
        static const char *const keys[] = { "{\n  \"version\": 1", "\n  \"dry_run\": ", "\n  \"root\": ",
                                            "\n  \"changed\": ", "\n  \"count\": 9", "\n  \"changes\": [",
                                            "\n  \"warnings\": [", "\n  \"conflicts\": []", "\n  \"error\": null\n}" };
        const char *at = text;

        for (size_t k = 0; k < N_ELEM(keys); k++)
                if (!(at = strstr(at, keys[k])))
                        return false;
        return true;
}

/* Each record: its text, its journal entry (through the sink and through cmd_journal_fields), its envelope. */
static void test_golden(void **state)
{
        int failures = 0;

        (void) state;
        cmd_name = "slots-admin";
        cmd_loginuid_file = "/nonexistent/loginuid";
        setenv("SUDO_USER", "admin", 1);
        journal.booted = 1;
        for (size_t i = 0; i < N_ELEM(golden); i++) {
                const struct golden *g = &golden[i];
                struct cmd_outcome o;
                struct cmd_fields f;
                json_error_t je;
                json_t *j;
                int entries = journal.entries, r;

                make(&o, g->shape, false);
                r = emit_caught(&o);
                if (r != g->status || strcmp(out_text, g->out) || strcmp(err_text, g->err))
                        ROW_FAIL("row %zu: exit %d (want %d), stdout '%s' (want '%s'), stderr '%s' (want '%s')", i, r,
                                 g->status, out_text, g->out, err_text, g->err);
                if (journal.entries != entries + (o.event < CMD_EV_N))
                        ROW_FAIL("row %zu: %d journal entries", i, journal.entries - entries);
                if (o.event < CMD_EV_N)
                        check_journal(g, i, true, &failures);
                /* The same fields from the record alone, without journald or the sink. */
                journal.n = 0;
                if (o.event < CMD_EV_N) {
                        assert_int_equal(cmd_journal_fields(&o, "a line", "admin", &f), 0);
                        keep_fields(f.iov, f.n);
                        cmd_fields_free(&f);
                        assert_int_equal(has_field("MESSAGE=a line"), 1);
                        check_journal(g, i, false, &failures);
                }
                make(&o, g->shape, true);
                r = emit_caught(&o);
                j = json_loads(out_text, 0, &je);
                if (r != g->status || !j || json_integer_value(json_object_get(j, "version")) != 1)
                        ROW_FAIL("row %zu: --json exit %d, '%s'", i, r, out_text);
                for (size_t k = 0; j && k < N_ELEM(g->json) && g->json[k]; k++)
                        if (!json_holds(j, g->json[k]))
                                ROW_FAIL("row %zu: --json lacks %s: %s", i, g->json[k], out_text);
                if (g->shape == PROVISIONED && !keys_in_order(out_text))
                        ROW_FAIL("row %zu: --json keys not in slots-provision(8)'s order: %s", i, out_text);
                json_decref(j);
        }
        unsetenv("SUDO_USER");
        if (failures)
                fail_msg("%d rows failed", failures);
}

/*
 * Who the admin is, as a table: SUDO_USER when root runs it, else the login uid (by
 * name, or the number when NSS has none), else the uid.  Run by root unless a row gives a uid.
 */
static void test_admin(void **state)
{
        static const struct {
                const char *sudo_user;  /* NULL: unset */
                const char *loginuid;   /* the file's content; NULL: no file */
                bool found;
                const char *by, *admin;
                uid_t uid;              /* who runs the command */
        } rows[] = {
                { "alice", "1000\n", true, "by alice (via sudo)", "alice", 0 },
                { "", "1000\n", true, "by svc (login uid 1000)", "svc", 0 },
                { NULL, "1000", false, "by 1000 (login uid 1000)", "1000", 0 },
                { NULL, "4294967295", true, "by svc (uid 0)", "svc", 0 },
                { NULL, NULL, false, "by 0 (uid 0)", "0", 0 },
                { NULL, "12x", true, "by svc (uid 0)", "svc", 0 },
                /* A name with a terminal escape reaches neither syslog nor the journal raw. */
                { "ev\x1b[1mil", NULL, true, "by ev\\033[1mil (via sudo)", "ev\\033[1mil", 0 },
                /* A user who is not root cannot blame another through SUDO_USER. */
                { "alice", NULL, true, "by svc (uid 1000)", "svc", 1000 },
                { "alice", "1001\n", true, "by svc (login uid 1001)", "svc", 1000 },
        };
        char path[] = "/tmp/slots-loginuid.XXXXXX";
        int fd = mkstemp(path), failures = 0;

        (void) state;
        assert_true(fd >= 0);
        close(fd);
        cmd_name = "slots-admin";
        cmd_loginuid_file = path;
        journal.booted = 1;
        for (size_t i = 0; i < N_ELEM(rows); i++) {
                struct cmd_outcome o;
                char want[256], field[64];
                FILE *f;

                pw_found = rows[i].found;
                caller_uid = rows[i].uid;
                if (rows[i].sudo_user)
                        setenv("SUDO_USER", rows[i].sudo_user, 1);
                else
                        unsetenv("SUDO_USER");
                unlink(path);
                if (rows[i].loginuid) {
                        assert_non_null(f = fopen(path, "w"));
                        fputs(rows[i].loginuid, f);
                        assert_int_equal(fclose(f), 0);
                }
                cmd_outcome_init(&o, "assign", false, false);
                o.slot = 1;
                o.user = "u1";
                cmd_outcome_event(&o, CMD_EV_ASSIGNED, "assigned %s to user %s", "slot01", "u1");
                (void) emit_caught(&o);
                snprintf(want, sizeof(want), "assigned slot01 to user u1; %s", rows[i].by);
                snprintf(field, sizeof(field), "SLOTS_ADMIN=%s", rows[i].admin);
                if (strcmp(logged.last, want) != 0 || has_field(field) != 1)
                        ROW_FAIL("row %zu: syslog '%s', want '%s'; admin %s", i, logged.last, want,
                                 field_value("SLOTS_ADMIN") ? field_value("SLOTS_ADMIN") : "(none)");
        }
        pw_found = true;
        caller_uid = 0;
        unlink(path);
        unsetenv("SUDO_USER");
        cmd_loginuid_file = "/nonexistent/loginuid";
        if (failures)
                fail_msg("%d rows failed", failures);
}

/* Each kind: one syslog line at its priority and one journal entry with its MESSAGE_ID, action and result. */
static void test_kinds(void **state)
{
        static const struct {
                enum cmd_event ev;
                const char *action, *result;
                int priority;
        } rows[] = {
                { CMD_EV_ASSIGNED, "assign", "done", LOG_NOTICE },
                { CMD_EV_ASSIGN_REFUSED, "assign", "refused", LOG_WARNING },
                { CMD_EV_ASSIGN_UNFINISHED, "assign", "unfinished", LOG_WARNING },
                { CMD_EV_RELEASED, "release", "done", LOG_NOTICE },
                { CMD_EV_RELEASE_REFUSED, "release", "refused", LOG_WARNING },
                { CMD_EV_RELEASE_PENDING, "release", "pending", LOG_WARNING },
                { CMD_EV_PROVISIONED, "provision", "done", LOG_NOTICE },
                { CMD_EV_PROVISION_REFUSED, "provision", "refused", LOG_WARNING },
                { CMD_EV_CHECK_PASSED, "check", "passed", LOG_INFO },
                { CMD_EV_CHECK_FAILED, "check", "failed", LOG_WARNING },
                { CMD_EV_CHECK_REFUSED, "check", "refused", LOG_WARNING },
        };
        int failures = 0;

        (void) state;
        assert_int_equal(N_ELEM(rows), CMD_EV_N);
        cmd_name = "slots-admin";
        cmd_loginuid_file = "/nonexistent/loginuid";
        setenv("SUDO_USER", "admin", 1);
        journal.booted = 1;
        for (size_t i = 0; i < N_ELEM(rows); i++) {
                struct cmd_outcome o;
                char f[5][128];
                int lines = logged.lines, entries = journal.entries;

                cmd_outcome_init(&o, rows[i].action, false, false);
                cmd_outcome_event(&o, rows[i].ev, "event %zu", i);
                (void) emit_caught(&o);
                snprintf(f[0], sizeof(f[0]), "MESSAGE=event %zu; by admin (via sudo)", i);
                snprintf(f[1], sizeof(f[1]), "MESSAGE_ID=%s", cmd_event_id(rows[i].ev));
                snprintf(f[2], sizeof(f[2]), "SLOTS_ACTION=%s", rows[i].action);
                snprintf(f[3], sizeof(f[3]), "SLOTS_RESULT=%s", rows[i].result);
                snprintf(f[4], sizeof(f[4]), "PRIORITY=%d", rows[i].priority);
                if (logged.lines != lines + 1 || journal.entries != entries + 1 || logged.priority != rows[i].priority)
                        ROW_FAIL("row %zu: %d lines, %d entries, priority %d", i, logged.lines - lines,
                                 journal.entries - entries, logged.priority);
                for (size_t k = 0; k < N_ELEM(f); k++)
                        if (has_field(f[k]) != 1)
                                ROW_FAIL("row %zu: no field %s", i, f[k]);
                /* One MESSAGE_ID per kind: 32 hex digits, none the same as another's. */
                if (strlen(cmd_event_id(rows[i].ev)) != 32 ||
                    strspn(cmd_event_id(rows[i].ev), "0123456789abcdef") != 32)
                        ROW_FAIL("row %zu: MESSAGE_ID %s", i, cmd_event_id(rows[i].ev));
                for (size_t k = 0; k < i; k++)
                        if (strcmp(cmd_event_id(rows[i].ev), cmd_event_id(rows[k].ev)) == 0)
                                ROW_FAIL("rows %zu and %zu share a MESSAGE_ID", k, i);
        }
        unsetenv("SUDO_USER");
        if (failures)
                fail_msg("%d rows failed", failures);
}

/*
 * Up to CMD_EVENT_MAX_SLOTS a SLOTS_SLOT field each, beyond the count alone; a user id with
 * control bytes escaped in the line and the field; where journald does not run, syslog alone
 * has the line; syslog opened once, "name[pid]", LOG_AUTHPRIV.
 */
static void test_journal_limits(void **state)
{
        static char names[CMD_EVENT_MAX_SLOTS + 1][SLOTS_NAME_MAX];
        static const char *many[CMD_EVENT_MAX_SLOTS + 1];
        struct cmd_outcome o;
        char one[32], want[64];
        int entries;

        (void) state;
        cmd_name = "slots-admin";
        cmd_loginuid_file = "/nonexistent/loginuid";
        journal.booted = 1;
        for (unsigned i = 0; i <= CMD_EVENT_MAX_SLOTS; i++) {
                snprintf(names[i], sizeof(names[i]), "slot%02u", i + 1);
                many[i] = names[i];
        }
        cmd_outcome_init(&o, "provision", false, false);
        o.slots = many;
        o.n_slots = CMD_EVENT_MAX_SLOTS;
        cmd_outcome_event(&o, CMD_EV_PROVISIONED, "many");
        (void) emit_caught(&o);
        snprintf(one, sizeof(one), "SLOTS_SLOT=slot%u", CMD_EVENT_MAX_SLOTS);
        assert_int_equal(has_field(one), 1);
        assert_int_equal(has_field("SLOTS_SLOT=slot01"), 1);
        o.n_slots = CMD_EVENT_MAX_SLOTS + 1;
        (void) emit_caught(&o);
        assert_null(field_value("SLOTS_SLOT"));
        snprintf(one, sizeof(one), "%u", CMD_EVENT_MAX_SLOTS + 1);
        assert_string_equal(field_value("SLOTS_SLOT_COUNT"), one);

        cmd_outcome_init(&o, "release", false, false);
        o.asked = "slot01";
        o.user = "x\ny";
        cmd_outcome_event(&o, CMD_EV_RELEASE_REFUSED, "refused: %s", "x\ny");
        (void) emit_caught(&o);
        assert_string_equal(field_value("SLOTS_USER"), "x\\ny");
        assert_string_equal(field_value("SLOTS_SLOT"), "slot01");
        assert_null(strchr(logged.last, '\n'));

        journal.booted = 0;
        cmd_journal_socket = "/nonexistent/journal/socket";
        entries = journal.entries;
        (void) emit_caught(&o);
        assert_int_equal(journal.entries, entries);
        assert_non_null(strstr(logged.last, "refused: x\\ny; by "));
        cmd_journal_socket = "/run/systemd/journal/socket";

        assert_int_equal(logged.opens, 1);
        assert_int_equal(logged.facility, LOG_AUTHPRIV);
        snprintf(want, sizeof(want), "slots-admin[%ld]", (long) getpid());
        assert_string_equal(logged.ident, want);
}

/* What standard output was to carry and did not reach: exit 1, said with the verb; an unchecked line is not. */
static void test_stdout_lost(void **state)
{
        struct cmd_outcome o;
        int r;

        (void) state;
        cmd_name = "slots-admin";
        cmd_fds_closed = 1u << 1;       /* as if stdout was closed when the command started */
        make(&o, ASSIGN_DONE, false);
        o.event = CMD_EV_N;
        cmd_outcome_free(&o);
        r = emit_caught(&o);
        assert_int_equal(r, EXIT_REFUSED);
        assert_string_equal(err_text, "slots-admin: cannot print the slot name: standard output: closed when assign "
                            "started\n");
        o.line_name = NULL;             /* release's "slotNN released": the release stands either way */
        assert_int_equal(emit_caught(&o), EXIT_DONE);
        cmd_fds_closed = 0;
}

int main(void)
{
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_golden),
                cmocka_unit_test(test_admin),
                cmocka_unit_test(test_kinds),
                cmocka_unit_test(test_journal_limits),
                cmocka_unit_test(test_stdout_lost),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
