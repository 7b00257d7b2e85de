import Testing

@testable import BraidDaemon

/// The JSON the daemon reads from clients: RFC 8259, strictly, with limits on what hostile input can cost.
@Suite("JSON")
struct JSONTests {
    static func parse(_ text: String) throws -> JSON { try JSON(parsing: Array(text.utf8)) }

    @Test("an aria2 request parses to its values, keys in order")
    func request() throws {
        let value = try Self.parse(
            #"{"jsonrpc":"2.0","id":"q","method":"aria2.addUri","params":["token:s",["http://h/a"],{"split":"4"}]}"#)
        #expect(value["method"] == .string("aria2.addUri"))
        #expect(value["params"]?.arrayValue?[2]["split"]?.integerValue == 4)
        #expect(value["id"] == .string("q"))
    }

    @Test("escapes, surrogate pairs and numbers read as written; writing gives the same value back")
    func roundTrip() throws {
        let value = try Self.parse(#"[ "a\"b\\c\/\n\u00e9\ud83d\ude00", -12, 3.5, 1e3, true, false, null, {} ]"#)
        #expect(
            value
                == .array([
                    .string("a\"b\\c/\né😀"), .integer(-12), .number(3.5), .number(1000), .bool(true), .bool(false),
                    .null, .object([]),
                ]))
        #expect(try JSON(parsing: value.bytes) == value)
    }

    @Test("control characters and line separators are escaped when written")
    func writesEscaped() {
        #expect(JSON.string("a\u{01}\u{2028}\"").text == #""a\u0001\u2028\"""#)
    }

    @Test(
        "malformed or hostile text is refused, not guessed at",
        arguments: [
            "", "{", "[1,]", "{\"a\":1,}", "01", "1.", "-", "\"\\x\"", "\"\\ud800\"", "\"a\nb\"", "nul", "[1] 2",
            "99999999999999999999", "1e999",
            String(repeating: "[", count: 100) + String(repeating: "]", count: 100),
        ]
    )
    func refuses(_ text: String) {
        #expect(throws: JSON.ParseError.self) { try Self.parse(text) }
    }

    @Test("bytes that are not UTF-8 inside a string are refused")
    func invalidUTF8() {
        #expect(throws: JSON.ParseError.self) { try JSON(parsing: [0x22, 0xC0, 0xAF, 0x22]) }
    }
}
