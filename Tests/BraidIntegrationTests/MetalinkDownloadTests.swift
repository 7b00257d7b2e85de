import BraidTestServer
import BraidTestSupport
import Foundation
import Testing

/// `braid FILE.meta4`, `braid --metalink URL`, and a URL served as `application/metalink4+xml`: the files a
/// Metalink describes are fetched from its mirrors and verified against its hash.
@Suite("braid: Metalink downloads")
struct MetalinkDownloadTests {
    static let content = TestContent(seed: 41, size: 6 << 20)
    static let second = TestContent(seed: 42, size: 1 << 20)

    /// A server with the file on two mirror paths (throttled, so that both are used), and a scratch directory.
    struct Fixture {
        let server: TestServer
        let directory: TemporaryDirectory

        init() throws {
            let throttle: [TestServer.Fault] = [.throttle(bytesPerSecond: 4 << 20)]
            server = TestServer(routes: [
                "/mirror-a/image.iso": .init(content: MetalinkDownloadTests.content, faults: throttle),
                "/mirror-b/image.iso": .init(content: MetalinkDownloadTests.content, faults: throttle),
                "/mirror-a/notes.txt": .init(content: MetalinkDownloadTests.second),
            ])
            try server.start()
            directory = try TemporaryDirectory(prefix: "braid-metalink")
        }

        /// The image on both mirrors, with piece hashes.
        var image: TestServer.MetalinkFile {
            TestServer.MetalinkFile(
                name: "image.iso",
                content: MetalinkDownloadTests.content,
                urls: [server.url("/mirror-a/image.iso"), server.url("/mirror-b/image.iso")],
                pieceLength: 1 << 20
            )
        }

        /// Writes a document describing `files` into the directory and returns its path.
        func write(_ files: [TestServer.MetalinkFile], as name: String = "image.meta4") throws -> String {
            let url = directory.appending(name)
            try Data(TestServer.metalinkDocument(files).bytes).write(to: url)
            return url.path
        }

        func path(_ name: String) -> String { directory.appending(name).path }

        /// GET requests answered for `path`.
        func gets(_ path: String) -> Int {
            server.waitUntilIdle()
            return server.requestLog.filter { $0.target == path && $0.method == "GET" }.count
        }

        func shutdown() {
            server.shutdown()
            directory.remove()
        }
    }

    @Test("a piece corrupted on one mirror is checked against the piece hashes and fetched from the other")
    func pieceFromOtherMirror() async throws {
        let fixture = try Fixture()
        defer { fixture.shutdown() }
        // Mirror A corrupts bytes of the fourth 1 MiB piece in every response; mirror B serves it right.
        let corrupted: Range<UInt64> = (3 << 20) + 100..<(3 << 20) + 200
        fixture.server.setRoute(
            "/mirror-a/image.iso", .init(content: Self.content, faults: [.corrupt(bytes: corrupted, once: false)]))
        let document = try fixture.write([fixture.image])

        // One connection: every piece goes to mirror A (priority 1) first.
        let run = try await BraidCLI.run([document, "-d", fixture.directory.url.path, "-n", "1", "--no-fsync"])

        #expect(run.status == .exited(0), "\(run.standardError)")
        #expect(try Self.content.firstDifference(fromFileAt: fixture.path("image.iso")) == nil)
        #expect(run.standardError.contains("sha-256 verified piece by piece (6 pieces)"), "\(run.standardError)")
        fixture.server.waitUntilIdle()
        let fromB = fixture.server.requestLog.filter { $0.target == "/mirror-b/image.iso" && $0.method == "GET" }
        #expect(fromB.map(\.range) == ["bytes=3145728-4194303"], "the bad piece alone, from mirror B")
    }

