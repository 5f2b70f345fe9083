/* What both commands do at their boundary: report errors, log events to syslog and the journal, make JSON. */
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <syslog.h>
#include <unistd.h>

/* No CODE_FILE, CODE_LINE, CODE_FUNC: the entry says what happened, not where in the source. */
#define SD_JOURNAL_SUPPRESS_LOCATION
#include <systemd/sd-daemon.h>
#include <systemd/sd-journal.h>

#include "cmdutil.h"
#include "escape.h"
#include "ids.h"
#include "nss.h"

const char *cmd_name = "slots";

unsigned cmd_fds_closed;

static char log_service[160];   /* SLOTS_SERVICE */
static char last_error[1024];   /* what cmd_report printed last */

unsigned cmd_fds_guard(void)
{
        for (int fd = 0; fd <= 2; fd++) {
                int n;

                if (fcntl(fd, F_GETFD) >= 0 || errno != EBADF)
                        continue;
                /* The lowest free fd: this one, since the lower ones are open by now. */
                n = open("/dev/null", fd == 0 ? O_RDONLY : O_WRONLY);
                if (n != fd)
                        _exit(EXIT_REFUSED);
                cmd_fds_closed |= 1u << fd;
        }
        return cmd_fds_closed;
}

int cmd_stdout_done(void)
{
        errno = 0;
        if (fflush(stdout) != 0 || ferror(stdout))
                return -(errno ? errno : EIO);
        if (cmd_fds_closed & (1u << STDOUT_FILENO))
                return -EBADF;
        return 0;
}

FILE *cmd_err(void)
{
        (void) fflush(stdout);
        return stderr;
}

void cmd_report(const char *what, const struct slots_error *e, const char *fix)
{
        char buf[2 * SLOTS_ERR_TEXT + 64], *msg, *how;

        /* Objects, reasons and fixes carry file names a slot chose: escaped, never raw. */
        msg = slots_escape(slots_error_format(e, buf, sizeof(buf)));
        how = slots_escape(e->fix[0] ? e->fix : fix);
        fprintf(cmd_err(), "%s: %s: %s\n", cmd_name, what, msg ? msg : "out of memory");
        snprintf(last_error, sizeof(last_error), "%s: %s", what, msg ? msg : "out of memory");
        if (e->fix[0] || fix)
                fprintf(stderr, "%s: fix: %s\n", cmd_name, how ? how : "out of memory");
        free(msg);
        free(how);
}

int cmd_exit_for(int r, const struct slots_error *e)
{
        if (r >= 0)
                return EXIT_DONE;
        return e->kind == SLOTS_ERR_INVALID ? EXIT_USAGE : EXIT_REFUSED;
}

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

void cmd_log_service(const char *service)
{
        slots_escape_buf(service ? service : "", log_service, sizeof(log_service));
}

