/*
 * Test helper for release-clean.sh: run as a slot, makes one SysV shared-memory
 * segment, semaphore set and message queue, and a POSIX message queue
 * /<name>, then prints "shm ID", "sem ID", "msg ID" (the ids the test looks for
 * in /proc/sysvipc after the release).
 */
#include <errno.h>
#include <fcntl.h>
#include <mqueue.h>
#include <stdio.h>
#include <string.h>
#include <sys/ipc.h>
#include <sys/msg.h>
#include <sys/sem.h>
#include <sys/shm.h>

int main(int argc, char **argv)
{
        int shm, sem, msg;
        char name[256];
        mqd_t mq;

        if (argc != 2 || strchr(argv[1], '/')) {
                fprintf(stderr, "usage: release-ipc NAME\n");
                return 2;
        }
        shm = shmget(IPC_PRIVATE, 4096, IPC_CREAT | 0600);
        sem = semget(IPC_PRIVATE, 1, IPC_CREAT | 0600);
        msg = msgget(IPC_PRIVATE, IPC_CREAT | 0600);
        if (shm < 0 || sem < 0 || msg < 0) {
                perror("release-ipc: SysV IPC");
                return 1;
        }
        printf("shm %d\nsem %d\nmsg %d\n", shm, sem, msg);
        snprintf(name, sizeof(name), "/%s", argv[1]);
        mq = mq_open(name, O_CREAT | O_RDWR, 0600, NULL);
        if (mq == (mqd_t) -1) {
                perror("release-ipc: mq_open");
                return 1;
        }
        mq_close(mq);
        return 0;
}
