import Testing

@testable import Braid

/// The one rule for names from outside: a server's is made safe by replacement, a document's path refused when it
/// would leave the directory, a client's refused unless it is safe as it is.
@Suite("SafeName")
struct SafeNameTests {
    /// Names a hostile server, document or client might choose, each with what replacement makes of it.
    static let hostile: [(String, String)] = [
        ("-rf", "_-rf"),
        ("--help", "_--help"),
        ("invoice\u{202E}fdp.exe", "invoicefdp.exe"),
        ("a\u{202A}b\u{202B}c\u{202C}d\u{202D}e", "abcde"),
        ("a\u{2066}b\u{2067}c\u{2068}d\u{2069}e", "abcde"),
        ("a\u{200E}b\u{200F}c\u{061C}d", "abcd"),
        ("a\u{85}b\u{9B}c", "a_b_c"),
        ("a\u{0}b\u{1F}c\u{7F}d", "a_b_c_d"),
        ("x\u{1B}[31mred", "x_[31mred"),
        ("line\r\nbreak", "line__break"),
        ("a\u{200B}b\u{200C}c\u{200D}d\u{FEFF}e\u{2060}f", "abcdef"),
        ("one\u{2028}two\u{2029}three", "onetwothree"),
        ("\u{200B}-x", "_-x"),
        ("\u{202E}-x", "_-x"),
        ("  spaced name.txt  ", "spaced name.txt"),
        ("con:stream", "con_stream"),
        ("a\\b", "a_b"),
        ("\t", "_"),
        ("big.iso.part", "big.iso_part"),
        ("big.iso.braid", "big.iso_braid"),
        ("big.iso.braid.tmp", "big.iso.braid_tmp"),
        ("big.iso.braid.reserve", "big.iso.braid_reserve"),
        ("-x.braid", "_-x_braid"),
        ("\u{202E}x.part", "x_part"),
    ]

    @Test(
        "A server's name is reduced to its last component and made safe",
        arguments: [
            ("../x", "x"),
            ("/etc/passwd", "passwd"),
            ("..\\..\\x", "x"),
            ("C:\\Windows\\system32\\evil.dll", "evil.dll"),
            ("dir/", "dir"),
            ("x/\u{1B}[31mred", "_[31mred"),
            ("../--help", "_--help"),
        ] + hostile.filter { !$0.0.contains("\\") })
    func lastComponent(proposed: String, safe: String) {
        #expect(SafeName.lastComponent(of: proposed)?.string == safe)
    }

    @Test(
        "Nothing left after making it safe gives nil",
        arguments: [
            "", ".", "..", "...", "/", "//", "\\", "../..", "./.", " ", " . ", "\u{2003}", "\u{202E}", "\u{200B}.",
        ]
    )
    func nothingLeft(name: String) {
        #expect(SafeName.lastComponent(of: name) == nil)
        #expect(SafeName(sanitising: name) == nil || name.contains("/") || name.contains("\\"))
    }

    @Test("A very long name is cut to at most 200 bytes of valid UTF-8, a leading '-' included")
    func longNameIsCut() throws {
        let name = try #require(SafeName(sanitising: String(repeating: "é", count: 300)))
        #expect(name.string.utf8.count <= 200 && name.string.utf8.count >= 199)
        #expect(name.string.allSatisfy { $0 == "é" })
        let dashed = try #require(SafeName(sanitising: "-" + String(repeating: "a", count: 300)))
        #expect(dashed.string.utf8.count == 200 && dashed.string.hasPrefix("_-"))
        let marks = try #require(SafeName(sanitising: "a" + String(repeating: "\u{301}", count: 300)))
        #expect(marks.string.utf8.count <= 200 && marks.string.unicodeScalars.first == "a")
    }

    @Test(
        "A separator hidden in a grapheme cluster with a combining mark is still a separator",
        arguments: ["a/\u{301}b", "../\u{301}etc", "x\\\u{301}y", ".\u{301}hidden"]
    )
    func combiningMarkCannotHideSeparator(name: String) {
        let safe = SafeName.lastComponent(of: name)?.string
        #expect(safe.map { !$0.utf8.contains(UInt8(ascii: "/")) } != false)
        #expect(safe.map { !$0.utf8.contains(UInt8(ascii: "\\")) } != false)
        #expect(safe.map { $0.utf8.first != UInt8(ascii: ".") } != false)
    }

    @Test("Making a name safe twice changes nothing, and a safe name passes validation", arguments: hostile)
    func idempotent(proposed: String, safe: String) throws {
        let once = try #require(SafeName(sanitising: proposed))
        #expect(once.string == safe)
        #expect(SafeName(sanitising: once.string) == once)
        #expect(try SafeName(validating: once.string) == once)
    }

    @Test("A client's name is refused unless it is safe as it is, saying why", arguments: hostile)
    func validatingRefuses(proposed: String, safe: String) {
        let refusal = #expect(throws: SafeName.Refusal.self) { try SafeName(validating: proposed) }
        #expect(refusal?.reason.isEmpty == false)
        #expect(refusal?.reason.unicodeScalars.contains(where: PrintableText.isUnprintable) == false)
    }

