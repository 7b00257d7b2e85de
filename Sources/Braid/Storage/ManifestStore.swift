import Synchronization
import SystemPackage

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// Reads and atomically replaces `FILE.braid`, as a `StateFile`.
///
/// Design: `docs/design/durability.md#the-manifest-and-crash-ordering`.
struct ManifestStore: Sendable {
    let path: AnchoredPath
    private var file: StateFile { StateFile(location: path) }
    var temporaryPath: AnchoredPath { file.temporaryLocation }
    /// Where the reserve is created, for the moment before it is unlinked (see `SpaceReserve`).
    var reservePath: AnchoredPath { path.appendingToName(Self.reserveSuffix) }
    static let reserveSuffix = ".reserve"
    /// Space set aside so that the last checkpoint can still be written when the disk fills up.
    private let reserve = SpaceReserve()
    /// Whether anything may be at its names: false from a look that found none, until this store (or a copy)
    /// writes one.
    private let presence: Presence
    private static let reserveSize: Int64 = 64 << 10
    private static let maximumSize = 32 << 20

    /// - Parameter knownAbsent: a look at the manifest's names, made with the partial file's lock about to be
    ///   taken, found none of them: `remove()` then has nothing to look for unless this store writes one. Only a
    ///   download holding that lock writes them.
    init(path: AnchoredPath, knownAbsent: Bool = false) {
        self.path = path
        presence = Presence(mayHoldFiles: !knownAbsent)
    }

    /// The manifest at a path looked up as usual.
    init(path: FilePath) {
        self.init(path: AnchoredPath(path))
    }

    /// Whether anything is at the manifest's name, a link included.
    var exists: Bool { path.exists }

    /// The manifest on disk, or nil if there is none; a manifest that cannot be read or fails validation throws,
    /// and a link at its name is refused, not followed.
    func load() throws(BraidError) -> Manifest? {
        let opened: FileDescriptor?
        do {
            opened = try file.openForReading()
        } catch {
            if error == .tooManySymbolicLinkLevels { throw .symbolicLink(path.path, cause: .errno(error)) }
            throw .manifest("cannot read \(path)", error)
        }
        guard let opened else { return nil }
        presence.mayHoldFiles.store(true, ordering: .relaxed)
        defer { try? opened.close() }
        try PartFile.restrictToOwner(opened, path: path)
        let read: Data?
        do {
            read = try StateFile.readAll(opened, maximumSize: Self.maximumSize)
        } catch {
            throw .manifest("cannot read \(path)", error)
        }
        guard let data = read else {
            throw .manifest("\(path) is over \(Self.maximumSize) bytes, far larger than any Braid manifest")
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
    ///
    /// The temporary file is created afresh, readable by the owner only: a stale one is unlinked first and the new
    /// one opened with `O_EXCL`, so that nothing planted at its name is written through.
    func save(_ manifest: Manifest, durable: Bool) throws(BraidError) {
        presence.mayHoldFiles.store(true, ordering: .relaxed)
        let data: Data
        do {
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.sortedKeys]
            data = try encoder.encode(manifest)
        } catch {
            throw .localIO("cannot encode the manifest: \(error)")
        }
        try file.replace(with: data, durable: durable)
    }

    /// Removes the manifest and its companions (links themselves, never what they point to), and gives the
    /// reserve back.
    func remove() {
        releaseReserve()
        guard presence.mayHoldFiles.load(ordering: .relaxed) else { return }
        // Looked at first: removing a name locks its directory for writing even when nothing is there, and a fresh
        // download has none of them.
        for name in [path, temporaryPath, reservePath] where name.exists { try? name.unlink() }
    }

    /// Sets the reserve aside, in a file with no name that this store holds open (best effort: without it a full
    /// disk may cost the last checkpoint's progress); a link at its name is refused.
    func createReserve() throws(BraidError) {
        presence.mayHoldFiles.store(true, ordering: .relaxed)
        try reserve.hold(Self.reserveSize, creatingAt: reservePath)
    }

    /// Whether the reserve is set aside.
    var holdsReserve: Bool { reserve.isHeld }

    /// Frees the reserve, making room for a checkpoint on a full disk.
    func releaseReserve() {
        reserve.release()
    }
}

extension ManifestStore {
    /// What a store and its copies know of its names.
    private final class Presence: Sendable {
        let mayHoldFiles: Atomic<Bool>

        init(mayHoldFiles: Bool) {
            self.mayHoldFiles = Atomic(mayHoldFiles)
        }
    }
}
