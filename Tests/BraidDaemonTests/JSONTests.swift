import Testing

@testable import BraidDaemon

/// The JSON the daemon reads from clients, through Foundation's `JSONDecoder`, with a depth limit of its own.
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

    @Test(
        "the size an answer will have is known before it is written",
        arguments: [
            JSON.null, .bool(false), .integer(-12), .number(0.5), .string("a\u{01}é\u{2028}\"\n"), .array([]),
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
