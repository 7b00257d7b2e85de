import BraidTestServer
import BraidTestSupport
import Foundation
import Testing

/// `braid-embed-example`, the app built on the public API alone: it downloads, pauses, resumes and verifies.
@Suite("braid-embed-example")
struct EmbedExampleTests {
    /// The example binary, built next to `braid`.
    static let path = URL(fileURLWithPath: BraidCLI.path).deletingLastPathComponent()
        .appendingPathComponent("braid-embed-example").path

    @Test("downloads a throttled file into a directory, pausing and resuming once, and exits 0 with the file verified")
    func pausesResumesAndVerifies() async throws {
        // 128 KiB/s per connection: about 8 s for the file, so the example's pause at a third still finds work left
        // when a loaded machine delivers its progress events seconds late (at 512 KiB/s, once, the pause came at
        // 88 % and the last piece ended first).
        let content = TestContent(seed: 31, size: 3 << 20)
        let server = TestServer(routes: [
            "/movie.bin": .init(
                content: content, faults: [.throttle(bytesPerSecond: 128 << 10), .digest([.sha256], correct: true)])
        ])
        try server.start()
        let directory = try TemporaryDirectory(prefix: "braid-embed")
        defer {
            server.shutdown()
            directory.remove()
        }

        let run = try await ChildProcess.run(
            Self.path, [server.url("/movie.bin"), directory.url.path], timeout: .seconds(60))

        #expect(run.status == .exited(0), "\(run.standardOutput)\n\(run.standardError)")
        let saved = directory.appending("movie.bin").path
        #expect(try content.firstDifference(fromFileAt: saved) == nil)
        #expect(run.standardOutput.contains("pausing at"), "\(run.standardOutput)")
        #expect(run.standardOutput.contains("paused: progress is saved; resuming"), "\(run.standardOutput)")
        #expect(run.standardOutput.contains("resumed \(saved) at "), "the second start resumes: \(run.standardOutput)")
        #expect(run.standardOutput.contains("sha-256 \(content.hexDigest(.sha256)) verified"), "\(run.standardOutput)")
    }

    @Test("exits non-zero, with the reason, when the file cannot be fetched")
    func failure() async throws {
        let server = TestServer(routes: ["/gone": .init(size: 10, faults: [.status(404, retryAfter: nil)])])
        try server.start()
        let directory = try TemporaryDirectory(prefix: "braid-embed")
        defer {
            server.shutdown()
            directory.remove()
        }

        let run = try await ChildProcess.run(Self.path, [server.url("/gone"), directory.url.path])

        #expect(run.status == .exited(1))
        #expect(run.standardError.contains("404"), "\(run.standardError)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.url.path).isEmpty)
    }
}
