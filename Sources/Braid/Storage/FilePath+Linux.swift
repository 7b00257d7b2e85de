import CLinuxIO
import SystemPackage

#if canImport(Glibc)
    import Glibc
#endif

/// What Braid does to a name that swift-system's `FilePath` does not offer: opening its own files safely,
/// unlinking, renaming with or without replacing, linking, and checking access. Each call throws its `Errno` and
/// retries EINTR (see `Errno.check`).
extension FilePath {
    /// Opens one of Braid's own files: never through a symbolic link at its name (that fails with
    /// `.tooManySymbolicLinkLevels`), never inherited by a child process, and, when created, readable and writable
    /// by the owner only.
    func openWithoutFollowing(
        _ mode: FileDescriptor.AccessMode,
        options: FileDescriptor.OpenOptions = [],
        retryOnInterrupt: Bool = true
    ) throws(Errno) -> FileDescriptor {
        do {
            return try FileDescriptor.open(
                self,
                mode,
                options: options.union([.noFollow, .closeOnExec]),
                permissions: .ownerReadWrite,
                retryOnInterrupt: retryOnInterrupt
            )
        } catch {
            throw Errno.thrown(by: error)
        }
    }

    /// Removes this name (`unlink`); a symbolic link is removed itself, never what it points to.
    func unlink(retryOnInterrupt: Bool = true) throws(Errno) {
        try Errno.check(retryOnInterrupt: retryOnInterrupt) { withCString { Glibc.unlink($0) } }
    }

    /// Renames this file to `target`, atomically. With `replacing`, a file at `target` is replaced (`rename`);
    /// without, the rename fails with `.fileExists` if there is one (`renameat2` with `RENAME_NOREPLACE`), or with
    /// `.invalidArgument` or `.noFunction` where the kernel or file system cannot refuse atomically.
    func rename(to target: FilePath, replacing: Bool, retryOnInterrupt: Bool = true) throws(Errno) {
        try Errno.check(retryOnInterrupt: retryOnInterrupt) {
            withCString { source in
                target.withCString { target in
                    replacing ? Glibc.rename(source, target) : braid_rename_noreplace(source, target)
                }
            }
        }
    }

    /// Gives this file a second name, `target` (`link`); never replaces a file there (`.fileExists`).
    func link(at target: FilePath, retryOnInterrupt: Bool = true) throws(Errno) {
        try Errno.check(retryOnInterrupt: retryOnInterrupt) {
            withCString { source in target.withCString { Glibc.link(source, $0) } }
        }
    }

    /// Creates this directory (not its parents); the process's umask applies to `permissions`.
    func makeDirectory(
        permissions: FilePermissions = [.ownerReadWriteExecute, .groupReadWriteExecute, .otherReadWriteExecute],
        retryOnInterrupt: Bool = true
    ) throws(Errno) {
        try Errno.check(retryOnInterrupt: retryOnInterrupt) { withCString { mkdir($0, permissions.rawValue) } }
    }

    /// Checks that this process may create and remove names in this directory (`access` with `W_OK | X_OK`).
    func checkWriteAndSearchAccess(retryOnInterrupt: Bool = true) throws(Errno) {
        try Errno.check(retryOnInterrupt: retryOnInterrupt) { withCString { access($0, W_OK | X_OK) } }
    }
}
