/* slots-admin's verbs: the options they share and the function of each, which slots-admin.c's table dispatches. */
#pragma once

#include <stdbool.h>

struct admin_opts {
        const char *config;             /* --config FILE, else NULL */
        const char *slot;               /* release's --slot */
        bool json;
        bool dry_run;                   /* --dry-run: say what would change, write nothing */
        bool held;                      /* status --held */
        int timeout_s;                  /* check's --timeout; 0: its defaults */
        const char *format;             /* check's --format, else NULL */
        const char *output;             /* check's --output, else NULL */
};

/* Each verb: its arguments (counted by the table already) into one library call and one outcome; the exit status. */
int verb_assign(const struct admin_opts *o, int argc, char **argv);
int verb_release(const struct admin_opts *o, int argc, char **argv);
int verb_status(const struct admin_opts *o, int argc, char **argv);
int verb_check(const struct admin_opts *o, int argc, char **argv);

/* The checks of arguments every verb shares: a usage error's exit status, or -1 when they are good. */
int verb_user_arg(const char *user);
int verb_slot_arg(const char *slot, unsigned *n);
