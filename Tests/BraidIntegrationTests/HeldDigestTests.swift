import BraidTestServer
import BraidTestSupport
import Foundation
import Testing

/// A file is held to the strongest digest ever given for it (issue 26, "Digest authority"): a `--checksum` that
/// failed binds every later run of the same download, whatever the server sends then, and a run that contradicts
/// it is refused before any traffic.
@Suite("the digest a file is held to, across runs")
struct HeldDigestTests {
    static let content = TestContent(seed: 2626, size: 2 << 20)
    /// The bytes the server always alters: inside one segment of a 4-connection plan.
    static let corrupted: Range<UInt64> = 700_000..<700_100
    static let good = content.hexDigest(.sha256)

    /// A server that always sends ``corrupted`` altered at `/f`, a scratch directory, and the first run's
    /// `--checksum` of the right bytes, which fails and keeps the data.
    struct Harness {
        let server: TestServer
        let directory: TemporaryDirectory
        var output: String { directory.appending("out.bin").path }

        init() throws {
            server = TestServer(routes: ["/f": Self.route(extra: [])])
            try server.start()
            directory = try TemporaryDirectory(prefix: "braid-held")
        }

        static func route(extra: [TestServer.Fault]) -> TestServer.Route {
            .init(
                content: HeldDigestTests.content,
                faults: [.corrupt(bytes: HeldDigestTests.corrupted, once: false)] + extra)
        }

        func run(_ extra: [String]) async throws -> ChildProcess.Completed {
            try await BraidCLI.run([server.url("/f"), "-n", "4", "-o", output, "--no-fsync"] + extra)
        }

        /// The first run: `--checksum` of the right bytes, exit 6, the bad data kept with its manifest.
        func failFirst() async throws {
            let first = try await run(["--checksum", "sha-256=\(HeldDigestTests.good)"])
            #expect(first.status == .exited(6), "\(first.standardError)")
            #expect(first.standardError.contains("run again with --repair"), "\(first.standardError)")
            #expect(exists(".part") && exists(".braid") && !exists(""))
        }

        func exists(_ suffix: String) -> Bool {
            FileManager.default.fileExists(atPath: output + suffix)
        }

        /// The manifest's digest fields, as an outside observer reads them.
        func recordedDigest() -> (hex: String?, source: String?) {
            guard let data = FileManager.default.contents(atPath: output + ".braid"),
                let object = try? JSONSerialization.jsonObject(with: data) as? [String: Any]
            else { return (nil, nil) }
            return (object["digestHex"] as? String, object["digestSource"] as? String)
        }

        /// Requests the server has answered so far.
        var requestCount: Int {
            #expect(server.waitUntilIdle())
            return server.requestLog.count
        }

        func shutdown() {
            server.shutdown()
            directory.remove()
        }
    }

    /// What the server does on the reruns, besides sending a `Content-MD5` of the bad bytes it serves.
    enum Rerun: String, CaseIterable, Sendable {
        /// Nothing else: the data is resumed as complete and verified again.
        case sameFile = "the same file"
        /// A new `ETag`: the data is discarded as belonging to another file, and fetched again.
        case newEntityTag = "a new ETag"
        /// No length and no ranges (chunked): the download cannot resume and is one stream, every time.
        case cannotResume = "no ranges"

        var faults: [TestServer.Fault] {
            switch self {
            case .sameFile: []
            case .newEntityTag: [.entityTag("\"another-tag\"")]
            case .cannotResume: [.chunked]
            }
        }
    }

