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

    @Test("An explicit file is used as given, with .part and .braid beside it")
    func explicitFile() {
        let paths = DestinationPaths.resolve(.file("out/x.iso"), suggestedFilename: "ignored", url: "http://h/y")
        #expect(paths.final == "out/x.iso")
        #expect(paths.part == "out/x.iso.part")
        #expect(paths.manifest == "out/x.iso.braid")
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
    func nameFromURL(url: String, name: String) {
        let paths = DestinationPaths.resolve(.directory(Self.directory), suggestedFilename: nil, url: url)
        #expect(paths.final == FilePath(Self.directory).appending(name))
        #expect(paths.part.string == paths.final.string + ".part")
        #expect(paths.manifest.string == paths.final.string + ".braid")
    }

    @Test(
        "A URL that names no file gives \"download\"",
        arguments: [
            "http://h", "http://h/", "http://h//", "http://h/..", "http://h/a/..", "http://h/.", "http://h/%2E%2E",
            "http://h/%2F", "http://h/..%2F..%2F",
        ]
    )
    func fallbackName(url: String) {
        let paths = DestinationPaths.resolve(.directory(Self.directory), suggestedFilename: nil, url: url)
        #expect(paths.final == FilePath(Self.directory).appending("download"))
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
    func hostileURL(url: String) {
        let paths = DestinationPaths.resolve(.directory(Self.directory), suggestedFilename: nil, url: url)
        #expect(Self.isDirectlyInside(paths.final, Self.directory), "\(paths.final)")
    }

    @Test("A suggested file name wins over the URL")
    func suggestedWins() {
        let paths = DestinationPaths.resolve(
            .directory(Self.directory), suggestedFilename: "report.pdf", url: "http://h/download.php")
        #expect(paths.final == "/srv/downloads/report.pdf")
    }

    @Test(
        "A hostile suggested file name never leaves the directory",
        arguments: ["../x", "../../etc/passwd", "/etc/passwd", "..", ".", "", "a/../../b"]
    )
    func hostileSuggestedName(name: String) {
        let paths = DestinationPaths.resolve(.directory(Self.directory), suggestedFilename: name, url: "http://h/f")
        #expect(Self.isDirectlyInside(paths.final, Self.directory), "\(paths.final)")
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
}
