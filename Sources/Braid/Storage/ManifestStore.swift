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
    private var temporaryPath: FilePath { FilePath(path.string + ".tmp") }
    /// Space set aside so that the last checkpoint can still be written when the disk fills up.
    private var reservePath: FilePath { FilePath(path.string + ".reserve") }
    private static let reserveSize = 64 << 10
    private static let maximumSize = 32 << 20

    init(path: FilePath) {
        self.path = path
    }

    var exists: Bool { access(path.string, F_OK) == 0 }

    /// The manifest on disk, or nil if there is none; a manifest that cannot be read or fails validation throws.
    func load() throws(BraidError) -> Manifest? {
        guard exists else { return nil }
        let data: Data
        if let size = DestinationPaths.size(of: path), size > Self.maximumSize {
            throw .manifest("\(path) is \(size) bytes, far larger than any Braid manifest")
        }
        do {
            data = try Data(contentsOf: URL(fileURLWithPath: path.string))
        } catch {
            throw .manifest("cannot read \(path): \(error)")
        }
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

    /// Replaces the manifest atomically; with `durable`, also survives a power cut once this returns.
    func save(_ manifest: Manifest, durable: Bool) throws(BraidError) {
        let data: Data
        do {
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.sortedKeys]
            data = try encoder.encode(manifest)
        } catch {
            throw .localIO("cannot encode the manifest: \(error)")
        }
        do {
            let file = try FileDescriptor.open(
                temporaryPath,
                .writeOnly,
                options: [.create, .truncate],
                permissions: [.ownerReadWrite, .groupRead, .otherRead]
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

    func remove() {
        unlink(path.string)
        unlink(temporaryPath.string)
        releaseReserve()
    }

    /// Allocates the reserve (best effort: without it a full disk may cost the last checkpoint's progress).
    func createReserve() {
        let descriptor = open(reservePath.string, O_WRONLY | O_CREAT, 0o644)
        guard descriptor >= 0 else { return }
        if posix_fallocate(descriptor, 0, off_t(Self.reserveSize)) != 0 {
            unlink(reservePath.string)
        }
        close(descriptor)
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
