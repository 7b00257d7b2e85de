import Braid
import BraidTestSupport
import Foundation
import Testing

@testable import BraidDaemon

/// The session file trusted no more than a client: another user's file, or one others may write, is refused, and
/// every download it lists is checked as if it came over RPC again.
@Suite("session file checks")
struct SessionStoreTests {
    /// A download directory with a session file in it, holding `tasks` as JSON text, readable by its owner only.
    static func withSession(
        _ tasks: (String) -> String,
        _ body: (_ root: String, _ session: String) throws -> Void
    ) throws {
        let directory = try TemporaryDirectory(prefix: "braid-daemon-session")
        defer { directory.remove() }
        let root = try DownloadDirectory(directory.url.path).root
        let session = root + "/.braid-session"
        let text = #"{"format":"braid-daemon-session","version":1,"tasks":["# + tasks(root) + "]}"
        try text.write(toFile: session, atomically: false, encoding: .utf8)
        try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: session)
        try body(root, session)
    }

    static func task(directory: String, output: String? = nil, path: String? = nil) -> String {
        #"{"gid":"00000000000000ab","status":"paused","completedLength":0,"request":{"uris":["http://127.0.0.1:1/a"],"#
            + #""directory":""# + directory + #"","headers":[]"# + (output.map { #","output":""# + $0 + #"""# } ?? "")
            + "}" + (path.map { #","path":""# + $0 + #"""# } ?? "") + "}"
    }

    static func start(root: String, session: String) throws {
        try DaemonService(configuration: .init(directory: root, sessionPath: session)).start()
    }

    @Test("A download the session lists in its directory, as the daemon saved it, is read back")
    func accepted() throws {
        try Self.withSession({ Self.task(directory: $0, output: "a.bin", path: $0 + "/a.bin") }) { root, session in
            let service = DaemonService(configuration: .init(directory: root, sessionPath: session))
            try service.start()
            #expect(service.snapshot("00000000000000ab")?.task.path == root + "/a.bin")
        }
    }

    @Test(
        "A session listing a download that would write outside the directory, or over the session, is refused",
        arguments: [
            { (root: String) in Self.task(directory: "/tmp") },
            { (root: String) in Self.task(directory: root + "/../elsewhere") },
            { (root: String) in Self.task(directory: root, output: "../x") },
            { (root: String) in Self.task(directory: root, output: ".braid-session") },
            { (root: String) in Self.task(directory: root, path: "/etc/passwd") },
            { (root: String) in Self.task(directory: root, path: root + "/.braid-session") },
            { (root: String) in Self.task(directory: root).replacingOccurrences(of: "http://", with: "file://") },
        ] as [@Sendable (String) -> String]
    )
    func refused(_ task: @Sendable (String) -> String) throws {
        try Self.withSession(task) { root, session in
            let before = try Data(contentsOf: URL(fileURLWithPath: session))
            #expect(throws: BraidError.self) { try Self.start(root: root, session: session) }
            #expect(try Data(contentsOf: URL(fileURLWithPath: session)) == before)
        }
    }

    @Test("A Metalink's hashes and piece hashes are saved with its download and read back")
    func metalinkHashes() throws {
        let directory = try TemporaryDirectory(prefix: "braid-session-metalink")
        defer { directory.remove() }
        var request = TaskRequest(uris: ["http://127.0.0.1/a"], directory: directory.url.path, output: "a.bin")
        request.metalinkDigests = [
            ExpectedDigest(algorithm: .sha256, bytes: Array(repeating: 7, count: 32), source: .metalink)
        ]
        request.pieces = PieceHashes(algorithm: .sha1, pieceLength: 1 << 18, digests: [Array(repeating: 1, count: 20)])
        let task = DaemonTask(gid: "00000000000000ab", request: request, status: .paused)
        let store = SessionStore(path: directory.appending("session").path)
        try store.save { [task] }
        #expect(try store.load() == [task])
    }

    @Test("A session file others may write is refused", arguments: [0o620, 0o602, 0o666])
    func writableByOthers(_ mode: Int) throws {
        try Self.withSession({ Self.task(directory: $0) }) { root, session in
            try FileManager.default.setAttributes([.posixPermissions: mode], ofItemAtPath: session)
            let error = #expect(throws: BraidError.self) { try Self.start(root: root, session: session) }
            #expect(error?.message.contains("written by others") == true)
        }
    }

    @Test("A session file of another user is refused", .enabled(if: geteuid() == 0, "needs root to give a file away"))
    func anotherUsers() throws {
        try Self.withSession({ Self.task(directory: $0) }) { root, session in
            #expect(chown(session, 65534, 65534) == 0)
            let error = #expect(throws: BraidError.self) { try Self.start(root: root, session: session) }
            #expect(error?.message.contains("another user") == true)
        }
    }

    @Test("The daemon writes its session readable by its owner only, and reads it back")
    func writtenPrivate() async throws {
        let directory = try TemporaryDirectory(prefix: "braid-daemon-session")
        defer { directory.remove() }
        let root = try DownloadDirectory(directory.url.path)
        let session = root.root + "/.braid-session"
        let service = DaemonService(configuration: .init(directory: root.root, sessionPath: session))
        try service.start()
        _ = service.add(TaskRequest(uris: ["http://127.0.0.1:1/a"], directory: root.root), paused: true)
        await service.stop()
        let mode = try FileManager.default.attributesOfItem(atPath: session)[.posixPermissions] as? Int
        #expect(mode == 0o600)
        try Self.start(root: root.root, session: session)
    }
}
