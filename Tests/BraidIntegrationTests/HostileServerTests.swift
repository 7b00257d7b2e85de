import Braid
import BraidTestServer
import BraidTestSupport
import Foundation
import Testing

/// A server that tries to get wrong bytes verified, or credentials sent where they do not belong: Braid either
/// delivers the server's real file or refuses, and never hands a secret to an origin the user did not name.
@Suite("hostile servers")
struct HostileServerTests {
    /// One piece, one connection: request 1 is the probe, request 2 the first range, request 3 its retry.
    static let content = TestContent(seed: 91, size: 1 << 20)

    /// The first range delivers the right bytes and then runs past its end (no `Content-Length`, so only the
    /// closed connection ends it); Braid throws that response away. The retry sends `retry` bytes.
    static func overrunThen(wrongRetry: Bool) -> [TestServer.Fault] {
        let firstRange: (TestServer.Fault) -> TestServer.Fault = {
            .afterFirst(requests: 1, .onlyFirst(requests: 2, $0))
        }
        var faults = [firstRange(.closeDelimited), firstRange(.extraBytes(count: 64 << 10))]
        if wrongRetry { faults.append(.afterFirst(requests: 2, .wrongBytes)) }
        return faults
    }

    // MARK: The digest covers the bytes on disk

    @Test(
        "a range thrown away after its right bytes, then retried with wrong ones, fails --checksum",
        arguments: [true, false]
    )
    func rewrittenRangeAgainstUserDigest(wrongRetry: Bool) async throws {
        let server = TestServer(routes: [
            "/f": .init(content: Self.content, faults: Self.overrunThen(wrongRetry: wrongRetry))
        ])
        try server.start()
        let directory = try TemporaryDirectory(prefix: "braid-hostile")
        defer {
            server.shutdown()
            directory.remove()
        }
        let output = directory.appending("out.bin").path
        let run = try await BraidCLI.run([
            "-n", "1", "-q", "--no-fsync", "-o", output,
            "--checksum", "sha-256=\(Self.content.hexDigest(.sha256))", server.url("/f"),
        ])
        #expect(server.requestLog.filter { $0.method == "GET" }.count >= 2, "the first range was retried")
        if wrongRetry {
            #expect(run.status == .exited(6), "\(run.standardError)")
            #expect(run.standardError.contains("sha-256 mismatch"), "\(run.standardError)")
            #expect(!FileManager.default.fileExists(atPath: output), "a wrong file was left at the final name")
        } else {
            #expect(run.status == .exited(0), "\(run.standardError)")
            #expect(try Self.content.firstDifference(fromFileAt: output) == nil)
        }
    }

    @Test(
        "a range thrown away after its right bytes, then retried with wrong ones, fails the server's digest",
        arguments: [true, false]
    )
    func rewrittenRangeAgainstServerDigest(wrongRetry: Bool) async throws {
        let faults = Self.overrunThen(wrongRetry: wrongRetry) + [.contentMD5(correct: true)]
        let server = TestServer(routes: ["/f": .init(content: Self.content, faults: faults)])
        try server.start()
        let directory = try TemporaryDirectory(prefix: "braid-hostile")
        defer {
            server.shutdown()
            directory.remove()
        }
        let download = await LibraryDownload.run(server.url("/f"), into: directory) { $0.connections = 1 }
        if wrongRetry {
            #expect(download.error?.code == .integrity, "\(String(describing: download.error))")
            #expect(download.error?.message.contains("md5 mismatch") == true)
            #expect(!FileManager.default.fileExists(atPath: download.path))
        } else {
            #expect(try download.result.get().verifiedDigest?.algorithm == .md5)
            #expect(try Self.content.firstDifference(fromFileAt: download.path) == nil)
        }
    }
}
