#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>
#include "CLinuxIO.h"

#ifndef RENAME_NOREPLACE
#define RENAME_NOREPLACE (1 << 0)
#endif

int braid_set_thread_nice(int nice) {
    pid_t thread = (pid_t)syscall(SYS_gettid);
    int previous = getpriority(PRIO_PROCESS, (id_t)thread);
    setpriority(PRIO_PROCESS, (id_t)thread, nice);
    return previous;
}

int braid_start_writeback(int descriptor, int64_t offset, int64_t length) {
#ifdef SYNC_FILE_RANGE_WRITE
    return sync_file_range(descriptor, offset, length, SYNC_FILE_RANGE_WRITE);
#else
    (void)descriptor; (void)offset; (void)length;
    return 0;
#endif
}

double braid_thread_busy_seconds(void) {
    // Two counters in nanoseconds: time on a CPU, then time waiting on a run queue. Only the first is the thread's
    // own work: the wait measures what else the machine runs, and grows with every wake-up of a thread that hardly
    // works on a loaded machine.
    int descriptor = open("/proc/thread-self/schedstat", O_RDONLY | O_CLOEXEC);
    if (descriptor < 0) return -1;
    char text[128];
    ssize_t count = read(descriptor, text, sizeof text - 1);
    close(descriptor);
    if (count <= 0) return -1;
    text[count] = 0;
    unsigned long long running = 0, waiting = 0;
    if (sscanf(text, "%llu %llu", &running, &waiting) != 2) return -1;
    (void)waiting;
    return (double)running / 1e9;
}

int braid_rename_noreplace(const char *from, const char *to) {
#ifdef SYS_renameat2
    return (int)syscall(SYS_renameat2, AT_FDCWD, from, AT_FDCWD, to, RENAME_NOREPLACE);
#else
    (void)from; (void)to;
    errno = EINVAL;
    return -1;
#endif
}