    @Test(
        "A server's name loses its leading dots; a client's, a list's and an object store's key keep them",
        arguments: [(".bashrc", "bashrc"), ("...hidden", "hidden"), (".git", "git"), (". x", "x")])
    func leadingDots(proposed: String, safe: String) throws {
        #expect(SafeName(sanitising: proposed)?.string == safe)
        #expect(SafeName.lastComponent(of: "dir/" + proposed)?.string == safe)
        #expect(SafeName(sanitising: proposed, keepingLeadingDots: true)?.string == proposed)
        #expect(try SafeName(validating: proposed).string == proposed)
        #expect(
            try SafeName.path(sanitising: proposed + "/a", keepingLeadingDots: true).map(\.string) == [proposed, "a"])
        #expect(try SafeName.path(sanitising: proposed + "/a").map(\.string) == [safe, "a"])
    }

    /// curl -OJ, wget and wget2 --content-disposition and aria2c all save `filename=" .bin"` as ` .bin`. Braid
    /// removes the blank, and then the dot it would leave first, as it does for `.bin`: a blank in front is no way
    /// to plant a hidden file.
    @Test(
        "Blanks before a server's leading dot go with it; a key keeps the dot",
        arguments: [(" .bin", "bin", ".bin"), ("\u{2003}..bin", "bin", "..bin"), (" . x.bin", "x.bin", ". x.bin")])
    func blanksBeforeDots(proposed: String, safe: String, keyed: String) {
        #expect(SafeName.lastComponent(of: proposed)?.string == safe)
        #expect(ContentDisposition.filename(from: "attachment; filename=\"\(proposed)\"") == safe)
        #expect(SafeName(sanitising: proposed, keepingLeadingDots: true)?.string == keyed)
        #expect(throws: SafeName.Refusal.self) { try SafeName(validating: proposed) }
    }

    @Test(
        "Plain names pass as they are",
        arguments: [
            "report.pdf", "naïve € rates.txt", "日本語.txt", "a-b_c.d", "x-", "a b", "x.", "~$#@!{}", "a\u{7E}",
            "notes.parts", "x.part.zip", "x.braid2", "x.tmp", "part", "x.reserve",
            String(repeating: "a", count: SafeName.maximumLength),
        ])
    func plainNames(name: String) throws {
        #expect(try SafeName(validating: name).string == name)
        #expect(SafeName(sanitising: name)?.string == name)
    }

    @Test(
        "A path that would leave the directory is refused, made safe or not",
        arguments: ["../x", "a/../../x", "/etc/x", "a//b", "a/", "./a", "a/.", "", "a/\u{202E}"]
    )
    func pathsRefused(path: String) {
        #expect(throws: SafeName.Refusal.self) { try SafeName.path(sanitising: path) }
        #expect(throws: SafeName.Refusal.self) { try SafeName.path(validating: path) }
    }

    @Test("A document's path has each component made safe; a client's the same path is refused")
    func documentPaths() throws {
        let path = "-dir/sub\u{202E}/x\u{85}y/.f"
        #expect(SafeName.joined(try SafeName.path(sanitising: path)) == "_-dir/sub/x_y/f")
        #expect(throws: SafeName.Refusal.self) { try SafeName.path(validating: path) }
        #expect(SafeName.joined(try SafeName.path(validating: "a/b/c.bin")) == "a/b/c.bin")
        // A combining mark after a slash makes one Character of the two: the slash still separates.
        #expect(try SafeName.path(validating: "a/\u{301}b/ü").map(\.string) == ["a", "\u{301}b", "ü"])
        let long = String(repeating: "a/", count: 3000) + "f"
        #expect(throws: SafeName.Refusal.self) { try SafeName.path(sanitising: long) }
    }

    /// Printable ASCII takes a shortcut past the rule's look-ups: at each of its edges it must still end as the rule
    /// says.
    @Test(
        "ASCII names at the rule's edges: a leading dot, blank or '-', a trailing blank, a separator, the length",
        arguments: [
            (" x", "x"), ("x ", "x"), ("-x", "_-x"), ("a/b", "a_b"), ("a:b", "a_b"), ("a\\b", "a_b"),
            ("a\u{7F}b", "a_b"),
            (
                String(repeating: "b", count: SafeName.maximumLength + 1),
                String(repeating: "b", count: SafeName.maximumLength)
            ),
        ])
    func asciiEdges(proposed: String, safe: String) {
        #expect(SafeName(sanitising: proposed)?.string == safe)
        #expect(throws: SafeName.Refusal.self) { try SafeName(validating: proposed) }
    }

    @Test(
        "A name cut to the longest keeps its extension, cut before it; one too long or with a blank is no extension",
        arguments: [
            (String(repeating: "b", count: 300) + ".safetensors", String(repeating: "b", count: 188) + ".safetensors"),
            (String(repeating: "é", count: 150) + ".tar.gz", String(repeating: "é", count: 98) + ".gz"),
            (String(repeating: "b", count: 300) + ".abcdefghijklmnopq", String(repeating: "b", count: 200)),
            (String(repeating: "b", count: 300) + ".a b", String(repeating: "b", count: 200)),
            (String(repeating: "b", count: 190) + "          .bin", String(repeating: "b", count: 190) + ".bin"),
        ])
    func longNames(proposed: String, safe: String) {
        #expect(SafeName(sanitising: proposed)?.string == safe)
        #expect(throws: SafeName.Refusal.self) { try SafeName(validating: proposed) }
    }
}
