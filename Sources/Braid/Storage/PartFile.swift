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
final class PartFile: Sendable {
    let path: FilePath
    let descriptor: FileDescriptor
    /// Writes are counted but dropped (`DownloadOptions.discardData`).
    let discards: Bool

    /// Opens (creating if needed) the partial file and sizes it to `length` without allocating blocks.
    init(path: FilePath, length: Int64?, discards: Bool = false) throws(BraidError) {
        self.path = path
        self.discards = discards
        do {
            descriptor = try FileDescriptor.open(
                path,
                .readWrite,
                options: [.create],
                permissions: [.ownerReadWrite, .groupRead, .otherRead]
            )
        } catch {
            throw .localIO("cannot open \(path): \(Self.explain(error))")
        }
        if let length {
            do {
                try descriptor.resize(to: discards ? 0 : length)
            } catch {
                try? descriptor.close()
                throw .localIO("cannot size \(path) to \(length) bytes: \(Self.explain(error))")
            }
        }
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

    /// A second, read-only descriptor for the verifier thread.
    func openForReading() throws(BraidError) -> FileDescriptor {
        do {
            return try FileDescriptor.open(path, .readOnly)
        } catch {
            throw .localIO("cannot open \(path) for verification: \(Self.explain(error))")
        }
    }

    func close() {
        try? descriptor.close()
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