const char *cmd_last_error(void)
{
        return last_error;
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

/* "NAME=value" into the next iovec, from the buffer at *pos (room left *left); skipped when it does not fit. */
static void field(struct iovec *iov, int *n, char **pos, size_t *left, const char *name, const char *value)
{
        int k;

        if (!value || !value[0])
                return;
        k = snprintf(*pos, *left, "%s=%s", name, value);
        if (k < 0 || (size_t) k >= *left)
                return;
        iov[*n].iov_base = *pos;
        iov[*n].iov_len = (size_t) k;
        (*n)++;
        *pos += k + 1;
        *left -= (size_t) k + 1;
}

/*
 * The journal entry of an event; a journal that does not take it changes nothing (syslog
 * has the line).  libsystemd sends a field as two iovecs or more, and a datagram (or its
 * memfd) takes at most 1,024: a run over more than CMD_EVENT_MAX_SLOTS slots names them in
 * its MESSAGE only, with SLOTS_SLOT_COUNT.
 */
static void journal_send(enum cmd_event ev, const char *const *slots, size_t n_slots, const char *user,
                         const char *line, const char *admin)
{
        enum { FIXED = 11 };
        size_t named = n_slots <= CMD_EVENT_MAX_SLOTS ? n_slots : 0;
        size_t left = 2048 + 8192 + named * (SLOTS_NAME_MAX + 16);
        char *buf = malloc(left), *pos = buf, num[24], who[256];
        struct iovec *iov = calloc(FIXED + named, sizeof(*iov));
        int n = 0;

        if (buf && iov) {
                field(iov, &n, &pos, &left, "MESSAGE", line);
                field(iov, &n, &pos, &left, "MESSAGE_ID", events[ev].id);
                snprintf(num, sizeof(num), "%d", events[ev].priority);
                field(iov, &n, &pos, &left, "PRIORITY", num);
                field(iov, &n, &pos, &left, "SYSLOG_FACILITY", "10");
                field(iov, &n, &pos, &left, "SYSLOG_IDENTIFIER", cmd_name);
                field(iov, &n, &pos, &left, "SLOTS_ACTION", events[ev].action);
                field(iov, &n, &pos, &left, "SLOTS_RESULT", events[ev].result);
                field(iov, &n, &pos, &left, "SLOTS_USER", user ? slots_escape_buf(user, who, sizeof(who)) : NULL);
                field(iov, &n, &pos, &left, "SLOTS_ADMIN", admin);
                field(iov, &n, &pos, &left, "SLOTS_SERVICE", log_service);
                if (n_slots > 1) {
                        snprintf(num, sizeof(num), "%zu", n_slots);
                        field(iov, &n, &pos, &left, "SLOTS_SLOT_COUNT", num);
                }
                for (size_t i = 0; i < named; i++)
                        field(iov, &n, &pos, &left, "SLOTS_SLOT", slots[i]);
                (void) sd_journal_sendv(iov, n);
        }
        free(iov);
        free(buf);
}

static void eventv(enum cmd_event ev, const char *const *slots, size_t n_slots, const char *user,
                   const char *fmt, va_list ap)
{
        static bool opened;
        static char ident[160];
        char msg[1024], shown[4096], line[4400], admin[128], by[192];

        /* One connection for the whole run (a run logs one event or two). */
        if (!opened) {
                /*
                 * "name[pid]" as the ident is the line LOG_PID writes, without the getpid()
                 * glibc makes for every line.  Only this process logs: no forked child
                 * calls cmd_event.
                 */
                snprintf(ident, sizeof(ident), "%s[%ld]", cmd_name, (long) getpid());
                openlog(ident, 0, LOG_AUTHPRIV);
                opened = true;
        }
        find_admin(admin, sizeof(admin), by, sizeof(by));
        vsnprintf(msg, sizeof(msg), fmt, ap);
        snprintf(line, sizeof(line), "%s; by %s", slots_escape_buf(msg, shown, sizeof(shown)), by);
        syslog(events[ev].priority, "%s", line);
        if (journal_runs())
                journal_send(ev, slots, n_slots, user, line, admin);
}

void cmd_event(enum cmd_event ev, const char *slot, const char *user, const char *fmt, ...)
{
        va_list ap;

        va_start(ap, fmt);
        eventv(ev, &slot, slot && slot[0] ? 1 : 0, user, fmt, ap);
        va_end(ap);
}

void cmd_event_slots(enum cmd_event ev, const char *const *slots, size_t n_slots, const char *user,
                     const char *fmt, ...)
{
        va_list ap;

        va_start(ap, fmt);
        eventv(ev, slots, n_slots, user, fmt, ap);
        va_end(ap);
}

int cmd_load_config(const char *path, struct slots_config **c)
{
        return cmd_load_config_flags(path, 0, c);
}

int cmd_load_config_flags(const char *path, unsigned flags, struct slots_config **c)
{
        struct slots_error e;
        int r;

        slots_error_clear(&e);
        r = slots_config_load_flags(AT_FDCWD, path ? path : slots_config_default_path(), flags, c, &e);
        if (r == -EPERM && e.kind == SLOTS_ERR_REFUSED && (flags & SLOTS_CONFIG_ROOT_OWNED)) {
                /* A config someone but root can change decides what root does: nothing is done. */
                cmd_report("refusing the config", &e, NULL);
                return EXIT_REFUSED;
        }
        if (r < 0) {
                cmd_report(e.kind == SLOTS_ERR_INVALID ? "invalid config" : "cannot read the config", &e, NULL);
                return EXIT_USAGE;
        }
        return EXIT_DONE;
}

void cmd_warn_config_writers(const struct slots_config *c)
{
        struct slots_error e;

        slots_error_clear(&e);
        if (slots_config_writers_at(AT_FDCWD, c->path, &e) == -EPERM && e.kind == SLOTS_ERR_REFUSED) {
                fprintf(cmd_err(), "%s: warning: %s: pam_slots refuses every slot session with it, and "
                        "assign and release refuse to run\n", cmd_name, e.reason);
                fprintf(cmd_err(), "%s: fix: %s\n", cmd_name, e.fix);
        }
}

/* Length of the valid UTF-8 sequence at s (1 to 4), or 0 when the byte there starts none. */
static size_t utf8_len(const unsigned char *s)
{
        unsigned char lo = 0x80, hi = 0xbf;
        size_t n, i;

        if (s[0] < 0x80)
                return 1;
        if (s[0] >= 0xc2 && s[0] <= 0xdf)
                n = 2;
        else if (s[0] >= 0xe0 && s[0] <= 0xef)
                n = 3;
        else if (s[0] >= 0xf0 && s[0] <= 0xf4)
                n = 4;
        else
                return 0;
        /* No overlong forms, no surrogates, nothing above U+10FFFF. */
        if (s[0] == 0xe0)
                lo = 0xa0;
        else if (s[0] == 0xed)
                hi = 0x9f;
        else if (s[0] == 0xf0)
                lo = 0x90;
        else if (s[0] == 0xf4)
                hi = 0x8f;
        if (s[1] < lo || s[1] > hi)
                return 0;
        for (i = 2; i < n; i++)
                if (s[i] < 0x80 || s[i] > 0xbf)
                        return 0;
        return n;
}

/*
 * A JSON string of s: the exact text when it is UTF-8 (a name made by a slot may hold any
 * byte but NUL); each byte that is not, as the four characters \xHH, so the entry is never
 * lost.  NULL when out of memory.
 */
json_t *cmd_json_text(const char *s)
{
        json_t *j = json_string(s);
        char *buf, *o;

        if (j)
                return j;
        buf = malloc(4 * strlen(s) + 1);
        if (!buf)
                return NULL;
        for (o = buf; *s;) {
                size_t n = utf8_len((const unsigned char *) s);

                if (n) {
                        memcpy(o, s, n);
                        o += n;
                        s += n;
                } else {
                        o += sprintf(o, "\\x%02x", (unsigned char) *s++);
                }
        }
        *o = '\0';
        j = json_string(buf);
        free(buf);
        return j;
}
