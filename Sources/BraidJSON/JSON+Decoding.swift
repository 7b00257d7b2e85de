#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// JSON read through Foundation's `JSONDecoder`: the network-facing parser is the one millions of programs already
/// use (strict UTF-8, no `NaN`, numbers that do not fit refused, nesting past 512 levels refused before any value
/// is built), and this conformance adds a depth limit of its own so that a hostile request's tree stays small.
extension JSON: Decodable {
    /// Why a text is not JSON this reader accepts.
    public struct ParseError: Error, Equatable, CustomStringConvertible {
        public let reason: String
        public var description: String { reason }
    }

    /// Nesting deeper than this, counted from the document's top, is refused: aria2's requests are four levels
    /// deep, a `system.multicall` in a batch seven.
    public static let maximumDepth = 32

    /// Parses one JSON text (RFC 8259), with nothing but white space around it.
    public init(parsing bytes: some Collection<UInt8>) throws(ParseError) {
        do {
            self = try JSONDecoder().decode(JSON.self, from: Data(bytes))
        } catch {
            throw ParseError(reason: "not JSON: \(error)")
        }
    }

    /// Reads a value at any depth below `maximumDepth`, as a part of a larger `Decodable` (a JSON-RPC request).
    public init(from decoder: any Decoder) throws {
        guard decoder.codingPath.count < Self.maximumDepth else {
            throw DecodingError.dataCorrupted(
                .init(codingPath: [], debugDescription: "nested deeper than \(Self.maximumDepth) levels"))
        }
        if let object = try? decoder.container(keyedBy: AnyKey.self) {
            var members: [(String, JSON)] = []
            for key in object.allKeys.sorted(by: { $0.stringValue < $1.stringValue }) {
                members.append((key.stringValue, try object.decode(JSON.self, forKey: key)))
            }
            self = .object(members)
        } else if var array = try? decoder.unkeyedContainer() {
            var values: [JSON] = []
            while !array.isAtEnd { values.append(try array.decode(JSON.self)) }
            self = .array(values)
        } else {
            let value = try decoder.singleValueContainer()
            if value.decodeNil() {
                self = .null
            } else if let string = try? value.decode(String.self) {
                self = .string(string)
            } else if let bool = try? value.decode(Bool.self) {
                self = .bool(bool)
            } else if let integer = try? value.decode(Int64.self) {
                self = .integer(integer)
            } else {
                self = .number(try value.decode(Double.self))
            }
        }
    }
}

/// A coding key for any member name: JSON-RPC objects are read by the names they carry.
package struct AnyKey: CodingKey {
    package let stringValue: String
    package var intValue: Int? { nil }

    package init(_ name: String) { stringValue = name }
    package init(stringValue: String) { self.stringValue = stringValue }
    package init?(intValue: Int) { nil }
}
