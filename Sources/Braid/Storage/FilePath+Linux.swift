import SystemPackage

#if canImport(Glibc)
    import Glibc
#endif

/// What Braid does to a directory path the user chose that swift-system's `FilePath` does not offer: creating it,
/// and checking access. Each call throws its `Errno` and retries EINTR (see `Errno.check`). Braid's own files are
/// opened, renamed and removed through `AnchoredPath`.
extension FilePath {
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