    @Test(
        "after a --checksum mismatch, reruns without it (plain, then --repair) exit 6 though the server's Content-MD5 matches the bad bytes",
        arguments: Rerun.allCases)
    func rerunHoldsToRecordedChecksum(_ rerun: Rerun) async throws {
        let harness = try Harness()
        defer { harness.shutdown() }
        try await harness.failFirst()
        #expect(harness.recordedDigest().hex == Self.good && harness.recordedDigest().source == "--checksum")
        let badMD5 = try await MD5Digest.of(fileAt: URL(fileURLWithPath: harness.output + ".part"))
        harness.server.setRoute(
            "/f",
            Harness.route(extra: rerun.faults + [.rawHeader(name: "Content-MD5", value: Array(badMD5.base64.utf8))]))

        for extra in [[], ["--repair"], []] {
            let again = try await harness.run(extra)

            #expect(again.status == .exited(6), "\(rerun.rawValue) \(extra): \(again.standardError)")
            #expect(again.standardError.contains("sha-256 mismatch"), "\(again.standardError)")
            #expect(again.standardError.contains("(from --checksum)"), "\(again.standardError)")
            #expect(!harness.exists(""), "\(rerun.rawValue) \(extra): no file at the final name")
            #expect(harness.exists(".braid"), "the record of the digest is kept")
            #expect(harness.recordedDigest().hex == Self.good && harness.recordedDigest().source == "--checksum")
            if rerun != .cannotResume {
                #expect(harness.exists(".part"), "the data is kept for a repair")
            }
        }
    }

