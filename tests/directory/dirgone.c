/*
 * LD_PRELOAD shim for tests: the directory goes away in the middle of a run.  At the first
 * getpwnam_r or getgrnam_r of the name in SLOTS_TEST_DIR_GONE_AT, it stops the process whose
 * pid is in SLOTS_TEST_DIR_GONE_PID (the test's slapd or nslcd) with SIGTERM, waits until it
 * has exited, and only then lets glibc do the lookup: every lookup before that one was
 * answered by the live directory, every one after meets it down.  Nothing is faked.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dlfcn.h>
#include <grp.h>
#include <pwd.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* True while pid runs (a zombie waiting for the test shell to reap it has exited). */
static int running(long pid)
{
        char path[64], buf[512], *p;
        FILE *f;
        size_t n;

        snprintf(path, sizeof(path), "/proc/%ld/stat", pid);
        f = fopen(path, "re");
        if (!f)
                return 0;
        n = fread(buf, 1, sizeof(buf) - 1, f);
        fclose(f);
        buf[n] = '\0';
        p = strrchr(buf, ')');
        return p && p[1] == ' ' && p[2] != 'Z' && p[2] != 'X';
}

static void maybe_stop(const char *name)
{
        static int done;
        const char *at = getenv("SLOTS_TEST_DIR_GONE_AT"), *pid_s = getenv("SLOTS_TEST_DIR_GONE_PID");
        const struct timespec tick = { 0, 20 * 1000 * 1000 };
        long pid;

        if (done || !at || !pid_s || strcmp(at, name) != 0)
                return;
        done = 1;
        pid = strtol(pid_s, NULL, 10);
        if (pid <= 1 || kill((pid_t) pid, SIGTERM) != 0)
                return;
        for (int i = 0; i < 500 && running(pid); i++)
                nanosleep(&tick, NULL);
}

#define NEXT(name) ((__typeof__(&name)) dlsym(RTLD_NEXT, #name))

int getpwnam_r(const char *name, struct passwd *pw, char *buf, size_t size, struct passwd **res)
{
        maybe_stop(name);
        return NEXT(getpwnam_r)(name, pw, buf, size, res);
}

int getgrnam_r(const char *name, struct group *gr, char *buf, size_t size, struct group **res)
{
        maybe_stop(name);
        return NEXT(getgrnam_r)(name, gr, buf, size, res);
}
