import BraidTestServer
import BraidTestSupport
import Foundation
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// The real `braid` binary against a server (or a manifest, or a command line) that sends numbers at the edges:
/// every one ends in a documented exit status and a one-line error, never in a signal.
@Suite("hostile numbers end in a clean exit")
struct HostileNumbersTests {
    /// A test server with one route, `/f`, faulted as asked, and a scratch directory.
    struct Harness {
        let server: TestServer
        let directory: TemporaryDirectory

        init(faults: [TestServer.Fault], size: UInt64 = 1 << 20) throws {
            server = TestServer(routes: ["/f": .init(content: TestContent(seed: 3, size: size), faults: faults)])
            try server.start()
            directory = try TemporaryDirectory(prefix: "braid-numbers")
        }

        var url: String { server.url("/f") }
        var output: String { directory.appending("out.bin").path }

        func run(_ extra: [String] = []) async throws -> ChildProcess.Completed {
            try await BraidCLI.run([url, "-o", output, "--no-fsync"] + extra, timeout: .seconds(60))
        }

        func shutdown() {
            server.shutdown()
            directory.remove()
        }
    }

    /// Exited with `code` (not a signal), said why in exactly one line, and left nothing at the final name.
    static func expectCleanExit(
        _ run: ChildProcess.Completed, _ code: Int32, mentioning text: String, output: String
    ) {
        #expect(run.status == .exited(code), "\(run.status): \(run.standardError)")
        let lines = run.standardError.split(separator: "\n")
        #expect(lines.count == 1, "one line: \(run.standardError)")
        #expect(run.standardError.contains(text), "\(run.standardError)")
        #expect(!FileManager.default.fileExists(atPath: output))
    }

    @Test(
        "A length past what Braid can store, on HEAD and in Content-Range, is a protocol error (exit 5)",
        arguments: ["4611686018427387904", "9223372036854775807", "9007199254740993"]
    )
    func absurdLength(claimed: String) async throws {
        let harness = try Harness(faults: [.claimLength(claimed)])
        defer { harness.shutdown() }
        let run = try await harness.run(["-q"])
        Self.expectCleanExit(run, 5, mentioning: "more than Braid can download", output: harness.output)
    }

    @Test("A length no integer holds is a protocol error (exit 5)")
    func unparsableLength() async throws {
        let harness = try Harness(faults: [.claimLength("99999999999999999999999")])
        defer { harness.shutdown() }
        let run = try await harness.run(["-q"])
        Self.expectCleanExit(run, 5, mentioning: "Content-Range", output: harness.output)
    }

    /// One header line longer than libcurl takes (100 KB), or lines of 8 KB longer than it takes in all (300 KB).
    static let oversizedHeads: [[TestServer.Fault]] = [
        [.rawHeader(name: "X-Large", value: Array(repeating: UInt8(ascii: "a"), count: 200_000))],
        (0..<40).map { .rawHeader(name: "X-Line-\($0)", value: Array(repeating: UInt8(ascii: "b"), count: 8_000)) },
    ]

    @Test(
        "Response headers larger than libcurl takes are the server's violation (exit 5), not retried",
        arguments: oversizedHeads)
    func oversizedHead(faults: [TestServer.Fault]) async throws {
        let harness = try Harness(faults: faults)
        defer { harness.shutdown() }
        let run = try await harness.run(["-q"])
        Self.expectCleanExit(run, 5, mentioning: "response headers are larger than", output: harness.output)
        #expect(!run.standardError.contains("Out of memory"), "\(run.standardError)")
        #expect(harness.server.waitUntilIdle())
        #expect(harness.server.requestLog.count == 1, "nothing was retried")
        let left = try FileManager.default.contentsOfDirectory(atPath: harness.directory.appending("").path)
        #expect(left.isEmpty, "\(left)")
    }

    /// Whether the scratch file system refuses a sparse file of Braid's largest length, as ext4 does (EFBIG).
    static let refusesLargestFile: Bool = {
        guard let directory = try? TemporaryDirectory(prefix: "braid-efbig") else { return false }
        defer { directory.remove() }
        let path = directory.appending("probe").path
        let descriptor = open(path, O_CREAT | O_RDWR, 0o600)
        defer { close(descriptor) }
        return ftruncate(descriptor, 1 << 53) != 0 && errno == EFBIG
    }()

    @Test(
        "The largest length Braid accepts, on a file system that cannot hold it, is a local I/O error (exit 3)",
        .enabled(if: refusesLargestFile, "the scratch file system accepts an 8 PiB sparse file")
    )
    func lengthTheFileSystemRefuses() async throws {
        let harness = try Harness(faults: [.claimLength(String(1 << 53))])
        defer { harness.shutdown() }
        let run = try await harness.run(["-q"])
        Self.expectCleanExit(run, 3, mentioning: "cannot size", output: harness.output)
    }

    @Test(
        "A Retry-After too long for any integer, or far in the future, is refused at once (exit 5)",
        arguments: ["9223372036854775807", "99999999999999999999999", "Fri, 31 Dec 9999 23:59:59 GMT"]
    )
    func absurdRetryAfter(value: String) async throws {
        let harness = try Harness(faults: [.statusRawRetryAfter(503, retryAfter: value)])
        defer { harness.shutdown() }
        let run = try await harness.run(["-q"])
        Self.expectCleanExit(run, 5, mentioning: "asked to retry after", output: harness.output)
        #expect(harness.server.waitUntilIdle())
        #expect(harness.server.requestLog.count == 1, "nothing was retried")
    }

    @Test(
        "Timeouts libcurl cannot take are usage errors (exit 2), before any request",
        arguments: [
            ["--connect-timeout", "-1"], ["--connect-timeout", "0"], ["--connect-timeout", "9223372036854775807"],
            ["--stall-timeout", "2147484"], ["--stall-timeout", "-5"],
        ]
    )
    func absurdTimeouts(arguments: [String]) async throws {
        let harness = try Harness(faults: [])
        defer { harness.shutdown() }
        let run = try await harness.run(arguments)
        #expect(run.status == .exited(2), "\(run.status): \(run.standardError)")
        #expect(run.standardError.contains(arguments[0]), "\(run.standardError)")
        #expect(harness.server.requestLog.isEmpty)
    }

    @Test("A manifest with Int64.max for its numbers is refused as invalid (exit 7), never believed")
    func absurdManifest() async throws {
        let harness = try Harness(faults: [])
        defer { harness.shutdown() }
        let max = Int64.max
        let manifest = """
            {"format":"braid-manifest","version":1,"url":"\(harness.url)","resolvedURL":"\(harness.url)",\
            "length":\(max),"bootID":"x","segments":[{"start":0,"end":\(max),"done":\(max),"durable":\(max)}]}
            """
        try Data(manifest.utf8).write(to: URL(fileURLWithPath: harness.output + ".braid"))
        let run = try await harness.run(["-q"])
        Self.expectCleanExit(run, 7, mentioning: "invalid", output: harness.output)
    }
}
