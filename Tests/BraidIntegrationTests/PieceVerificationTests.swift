import Braid
import BraidTestServer
import BraidTestSupport
import Foundation
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// Checking every piece as it lands: a `206`'s `Content-Digest` (RFC 9530) and piece hashes (a Metalink's), and a
/// resume that re-checks what an earlier run wrote but had not verified.
@Suite("piece verification")
struct PieceVerificationTests {
    static let content = TestContent(seed: 1414, size: 4 << 20)
    /// A range inside the second of the four 1 MiB segments `-n 4` plans.
    static let corrupted: Range<UInt64> = 1_500_000..<1_501_000

    /// The `206` GETs whose range contains byte `offset`.
    static func requests(covering offset: UInt64, in log: [TestServer.RequestRecord]) -> [String] {
        log.compactMap { record in
            guard record.method == "GET", record.status == 206, let range = record.range,
                let spec = range.split(separator: "=").last?.split(separator: "-"), spec.count == 2,
                let first = UInt64(spec[0]), let last = UInt64(spec[1]), first <= offset, offset <= last
            else { return nil }
            return range
        }
    }

    @Test("a range corrupted once under Content-Digest is fetched again alone, and the file ends identical")
    func contentDigestCorruptedOnce() async throws {
        for algorithm in [TestContent.DigestAlgorithm.sha256, .sha512] {
            let server = TestServer(routes: [
                "/f": .init(
                    content: Self.content,
                    // After the first request: the probe's response (bytes=0-) carries these bytes too, past where
                    // its request keeps them; corrupted there, they would be thrown away at the cut, unseen.
                    faults: [
                        .contentDigest([algorithm]),
                        .afterFirst(requests: 1, .corrupt(bytes: Self.corrupted, once: true)),
                    ])
            ])
            try server.start()
            defer { server.shutdown() }
            let directory = try TemporaryDirectory(prefix: "braid-pieces")
            defer { directory.remove() }

            let run = try await BraidCLI.run([server.url("/f"), "-o", directory.appending("out.bin").path, "-n", "4"])

            #expect(run.status == .exited(0), "\(run.standardError)")
            #expect(try Self.content.firstDifference(fromFileAt: directory.appending("out.bin").path) == nil)
            server.waitUntilIdle()
            let log = server.requestLog
            let covering = Self.requests(covering: Self.corrupted.lowerBound, in: log)
            #expect(covering.count == 2, "\(algorithm): the corrupted range's request and one more: \(covering)")
            #expect(covering.count == 2 && covering[0] == covering[1], "the same range, fetched again alone")
            // Every other byte was fetched once: the range requests' bodies add up to the file, less what the first
            // request kept of the probe's response (bytes=0-, cut where the next range begins), and one range more.
            let ranges = log.filter { $0.status == 206 && $0.range != "bytes=0-" }
            let kept = ranges.map { RepairTests.requested($0).lowerBound }.min() ?? 0
            let served = ranges.reduce(UInt64(0)) { $0 + $1.bodyBytesSent }
            #expect(kept > 0 && served == Self.content.size - kept + (1 << 20), "\(kept) kept, \(served) served")
            #expect(log.allSatisfy { $0.headerNames.contains("want-content-digest") || $0.method == "HEAD" })
        }
    }

    @Test("a range that is always corrupted ends the download with exit 6 naming it, its data kept for a resume")
    func contentDigestCorruptedAlways() async throws {
        let server = TestServer(routes: [
            "/f": .init(
                content: Self.content,
                faults: [.contentDigest([.sha256]), .corrupt(bytes: Self.corrupted, once: false)])
        ])
        try server.start()
        defer { server.shutdown() }
        let directory = try TemporaryDirectory(prefix: "braid-pieces")
        defer { directory.remove() }

        let run = try await BraidCLI.run([
            server.url("/f"), "-o", directory.appending("out.bin").path, "-n", "4", "--max-tries", "2",
        ])

        #expect(run.status == .exited(6), "\(run.standardError)")
        #expect(run.standardError.contains("bytes 1048576-2097151"), "\(run.standardError)")
        #expect(run.standardError.contains("did not match their digest after 2 attempts"))
        #expect(!FileManager.default.fileExists(atPath: directory.appending("out.bin").path))
        let manifest = try #require(ManifestFile(at: directory.appending("out.bin.braid")))
        #expect(manifest.done >= 3 << 20, "the three good segments stay for a resume")
    }

    /// Piece hashes of `content` in pieces of `pieceLength`.
    static func pieceHashes(_ content: TestContent, pieceLength: UInt64) -> PieceHashes {
        let digests = stride(from: UInt64(0), to: content.size, by: Int(pieceLength)).map { start in
            content.digest(.sha256, of: start..<min(content.size, start + pieceLength))
        }
        return PieceHashes(algorithm: .sha256, pieceLength: Int64(pieceLength), digests: digests)
    }

