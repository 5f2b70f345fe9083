/* What check-chain.c shares with check-kill.c: where a run of the chain starts, and as whom. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "check-procs.h"
#include "check-row.h"

/*
 * Where a run starts: the child changes into fd (open here, before it drops: a folder of the
 * slot the service cannot enter) or, after the drop, as the service, into dir, else into
 * fallback (the docs root, for a probe that names {cwd} and changes there itself).
 */
struct start {
        int fd;                 /* -1: none */
        const char *dir, *fallback;
};


/* The child's side of a start: -errno through the channel when no folder could be entered. */
void check_enter_start(const struct start *st);

/* Runs fn as the service (dropped from root, or as it is), started at st: its status or -errno (privdrop.h). */
int check_run_started(const struct check_run *k, const struct start *st, int (*fn)(void *arg), void *arg,
                      int timeout_ms);

/*
 * Runs fn, a run's helper whose argument is w (the first member of its job), as
 * check_run_started does, for stages of w's stage and a margin; the helper writes its report
 * (rep, size bytes, at most PIPE_BUF) at once to w->report.  As root, then ends what left says
 * the helper could not.  check_run_started's result, rep filled; without a report, that or -EIO
 * and rep untouched.
 */
int check_run_helped(const struct check_run *k, const struct start *st, int (*fn)(void *arg), struct run_slot *w,
                     int stages, void *rep, size_t size, const struct run_left *left);

/* Where a run that names no folder of its own starts: the docs root, else the slot's state folder. */
void check_default_start(const struct check_run *k, const struct slotinfo *s, struct start *st);
void check_end_start(struct start *st);

/* In the child: a session of its own, on a new pseudo-terminal of its own with tty. */
void check_own_session(bool tty);

/* "without a terminal" or "with a controlling terminal". */
const char *check_tty_said(bool tty);

/* The launcher the platform runs (allocated; NULL: out of memory). */
char *check_chain_launcher(const struct check_run *k);

/* Whether the chain's rows can run for s; when not, adds check's SKIP row and returns false. */
bool check_chain_ready(struct check_run *k, const struct slotinfo *s, const char *check);

/* The deadline of each stage of a run of sudo: --timeout, else dflt. */
int check_chain_stage_ms(const struct check_run *k, int dflt);

/* s's run_slot, each stage dflt ms unless --timeout. */
void check_run_slot_of(const struct check_run *k, const struct slotinfo *s, int dflt, struct run_slot *w);
