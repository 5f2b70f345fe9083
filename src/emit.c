/* The one emitter: a run's outcome record written once as text, the --json envelope, the authpriv line and the journal entry. */
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>
#include <unistd.h>

/* No CODE_FILE, CODE_LINE, CODE_FUNC: the entry says what happened, not where in the source. */
#define SD_JOURNAL_SUPPRESS_LOCATION
#include <systemd/sd-daemon.h>
#include <systemd/sd-journal.h>

#include "emit.h"
#include "escape.h"
#include "nss.h"

/* Each kind's MESSAGE_ID (made once with systemd-id128 new), action and result. */
static const struct {
        const char *id, *action, *result;
        int priority;
} events[CMD_EV_N] = {
        [CMD_EV_ASSIGNED] = { "2cefb8af4c034503b7775475e89642b7", "assign", "done", LOG_NOTICE },
        [CMD_EV_ASSIGN_REFUSED] = { "73c48dfb4bd746abaff4d035e1f3f61f", "assign", "refused", LOG_WARNING },
        [CMD_EV_ASSIGN_UNFINISHED] = { "c88a6b72f8f84352bcebab27ce89953c", "assign", "unfinished", LOG_WARNING },
        [CMD_EV_RELEASED] = { "37f06b5da888482fa6886f1204f3c2a8", "release", "done", LOG_NOTICE },
        [CMD_EV_RELEASE_REFUSED] = { "c11d97f0f56749edab9ce883d5dbc265", "release", "refused", LOG_WARNING },
        [CMD_EV_RELEASE_PENDING] = { "faec10dd6ec84a2b94a848a317868e88", "release", "pending", LOG_WARNING },
        [CMD_EV_PROVISIONED] = { "c73203b775e943ecb1923fc4090953bf", "provision", "done", LOG_NOTICE },
        [CMD_EV_PROVISION_REFUSED] = { "26e8cfc1bdd44c5790a601fc6f73ba45", "provision", "refused", LOG_WARNING },
        [CMD_EV_CHECK_PASSED] = { "d5a62fe04967471ca904ea47e656719f", "check", "passed", LOG_INFO },
        [CMD_EV_CHECK_FAILED] = { "59cabf707e854da9b1fd7401034c94ca", "check", "failed", LOG_WARNING },
        [CMD_EV_CHECK_REFUSED] = { "3dadc1363f9b4e068c3e01a6ac2c4841", "check", "refused", LOG_WARNING },
};

const char *cmd_loginuid_file = "/proc/self/loginuid";
const char *cmd_journal_socket = "/run/systemd/journal/socket";

const char *cmd_event_id(enum cmd_event ev)
{
        return ev < CMD_EV_N ? events[ev].id : "";
}

void cmd_outcome_init(struct cmd_outcome *o, const char *verb, bool json, bool dry_run)
{
        memset(o, 0, sizeof(*o));
        o->verb = verb;
        o->json = json;
        o->dry_run = dry_run;
        o->event = CMD_EV_N;
        o->status = EXIT_DONE;
}

void cmd_outcome_fail_st(struct cmd_outcome *o, int status, const char *what, const struct slots_error *e)
{
        snprintf(o->what, sizeof(o->what), "%s", what);
        o->error = *e;
        o->status = status;
}

void cmd_outcome_fail(struct cmd_outcome *o, const char *what, const struct slots_error *e)
{
        cmd_outcome_fail_st(o, cmd_exit_for(-1, e), what, e);
}

void cmd_outcome_add(struct cmd_outcome *o, enum cmd_note_kind kind, const char *slot, const char *object,
                     const char *text, const char *fix)
{
        size_t lo = strlen(object ? object : ""), lt = strlen(text), lf = strlen(fix ? fix : "");
        /* Room for 64 more each time the list is full. */
        struct cmd_note *n = o->n_notes % 64 ? o->notes : reallocarray(o->notes, o->n_notes + 64, sizeof(*n));
        char *s = n ? malloc(lo + lt + lf + 3) : NULL;

        o->notes = n ? n : o->notes;
        if (!s) {
                o->notes_lost++;
                return;
        }
        n = &o->notes[o->n_notes++];
        n->kind = kind;
        snprintf(n->slot, sizeof(n->slot), "%s", slot ? slot : "");
        n->object = memcpy(s, object ? object : "", lo + 1);
        n->text = memcpy(s + lo + 1, text, lt + 1);
        n->fix = memcpy(s + lo + lt + 2, fix ? fix : "", lf + 1);
}

