import Foundation
import SystemPackage
import Testing

@testable import Braid

/// Metalink v4 (RFC 5854): what a document describes, and every way a hostile one is refused before any traffic.
@Suite("Metalink")
struct MetalinkTests {
    static let sha256 = "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
    static let md5 = "900150983cd24fb0d6963f7d28e17f72"
    static let piece1 = String(repeating: "11", count: 32)
    static let piece2 = String(repeating: "22", count: 32)
    static let piece3 = String(repeating: "33", count: 32)

    /// A document as openSUSE's mirror network publishes them: a generator, a publisher, two files, whole-file and
    /// piece hashes, URLs with priorities and locations, a torrent, and another namespace's extension.
    static let document = """
        <?xml version="1.0" encoding="UTF-8"?>
        <metalink xmlns="urn:ietf:params:xml:ns:metalink" xmlns:mm="urn:example:mirrormanager">
          <generator>MirrorBrain/2.19.0</generator>
          <origin dynamic="true">http://download.example.org/distribution/image.iso.meta4</origin>
          <published>2024-03-01T10:00:00Z</published>
          <file name="image.iso">
            <size>2500</size>
            <hash type="md5">\(md5)</hash>
            <hash type="sha-256">\(sha256)</hash>
            <hash type="whirlpool">00</hash>
            <pieces length="1000" type="sha-256">
              <hash>\(piece1)</hash>
              <hash>\(piece2)</hash>
              <hash>\(piece3)</hash>
            </pieces>
            <mm:stats>ignored</mm:stats>
            <url location="us">http://us.example.org/image.iso</url>
            <url location="de" priority="1">https://de.example.org/image.iso</url>
            <url location="fr" priority="2">http://fr.example.org/image.iso</url>
            <url priority="2">ftp://ftp.example.org/image.iso</url>
            <url priority="3">rsync://rsync.example.org/image.iso</url>
            <metaurl mediatype="torrent" priority="1">http://example.org/image.iso.torrent</metaurl>
          </file>
          <file name="docs/README.txt">
            <url>https://example.org/docs/README.txt</url>
          </file>
        </metalink>
        """

    func parse(_ text: String) throws(BraidError) -> Metalink {
        try Metalink(parsing: Array(text.utf8), source: "test.meta4")
    }

    func refusal(_ text: String) -> String? {
        do {
            _ = try parse(text)
            return nil
        } catch {
            #expect(error.code == .usage && error.option == .metalink)
            return error.message
        }
    }

    /// A minimal document around one `<file>`'s content.
    static func wrapping(_ file: String, name: String = "f.bin") -> String {
        "<metalink xmlns=\"urn:ietf:params:xml:ns:metalink\"><file name=\"\(name)\">\(file)</file></metalink>"
    }

