/*
 * A test double of systemd's manager: serves org.freedesktop.systemd1's StartTransientUnit on a
 * private unix socket (where pam_slots looks for systemd, /run/systemd/private, in the test's
 * mount namespace) and answers each call the way one case of its table says.
 * Usage: fake-systemd SOCKET CASE LOG   (CASE: a name of the table below; LOG gets one line per
 * call: "StartTransientUnit NAME MODE slice=SLICE pid=PID").  It serves one connection after
 * another until it is killed; the socket file appears once it listens.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <systemd/sd-bus.h>
#include <unistd.h>

#define PATH "/org/freedesktop/systemd1"
#define IFACE "org.freedesktop.systemd1.Manager"

/* What the manager does with a StartTransientUnit call. */
enum answer {
        ANSWER_JOB,     /* replies with a job, then JobRemoved with the case's result */
        ANSWER_EARLY,   /* JobRemoved first, then the reply (the job ended before the reply was read) */
        ANSWER_ERROR,   /* replies with a D-Bus error */
        ANSWER_NO_JOB,  /* replies with a string where the job's object path belongs */
        ANSWER_SILENT,  /* replies with a job that never ends */
        ANSWER_HANGUP,  /* replies with a job, then closes the connection */
};

static const struct fake_case {
        const char *name;
        enum answer answer;
        const char *result;     /* JobRemoved's result, or the error's name */
} cases[] = {
        { "done", ANSWER_JOB, "done" },
        { "early-done", ANSWER_EARLY, "done" },
        { "failed", ANSWER_JOB, "failed" },
        { "timeout", ANSWER_JOB, "timeout" },
        { "dependency", ANSWER_JOB, "dependency" },
        { "refused", ANSWER_ERROR, "org.freedesktop.DBus.Error.AccessDenied" },
        { "unit-exists", ANSWER_ERROR, "org.freedesktop.systemd1.UnitExists" },
        { "no-job", ANSWER_NO_JOB, "" },
        { "silent", ANSWER_SILENT, "" },
        { "hangup", ANSWER_HANGUP, "" },
};

static const struct fake_case *the_case;
static FILE *log_file;
static int hang_up;
static unsigned job_id = 40;

/* The Slice and PIDs properties of the call's a(sv); the others are skipped. */
static int read_props(sd_bus_message *m, const char **slice, uint32_t *pid)
{
        int r = sd_bus_message_enter_container(m, 'a', "(sv)");

        while (r > 0 && (r = sd_bus_message_enter_container(m, 'r', "sv")) > 0) {
                const char *name = NULL;

                r = sd_bus_message_read(m, "s", &name);
                if (r >= 0 && strcmp(name, "Slice") == 0)
                        r = sd_bus_message_read(m, "v", "s", slice);
                else if (r >= 0 && strcmp(name, "PIDs") == 0)
                        r = sd_bus_message_read(m, "v", "au", 1, pid);
                else if (r >= 0)
                        r = sd_bus_message_skip(m, "v");
                if (r >= 0)
                        r = sd_bus_message_exit_container(m);
        }
        if (r >= 0)
                r = sd_bus_message_exit_container(m);
        return r;
}

static int job_removed(sd_bus *bus, const char *job, const char *unit)
{
        return sd_bus_emit_signal(bus, PATH, IFACE, "JobRemoved", "uoss", job_id, job, unit, the_case->result);
}

/* A reply whose body is a string, not the job's object path (sd-bus's own reply checks the type). */
static int reply_no_job(sd_bus_message *call)
{
        sd_bus_message *reply = NULL;
        int r = sd_bus_message_new_method_return(call, &reply);

        if (r >= 0)
                r = sd_bus_message_append(reply, "s", "no job here");
        if (r >= 0)
                r = sd_bus_send(NULL, reply, NULL);
        sd_bus_message_unref(reply);
        return r < 0 ? r : 1;
}