void cmd_outcome_note(struct cmd_outcome *o, const char *slot, const char *fix, const char *fmt, ...)
{
        char text[1280];
        va_list ap;

        va_start(ap, fmt);
        vsnprintf(text, sizeof(text), fmt, ap);
        va_end(ap);
        cmd_outcome_add(o, CMD_NOTE_WARNING, slot, NULL, text, fix);
}

void cmd_outcome_free(struct cmd_outcome *o)
{
        for (size_t i = 0; i < o->n_notes; i++)
                free(o->notes[i].object);
        free(o->notes);
        o->notes = NULL;
        o->n_notes = 0;
}

void cmd_outcome_event(struct cmd_outcome *o, enum cmd_event ev, const char *fmt, ...)
{
        va_list ap;

        o->event = ev;
        va_start(ap, fmt);
        vsnprintf(o->message, sizeof(o->message), fmt, ap);
        va_end(ap);
}

const char *cmd_outcome_error_text(const struct cmd_outcome *o, char *buf, size_t size)
{
        char raw[2 * SLOTS_ERR_TEXT + 64], *msg;

        if (!o->what[0]) {
                snprintf(buf, size, "%s", "");
                return buf;
        }
        msg = slots_escape(slots_error_format(&o->error, raw, sizeof(raw)));
        snprintf(buf, size, "%s: %s", o->what, msg ? msg : "out of memory");
        free(msg);
        return buf;
}

/* The login uid (set by pam_loginuid at login, kept through su and sudo), or -1 when unset. */
static long login_uid(void)
{
        char buf[32];
        ssize_t n;
        int fd = open(cmd_loginuid_file, O_RDONLY | O_CLOEXEC);
        unsigned long v;
        char *end;

        if (fd < 0)
                return -1;
        n = read(fd, buf, sizeof(buf) - 1);
        close(fd);
        if (n <= 0)
                return -1;
        buf[n] = '\0';
        errno = 0;
        v = strtoul(buf, &end, 10);
        if (errno || end == buf || (*end && *end != '\n') || v >= 4294967295ul)
                return -1;
        return (long) v;
}

/*
 * The admin who ran the command: SUDO_USER when root runs it (a user who is not root
 * could set it to blame another), else the login uid, else the uid; as a name (escaped)
 * and as the words the syslog line ends with.
 */
static void find_admin(char *name, size_t name_size, char *by, size_t by_size)
{
        const char *sudo_user = getenv("SUDO_USER");
        char raw[128];
        long luid;

        if (getuid() == 0 && sudo_user && sudo_user[0]) {
                slots_escape_buf(sudo_user, name, name_size);
                snprintf(by, by_size, "%s (via sudo)", name);
                return;
        }
        luid = login_uid();
        if (luid >= 0) {
                slots_escape_buf(slots_uid_name((uid_t) luid, raw, sizeof(raw)), name, name_size);
                snprintf(by, by_size, "%s (login uid %ld)", name, luid);
                return;
        }
        slots_escape_buf(slots_uid_name(getuid(), raw, sizeof(raw)), name, name_size);
        snprintf(by, by_size, "%s (uid %u)", name, (unsigned) getuid());
}

/* Where journald runs: systemd booted the host, or its socket is there (a container's journald). */
static bool journal_runs(void)
{
        return sd_booted() > 0 || access(cmd_journal_socket, F_OK) == 0;
}

