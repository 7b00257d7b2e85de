import Braid
import BraidTestServer
import BraidTestSupport
import Foundation
import Testing

/// One test per misbehaviour of the fault-injecting server: Braid either recovers and delivers the exact bytes,
/// or refuses with a clear error and leaves nothing at the final name.
@Suite("faults Braid survives or refuses")
struct FaultToleranceTests {
    static let size: UInt64 = 6 << 20

    /// A server with one route, `/f`, and a scratch directory.
    struct Harness {
        let server: TestServer
        let directory: TemporaryDirectory
        let content: TestContent

        init(size: UInt64 = FaultToleranceTests.size, seed: UInt64 = 1, faults: [TestServer.Fault]) throws {
            content = TestContent(seed: seed, size: size)
            server = TestServer(routes: ["/f": .init(content: content, faults: faults)])
            try server.start()
            directory = try TemporaryDirectory(prefix: "braid-fault")
        }

        var url: String { server.url("/f") }

        func run(_ configure: (inout DownloadOptions) -> Void = { _ in }) async -> LibraryDownload {
            await LibraryDownload.run(url, into: directory, configure)
        }

        /// The download succeeded and the file is byte-identical to what the server serves.
        func expectExactFile(_ download: LibraryDownload, content expected: TestContent? = nil) throws {
            let result = try download.result.get()
            let content = expected ?? self.content
            #expect(result.bytes == Int64(content.size))
            #expect(try content.firstDifference(fromFileAt: download.path) == nil, "the file differs from the server's")
            #expect(!FileManager.default.fileExists(atPath: download.path + ".part"))
            #expect(!FileManager.default.fileExists(atPath: download.path + ".braid"))
        }

        /// The download failed with `code` and left nothing at the final name.
        func expectRefusal(_ download: LibraryDownload, _ code: BraidError.Code, mentioning text: String) {
            #expect(download.error?.code == code, "\(String(describing: download.error))")
            #expect(download.error?.message.contains(text) == true, "\(download.error?.message ?? "no error")")
            #expect(!FileManager.default.fileExists(atPath: download.path))
        }

        func shutdown() {
            server.shutdown()
            directory.remove()
        }
    }

    // MARK: Recovered

    @Test("throttled connections with latency before the first byte")
    func throttleAndLatency() async throws {
        let harness = try Harness(faults: [.throttle(bytesPerSecond: 4 << 20), .latency(.milliseconds(150))])
        defer { harness.shutdown() }
        try harness.expectExactFile(await harness.run())
    }

    @Test("connections closed part-way are resumed from their last byte")
    func closedMidBody() async throws {
        let harness = try Harness(faults: [.onlyFirst(requests: 4, .closeAfter(bytes: 300_000))])
        defer { harness.shutdown() }
        let download = await harness.run()
        try harness.expectExactFile(download)
        #expect(!download.retries.isEmpty)
        #expect(harness.server.waitUntilIdle())
        #expect(harness.server.totalBodyBytesSent <= FaultToleranceTests.size + (1 << 20), "resumed, not refetched")
    }

    @Test("a stalled connection is detected and replaced")
    func stalledConnection() async throws {
        let harness = try Harness(faults: [.onlyFirst(requests: 2, .stall(afterBytes: 100_000))])
        defer { harness.shutdown() }
        let download = await harness.run { $0.stallTimeoutSeconds = 1 }
        try harness.expectExactFile(download)
        #expect(!download.retries.isEmpty)
    }

    @Test("a server that ignores Range gets a single-stream download: the first request's whole body")
    func ignoresRange() async throws {
        let harness = try Harness(faults: [.ignoreRange])
        defer { harness.shutdown() }
        let download = await harness.run()
        try harness.expectExactFile(download)
        #expect(harness.server.waitUntilIdle())
        #expect(harness.server.requestLog.map(\.status) == [200], "\(harness.server.requestLog)")
    }

    @Test("a server that ignores Range on a later request restarts the download as a single stream")
    func ignoresRangeLater() async throws {
        let harness = try Harness(faults: [.afterFirst(requests: 1, .ignoreRange)])
        defer { harness.shutdown() }
        let download = await harness.run()
        try harness.expectExactFile(download)
        #expect(download.notices.contains { $0.contains("single stream") })
    }

