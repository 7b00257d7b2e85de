import BraidDaemon
import BraidJSON
import BraidTestServer
import BraidTestSupport
import Foundation
import Testing

/// `braid daemon` as a child process against clients and files no one should trust: a batch of junk without the
/// token, a crowd of silent sockets against a daemon short of descriptors, an answer of megabytes to a client that
/// closes, a download named after the session file, a session file planted or left writable.
///
/// Each fails on the daemon before issue 26 (run them against another build with `BRAID_DAEMON_TESTS_BINARY`).
@Suite("braid daemon under hostile clients", .serialized)
struct DaemonHostileClientTests {
    static let secret = "hostile-\(UInt64.random(in: 0...UInt64.max))"

    /// A scratch directory with `downloads/` (the daemon's `--dir`), removed afterwards.
    struct Scratch {
        let directory: TemporaryDirectory
        /// The session file's name in `downloads`.
        var sessionName = ".braid-session"
        var downloads: String { directory.appending("downloads").path }
        var session: String { downloads + "/" + sessionName }

        func startDaemon(arguments: [String] = [], fileLimit: Int? = nil) async throws -> DaemonUnderTest {
            try await DaemonUnderTest.start(
                .braid, directory: downloads, session: session, secret: DaemonHostileClientTests.secret,
                arguments: arguments, fileLimit: fileLimit)
        }
    }

    func withScratch(_ body: (Scratch) async throws -> Void) async throws {
        let directory = try TemporaryDirectory(prefix: "braid-daemon-hostile")
        defer { directory.remove() }
        try FileManager.default.createDirectory(
            atPath: directory.appending("downloads").path, withIntermediateDirectories: true)
        try await body(Scratch(directory: directory))
    }

    /// One JSON-RPC call with the token over HTTP; its whole answer.
    static func call(_ daemon: DaemonUnderTest, _ method: String, _ params: String = "") async throws -> JSON {
        let request =
            #"{"jsonrpc":"2.0","id":"h","method":""# + method + #"","params":["token:"# + secret + #"""#
            + (params.isEmpty ? "" : "," + params) + "]}"
        let response = try await CurlResponse.fetch(["--data-binary", request, daemon.rpcURL])
        return try JSON(parsing: Array(response.body.utf8))
    }

