import Braid
import BraidTestServer
import BraidTestSupport
import Foundation
import Testing

/// The first request of a fresh download is a GET of the file from its start (`Range: bytes=0-`), whose head is
/// the probe (issue 29): the transfer's first request keeps what it asks for of that response and ends it there. A
/// small file is that one request, with no manifest beside it (issue 28).
@Suite("The first request", .serialized)
struct FirstRequestTests {
    /// The requests that ask for the file's first byte.
    static func fromStart(_ log: [TestServer.RequestRecord]) -> [TestServer.RequestRecord] {
        log.filter { $0.range?.hasPrefix("bytes=0-") == true }
    }

    @Test(
        "a large file's first request is a GET of bytes=0-, kept as the first bytes, no HEAD; with a Content-Digest too",
        arguments: [false, true]
    )
    func firstRequestIsOpenEndedGet(contentDigest: Bool) async throws {
        let harness = try FaultToleranceTests.Harness(
            size: 8 << 20, faults: contentDigest ? [.contentDigest([.sha256])] : [])
        defer { harness.shutdown() }

        let download = await harness.run { $0.connections = 4 }

        try harness.expectExactFile(download)
        #expect(download.retries.isEmpty, "\(download.retries)")
        #expect(harness.server.waitUntilIdle())
        let log = harness.server.requestLog
        #expect(!log.contains { $0.method == "HEAD" }, "\(log.map(\.method))")
        let first = try #require(log.min { $0.connection < $1.connection })
        #expect(first.method == "GET" && first.range == "bytes=0-", "\(first)")
        // Its body was written, not thrown away and fetched again: no other request asks for the file's first bytes.
        #expect(Self.fromStart(log).count == 1, "\(log.map { ($0.method, $0.range) })")
        #expect(log.count > 1, "the first request kept part of the file; the others fetched the rest")
    }

    @Test("the first response, cut once its request's bytes are in: no retry, a manifest with no gap or overlap")
    func cutFirstResponse() async throws {
        let size: UInt64 = 32 << 20
        // The first response comes at once and every later one slowly, so that its segment is complete in the
        // manifest seconds before the download is, however loaded the machine; the file is larger than what the
        // socket buffers hold, so the cut shows at the server.
        let harness = try FaultToleranceTests.Harness(
            size: size, faults: [.afterFirst(requests: 1, .throttle(bytesPerSecond: 1 << 20))])
        defer { harness.shutdown() }
        let manifestURL = harness.directory.appending("out.bin.braid")
        let running = Task { await harness.run { $0.connections = 4 } }

        var seen: ManifestFile?
        try await Polling.until("the first segment complete in the manifest", timeout: .seconds(120)) {
            guard let manifest = ManifestFile(at: manifestURL),
                let first = manifest.spans.first(where: { $0.range.lowerBound == 0 }),
                first.done == first.range.count
            else { return false }
            seen = manifest
            return true
        }
        let download = await running.value

        let manifest = try #require(seen)
        #expect(manifest.tilesFile, "\(manifest.spans)")
        let first = try #require(manifest.spans.first { $0.range.lowerBound == 0 })
        #expect(first.range.upperBound < Int64(size), "the first request kept part of the file: \(manifest.spans)")
        #expect(manifest.spans.allSatisfy { $0.done <= $0.range.count }, "\(manifest.spans)")
        try harness.expectExactFile(download)
        #expect(download.retries.isEmpty, "\(download.retries)")
        #expect(harness.server.waitUntilIdle())
        let log = harness.server.requestLog
        let probe = try #require(log.min { $0.connection < $1.connection })
        #expect(probe.range == "bytes=0-", "\(probe)")
        #expect(probe.bodyBytesSent < size, "cut, not read to its end: \(probe.bodyBytesSent)")
        #expect(Self.fromStart(log).count == 1, "\(log.map { ($0.method, $0.range) })")
    }

