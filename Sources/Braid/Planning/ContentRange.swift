/// A parsed `Content-Range: bytes first-last/complete` header (RFC 9110 §14.4).
///
/// Servers are untrusted: the parser accepts only the exact grammar, digits only, no overflow, `first <= last`
/// and `last < complete` when the complete length is known.
struct ContentRange: Equatable, Sendable {
    /// The range sent, `first...last`, or nil for the unsatisfied form `bytes */complete`.
    var range: ClosedRange<Int64>?
    /// The complete length of the representation, or nil for `*`.
    var completeLength: Int64?

    init(range: ClosedRange<Int64>?, completeLength: Int64?) {
        self.range = range
        self.completeLength = completeLength
    }

    init?(_ header: String) {
        let value = header.trimmingWhitespace()
        // Byte by byte: a list's every response has one, and `lowercased()` would copy it first.
        guard value.utf8.count <= 128, value.utf8.count >= 6,
            zip(value.utf8.prefix(6), "bytes ".utf8).allSatisfy({ $0 | 0x20 == $1 | 0x20 })
        else { return nil }
        let spec = value.dropFirst(6).trimmingWhitespace()
        let halves = spec.split(separator: "/", omittingEmptySubsequences: false)
        guard halves.count == 2 else { return nil }
        if halves[1] == "*" {
            completeLength = nil
        } else {
            guard let complete = Self.parseNumber(halves[1]) else { return nil }
            completeLength = complete
        }
        if halves[0] == "*" {
            guard completeLength != nil else { return nil }
            range = nil
            return
        }
        let bounds = halves[0].split(separator: "-", omittingEmptySubsequences: false)
        guard bounds.count == 2, let first = Self.parseNumber(bounds[0]), let last = Self.parseNumber(bounds[1]),
            first <= last
        else { return nil }
        if let complete = completeLength, last >= complete { return nil }
        range = first...last
    }

    private static func parseNumber(_ text: Substring) -> Int64? {
        guard !text.isEmpty, text.utf8.count <= 18, text.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }) else {
            return nil
        }
        return Int64(text)
    }
}
