#pragma once

#include <stdbool.h>
#include <stdint.h>

/*
 * The leading decimal digits of s into *v: returns how many there are (0: none), or -ERANGE
 * when they do not fit in 64 bits.
 */
int slots_digits(const char *s, uint64_t *v);

/*
 * A whole number as slots.conf writes one: decimal digits and, when suffix is true, at most one
 * binary suffix K, M, G or T (powers of 1024); nothing else (no sign, space or fraction).
 * Returns 0, -EINVAL for any other text, -ERANGE when the value does not fit in 64 bits.
 */
int slots_size_parse(const char *s, bool suffix, uint64_t *out);
