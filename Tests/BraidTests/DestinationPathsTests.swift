import BraidTestSupport
import Foundation
import SystemPackage
import Testing

@testable import Braid

/// Where a download lands. A name chosen inside a directory comes from the server or the URL and must never
/// leave that directory.
@Suite("DestinationPaths")
struct DestinationPathsTests {
    static let directory = "/srv/downloads"

    /// Whether `path` is a plain file directly inside `directory`, with no `.`/`..` components.
    static func isDirectlyInside(_ path: FilePath, _ directory: String) -> Bool {
        path.removingLastComponent() == FilePath(directory)
            && path.components.allSatisfy { $0.kind == .regular }
            && path.lastComponent.map { !$0.string.hasPrefix(".") } == true
    }

    /// The final path of `destination`, as it is shown.
    static func final(
        _ destination: DownloadOptions.Destination,
        suggestedFilename: String? = nil,
        url: String = "http://h/f"
    ) throws -> FilePath {
        try DestinationPaths.resolve(destination, suggestedFilename: suggestedFilename, url: url).path
    }

    @Test("An explicit file is used as given, with .part and .braid beside it")
    func explicitFile() throws {
        #expect(try Self.final(.file("out/x.iso"), suggestedFilename: "ignored", url: "http://h/y") == "out/x.iso")
        let paths = DestinationPaths(final: AnchoredPath(FilePath("out/x.iso")))
        #expect(paths.part.path == "out/x.iso.part")
        #expect(paths.manifest.path == "out/x.iso.braid")
    }

    @Test(
        "In a directory, the name comes from the URL's last path component, percent-decoded",
        arguments: [
            ("http://h/pub/file.iso", "file.iso"),
            ("http://h/pub/file.iso?x=1#frag", "file.iso"),
            ("https://h:8443/a/b/c.tar.gz", "c.tar.gz"),
            ("http://h/my%20file.txt", "my file.txt"),
        ]
    )
    func nameFromURL(url: String, name: String) throws {
        #expect(try Self.final(.directory(Self.directory), url: url) == FilePath(Self.directory).appending(name))
    }

    @Test(
        "A URL that names no file gives \"download\"",
        arguments: [
            "http://h", "http://h/", "http://h//", "http://h/..", "http://h/a/..", "http://h/.", "http://h/%2E%2E",
            "http://h/%2F", "http://h/..%2F..%2F",
        ]
    )
    func fallbackName(url: String) throws {
        #expect(try Self.final(.directory(Self.directory), url: url) == FilePath(Self.directory).appending("download"))
    }

    @Test(
        "A hostile URL path never leaves the directory",
        arguments: [
            "http://h/%2F..%2F..%2Fetc%2Fpasswd",
            "http://h/a/%2e%2e%2f%2e%2e%2fetc%2fpasswd",
            "http://h/..%5C..%5Cwin.ini",
            "http://h/%252F..%252Fetc",
            "http://h/../../etc/passwd",
            "http://h/.bashrc",
            "http://h/x%00y",
            "http://h/%0D%0Aevil",
            "not a url at all \u{0}",
        ]
    )
    func hostileURL(url: String) throws {
        let final = try Self.final(.directory(Self.directory), url: url)
        #expect(Self.isDirectlyInside(final, Self.directory), "\(final)")
    }

    @Test("A suggested file name wins over the URL")
    func suggestedWins() throws {
        let final = try Self.final(
            .directory(Self.directory), suggestedFilename: "report.pdf", url: "http://h/download.php")
        #expect(final == "/srv/downloads/report.pdf")
    }

    @Test(
        "A hostile suggested file name never leaves the directory",
        arguments: ["../x", "../../etc/passwd", "/etc/passwd", "..", ".", "", "a/../../b"]
    )
    func hostileSuggestedName(name: String) throws {
        let final = try Self.final(.directory(Self.directory), suggestedFilename: name)
        #expect(Self.isDirectlyInside(final, Self.directory), "\(final)")
    }

