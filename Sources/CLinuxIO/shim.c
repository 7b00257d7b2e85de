#define _GNU_SOURCE
#include <fcntl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>
#include "CLinuxIO.h"

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
