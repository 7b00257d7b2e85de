import Braid
import BraidTestServer
import BraidTestSupport
import Foundation
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// What `braid` prints on stderr when stderr is not a terminal (a file here): a line to start, progress lines
/// only once there is progress to tell, and a last line whose rate counts only this run's bytes and time; for a
/// list, one status line for all its files every few seconds, a line per failure, and a summary.
@Suite("progress off a terminal", .serialized)
struct ProgressOutputTests {
    @Test("a download over at once prints its start and its end, and no progress line of zeros")
    func tinyDownload() async throws {
        let server = TestServer(routes: ["/tiny": .init(size: 6)])
        try server.start()
        defer { server.shutdown() }
        let directory = try TemporaryDirectory(prefix: "braid-progress")
        defer { directory.remove() }
        let output = directory.appending("tiny.bin").path

        let run = try await BraidCLI.run([server.url("/tiny"), "-o", output])

        #expect(run.status == .exited(0), "\(run.standardError)")
        let lines = run.standardError.split(separator: "\n").map(String.init)
        #expect(lines.count == 2, "\(run.standardError)")
        #expect(lines.first?.hasPrefix("Downloading \(output) (6 B") == true, "\(run.standardError)")
        #expect(lines.last?.hasPrefix("Saved \(output) (6 B, length verified) in ") == true, "\(run.standardError)")
        #expect(!run.standardError.contains("%"), "no progress line: \(run.standardError)")
    }