    @Test("a first GET that claims a longer file than the later range requests find is caught, and the file is right")
    func firstGetLiesAboutLength() async throws {
        let size: UInt64 = 6 << 20
        let harness = try FaultToleranceTests.Harness(
            size: size, faults: [.onlyFirst(requests: 1, .claimLength(String(size + 12345)))])
        defer { harness.shutdown() }

        let download = await harness.run()

        try harness.expectExactFile(download)
        // Caught by a range request's Content-Range, or, when the first request kept all the first response sent, by
        // the server refusing the bytes past the file's real end.
        #expect(
            download.notices.contains { $0.contains("Content-Range") || $0.contains("HTTP 416") },
            "\(download.notices)")
        #expect(harness.server.waitUntilIdle())
        // The lie was in the first request, the GET of the first piece: no HEAD came before it.
        let first = try #require(harness.server.requestLog.min { $0.connection < $1.connection })
        #expect(first.method == "GET" && first.range == "bytes=0-", "\(first)")
    }

    @Test("a first GET answered with the wrong range is asked again, and none of its bytes are written")
    func firstGetWrongRange() async throws {
        let harness = try FaultToleranceTests.Harness(
            size: 6 << 20, faults: [.onlyFirst(requests: 1, .shiftRange(offsetBy: 4096))])
        defer { harness.shutdown() }

        let download = await harness.run()

        try harness.expectExactFile(download)
        #expect(harness.server.waitUntilIdle())
        let log = harness.server.requestLog
        #expect(!log.contains { $0.method == "HEAD" }, "\(log.map(\.method))")
        #expect(log.filter { $0.range == "bytes=0-" }.count == 2, "\(log.map { ($0.method, $0.range) })")
    }

    @Test("a file that fits in the first piece is one GET, and no manifest is written while it comes")
    func smallFileIsOneRequest() async throws {
        let content = TestContent(seed: 4, size: 600 << 10)
        let server = TestServer(routes: [
            "/small.bin": .init(content: content, faults: [.throttle(bytesPerSecond: 1 << 20)])
        ])
        try server.start()
        defer { server.shutdown() }
        let directory = try TemporaryDirectory(prefix: "braid-first")
        defer { directory.remove() }
        let path = directory.appending("small.bin").path
        var options = DownloadOptions()
        options.destination = .file(path)
        let download = Download(url: server.url("/small.bin"), options: options)
        // Looked at while bytes arrive: a manifest would be written at the start and with every checkpoint.
        let sawManifest = Task {
            var seen = false
            for await event in download.events {
                if case let .progress(progress) = event, progress.downloadedBytes > 0 {
                    seen = seen || FileManager.default.fileExists(atPath: path + ".braid")
                }
            }
            return seen
        }

        let result = try await download.run()

        #expect(await sawManifest.value == false, "a manifest was written for a file fetched in one request")
        #expect(result.bytes == Int64(content.size))
        #expect(try content.firstDifference(fromFileAt: path) == nil)
        #expect(!FileManager.default.fileExists(atPath: path + ".braid"))
        #expect(server.waitUntilIdle())
        #expect(server.requestLog.map(\.method) == ["GET"], "\(server.requestLog)")
        #expect(server.requestLog.first?.range == "bytes=0-")
    }

    @Test("a list of small files over HTTPS is one request per file")
    func listOfSmallFiles() async throws {
        let names = (0..<20).map { "f\($0).bin" }
        let fixture = try await ConnectionPoolTests.Fixture.start(files: names.map { ($0, 40 << 10) })
        defer { fixture.shutdown() }

        let run = try await BraidCLI.run([
            "-i", try fixture.list(names), "-d", fixture.output("").path, "-j", "4",
            "--cacert", fixture.certificate, "-q",
        ])

        #expect(run.status == .exited(0), "\(run.standardError)")
        for name in names { #expect(try fixture.sameBytes(name), "\(name)") }
        let log = try await fixture.nginx.waitForAccessLog(count: names.count)
        #expect(log.count == names.count, "\(log.map { ($0.method, $0.path) })")
        #expect(log.allSatisfy { $0.method == "GET" && $0.status == 206 })
    }
}
