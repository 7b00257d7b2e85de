import BraidTestServer
import BraidTestSupport
import Foundation
import Testing

@testable import Braid

#if canImport(Glibc)
    import Glibc
#endif

/// Killing Braid at random moments never costs more than a little refetching, and never a wrong byte.
@Suite("crash safety", .serialized)
struct CrashSafetyTests {
    @Test("SIGKILL many times at random moments, then finish: byte-identical, little refetched")
    func repeatedKills() async throws {
        // 64 KiB/s per connection while the kills go on: 4 connections need about a minute for 16 MiB, room for
        // every kill even when a full run on 2 cores holds this test's task back for half a minute (seen). A child
        // that finishes all the same ends the kills early. The last run, after the kills, is not throttled.
        let size: UInt64 = 16 << 20
        let content = TestContent(seed: 11, size: size)
        let server = TestServer(routes: ["/f": .init(content: content, faults: [.throttle(bytesPerSecond: 64 << 10)])])
        try server.start()
        let directory = try TemporaryDirectory(prefix: "braid-crash")
        defer {
            server.shutdown()
            directory.remove()
        }
        let output = directory.appending("out.bin").path
        let manifest = URL(fileURLWithPath: output + ".braid")
        let arguments = [server.url("/f"), "-n", "4", "-o", output, "-q", "--no-fsync"]
        // The library's SplitMix64: a failing run can be replayed.
        var random = SplitMix64(seed: 2024)
        var kills = 0
        var completed = false

        for round in 0..<10 {
            let before = ManifestFile(at: manifest)?.done ?? 0
            let child = try BraidCLI.start(arguments)
            defer { child.stop(signal: SIGKILL) }
            // A random moment: right after start, once the manifest exists, or after a random amount of progress.
            let step = Int64(random.next() % UInt64(1 << 20))
            switch round % 3 {
            case 0:
                try await child.waitUntil("the process to start", timeout: .seconds(30)) { true }
            case 1:
                try await Polling.until("a manifest", timeout: .seconds(30)) {
                    child.status != nil || ManifestFile(at: manifest) != nil
                }
            default:
                try await Polling.until("progress", timeout: .seconds(60)) {
                    child.status != nil || (ManifestFile(at: manifest)?.done ?? 0) >= before + step
                }
            }
            if let status = child.status {
                #expect(status == .exited(0), "a run between kills failed")
                completed = status == .exited(0)
                break
            }
            child.send(SIGKILL)
            _ = try await child.waitForExit(timeout: .seconds(10))
            kills += 1
            if let saved = ManifestFile(at: manifest) {
                #expect(saved.done >= 0 && saved.done <= Int64(size))
            }
        }

        if !completed {
            server.setRoute("/f", .init(content: content))
            let last = try await BraidCLI.run(arguments)
            #expect(last.status == .exited(0), "\(last.standardError)")
        }
        #expect(try content.firstDifference(fromFileAt: output) == nil, "the file differs after \(kills) kills")
        #expect(server.waitUntilIdle())
        let sent = server.totalBodyBytesSent
        #expect(kills >= 5, "the download should outlive several kills")
        #expect(sent <= size + size / 4, "sent \(sent) bytes for a \(size)-byte file over \(kills) kills")
    }
}
