#ifndef BRAID_CLINUXIO_H
#define BRAID_CLINUXIO_H

#include <stdint.h>

/// Starts asynchronous writeback of a file range (sync_file_range with SYNC_FILE_RANGE_WRITE), a GNU extension
/// that Swift's Glibc module does not expose. Returns 0 or -1 with errno set; a no-op where it does not exist.
int braid_start_writeback(int descriptor, int64_t offset, int64_t length);

/// Makes everything written to the file system that `descriptor` is on durable (syncfs), a GNU extension that
/// Swift's Glibc module does not expose. Returns 0, or -1 with errno set: since Linux 5.8 also where writing back a
/// file of it failed since `descriptor` was opened (before, such a failure went unreported).
int braid_sync_file_system(int descriptor);

/// The offset of the first byte of data at or after `offset` (lseek with SEEK_DATA, a GNU extension that Swift's
/// Glibc module does not expose). Returns it, or -1 with errno set: ENXIO when there is no data from there on.
int64_t braid_seek_data(int descriptor, int64_t offset);

/// The bytes the whole system has written and not yet on disk: Dirty and Writeback of /proc/meminfo. Returns -1
/// where that cannot be read.
int64_t braid_unwritten_bytes(void);

/// Whether the running kernel is at least `major`.`minor` (uname). Returns 1 or 0; 0 where it cannot be told.
int braid_kernel_at_least(int major, int minor);

/// Sets the calling thread's nice value (Linux schedules threads individually); returns the previous one.
int braid_set_thread_nice(int nice);

/// The seconds the calling thread has been busy since it began: running on a CPU (CLOCK_THREAD_CPUTIME_ID), not the
/// time it was ready and waiting for one, which says how loaded the machine is. Returns -1 where it cannot be read.
double braid_thread_busy_seconds(void);

/// The machine's CPU time since boot in seconds, summed over its CPUs, idle time included (the first line of
/// /proc/stat). Returns 0, or -1 where it cannot be read.
int braid_machine_cpu_seconds(double *total);

/// Renames `from` (relative to the directory `fromDirectory`, or to the working directory for AT_FDCWD) to `to`
/// (relative to `toDirectory`) unless `to` exists (renameat2 with RENAME_NOREPLACE), atomically. Returns 0, or -1
/// with errno set: EEXIST when `to` exists, EINVAL where the kernel or file system cannot do it.
int braid_renameat_noreplace(int fromDirectory, const char *_Nonnull from, int toDirectory, const char *_Nonnull to);

/// Frees the disk blocks of a file range, which then reads as zeros, keeping the file's size (fallocate with
/// FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE). Returns 0, or -1 with errno set: EOPNOTSUPP where the file system
/// cannot.
int braid_punch_hole(int descriptor, int64_t offset, int64_t length);

/// Asks for a pipe's buffer to hold `size` bytes (fcntl F_SETPIPE_SZ): fewer switches between a writer and its
/// reader. Returns the size the kernel chose, or -1 with errno set: EBADF when `descriptor` is not a pipe, EPERM
/// above /proc/sys/fs/pipe-max-size.
int braid_set_pipe_size(int descriptor, int size);

/// Opens a new file without a name in `directory` (open with O_TMPFILE | O_RDWR), with `mode` less the umask as any
/// new file gets it: invisible until `braid_link_unnamed` names it, and gone if the process dies first. Returns the
/// descriptor, or -1 with errno set: EOPNOTSUPP (or EISDIR, EINVAL on an older kernel) where the file system cannot.
int braid_open_unnamed(int directory, unsigned int mode);

/// Gives the unnamed file open as `descriptor` the name `to` in `toDirectory` (linkat with AT_EMPTY_PATH, else,
/// where the kernel wants a capability for that, through /proc/self/fd); never replaces a file there. Returns 0, or
/// -1 with errno set: EEXIST when `to` is taken.
int braid_link_unnamed(int descriptor, int toDirectory, const char *_Nonnull to);

/// O_PATH, which Swift's Glibc module leaves out (it needs _GNU_SOURCE): a descriptor that names a directory for the
/// *at calls without the permission to list it.
extern const int braid_open_path_flag;

#endif
