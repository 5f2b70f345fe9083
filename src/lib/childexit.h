/* Ending a forked child: the one exit every child of the library and commands takes. */
#pragma once

/*
 * _exit(status), after writing the coverage counters in a coverage build
 * (configure --enable-coverage): _exit skips the exit handler that writes them,
 * so without this nothing a child ran would be counted.
 */
__attribute__((noreturn)) void slots_exit_child(int status);