/* "NAME=value" into the next iovec, from the buffer at *pos (room *left); skipped when empty or it does not fit. */
static void field(struct cmd_fields *f, char **pos, size_t *left, const char *name, const char *value)
{
        int k;

        if (!value || !value[0])
                return;
        k = snprintf(*pos, *left, "%s=%s", name, value);
        if (k < 0 || (size_t) k >= *left)
                return;
        f->iov[f->n].iov_base = *pos;
        f->iov[f->n].iov_len = (size_t) k;
        f->n++;
        *pos += k + 1;
        *left -= (size_t) k + 1;
}

/* The same for a value that may hold a name a slot chose: escaped (escape.c). */
static void field_esc(struct cmd_fields *f, char **pos, size_t *left, const char *name, const char *value)
{
        char shown[4 * SLOTS_ERR_TEXT + 8];

        if (value)
                field(f, pos, left, name, slots_escape_buf(value, shown, sizeof(shown)));
}

void cmd_fields_free(struct cmd_fields *f)
{
        free(f->iov);
        free(f->buf);
        f->iov = NULL;
        f->buf = NULL;
        f->n = 0;
}

/*
 * libsystemd sends a field as two iovecs or more, and a datagram (or its memfd) takes at
 * most 1,024: a run over more than CMD_EVENT_MAX_SLOTS slots names them in MESSAGE only.
 */
int cmd_journal_fields(const struct cmd_outcome *o, const char *line, const char *admin, struct cmd_fields *f)
{
        enum { FIXED = 16 };
        size_t n_slots = o->slots ? o->n_slots : o->slot || (o->asked && o->asked[0]) ? 1 : 0;
        size_t named = n_slots <= CMD_EVENT_MAX_SLOTS ? n_slots : 0;
        size_t left = 8192 + 4 * 4 * SLOTS_ERR_TEXT + named * (SLOTS_NAME_MAX + 16);
        char *pos, num[24], one[SLOTS_NAME_MAX];
        enum cmd_event ev = o->event < CMD_EV_N ? o->event : CMD_EV_CHECK_PASSED;

        f->n = 0;
        f->buf = pos = malloc(left);
        f->iov = calloc(FIXED + named, sizeof(*f->iov));
        if (!f->buf || !f->iov) {
                cmd_fields_free(f);
                return -ENOMEM;
        }
        field(f, &pos, &left, "MESSAGE", line);
        field(f, &pos, &left, "MESSAGE_ID", events[ev].id);
        snprintf(num, sizeof(num), "%d", events[ev].priority);
        field(f, &pos, &left, "PRIORITY", num);
        field(f, &pos, &left, "SYSLOG_FACILITY", "10");
        field(f, &pos, &left, "SYSLOG_IDENTIFIER", cmd_name);
        field(f, &pos, &left, "SLOTS_ACTION", events[ev].action);
        field(f, &pos, &left, "SLOTS_RESULT", events[ev].result);
        field_esc(f, &pos, &left, "SLOTS_USER", o->user);
        field(f, &pos, &left, "SLOTS_ADMIN", admin);
        field_esc(f, &pos, &left, "SLOTS_SERVICE", o->service);
        if (o->what[0]) {
                field_esc(f, &pos, &left, "SLOTS_OBJECT", o->error.object);
                field_esc(f, &pos, &left, "SLOTS_REASON", o->error.reason);
                field_esc(f, &pos, &left, "SLOTS_FIX", o->error.fix[0] ? o->error.fix : o->fix);
                snprintf(num, sizeof(num), "%d", o->error.err);
                field(f, &pos, &left, "ERRNO", o->error.err ? num : NULL);
        }
        if (n_slots > 1) {
                snprintf(num, sizeof(num), "%zu", n_slots);
                field(f, &pos, &left, "SLOTS_SLOT_COUNT", num);
        }
        for (size_t i = 0; i < named; i++)
                field_esc(f, &pos, &left, "SLOTS_SLOT", o->slots ? o->slots[i] :
                      o->slot ? slots_slot_name(o->slot, one) : o->asked);
        return 0;
}

void cmd_journal_send(const struct cmd_fields *f)
{
        if (f->n > 0)
                (void) sd_journal_sendv(f->iov, f->n);
}

