import BraidTestServer
import BraidTestSupport
import Foundation
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// Signed URLs that expire, as object stores and CDNs hand them out: the URL the user gives redirects (302) to a
/// signed URL minted per request, valid for a short while, that refuses `HEAD` and answers 403 once expired.
/// Braid probes it with a ranged GET, and when a range is refused mid-download follows the URL as given again to a
/// fresh one, going on where it was if the file is the same.
///
/// The test server makes expiry real (moto, the S3 stand-in, accepts any presigned URL, expired or not): its
/// `/sign` route mints `/file?expires=…&signature=…` and `/file` serves only through an unexpired one.
@Suite("braid and expiring signed URLs")
struct SignedURLTests {
    /// A test server with the redirector at `/sign` and what it signs, and a scratch directory.
    struct Harness {
        let server: TestServer
        let directory: TemporaryDirectory
        let content: TestContent

        init(content: TestContent, file: [TestServer.Fault] = [], redirector: [TestServer.Fault]) throws {
            self.content = content
            server = TestServer(routes: [
                "/file": .init(content: content, faults: [.requireSignedURL] + file),
                "/sign": .init(size: 0, faults: redirector),
            ])
            try server.start()
            directory = try TemporaryDirectory(prefix: "braid-signed")
        }

        var url: String { server.url("/sign") }
        var output: URL { directory.appending("out.bin") }

        /// Requests that minted a signed URL (the redirector's, each answered 302).
        func mints(in log: [TestServer.RequestRecord]) -> Int {
            log.filter { $0.target == "/sign" }.count
        }

        /// Body bytes the signed URLs served for ranges, leaving out the probes' 1-byte ranges; the first response
        /// (bytes=0-), cut where its request's bytes end, counts for those bytes only (where the next range begins).
        func rangeBytes(in log: [TestServer.RequestRecord], path: String = "/file") -> UInt64 {
            let served = log.filter { $0.target.hasPrefix(path + "?") && $0.status == 206 && $0.range != "bytes=0-0" }
            let ranges = served.filter { $0.range != "bytes=0-" }
            let kept = ranges.compactMap { $0.range?.dropFirst(6).split(separator: "-").first.flatMap { UInt64($0) } }
            let firstKept = served.count > ranges.count ? kept.min() ?? 0 : 0
            return ranges.reduce(firstKept) { $0 + $1.bodyBytesSent }
        }

        func shutdown() {
            server.shutdown()
            directory.remove()
        }
    }

