/* What both commands do at their boundary: standard streams, the error lines and exit status, the config, JSON text. */
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cmdutil.h"
#include "escape.h"

const char *cmd_name = "slots";

unsigned cmd_fds_closed;


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

int cmd_load_config(const char *path, struct slots_config **c)
{
        return cmd_load_config_flags(path, 0, c);
}

int cmd_config_get(const char *path, unsigned flags, struct slots_config **c, const char **what,
                   struct slots_error *e)
{
        int r;

        slots_error_clear(e);
        r = slots_config_load_flags(AT_FDCWD, path ? path : slots_config_default_path(), flags, c, e);
        if (r == -EPERM && e->kind == SLOTS_ERR_REFUSED && (flags & SLOTS_CONFIG_ROOT_OWNED)) {
                /* A config someone but root can change decides what root does: nothing is done. */
                *what = "refusing the config";
                return EXIT_REFUSED;
        }
        if (r < 0) {
                *what = e->kind == SLOTS_ERR_INVALID ? "invalid config" : "cannot read the config";
                return EXIT_USAGE;
        }
        return EXIT_DONE;
}

int cmd_load_config_flags(const char *path, unsigned flags, struct slots_config **c)
{
        struct slots_error e;
        const char *what;
        int r = cmd_config_get(path, flags, c, &what, &e);

        if (r != EXIT_DONE)
                cmd_report(what, &e, NULL);
        return r;
}

int cmd_usage_error(const char *fmt, ...)
{
        va_list ap;

        fprintf(cmd_err(), "%s: ", cmd_name);
        va_start(ap, fmt);
        vfprintf(stderr, fmt, ap);
        va_end(ap);
        fprintf(stderr, "\nTry '%s --help'.\n", cmd_name);
        return EXIT_USAGE;
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