/* The event: one syslog line (LOG_AUTHPRIV) "<message>; by <admin>", and one journal entry where journald runs. */
static void emit_event(const struct cmd_outcome *o)
{
        static bool opened;
        static char ident[160];
        char shown[4096], line[4400], admin[128], by[192];
        struct cmd_fields f;

        if (o->event >= CMD_EV_N)
                return;
        /* One connection for the whole run; "name[pid]" is LOG_PID's line without a getpid() per line. */
        if (!opened) {
                snprintf(ident, sizeof(ident), "%s[%ld]", cmd_name, (long) getpid());
                openlog(ident, 0, LOG_AUTHPRIV);
                opened = true;
        }
        find_admin(admin, sizeof(admin), by, sizeof(by));
        snprintf(line, sizeof(line), "%s; by %s", slots_escape_buf(o->message, shown, sizeof(shown)), by);
        syslog(events[o->event].priority, "%s", line);
        if (journal_runs() && cmd_journal_fields(o, line, admin, &f) == 0) {
                cmd_journal_send(&f);
                cmd_fields_free(&f);
        }
}

/* --json's "error": what, object, line, column, reason and fix (the error's, else fix; null when none). */
static json_t *error_json(const char *what, const struct slots_error *e, const char *fix)
{
        return json_pack("{s:s, s:o, s:o, s:o, s:o, s:o}", "what", what, "object", cmd_json_text(e->object), "line",
                         e->line ? json_integer(e->line) : json_null(), "column",
                         e->column ? json_integer(e->column) : json_null(), "reason", cmd_json_text(e->reason), "fix",
                         e->fix[0] ? cmd_json_text(e->fix) : fix && fix[0] ? cmd_json_text(fix) : json_null());
}

/*
 * The notes of one kind as a --json list: {"object", "text", "fix"} ({"text"} for a
 * change), or, keyed, the warnings with a slot as {"slot", "reason", "fix"}.
 */
static json_t *note_list(const struct cmd_outcome *o, enum cmd_note_kind kind, bool keyed)
{
        json_t *list = json_array(), *j;

        for (size_t i = 0; list && i < o->n_notes; i++) {
                const struct cmd_note *n = &o->notes[i];

                if (n->kind != kind || (keyed && !n->slot[0]))
                        continue;
                if (keyed)
                        j = json_pack("{s:s, s:o, s:o}", "slot", n->slot, "reason", cmd_json_text(n->text), "fix",
                                      cmd_json_text(n->fix));
                else if (kind == CMD_NOTE_CHANGE)
                        j = json_pack("{s:o}", "text", cmd_json_text(n->text));
                else
                        j = json_pack("{s:o, s:o, s:o}", "object", cmd_json_text(n->object), "text",
                                      cmd_json_text(n->text), "fix", n->fix[0] ? cmd_json_text(n->fix) : json_null());
                if (json_array_append_new(list, j) < 0) {
                        json_decref(list);
                        return NULL;
                }
        }
        return list;
}

/*
 * The --json envelope: version, dry_run, changed, slot, user, error and the warnings with a
 * slot under notes_key; listed (provision): version, dry_run, root, changed, count, changes,
 * warnings, conflicts, error.  NULL when it cannot be whole (out of memory).
 */
static json_t *envelope(const struct cmd_outcome *o)
{
        char name[SLOTS_NAME_MAX];
        json_t *root, *err = o->what[0] ? error_json(o->what, &o->error, o->fix) : json_null();

        if (o->listed)
                return json_pack("{s:i, s:b, s:o, s:b, s:I, s:o, s:o, s:o, s:o}", "version", CMD_JSON_VERSION,
                                 "dry_run", o->dry_run, "root", o->root ? cmd_json_text(o->root) : json_null(),
                                 "changed", o->changed, "count", (json_int_t) o->count, "changes",
                                 note_list(o, CMD_NOTE_CHANGE, false), "warnings", note_list(o, CMD_NOTE_WARNING, false),
                                 "conflicts", note_list(o, CMD_NOTE_CONFLICT, false), "error", err);
        root = json_pack("{s:i, s:b, s:b, s:o, s:o, s:o}", "version", CMD_JSON_VERSION, "dry_run", o->dry_run,
                         "changed", o->changed, "slot", o->slot ? json_string(slots_slot_name(o->slot, name)) :
                         json_null(), "user", o->user ? cmd_json_text(o->user) : json_null(), "error", err);
        if (root && o->notes_key && json_object_set_new(root, o->notes_key, note_list(o, CMD_NOTE_WARNING, true))) {
                json_decref(root);
                return NULL;
        }
        return root;
}

