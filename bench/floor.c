/*
 * The physical floor of one table write: exactly one owner-preserving replace
 * of FILE by SIZE bytes, and nothing else (no parsing, no lock, no checks
 * beyond the system calls' results).  Usage: floor FILE SIZE
 *
 * stat the old file (whose owner and mode the new one keeps), open a temp
 * next to it, write, fsync, fchown, fchmod, close, rename over FILE, open and
 * fsync the directory.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static int die(const char *what, const char *path)
{
        fprintf(stderr, "floor: %s: %s: %s\n", what, path, strerror(errno));
        return 1;
}

int main(int argc, char **argv)
{
        char tmp[4096], dir[4096], *slash, *buf;
        struct stat st;
        size_t size, done = 0;
        int fd, dfd;

        if (argc != 3) {
                fprintf(stderr, "usage: floor FILE SIZE\n");
                return 2;
        }
        size = strtoul(argv[2], NULL, 10);
        buf = malloc(size ? size : 1);
        if (!buf)
                return die("malloc", argv[1]);
        memset(buf, ' ', size);
        if (size)
                buf[size - 1] = '\n';
        snprintf(dir, sizeof(dir), "%s", argv[1]);
        slash = strrchr(dir, '/');
        if (slash)
                *slash = '\0';
        else
                snprintf(dir, sizeof(dir), ".");
        snprintf(tmp, sizeof(tmp), "%s.floor-tmp", argv[1]);

        if (stat(argv[1], &st) < 0)
                return die("stat", argv[1]);
        fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
        if (fd < 0)
                return die("open", tmp);
        while (done < size) {
                ssize_t w = write(fd, buf + done, size - done);
                if (w < 0 && errno == EINTR)
                        continue;
                if (w < 0)
                        return die("write", tmp);
                done += (size_t) w;
        }
        if (fsync(fd) < 0)
                return die("fsync", tmp);
        if (fchown(fd, st.st_uid, st.st_gid) < 0)
                return die("fchown", tmp);
        if (fchmod(fd, st.st_mode & 07777) < 0)
                return die("fchmod", tmp);
        if (close(fd) < 0)
                return die("close", tmp);
        if (rename(tmp, argv[1]) < 0)
                return die("rename", tmp);
        dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (dfd < 0)
                return die("open", dir);
        if (fsync(dfd) < 0)
                return die("fsync", dir);
        close(dfd);
        free(buf);
        return 0;
}