static int start_transient(sd_bus_message *m, void *userdata, sd_bus_error *err)
{
        sd_bus *bus = sd_bus_message_get_bus(m);
        const char *name = NULL, *mode = NULL, *slice = "", *job = "/org/freedesktop/systemd1/job/40";
        uint32_t pid = 0;
        int r;

        (void) userdata;
        (void) err;
        r = sd_bus_message_read(m, "ss", &name, &mode);
        if (r >= 0)
                r = read_props(m, &slice, &pid);
        if (r < 0)
                return sd_bus_reply_method_errorf(m, "org.freedesktop.DBus.Error.InvalidArgs",
                                                  "the fake manager cannot read the call: %s", strerror(-r));
        fprintf(log_file, "StartTransientUnit %s %s slice=%s pid=%u\n", name, mode, slice, (unsigned) pid);
        fflush(log_file);
        switch (the_case->answer) {
        case ANSWER_EARLY:
                r = job_removed(bus, job, name);
                return r < 0 ? r : sd_bus_reply_method_return(m, "o", job);
        case ANSWER_ERROR:
                return sd_bus_reply_method_errorf(m, the_case->result, "the fake manager says no to %s", name);
        case ANSWER_NO_JOB:
                return reply_no_job(m);
        case ANSWER_SILENT:
                return sd_bus_reply_method_return(m, "o", job);
        case ANSWER_HANGUP:
                hang_up = 1;
                return sd_bus_reply_method_return(m, "o", job);
        case ANSWER_JOB:
        default:
                r = sd_bus_reply_method_return(m, "o", job);
                return r < 0 ? r : job_removed(bus, job, name);
        }
}

/*
 * Every call to the manager's object; an object callback rather than a vtable, since a
 * vtable makes sd-bus check the reply's type and the no-job case needs a wrong one.
 */
static int manager_call(sd_bus_message *m, void *userdata, sd_bus_error *err)
{
        if (sd_bus_message_is_method_call(m, IFACE, "StartTransientUnit"))
                return start_transient(m, userdata, err);
        return sd_bus_reply_method_errorf(m, "org.freedesktop.DBus.Error.UnknownMethod",
                                          "the fake manager serves StartTransientUnit only");
}

/* One client's connection, served until it closes (or the case hangs up). */
static void serve(int fd)
{
        sd_bus *bus = NULL;
        sd_id128_t id = SD_ID128_MAKE(5a, 01, 75, 5e, 2d, 11, 4e, 0b, 9c, 3f, 00, 6a, 11, 7e, 55, 38);
        int r = sd_bus_new(&bus);

        if (r >= 0)
                r = sd_bus_set_fd(bus, fd, fd);
        if (r >= 0)
                r = sd_bus_set_server(bus, 1, id);
        if (r >= 0)
                r = sd_bus_set_anonymous(bus, 1);
        if (r >= 0)
                r = sd_bus_add_object(bus, NULL, PATH, manager_call, NULL);
        if (r >= 0)
                r = sd_bus_start(bus);
        hang_up = 0;
        while (r >= 0 && !hang_up) {
                r = sd_bus_process(bus, NULL);
                if (r == 0)
                        r = sd_bus_wait(bus, UINT64_MAX);
        }
        if (r < 0 && r != -ECONNRESET && r != -ENOTCONN)
                fprintf(stderr, "fake-systemd: a connection ended: %s\n", strerror(-r));
        if (bus)
                sd_bus_flush_close_unref(bus);
        else
                close(fd);
}

int main(int argc, char **argv)
{
        struct sockaddr_un sa = { .sun_family = AF_UNIX };
        int s;

        if (argc != 4 || strlen(argv[1]) + 4 >= sizeof(sa.sun_path)) {
                fprintf(stderr, "usage: fake-systemd SOCKET CASE LOG\n");
                return 2;
        }
        for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
                if (strcmp(cases[i].name, argv[2]) == 0)
                        the_case = &cases[i];
        if (!the_case) {
                fprintf(stderr, "fake-systemd: no such case: %s\n", argv[2]);
                return 2;
        }
        log_file = fopen(argv[3], "a");
        if (!log_file) {
                perror(argv[3]);
                return 2;
        }
        /* bound under another name and renamed once it listens: the socket file means "ready" */
        snprintf(sa.sun_path, sizeof(sa.sun_path), "%s.new", argv[1]);
        s = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
        if (s < 0 || bind(s, (struct sockaddr *) &sa, sizeof(sa)) < 0 || listen(s, 8) < 0 ||
            rename(sa.sun_path, argv[1]) < 0) {
                perror(argv[1]);
                return 1;
        }
        for (;;) {
                int fd = accept4(s, NULL, NULL, SOCK_CLOEXEC);

                if (fd >= 0)
                        serve(fd);
                else if (errno != EINTR)
                        return 1;
        }
}
