/*
 * execnul PROG ARG...: runs PROG with the arguments given, where the two characters
 * "\0" inside an argument become a real NUL byte.  execve() copies each argument up
 * to its first NUL, so what PROG receives is the part before it: a NUL can never
 * reach a command through its argument vector.  The hostile-argument test uses this
 * to show what a NUL in an id turns into (the prefix, checked like any other id).
 */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

int main(int argc, char **argv)
{
        if (argc < 2) {
                fprintf(stderr, "usage: execnul PROG [ARG...]\n");
                return 2;
        }
        for (int i = 2; i < argc; i++) {
                char *p = strstr(argv[i], "\\0");
                if (p) {
                        /* The byte after the NUL stays in memory; execve never looks at it. */
                        p[0] = '\0';
                        p[1] = 'X';
                }
        }
        execv(argv[1], argv + 1);
        perror("execnul: execv");
        return 127;
}
