import Braid
import Testing

/// The URLs a download refuses before any traffic, as a usage error that shows the URL without a raw control
/// character: `URLComponents` lets a control character, a space and any port through, and libcurl fetched a URL
/// with a NUL cut there while the file was named from the whole.
@Suite("a download's URL")
struct DownloadURLTests {
    /// A URL refused, and what the message says of it; shown escaped, as the test's output is a terminal too.
    struct Refused: Sendable, CustomTestStringConvertible {
        let url: String
        let explanation: String
        var testDescription: String { "'\(PrintableText.escapingControlCharacters(url))'" }
    }

    @Test(
        "a control character, a space or a port outside 1 to 65535 is a usage error before any traffic",
        arguments: [
            Refused(url: "http://127.0.0.1:9/a\u{0}junk", explanation: "it has a control character, \\x00"),
            Refused(url: "http://127.0.0.1:9/a\u{1B}[2J", explanation: "it has a control character, \\x1B"),
            Refused(url: "http://127.0.0.1:9/a\tb", explanation: "it has a control character, \\x09"),
            Refused(url: "http://127.0.0.1:9/a\u{7F}", explanation: "it has a control character, \\x7F"),
            Refused(url: "http://127.0.0.1:9/a b", explanation: "it has a space, which a URL writes as %20"),
            Refused(url: "http://a b/c", explanation: "it has a space"),
            Refused(url: "http://127.0.0.1:999999/a", explanation: "its port is not from 1 to 65535"),
            Refused(url: "http://127.0.0.1:0/a", explanation: "its port is not from 1 to 65535"),
            Refused(url: "http://127.0.0.1:99999999999999999999999/a", explanation: "its port is not from 1 to 65535"),
            Refused(url: "http://[::1]:70000/a", explanation: "its port is not from 1 to 65535"),
        ]
    )
    func refused(_ refused: Refused) async throws {
        let scratch = try ScratchDirectory()
        var options = DownloadOptions()
        options.destination = .directory(scratch.path)

        let error = await #expect(throws: BraidError.self) {
            try await Download(url: refused.url, options: options).run()
        }

        #expect(error?.code == .usage)
        #expect(
            error?.message.contains("is not a valid URL: \(refused.explanation)") == true, "\(error?.message ?? "")")
        #expect(error?.message.unicodeScalars.contains { $0.value < 0x20 || $0.value == 0x7F } == false)
        #expect(try scratch.contents().isEmpty)
    }

    @Test("a mirror is held to the same rule")
    func mirror() async throws {
        let scratch = try ScratchDirectory()
        var options = DownloadOptions()
        options.destination = .directory(scratch.path)
        options.mirrors = ["http://127.0.0.1:9/a\u{0}.iso"]

        let error = await #expect(throws: BraidError.self) {
            try await Download(url: "http://127.0.0.1:9/a.iso", options: options).run()
        }

        #expect(error?.code == .usage)
        #expect(error?.message.contains("it has a control character, \\x00") == true, "\(error?.message ?? "")")
    }
}
