import Braid
import BraidTestServer
import BraidTestSupport
import Foundation
import Testing

/// Names a server or a served document chooses: the file lands inside the download directory under a safe name,
/// or is refused with a clear error, nothing is written outside, and what `braid` prints shows every control,
/// bidirectional or invisible character as an escape.
@Suite("braid: hostile names from a Metalink and a Content-Disposition")
struct HostileNameTests {
    static let content = TestContent(seed: 61, size: 256 << 10)

    /// A name a hostile party might choose, and what becomes of it when a Metalink names it and when a
    /// `Content-Disposition` does: the safe name the file gets, or nil for a refusal.
    struct Case: Sendable, CustomTestStringConvertible {
        let name: String
        let fromMetalink: String?
        let fromHeader: String
        var testDescription: String { PrintableText.escapingControlCharacters(name) }
    }

    static let cases: [Case] = [
        Case(name: "../x", fromMetalink: nil, fromHeader: "x"),
        Case(name: "/etc/x", fromMetalink: nil, fromHeader: "x"),
        Case(name: "-rf", fromMetalink: "_-rf", fromHeader: "_-rf"),
        Case(name: "invoice\u{202E}fdp.exe", fromMetalink: "invoicefdp.exe", fromHeader: "invoicefdp.exe"),
        Case(name: "c1\u{85}x\u{9B}31m", fromMetalink: "c1_x_31m", fromHeader: "c1_x_31m"),
        Case(name: "zero\u{200B}wi\u{FEFF}dth", fromMetalink: "zerowidth", fromHeader: "zerowidth"),
        Case(name: "line\u{2028}sep", fromMetalink: "linesep", fromHeader: "linesep"),
        Case(name: "sub/-x\u{202E}", fromMetalink: "sub/_-x", fromHeader: "_-x"),
        // Names a later download of `big.iso` would take for its own partial data or manifest, and resume from.
        Case(name: "big.iso.braid", fromMetalink: "big.iso_braid", fromHeader: "big.iso_braid"),
        Case(name: "sub/big.iso.part", fromMetalink: "sub/big.iso_part", fromHeader: "big.iso_part"),
    ]

    /// A scratch directory holding the download directory `inner`, a directory `outside` beside it that nothing
    /// may reach, and the server.
    struct Fixture {
        let server: TestServer
        let scratch: TemporaryDirectory

        init(contentDisposition: String? = nil) throws {
            let faults = contentDisposition.map { [TestServer.Fault.contentDisposition($0)] } ?? []
            server = TestServer(routes: ["/f": .init(content: HostileNameTests.content, faults: faults)])
            try server.start()
            scratch = try TemporaryDirectory(prefix: "braid-hostile-name")
            try FileManager.default.createDirectory(at: scratch.appending("inner"), withIntermediateDirectories: true)
            try FileManager.default.createDirectory(at: scratch.appending("outside"), withIntermediateDirectories: true)
        }

        var inner: String { scratch.appending("inner").path }
        var outside: String { scratch.appending("outside").path }

        /// Every file and directory under `inner`, as relative paths, sorted.
        func files() throws -> [String] {
            let enumerator = FileManager.default.enumerator(atPath: inner)
            return (enumerator?.allObjects as? [String] ?? []).sorted()
        }

        /// Writes a Metalink naming the served file `name`, beside the download directory.
        func metalink(naming name: String) throws -> String {
            let file = TestServer.MetalinkFile(name: name, content: HostileNameTests.content, urls: [server.url("/f")])
            let path = scratch.appending("hostile.meta4").path
            try Data(TestServer.metalinkDocument([file]).bytes).write(to: URL(fileURLWithPath: path))
            return path
        }

        func shutdown() {
            server.shutdown()
            scratch.remove()
        }
    }

    /// Whether `text` would reach a terminal with a control, bidirectional or invisible character in it (other than
    /// the line breaks between its lines).
    static func hasRawUnprintable(_ text: String) -> Bool {
        text.unicodeScalars.contains { $0 != "\n" && isUnprintable($0) }
    }

    /// C0, DEL, C1, the bidirectional controls, the zero-width characters and the line and paragraph separators.
    static func isUnprintable(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.value {
        case 0x00...0x1F, 0x7F...0x9F, 0x202A...0x202E, 0x2066...0x2069, 0x200E, 0x200F, 0x061C: true
        case 0x200B...0x200D, 0x2060, 0xFEFF, 0x2028, 0x2029: true
        default: false
        }
    }

