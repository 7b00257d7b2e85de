import Braid
import BraidDaemon

/// A JSON value that keeps its keys in the order written, so that every event line starts with `"event"`.
///
/// Written by hand rather than with `JSONEncoder`: the events are small, their key order is part of the
/// documented format, and numbers come out in a fixed, locale-free form.
enum JSONValue: Sendable {
    case null
    case bool(Bool)
    case integer(Int64)
    /// A number written with three digits after the point.
    case number(Double)
    case string(String)
    case array([JSONValue])
    case object([(String, JSONValue)])

    /// A string, or `null` for nil.
    static func string(_ value: String?) -> JSONValue { value.map { .string($0) } ?? .null }

    /// An integer, or `null` for nil.
    static func integer(_ value: Int64?) -> JSONValue { value.map { .integer($0) } ?? .null }

    /// A number, or `null` for nil.
    static func number(_ value: Double?) -> JSONValue { value.map { .number($0) } ?? .null }

    /// The value as compact JSON text on one line.
    var text: String {
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
            out += value.isFinite ? Formatting.fixed(value, digits: 3) : "null"
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

    /// RFC 8259 string escaping, as the daemon writes its JSON: quote, backslash and control characters; U+2028
    /// and U+2029 too, so that a line is also a valid JavaScript literal.
    private static func writeString(_ value: String, to out: inout String) {
        out += JSON.string(value).text
    }
}
