import CLinuxIO
import SystemPackage

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

#if canImport(Glibc)
    import Glibc
#endif

/// The partial download, `FILE.part`: a sparse file of the final length, written with positional writes in any
/// order. Opening it locks the download (an exclusive `flock`, held until it is closed, through the rename to the
/// final name), so partial data is discarded by truncating it, never by unlinking it; only a file nothing was
/// written to is unlinked, by the download holding its lock (`DownloadJob.removeWhatHoldsNoBytes`).
///
/// Design: `docs/design/durability.md#the-partial-file`.
final class PartFile: Sendable {
    let path: AnchoredPath
    let descriptor: FileDescriptor

    /// Opens (creating if needed) and locks the partial file, readable by the owner only, following no link.
    init(lockingAt path: AnchoredPath) throws(BraidError) {
        self.path = path
        do {
            descriptor = try path.open(.readWrite, options: .create)
        } catch {
            if error == .tooManySymbolicLinkLevels { throw .symbolicLink(path.path, cause: .errno(error)) }
            throw .localIO("cannot open \(path)", error)
        }
        do throws(BraidError) {
            try Self.restrictToOwner(descriptor, path: path)
            try Self.lock(descriptor, path: path)
        } catch {
            try? descriptor.close()
            throw error
        }
    }

    /// Takes the exclusive lock. A lock this very process holds is waited for a moment: a child process started
    /// by another thread keeps a copy of every descriptor until it execs (`O_CLOEXEC` closes it only then), so
    /// a partial file closed for a restart can stay locked for a few milliseconds after. A lock that has no holder
    /// by the time /proc/locks is read was released in between (the child exec'd): that is tried again too.
    private static func lock(_ descriptor: FileDescriptor, path: AnchoredPath) throws(BraidError) {
        var waits = 0
        while true {
            do {
                return try descriptor.lockExclusively()
            } catch .wouldBlock where waits < 40 && (holder(of: descriptor).map { $0 == getpid() } ?? true) {
                waits += 1
                usleep(25_000)
            } catch .wouldBlock {
                throw BraidError.localIO(describeLockHolder(of: descriptor, path: path), cause: .errno(.wouldBlock))
            } catch {
                throw BraidError.localIO("cannot lock \(path)", error)
            }
        }
    }

    /// Opens and locks the partial file at a path looked up as usual (see `init(lockingAt:)`).
    convenience init(lockingAt path: FilePath) throws(BraidError) {
        try self.init(lockingAt: AnchoredPath(path))
    }

    /// Opens, locks and sizes the partial file in one step, for callers that need no decision in between.
    convenience init(path: FilePath, length: Int64?) throws(BraidError) {
        try self.init(lockingAt: path)
        do throws(BraidError) {
            try prepare(length: length)
        } catch {
            close()
            throw error
        }
    }

    /// Sizes the file to `length` without allocating blocks.
    func prepare(length: Int64?) throws(BraidError) {
        guard let length else { return }
        try resize(to: length)
    }

    /// Writes all of `bytes` at `offset`; short writes and EINTR are retried.
    @inline(__always)
    func write(_ bytes: UnsafeRawBufferPointer, at offset: Int64) throws(BraidError) {
        do {
            _ = try descriptor.writeAll(toAbsoluteOffset: offset, bytes)
        } catch {
            throw .localIO("writing \(path) at offset \(offset)", error)
        }
    }

    /// Reads into all of `buffer` from `offset`, as far as the file goes; returns how many bytes were read.
    func read(into buffer: UnsafeMutableRawBufferPointer, at offset: Int64) throws(BraidError) -> Int {
        var count = 0
        while count < buffer.count {
            let read: Int
            do {
                read = try descriptor.read(
                    fromAbsoluteOffset: offset + Int64(count),
                    into: UnsafeMutableRawBufferPointer(rebasing: buffer[count...]),
                    retryOnInterrupt: true)
            } catch {
                throw .localIO("reading \(path) at offset \(offset + Int64(count))", error)
            }
            guard read > 0 else { break }
            count += read
        }
        return count
    }

    /// Makes the written data durable against power loss.
    func synchronize() throws(BraidError) {
        do {
            try descriptor.synchronize()
        } catch {
            throw .localIO("syncing \(path)", error)
        }
    }

    /// The size the file has on disk now.
    func currentSize() throws(BraidError) -> Int64 {
        do {
            return try descriptor.seek(offset: 0, from: .end)
        } catch {
            throw .localIO("reading the size of \(path)", error)
        }
    }

