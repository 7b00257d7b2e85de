import SystemPackage

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

#if canImport(Glibc)
    import Glibc
#endif

/// Reads and atomically replaces `FILE.braid`.
///
/// A checkpoint is written to a temporary file and renamed over the manifest, so a reader sees the old one or the
/// new one, never a torn one. A durable checkpoint also syncs the temporary file and the directory.
struct ManifestStore: Sendable {
    let path: FilePath
    var temporaryPath: FilePath { FilePath(path.string + ".tmp") }
    /// Space set aside so that the last checkpoint can still be written when the disk fills up.
    var reservePath: FilePath { FilePath(path.string + ".reserve") }
    private static let reserveSize = 64 << 10
    private static let maximumSize = 32 << 20

    init(path: FilePath) {
        self.path = path
    }

    /// Whether anything is at the manifest's name, a link included.
    var exists: Bool { DestinationPaths.exists(path) }

    /// The manifest on disk, or nil if there is none; a manifest that cannot be read or fails validation throws,
    /// and a link at its name is refused, not followed.
    func load() throws(BraidError) -> Manifest? {
        let raw = open(path.string, O_RDONLY | O_NOFOLLOW | O_CLOEXEC)
        guard raw >= 0 else {
            let error = Errno(rawValue: errno)
            if error == .noSuchFileOrDirectory { return nil }
            if error == .tooManySymbolicLinkLevels { throw .symbolicLink(path) }
            throw .manifest("cannot read \(path): \(PartFile.explain(error))")
        }
        let file = FileDescriptor(rawValue: raw)
        defer { try? file.close() }
        try PartFile.restrictToOwner(file, path: path)
        let data = try Self.readAll(file, path: path)
        let manifest: Manifest
        do {
            manifest = try JSONDecoder().decode(Manifest.self, from: data)
        } catch {
            throw .manifest("\(path) is corrupt (not a readable Braid manifest)")
        }
        do {
            try manifest.validate()
        } catch {
            throw .manifest("\(path) is invalid: \(error.message)")
        }
        return manifest
    }

    private static func readAll(_ file: FileDescriptor, path: FilePath) throws(BraidError) -> Data {
        var data = Data()
        var buffer = [UInt8](repeating: 0, count: 64 << 10)
        while true {
            let count: Int
            do {
                count = try buffer.withUnsafeMutableBytes { try file.read(into: $0) }
            } catch {
                throw .manifest("cannot read \(path): \(PartFile.explain(error))")
            }
            if count == 0 { return data }
            data.append(contentsOf: buffer[..<count])
            guard data.count <= maximumSize else {
                throw .manifest("\(path) is over \(maximumSize) bytes, far larger than any Braid manifest")
            }
        }
    }

    /// Replaces the manifest atomically; with `durable`, also survives a power cut once this returns.
    ///
    /// The temporary file is created afresh, readable by the owner only: a stale one is unlinked first and the new
    /// one opened with `O_EXCL`, so that nothing planted at its name is written through.
    func save(_ manifest: Manifest, durable: Bool) throws(BraidError) {
        let data: Data
        do {
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.sortedKeys]
            data = try encoder.encode(manifest)
        } catch {
            throw .localIO("cannot encode the manifest: \(error)")
        }
        if DestinationPaths.isSymbolicLink(temporaryPath) { throw .symbolicLink(temporaryPath) }
        unlink(temporaryPath.string)
        do {
            let file = try FileDescriptor.open(
                temporaryPath,
                .writeOnly,
                options: [.create, .exclusiveCreate, .noFollow, .closeOnExec],
                permissions: [.ownerReadWrite]
            )
            try file.closeAfter {
                _ = try data.withUnsafeBytes { try file.writeAll($0) }
                if durable, fsync(file.rawValue) != 0 { throw Errno(rawValue: errno) }
            }
        } catch {
            throw .localIO("cannot write \(temporaryPath): \(PartFile.explain(error))")
        }
        guard rename(temporaryPath.string, path.string) == 0 else {
            throw .localIO("cannot replace \(path): \(String(cString: strerror(errno)))")
        }
        if durable {
            Self.syncDirectory(of: path)
        }
    }

    /// Removes the manifest and its companions (links themselves, never what they point to).
    func remove() {
        unlink(path.string)
        unlink(temporaryPath.string)
        releaseReserve()
    }

    /// Allocates the reserve (best effort: without it a full disk may cost the last checkpoint's progress); a link
    /// at its name is refused.
    func createReserve() throws(BraidError) {
        let descriptor = open(reservePath.string, O_WRONLY | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else {
            if errno == ELOOP { throw .symbolicLink(reservePath) }
            return
        }
        defer { close(descriptor) }
        try PartFile.restrictToOwner(FileDescriptor(rawValue: descriptor), path: reservePath)
        if posix_fallocate(descriptor, 0, off_t(Self.reserveSize)) != 0 {
            unlink(reservePath.string)
        }
    }

    /// Frees the reserve, making room for a checkpoint on a full disk.
    func releaseReserve() {
        unlink(reservePath.string)
    }

    /// Makes a rename in the directory durable.
    static func syncDirectory(of path: FilePath) {
        let directory = path.removingLastComponent()
        let name = directory.isEmpty ? "." : directory.string
        let descriptor = open(name, O_RDONLY | O_DIRECTORY)
        guard descriptor >= 0 else { return }
        fsync(descriptor)
        close(descriptor)
    }
}