    @Test("a single stream cut short and retried writes the rest where it stopped, not over the start")
    func singleStreamRetryKeepsOffsets() async throws {
        // One connection: HEAD, a ranged GET answered 200 (the restart to a single stream), HEAD, then single
        // streams cut at a third of the file; the later ones skip what is on disk and write the rest after it.
        let third = FaultToleranceTests.size / 3
        let harness = try Harness(faults: [.ignoreRange, .onlyFirst(requests: 5, .closeAfter(bytes: third))])
        defer { harness.shutdown() }
        let download = await harness.run { $0.connections = 1 }
        try harness.expectExactFile(download)
        #expect(!download.retries.isEmpty, "the single stream was never cut, so nothing was tested")
    }

    @Test("a file with only a weak ETag (just modified, as Apache sees it) keeps its segments: no If-Range is sent")
    func recentlyModifiedKeepsSegments() async throws {
        let harness = try Harness(faults: [.recentlyModified])
        defer { harness.shutdown() }
        let download = await harness.run()
        try harness.expectExactFile(download)
        #expect(!download.notices.contains { $0.contains("single stream") }, "\(download.notices)")
        #expect(harness.server.waitUntilIdle())
        let ranged = harness.server.requestLog.filter { $0.range != nil && $0.method == "GET" }
        #expect(ranged.count > 1, "the file came in segments")
        #expect(ranged.allSatisfy { $0.ifRange == nil && $0.status == 206 }, "\(ranged)")
    }

    @Test("a wrong range once is retried; the bytes land only where they belong")
    func shiftedRangeOnce() async throws {
        let harness = try Harness(faults: [.onlyFirst(requests: 2, .shiftRange(offsetBy: 4096))])
        defer { harness.shutdown() }
        try harness.expectExactFile(await harness.run())
    }

    @Test("a server that sends at most 512 KiB a response is asked for the rest, with no retry and nothing lost")
    func cappedRanges() async throws {
        let harness = try Harness(faults: [.capRange(bytes: 512 << 10)])
        defer { harness.shutdown() }
        let download = await harness.run { $0.connections = 4 }
        try harness.expectExactFile(download)
        #expect(download.retries.isEmpty, "\(download.retries)")
        #expect(try download.result.get().retries == 0)
        #expect(harness.server.waitUntilIdle())
        let ranged = harness.server.requestLog.filter { $0.range != nil && $0.method == "GET" && $0.status == 206 }
        // 6 MiB in pieces of at most 512 KiB: at least 12 responses.
        #expect(ranged.count >= 12, "\(ranged.count) responses")
    }

    @Test("extra bytes after a response never reach the file")
    func extraBytes() async throws {
        let harness = try Harness(faults: [.extraBytes(count: 5000)])
        defer { harness.shutdown() }
        try harness.expectExactFile(await harness.run())
    }

    @Test("a body shorter than promised is completed by a resumed request")
    func shortBody() async throws {
        let harness = try Harness(faults: [.onlyFirst(requests: 3, .shortBody(missingBytes: 10_000))])
        defer { harness.shutdown() }
        try harness.expectExactFile(await harness.run())
    }

    @Test("503 and 429 with Retry-After are waited out", arguments: [503, 429])
    func busyServer(status: Int) async throws {
        let harness = try Harness(faults: [.onlyFirst(requests: 2, .status(status, retryAfter: 1))])
        defer { harness.shutdown() }
        let download = await harness.run()
        try harness.expectExactFile(download)
        #expect(download.retries.contains { $0.delay >= 1 }, "Retry-After: 1 was honoured")
    }

    @Test("a refused HEAD is replaced by a ranged GET probe")
    func refusedHead() async throws {
        let harness = try Harness(faults: [.refuseHead])
        defer { harness.shutdown() }
        try harness.expectExactFile(await harness.run())
    }

    @Test("responses without Content-Length: close-delimited and chunked", arguments: [0, 1])
    func noContentLength(variant: Int) async throws {
        let harness = try Harness(faults: [variant == 0 ? .closeDelimited : .chunked])
        defer { harness.shutdown() }
        let download = await harness.run()
        try harness.expectExactFile(download)
        // Each range's Content-Range gave the length.
        #expect(try download.result.get().verification == "length verified")
    }

    @Test(
        "a whole response without any length is saved, and said to be unverified, not 'length verified'",
        arguments: [0, 1])
    func noLengthAtAll(variant: Int) async throws {
        let harness = try Harness(faults: [variant == 0 ? .closeDelimited : .chunked, .ignoreRange])
        defer { harness.shutdown() }
        let download = await harness.run()
        try harness.expectExactFile(download)
        let result = try download.result.get()
        #expect(!result.lengthVerified)
        #expect(result.verification == "not verified: the server gave no length")
    }

