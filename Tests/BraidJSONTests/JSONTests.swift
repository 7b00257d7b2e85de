import BraidJSON
import Testing

/// The JSON the daemon reads from clients (through Foundation's `JSONDecoder`, with a depth limit of its own) and
/// writes, with `braid --json`.
@Suite("JSON")
struct JSONTests {
    static func parse(_ text: String) throws -> JSON { try JSON(parsing: Array(text.utf8)) }

    @Test("an aria2 request parses to its values, an object's keys sorted")
    func request() throws {
        let value = try Self.parse(
            #"{"jsonrpc":"2.0","id":"q","method":"aria2.addUri","params":["token:s",["http://h/a"],{"split":"4"}]}"#)
        #expect(value["method"] == .string("aria2.addUri"))
        #expect(value["params"]?.arrayValue?[2]["split"]?.integerValue == 4)
        #expect(value["id"] == .string("q"))
        guard case let .object(members) = value else {
            Issue.record("not an object: \(value)")
            return
        }
        #expect(members.map(\.0) == ["id", "jsonrpc", "method", "params"])
    }

    @Test("escapes, surrogate pairs and numbers read as written; writing gives the same value back")
    func roundTrip() throws {
        let value = try Self.parse(#"[ "a\"b\\c\/\n\u00e9\ud83d\ude00", -12, 3.5, 1e3, true, false, null, {} ]"#)
        #expect(
            value
                == .array([
                    .string("a\"b\\c/\né😀"), .integer(-12), .number(3.5), .integer(1000), .bool(true), .bool(false),
                    .null, .object([]),
                ]))
        #expect(try JSON(parsing: value.bytes) == value)
    }

    @Test("control characters and line separators are escaped when written")
    func writesEscaped() {
        #expect(JSON.string("a\u{01}\u{2028}\"").text == #""a\u0001\u2028\"""#)
    }

    @Test("characters a terminal would not show as themselves are escaped, and read back as they were")
    func writesUnprintableEscaped() throws {
        // DEL, a C1 control, a bidirectional override, a zero-width space and a byte order mark; then characters that
        // are shown as themselves.
        let value = JSON.string("a\u{7F}\u{85}\u{202E}\u{200B}\u{FEFF}é😀")
        #expect(value.text == #""a\u007f\u0085\u202e\u200b\ufeffé😀""#)
        #expect(value.encodedByteCount == value.bytes.count)
        #expect(try JSON(parsing: value.bytes) == value)
    }

    @Test("numbers are written as short as they read back, or with a fixed number of digits")
    func numberFormats() {
        let value = JSON.array([.number(0.5), .number(1e-7), .integer(3), .number(.infinity), .number(-0.0004)])
        #expect(value.text == "[0.5,1e-07,3,null,-0.0004]")
        #expect(value.text(numbers: .fixed(digits: 3)) == "[0.500,0.000,3,null,0.000]")
    }

    @Test(
        "the size an answer will have is known before it is written",
        arguments: [
            JSON.null, .bool(false), .integer(-12), .number(0.5), .string("a\u{01}é\u{2028}\u{202E}\"\n"), .array([]),
            .array([.null, .string("x")]), .object([]),
            .object([("k", .array([.integer(1), .object([("é", .null)])]))]),
        ])
    func encodedByteCount(_ value: JSON) {
        #expect(value.encodedByteCount == value.bytes.count)
    }

    @Test(
        "malformed or hostile text is refused, not guessed at",
        arguments: [
            "", "{", "01", "1.", "-", "\"\\x\"", "\"\\ud800\"", "\"a\nb\"", "nul", "[1] 2", "1e999", "NaN",
            String(repeating: "[", count: 100) + String(repeating: "]", count: 100),
            String(repeating: "[", count: 600) + String(repeating: "]", count: 600),
        ]
    )
    func refuses(_ text: String) {
        #expect(throws: JSON.ParseError.self) { try Self.parse(text) }
    }

    @Test("nesting is held to 32 levels from the top")
    func depth() throws {
        let deepest =
            String(repeating: "[", count: JSON.maximumDepth) + String(repeating: "]", count: JSON.maximumDepth)
        #expect(throws: Never.self) { try Self.parse(deepest) }
        #expect(throws: JSON.ParseError.self) { try Self.parse("[" + deepest + "]") }
    }

    @Test("bytes that are not UTF-8 inside a string are refused")
    func invalidUTF8() {
        #expect(throws: JSON.ParseError.self) { try JSON(parsing: [0x22, 0xC0, 0xAF, 0x22]) }
        #expect(throws: JSON.ParseError.self) { try JSON(parsing: [0x22, 0xED, 0xA0, 0x80, 0x22]) }
    }
}