    @Test("A real-world document: files, sizes, known hashes, pieces and URLs by priority")
    func realWorld() throws {
        let metalink = try parse(Self.document)
        #expect(metalink.files.map(\.name) == ["image.iso", "docs/README.txt"])
        let image = metalink.files[0]
        #expect(image.size == 2500)
        #expect(image.hashes.map(\.algorithm) == [.md5, .sha256])
        #expect(image.hashes.allSatisfy { $0.source == .metalink })
        #expect(image.hashes[1].hex == Self.sha256)
        #expect(image.pieces?.algorithm == .sha256 && image.pieces?.pieceLength == 1000)
        #expect(image.pieces?.digests.map(ExpectedDigest.encodeHex) == [Self.piece1, Self.piece2, Self.piece3])
        #expect(
            image.urls == [
                Metalink.Mirror(url: "https://de.example.org/image.iso", priority: 1, location: "de"),
                Metalink.Mirror(url: "http://fr.example.org/image.iso", priority: 2, location: "fr"),
                Metalink.Mirror(url: "ftp://ftp.example.org/image.iso", priority: 2),
                Metalink.Mirror(url: "http://us.example.org/image.iso", priority: 999_999, location: "us"),
            ])
        let readme = metalink.files[1]
        #expect(readme.size == nil && readme.hashes.isEmpty && readme.pieces == nil)
        #expect(readme.urls.map(\.url) == ["https://example.org/docs/README.txt"])
    }

    @Test("A file becomes a download: first URL by priority, the other http(s) ones as mirrors, its hashes")
    func download() throws {
        let image = try parse(Self.document).files[0]
        var base = DownloadOptions()
        base.destination = .directory("/tmp/out")
        let (url, options) = try image.download(options: base, from: .local)
        #expect(url == "https://de.example.org/image.iso")
        #expect(options.mirrors == ["http://fr.example.org/image.iso", "http://us.example.org/image.iso"])
        #expect(options.metalinkDigests == image.hashes && options.expectedDigest == nil)
        #expect(options.metalinkDigests.allSatisfy { $0.source == .metalink })
        #expect(options.pieceHashes == image.pieces)
        #expect(options.destination == .below("/tmp/out", subdirectory: "", name: "image.iso"))
    }

    @Test("A location preference puts that country's URLs first; a user's checksum stays beside the hashes")
    func downloadPreferences() throws {
        let image = try parse(Self.document).files[0]
        var base = DownloadOptions()
        base.destination = .file("mine.iso")
        base.expectedDigest = try ExpectedDigest(checksumArgument: "md5=\(Self.md5)")
        let (url, options) = try image.download(options: base, from: .local, preferringLocations: ["US"])
        #expect(url == "http://us.example.org/image.iso")
        #expect(options.mirrors == ["https://de.example.org/image.iso", "http://fr.example.org/image.iso"])
        #expect(options.expectedDigest?.source == .user && options.metalinkDigests == image.hashes)
        #expect(options.destination == .file("mine.iso"))
    }

    @Test("A local document's URLs are the user's; a served one's go without credentials, unless on the origin asked")
    func downloadProvenance() throws {
        let image = try parse(Self.document).files[0]
        #expect(try image.download(options: DownloadOptions(), from: .local).options.credentialScope == nil)
        let requested = "https://user:pw@download.example.org/image.iso.meta4"
        let served = try image.download(options: DownloadOptions(), from: .served(for: requested)).options
        let scope = try #require(served.credentialScope)
        for url in image.fetchableURLs() {
            #expect(CredentialScope.Credential.allCases.allSatisfy { !scope.permits($0, to: url) }, "\(url)")
        }
        #expect(scope.permits(.header, to: "https://download.example.org/image.iso"))
        var chosen = DownloadOptions()
        chosen.credentialScope = CredentialScope(userNamed: ["https://us.example.org/"])
        let kept = try image.download(options: chosen, from: .served(for: requested)).options.credentialScope
        #expect(kept == chosen.credentialScope)
    }

    @Test("A file with only ftp and torrent URLs cannot be downloaded")
    func noFetchableURL() throws {
        let metalink = try parse(Self.wrapping("<url>ftp://example.org/f.bin</url>"))
        #expect(throws: BraidError.self) { try metalink.files[0].download(options: DownloadOptions(), from: .local) }
    }

    @Test("A URL no download would take (no host, a port that is none) is left out as an ftp one is")
    func unfetchableURLsLeftOut() throws {
        let metalink = try parse(
            Self.wrapping(
                "<url>http:///f.bin</url><url>http://b.example.org:999999/f.bin</url>"
                    + "<url>https://c.example.org/f.bin</url>"))
        let (url, options) = try metalink.files[0].download(options: DownloadOptions(), from: .local)
        #expect(url == "https://c.example.org/f.bin")
        #expect(options.mirrors.isEmpty)
    }

    @Test("The media type of a Metalink 4 response, with parameters and any case")
    func mediaType() {
        #expect(Metalink.isMetalink(contentType: "application/metalink4+xml"))
        #expect(Metalink.isMetalink(contentType: " Application/Metalink4+XML ; charset=utf-8"))
        #expect(!Metalink.isMetalink(contentType: "application/metalink+xml"))
        #expect(!Metalink.isMetalink(contentType: "application/xml"))
        #expect(!Metalink.isMetalink(contentType: nil))
    }

    @Test(
        "Malformed or foreign documents are refused with a clear message",
        arguments: [
            ("<metalink xmlns=\"urn:ietf:params:xml:ns:metalink\"><file name=\"a\">", "not well-formed XML"),
            ("", "is empty"),
            ("<html><body>Not found</body></html>", "not a Metalink 4 document (its root element is <html>)"),
            ("<metalink><file name=\"a\"/></metalink>", "not a Metalink 4 document"),
            ("<metalink version=\"3.0\" xmlns=\"http://www.metalinker.org/\"><files/></metalink>", "Metalink 3"),
            ("<metalink xmlns=\"urn:ietf:params:xml:ns:metalink\"></metalink>", "describes no <file>"),
            (wrapping("<size>-1</size>"), "size that is not a number"),
            (wrapping("<size>1e9</size>"), "size that is not a number"),
            (wrapping("<size>99999999999999999999</size>"), "size that is not a number"),
            (wrapping("<hash type=\"sha-256\">abcd</hash>"), "not 64 hexadecimal digits"),
            (wrapping("<hash type=\"md5\">\(String(repeating: "zz", count: 16))</hash>"), "hexadecimal"),
            (wrapping("<url priority=\"0\">http://a/f</url>"), "priority"),
            (wrapping("<url priority=\"high\">http://a/f</url>"), "priority"),
            (wrapping("<url>http://a/f g</url>"), "space or a control character"),
            (wrapping("<pieces length=\"0\" type=\"sha-256\"></pieces>"), "length that is not a positive number"),
            (wrapping("<pieces length=\"10\" type=\"sha-256\"><hash>\(piece1)</hash></pieces>"), "not its size"),
            ("\u{FEFF}<m\0e\0t\0a\0/>", "is not UTF-8 text"),
        ]
    )
    func malformed(document: String, expected: String) {
        let message = refusal(document)
        #expect(message?.contains(expected) == true, "\(message ?? "accepted")")
    }

    @Test(
        "DTDs are refused as libxml2 parsed them: no expansion, no external entities",
        arguments: [
            """
            <?xml version="1.0"?><!DOCTYPE lolz [<!ENTITY lol "lol"><!ENTITY lol2 "&lol;&lol;&lol;&lol;">]>
            <metalink xmlns="urn:ietf:params:xml:ns:metalink"><file name="&lol2;"><url>http://a/f</url></file></metalink>
            """,
            """
            <?xml version="1.0"?><!DOCTYPE m [<!ENTITY xxe SYSTEM "file:///etc/passwd">]>
            <metalink xmlns="urn:ietf:params:xml:ns:metalink"><file name="f"><url>http://a/&xxe;</url></file></metalink>
            """,
            "<!DOCTYPE metalink SYSTEM \"http://example.org/metalink.dtd\"><metalink/>",
        ]
    )
    func entities(document: String) {
        #expect(refusal(document)?.contains("declares a DTD") == true, "\(refusal(document) ?? "accepted")")
    }

    /// A Metalink for `f` whose prolog, in UTF-7, declares a DTD with an entity: no `<!DOCTYPE` in its bytes.
    static let utf7WithDTD =
        "<?xml version=\"1.0\" encoding=\"UTF-7\"?>\n"
        + "+ADwAIQ-DOCTYPE metalink +AFsAPAAh-ENTITY x +ACI-y+ACIAPgBdAD4-\n"
        + "<metalink xmlns=\"urn:ietf:params:xml:ns:metalink\"><file name=\"f\"><url>http://a/f</url></file></metalink>"

    @Test("A document declaring another encoding than UTF-8 is refused, a UTF-7 one hiding a DTD included")
    func declaredEncoding() {
        #expect(!Self.utf7WithDTD.contains("<!DOCTYPE") && !Self.utf7WithDTD.contains("<!ENTITY"))
        let utf7 = refusal(Self.utf7WithDTD)
        #expect(
            utf7?.contains("declares the encoding 'UTF-7'; Braid reads UTF-8 only") == true, "\(utf7 ?? "accepted")")
        let latin1 = refusal(
            Self.document.replacingOccurrences(of: "encoding=\"UTF-8\"", with: "encoding=\"ISO-8859-1\""))
        #expect(latin1?.contains("'ISO-8859-1'") == true, "\(latin1 ?? "accepted")")
        for spelling in ["utf-8", "Utf-8"] {
            let document = Self.document.replacingOccurrences(of: "UTF-8", with: spelling)
            #expect(refusal(document) == nil, "\(spelling)")
        }
        #expect(refusal(String(Self.document.drop { $0 != "\n" }.dropFirst())) == nil, "no declaration is UTF-8")
        #expect(refusal("\u{FEFF}" + Self.document) == nil, "a UTF-8 byte-order mark")
    }

    @Test(
        "A UTF-16 or UTF-32 document is refused, with or without a byte-order mark or a declaration",
        arguments: [
            (String.Encoding.utf16LittleEndian, [0xFF, 0xFE] as [UInt8], "is UTF-16, not UTF-8"),
            (.utf16BigEndian, [0xFE, 0xFF], "is UTF-16, not UTF-8"),
            (.utf16LittleEndian, [], "is not UTF-8 text"),
            (.utf32LittleEndian, [0xFF, 0xFE, 0x00, 0x00], "is UTF-32, not UTF-8"),
        ]
    )
    func wideEncodings(encoding: String.Encoding, mark: [UInt8], expected: String) throws {
        for declared in ["UTF-16", "UTF-8"] {
            let text = Self.document.replacingOccurrences(of: "encoding=\"UTF-8\"", with: "encoding=\"\(declared)\"")
                .replacingOccurrences(of: "<metalink ", with: "<!DOCTYPE metalink>\n<metalink ")
            let bytes = mark + Array(try #require(text.data(using: encoding)))
            do {
                _ = try Metalink(parsing: bytes, source: "wide.meta4")
                Issue.record("a \(encoding) document declaring \(declared) was accepted")
            } catch {
                #expect(error.message.contains(expected), "\(error.message)")
            }
        }
    }

    @Test("Markup-like text in a comment or a value is no DTD: the check is on the parsed nodes, not on bytes")
    func doctypeInText() throws {
        let commented = Self.document.replacingOccurrences(
            of: "<metalink ", with: "<!-- <!DOCTYPE metalink> <!ENTITY x \"y\"> -->\n<metalink ")
        #expect(try parse(commented).files.count == 2)
    }

    @Test(
        "Names that would leave the directory, or that no file system takes, are refused",
        arguments: ["/etc/passwd", "../f", "a/../../f", "a//f", "a/", "./f", "a\u{1}b", "a/\u{202E}/f", ""]
    )
    func traversal(name: String) {
        let escaped = name.replacingOccurrences(of: "\n", with: "&#10;").replacingOccurrences(of: "\u{1}", with: "&#1;")
        let message = refusal(Self.wrapping("<url>http://a/f</url>", name: escaped))
        #expect(
            message?.contains("names a file") == true || message?.contains("without a name") == true
                || message?.contains("not well-formed") == true, "\(message ?? "accepted")")
    }

    @Test("Text is XML's: character references and CDATA sections are part of it, comments are not")
    func text() throws {
        let file = try parse(
            Self.wrapping(
                "<size> 1<!-- x -->0 </size><url><![CDATA[http://a/f?x=1&y=2]]></url>"
                    + "<url>http://b/f?x=1&amp;y=&#50;</url>"
            )
        ).files[0]
        #expect(file.size == 10)
        #expect(file.urls.map(\.url) == ["http://a/f?x=1&y=2", "http://b/f?x=1&y=2"])
    }

    @Test("Subdirectories in a name are kept")
    func subdirectories() throws {
        let metalink = try parse(Self.wrapping("<url>http://a/f</url>", name: "dir/sub/f.bin"))
        var base = DownloadOptions()
        base.destination = .directory("out/")
        #expect(
            try metalink.files[0].download(options: base, from: .local).options.destination
                == .below("out/", subdirectory: "dir/sub", name: "f.bin"))
    }

    @Test(
        "A name with characters that would read as something else is made safe, as a server's name is",
        arguments: [
            ("-rf", "_-rf"), ("dir/-rf", "dir/_-rf"), ("invoice\u{202E}fdp.exe", "invoicefdp.exe"),
            ("a\u{85}b\u{9B}c", "a_b_c"), ("a&#10;b", "a_b"), ("zero\u{200B}width", "zerowidth"),
            ("line\u{2028}sep/f", "linesep/f"), (".hidden/.f", "hidden/f"),
        ]
    )
    func unsafeCharacters(name: String, safe: String) throws {
        let metalink = try parse(Self.wrapping("<url>http://a/f</url>", name: name))
        #expect(metalink.files[0].name == safe)
        var base = DownloadOptions()
        base.destination = .directory("out")
        let destination = try metalink.files[0].download(options: base, from: .local).options.destination
        #expect(
            try DestinationPaths.resolve(destination, suggestedFilename: nil, url: "http://a/f").path
                == FilePath("out/" + safe))
    }

    @Test("Piece hashes must match the size: count, and digest length")
    func pieceCount() {
        let twoPieces = "<hash>\(Self.piece1)</hash><hash>\(Self.piece2)</hash>"
        let tooFew = refusal(
            Self.wrapping("<size>2500</size><pieces length=\"1000\" type=\"sha-256\">\(twoPieces)</pieces>"))
        #expect(tooFew?.contains("list 2 pieces of 1000 bytes; a file of 2500 bytes has 3") == true, "\(tooFew ?? "")")
        let exact = try? parse(
            Self.wrapping("<size>2000</size><pieces length=\"1000\" type=\"sha-256\">\(twoPieces)</pieces>"))
        #expect(exact?.files[0].pieces?.digests.count == 2)
        let unknown = try? parse(
            Self.wrapping("<size>5</size><pieces length=\"1\" type=\"tiger\"><hash>00</hash></pieces>"))
        #expect(unknown != nil && unknown?.files[0].pieces == nil)
    }

    @Test("Counts are capped: URLs of a file, files, and two files of one name")
    func counts() {
        let urls = String(repeating: "<url>http://a/f</url>", count: Metalink.maximumURLs + 1)
        #expect(refusal(Self.wrapping(urls))?.contains("more than 1000 URLs") == true)
        let file = "<file name=\"f\"><url>http://a/f</url></file>"
        let twice = "<metalink xmlns=\"urn:ietf:params:xml:ns:metalink\">\(file)\(file)</metalink>"
        #expect(refusal(twice)?.contains("two files named 'f'") == true)
        let many = (0...Metalink.maximumFiles).map { "<file name=\"f\($0)\"/>" }.joined()
        #expect(
            refusal("<metalink xmlns=\"urn:ietf:params:xml:ns:metalink\">\(many)</metalink>")?.contains(
                "more than 10000 files") == true)
    }

    @Test("Deep nesting and huge attributes are refused or skipped, never a crash")
    func nesting() {
        let deep = String(repeating: "<x:a xmlns:x=\"urn:other\">", count: 100_000)
        #expect(refusal(Self.wrapping(deep)) != nil)
        let longName = String(repeating: "n", count: 1 << 20)
        #expect(refusal(Self.wrapping("<url>http://a/f</url>", name: longName))?.contains("longer than 4096") == true)
    }

    @Test("A file that does not exist, or a directory, cannot be read; a document is read from a file")
    func reading() throws {
        #expect(throws: BraidError.self) { try Metalink(readingAt: "/nonexistent/x.meta4") }
        #expect(throws: BraidError.self) { try Metalink(readingAt: "/tmp") }
        let directory = try ScratchDirectory()
        let path = directory.file("x.meta4")
        try Data(Self.document.utf8).write(to: URL(fileURLWithPath: path))
        #expect(try Metalink(readingAt: path).files.count == 2)
    }

    @Test("A document over 8 MiB is refused unread; one just under it is read")
    func size() {
        let padding = String(repeating: " ", count: Metalink.maximumDocumentSize)
        #expect(refusal(Self.wrapping(padding))?.contains("larger than 8 MiB") == true)
        let almost = String(repeating: "<other>\(Self.piece1)</other>\n", count: Metalink.maximumDocumentSize / 80 - 10)
        #expect(refusal(Self.wrapping("<url>http://a/f</url>" + almost)) == nil)
    }
}
