import BraidTestSupport
import Foundation
import Testing

/// HTTPS against nginx with a self-signed certificate: verified by default, trusted with --cacert, and
/// --insecure says what it is.
@Suite("TLS", .serialized)
struct TLSTests {
    struct Fixture {
        let nginx: NginxFixture
        let directory: TemporaryDirectory
        let md5: MD5Digest

        static func start() async throws -> Fixture {
            let directory = try TemporaryDirectory(prefix: "braid-tls")
            let root = directory.appending("www")
            try FileManager.default.createDirectory(at: root, withIntermediateDirectories: true)
            try PseudoRandomContent(seed: 5).write(to: root.appendingPathComponent("file.bin"), size: 4 << 20)
            let md5 = try await MD5Digest.of(fileAt: root.appendingPathComponent("file.bin"))
            let nginx = try await NginxFixture.start(.init(documentRoot: root, enablesTLS: true))
            return Fixture(nginx: nginx, directory: directory, md5: md5)
        }

        func shutdown() {
            nginx.shutdown()
            directory.remove()
        }
    }

    @Test("an untrusted certificate is refused with exit 4 and a hint")
    func untrusted() async throws {
        let fixture = try await Fixture.start()
        defer { fixture.shutdown() }
        let output = fixture.directory.appending("out.bin").path

        let run = try await BraidCLI.run([fixture.nginx.url("/file.bin", tls: true), "-o", output])

        #expect(run.status == .exited(4), "\(run.standardError)")
        #expect(run.standardError.contains("--cacert"))
        #expect(!FileManager.default.fileExists(atPath: output))
    }

    @Test("--cacert trusts the server's certificate")
    func trustedWithCACert() async throws {
        let fixture = try await Fixture.start()
        defer { fixture.shutdown() }
        let output = fixture.directory.appending("out.bin")
        let certificate = try #require(fixture.nginx.certificatePath)

        let run = try await BraidCLI.run([
            fixture.nginx.url("/file.bin", tls: true), "-o", output.path, "--cacert", certificate, "-q",
        ])

        #expect(run.status == .exited(0), "\(run.standardError)")
        #expect(try await MD5Digest.of(fileAt: output) == fixture.md5)
    }

    @Test("--insecure downloads and says it is insecure")
    func insecure() async throws {
        let fixture = try await Fixture.start()
        defer { fixture.shutdown() }
        let output = fixture.directory.appending("out.bin")

        let run = try await BraidCLI.run([fixture.nginx.url("/file.bin", tls: true), "-o", output.path, "--insecure"])

        #expect(run.status == .exited(0), "\(run.standardError)")
        #expect(run.standardError.contains("insecure"))
        #expect(try await MD5Digest.of(fileAt: output) == fixture.md5)
    }
}