    @Test("a HEAD length that disagrees with Content-Range: the ranged probe decides")
    func headLengthDisagrees() async throws {
        let harness = try Harness(faults: [.headContentLength(FaultToleranceTests.size + 12345)])
        defer { harness.shutdown() }
        // A conditional download (-N) still probes with HEAD; a plain one asks no HEAD to be lied to.
        let download = await harness.run { $0.timestamping = true }
        try harness.expectExactFile(download)
        #expect(download.notices.contains { $0.contains("Content-Range") })
        try FileManager.default.removeItem(atPath: download.path)
        try harness.expectExactFile(await harness.run())
    }

    @Test("content that changes mid-download is detected through If-Range and fetched afresh")
    func contentChangesMidDownload() async throws {
        let harness = try Harness(faults: [
            .throttle(bytesPerSecond: 2 << 20), .changeContent(afterRequests: 4, seed: 77),
        ])
        defer { harness.shutdown() }
        let download = await harness.run()
        try harness.expectExactFile(download, content: TestContent(seed: 77, size: FaultToleranceTests.size))
        #expect(download.notices.contains { $0.contains("changed") })
        // What the run fetched counts both attempts, as the server sent them: the discarded one too.
        let fetched = try download.result.get().fetchedBytes
        #expect(fetched > Int64(FaultToleranceTests.size), "fetched \(fetched)")
        #expect(harness.server.waitUntilIdle())
        #expect(fetched <= Int64(harness.server.totalBodyBytesSent))
    }

    @Test("a redirect to another path is followed")
    func redirectToPath() async throws {
        let content = TestContent(seed: 3, size: 3 << 20)
        let server = TestServer(routes: [
            "/old": .init(content: content, faults: [.redirect(status: 301, to: .path("/new"))]),
            "/new": .init(content: content),
        ])
        try server.start()
        let directory = try TemporaryDirectory(prefix: "braid-fault")
        defer {
            server.shutdown()
            directory.remove()
        }
        let download = await LibraryDownload.run(server.url("/old"), into: directory)
        #expect(try download.result.get().bytes == Int64(content.size))
        #expect(try content.firstDifference(fromFileAt: download.path) == nil)
        #expect(server.requestLog.filter { $0.target == "/new" && $0.method == "GET" }.count >= 1)
    }

    @Test("a server that limits connections per client gets fewer of them")
    func limitedConnections() async throws {
        let harness = try Harness(
            size: 8 << 20,
            faults: [.throttle(bytesPerSecond: 4 << 20), .limitConnections(perClient: 2, retryAfter: nil)]
        )
        defer { harness.shutdown() }
        let download = await harness.run { $0.connections = 8 }
        try harness.expectExactFile(download)
    }

    @Test("right server digests are verified", arguments: [0, 1, 2, 3])
    func rightDigests(variant: Int) async throws {
        let faults: [TestServer.Fault] = [
            [.contentMD5(correct: true)], [.digest([.sha256], correct: true)],
            [.reprDigest([.sha512], correct: true)], [.reprDigest([.sha256, .md5], correct: true)],
        ][variant]
        let harness = try Harness(size: Self.size(for: faults), faults: faults)
        defer { harness.shutdown() }
        let download = await harness.run()
        try harness.expectExactFile(download)
        #expect(try download.result.get().verifiedDigest != nil)
    }

    // MARK: Refused

    @Test("wrong server digests are refused", arguments: [0, 1, 2])
    func wrongDigests(variant: Int) async throws {
        let (faults, name): ([TestServer.Fault], String) = [
            ([.contentMD5(correct: false)], "md5 mismatch"), ([.digest([.sha256], correct: false)], "sha-256 mismatch"),
            ([.reprDigest([.sha512], correct: false)], "sha-512 mismatch"),
        ][variant]
        let harness = try Harness(size: Self.size(for: faults), faults: faults)
        defer { harness.shutdown() }
        harness.expectRefusal(await harness.run(), .integrity, mentioning: name)
    }