    /// Whether any byte was ever written to the file, as the file system sees it (`SEEK_DATA`): the file is sparse
    /// until then. A file system that cannot tell holes from data counts all of a file that is not empty as data,
    /// and a failed look counts as data too: an unsure answer is yes.
    var holdsData: Bool {
        do {
            return try descriptor.offsetOfData() != nil
        } catch {
            return true
        }
    }

    /// Shrinks or grows the file, for a single-stream download whose length was not known in advance.
    func resize(to length: Int64) throws(BraidError) {
        do {
            try descriptor.resize(to: length)
        } catch {
            throw .localIO("cannot size \(path) to \(length) bytes", error)
        }
    }

    /// Sets the permission bits through the descriptor: the finished file's before the rename, or back to private.
    func setPermissions(_ mode: mode_t) throws(BraidError) {
        do {
            try descriptor.setPermissions(FilePermissions(rawValue: mode))
        } catch {
            throw .localIO("cannot set the permissions of \(path)", error)
        }
    }

    /// Whether `path` still names this file, so that the rename moves the data Braid wrote and nothing else.
    func isStill(at path: AnchoredPath) -> Bool {
        guard let opened = try? descriptor.stat(), let named = try? path.status() else {
            return false
        }
        return opened.deviceID == named.deviceID && opened.inode == named.inode
    }

    /// A second, read-only descriptor of this very file (not of whatever the name points to now) for the verifier.
    func openForReading() throws(BraidError) -> FileDescriptor {
        do {
            return try FileDescriptor.open(FilePath("/proc/self/fd/\(descriptor.rawValue)"), .readOnly)
        } catch {
            throw .localIO("cannot open \(path) for verification", error)
        }
    }

    /// Frees the disk blocks of `range`, which then reads as zeros, the file keeping its length: a stream's bytes
    /// once used (`StreamFeed`). False where the file system cannot, and the bytes stay.
    func freeBlocks(_ range: Range<Int64>) -> Bool {
        braid_punch_hole(descriptor.rawValue, range.lowerBound, Int64(range.count)) == 0
    }

    func close() {
        try? descriptor.close()
    }

    /// Narrows a state file that is readable by others (left by an older Braid, or created under a lax umask).
    static func restrictToOwner(_ descriptor: FileDescriptor, path: AnchoredPath) throws(BraidError) {
        let status: Stat
        do {
            status = try descriptor.stat()
        } catch {
            throw .localIO("cannot inspect \(path)", error)
        }
        guard status.type == .regular else { throw .localIO("\(path) is not a regular file: remove it") }
        let permissions = status.permissions.rawValue
        guard permissions & 0o077 != 0 else { return }
        do {
            try descriptor.setPermissions(FilePermissions(rawValue: permissions & 0o700))
        } catch {
            throw .localIO("cannot make \(path) private", error)
        }
    }

    /// Says who holds the lock. `flock` does not tell; /proc/locks lists the pid that took it, by inode.
    private static func describeLockHolder(of descriptor: FileDescriptor, path: AnchoredPath) -> String {
        let advice = "wait for it to finish or stop it, then run the same command again"
        switch holder(of: descriptor) {
        case getpid():
            return "\(path) is in use by another download of the same file in this process; \(advice)"
        case let pid?:
            return "\(path) is in use by process \(pid), which is downloading the same file; \(advice)"
        case nil:
            return "\(path) is in use by another process downloading the same file; \(advice)"
        }
    }

    /// The pid holding a `flock` on the file with this inode, from /proc/locks; nil if it cannot be told.
    private static func holder(of descriptor: FileDescriptor) -> pid_t? {
        (try? descriptor.stat()).flatMap { lockHolder(inode: UInt64($0.inode.rawValue)) }
    }

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
}

extension BraidError {
    /// A link planted at one of Braid's own file names, which it refuses to follow.
    static func symbolicLink(_ path: FilePath, cause: Cause? = nil) -> BraidError {
        .localIO("\(path) is a symbolic link; Braid does not follow links for its own files: remove it", cause: cause)
    }

    /// A link where a directory that a server, a document or a client named was to be, which could lead outside the
    /// directory the user chose.
    static func symbolicLinkInPlace(_ path: FilePath) -> BraidError {
        .localIO(
            "\(path) is a symbolic link; Braid does not follow links in a directory that a server, a document or a "
                + "client named: remove it",
            cause: .errno(.tooManySymbolicLinkLevels))
    }
}