/* What goes to standard output: the envelope, or the text line; -errno when it did not reach a reader. */
static int emit_stdout(const struct cmd_outcome *o, const char **name)
{
        json_t *root;
        int r;

        if (o->json) {
                *name = "the JSON result";
                root = envelope(o);
                r = root && json_dumpf(root, stdout, JSON_INDENT(2) | JSON_PRESERVE_ORDER) == 0 &&
                    putchar('\n') != EOF ? cmd_stdout_done() : -EIO;
                json_decref(root);
                return r;
        }
        *name = o->line_name;
        if (!o->line[0])
                return 0;
        r = printf("%s\n", o->line) < 0 ? -(errno ? errno : EIO) : cmd_stdout_done();
        return o->line_name ? r : 0;
}

/* A note: a change on standard output (none with --json), a warning or conflict on standard error, with its fix. */
static void emit_note(const struct cmd_outcome *o, const struct cmd_note *n)
{
        static const char *const word[] = { [CMD_NOTE_WARNING] = "warning", [CMD_NOTE_CONFLICT] = "conflict" };
        /* Names from the file system are escaped before they reach the terminal. */
        char *obj = slots_escape(n->object), *text = slots_escape(n->text), *fix = slots_escape(n->fix);
        size_t len = strlen(n->object);

        if (n->kind == CMD_NOTE_CHANGE) {
                /* Not flushed line by line (a write per change); cmd_err() flushes. */
                if (!o->json)
                        printf("%s\n", text ? text : "(out of memory)");
        } else if (!obj || !text || !fix)
                fprintf(cmd_err(), "%s: %s: out of memory\n", cmd_name, word[n->kind]);
        else if (n->slot[0] && o->notes_key)
                fprintf(cmd_err(), "%s: %s: %s %s: %s\n", cmd_name, word[n->kind], o->notes_key, n->slot, text);
        else if (len && !(strncmp(n->text, n->object, len) == 0 && n->text[len] == ' '))
                fprintf(cmd_err(), "%s: %s: %s: %s\n", cmd_name, word[n->kind], obj, text);
        else
                fprintf(cmd_err(), "%s: %s: %s\n", cmd_name, word[n->kind], text);
        if (n->kind != CMD_NOTE_CHANGE && n->fix[0])
                fprintf(cmd_err(), "%s: fix: %s\n", cmd_name, fix ? fix : "(out of memory)");
        free(obj);
        free(text);
        free(fix);
}

int cmd_emit(struct cmd_outcome *o)
{
        const char *name = NULL;
        int st = o->status, r;

        for (size_t i = 0; i < o->n_notes; i++)
                emit_note(o, &o->notes[i]);
        if (o->notes_lost) {
                /* A run that leaves out what it did or met would read as a clean one. */
                fprintf(cmd_err(), "%s: out of memory: %zu changes or warnings are missing\n", cmd_name,
                        o->notes_lost);
                st = EXIT_REFUSED;
        }
        if (o->what[0])
                cmd_report(o->what, &o->error, o->fix[0] ? o->fix : NULL);
        emit_event(o);
        r = emit_stdout(o, &name);
        if (r < 0) {
                fprintf(cmd_err(), "%s: cannot print %s: standard output: %s%s%s\n", cmd_name, name,
                        r == -EBADF ? "closed when " : strerror(-r), r == -EBADF ? o->verb : "",
                        r == -EBADF ? " started" : "");
                st = EXIT_REFUSED;
        }
        if (o->closing[0])
                fprintf(cmd_err(), "%s: %s\n", cmd_name, o->closing);
        cmd_outcome_free(o);
        return st;
}
