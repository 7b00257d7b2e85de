import SystemPackage

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

#if canImport(Glibc)
    import Glibc
#endif

/// The partial download, `FILE.part`: a sparse file of the final length, written with positional writes so that
/// every connection lands its bytes exactly where they belong, in any order.
///
/// Opening it also locks the download: the descriptor holds an exclusive `flock` for as long as it is open, through
/// the rename to the final name, so two downloads of one file (in two processes or in one) never both write it.
/// The lock is on the partial file because the manifest is replaced at every checkpoint; for the same reason
/// partial data is discarded by truncating this descriptor, never by unlinking the locked file.
final class PartFile: Sendable {
    let path: FilePath
    let descriptor: FileDescriptor
    /// Writes are counted but dropped (`DownloadOptions.discardData`).
    let discards: Bool

    /// Opens (creating if needed) and locks the partial file, readable by the owner only, following no link.
    init(lockingAt path: FilePath, discards: Bool = false) throws(BraidError) {
        self.path = path
        self.discards = discards
        let raw = open(path.string, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0o600)
        guard raw >= 0 else {
            let error = Errno(rawValue: errno)
            if error == .tooManySymbolicLinkLevels { throw .symbolicLink(path) }
            throw .localIO("cannot open \(path): \(Self.explain(error))")
        }
        descriptor = FileDescriptor(rawValue: raw)
        do throws(BraidError) {
            try Self.restrictToOwner(descriptor, path: path)
            guard flock(raw, LOCK_EX | LOCK_NB) == 0 else {
                let error = Errno(rawValue: errno)
                guard error == .wouldBlock else {
                    throw BraidError.localIO("cannot lock \(path): \(Self.explain(error))")
                }
                throw BraidError.localIO(Self.describeLockHolder(of: descriptor, path: path))
            }
        } catch {
            try? descriptor.close()
            throw error
        }
    }

    /// Opens, locks and sizes the partial file in one step, for callers that need no decision in between.
    convenience init(path: FilePath, length: Int64?, discards: Bool = false) throws(BraidError) {
        try self.init(lockingAt: path, discards: discards)
        do throws(BraidError) {
            try prepare(length: length)
        } catch {
            close()
            throw error
        }
    }

    /// Sizes the file to `length` without allocating blocks (to 0 when writes are discarded).
    func prepare(length: Int64?) throws(BraidError) {
        guard let length else { return }
        try resize(to: discards ? 0 : length)
    }

    /// Writes all of `bytes` at `offset`; short writes and EINTR are retried.
    @inline(__always)
    func write(_ bytes: UnsafeRawBufferPointer, at offset: Int64) throws(BraidError) {
        if discards { return }
        do {
            _ = try descriptor.writeAll(toAbsoluteOffset: offset, bytes)
        } catch {
            throw .localIO("writing \(path) at offset \(offset): \(Self.explain(error))")
        }
    }

    /// Makes the written data durable against power loss.
    func synchronize() throws(BraidError) {
        if fdatasync(descriptor.rawValue) != 0 {
            throw .localIO("syncing \(path): \(String(cString: strerror(errno)))")
        }
    }

    /// The size the file has on disk now.
    func currentSize() throws(BraidError) -> Int64 {
        do {
            return try descriptor.seek(offset: 0, from: .end)
        } catch {
            throw .localIO("reading the size of \(path): \(Self.explain(error))")
        }
    }

    /// Shrinks or grows the file, for a single-stream download whose length was not known in advance.
    func resize(to length: Int64) throws(BraidError) {
        do {
            try descriptor.resize(to: length)
        } catch {
            throw .localIO("cannot size \(path) to \(length) bytes: \(Self.explain(error))")
        }
    }

    /// Sets the permission bits through the descriptor: the finished file's before the rename, or back to private.
    func setPermissions(_ mode: mode_t) throws(BraidError) {
        guard fchmod(descriptor.rawValue, mode) == 0 else {
            throw .localIO("cannot set the permissions of \(path): \(String(cString: strerror(errno)))")
        }
    }

