/* Names the contract gives a syntax to: application user ids and slot names. */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#define SLOTS_USER_MAX 64
#define SLOTS_POOL_MAX 9999
#define SLOTS_NAME_MAX 16       /* "slot9999" and its NUL fit with room to spare */

/* 1-64 of [A-Za-z0-9._-], not starting with '.' or '-'. */
bool slots_user_valid(const char *user);

/*
 * Parses a slot name "slotNN": at least two digits, no extra leading zero
 * (slot01, slot99, slot100; never slot1, slot001 or slot00), number 1..9999.
 * Returns the number, or 0 when the name is not a slot name.
 */
unsigned slots_slot_parse(const char *name);

/* Writes the name of slot n ("slot%02u") into buf (SLOTS_NAME_MAX bytes). */
const char *slots_slot_name(unsigned n, char buf[static SLOTS_NAME_MAX]);
