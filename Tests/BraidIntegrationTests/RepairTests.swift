import Braid
import BraidTestServer
import BraidTestSupport
import Foundation
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// A whole-file digest mismatch keeps the data, and `--repair` fetches the file again, rewrites only the bytes
/// that differ, and verifies again (issue 14, "Repair without piece truth").
@Suite("repair after a digest mismatch")
struct RepairTests {
    static let size: UInt64 = 4 << 20
    static let content = TestContent(seed: 14, size: size)
    /// The bytes the server corrupts: inside one segment of a 4-connection plan, away from its edges.
    static let corrupted: Range<UInt64> = 1_048_576..<1_114_112

    /// A server with one route, `/f`, a scratch directory, and the command line of a download of `/f` to it.
    struct Harness {
        let server: TestServer
        let directory: TemporaryDirectory

        init(faults: [TestServer.Fault]) throws {
            server = TestServer(routes: ["/f": .init(content: RepairTests.content, faults: faults)])
            try server.start()
            directory = try TemporaryDirectory(prefix: "braid-repair")
        }

        var output: String { directory.appending("out.bin").path }

        func arguments(_ extra: [String] = []) -> [String] {
            [
                server.url("/f"), "-n", "4", "-o", output, "--no-fsync",
                "--checksum", "sha-256=\(RepairTests.content.hexDigest(.sha256))",
            ] + extra
        }

        func exists(_ suffix: String) -> Bool {
            FileManager.default.fileExists(atPath: output + suffix)
        }

        /// The successful `GET`s the server answered from log entry `start` on.
        func gets(from start: Int) -> [TestServer.RequestRecord] {
            #expect(server.waitUntilIdle())
            return server.requestLog.dropFirst(start).filter { $0.method == "GET" && $0.status / 100 == 2 }
        }

        func shutdown() {
            server.shutdown()
            directory.remove()
        }
    }

    /// The byte range a request asked for (the whole file without a `Range` header).
    static func requested(_ record: TestServer.RequestRecord) -> Range<UInt64> {
        guard let header = record.range, header.hasPrefix("bytes=") else { return 0..<size }
        let bounds = header.dropFirst(6).split(separator: "-").compactMap { UInt64($0) }
        return bounds.count == 2 ? bounds[0]..<bounds[1] + 1 : 0..<size
    }

    /// Whether `gets` fetched the file once: every byte asked for, `probe` (a range inside one segment) by one
    /// request only, and no more bytes sent than the file and a little of a range split between connections
    /// (work stealing asks for a range whose tail another connection then takes).
    static func fetchedOnce(_ gets: [TestServer.RequestRecord], probe: Range<UInt64>) -> Bool {
        let ranges = gets.map(requested).sorted { $0.lowerBound < $1.lowerBound }
        var covered: UInt64 = 0
        for range in ranges where range.lowerBound <= covered {
            covered = max(covered, range.upperBound)
        }
        let sent = gets.reduce(UInt64(0)) { $0 + $1.bodyBytesSent }
        return covered == size && ranges.filter { $0.overlaps(probe) }.count == 1 && sent <= size + size / 8
    }

    @Test("a range corrupted once: exit 6 naming --repair with the data kept, then --repair rewrites only that range")
    func repairRewritesOnlyTheBadRange() async throws {
        // After the first request: the probe's response (bytes=0-) carries these bytes too, past where its request
        // keeps them; corrupted there, they would be thrown away at the cut, unseen.
        let harness = try Harness(faults: [.afterFirst(requests: 1, .corrupt(bytes: Self.corrupted, once: true))])
        defer { harness.shutdown() }

        let first = try await BraidCLI.run(harness.arguments())

        #expect(first.status == .exited(6), "\(first.standardError)")
        #expect(first.standardError.contains("sha-256 mismatch"), "\(first.standardError)")
        #expect(first.standardError.contains("kept in \(harness.output).part"), "\(first.standardError)")
        #expect(first.standardError.contains("run again with --repair"), "\(first.standardError)")
        #expect(!harness.exists(""), "nothing at the final name")
        #expect(harness.exists(".part") && harness.exists(".braid"), "the data and its manifest are kept")
        #expect(try Self.content.firstDifference(fromFileAt: harness.output + ".part") == Self.corrupted.lowerBound)

        let fetched = harness.gets(from: 0).count
        let again = try await BraidCLI.run(harness.arguments())

        #expect(again.status == .exited(6), "\(again.standardError)")
        #expect(again.standardError.contains("run again with --repair"), "\(again.standardError)")
        #expect(harness.gets(from: 0).count == fetched, "the kept data is verified again, not fetched")

        let before = harness.server.requestLog.count
        let repair = try await BraidCLI.run(harness.arguments(["--repair", "--json"]))

        #expect(repair.status == .exited(0), "\(repair.standardError)")
        #expect(try Self.content.firstDifference(fromFileAt: harness.output) == nil)
        #expect(!harness.exists(".part") && !harness.exists(".braid"))
        let events = try JSONEvents(repair.standardOutput)
        let done = try #require(events.named("done").first, "\(repair.standardOutput)")
        let repaired = try #require(done["repaired"] as? [[String: Any]], "\(done)")
        #expect(repaired.count == 1, "\(repaired)")
        #expect((repaired.first?["offset"] as? NSNumber)?.uint64Value == Self.corrupted.lowerBound)
        #expect((repaired.first?["length"] as? NSNumber)?.uint64Value == UInt64(Self.corrupted.count))
        let summary =
            "repaired 1 range (\(Self.corrupted.count) bytes): "
            + "\(Self.corrupted.lowerBound)-\(Self.corrupted.upperBound - 1)"
        let notices = events.named("notice").compactMap { $0["message"] as? String }
        #expect(notices.contains(summary), "\(notices)")
        let pass = harness.gets(from: before)
        #expect(Self.fetchedOnce(pass, probe: Self.corrupted), "the pass fetched the file once: \(pass.map(\.range))")
    }

