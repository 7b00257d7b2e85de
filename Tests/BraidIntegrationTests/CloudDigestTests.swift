import BraidTestServer
import BraidTestSupport
import Foundation
import Testing

/// The digests object stores send without `Content-MD5` or `Repr-Digest` (GCS `x-goog-hash`, S3 full-object
/// `x-amz-checksum-sha256`, an S3 single-part `ETag`), and `--checksum-file`: each is verified, and the final line
/// and the `verified` event say where the digest came from.
@Suite("braid: cloud digests and --checksum-file")
struct CloudDigestTests {
    static let content = TestContent(seed: 41, size: 1 << 20)
    static let other = TestContent(seed: 42, size: 1 << 20)

    /// Serves ``content`` at `/data/file.bin` with `faults`.
    static func start(_ faults: [TestServer.Fault]) throws -> (TestServer, TemporaryDirectory) {
        let server = TestServer(routes: ["/data/file.bin": .init(content: content, faults: faults)])
        try server.start()
        return (server, try TemporaryDirectory(prefix: "braid-cloud"))
    }

    /// What an S3 single-part object looks like: its MD5 as a strong `ETag`, and S3's request id.
    static func amazonObject(md5Of served: TestContent) -> [TestServer.Fault] {
        [
            .entityTag("\"\(served.hexDigest(.md5))\""),
            .rawHeader(name: "x-amz-request-id", value: Array("4442587FB7D0A2F9".utf8)),
        ]
    }

    static let right: [([TestServer.Fault], String)] = [
        ([.googHash(correct: true)], "md5 verified against x-goog-hash"),
        ([.amzChecksum(correct: true, composite: false)], "sha-256 verified against x-amz-checksum-sha256"),
        (amazonObject(md5Of: content), "md5 verified against ETag"),
    ]

    @Test("a right cloud digest is verified and named on the final line", arguments: right)
    func rightDigest(faults: [TestServer.Fault], line: String) async throws {
        let (server, directory) = try Self.start(faults)
        defer {
            server.shutdown()
            directory.remove()
        }
        let output = directory.appending("file.bin").path

        let run = try await BraidCLI.run([server.url("/data/file.bin"), "-o", output, "-n", "4", "--no-fsync"])

        #expect(run.status == .exited(0), "\(run.standardError)")
        #expect(run.standardError.contains(line), "\(run.standardError)")
        #expect(try Self.content.firstDifference(fromFileAt: output) == nil)
    }

    static let wrong: [([TestServer.Fault], String)] = [
        ([.googHash(correct: false)], "x-goog-hash"),
        ([.amzChecksum(correct: false, composite: false)], "x-amz-checksum-sha256"),
        (amazonObject(md5Of: other), "ETag"),
    ]

    @Test("a wrong cloud digest is refused with exit 6, naming where it came from", arguments: wrong)
    func wrongDigest(faults: [TestServer.Fault], source: String) async throws {
        let (server, directory) = try Self.start(faults)
        defer {
            server.shutdown()
            directory.remove()
        }
        let output = directory.appending("file.bin").path

        let run = try await BraidCLI.run([server.url("/data/file.bin"), "-o", output, "--no-fsync"])

        #expect(run.status == .exited(6), "\(run.standardError)")
        #expect(run.standardError.contains("mismatch") && run.standardError.contains("(from \(source))"))
        #expect(!FileManager.default.fileExists(atPath: output))
    }

    @Test("a composite S3 checksum (of part checksums) is not taken for the file's digest")
    func compositeChecksum() async throws {
        let (server, directory) = try Self.start([.amzChecksum(correct: true, composite: true)])
        defer {
            server.shutdown()
            directory.remove()
        }
        let output = directory.appending("file.bin").path

        let run = try await BraidCLI.run([server.url("/data/file.bin"), "-o", output, "--no-fsync"])

        #expect(run.status == .exited(0), "\(run.standardError)")
        #expect(run.standardError.contains("length verified"), "\(run.standardError)")
        #expect(try Self.content.firstDifference(fromFileAt: output) == nil)
    }

    @Test("--json: the verified event names the S3 checksum as its source")
    func jsonSource() async throws {
        let (server, directory) = try Self.start([.amzChecksum(correct: true, composite: false)])
        defer {
            server.shutdown()
            directory.remove()
        }
        let output = directory.appending("file.bin").path

        let run = try await BraidCLI.run([server.url("/data/file.bin"), "-o", output, "--json", "--no-fsync"])

        #expect(run.status == .exited(0), "\(run.standardError)")
        let verified = try #require(try JSONEvents(run.standardOutput).named("verified").first)
        #expect(verified["algorithm"] as? String == "sha-256")
        #expect(verified["hex"] as? String == Self.content.hexDigest(.sha256))
        #expect(verified["source"] as? String == "x-amz-checksum-sha256")
    }

    // MARK: --checksum-file

    /// Writes a `SHA256SUMS` with a decoy line and the given line for `file.bin`.
    static func sums(in directory: TemporaryDirectory, _ line: String) throws -> String {
        let path = directory.appending("SHA256SUMS").path
        let text = "\(other.hexDigest(.sha256))  other.bin\n\(line)\n"
        try text.write(toFile: path, atomically: true, encoding: .utf8)
        return path
    }

