import CLinuxIO
import SystemPackage

#if canImport(Glibc)
    import Glibc
#endif

/// What Braid asks of an open file that swift-system's `FileDescriptor` does not offer: locking, syncing,
/// write-back, permissions and allocation. Each call throws its `Errno` and retries EINTR (see `Errno.check`).
extension FileDescriptor {
    /// Takes an exclusive `flock` on the file without waiting; throws `.wouldBlock` when another open file
    /// description (in this process or another) holds one. The lock lasts until the descriptor is closed.
    func lockExclusively(retryOnInterrupt: Bool = true) throws(Errno) {
        try Errno.check(retryOnInterrupt: retryOnInterrupt) { flock(rawValue, LOCK_EX | LOCK_NB) }
    }

    /// Makes the written data durable against power loss (`fdatasync`); with `includingMetadata`, also every
    /// attribute of the file, and for a directory the names in it (`fsync`).
    func synchronize(includingMetadata: Bool = false, retryOnInterrupt: Bool = true) throws(Errno) {
        try Errno.check(retryOnInterrupt: retryOnInterrupt) {
            includingMetadata ? fsync(rawValue) : fdatasync(rawValue)
        }
    }

    /// Makes everything written to the file system the file is on durable (`syncfs`): the file's data and
    /// attributes, and every other file's. Throws where writing back a file of it failed since this descriptor was
    /// opened, on Linux 5.8 and later only: before, such a failure went unreported.
    func synchronizeFileSystem(retryOnInterrupt: Bool = true) throws(Errno) {
        try Errno.check(retryOnInterrupt: retryOnInterrupt) { braid_sync_file_system(rawValue) }
    }

    /// Starts writing `range` of the file back to disk without waiting for it (`sync_file_range` with
    /// `SYNC_FILE_RANGE_WRITE`), so that a later `synchronize()` has less to do. Promises no durability.
    func startWriteBack(of range: Range<Int64>, retryOnInterrupt: Bool = true) throws(Errno) {
        try Errno.check(retryOnInterrupt: retryOnInterrupt) {
            braid_start_writeback(rawValue, range.lowerBound, Int64(range.count))
        }
    }

    /// The offset of the first byte of data at or after `offset` (`lseek` with `SEEK_DATA`), nil when there is none
    /// from there on: the rest of a sparse file is a hole. A file system that cannot tell holes from data counts all
    /// of the file as data.
    func offsetOfData(from offset: Int64 = 0, retryOnInterrupt: Bool = true) throws(Errno) -> Int64? {
        do {
            return try Errno.check(retryOnInterrupt: retryOnInterrupt) { braid_seek_data(rawValue, offset) }
        } catch .noSuchAddressOrDevice {
            return nil
        }
    }

    /// Sets the file's modification time (`futimens`), leaving its access time as it is.
    func setModificationTime(secondsSince1970 seconds: Double, retryOnInterrupt: Bool = true) throws(Errno) {
        let whole = seconds.rounded(.down)
        var times = [
            // UTIME_OMIT, a macro Swift does not import: ((1 << 30) - 2) in <sys/stat.h>.
            timespec(tv_sec: 0, tv_nsec: (1 << 30) - 2),
            timespec(tv_sec: Int(whole), tv_nsec: Int((seconds - whole) * 1e9)),
        ]
        try Errno.check(retryOnInterrupt: retryOnInterrupt) { futimens(rawValue, &times) }
    }

    /// Sets the file's permission bits through the descriptor (`fchmod`), whatever name it has now.
    func setPermissions(_ permissions: FilePermissions, retryOnInterrupt: Bool = true) throws(Errno) {
        try Errno.check(retryOnInterrupt: retryOnInterrupt) { fchmod(rawValue, permissions.rawValue) }
    }

    /// Allocates disk blocks for the first `length` bytes (`posix_fallocate`), so that writing them later cannot
    /// fail for want of space.
    func allocate(length: Int64, retryOnInterrupt: Bool = true) throws(Errno) {
        try Errno.check(retryOnInterrupt: retryOnInterrupt) {
            // posix_fallocate returns its error rather than setting errno.
            let error = posix_fallocate(rawValue, 0, off_t(length))
            guard error == 0 else {
                errno = error
                return -1
            }
            return 0
        }
    }
}