    @Test("braid FILE.meta4 downloads from both mirrors and verifies the Metalink's SHA-256")
    func localFile() async throws {
        let fixture = try Fixture()
        defer { fixture.shutdown() }
        let document = try fixture.write([fixture.image])

        let run = try await BraidCLI.run([document, "-d", fixture.directory.url.path, "-n", "4", "--no-fsync"])

        #expect(run.status == .exited(0), "\(run.standardError)")
        #expect(try Self.content.firstDifference(fromFileAt: fixture.path("image.iso")) == nil)
        #expect(run.standardError.contains("sha-256 verified piece by piece (6 pieces)"), "\(run.standardError)")
        #expect(fixture.gets("/mirror-a/image.iso") >= 1)
        #expect(fixture.gets("/mirror-b/image.iso") >= 1)
    }

    @Test("a server whose file is not the size the Metalink gives is refused before it is fetched, with no hash too")
    func wrongSize() async throws {
        let fixture = try Fixture()
        defer { fixture.shutdown() }
        // No hash: only the size can tell. The server's file is 6 MiB; the document says 7 MiB.
        let xml = """
            <?xml version="1.0" encoding="UTF-8"?>
            <metalink xmlns="urn:ietf:params:xml:ns:metalink">
              <file name="image.iso"><size>\(7 << 20)</size><url>\(fixture.server.url("/mirror-a/image.iso"))</url></file>
            </metalink>
            """
        let document = fixture.directory.appending("image.meta4")
        try Data(xml.utf8).write(to: document)

        let run = try await BraidCLI.run([document.path, "-d", fixture.directory.url.path, "--no-fsync"])

        #expect(run.status == .exited(6), "\(run.standardError)")
        #expect(
            run.standardError.contains("serves 6291456 bytes, not the 7340032 its Metalink gives"),
            "\(run.standardError)")
        for name in ["image.iso", "image.iso.part", "image.iso.braid"] {
            #expect(!FileManager.default.fileExists(atPath: fixture.path(name)), "\(name) left")
        }
        fixture.server.waitUntilIdle()
        #expect(fixture.server.totalBodyBytesSent < 6 << 20, "the file was not fetched whole")
    }

    @Test("-o names the one file a Metalink describes")
    func outputName() async throws {
        let fixture = try Fixture()
        defer { fixture.shutdown() }
        let document = try fixture.write([fixture.image])

        let run = try await BraidCLI.run([document, "-o", fixture.path("renamed.iso"), "--no-fsync"])

        #expect(run.status == .exited(0), "\(run.standardError)")
        #expect(try Self.content.firstDifference(fromFileAt: fixture.path("renamed.iso")) == nil)
    }

    @Test("--metalink URL reads the document whatever its Content-Type")
    func metalinkFlag() async throws {
        let fixture = try Fixture()
        defer { fixture.shutdown() }
        var document = TestServer.metalinkDocument([fixture.image])
        document.contentType = "application/octet-stream"
        fixture.server.setRoute("/get/image", .init(document: document))
        let output = fixture.directory.appending("out")

        let run = try await BraidCLI.run([
            "--metalink", fixture.server.url("/get/image"), "-d", output.path, "--no-fsync",
        ])

        #expect(run.status == .exited(0), "\(run.standardError)")
        #expect(try Self.content.firstDifference(fromFileAt: output.appendingPathComponent("image.iso").path) == nil)
        #expect(run.standardError.contains("sha-256 verified piece by piece (6 pieces)"), "\(run.standardError)")
    }

    @Test("a URL served as application/metalink4+xml is followed: the document is kept, its file downloaded")
    func contentType() async throws {
        let fixture = try Fixture()
        defer { fixture.shutdown() }
        fixture.server.setRoute("/image.iso.meta4", .init(document: TestServer.metalinkDocument([fixture.image])))

        let run = try await BraidCLI.run([
            fixture.server.url("/image.iso.meta4"), "-d", fixture.directory.url.path, "--no-fsync",
        ])

        #expect(run.status == .exited(0), "\(run.standardError)")
        #expect(try Self.content.firstDifference(fromFileAt: fixture.path("image.iso")) == nil)
        #expect(FileManager.default.fileExists(atPath: fixture.path("image.iso.meta4")))
    }

    @Test("a Metalink of two files runs as a list: both downloaded, a subdirectory created, a JSON summary")
    func twoFiles() async throws {
        let fixture = try Fixture()
        defer { fixture.shutdown() }
        let notes = TestServer.MetalinkFile(
            name: "docs/notes.txt", content: Self.second, urls: [fixture.server.url("/mirror-a/notes.txt")])
        let document = try fixture.write([fixture.image, notes], as: "release.metalink")

        let run = try await BraidCLI.run([document, "-d", fixture.directory.url.path, "--json", "--no-fsync"])

        #expect(run.status == .exited(0), "\(run.standardError)")
        #expect(try Self.content.firstDifference(fromFileAt: fixture.path("image.iso")) == nil)
        #expect(try Self.second.firstDifference(fromFileAt: fixture.path("docs/notes.txt")) == nil)
        let events = try JSONEvents(run.standardOutput)
        #expect(events.named("done").count == 2)
        let verified = events.named("verified")
        #expect(verified.count == 2)
        // The image has piece hashes, which stand for its whole-file hash; the notes have only the latter.
        let image = verified.first { ($0["path"] as? String)?.hasSuffix("image.iso") == true }
        #expect(image?["source"] as? String == "pieces" && JSONEvents.integer(image?["pieces"]) == 6, "\(verified)")
        let text = verified.first { ($0["path"] as? String)?.hasSuffix("notes.txt") == true }
        #expect(text?["source"] as? String == "metalink" && text?["hex"] as? String == Self.second.hexDigest(.sha256))
        let summary = events.named("summary").first
        #expect(JSONEvents.integer(summary?["succeeded"]) == 2, "\(summary ?? [:])")
    }

    @Test("a Metalink naming a file outside the directory is refused with exit 2 before any request")
    func traversal() async throws {
        let fixture = try Fixture()
        defer { fixture.shutdown() }
        var escape = fixture.image
        escape.name = "../escape.iso"
        let document = try fixture.write([escape])

        let run = try await BraidCLI.run([document, "-d", fixture.directory.url.path])

        #expect(run.status == .exited(2), "\(run.standardError)")
        #expect(run.standardError.contains("'..'"), "\(run.standardError)")
        #expect(fixture.gets("/mirror-a/image.iso") == 0)
    }

    @Test("a .meta4 argument that does not exist is a missing file (exit 2), not a host name to look up")
    func missingFile() async throws {
        let fixture = try Fixture()
        defer { fixture.shutdown() }

        let run = try await BraidCLI.run([fixture.path("absent.meta4"), "-d", fixture.directory.url.path])

        #expect(run.status == .exited(2), "\(run.standardError)")
        #expect(run.standardError.contains("cannot read the Metalink file"), "\(run.standardError)")
    }

    @Test(
        "a malformed Metalink is refused in one line of our own: libxml2 prints nothing to stderr",
        arguments: [
            "<metalink xmlns=\"urn:ietf:params:xml:ns:metalink\"><file name=\"a\">",
            "<metalink xmlns=\"urn:ietf:params:xml:ns:metalink\"><file name=\"&undeclared;\"/></metalink>",
            "<metalink xmlns=\"urn:ietf:params:xml:ns:metalink\"><file name=\"a\"></url></metalink>",
            "<metalink xmlns=\"urn:ietf:params:xml:ns:metalink\"><file name=\"a\"/></metalink><trailing/>",
            // Deeper than libxml2's limit of 256 levels.
            "<metalink xmlns=\"urn:ietf:params:xml:ns:metalink\">" + String(repeating: "<a>", count: 300),
        ]
    )
    func malformedIsQuiet(document: String) async throws {
        let fixture = try Fixture()
        defer { fixture.shutdown() }
        let path = fixture.path("bad.meta4")
        try Data(document.utf8).write(to: URL(fileURLWithPath: path))

        let run = try await BraidCLI.run([path, "-d", fixture.directory.url.path])

        #expect(run.status == .exited(2), "\(run.standardError)")
        let lines = run.standardError.split(separator: "\n")
        #expect(lines.count == 1 && lines[0].contains("not well-formed XML (line "), "\(run.standardError)")
    }
}
