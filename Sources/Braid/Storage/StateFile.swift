import SystemPackage

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// A small file of Braid's own state (a download's manifest, the daemon's session, the server statistics): opened
/// without following a link at its name, read whole up to a cap, and replaced atomically (a reader sees the old
/// file or the new one, never a torn one), durably on request. Not API (`package`): the daemon keeps its session
/// with it, the way the library keeps manifests.
///
/// How: `docs/design/durability.md#the-manifest-and-crash-ordering`.
package struct StateFile: Sendable {
    let location: AnchoredPath
    let temporaryLocation: AnchoredPath
    package var path: FilePath { location.path }
    package var temporaryPath: FilePath { temporaryLocation.path }
    /// What the temporary file's name adds to the file's, unless a caller gives its own.
    package static let temporarySuffix = ".tmp"

    /// - Parameter temporarySuffix: what the temporary file's name adds to `path`'s; a file that several processes
    ///   replace at once needs one of its own per process.
    package init(path: FilePath, temporarySuffix: String = Self.temporarySuffix) {
        self.init(location: AnchoredPath(path), temporarySuffix: temporarySuffix)
    }

    /// The file at `location`, perhaps a name in a directory held open; its temporary file is beside it.
    init(location: AnchoredPath, temporarySuffix: String = Self.temporarySuffix) {
        self.location = location
        temporaryLocation = location.appendingToName(temporarySuffix)
    }

    /// The file opened for reading, or nil when nothing is at its name; a link there fails with
    /// `tooManySymbolicLinkLevels`.
    package func openForReading() throws(Errno) -> FileDescriptor? {
        do {
            return try location.open(.readOnly)
        } catch {
            if error == .noSuchFileOrDirectory { return nil }
            throw error
        }
    }

    /// Everything `file` holds from its current offset, or nil when that is more than `maximumSize` bytes.
    package static func readAll(_ file: FileDescriptor, maximumSize: Int) throws(Errno) -> Data? {
        var data = Data()
        var buffer = [UInt8](repeating: 0, count: 64 << 10)
        while true {
            let count: Int
            do {
                count = try buffer.withUnsafeMutableBytes { try file.read(into: $0) }
            } catch {
                throw Errno.thrown(by: error)
            }
            if count == 0 { return data }
            data.append(contentsOf: buffer[..<count])
            guard data.count <= maximumSize else { return nil }
        }
    }

    /// Replaces the file with `data` atomically; with `durable`, it also survives a power cut once this returns.
    package func replace(with data: Data, durable: Bool) throws(BraidError) {
        if temporaryLocation.isSymbolicLink { throw .symbolicLink(temporaryPath) }
        try? temporaryLocation.unlink()
        let file: FileDescriptor
        do {
            file = try temporaryLocation.open(.writeOnly, options: [.create, .exclusiveCreate])
        } catch {
            throw .localIO("cannot write \(temporaryPath)", error)
        }
        // A temporary file this call made and could not write whole, or name, holds no state: it goes at once
        // (on a full disk it is empty), rather than stay beside the file until the next replace.
        do {
            try file.closeAfter {
                _ = try data.withUnsafeBytes { try file.writeAll($0) }
                if durable { try file.synchronize(includingMetadata: true) }
            }
        } catch {
            try? temporaryLocation.unlink()
            throw .localIO("cannot write \(temporaryPath)", error)
        }
        do {
            try temporaryLocation.rename(to: location, replacing: true)
        } catch {
            try? temporaryLocation.unlink()
            throw .localIO("cannot replace \(path)", error)
        }
        if durable {
            location.synchronizeDirectory()
        }
    }

    /// Makes a rename in the directory of `path` durable. The directory is reached through links, unlike Braid's
    /// own files: it may well be reached through one.
    package static func syncDirectory(of path: FilePath) {
        AnchoredPath(path).synchronizeDirectory()
    }
}