    @Test("a range corrupted always: --repair ends with exit 6, the server's bytes do not match either, data kept")
    func repairAgainstWrongServer() async throws {
        let harness = try Harness(faults: [.corrupt(bytes: Self.corrupted, once: false)])
        defer { harness.shutdown() }

        let first = try await BraidCLI.run(harness.arguments())
        #expect(first.status == .exited(6), "\(first.standardError)")

        let repair = try await BraidCLI.run(harness.arguments(["--repair"]))

        #expect(repair.status == .exited(6), "\(repair.standardError)")
        #expect(repair.standardError.contains("the server's bytes do not match"), "\(repair.standardError)")
        #expect(repair.standardError.contains("0 ranges (0 bytes) rewritten"), "\(repair.standardError)")
        #expect(!repair.standardError.contains("--repair"), "repairing again would not help")
        #expect(!harness.exists(""))
        #expect(harness.exists(".part") && harness.exists(".braid"), "the data is still kept")
    }

    @Test("--repair without kept data downloads as usual")
    func repairWithoutMismatch() async throws {
        let harness = try Harness(faults: [])
        defer { harness.shutdown() }

        let run = try await BraidCLI.run(harness.arguments(["--repair", "--json"]))

        #expect(run.status == .exited(0), "\(run.standardError)")
        #expect(try Self.content.firstDifference(fromFileAt: harness.output) == nil)
        let done = try #require(try JSONEvents(run.standardOutput).named("done").first, "\(run.standardOutput)")
        #expect(done["repaired"] is NSNull, "no repair pass: \(done)")
        #expect(Self.fetchedOnce(harness.gets(from: 0), probe: Self.corrupted))
    }

    @Test("a repair pass killed part-way resumes as a repair, without --repair, and reports the range")
    func interruptedRepairResumes() async throws {
        // The pass cannot end on its own, however late the test gets to act: every response stalls after 512 KiB
        // (the corrupted range, at the start, is behind it by then), until the kill.
        let harness = try Harness(faults: [.corrupt(bytes: 0..<4096, once: true)])
        defer { harness.shutdown() }
        let first = try await BraidCLI.run(harness.arguments())
        #expect(first.status == .exited(6), "\(first.standardError)")
        harness.server.setRoute(
            "/f",
            .init(content: Self.content, faults: [.throttle(bytesPerSecond: 256 << 10), .stall(afterBytes: 512 << 10)])
        )
        let manifest = URL(fileURLWithPath: harness.output + ".braid")

        let child = try BraidCLI.start(harness.arguments(["--repair", "-q"]))
        defer { child.stop(signal: SIGKILL) }
        try await Polling.until("the pass to record the rewritten range", timeout: .seconds(60)) {
            child.status != nil || Self.rewrittenRanges(at: manifest)?.isEmpty == false
        }
        #expect(child.status == nil, "the pass ended before it could be killed: \(child.standardError)")
        child.send(SIGKILL)
        _ = try await child.waitForExit(timeout: .seconds(10))
        harness.server.setRoute("/f", .init(content: Self.content))

        let resumed = try await BraidCLI.run(harness.arguments())

        #expect(resumed.status == .exited(0), "\(resumed.standardError)")
        #expect(resumed.standardError.contains("continuing the repair"), "\(resumed.standardError)")
        #expect(resumed.standardError.contains("repaired 1 range (4096 bytes): 0-4095"), "\(resumed.standardError)")
        #expect(try Self.content.firstDifference(fromFileAt: harness.output) == nil)
    }

    @Test("the library: DownloadOptions.repair gives DownloadResult the repaired ranges")
    func libraryRepair() async throws {
        // After the first request: the probe's response (bytes=0-) carries these bytes too, past where its request
        // keeps them; corrupted there, they would be thrown away at the cut, unseen.
        let harness = try Harness(faults: [.afterFirst(requests: 1, .corrupt(bytes: Self.corrupted, once: true))])
        defer { harness.shutdown() }
        let digest = try ExpectedDigest(checksumArgument: "sha-256=\(Self.content.hexDigest(.sha256))")

        let first = await LibraryDownload.run(harness.server.url("/f"), into: harness.directory) {
            $0.expectedDigest = digest
        }
        #expect(first.error?.code == .integrity, "\(String(describing: first.error))")
        #expect(first.error?.remedies.contains(.repair) == true)

        let repaired = await LibraryDownload.run(harness.server.url("/f"), into: harness.directory) {
            $0.expectedDigest = digest
            $0.repair = true
        }

        let result = try repaired.result.get()
        #expect(result.repairedRanges == [Int64(Self.corrupted.lowerBound)..<Int64(Self.corrupted.upperBound)])
        #expect(try Self.content.firstDifference(fromFileAt: repaired.path) == nil)
    }

    /// The rewritten ranges a manifest records for a repair pass under way; nil when it records none.
    static func rewrittenRanges(at url: URL) -> [[String: Any]]? {
        guard let data = try? Data(contentsOf: url),
            let object = try? JSONSerialization.jsonObject(with: data) as? [String: Any],
            let repair = object["repair"] as? [String: Any]
        else { return nil }
        return repair["rewritten"] as? [[String: Any]]
    }
}
