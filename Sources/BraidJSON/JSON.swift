/// A JSON value, as the daemon reads it from clients and writes its answers, and as `braid --json` writes its
/// events: one type, one writer (`JSON+Encoding.swift`) and one reader through Foundation's `JSONDecoder`
/// (`JSON+Decoding.swift`).
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

    /// The string, or nil for a value that is not one.
    public var stringValue: String? {
        if case let .string(value) = self { return value }
        return nil
    }

    /// The elements, or nil for a value that is not an array.
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
}
