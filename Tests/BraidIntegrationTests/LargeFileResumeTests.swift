import BraidTestServer
import BraidTestSupport
import Foundation
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// A file of several TiB (served from generated content, written sparsely) is interrupted, then resumed from its
/// manifest: Braid reads back the manifest it wrote, however large the file.
@Suite("a multi-TiB download stays resumable")
struct LargeFileResumeTests {
    /// More than the 6.4 TiB that 100,000 segments of 64 MiB hold.
    static let size: UInt64 = 8 << 40

    /// Whether the scratch file system holds a sparse file of `size` (ext4 holds 16 TiB).
    static let holdsSparseFile: Bool = {
        guard let directory = try? TemporaryDirectory(prefix: "braid-sparse") else { return false }
        defer { directory.remove() }
        let descriptor = open(directory.appending("probe").path, O_CREAT | O_RDWR, 0o600)
        defer { close(descriptor) }
        return ftruncate(descriptor, off_t(size)) == 0
    }()

    @Test(
        "8 TiB: interrupted, then resumed from its manifest (not refused), then interrupted again",
        .enabled(if: holdsSparseFile, "the scratch file system refuses an 8 TiB sparse file (EFBIG)")
    )
    func interruptAndResume() async throws {
        let content = TestContent(seed: 11, size: Self.size)
        let server = TestServer(routes: ["/huge": .init(content: content, faults: [.throttle(bytesPerSecond: 2 << 20)])]
        )
        try server.start()
        defer { server.shutdown() }
        let directory = try TemporaryDirectory(prefix: "braid-huge")
        defer { directory.remove() }
        let output = directory.appending("huge.bin").path
        let manifestURL = URL(fileURLWithPath: output + ".braid")
        let arguments = [server.url("/huge"), "-n", "4", "-o", output, "--no-fsync"]

        let first = try BraidCLI.start(arguments)
        defer { first.stop(signal: SIGKILL) }
        try await first.waitUntil("some progress checkpointed", timeout: .seconds(60)) {
            (ManifestFile(at: manifestURL)?.done ?? 0) > 0
        }
        first.send(SIGINT)
        #expect(try await first.waitForExit(timeout: .seconds(30)) == .exited(130), "\(first.standardError)")
        let saved = try #require(ManifestFile(at: manifestURL))
        #expect(saved.length == Int64(Self.size))
        #expect(saved.segments <= 100_000 / 10, "\(saved.segments) segments")

        let second = try BraidCLI.start(arguments)
        defer { second.stop(signal: SIGKILL) }
        try await second.waitUntilStandardError(contains: "resuming at", timeout: .seconds(60))
        try await second.waitUntil("more progress checkpointed", timeout: .seconds(60)) {
            (ManifestFile(at: manifestURL)?.done ?? 0) > saved.done
        }
        second.send(SIGINT)
        #expect(try await second.waitForExit(timeout: .seconds(30)) == .exited(130), "\(second.standardError)")
        #expect(second.standardError.contains("run the same command again to resume"))
        #expect(!FileManager.default.fileExists(atPath: output))
    }
}
