#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>
#include "CLinuxIO.h"

#ifndef RENAME_NOREPLACE
#define RENAME_NOREPLACE (1 << 0)
#endif

const int braid_open_path_flag = O_PATH;

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

int64_t braid_seek_data(int descriptor, int64_t offset) {
    return lseek(descriptor, offset, SEEK_DATA);
}

int braid_sync_file_system(int descriptor) {
    return syncfs(descriptor);
}

int64_t braid_unwritten_bytes(void) {
    FILE *meminfo = fopen("/proc/meminfo", "re");
    if (meminfo == NULL) return -1;
    char line[256];
    long long kibibytes, total = 0;
    int found = 0;
    while (found < 2 && fgets(line, sizeof line, meminfo) != NULL) {
        if (sscanf(line, "Dirty: %lld kB", &kibibytes) == 1 || sscanf(line, "Writeback: %lld kB", &kibibytes) == 1) {
            total += kibibytes;
            found += 1;
        }
    }
    fclose(meminfo);
    return found == 2 ? (int64_t)total * 1024 : -1;
}

int braid_kernel_at_least(int major, int minor) {
    struct utsname name;
    int runningMajor = 0, runningMinor = 0;
    if (uname(&name) != 0 || sscanf(name.release, "%d.%d", &runningMajor, &runningMinor) != 2) return 0;
    return runningMajor > major || (runningMajor == major && runningMinor >= minor);
}

double braid_thread_busy_seconds(void) {
    // The thread's own CPU clock: the time it ran, the first of /proc/thread-self/schedstat's counters, without
    // opening and parsing that file. Not the time it waited for a CPU (schedstat's second counter): that measures
    // what else the machine runs, and grows with every wake-up of a thread that hardly works on a loaded machine.
    struct timespec used;
    if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &used) != 0) return -1;
    return (double)used.tv_sec + (double)used.tv_nsec / 1e9;
}

int braid_machine_cpu_seconds(double *total) {
    long ticksPerSecond = sysconf(_SC_CLK_TCK);
    FILE *stat = fopen("/proc/stat", "re");
    if (!stat || ticksPerSecond <= 0) {
        if (stat) fclose(stat);
        return -1;
    }
    long long field[8] = {0};
    int read = fscanf(stat, "cpu %lld %lld %lld %lld %lld %lld %lld %lld", &field[0], &field[1], &field[2],
                      &field[3], &field[4], &field[5], &field[6], &field[7]);
    fclose(stat);
    if (read < 4) return -1;
    // user nice system idle iowait irq softirq steal; guest time is counted in user already.
    long long all = 0;
    for (int index = 0; index < 8; index++) all += field[index];
    *total = (double)all / (double)ticksPerSecond;
    return 0;
}

int braid_renameat_noreplace(int fromDirectory, const char *from, int toDirectory, const char *to) {
#ifdef SYS_renameat2
    return (int)syscall(SYS_renameat2, fromDirectory, from, toDirectory, to, RENAME_NOREPLACE);
#else
    (void)fromDirectory; (void)from; (void)toDirectory; (void)to;
    errno = EINVAL;
    return -1;
#endif
}

int braid_punch_hole(int descriptor, int64_t offset, int64_t length) {
    return fallocate(descriptor, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, (off_t)offset, (off_t)length);
}

int braid_set_pipe_size(int descriptor, int size) {
    return fcntl(descriptor, F_SETPIPE_SZ, size);
}

int braid_open_unnamed(int directory, unsigned int mode) {
#ifdef O_TMPFILE
    return openat(directory, ".", O_TMPFILE | O_RDWR | O_CLOEXEC, (mode_t)mode);
#else
    (void)directory; (void)mode;
    errno = EOPNOTSUPP;
    return -1;
#endif
}

/// Whether linkat refused AT_EMPTY_PATH once and /proc then named the file: the kernel (before Linux 6.10) wants
/// CAP_DAC_READ_SEARCH for it, so every later file goes through /proc at once.
static atomic_int emptyPathRefused;

int braid_link_unnamed(int descriptor, int toDirectory, const char *to) {
    // AT_EMPTY_PATH first: it names the descriptor itself, where /proc/self/fd/N costs a walk through procfs.
    int refused = atomic_load_explicit(&emptyPathRefused, memory_order_relaxed);
    if (!refused) {
        if (linkat(descriptor, "", toDirectory, to, AT_EMPTY_PATH) == 0) return 0;
        if (errno != ENOENT) return -1;
    }
    char path[64];
    snprintf(path, sizeof path, "/proc/self/fd/%d", descriptor);
    if (linkat(AT_FDCWD, path, toDirectory, to, AT_SYMLINK_FOLLOW) != 0) return -1;
    // Named through /proc where AT_EMPTY_PATH said ENOENT: that was the refusal, not a missing directory.
    if (!refused) atomic_store_explicit(&emptyPathRefused, 1, memory_order_relaxed);
    return 0;
}
