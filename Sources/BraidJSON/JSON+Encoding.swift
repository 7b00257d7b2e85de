import Braid

extension JSON {
    /// How a `.number` is written.
    public enum NumberFormat: Sendable {
        /// The shortest text that reads back as the same `Double` (`0.5`, `1e-07`): the daemon's answers.
        case shortest
        /// Exactly `digits` digits after the point (`0.500`), as `Formatting.fixed` writes it: `braid --json`.
        case fixed(digits: Int)
    }

    /// Compact UTF-8 JSON text.
    public var bytes: [UInt8] {
        var out: [UInt8] = []
        write(to: &out)
        return out
    }

    /// Compact JSON text.
    public var text: String { text(numbers: .shortest) }

    /// Compact JSON text, its numbers written as `numbers` says.
    public func text(numbers: NumberFormat) -> String {
        var out: [UInt8] = []
        write(to: &out, numbers: numbers)
        return String(decoding: out, as: UTF8.self)
    }

    /// Appends the compact UTF-8 JSON text to `out`.
    package func write(to out: inout [UInt8], numbers: NumberFormat = .shortest) {
        switch self {
        case .null:
            out += "null".utf8
        case let .bool(value):
            out += (value ? "true" : "false").utf8
        case let .integer(value):
            out += String(value).utf8
        case let .number(value):
            out += Self.number(value, numbers).utf8
        case let .string(value):
            Self.writeString(value, to: &out)
        case let .array(values):
            out.append(UInt8(ascii: "["))
            for (index, value) in values.enumerated() {
                if index > 0 { out.append(UInt8(ascii: ",")) }
                value.write(to: &out, numbers: numbers)
            }
            out.append(UInt8(ascii: "]"))
        case let .object(members):
            out.append(UInt8(ascii: "{"))
            for (index, (key, value)) in members.enumerated() {
                if index > 0 { out.append(UInt8(ascii: ",")) }
                Self.writeString(key, to: &out)
                out.append(UInt8(ascii: ":"))
                value.write(to: &out, numbers: numbers)
            }
            out.append(UInt8(ascii: "}"))
        }
    }

    /// How many bytes `bytes` would have, counted without writing them: what an answer's size cap is checked
    /// against before the answer is built.
    package var encodedByteCount: Int {
        switch self {
        case .null: 4
        case let .bool(value): value ? 4 : 5
        case let .integer(value): String(value).utf8.count
        case let .number(value): Self.number(value, .shortest).utf8.count
        case let .string(value): Self.stringByteCount(value)
        case let .array(values): values.reduce(1 + max(values.count, 1)) { $0 + $1.encodedByteCount }
        case let .object(members):
            members.reduce(1 + max(members.count, 1)) { $0 + Self.stringByteCount($1.0) + 1 + $1.1.encodedByteCount }
        }
    }

    /// A number's text; JSON has no infinity or NaN, so those are `null`.
    private static func number(_ value: Double, _ format: NumberFormat) -> String {
        guard value.isFinite else { return "null" }
        return switch format {
        case .shortest: String(value)
        case let .fixed(digits): Formatting.fixed(value, digits: digits)
        }
    }

    private static func writeString(_ value: String, to out: inout [UInt8]) {
        out.append(UInt8(ascii: "\""))
        for scalar in value.unicodeScalars {
            if let escape = escape(scalar) {
                out += escape.utf8
            } else {
                UTF8.encode(scalar) { out.append($0) }
            }
        }
        out.append(UInt8(ascii: "\""))
    }

    /// The length of `writeString`'s output for `value`.
    private static func stringByteCount(_ value: String) -> Int {
        value.unicodeScalars.reduce(2) { count, scalar in count + (escape(scalar)?.utf8.count ?? UTF8.width(scalar)) }
    }

    /// What a character of a string is written as, or nil when it is written as itself: RFC 8259's escapes for the
    /// quote, the backslash and the control characters, and `\uXXXX` also for every character a terminal would not
    /// show as itself (`PrintableText.isUnprintable`: DEL, C1, bidirectional controls, zero-width characters, and
    /// U+2028 and U+2029, which also keeps the text a JavaScript literal). A JSON reader gets the same string back;
    /// a terminal showing the raw text shows the escape.
    private static func escape(_ scalar: Unicode.Scalar) -> String? {
        switch scalar {
        case "\"": #"\""#
        case "\\": #"\\"#
        case "\n": #"\n"#
        case "\r": #"\r"#
        case "\t": #"\t"#
        case "\u{08}": #"\b"#
        case "\u{0C}": #"\f"#
        case _ where scalar.value < 0x20 || PrintableText.isUnprintable(scalar):
            // As UTF-16 code units, so that a character past U+FFFF would be a surrogate pair.
            String(scalar).utf16.map { unit in
                let hex = String(unit, radix: 16)
                return #"\u"# + String(repeating: "0", count: 4 - hex.count) + hex
            }.joined()
        default: nil
        }
    }
}