    @Test("a throttled download outlives several signed URLs, renews each as it expires, and fetches no byte twice")
    func outlivesSeveralURLs() async throws {
        // 12 pieces of 1 MiB over 3 connections at 512 KiB/s each: rounds of 2 s or more, each (after the first)
        // starting after the URL of the round before expired (1.5 s). Where the throttle delays first bytes,
        // requests join pieces (PieceSizer) up to each connection's share, the first one's too (the probe's response,
        // bytes=0-): the connection of the probe is slower, so that the others, done, take half of what it has left,
        // with URLs that expired meanwhile.
        let harness = try Harness(
            content: TestContent(seed: 11, size: 12 << 20),
            file: [.throttle(bytesPerSecond: 512 << 10), .slowConnection(number: 1, bytesPerSecond: 128 << 10)],
            redirector: [.mintSignedURL(path: "/file", validFor: .milliseconds(1500))]
        )
        defer { harness.shutdown() }
        let started = ContinuousClock.now

        let run = try await BraidCLI.run([harness.url, "-n", "3", "-o", harness.output.path, "--no-fsync"])

        let elapsed = ContinuousClock.now - started
        #expect(run.status == .exited(0), "\(run.standardError)")
        #expect(try harness.content.firstDifference(fromFileAt: harness.output.path) == nil)
        #expect(harness.server.waitUntilIdle())
        let log = harness.server.requestLog
        let renewals = run.standardError.components(separatedBy: "again for a fresh one").count - 1
        // The first request, a GET of the first piece, minted one URL; each renewal minted two (HEAD, refused, then
        // a ranged GET).
        #expect(renewals >= 1, "\(run.standardError)")
        #expect(harness.mints(in: log) == 1 + 2 * renewals)
        #expect(
            log.contains { $0.target.hasPrefix("/file?") && $0.method == "HEAD" && $0.status == 403 }, "HEAD refused")
        #expect(
            log.contains { $0.target.hasPrefix("/file?") && $0.method == "GET" && $0.status == 403 }, "URLs expired")
        #expect(harness.rangeBytes(in: log) == harness.content.size, "no byte fetched twice")
        print("signed URLs: \(renewals) renewals, \(harness.mints(in: log)) URLs minted, \(elapsed)")
    }

    @Test("a renewed URL that leads to another file restarts the download from scratch, as a changed file does")
    func renewedURLToAnotherFile() async throws {
        let other = TestContent(seed: 12, size: 3 << 20)
        // One connection fetches the file in one request at 512 KiB/s, cut after 1 MiB (HEAD and the probe's GET
        // come first): its retry starts after the first URL expired.
        let harness = try Harness(
            content: TestContent(seed: 11, size: 3 << 20),
            file: [.throttle(bytesPerSecond: 512 << 10), .onlyFirst(requests: 3, .closeAfter(bytes: 1 << 20))],
            redirector: [
                .onlyFirst(requests: 2, .mintSignedURL(path: "/file", validFor: .milliseconds(1500))),
                .afterFirst(requests: 2, .mintSignedURL(path: "/other", validFor: .seconds(60))),
            ]
        )
        defer { harness.shutdown() }
        harness.server.setRoute("/other", .init(content: other, faults: [.requireSignedURL]))

        let run = try await BraidCLI.run([harness.url, "-n", "1", "-o", harness.output.path, "--no-fsync"])

        #expect(run.status == .exited(0), "\(run.standardError)")
        #expect(run.standardError.contains("the file on the server changed since the download started"))
        #expect(try other.firstDifference(fromFileAt: harness.output.path) == nil)
    }

    @Test("a renewed URL refused at once fails with the server's refusal (exit 5), the download resumable")
    func renewedURLRefused() async throws {
        // As above: the one request is cut after 1 MiB, and its retry finds the URL expired.
        let harness = try Harness(
            content: TestContent(seed: 11, size: 3 << 20),
            file: [.throttle(bytesPerSecond: 512 << 10), .onlyFirst(requests: 3, .closeAfter(bytes: 1 << 20))],
            redirector: [
                .onlyFirst(requests: 2, .mintSignedURL(path: "/file", validFor: .milliseconds(1500))),
                .afterFirst(requests: 2, .mintSignedURL(path: "/file", validFor: .zero)),
            ]
        )
        defer { harness.shutdown() }

        let run = try await BraidCLI.run([harness.url, "-n", "1", "-o", harness.output.path, "--no-fsync"])

        #expect(run.status == .exited(5), "\(run.standardError)")
        #expect(run.standardError.contains("the server refused access (HTTP 403)"), "\(run.standardError)")
        #expect(!FileManager.default.fileExists(atPath: harness.output.path))
        #expect(ManifestFile(at: URL(fileURLWithPath: harness.output.path + ".braid"))?.done ?? 0 >= 1 << 20)
    }

    @Test("a download killed mid-way resumes in a later run through a fresh signed URL, fetching only what is missing")
    func resumesThroughAFreshURL() async throws {
        // The first run cannot finish: every response stalls after 768 KiB, so it is killed part-way however late
        // a loaded machine runs this test's wait; the second run gets the file whole.
        let harness = try Harness(
            content: TestContent(seed: 11, size: 6 << 20),
            file: [.throttle(bytesPerSecond: 1 << 20), .stall(afterBytes: 768 << 10)],
            redirector: [.mintSignedURL(path: "/file", validFor: .milliseconds(1500))]
        )
        defer { harness.shutdown() }
        let manifestURL = URL(fileURLWithPath: harness.output.path + ".braid")

        let first = try BraidCLI.start([harness.url, "-n", "2", "-o", harness.output.path, "-q"])
        defer { first.stop(signal: SIGKILL) }
        try await first.waitUntil("a sixth of the file checkpointed", timeout: .seconds(30)) {
            (ManifestFile(at: manifestURL)?.done ?? 0) >= 1 << 20
        }
        first.send(SIGKILL)
        #expect(try await first.waitForExit(timeout: .seconds(10)) == .signalled(SIGKILL))
        try await Polling.until("the server to see the killed connections close", timeout: .seconds(30)) {
            LoopbackConnections.established(toPort: harness.server.port) == 0
        }
        #expect(harness.server.waitUntilIdle())
        let manifest = try #require(ManifestFile(at: manifestURL))
        let logged = harness.server.requestLog.count
        let firstTargets = Set(harness.server.requestLog.map(\.target))
        harness.server.setRoute("/file", .init(content: harness.content, faults: [.requireSignedURL]))

        let second = try await BraidCLI.run([harness.url, "-n", "2", "-o", harness.output.path, "--no-fsync"])

        #expect(second.status == .exited(0), "\(second.standardError)")
        #expect(second.standardError.contains("resuming at"), "\(second.standardError)")
        #expect(try harness.content.firstDifference(fromFileAt: harness.output.path) == nil)
        #expect(harness.server.waitUntilIdle())
        let resumed = Array(harness.server.requestLog.dropFirst(logged))
        let fetched = harness.rangeBytes(in: resumed)
        #expect(fetched >= UInt64(manifest.length - manifest.done))
        #expect(fetched <= UInt64(manifest.length - manifest.done) + (1 << 20), "fetched \(fetched)")
        #expect(
            resumed.filter { $0.target.hasPrefix("/file?") }.allSatisfy { !firstTargets.contains($0.target) },
            "the second run went through URLs of its own")
    }
}
