/// A JSON value as JSON-RPC carries it: parsed from what a client sends, and written for what the daemon answers.
///
/// Parsed by hand, with limits, rather than through `JSONDecoder`: requests come from the network, their shape is
/// dynamic (aria2's positional parameters), and a hostile one must cost no more than its size (depth is capped,
/// numbers that do not fit are refused rather than rounded).
public enum JSON: Sendable, Equatable {
    case null
    case bool(Bool)
    case integer(Int64)
    case number(Double)
    case string(String)
    case array([JSON])
    /// Members in the order written; a later duplicate key wins on lookup, as most parsers do.
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
    public var bytes: [UInt8] { Array(text.utf8) }

    /// Compact JSON text.
    public var text: String {
        var out = ""
        write(to: &out)
        return out
    }

    private func write(to out: inout String) {
        switch self {
        case .null:
            out += "null"
        case let .bool(value):
            out += value ? "true" : "false"
        case let .integer(value):
            out += String(value)
        case let .number(value):
            out += value.isFinite ? String(value) : "null"
        case let .string(value):
            Self.writeString(value, to: &out)
        case let .array(values):
            out += "["
            for (index, value) in values.enumerated() {
                if index > 0 { out += "," }
                value.write(to: &out)
            }
            out += "]"
        case let .object(members):
            out += "{"
            for (index, (key, value)) in members.enumerated() {
                if index > 0 { out += "," }
                Self.writeString(key, to: &out)
                out += ":"
                value.write(to: &out)
            }
            out += "}"
        }
    }

    /// RFC 8259 escaping, plus U+2028 and U+2029 so that the text is also a JavaScript literal.
    private static func writeString(_ value: String, to out: inout String) {
        out += "\""
        for scalar in value.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            case "\u{08}": out += "\\b"
            case "\u{0C}": out += "\\f"
            case "\u{00}"..."\u{1F}", "\u{7F}", "\u{2028}", "\u{2029}":
                let hex = String(scalar.value, radix: 16)
                out += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
            default:
                out.unicodeScalars.append(scalar)
            }
        }
        out += "\""
    }
}

// MARK: - Parsing

extension JSON {
    /// Why a text is not JSON the daemon accepts.
    public struct ParseError: Error, Equatable, CustomStringConvertible {
        public let offset: Int
        public let reason: String
        public var description: String { "\(reason) at byte \(offset)" }
    }

    /// Nesting deeper than this is refused: aria2's requests are three levels deep, a multicall five.
    public static let maximumDepth = 32

    /// Parses one JSON text (RFC 8259), with nothing but white space around it.
    public init(parsing bytes: some Collection<UInt8>) throws(ParseError) {
        var parser = Parser(bytes: Array(bytes))
        self = try parser.parseDocument()
    }

    private struct Parser {
        let bytes: [UInt8]
        var offset = 0

        init(bytes: [UInt8]) { self.bytes = bytes }

        mutating func parseDocument() throws(ParseError) -> JSON {
            let value = try parseValue(depth: 0)
            skipWhiteSpace()
            guard offset == bytes.count else { throw fail("unexpected text after the value") }
            return value
        }

        func fail(_ reason: String) -> ParseError { ParseError(offset: offset, reason: reason) }

        mutating func skipWhiteSpace() {
            while offset < bytes.count, [0x20, 0x09, 0x0A, 0x0D].contains(bytes[offset]) { offset += 1 }
        }

        mutating func parseValue(depth: Int) throws(ParseError) -> JSON {
            guard depth < JSON.maximumDepth else { throw fail("nested too deeply") }
            skipWhiteSpace()
            guard offset < bytes.count else { throw fail("unexpected end") }
            switch bytes[offset] {
            case UInt8(ascii: "{"): return try parseObject(depth: depth)
            case UInt8(ascii: "["): return try parseArray(depth: depth)
            case UInt8(ascii: "\""): return .string(try parseString())
            case UInt8(ascii: "t"): return try parseLiteral("true", .bool(true))
            case UInt8(ascii: "f"): return try parseLiteral("false", .bool(false))
            case UInt8(ascii: "n"): return try parseLiteral("null", .null)
            case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return try parseNumber()
            default: throw fail("unexpected character")
            }
        }

        mutating func parseLiteral(_ word: String, _ value: JSON) throws(ParseError) -> JSON {
            let utf8 = Array(word.utf8)
            guard bytes.count - offset >= utf8.count, Array(bytes[offset..<offset + utf8.count]) == utf8 else {
                throw fail("unexpected character")
            }
            offset += utf8.count
            return value
        }

        mutating func parseObject(depth: Int) throws(ParseError) -> JSON {
            offset += 1
            var members: [(String, JSON)] = []
            skipWhiteSpace()
            if offset < bytes.count, bytes[offset] == UInt8(ascii: "}") {
                offset += 1
                return .object(members)
            }
            while true {
                skipWhiteSpace()
                guard offset < bytes.count, bytes[offset] == UInt8(ascii: "\"") else { throw fail("expected a key") }
                let key = try parseString()
                skipWhiteSpace()
                guard offset < bytes.count, bytes[offset] == UInt8(ascii: ":") else { throw fail("expected ':'") }
                offset += 1
                members.append((key, try parseValue(depth: depth + 1)))
                skipWhiteSpace()
                guard offset < bytes.count else { throw fail("unexpected end") }
                if bytes[offset] == UInt8(ascii: ",") {
                    offset += 1
                } else if bytes[offset] == UInt8(ascii: "}") {
                    offset += 1
                    return .object(members)
                } else {
                    throw fail("expected ',' or '}'")
                }
            }
        }

