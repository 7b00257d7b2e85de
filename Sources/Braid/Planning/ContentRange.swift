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
        // Byte by byte, with no copies: a list's every response has one. Only ASCII is part of the grammar.
        var header = header
        guard let parsed = header.withUTF8({ Self.parse($0) }) else { return nil }
        self = parsed
    }

    private static func parse(_ bytes: UnsafeBufferPointer<UInt8>) -> ContentRange? {
        let value = bytes.trimmingASCIISpace(bytes.indices)
        guard value.count <= 128, value.count >= 6,
            zip(bytes[value.prefix(6)], "bytes ".utf8).allSatisfy({ $0 | 0x20 == $1 | 0x20 })
        else { return nil }
        let spec = bytes[bytes.trimmingASCIISpace(value.dropFirst(6))]
        guard let slash = spec.firstIndex(of: UInt8(ascii: "/")), !spec[(slash + 1)...].contains(UInt8(ascii: "/"))
        else { return nil }
        let (sent, complete) = (spec[..<slash], spec[(slash + 1)...])
        let completeLength: Int64?
        if complete.elementsEqual("*".utf8) {
            completeLength = nil
        } else {
            guard let length = parseNumber(complete) else { return nil }
            completeLength = length
        }
        if sent.elementsEqual("*".utf8) {
            guard completeLength != nil else { return nil }
            return ContentRange(range: nil, completeLength: completeLength)
        }
        guard let dash = sent.firstIndex(of: UInt8(ascii: "-")), let first = parseNumber(sent[..<dash]),
            let last = parseNumber(sent[(dash + 1)...]), first <= last
        else { return nil }
        if let completeLength, last >= completeLength { return nil }
        return ContentRange(range: first...last, completeLength: completeLength)
    }

    /// 1 to 18 ASCII digits, which no Int64 overflows.
    private static func parseNumber(_ digits: Slice<UnsafeBufferPointer<UInt8>>) -> Int64? {
        guard !digits.isEmpty, digits.count <= 18 else { return nil }
        var value: Int64 = 0
        for byte in digits {
            guard byte >= 0x30 && byte <= 0x39 else { return nil }
            value = value * 10 + Int64(byte - 0x30)
        }
        return value
    }
}
