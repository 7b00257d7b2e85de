import Braid
import Testing

/// What `braid -i` reads before it parses: a list's bytes, taken chunk by chunk and refused as soon as they cannot
/// be a list (a NUL byte, a line or a whole too long), with the line's number and never the line itself.
@Suite("download list input")
struct DownloadListInputTests {
    /// `text` fed to an input in chunks of `chunk` bytes, then its text.
    static func read(
        _ text: String, chunk: Int = 64 << 10, maximumLength: Int = DownloadList.Input.defaultMaximumLength,
        maximumLineLength: Int = DownloadList.Input.defaultMaximumLineLength
    ) throws -> String {
        let bytes = Array(text.utf8)
        var input = DownloadList.Input(maximumLength: maximumLength, maximumLineLength: maximumLineLength)
        for start in stride(from: 0, to: bytes.count, by: chunk) {
            try bytes[start..<min(start + chunk, bytes.count)].withUnsafeBytes { try input.append($0) }
        }
        return input.text()
    }

    /// Expects reading `text` to be refused as a usage error saying `explanation`.
    static func expectRefusal(
        _ text: String, chunk: Int = 64 << 10, maximumLength: Int = DownloadList.Input.defaultMaximumLength,
        maximumLineLength: Int = DownloadList.Input.defaultMaximumLineLength, _ explanation: String,
        sourceLocation: SourceLocation = #_sourceLocation
    ) {
        let error = #expect(throws: BraidError.self, sourceLocation: sourceLocation) {
            try read(text, chunk: chunk, maximumLength: maximumLength, maximumLineLength: maximumLineLength)
        }
        #expect(error?.code == .usage, sourceLocation: sourceLocation)
        #expect(error?.message == explanation, sourceLocation: sourceLocation)
    }

    @Test("a list's bytes come back as its text, whatever the chunks and however many blocks they fill")
    func text() throws {
        let list = "https://example.org/é.iso\r\n  out=naïve.iso\nhttps://例え.jp/b.bin\n"
        #expect(try Self.read(list, chunk: 1) == list)
        #expect(try Self.read(list) == list)

        let large = String(repeating: "https://example.org/models/part-0001.safetensors\n", count: 60_000)
        #expect(try Self.read(large, chunk: 65_521) == large, "3 MiB, over several blocks")
    }

    @Test("a NUL byte anywhere is refused, naming its line: a binary file is no list")
    func nul() {
        Self.expectRefusal(
            "http://h/a\nhttp://h/b\0junk\n", "line 2 of the list has a NUL byte: is it a list of URLs?")
        Self.expectRefusal("\0", "line 1 of the list has a NUL byte: is it a list of URLs?")
        Self.expectRefusal(
            "http://h/a\r\n\r\n# c\rhttp://h/b\0", chunk: 1, "line 4 of the list has a NUL byte: is it a list of URLs?")
    }

    @Test("a line longer than the cap is refused with its number, not its text; one at the cap is read")
    func longLine() throws {
        let long = String(repeating: "x", count: 17)
        for chunk in [1, 5, 64] {
            Self.expectRefusal(
                "http://h/a\r\n\(long)\n", chunk: chunk, maximumLineLength: 16,
                "line 2 of the list is longer than 16 bytes: is it a list of URLs?")
            Self.expectRefusal(
                "h\r\n\r\nh\n\n\(long)", chunk: chunk, maximumLineLength: 16,
                "line 5 of the list is longer than 16 bytes: is it a list of URLs?")
        }
        let atCap = String(repeating: "x", count: 16)
        #expect(try Self.read("\(atCap)\r\n\(atCap)\r\(atCap)", chunk: 3, maximumLineLength: 16).utf8.count == 51)

        // The default: signed URLs are a few KiB; 64 KiB is not a URL.
        let signed = "https://example.org/f?X-Amz-Signature=" + String(repeating: "a", count: 8 << 10)
        #expect(try Self.read(signed) == signed)
        Self.expectRefusal(
            "http://h/a\nhttp://h/" + String(repeating: "b", count: 64 << 10),
            "line 2 of the list is longer than 64 KiB: is it a list of URLs?")
    }

    @Test("a list longer than the cap in all is refused, whatever its lines; one at the cap is read")
    func longList() throws {
        let lines = String(repeating: "http://h/a\n", count: 3)
        #expect(try Self.read(lines, chunk: 4, maximumLength: 33) == lines)
        Self.expectRefusal(
            lines + "h", chunk: 4, maximumLength: 33, "the list is longer than 33 bytes: is it a list of URLs?")
        Self.expectRefusal(lines + "h", maximumLength: 33, "the list is longer than 33 bytes: is it a list of URLs?")
        Self.expectRefusal(
            String(repeating: "http://h/a\n", count: 200), maximumLength: 1 << 10,
            "the list is longer than 1 KiB: is it a list of URLs?")
    }

    @Test("bytes that are not UTF-8 become U+FFFD, for the parser to refuse the line they are on")
    func invalidUTF8() throws {
        var input = DownloadList.Input()
        try [UInt8(ascii: "h"), 0xFF, UInt8(ascii: "\n")].withUnsafeBytes { try input.append($0) }
        #expect(input.text() == "h\u{FFFD}\n")
    }
}