        mutating func parseArray(depth: Int) throws(ParseError) -> JSON {
            offset += 1
            var values: [JSON] = []
            skipWhiteSpace()
            if offset < bytes.count, bytes[offset] == UInt8(ascii: "]") {
                offset += 1
                return .array(values)
            }
            while true {
                values.append(try parseValue(depth: depth + 1))
                skipWhiteSpace()
                guard offset < bytes.count else { throw fail("unexpected end") }
                if bytes[offset] == UInt8(ascii: ",") {
                    offset += 1
                } else if bytes[offset] == UInt8(ascii: "]") {
                    offset += 1
                    return .array(values)
                } else {
                    throw fail("expected ',' or ']'")
                }
            }
        }

        mutating func parseNumber() throws(ParseError) -> JSON {
            let start = offset
            var isInteger = true
            if bytes[offset] == UInt8(ascii: "-") { offset += 1 }
            let digitsStart = offset
            while offset < bytes.count, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(bytes[offset]) { offset += 1 }
            guard offset > digitsStart else { throw fail("expected a digit") }
            guard bytes[digitsStart] != UInt8(ascii: "0") || offset - digitsStart == 1 else {
                throw fail("leading zero")
            }
            if offset < bytes.count, bytes[offset] == UInt8(ascii: ".") {
                isInteger = false
                offset += 1
                let fraction = offset
                while offset < bytes.count, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(bytes[offset]) {
                    offset += 1
                }
                guard offset > fraction else { throw fail("expected a digit") }
            }
            if offset < bytes.count, bytes[offset] == UInt8(ascii: "e") || bytes[offset] == UInt8(ascii: "E") {
                isInteger = false
                offset += 1
                if offset < bytes.count, bytes[offset] == UInt8(ascii: "+") || bytes[offset] == UInt8(ascii: "-") {
                    offset += 1
                }
                let exponent = offset
                while offset < bytes.count, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(bytes[offset]) {
                    offset += 1
                }
                guard offset > exponent else { throw fail("expected a digit") }
            }
            let text = String(decoding: bytes[start..<offset], as: UTF8.self)
            if isInteger {
                guard let value = Int64(text) else { throw ParseError(offset: start, reason: "integer out of range") }
                return .integer(value)
            }
            guard let value = Double(text), value.isFinite else {
                throw ParseError(offset: start, reason: "number out of range")
            }
            return .number(value)
        }

        mutating func parseString() throws(ParseError) -> String {
            offset += 1
            var scalars = String.UnicodeScalarView()
            var runStart = offset
            func flushRun(_ end: Int) throws(ParseError) {
                guard runStart < end else { return }
                // Validated UTF-8 only: String(validating:) refuses overlong forms and surrogates.
                guard let run = String(validating: bytes[runStart..<end], as: UTF8.self) else {
                    throw ParseError(offset: runStart, reason: "invalid UTF-8")
                }
                scalars.append(contentsOf: run.unicodeScalars)
            }
            while offset < bytes.count {
                let byte = bytes[offset]
                if byte == UInt8(ascii: "\"") {
                    try flushRun(offset)
                    offset += 1
                    return String(scalars)
                }
                if byte < 0x20 { throw fail("control character in a string") }
                if byte == UInt8(ascii: "\\") {
                    try flushRun(offset)
                    offset += 1
                    scalars.append(try parseEscape())
                    runStart = offset
                    continue
                }
                offset += 1
            }
            throw fail("unterminated string")
        }

        mutating func parseEscape() throws(ParseError) -> Unicode.Scalar {
            guard offset < bytes.count else { throw fail("unterminated string") }
            let byte = bytes[offset]
            offset += 1
            switch byte {
            case UInt8(ascii: "\""): return "\""
            case UInt8(ascii: "\\"): return "\\"
            case UInt8(ascii: "/"): return "/"
            case UInt8(ascii: "b"): return "\u{08}"
            case UInt8(ascii: "f"): return "\u{0C}"
            case UInt8(ascii: "n"): return "\n"
            case UInt8(ascii: "r"): return "\r"
            case UInt8(ascii: "t"): return "\t"
            case UInt8(ascii: "u"):
                let high = try parseHex4()
                if (0xD800..<0xDC00).contains(high) {
                    guard bytes.count - offset >= 6, bytes[offset] == UInt8(ascii: "\\"),
                        bytes[offset + 1] == UInt8(ascii: "u")
                    else { throw fail("lone surrogate") }
                    offset += 2
                    let low = try parseHex4()
                    guard (0xDC00..<0xE000).contains(low) else { throw fail("lone surrogate") }
                    let value = 0x10000 + ((high - 0xD800) << 10) + (low - 0xDC00)
                    guard let scalar = Unicode.Scalar(value) else { throw fail("invalid escape") }
                    return scalar
                }
                guard let scalar = Unicode.Scalar(high) else { throw fail("lone surrogate") }
                return scalar
            default:
                throw fail("invalid escape")
            }
        }

        mutating func parseHex4() throws(ParseError) -> UInt32 {
            guard bytes.count - offset >= 4 else { throw fail("invalid escape") }
            var value: UInt32 = 0
            for _ in 0..<4 {
                let byte = bytes[offset]
                let digit: UInt32
                switch byte {
                case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = UInt32(byte - UInt8(ascii: "0"))
                case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = UInt32(byte - UInt8(ascii: "a") + 10)
                case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = UInt32(byte - UInt8(ascii: "A") + 10)
                default: throw fail("invalid escape")
                }
                value = value * 16 + digit
                offset += 1
            }
            return value
        }
    }
}
