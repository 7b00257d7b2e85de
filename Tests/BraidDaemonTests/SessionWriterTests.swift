import Braid
import BraidTestSupport
import Foundation
import Testing

@testable import BraidDaemon

/// The session written at most once an interval, not on every change: a burst of adds costs one write, and a stop or
/// `saveSession` writes at once.
@Suite("session writes")
struct SessionWriterTests {
    /// The gids the session file at `path` lists; nil when there is no file.
    static func listed(_ path: String) throws -> [String]? {
        guard FileManager.default.fileExists(atPath: path) else { return nil }
        return try SessionStore(path: path).load().map(\.gid)
    }

    static func withService(
        interval: Duration,
        _ body: (_ service: DaemonService, _ root: String, _ session: String) async throws -> Void
    ) async throws {
        let directory = try TemporaryDirectory(prefix: "braid-daemon-writer")
        defer { directory.remove() }
        let root = try DownloadDirectory(directory.url.path).root
        let session = root + "/.braid-session"
        let service = DaemonService(
            configuration: .init(directory: root, sessionPath: session, sessionInterval: interval))
        try service.start()
        try await body(service, root, session)
    }

    @Test("changes wait for the interval: a thousand adds write nothing at once; saveSession and stop write them all")
    func coalesced() async throws {
        try await Self.withService(interval: .seconds(3600)) { service, root, session in
            let gids = (0..<1000).map { number in
                service.add(TaskRequest(uris: ["http://127.0.0.1:1/\(number)"], directory: root), paused: true)
            }
            #expect(try Self.listed(session) == nil, "nothing written before the interval")
            try await service.saveSession()
            #expect(try Self.listed(session) == gids)
            let last = service.add(TaskRequest(uris: ["http://127.0.0.1:1/last"], directory: root), paused: true)
            await service.stop()
            #expect(try Self.listed(session) == gids + [last], "stop writes what changed since")
        }
    }

    @Test("a change is written by itself within the interval")
    func writtenWithinInterval() async throws {
        try await Self.withService(interval: .milliseconds(50)) { service, root, session in
            let gid = service.add(TaskRequest(uris: ["http://127.0.0.1:1/a"], directory: root), paused: true)
            try await Polling.until("the session to list the download", timeout: Polling.patience) {
                (try? Self.listed(session)) == [gid]
            }
            try service.remove(gid)
            try await Polling.until("the session to list nothing", timeout: Polling.patience) {
                (try? Self.listed(session)) == []
            }
            await service.stop()
        }
    }
}
