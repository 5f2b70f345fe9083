/* Escaping of text that may hold file-system names before it reaches a terminal or syslog. */
#pragma once

#include <stddef.h>

/*
 * Returns a malloc'ed copy of s that is safe on a terminal and in syslog, the
 * way `ls -b` and systemd's cescape() show names: backslash, control bytes
 * (ESC, CR, BEL, ...), DEL, the C1 controls U+0080..U+009F and bytes that are
 * not valid UTF-8 become C escapes (\\, \n, \r, \t, \a, \b, \f, \v, else \ooo
 * octal, so ESC is \033).  Printable ASCII and valid UTF-8 stay as they are.
 * NULL when out of memory.  JSON output never goes through this: it keeps
 * the exact name.
 */
char *slots_escape(const char *s);

/* The same into buf (always NUL-terminated; cut at a whole escape when too small); returns buf. */
const char *slots_escape_buf(const char *s, char *buf, size_t size);
