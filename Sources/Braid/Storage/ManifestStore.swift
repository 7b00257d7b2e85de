import SystemPackage

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// Reads and atomically replaces `FILE.braid`.
///
/// A checkpoint is written to a temporary file and renamed over the manifest, so a reader sees the old one or the
/// new one, never a torn one. A durable checkpoint also syncs the temporary file and the directory.
struct ManifestStore: Sendable {
    let path: FilePath
    var temporaryPath: FilePath { FilePath(path.string + ".tmp") }
    /// Where the reserve is created, for the moment before it is unlinked (see `SpaceReserve`).
    var reservePath: FilePath { FilePath(path.string + ".reserve") }
    /// Space set aside so that the last checkpoint can still be written when the disk fills up.
    private let reserve = SpaceReserve()
    private static let reserveSize: Int64 = 64 << 10
    private static let maximumSize = 32 << 20

    init(path: FilePath) {
        self.path = path
    }

    /// Whether anything is at the manifest's name, a link included.
    var exists: Bool { DestinationPaths.exists(path) }

    /// The manifest on disk, or nil if there is none; a manifest that cannot be read or fails validation throws,
    /// and a link at its name is refused, not followed.
    func load() throws(BraidError) -> Manifest? {
        let file: FileDescriptor
        do {
            file = try path.openWithoutFollowing(.readOnly)
        } catch {
            if error == .noSuchFileOrDirectory { return nil }
            if error == .tooManySymbolicLinkLevels { throw .symbolicLink(path, cause: .errno(error)) }
            throw .manifest("cannot read \(path)", error)
        }
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
                throw .manifest("cannot read \(path)", error)
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
        try? temporaryPath.unlink()
        do {
            let file = try temporaryPath.openWithoutFollowing(.writeOnly, options: [.create, .exclusiveCreate])
            try file.closeAfter {
                _ = try data.withUnsafeBytes { try file.writeAll($0) }
                if durable { try file.synchronize(includingMetadata: true) }
            }
        } catch {
            throw .localIO("cannot write \(temporaryPath)", error)
        }
        do {
            try temporaryPath.rename(to: path, replacing: true)
        } catch {
            throw .localIO("cannot replace \(path)", error)
        }
        if durable {
            Self.syncDirectory(of: path)
        }
    }

    /// Removes the manifest and its companions (links themselves, never what they point to), and gives the
    /// reserve back.
    func remove() {
        try? path.unlink()
        try? temporaryPath.unlink()
        releaseReserve()
        try? reservePath.unlink()
    }

    /// Sets the reserve aside, in a file with no name that this store holds open (best effort: without it a full
    /// disk may cost the last checkpoint's progress); a link at its name is refused.
    func createReserve() throws(BraidError) {
        try reserve.hold(Self.reserveSize, creatingAt: reservePath)
    }

    /// Whether the reserve is set aside.
    var holdsReserve: Bool { reserve.isHeld }

    /// Frees the reserve, making room for a checkpoint on a full disk.
    func releaseReserve() {
        reserve.release()
    }

    /// Makes a rename in the directory durable.
    static func syncDirectory(of path: FilePath) {
        let directory = path.removingLastComponent()
        // Through a link, unlike Braid's own files: the directory may well be reached through one.
        guard
            let descriptor = try? FileDescriptor.open(
                directory.isEmpty ? "." : directory, .readOnly, options: [.directory, .closeOnExec])
        else { return }
        try? descriptor.synchronize(includingMetadata: true)
        try? descriptor.close()
    }
}