    @Test("a resumed download's last line gives the bytes fetched in this run, at their rate, and those resumed")
    func resumedRate() async throws {
        // 1 MiB/s per connection, without a burst: 4 connections fetch the 8 MiB file in about 2 s. The first run's
        // four requests (its first GET and three ranges) each hold after 512 KiB, so that it is interrupted with a
        // quarter of the file checkpointed however loaded the machine is; the second run's requests are served in
        // full.
        let size: Int64 = 8 << 20
        let server = TestServer(routes: [
            "/f": .init(
                size: UInt64(size),
                faults: [.throttle(bytesPerSecond: 1 << 20), .onlyFirst(requests: 4, .stall(afterBytes: 512 << 10))])
        ])
        try server.start()
        defer { server.shutdown() }
        let directory = try TemporaryDirectory(prefix: "braid-progress")
        defer { directory.remove() }
        let output = directory.appending("out.bin").path
        let manifest = URL(fileURLWithPath: output + ".braid")
        let arguments = [server.url("/f"), "-n", "4", "-o", output]

        let first = try BraidCLI.start(arguments)
        defer { first.stop(signal: SIGKILL) }
        try await first.waitUntil("a quarter of the file checkpointed", timeout: .seconds(30)) {
            (ManifestFile(at: manifest)?.done ?? 0) >= size / 4
        }
        first.send(SIGINT)
        #expect(try await first.waitForExit(timeout: .seconds(10)) == .exited(130))
        let resumed = try #require(ManifestFile(at: manifest)).done
        #expect(resumed == size / 4, "each of the first run's four requests held after 512 KiB")

        let second = try await BraidCLI.run(arguments)

        #expect(second.status == .exited(0), "\(second.standardError)")
        #expect(second.standardError.contains("resuming at \(Formatting.bytes(resumed))"))
        let last = try #require(second.standardError.split(separator: "\n").last.map(String.init))
        let fetched = size - resumed
        let expectedStart = "Saved \(output) (8.0 MiB, length verified) in "
        #expect(last.hasPrefix(expectedStart), "\(last)")
        #expect(
            last.hasSuffix(
                ": \(Formatting.bytes(fetched)) fetched at \(Self.rate(last))/s, "
                    + "\(Formatting.bytes(resumed)) resumed"), "\(last)")
        // The rate is this run's bytes over this run's time: it agrees with them, and no faster than the server
        // lets 4 connections go.
        let seconds = try #require(Double(Self.seconds(last)))
        let rate = try #require(Self.mebibytesPerSecond(Self.rate(last)))
        #expect(rate <= 4 * 1.1, "\(last)")
        #expect(
            abs(rate * seconds - Double(fetched) / 1048576) <= 0.15 * Double(fetched) / 1048576 + 0.05 * rate, "\(last)"
        )
    }

    @Test("a list prints one status line for all its files, a line per failure as it happens, and a summary")
    func listStatusLine() async throws {
        // 16 KiB/s per connection: each 64 KiB file takes seconds, and two rounds of them longer than one interval
        // (5 s) between status lines off a terminal.
        let nginx = try await NginxFixture.start(.init(locations: [.prefix("/slow/", bytesPerSecond: 16 << 10)]))
        defer { nginx.shutdown() }
        let directory = try TemporaryDirectory(prefix: "braid-progress")
        defer { directory.remove() }
        let content = PseudoRandomContent(seed: 12)
        var urls = [nginx.url("/slow/missing.bin")]
        for index in 1...30 {
            try content.write(to: nginx.documentRoot.appendingPathComponent("f\(index).bin"), size: 64 << 10)
            urls.append(nginx.url("/slow/f\(index).bin"))
        }
        let list = directory.appending("list.txt")
        try Data(urls.joined(separator: "\n").utf8).write(to: list)
        let output = directory.appending("out").path

        let run = try await BraidCLI.run(["-i", list.path, "-d", output, "--no-fsync"])

        #expect(run.status == .exited(5), "\(run.standardError)")
        let lines = run.standardError.split(separator: "\n").map(String.init)
        #expect(lines.first?.hasPrefix("Downloading 31 files into \(output), as many at a time as") == true)
        let status = lines.filter { $0.range(of: #"^\d+/31 files"#, options: .regularExpression) != nil }
        #expect(!status.isEmpty, "a status line: \(run.standardError)")
        #expect(status.allSatisfy { $0.contains("/s") && $0.hasSuffix("running") }, "\(status)")
        #expect(lines.contains { $0.hasPrefix("braid: [1/31] missing.bin: ") && $0.contains("404") })
        for perFile in ["probing", "downloading f", "completed f", "verifying"] {
            #expect(!run.standardError.contains(perFile), "no line per file: \(perFile)")
        }
        let summary = ListDownloadTests.summaryRows(run.standardError)
        #expect(summary["missing.bin"]?.hasPrefix("failed (exit 5)") == true, "\(run.standardError)")
        #expect(!summary.keys.contains { $0.hasPrefix("f") }, "past 20 files, the table lists the failures only")
        #expect(lines.last?.hasPrefix("30 of 31 succeeded, 1 failed, in ") == true, "\(run.standardError)")
        #expect(lines.last?.hasSuffix("; exit status 5") == true)
        for index in 1...30 {
            let saved = try Data(contentsOf: URL(fileURLWithPath: output + "/f\(index).bin"))
            #expect(saved == content.bytes(in: 0..<(64 << 10)), "f\(index).bin")
        }

        let quiet = try await BraidCLI.run(["-i", list.path, "-d", output, "--no-fsync", "-q"])

        #expect(quiet.status == .exited(5))
        #expect(quiet.standardError.split(separator: "\n").count == 1, "-q: the failure only: \(quiet.standardError)")
    }

    /// The seconds in a `Saved … in T s…` line.
    private static func seconds(_ line: String) -> String {
        guard let range = line.range(of: " in ") else { return "" }
        return String(line[range.upperBound...].prefix { $0 != " " })
    }

    /// The rate in a `Saved …` line, such as `3.9 MiB`, without its `/s`.
    private static func rate(_ line: String) -> String {
        guard let end = line.range(of: "/s") else { return "" }
        let before = line[..<end.lowerBound]
        let words = before.split(separator: " ")
        return words.suffix(2).joined(separator: " ")
    }

    /// A rate in MiB/s from its printed form, `512.0 KiB` or `3.9 MiB`.
    private static func mebibytesPerSecond(_ text: String) -> Double? {
        let parts = text.split(separator: " ")
        guard parts.count == 2, let value = Double(parts[0]) else { return nil }
        switch parts[1] {
        case "B": return value / 1048576
        case "KiB": return value / 1024
        case "MiB": return value
        case "GiB": return value * 1024
        default: return nil
        }
    }
}
