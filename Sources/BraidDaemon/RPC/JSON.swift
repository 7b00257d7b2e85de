/// A JSON value as JSON-RPC carries it: read from what a client sends (through Foundation's `JSONDecoder`, see
/// `JSON+Decoding.swift`), and written for what the daemon answers.
public enum JSON: Sendable, Equatable {
    case null
    case bool(Bool)
    case integer(Int64)
    case number(Double)
    case string(String)
    case array([JSON])
    /// Members in the order written; a parsed object has each key once, in sorted order.
    case object([(String, JSON)])

    public static func == (lhs: JSON, rhs: JSON) -> Bool {
        switch (lhs, rhs) {
        case (.null, .null): true
        case let (.bool(a), .bool(b)): a == b
        case let (.integer(a), .integer(b)): a == b
        case let (.number(a), .number(b)): a == b
        case let (.string(a), .string(b)): a == b
        case let (.array(a), .array(b)): a == b
        case let (.object(a), .object(b)): a.count == b.count && zip(a, b).allSatisfy { $0.0 == $1.0 && $0.1 == $1.1 }
        default: false
        }
    }

    /// The member named `key` of an object; nil for a missing key or a value that is not an object.
    public subscript(key: String) -> JSON? {
        guard case let .object(members) = self else { return nil }
        return members.last { $0.0 == key }?.1
    }

    public var stringValue: String? {
        if case let .string(value) = self { return value }
        return nil
    }

    public var arrayValue: [JSON]? {
        if case let .array(values) = self { return values }
        return nil
    }

    /// An integer, whether sent as a number or, as aria2's clients often do, as a decimal string.
    public var integerValue: Int64? {
        switch self {
        case let .integer(value): value
        case let .string(text): Int64(text)
        default: nil
        }
    }

    /// A decimal string, as aria2 writes every number.
    static func decimal<Number: BinaryInteger>(_ value: Number) -> JSON { .string(String(value)) }
}

// MARK: - Writing

extension JSON {
    /// Compact UTF-8 JSON text.
    public var bytes: [UInt8] {
        var out: [UInt8] = []
        write(to: &out)
        return out
    }

    /// Compact JSON text.
    public var text: String { String(decoding: bytes, as: UTF8.self) }

    /// Appends the compact UTF-8 JSON text to `out`.
    func write(to out: inout [UInt8]) {
        switch self {
        case .null:
            out += "null".utf8
        case let .bool(value):
            out += (value ? "true" : "false").utf8
        case let .integer(value):
            out += String(value).utf8
        case let .number(value):
            out += (value.isFinite ? String(value) : "null").utf8
        case let .string(value):
            Self.writeString(value, to: &out)
        case let .array(values):
            out.append(UInt8(ascii: "["))
            for (index, value) in values.enumerated() {
                if index > 0 { out.append(UInt8(ascii: ",")) }
                value.write(to: &out)
            }
            out.append(UInt8(ascii: "]"))
        case let .object(members):
            out.append(UInt8(ascii: "{"))
            for (index, (key, value)) in members.enumerated() {
                if index > 0 { out.append(UInt8(ascii: ",")) }
                Self.writeString(key, to: &out)
                out.append(UInt8(ascii: ":"))
                value.write(to: &out)
            }
            out.append(UInt8(ascii: "}"))
        }
    }

    /// How many bytes `bytes` would have, counted without writing them: what an answer's size cap is checked
    /// against before the answer is built.
    var encodedByteCount: Int {
        switch self {
        case .null: 4
        case let .bool(value): value ? 4 : 5
        case let .integer(value): String(value).utf8.count
        case let .number(value): (value.isFinite ? String(value) : "null").utf8.count
        case let .string(value): Self.stringByteCount(value)
        case let .array(values): values.reduce(1 + max(values.count, 1)) { $0 + $1.encodedByteCount }
        case let .object(members):
            members.reduce(1 + max(members.count, 1)) { $0 + Self.stringByteCount($1.0) + 1 + $1.1.encodedByteCount }
        }
    }

    /// RFC 8259 escaping, plus U+2028 and U+2029 so that the text is also a JavaScript literal.
    private static func writeString(_ value: String, to out: inout [UInt8]) {
        out.append(UInt8(ascii: "\""))
        for scalar in value.unicodeScalars {
            switch scalar {
            case "\"": out += #"\""#.utf8
            case "\\": out += #"\\"#.utf8
            case "\n": out += #"\n"#.utf8
            case "\r": out += #"\r"#.utf8
            case "\t": out += #"\t"#.utf8
            case "\u{08}": out += #"\b"#.utf8
            case "\u{0C}": out += #"\f"#.utf8
            case "\u{00}"..."\u{1F}", "\u{7F}", "\u{2028}", "\u{2029}":
                let hex = String(scalar.value, radix: 16)
                out += ("\\u" + String(repeating: "0", count: 4 - hex.count) + hex).utf8
            default:
                UTF8.encode(scalar) { out.append($0) }
            }
        }
        out.append(UInt8(ascii: "\""))
    }

    /// The length of `writeString`'s output for `value`.
    private static func stringByteCount(_ value: String) -> Int {
        value.unicodeScalars.reduce(2) { count, scalar in
            switch scalar {
            case "\"", "\\", "\n", "\r", "\t", "\u{08}", "\u{0C}": count + 2
            case "\u{00}"..."\u{1F}", "\u{7F}", "\u{2028}", "\u{2029}": count + 6
            default: count + UTF8.width(scalar)
            }
        }
    }
}