    static func expectSaved(_ fixture: Fixture, as safe: String, _ run: ChildProcess.Completed) throws {
        #expect(run.status == .exited(0), "\(run.standardError)")
        let path = fixture.inner + "/" + safe
        let files = try fixture.files()
        #expect(try content.firstDifference(fromFileAt: path) == nil, "\(files)")
        let expected = safe.contains("/") ? [String(safe.split(separator: "/")[0]), safe] : [safe]
        #expect(files == expected)
        #expect(try FileManager.default.contentsOfDirectory(atPath: fixture.outside).isEmpty)
        #expect(!hasRawUnprintable(run.standardError), "\(PrintableText.escapingControlCharacters(run.standardError))")
    }

    @Test("a Metalink's name: made safe inside the directory, or refused before any request", arguments: cases)
    func metalink(_ hostile: Case) async throws {
        let fixture = try Fixture()
        defer { fixture.shutdown() }
        let document = try fixture.metalink(naming: hostile.name)

        let run = try await BraidCLI.run([document, "-d", fixture.inner])

        if let safe = hostile.fromMetalink {
            try Self.expectSaved(fixture, as: safe, run)
        } else {
            #expect(run.status == .exited(2), "\(run.standardError)")
            #expect(run.standardError.contains("names a file by a path that"), "\(run.standardError)")
            #expect(try fixture.files().isEmpty)
            #expect(fixture.server.requestLog.isEmpty)
            #expect(!Self.hasRawUnprintable(run.standardError))
        }
        #expect(try FileManager.default.contentsOfDirectory(atPath: fixture.outside).isEmpty)
    }

    @Test(
        "a Content-Disposition name: made safe inside the directory",
        arguments: cases
    )
    func contentDisposition(_ hostile: Case) async throws {
        let encoded = hostile.name.utf8.map { String(format: "%%%02X", $0) }.joined()
        let fixture = try Fixture(contentDisposition: "attachment; filename*=UTF-8''\(encoded)")
        defer { fixture.shutdown() }

        let run = try await BraidCLI.run([fixture.server.url("/f"), "-d", fixture.inner])

        try Self.expectSaved(fixture, as: hostile.fromHeader, run)
    }

    @Test("a Metalink's subdirectory that is a link out of the directory is refused, and nothing is written there")
    func metalinkThroughLink() async throws {
        let fixture = try Fixture()
        defer { fixture.shutdown() }
        try FileManager.default.createSymbolicLink(atPath: fixture.inner + "/sub", withDestinationPath: fixture.outside)
        let document = try fixture.metalink(naming: "sub/x.bin")

        let run = try await BraidCLI.run([document, "-d", fixture.inner])

        #expect(run.status == .exited(3), "\(run.standardError)")
        #expect(run.standardError.contains("\(fixture.inner)/sub is a symbolic link"), "\(run.standardError)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: fixture.outside).isEmpty)
        #expect(try fixture.files() == ["sub"])
    }

    @Test("a Content-Disposition naming a subdirectory that is a link out gets only its last component, inside")
    func contentDispositionThroughLink() async throws {
        let fixture = try Fixture(contentDisposition: "attachment; filename=\"sub/x.bin\"")
        defer { fixture.shutdown() }
        try FileManager.default.createSymbolicLink(atPath: fixture.inner + "/sub", withDestinationPath: fixture.outside)

        let run = try await BraidCLI.run([fixture.server.url("/f"), "-d", fixture.inner])

        #expect(run.status == .exited(0), "\(run.standardError)")
        #expect(try Self.content.firstDifference(fromFileAt: fixture.inner + "/x.bin") == nil)
        #expect(try FileManager.default.contentsOfDirectory(atPath: fixture.outside).isEmpty)
    }

    @Test("the user's own output path is printed escaped too, and --json stays exact JSON")
    func userPathPrinted() async throws {
        let fixture = try Fixture()
        defer { fixture.shutdown() }
        let output = fixture.inner + "/own\u{1B}]0;title\u{7}\u{202E}.bin"

        let run = try await BraidCLI.run([fixture.server.url("/f"), "-o", output])
        #expect(run.status == .exited(0), "\(run.standardError)")
        #expect(
            !Self.hasRawUnprintable(run.standardError), "\(PrintableText.escapingControlCharacters(run.standardError))")
        #expect(run.standardError.contains("own\\x1B]0;title\\x07\\u{202E}.bin"), "\(run.standardError)")
        #expect(try Self.content.firstDifference(fromFileAt: output) == nil)

        let json = try await BraidCLI.run([fixture.server.url("/f"), "-o", output + "2", "--json"])
        #expect(json.status == .exited(0), "\(json.standardError)")
        let paths = json.standardOutput.split(separator: "\n").compactMap { line -> String? in
            let object = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any]
            return object?["path"] as? String
        }
        #expect(!paths.isEmpty && paths.allSatisfy { $0 == output + "2" }, "\(json.standardOutput)")
    }
}