    /// The test server sends `Content-MD5` only with a whole response, as a server should: a file that comes in
    /// the first request's one response, since a larger one's first `206` cannot carry it (and no `HEAD` is sent
    /// to ask; see `Prober.probeFirstGet`). Digests of the representation come with any response.
    static func size(for faults: [TestServer.Fault]) -> UInt64 {
        faults.contains { if case .contentMD5 = $0 { true } else { false } } ? 1 << 20 : Self.size
    }

    @Test("right-looking ranges with wrong bytes are caught by the server's digest")
    func wrongBytesCaughtByDigest() async throws {
        let harness = try Harness(size: 1 << 20, faults: [.contentMD5(correct: true), .wrongBytes])
        defer { harness.shutdown() }
        harness.expectRefusal(await harness.run(), .integrity, mentioning: "md5 mismatch")
    }

    @Test("a range that is always wrong is a protocol violation after retries")
    func persistentWrongRange() async throws {
        let harness = try Harness(faults: [.shiftRange(offsetBy: 4096)])
        defer { harness.shutdown() }
        let download = await harness.run { $0.maximumAttempts = 2 }
        harness.expectRefusal(download, .protocolViolation, mentioning: "Content-Range")
    }

    @Test("a persistent 404 and a persistent 503 are refused", arguments: [404, 503])
    func persistentErrors(status: Int) async throws {
        let harness = try Harness(faults: [.status(status, retryAfter: nil)])
        defer { harness.shutdown() }
        let download = await harness.run { $0.maximumAttempts = 2 }
        harness.expectRefusal(download, .protocolViolation, mentioning: "\(status)")
    }

    @Test("redirect loops and redirects to other schemes are refused", arguments: [0, 1])
    func forbiddenRedirects(variant: Int) async throws {
        let target: TestServer.RedirectTarget = variant == 0 ? .path("/f") : .location("file:///etc/passwd")
        let harness = try Harness(faults: [.redirect(status: 302, to: target)])
        defer { harness.shutdown() }
        let download = await harness.run()
        harness.expectRefusal(download, .protocolViolation, mentioning: variant == 0 ? "redirect" : "http")
        #expect(!FileManager.default.fileExists(atPath: "\(harness.directory.url.path)/passwd"))
    }

    @Test("Authorization is not sent to another host after a redirect")
    func credentialsStayWithTheirHost() async throws {
        let content = TestContent(seed: 5, size: 2 << 20)
        let server = TestServer(routes: [
            "/start": .init(content: content, faults: [.redirect(status: 302, to: .otherHost(path: "/elsewhere"))]),
            "/elsewhere": .init(content: content),
        ])
        try server.start()
        let directory = try TemporaryDirectory(prefix: "braid-fault")
        defer {
            server.shutdown()
            directory.remove()
        }
        let download = await LibraryDownload.run(server.url("/start"), into: directory) {
            $0.headers = ["Authorization: Bearer secret-token"]
        }
        #expect(try content.firstDifference(fromFileAt: try download.result.get().path) == nil)
        let elsewhere = server.requestLog.filter { $0.target == "/elsewhere" }
        #expect(!elsewhere.isEmpty)
        #expect(elsewhere.allSatisfy { $0.authorization == nil }, "the token went to another host")
        #expect(server.requestLog.contains { $0.target == "/start" && $0.authorization != nil })
    }

    @Test(
        "Content-Disposition names cannot escape the directory",
        arguments: [
            ("attachment; filename=\"../../escape.bin\"", "escape.bin"),
            ("attachment; filename=\"/etc/absolute.bin\"", "absolute.bin"),
            ("attachment; filename*=UTF-8''..%2F..%2Fencoded.bin", "encoded.bin"),
            ("attachment; filename=\"..\"", "f"),
        ]
    )
    func contentDisposition(header: String, expected: String) async throws {
        let harness = try Harness(size: 1 << 20, faults: [.contentDisposition(header)])
        defer { harness.shutdown() }
        let inner = harness.directory.appending("inner")
        try FileManager.default.createDirectory(at: inner, withIntermediateDirectories: true)
        var options = DownloadOptions()
        options.destination = .directory(inner.path)
        options.syncOnCompletion = false
        let result = try await Download(url: harness.url, options: options).run()
        #expect(
            URL(fileURLWithPath: result.path).deletingLastPathComponent().standardizedFileURL.path
                == inner.standardizedFileURL.path)
        #expect(URL(fileURLWithPath: result.path).lastPathComponent == expected)
        #expect(try FileManager.default.contentsOfDirectory(atPath: harness.directory.url.path) == ["inner"])
    }
}