    @Test("with piece hashes, a piece corrupted on one mirror is fetched again from the other")
    func pieceFromOtherMirror() async throws {
        let server = TestServer(routes: [
            "/a/f": .init(content: Self.content, faults: [.corrupt(bytes: Self.corrupted, once: false)]),
            "/b/f": .init(content: Self.content),
        ])
        try server.start()
        defer { server.shutdown() }
        let directory = try TemporaryDirectory(prefix: "braid-pieces")
        defer { directory.remove() }

        let download = await LibraryDownload.run(server.url("/a/f"), into: directory) {
            $0.mirrors = [server.url("/b/f")]
            // One connection: every piece is fetched from the URL first, then from the mirror once it fails.
            $0.connections = 1
            $0.pieceHashes = Self.pieceHashes(Self.content, pieceLength: 256 << 10)
        }

        let result = try download.result.get()
        #expect(try Self.content.firstDifference(fromFileAt: result.path) == nil)
        #expect(result.retries >= 1)
        server.waitUntilIdle()
        let log = server.requestLog
        let piece = "bytes=1310720-1572863"
        let fromB = log.filter { $0.target == "/b/f" && $0.range == piece }
        #expect(
            fromB.count == 1,
            "the bad piece alone, from the other mirror: \(log.map { "\($0.target) \($0.range ?? "")" })")
        #expect(download.retries.contains { $0.reason.contains("1310720-1572863") && $0.reason.contains("/a/f") })
    }

    @Test("a resume after a reboot re-checks unsynced pieces against the piece hashes, and fetches only bad ones")
    func resumeRechecksUnsyncedPieces() async throws {
        let server = TestServer(routes: ["/f": .init(content: Self.content)])
        try server.start()
        defer { server.shutdown() }
        let directory = try TemporaryDirectory(prefix: "braid-pieces")
        defer { directory.remove() }
        let output = directory.appending("out.bin")

        // What a run killed by a power cut leaves: the first 3 MiB written but none synced or verified, on
        // another boot, and one of its pieces (768 KiB..<1 MiB) not what was written.
        var bytes = [UInt8](repeating: 0, count: Int(Self.content.size))
        let written = Self.content.bytes(in: 0..<(3 << 20))
        bytes.replaceSubrange(0..<written.count, with: written)
        for index in (800 << 10)..<(801 << 10) { bytes[index] ^= 0xFF }
        try Data(bytes).write(to: URL(fileURLWithPath: output.path + ".part"))
        let mib: Int64 = 1 << 20
        let manifest: [String: Any] = [
            "format": "braid-manifest", "version": 1, "url": server.url("/f"), "resolvedURL": server.url("/f"),
            "length": Self.content.size, "etag": Self.content.entityTag, "lastModified": Self.content.lastModified,
            "bootID": "a-boot-before-the-power-cut",
            "segments": [
                ["start": 0, "end": 2 * mib, "done": 2 * mib, "durable": 0, "verified": 0],
                ["start": 2 * mib, "end": 4 * mib, "done": mib, "durable": 0, "verified": 0],
            ],
        ]
        try JSONSerialization.data(withJSONObject: manifest).write(to: URL(fileURLWithPath: output.path + ".braid"))

        let download = await LibraryDownload.run(server.url("/f"), into: directory) {
            $0.pieceHashes = Self.pieceHashes(Self.content, pieceLength: 256 << 10)
        }

        let result = try download.result.get()
        #expect(try Self.content.firstDifference(fromFileAt: result.path) == nil)
        #expect(
            download.notices.contains {
                $0.contains("checked 12 pieces an earlier run wrote but had not verified: 1 did not match")
            }, "\(download.notices)")
        #expect(result.fetchedBytes == (256 << 10) + mib, "the bad piece and the unwritten megabyte, nothing else")
        server.waitUntilIdle()
        #expect(Self.requests(covering: 0, in: server.requestLog).isEmpty)
        #expect(Self.requests(covering: 800 << 10, in: server.requestLog) == ["bytes=786432-1048575"])
    }

    /// A command prefix that hides `/proc/self/fd` from what it executes: `unshare` gives `sh` a mount namespace of
    /// its own, `sh` mounts an empty file system over its own `/proc/PID/fd` and executes the command, which keeps
    /// its process id. Braid reopens its partial file through `/proc/self/fd` to check pieces, which then fails.
    /// Nil where this machine allows no mount namespace (neither root nor user namespaces).
    static let hidingOwnDescriptors = MountNamespace.wrapper(script: "mount -t tmpfs none /proc/$$/fd")

    @Test(
        "a partial file that cannot be opened again to check its pieces fails the download: no piece passes unread",
        .enabled(if: hidingOwnDescriptors != nil, "needs a mount namespace to hide /proc/self/fd"))
    func piecesNeverPassUnread() async throws {
        let server = TestServer(routes: [
            "/f": .init(
                content: Self.content,
                faults: [.contentDigest([.sha256]), .corrupt(bytes: Self.corrupted, once: true)])
        ])
        try server.start()
        defer { server.shutdown() }
        let directory = try TemporaryDirectory(prefix: "braid-pieces")
        defer { directory.remove() }
        let output = directory.appending("out.bin").path

        let run = try await BraidCLI.run(
            [server.url("/f"), "-o", output, "-n", "4"], through: try #require(Self.hidingOwnDescriptors))

        #expect(run.status == .exited(3), "\(run.standardError)")
        #expect(run.standardError.contains("cannot open \(output).part for verification"), "\(run.standardError)")
        #expect(!FileManager.default.fileExists(atPath: output), "no file at the final name")
    }
}