    @Test(
        "a server digest of the recorded one's algorithm that disagrees is reported as overruled, and the run exits 6")
    func serverDigestOverruled() async throws {
        let harness = try Harness()
        defer { harness.shutdown() }
        let first = try await harness.run(["--checksum", "md5=\(Self.content.hexDigest(.md5))"])
        #expect(first.status == .exited(6), "\(first.standardError)")
        let badMD5 = try await MD5Digest.of(fileAt: URL(fileURLWithPath: harness.output + ".part"))
        harness.server.setRoute(
            "/f", Harness.route(extra: [.rawHeader(name: "Content-MD5", value: Array(badMD5.base64.utf8))]))

        let again = try await harness.run([])

        #expect(again.status == .exited(6), "\(again.standardError)")
        #expect(
            again.standardError.contains(
                "the md5 from Content-MD5 (\(badMD5.hex)) disagrees with the one from --checksum "
                    + "(\(Self.content.hexDigest(.md5))); the file is held to the latter"), "\(again.standardError)")
        #expect(
            again.standardError.contains("md5 mismatch: expected \(Self.content.hexDigest(.md5)) (from --checksum)"))
        #expect(!harness.exists("") && harness.exists(".part"))
    }

    @Test("a rerun whose --checksum contradicts the recorded one is refused with exit 7 before any request")
    func contradictingChecksumRefusedBeforeTraffic() async throws {
        let harness = try Harness()
        defer { harness.shutdown() }
        try await harness.failFirst()
        let badSHA256 = try await Self.sha256(of: harness.output + ".part")
        let before = harness.requestCount

        let refused = try await harness.run(["--checksum", "sha-256=\(badSHA256)"])

        #expect(refused.status == .exited(7), "\(refused.standardError)")
        #expect(refused.standardError.contains("contradicts"), "\(refused.standardError)")
        #expect(refused.standardError.contains("use --force to discard it and start over"), "\(refused.standardError)")
        #expect(refused.standardError.split(separator: "\n").count == 1, "one line: \(refused.standardError)")
        #expect(harness.requestCount == before, "no request at all")
        #expect(harness.exists(".part") && harness.recordedDigest().hex == Self.good, "nothing changed")

        let forced = try await harness.run(["--checksum", "sha-256=\(badSHA256)", "--force"])

        #expect(forced.status == .exited(0), "--force discards the old download: \(forced.standardError)")
        #expect(try await Self.sha256(of: harness.output) == badSHA256)
    }

    @Test("with -d the name comes from the server: the contradiction is refused after the probe, before any GET")
    func contradictingChecksumRefusedAfterProbe() async throws {
        let harness = try Harness()
        defer { harness.shutdown() }
        let directory = harness.directory.appending("d").path
        let arguments = [harness.server.url("/f"), "-n", "4", "-d", directory, "--no-fsync"]
        let first = try await BraidCLI.run(arguments + ["--checksum", "sha-256=\(Self.good)"])
        #expect(first.status == .exited(6), "\(first.standardError)")
        let before = harness.requestCount

        let refused = try await BraidCLI.run(arguments + ["--checksum", "md5=\(Self.content.hexDigest(.md5))"])

        #expect(refused.status == .exited(7), "\(refused.standardError)")
        #expect(refused.standardError.contains("contradicts"), "\(refused.standardError)")
        let after = harness.server.requestLog.dropFirst(before)
        #expect(after.allSatisfy { $0.method == "HEAD" }, "only the probe: \(after.map(\.method))")
    }

    @Test(
        "a Metalink's hash is recorded as the Metalink's, binds a plain rerun, and a contradicting --checksum is refused"
    )
    func metalinkRecordedAsMetalink() async throws {
        let harness = try Harness()
        defer { harness.shutdown() }
        let document = TestServer.metalinkDocument([
            .init(name: "out.bin", content: Self.content, urls: [harness.server.url("/f")])
        ])
        let metalink = harness.directory.appending("f.meta4")
        try Data(document.bytes).write(to: metalink)
        let arguments = [metalink.path, "-n", "4", "-o", harness.output, "--no-fsync"]

        let first = try await BraidCLI.run(arguments)
        #expect(first.status == .exited(6), "\(first.standardError)")
        #expect(harness.recordedDigest().hex == Self.good && harness.recordedDigest().source == "metalink")
        let badMD5 = try await MD5Digest.of(fileAt: URL(fileURLWithPath: harness.output + ".part"))
        harness.server.setRoute(
            "/f", Harness.route(extra: [.rawHeader(name: "Content-MD5", value: Array(badMD5.base64.utf8))]))

        let plain = try await harness.run([])
        #expect(plain.status == .exited(6), "the URL alone, without the Metalink: \(plain.standardError)")
        #expect(plain.standardError.contains("(from metalink)"), "\(plain.standardError)")

        let badSHA256 = try await Self.sha256(of: harness.output + ".part")
        let before = harness.requestCount
        let refused = try await BraidCLI.run(arguments + ["--checksum", "sha-256=\(badSHA256)"])
        #expect(refused.status == .exited(7), "\(refused.standardError)")
        #expect(harness.requestCount == before)
        #expect(!harness.exists(""))
    }

    @Test("-N: a local copy as new as the server's but not matching --checksum is downloaded again")
    func timestampingChecksTheCopy() async throws {
        let server = TestServer(routes: ["/f": .init(content: Self.content)])
        try server.start()
        let directory = try TemporaryDirectory(prefix: "braid-held")
        defer {
            server.shutdown()
            directory.remove()
        }
        let path = directory.appending("f").path
        var planted = Self.content.bytes(in: 0..<Self.content.size)
        planted[1000] ^= 0xFF
        try Data(planted).write(to: URL(fileURLWithPath: path))
        // Newer than the server's file and of the same length: -N alone would keep it.
        try FileManager.default.setAttributes(
            [.modificationDate: Date(timeIntervalSince1970: Double(Self.content.lastModifiedSecondsSince1970 + 3600))],
            ofItemAtPath: path)

        let run = try await BraidCLI.run([server.url("/f"), "-N", "-o", path, "--checksum", "sha-256=\(Self.good)"])

        #expect(run.status == .exited(0), "\(run.standardError)")
        #expect(run.standardError.contains("does not match its sha-256"), "\(run.standardError)")
        #expect(try Self.content.firstDifference(fromFileAt: path) == nil)
    }

    /// The SHA-256 of the file at `path`, from `openssl`, as lowercase hex.
    static func sha256(of path: String) async throws -> String {
        let result = try await ChildProcess.run("openssl", ["dgst", "-sha256", "-r", path])
        #expect(result.status.isSuccess, "\(result.standardError)")
        return String(result.standardOutput.prefix(64))
    }
}