    /// What `aria2.tellStatus` answers for `gid` once the download is complete or in error, or after a minute.
    static func settled(_ daemon: DaemonUnderTest, _ gid: String) async throws -> JSON {
        let deadline = ContinuousClock.now + .seconds(60)
        var status = JSON.null
        while ContinuousClock.now < deadline {
            status = try await call(daemon, "aria2.tellStatus", #"""# + gid + #"""#)
            if ["complete", "error"].contains(status["result"]?["status"]?.stringValue ?? "") { break }
            try await Task.sleep(for: .milliseconds(50))
        }
        return status
    }

    /// Stops the daemon and expects the clean exit braid promises on SIGTERM.
    static func expectCleanStop(_ daemon: DaemonUnderTest) {
        let status = daemon.stop()
        #expect(status == .exited(0), "braid daemon on SIGTERM: \(status)\n\(daemon.child.standardError)")
    }

    // MARK: - Junk and crowds

    @Test("A 2 MiB batch of junk calls without the token gets one short error, and the daemon stays small")
    func junkBatch() async throws {
        try await withScratch { scratch in
            let daemon = try await scratch.startDaemon()
            defer { Self.expectCleanStop(daemon) }
            let call = #"{"jsonrpc":"2.0","id":1,"method":"aria2.addUri","params":[["http://127.0.0.1:1/"]]},"#
            var batch = "["
            while batch.utf8.count < (2 << 20) - 4096 { batch += batch.utf8.count % 3 == 0 ? call : "{}," }
            batch += "{}]"
            let file = scratch.directory.appending("batch.json").path
            try batch.write(toFile: file, atomically: false, encoding: .utf8)
            let response = try await CurlResponse.fetch(["--data-binary", "@" + file, daemon.rpcURL])
            #expect(response.status == 200)
            #expect(response.body.utf8.count < 1024, "an answer of \(response.body.utf8.count) bytes")
            #expect(response.body.contains("-32600"))
            let peak = try ProcessFigures.peakResidentBytes(daemon.child.processIdentifier)
            #expect(peak < 100 << 20, "the daemon's peak resident size was \(peak >> 20) MiB")
            let active = try await Self.call(daemon, "aria2.tellActive")
            #expect(active["result"] == .array([]), "\(active.text)")
        }
    }

    @Test(
        "A crowd of silent sockets against a daemon short of descriptors: a client is answered, and nothing spins",
        arguments: [
            (fileLimit: 256, sockets: 400, arguments: [String]()),
            // A cap above the limit makes accept fail with EMFILE: the daemon must pause or make room, not spin.
            (fileLimit: 64, sockets: 200, arguments: ["--max-clients", "1000"]),
        ]
    )
    func silentCrowd(fileLimit: Int, sockets: Int, arguments: [String]) async throws {
        try await withScratch { scratch in
            let daemon = try await scratch.startDaemon(arguments: arguments, fileLimit: fileLimit)
            defer { Self.expectCleanStop(daemon) }
            let port = try #require(Int(daemon.baseURL.split(separator: ":").last ?? ""))
            // Half of the descriptors first, held by the daemon for sure; then the rest of the crowd.
            let pid = daemon.child.processIdentifier
            let first = try SilentSockets(count: fileLimit / 2, port: port)
            defer { first.close() }
            try await Polling.until("the daemon to take the first of the crowd in", timeout: .seconds(30)) {
                try ProcessFigures.openSockets(pid) >= fileLimit / 2
            }
            let rest = try SilentSockets(count: sockets - fileLimit / 2, port: port)
            defer { rest.close() }
            let active = try await Self.call(daemon, "aria2.tellActive")
            #expect(active["result"] == .array([]), "\(active.text)")
            let share = try await ProcessFigures.coreShare(daemon.child.processIdentifier, over: .seconds(2))
            #expect(share < 0.25, "the daemon used \(Int(share * 100)) % of a core while the crowd waited")
        }
    }

    @Test("An answer of megabytes to a client that asked to close the connection arrives whole")
    func largeAnswerBeforeClose() async throws {
        try await withScratch { scratch in
            let daemon = try await scratch.startDaemon()
            defer { Self.expectCleanStop(daemon) }
            let listMethods = Array(repeating: #"{"methodName":"system.listMethods"}"#, count: 1000)
            let multicall =
                #"{"jsonrpc":"2.0","id":1,"method":"system.multicall","params":[["#
                + listMethods.joined(separator: ",") + "]]}"
            let batch = "[" + Array(repeating: multicall, count: 8).joined(separator: ",") + "]"
            let file = scratch.directory.appending("batch.json").path
            try batch.write(toFile: file, atomically: false, encoding: .utf8)
            // curl fails (exit 18) when the connection closes before Content-Length bytes have come.
            let response = try await CurlResponse.fetch([
                "-H", "Connection: close", "--data-binary", "@" + file, daemon.rpcURL,
            ])
            #expect(response.status == 200)
            #expect(response.body.utf8.count == Int(response.headers["content-length"] ?? ""))
            #expect(response.body.utf8.count > 4 << 20)
            #expect(try JSON(parsing: Array(response.body.utf8)).arrayValue?.count == 8)
        }
    }

    // MARK: - The daemon's own files

    @Test("No download may be named after the session file: not by a client's out, nor by the server's name")
    func sessionFileIsNoDownloadName() async throws {
        // Named without a leading dot, which a name from a server never has.
        let name = "daemon-session.json"
        let server = TestServer(routes: ["/" + name: .init(size: 4096, seed: 3), "/file": .init(size: 4096, seed: 4)])
        try server.start()
        defer { server.shutdown() }
        try await withScratch { scratch in
            var scratch = scratch
            scratch.sessionName = name
            let daemon = try await scratch.startDaemon()
            defer { Self.expectCleanStop(daemon) }
            let named = try await Self.call(
                daemon, "aria2.addUri", #"[""# + server.url("/file") + #""],{"out":""# + name + #""}"#)
            #expect(named["error"]?["message"]?.stringValue?.contains("session file") == true, "\(named.text)")
            let served = try await Self.call(daemon, "aria2.addUri", #"[""# + server.url("/" + name) + #""]"#)
            let gid = try #require(served["result"]?.stringValue, "\(served.text)")
            let status = try await Self.settled(daemon, gid)
            #expect(status["result"]?["status"] == .string("error"), "\(status.text)")
            // Written within half a second of the change (`SessionWriter`): still the daemon's session, with the gid.
            try await Polling.until("the session to list the download", timeout: Polling.patience) {
                (try? String(contentsOfFile: scratch.session, encoding: .utf8))?.contains(gid) == true
            }
            let saved = try String(contentsOfFile: scratch.session, encoding: .utf8)
            #expect(saved.contains("braid-daemon-session"))
        }
    }

    @Test(
        "A planted session file is refused and the daemon does not start: one that writes outside --dir, one others may write",
        arguments: ["outside", "group-writable"]
    )
    func plantedSession(_ kind: String) async throws {
        let server = TestServer(routes: ["/file": .init(size: 4096, seed: 5)])
        try server.start()
        defer { server.shutdown() }
        try await withScratch { scratch in
            let outside = scratch.directory.appending("outside").path
            try FileManager.default.createDirectory(atPath: outside, withIntermediateDirectories: true)
            let directory = kind == "outside" ? outside : scratch.downloads
            let session = #"""
                {"format":"braid-daemon-session","version":1,"tasks":[{"gid":"00000000000000aa","status":"waiting",
                "completedLength":0,"request":{"uris":["\#(server.url("/file"))"],"directory":"\#(directory)",
                "output":"planted.bin","headers":[]}}]}
                """#
            try session.write(toFile: scratch.session, atomically: false, encoding: .utf8)
            try FileManager.default.setAttributes(
                [.posixPermissions: kind == "outside" ? 0o600 : 0o664], ofItemAtPath: scratch.session)
            let child = try DaemonUnderTest.braidChild([
                "daemon", "--listen", "127.0.0.1:0", "--dir", scratch.downloads, "--session", scratch.session,
                "--rpc-secret", Self.secret,
            ])
            let status = try await child.waitForExit(timeout: .seconds(30))
            #expect(!status.isSuccess)
            #expect(child.standardError.contains("session file"), "\(child.standardError)")
            #expect(try FileManager.default.contentsOfDirectory(atPath: outside).isEmpty)
            #expect(!FileManager.default.fileExists(atPath: scratch.downloads + "/planted.bin"))
        }
    }
}
