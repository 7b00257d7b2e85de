import Braid
import BraidTestServer
import BraidTestSupport
import Foundation
import Testing

/// A server that tries to get wrong bytes verified, or credentials sent where they do not belong: Braid either
/// delivers the server's real file or refuses, and never hands a secret to an origin the user did not name.
@Suite("hostile servers")
struct HostileServerTests {
    /// One piece, one connection: request 1 is the probe's GET of the first piece, which is the whole file, and
    /// request 2 its retry.
    static let content = TestContent(seed: 91, size: 1 << 20)

    /// The first range delivers the right bytes and then runs past its end (no `Content-Length`, so only the
    /// closed connection ends it); Braid throws that response away. The retry sends `retry` bytes.
    static func overrunThen(wrongRetry: Bool) -> [TestServer.Fault] {
        let firstRange: (TestServer.Fault) -> TestServer.Fault = { .onlyFirst(requests: 1, $0) }
        var faults = [firstRange(.closeDelimited), firstRange(.extraBytes(count: 64 << 10))]
        if wrongRetry { faults.append(.afterFirst(requests: 1, .wrongBytes)) }
        return faults
    }

    /// The test server serving `content` at `/f` with `faults`, and a scratch directory.
    static func harness(_ faults: [TestServer.Fault] = []) throws -> FaultToleranceTests.Harness {
        try FaultToleranceTests.Harness(size: content.size, seed: content.seed, faults: faults)
    }

    /// Writes at `path` the manifest an earlier run of `url` would have left, for a file of `length` bytes.
    static func plantManifest(at path: String, url: String, length: UInt64, etag: String? = nil) throws {
        var manifest: [String: Any] = [
            "format": "braid-manifest", "version": 1, "url": url, "resolvedURL": url, "length": length,
            "bootID": "earlier", "segments": [["start": 0, "end": length, "done": 0, "durable": 0]],
        ]
        manifest["etag"] = etag
        try JSONSerialization.data(withJSONObject: manifest).write(to: URL(fileURLWithPath: path))
    }

    // MARK: The digest covers the bytes on disk

    @Test(
        "a range thrown away after its right bytes, then retried with wrong ones, fails --checksum",
        arguments: [true, false]
    )
    func rewrittenRangeAgainstUserDigest(wrongRetry: Bool) async throws {
        let harness = try Self.harness(Self.overrunThen(wrongRetry: wrongRetry))
        defer { harness.shutdown() }
        let output = harness.directory.appending("out.bin").path
        let run = try await BraidCLI.run([
            "-n", "1", "-q", "--no-fsync", "-o", output,
            "--checksum", "sha-256=\(Self.content.hexDigest(.sha256))", harness.url,
        ])
        #expect(harness.server.waitUntilIdle())
        #expect(harness.server.requestLog.filter { $0.method == "GET" }.count >= 2, "the first range was retried")
        if wrongRetry {
            #expect(run.status == .exited(6), "\(run.standardError)")
            #expect(run.standardError.contains("sha-256 mismatch"), "\(run.standardError)")
            #expect(!FileManager.default.fileExists(atPath: output), "a wrong file was left at the final name")
        } else {
            #expect(run.status == .exited(0), "\(run.standardError)")
            #expect(try Self.content.firstDifference(fromFileAt: output) == nil)
        }
    }

    @Test(
        "a range thrown away after its right bytes, then retried with wrong ones, fails the server's digest",
        arguments: [true, false]
    )
    func rewrittenRangeAgainstServerDigest(wrongRetry: Bool) async throws {
        let harness = try Self.harness(Self.overrunThen(wrongRetry: wrongRetry) + [.contentMD5(correct: true)])
        defer { harness.shutdown() }
        let download = await harness.run { $0.connections = 1 }
        if wrongRetry {
            #expect(download.error?.code == .integrity, "\(String(describing: download.error))")
            #expect(download.error?.message.contains("md5 mismatch") == true)
            #expect(!FileManager.default.fileExists(atPath: download.path))
        } else {
            #expect(try download.result.get().verifiedDigest?.algorithm == .md5)
            #expect(try Self.content.firstDifference(fromFileAt: download.path) == nil)
        }
    }

    // MARK: Credentials follow the origin

    static let secretHeaders = ["Authorization: Bearer secret-token", "X-Api-Key: key-123", "Cookie: session=abc"]
    static let secretNames: Set<String> = ["authorization", "x-api-key", "cookie"]

    /// A server on 127.0.0.1 whose `/start` redirects to `/f` on `target`: the same host, another port.
    static func redirecting(to target: TestServer) throws -> TestServer {
        let server = TestServer(routes: [
            "/start": .init(content: content, faults: [.redirect(status: 302, to: .location(target.url("/f")))])
        ])
        try server.start()
        return server
    }