    /// Whether `path` still names this file, so that the rename moves the data Braid wrote and nothing else.
    func isStill(at path: FilePath) -> Bool {
        var opened = stat()
        var named = stat()
        guard fstat(descriptor.rawValue, &opened) == 0, lstat(path.string, &named) == 0 else { return false }
        return opened.st_dev == named.st_dev && opened.st_ino == named.st_ino
    }

    /// A second, read-only descriptor of this very file (not of whatever the name points to now) for the verifier.
    func openForReading() throws(BraidError) -> FileDescriptor {
        do {
            return try FileDescriptor.open(FilePath("/proc/self/fd/\(descriptor.rawValue)"), .readOnly)
        } catch {
            throw .localIO("cannot open \(path) for verification: \(Self.explain(error))")
        }
    }

    func close() {
        try? descriptor.close()
    }

    /// Narrows a state file that is readable by others (left by an older Braid, or created under a lax umask).
    static func restrictToOwner(_ descriptor: FileDescriptor, path: FilePath) throws(BraidError) {
        var status = stat()
        guard fstat(descriptor.rawValue, &status) == 0 else {
            throw .localIO("cannot inspect \(path): \(String(cString: strerror(errno)))")
        }
        guard status.st_mode & S_IFMT == S_IFREG else { throw .localIO("\(path) is not a regular file: remove it") }
        if status.st_mode & 0o077 != 0, fchmod(descriptor.rawValue, status.st_mode & 0o700) != 0 {
            throw .localIO("cannot make \(path) private: \(String(cString: strerror(errno)))")
        }
    }

    /// Says who holds the lock. `flock` does not tell; /proc/locks lists the pid that took it, by inode.
    private static func describeLockHolder(of descriptor: FileDescriptor, path: FilePath) -> String {
        let advice = "wait for it to finish or stop it, then run the same command again"
        var status = stat()
        let holder = fstat(descriptor.rawValue, &status) == 0 ? lockHolder(inode: UInt64(status.st_ino)) : nil
        switch holder {
        case getpid():
            return "\(path) is in use by another download of the same file in this process; \(advice)"
        case let pid?:
            return "\(path) is in use by process \(pid), which is downloading the same file; \(advice)"
        case nil:
            return "\(path) is in use by another process downloading the same file; \(advice)"
        }
    }

    /// The pid holding a `flock` on the file with this inode, from /proc/locks; nil if it cannot be told.
    private static func lockHolder(inode: UInt64) -> pid_t? {
        guard let text = try? String(contentsOfFile: "/proc/locks", encoding: .utf8) else { return nil }
        for line in text.split(separator: "\n") {
            // "1: FLOCK  ADVISORY  WRITE 1234 08:01:5678 0 EOF"; waiters have "->" after the number.
            let fields = line.split(separator: " ", omittingEmptySubsequences: true)
            guard fields.count >= 6, fields[1] == "FLOCK",
                let device = fields[5].split(separator: ":").last, UInt64(device) == inode,
                let pid = pid_t(fields[4]), pid > 0
            else { continue }
            return pid
        }
        return nil
    }

    static func explain(_ error: any Error) -> String {
        if let errno = error as? Errno {
            switch errno {
            case .noSpace: return "no space left on device (free some space and run the same command again)"
            case .permissionDenied: return "permission denied"
            case .noSuchFileOrDirectory: return "no such file or directory"
            case .readOnlyFileSystem: return "read-only file system"
            default: return String(describing: errno)
            }
        }
        return String(describing: error)
    }
}

extension BraidError {
    /// A link planted at one of Braid's own file names, which it refuses to follow.
    static func symbolicLink(_ path: FilePath) -> BraidError {
        .localIO("\(path) is a symbolic link; Braid does not follow links for its own files: remove it")
    }
}
