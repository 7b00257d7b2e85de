import Braid
import Synchronization
import SystemPackage

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

#if canImport(Glibc)
    import Glibc
#endif

/// The session file: every download the daemon knows, with its request and status, so that a restarted daemon
/// (after a stop, a crash or a kill -9) lists them all again and picks up the running ones from their manifests.
///
/// Each save replaces the file whole and durably, as the library replaces a manifest (`StateFile`): written beside
/// it, synced, renamed over it, and the directory synced, so a crash leaves the old file or the new one, never a
/// torn one; a link at its name is refused, never followed. Saves are serialised: a save writes
/// the table as it is when the save begins, so the last save to finish is never older than an earlier one.
///
/// A session file says where the daemon writes, so one that someone else could have written is refused: it must
/// belong to the daemon's user and be writable by no one else (the daemon writes it readable by its owner only).
/// What it lists is checked again as if every download came over RPC once more (`DaemonService.start()`).
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

    /// Every file the store writes: the session and the temporary file a save renames over it.
    public var paths: [String] { [file.path.string, file.temporaryPath.string] }

    /// The downloads saved last; none when the file does not exist yet.
    ///
    /// - Throws: `BraidError` (`.manifest`) for a file that cannot be read, is not a Braid session, belongs to
    ///   another user or is writable by its group or by anyone; the file is left as it is, for the user to look at.
    public func load() throws(BraidError) -> [DaemonTask] {
        let read: Data?
        let status: stat
        do throws(Errno) {
            guard let opened = try file.openForReading() else { return [] }
            defer { try? opened.close() }
            status = try Self.status(of: opened)
            read = try StateFile.readAll(opened, maximumSize: Self.maximumSize)
        } catch {
            throw BraidError(.localIO, "cannot read the session file \(path): \(error)", cause: .errno(error))
        }
        try checkOwnership(status)
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

    private static func status(of opened: FileDescriptor) throws(Errno) -> stat {
        var status = stat()
        guard fstat(opened.rawValue, &status) == 0 else { throw Errno(rawValue: errno) }
        return status
    }

    /// Refuses a session file another user could have written: one owned by another user, or writable by its group
    /// or by anyone.
    private func checkOwnership(_ status: stat) throws(BraidError) {
        guard status.st_uid == geteuid() else {
            throw BraidError(
                .manifest,
                "the session file \(path) belongs to another user (uid \(status.st_uid)), who could make the daemon "
                    + "write anywhere; remove it or give --session a file of your own")
        }
        guard status.st_mode & (S_IWGRP | S_IWOTH) == 0 else {
            let mode = String(status.st_mode & 0o777, radix: 8)
            throw BraidError(
                .manifest,
                "the session file \(path) may be written by others (mode \(mode)), who could make the daemon write "
                    + "anywhere; check what it lists, then run chmod go-w on it")
        }
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