    @Test(
        "--checksum-file: the line for the saved name is verified, with -o or with the name from the URL",
        arguments: [true, false])
    func checksumFileRight(givesOutput: Bool) async throws {
        // A wrong server digest shows the file's line takes precedence.
        let (server, directory) = try Self.start([.googHash(correct: false)])
        defer {
            server.shutdown()
            directory.remove()
        }
        let sums = try Self.sums(in: directory, "\(Self.content.hexDigest(.sha256)) *file.bin")
        let output = directory.appending("file.bin").path
        let destination = givesOutput ? ["-o", output] : ["-d", directory.appending("").path]

        let run = try await BraidCLI.run(
            [server.url("/data/file.bin"), "--checksum-file", sums, "--no-fsync"] + destination)

        #expect(run.status == .exited(0), "\(run.standardError)")
        #expect(run.standardError.contains("sha-256 verified against checksum-file"), "\(run.standardError)")
        #expect(try Self.content.firstDifference(fromFileAt: output) == nil)
    }

    @Test("--checksum-file: a wrong line is refused with exit 6")
    func checksumFileWrong() async throws {
        let (server, directory) = try Self.start([])
        defer {
            server.shutdown()
            directory.remove()
        }
        let sums = try Self.sums(in: directory, "MD5 (file.bin) = \(Self.other.hexDigest(.md5))")
        let output = directory.appending("file.bin").path

        let run = try await BraidCLI.run([server.url("/data/file.bin"), "--checksum-file", sums, "-o", output])

        #expect(run.status == .exited(6), "\(run.standardError)")
        #expect(run.standardError.contains("md5 mismatch") && run.standardError.contains("checksum-file"))
        #expect(!FileManager.default.fileExists(atPath: output))
    }

    @Test("--checksum-file without a line for the name: exit 2, before any traffic when the name is given")
    func checksumFileMissingLine() async throws {
        let (server, directory) = try Self.start([])
        defer {
            server.shutdown()
            directory.remove()
        }
        let sums = try Self.sums(in: directory, "\(Self.content.hexDigest(.sha256))  renamed.bin")
        let output = directory.appending("file.bin").path

        let named = try await BraidCLI.run([server.url("/data/file.bin"), "--checksum-file", sums, "-o", output])

        #expect(named.status == .exited(2), "\(named.standardError)")
        #expect(named.standardError.contains("no line for file.bin"), "\(named.standardError)")
        #expect(server.requestLog.isEmpty, "refused before any traffic")

        let unnamed = try await BraidCLI.run([
            server.url("/data/file.bin"), "--checksum-file", sums, "-d", directory.appending("").path,
        ])

        #expect(unnamed.status == .exited(2), "\(unnamed.standardError)")
        #expect(unnamed.standardError.contains("no line for file.bin"), "\(unnamed.standardError)")
        #expect(!FileManager.default.fileExists(atPath: output))
        #expect(!FileManager.default.fileExists(atPath: output + ".part"))
    }

    @Test("--checksum-file with a list: each file is verified against its own line, a checksum= line wins")
    func checksumFileWithList() async throws {
        let server = TestServer(routes: [
            "/one.bin": .init(content: Self.content), "/two.bin": .init(content: Self.other),
            "/three.bin": .init(content: Self.content),
        ])
        try server.start()
        let directory = try TemporaryDirectory(prefix: "braid-cloud")
        defer {
            server.shutdown()
            directory.remove()
        }
        let sums = directory.appending("SHA256SUMS").path
        let lines = [
            "\(Self.content.hexDigest(.sha256))  one.bin", "MD5 (two.bin) = \(Self.other.hexDigest(.md5))",
            "\(Self.other.hexDigest(.sha256))  three.bin",
        ]
        try (lines.joined(separator: "\n") + "\n").write(toFile: sums, atomically: true, encoding: .utf8)
        let list = directory.appending("list.txt").path
        let entries = [
            server.url("/one.bin"), server.url("/two.bin"), server.url("/three.bin"),
            "  checksum=md5=\(Self.content.hexDigest(.md5))",
        ]
        try (entries.joined(separator: "\n") + "\n").write(toFile: list, atomically: true, encoding: .utf8)
        let output = directory.appending("out").path

        let run = try await BraidCLI.run(["-i", list, "-d", output, "--checksum-file", sums, "--no-fsync"])

        #expect(run.status == .exited(0), "\(run.standardError)")
        #expect(run.standardError.contains("sha-256 verified against checksum-file"), "\(run.standardError)")
        #expect(run.standardError.contains("md5 verified against checksum-file"), "\(run.standardError)")
        #expect(run.standardError.contains("md5 verified against --checksum"), "\(run.standardError)")
        #expect(try Self.other.firstDifference(fromFileAt: output + "/two.bin") == nil)
        #expect(try Self.content.firstDifference(fromFileAt: output + "/three.bin") == nil)
    }

    @Test("--checksum and --checksum-file together, or an unreadable file, are usage errors")
    func checksumFileUsage() async throws {
        let both = try await BraidCLI.run([
            "http://127.0.0.1:9/x", "--checksum", "md5=\(Self.content.hexDigest(.md5))", "--checksum-file", "SUMS",
        ])
        #expect(both.status == .exited(2), "\(both.standardError)")
        let missing = try await BraidCLI.run(["http://127.0.0.1:9/x", "--checksum-file", "/nonexistent/SHA256SUMS"])
        #expect(missing.status == .exited(2), "\(missing.standardError)")
        #expect(missing.standardError.contains("cannot read the checksum file"), "\(missing.standardError)")
    }
}