    @Test("A place below the directory keeps its subdirectories and name, or takes the server's name")
    func below() throws {
        #expect(
            try Self.final(.below(Self.directory, subdirectory: "a/b", name: "f.bin")) == "/srv/downloads/a/b/f.bin")
        #expect(try Self.final(.below(Self.directory, subdirectory: "", name: "f.bin")) == "/srv/downloads/f.bin")
        #expect(
            try Self.final(.below(Self.directory, subdirectory: "a", name: nil), suggestedFilename: "../r.pdf")
                == "/srv/downloads/a/r.pdf")
    }

    @Test(
        "A place below the directory whose names are not safe as they are is refused before any traffic",
        arguments: [
            ("../x", "f"), ("/etc", "f"), ("a//b", "f"), ("a/./b", "f"), ("-rf", "f"), ("a\u{202E}b", "f"),
            ("", "../f"), ("", "a/f"), ("", "-rf"), ("", "x\u{85}y"), ("", "x\u{9B}y"), ("", "x\u{200B}y"),
            ("", "x\u{2028}y"), ("", " lead"), ("", ""),
        ]
    )
    func belowRefused(subdirectory: String, name: String) {
        let destination = DownloadOptions.Destination.below(Self.directory, subdirectory: subdirectory, name: name)
        let error = #expect(throws: BraidError.self) { try DestinationPaths.checkDestination(destination) }
        #expect(error?.code == .usage)
        #expect(error?.message.unicodeScalars.contains(where: PrintableText.isUnprintable) == false)
    }

    @Test(
        "A missing relative directory passes the check before traffic: it will be created in the working directory",
        arguments: ["missing", "missing/sub", "./missing"]
    )
    func missingRelativeDirectory(name: String) throws {
        let directory = "braid-destination-check-\(UInt64.random(in: 0...UInt64.max))/" + name
        #expect(throws: Never.self) { try DestinationPaths.checkDestination(.directory(directory)) }
        #expect(throws: Never.self) { try DestinationPaths.checkDestination(.file(directory + "/file.bin")) }
        #expect(throws: Never.self) {
            try DestinationPaths.checkDestination(.file(name + "-\(UInt64.random(in: 0...9999))/f"))
        }
    }

    /// The destination `name` in a fresh directory, opened as a download opens it.
    static func opened(_ name: String, in directory: TemporaryDirectory) throws -> DestinationPaths {
        try DestinationPaths.open(
            DestinationPaths.Place(directory: FilePath(directory.url.path), name: name), creating: false)
    }

    @Test(
        "The look that refuses links says whether the manifest's names hold anything; FILE.part does not count",
        arguments: ["", ".part", ".braid", ".braid.tmp", ".braid.reserve"]
    )
    func manifestNamesLooked(suffix: String) throws {
        let directory = try TemporaryDirectory(prefix: "braid-paths")
        defer { directory.remove() }
        if !suffix.isEmpty { try Data("x".utf8).write(to: directory.appending("f.bin" + suffix)) }
        let paths = try Self.opened("f.bin", in: directory)

        #expect(try paths.refuseLinks() == (suffix == "" || suffix == ".part"))
    }

    @Test("A store told its names were empty still removes what it wrote itself, or what it found by loading")
    func knownAbsentStoreRemovesItsOwn() throws {
        let directory = try TemporaryDirectory(prefix: "braid-paths")
        defer { directory.remove() }
        let paths = try Self.opened("f.bin", in: directory)
        let manifest = directory.appending("f.bin.braid").path

        let writer = ManifestStore(path: paths.manifest, knownAbsent: try paths.refuseLinks())
        try writer.save(ManifestTests.valid, durable: false)
        #expect(FileManager.default.fileExists(atPath: manifest))
        let copy = writer
        copy.remove()
        #expect(!FileManager.default.fileExists(atPath: manifest), "a copy of the store knows what it wrote")

        try ManifestStore(path: paths.manifest).save(ManifestTests.valid, durable: false)
        let reader = ManifestStore(path: paths.manifest, knownAbsent: true)
        #expect(try reader.load() != nil)
        reader.remove()
        #expect(!FileManager.default.fileExists(atPath: manifest), "a manifest it loaded is one it knows of")
    }
}
