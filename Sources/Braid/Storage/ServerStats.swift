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

/// What `-n auto` learned of each server, kept in a small file (as aria2's `--server-stat-of`) so that the next
/// download from the same server starts at the count the last one settled on, instead of ramping up from one.
///
/// One entry per origin (scheme, host and port), at most `maximumEntries` (the newest), each forgotten after
/// `maximumAge`. The file is private to its owner, never followed through a link, and replaced atomically. A file
/// that cannot be read or is not one of these is treated as empty, and replaced by the next download that learns
/// something: it only ever saves time. Processes that write it at once each write their own temporary file; the
/// last one's rename wins, so an entry may be lost, never torn.
struct ServerStats: Sendable {
    struct Entry: Codable, Equatable, Sendable {
        var origin: String
        var connections: Int
        /// Whether the server refused a connection beyond `connections`.
        var refused: Bool
        /// Seconds since 1970 when it was learned.
        var time: Double

        /// What the policy starts the next download from.
        var learned: ConnectionPolicy.Learned { .init(connections: connections, refused: refused) }
    }

    private struct Contents: Codable {
        var version: Int
        var servers: [Entry]
    }

    static let maximumAge: Double = 7 * 86_400
    static let maximumEntries = 256
    private static let maximumSize = 1 << 20
    private static let version = 1
    /// One read-modify-write at a time within this process (a list's downloads finish on several threads).
    private static let writing = Mutex(())

    let path: FilePath

    /// Seconds since 1970, as entries are timed.
    static var now: Double { Date().timeIntervalSince1970 }

    /// What is remembered of `origin`, unless it is older than `maximumAge`.
    func entry(for origin: Origin, now: Double) -> Entry? {
        entries(now: now).first { $0.origin == origin.description }
    }

    /// Remembers `learned` for `origin`, replacing what was remembered of it, and forgetting entries too old or too
    /// many; creates the file's directory (private to its owner) if need be.
    func record(_ learned: ConnectionPolicy.Learned, for origin: Origin, now: Double) throws(BraidError) {
        try Self.writing.withLock { _ throws(BraidError) in
            var servers = entries(now: now).filter { $0.origin != origin.description }
            servers.insert(
                Entry(
                    origin: origin.description, connections: learned.connections, refused: learned.refused, time: now),
                at: 0)
            servers.sort { $0.time > $1.time }
            let data: Data
            do {
                data = try JSONEncoder().encode(
                    Contents(version: Self.version, servers: Array(servers.prefix(Self.maximumEntries))))
            } catch {
                throw .localIO("cannot encode \(path)", error)
            }
            try createDirectory()
            try StateFile(path: path, temporarySuffix: ".tmp.\(getpid())").replace(with: data, durable: false)
        }
    }

    /// The valid entries no older than `maximumAge`, newest first; none when the file is missing or unreadable.
    private func entries(now: Double) -> [Entry] {
        let file = StateFile(path: path)
        guard let opened = try? file.openForReading() else { return [] }
        let data = try? opened.closeAfter { try StateFile.readAll(opened, maximumSize: Self.maximumSize) }
        guard let data = data ?? nil,
            let contents = try? JSONDecoder().decode(Contents.self, from: data), contents.version == Self.version
        else { return [] }
        return contents.servers.filter { entry in
            (1...1024).contains(entry.connections) && entry.time.isFinite && entry.time <= now + 86_400
                && now - entry.time <= Self.maximumAge && entry.origin.utf8.count <= 2048
        }
    }

    private func createDirectory() throws(BraidError) {
        let directory = path.removingLastComponent()
        guard !directory.isEmpty else { return }
        do {
            try FileManager.default.createDirectory(
                atPath: directory.string, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        } catch {
            throw .localIO("cannot create \(directory)", error)
        }
    }
}
