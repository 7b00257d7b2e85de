import BraidJSON
import BraidTestSupport
import Foundation
import Testing

/// `braid daemon` against an HTTPS server whose certificate no public CA signed, as an internal server's: trusted
/// with `--cacert` (aria2's `--ca-certificate`), refused without it, and a `--cacert` it cannot read stops it before
/// it starts.
@Suite("braid daemon over HTTPS with a private CA", .serialized)
struct DaemonTLSTests {
    typealias Scratch = DaemonHostileClientTests.Scratch

    /// nginx over TLS with a self-signed certificate, serving `file.bin`; the file's bytes.
    static func server() async throws -> (NginxFixture, TemporaryDirectory, Data) {
        let root = try TemporaryDirectory(prefix: "braid-daemon-tls")
        let bytes = Data((0..<300_000).map { UInt8(truncatingIfNeeded: $0 &* 31) })
        try bytes.write(to: root.appending("file.bin"))
        let nginx = try await NginxFixture.start(.init(documentRoot: root.url, enablesTLS: true))
        return (nginx, root, bytes)
    }

    @Test("with --cacert the download completes with the server's bytes; without it, it ends in a TLS error")
    func trustsThePrivateCA() async throws {
        let (nginx, root, bytes) = try await Self.server()
        defer {
            nginx.shutdown()
            root.remove()
        }
        let certificate = try #require(nginx.certificatePath)
        let url = nginx.url("/file.bin", tls: true)
        try await DaemonHostileClientTests().withScratch { scratch in
            for trusted in [true, false] {
                let daemon = try await scratch.startDaemon(arguments: trusted ? ["--cacert", certificate] : [])
                defer { DaemonHostileClientTests.expectCleanStop(daemon) }
                let output = trusted ? "trusted.bin" : "untrusted.bin"
                let added = try await DaemonHostileClientTests.call(
                    daemon, "aria2.addUri", #"[""# + url + #""],{"out":""# + output + #""}"#)
                let gid = try #require(added["result"]?.stringValue, "\(added.text)")
                let status = try await DaemonHostileClientTests.settled(daemon, gid)
                let path = scratch.downloads + "/" + output
                if trusted {
                    #expect(status["result"]?["status"] == .string("complete"), "\(status.text)")
                    #expect(FileManager.default.contents(atPath: path) == bytes)
                } else {
                    #expect(status["result"]?["status"] == .string("error"), "\(status.text)")
                    let message = status["result"]?["errorMessage"]?.stringValue ?? ""
                    #expect(message.contains("certificate"), "\(status.text)")
                    #expect(!FileManager.default.fileExists(atPath: path))
                }
            }
        }
    }

    @Test("a --cacert it cannot read: one line naming it, and the daemon does not start")
    func unreadableCertificate() async throws {
        try await DaemonHostileClientTests().withScratch { scratch in
            let missing = scratch.directory.appending("missing.pem").path
            let child = try DaemonUnderTest.braidChild([
                "daemon", "--listen", "127.0.0.1:0", "--dir", scratch.downloads, "--cacert", missing,
            ])
            let status = try await child.waitForExit(timeout: .seconds(30))
            #expect(!status.isSuccess)
            #expect(child.standardError.contains("--cacert: cannot read \(missing)"), "\(child.standardError)")
        }
    }
}
