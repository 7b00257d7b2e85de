@_spi(StateFiles) import Braid
import Synchronization
import SystemPackage

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// The session file: every download the daemon knows, with its request and status, so that a restarted daemon
/// (after a stop, a crash or a kill -9) lists them all again and picks up the running ones from their manifests.
///
/// Each save replaces the file whole and durably, as the library replaces a manifest (`StateFile`): written beside
/// it, synced, renamed over it, and the directory synced, so a crash leaves the old file or the new one, never a
/// torn one; a link at its name is refused, never followed. Saves are serialised: a save writes
/// the table as it is when the save begins, so the last save to finish is never older than an earlier one.
public final class SessionStore: Sendable {
    /// The file's format, so that a file of another program is refused rather than read as empty.
    struct Contents: Codable {
        var format: String
        var version: Int
        var tasks: [DaemonTask]
    }

    static let format = "braid-daemon-session"
    static let version = 1

    public let path: String
    private let file: StateFile
    private let writing = Mutex(())
    private static let maximumSize = 256 << 20

    public init(path: String) {
        self.path = path
        file = StateFile(path: FilePath(path))
    }

    /// The downloads saved last; none when the file does not exist yet.
    ///
    /// - Throws: `BraidError` (`.manifest`) for a file that cannot be read or is not a Braid session; the file is
    ///   left as it is, for the user to look at.
    public func load() throws(BraidError) -> [DaemonTask] {
        let read: Data?
        do throws(Errno) {
            guard let opened = try file.openForReading() else { return [] }
            defer { try? opened.close() }
            read = try StateFile.readAll(opened, maximumSize: Self.maximumSize)
        } catch {
            throw BraidError(.localIO, "cannot read the session file \(path): \(error)", cause: .errno(error))
        }
        guard let data = read else {
            throw BraidError(.manifest, "the session file \(path) is too large to be a Braid session")
        }
        let contents: Contents
        do {
            contents = try JSONDecoder().decode(Contents.self, from: data)
        } catch {
            throw BraidError(.manifest, "the session file \(path) is not a Braid daemon session (it does not parse)")
        }
        guard contents.format == Self.format else {
            throw BraidError(.manifest, "the session file \(path) is not a Braid daemon session")
        }
        guard contents.version == Self.version else {
            throw BraidError(
                .manifest,
                "the session file \(path) is of version \(contents.version); this daemon reads \(Self.version)")
        }
        var seen = Set<String>()
        for task in contents.tasks {
            guard DaemonTask.isValidGID(task.gid), seen.insert(task.gid).inserted else {
                throw BraidError(.manifest, "the session file \(path) lists an invalid or repeated download id")
            }
        }
        return contents.tasks
    }

    /// Writes `tasks()` durably, as they are when the write begins.
    public func save(_ tasks: () -> [DaemonTask]) throws(BraidError) {
        try writing.withLock { _ throws(BraidError) in
            let contents = Contents(format: Self.format, version: Self.version, tasks: tasks())
            let data: Data
            do {
                let encoder = JSONEncoder()
                encoder.outputFormatting = [.sortedKeys]
                data = try encoder.encode(contents)
            } catch {
                throw BraidError(.localIO, "cannot encode the session: \(error)")
            }
            try file.replace(with: data, durable: true)
        }
    }
}

extension DaemonTask {
    /// Whether `gid` has aria2's form: 16 lower-case hex digits.
    public static func isValidGID(_ gid: String) -> Bool {
        gid.utf8.count == 16 && gid.utf8.allSatisfy { (0x30...0x39).contains($0) || (0x61...0x66).contains($0) }
    }
}