    @Test("extra headers reach the origin named, not the same host on another port, in the probe or any range")
    func headersStayWithTheirOrigin() async throws {
        let target = TestServer(routes: ["/f": .init(content: Self.content)])
        try target.start()
        let origin = try Self.redirecting(to: target)
        let directory = try TemporaryDirectory(prefix: "braid-hostile")
        defer {
            origin.shutdown()
            target.shutdown()
            directory.remove()
        }
        let output = directory.appending("out.bin").path
        let run = try await BraidCLI.run(
            ["-q", "--no-fsync", "-n", "4", "-o", output, origin.url("/start")]
                + Self.secretHeaders.flatMap { ["-H", $0] })
        #expect(run.status == .exited(0), "\(run.standardError)")
        #expect(try Self.content.firstDifference(fromFileAt: output) == nil)
        #expect(origin.waitUntilIdle() && target.waitUntilIdle())
        #expect(origin.requestLog.allSatisfy { $0.headerNames.isSuperset(of: Self.secretNames) })
        #expect(target.requestLog.contains { $0.method == "GET" && $0.range != nil })
        #expect(
            target.requestLog.allSatisfy { $0.headerNames.isDisjoint(with: Self.secretNames) },
            "a header went to another port: \(target.requestLog.map(\.headerNames))")
    }

    @Test("a mirror that redirects elsewhere gets no extra headers there, in its probe or its ranges")
    func mirrorRedirectKeepsHeaders() async throws {
        let target = TestServer(routes: ["/f": .init(content: Self.content)])
        try target.start()
        let mirror = try Self.redirecting(to: target)
        let primary = TestServer(routes: ["/f": .init(content: Self.content)])
        try primary.start()
        let directory = try TemporaryDirectory(prefix: "braid-hostile")
        defer {
            primary.shutdown()
            mirror.shutdown()
            target.shutdown()
            directory.remove()
        }
        let download = await LibraryDownload.run(primary.url("/f"), into: directory) {
            $0.mirrors = [mirror.url("/start")]
            $0.headers = Self.secretHeaders
        }
        #expect(try Self.content.firstDifference(fromFileAt: try download.result.get().path) == nil)
        #expect(primary.waitUntilIdle() && mirror.waitUntilIdle() && target.waitUntilIdle())
        #expect(primary.requestLog.allSatisfy { $0.headerNames.isSuperset(of: Self.secretNames) })
        #expect(mirror.requestLog.allSatisfy { $0.headerNames.isSuperset(of: Self.secretNames) })
        #expect(!target.requestLog.isEmpty)
        #expect(target.requestLog.allSatisfy { $0.headerNames.isDisjoint(with: Self.secretNames) })
    }

    /// nginx over TLS whose `/start` redirects to `/f` on a plain-HTTP test server, and a scratch directory.
    struct Downgrade {
        let target: TestServer
        let nginx: NginxFixture
        let directory: TemporaryDirectory

        /// - Parameter targetFaults: how the plain-HTTP server misbehaves.
        static func start(targetFaults: [TestServer.Fault] = []) async throws -> Downgrade {
            let target = TestServer(routes: ["/f": .init(content: HostileServerTests.content, faults: targetFaults)])
            try target.start()
            let directory = try TemporaryDirectory(prefix: "braid-hostile")
            let root = directory.appending("www")
            try FileManager.default.createDirectory(at: root, withIntermediateDirectories: true)
            let nginx = try await NginxFixture.start(
                .init(documentRoot: root, locations: [.redirect("/start", to: target.url("/f"))], enablesTLS: true))
            return Downgrade(target: target, nginx: nginx, directory: directory)
        }

        /// Runs `braid` on the redirecting HTTPS URL, trusting nginx's certificate.
        func run(_ arguments: [String], output: String) async throws -> ChildProcess.Completed {
            try await BraidCLI.run(
                ["--cacert", nginx.certificatePath ?? "", "-o", output, nginx.url("/start", tls: true)] + arguments)
        }

        func shutdown() {
            nginx.shutdown()
            target.shutdown()
            directory.remove()
        }
    }

    @Test("an https to http redirect is followed with a warning and a JSON notice, and without extra headers")
    func downgradeWarns() async throws {
        let downgrade = try await Downgrade.start()
        defer { downgrade.shutdown() }
        let headers = Self.secretHeaders.flatMap { ["-H", $0] }
        for json in [false, true] {
            let output = downgrade.directory.appending(json ? "json.bin" : "plain.bin").path
            let run = try await downgrade.run(["--no-fsync"] + headers + (json ? ["--json"] : []), output: output)
            #expect(run.status == .exited(0), "\(run.standardError)")
            #expect(try Self.content.firstDifference(fromFileAt: output) == nil)
            if json {
                let notices = try JSONEvents(run.standardOutput).named("notice")
                #expect(notices.contains { ($0["message"] as? String)?.contains("plain HTTP") == true })
            } else {
                #expect(run.standardError.contains("warning:"), "\(run.standardError)")
                #expect(run.standardError.contains("plain HTTP"), "\(run.standardError)")
            }
        }
        #expect(downgrade.target.waitUntilIdle())
        // Each run's one request there: the file fits in its first piece.
        #expect(downgrade.target.requestLog.count >= 2)
        #expect(downgrade.target.requestLog.allSatisfy { $0.headerNames.isDisjoint(with: Self.secretNames) })
    }

    @Test("a downgrade followed again when its target's first answer is retried is warned of once")
    func downgradeWarnsOnce() async throws {
        let downgrade = try await Downgrade.start(targetFaults: [.onlyFirst(requests: 1, .status(503, retryAfter: 0))])
        defer { downgrade.shutdown() }
        let output = downgrade.directory.appending("out.bin").path
        let run = try await downgrade.run(["--no-fsync", "--json"], output: output)
        #expect(run.status == .exited(0), "\(run.standardError)")
        #expect(try Self.content.firstDifference(fromFileAt: output) == nil)
        #expect(downgrade.target.waitUntilIdle())
        #expect(downgrade.target.requestLog.count == 2, "the 503 and the GET after it")
        let warnings = try JSONEvents(run.standardOutput).named("notice").filter {
            ($0["message"] as? String)?.contains("plain HTTP") == true
        }
        #expect(warnings.count == 1, "\(run.standardOutput)")
    }

    @Test("--proto-redir =https refuses the downgrade before any request reaches plain HTTP")
    func downgradeRefused() async throws {
        let downgrade = try await Downgrade.start()
        defer { downgrade.shutdown() }
        let output = downgrade.directory.appending("out.bin").path
        let run = try await downgrade.run(["--proto-redir", "=https"], output: output)
        #expect(run.status == .exited(5), "\(run.standardError)")
        #expect(run.standardError.contains("--proto-redir"), "\(run.standardError)")
        #expect(downgrade.target.requestLog.isEmpty)
        #expect(!FileManager.default.fileExists(atPath: output))
    }

    // MARK: What reaches the terminal is text

    @Test("an ETag and a manifest field with escape sequences reach stderr escaped, not raw")
    func escapeSequencesAreEscaped() async throws {
        let hostile = "\"v2\u{1B}]0;pwned\u{07}\u{1B}[2J\""
        let harness = try Self.harness([.entityTag(hostile)])
        defer { harness.shutdown() }
        // A manifest from an earlier run of the same URL, whose recorded ETag is itself hostile.
        let output = harness.directory.appending("out.bin")
        let length = Self.content.size
        try Self.plantManifest(at: output.path + ".braid", url: harness.url, length: length, etag: "\"v1\u{1B}[31m\"")
        #expect(FileManager.default.createFile(atPath: output.path + ".part", contents: Data(count: Int(length))))

        let run = try await BraidCLI.run(["--no-fsync", "-o", output.path, harness.url])
        #expect(run.status == .exited(0), "\(run.standardError)")
        #expect(try Self.content.firstDifference(fromFileAt: output.path) == nil)
        #expect(run.standardError.contains("changed"), "\(run.standardError)")
        #expect(run.standardError.contains("\\x1B]0;pwned\\x07"), "\(run.standardError)")
        #expect(run.standardError.contains("v1\\x1B[31m"), "\(run.standardError)")
        #expect(!run.standardError.utf8.contains(0x1B) && !run.standardError.utf8.contains(0x07))
    }

    @Test("a password in the URL appears in no --json event, log line or message")
    func passwordsStayOutOfOutput() async throws {
        let harness = try Self.harness()
        defer { harness.shutdown() }
        let url = harness.url.replacingOccurrences(of: "http://", with: "http://user:hunter2@")
        let output = harness.directory.appending("out.bin").path
        let json = try await BraidCLI.run(["--json", "-vv", "--no-fsync", "-o", output, url])
        #expect(json.status == .exited(0), "\(json.standardError)")
        #expect(harness.server.waitUntilIdle())
        #expect(harness.server.requestLog.contains { $0.authorization != nil }, "the credentials were used")
        #expect(!json.standardOutput.contains("hunter2") && !json.standardError.contains("hunter2"))
        #expect(json.standardOutput.contains("user:***@"), "\(json.standardOutput)")

        // A failure that names the URL: the manifest of another download sits at the output name.
        let other = harness.directory.appending("other.bin").path
        try Self.plantManifest(at: other + ".braid", url: "http://someone:swordfish@example.org/x", length: 10)
        let refused = try await BraidCLI.run(["-v", "-o", other, url])
        #expect(refused.status == .exited(7), "\(refused.standardError)")
        #expect(!refused.standardError.contains("hunter2") && !refused.standardError.contains("swordfish"))
    }
}
