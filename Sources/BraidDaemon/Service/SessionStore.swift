import Braid
import Synchronization

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
/// Each save replaces the file whole and durably: written beside it, synced, renamed over it, and the directory
/// synced, so a crash leaves the old file or the new one, never a torn one. Saves are serialised: a save writes
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
    private let writing = Mutex(())

    public init(path: String) {
        self.path = path
    }

    /// The downloads saved last; none when the file does not exist yet.
    ///
    /// - Throws: `BraidError` (`.manifest`) for a file that cannot be read or is not a Braid session; the file is
    ///   left as it is, for the user to look at.
    public func load() throws(BraidError) -> [DaemonTask] {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW)
        guard descriptor >= 0 else {
            if errno == ENOENT { return [] }
            throw BraidError(.localIO, "cannot read the session file \(path): \(String(cString: strerror(errno)))")
        }
        defer { close(descriptor) }
        var data: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 64 * 1024)
        while true {
            let count = buffer.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
            if count < 0, errno == EINTR { continue }
            guard count >= 0 else {
                throw BraidError(.localIO, "cannot read the session file \(path): \(String(cString: strerror(errno)))")
            }
            if count == 0 { break }
            data += buffer[0..<count]
            guard data.count <= 256 * 1024 * 1024 else {
                throw BraidError(.manifest, "the session file \(path) is too large to be a Braid session")
            }
        }
        let contents: Contents
        do {
            contents = try JSONDecoder().decode(Contents.self, from: Data(data))
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
            try Self.replace(path, with: Array(data))
        }
    }

    private static func replace(_ path: String, with bytes: [UInt8]) throws(BraidError) {
        let temporary = path + ".tmp"
        func failure(_ what: String) -> BraidError {
            BraidError(.localIO, "cannot save the session file \(path): \(what): \(String(cString: strerror(errno)))")
        }
        unlink(temporary)
        let descriptor = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0o600)
        guard descriptor >= 0 else { throw failure("create") }
        var written = 0
        while written < bytes.count {
            let count = bytes.withUnsafeBytes { write(descriptor, $0.baseAddress! + written, $0.count - written) }
            if count < 0, errno == EINTR { continue }
            guard count > 0 else {
                let error = failure("write")
                close(descriptor)
                unlink(temporary)
                throw error
            }
            written += count
        }
        guard fsync(descriptor) == 0 else {
            let error = failure("sync")
            close(descriptor)
            unlink(temporary)
            throw error
        }
        close(descriptor)
        guard rename(temporary, path) == 0 else {
            let error = failure("rename")
            unlink(temporary)
            throw error
        }
        let directory = path.lastIndex(of: "/").map { String(path[..<$0]) } ?? "."
        let directoryDescriptor = open(directory.isEmpty ? "/" : directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        if directoryDescriptor >= 0 {
            fsync(directoryDescriptor)
            close(directoryDescriptor)
        }
    }
}

extension DaemonTask {
    /// Whether `gid` has aria2's form: 16 lower-case hex digits.
    public static func isValidGID(_ gid: String) -> Bool {
        gid.utf8.count == 16 && gid.utf8.allSatisfy { (0x30...0x39).contains($0) || (0x61...0x66).contains($0) }
    }
}
