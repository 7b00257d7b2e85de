/// The single byte range a `Range` header asks for (RFC 9110 §14.1.2).
///
/// Several ranges, other units and syntactically invalid values are not represented: the server then
/// ignores `Range` and answers `200` with the whole body, which RFC 9110 allows.
enum ByteRangeSpec: Hashable {
    /// `bytes=first-last` or, with `last` absent, `bytes=first-`.
    case from(UInt64, through: UInt64?)
    /// `bytes=-length`: the last `length` bytes.
    case suffix(UInt64)

    /// Parses a `Range` header value, or `nil` when it must be ignored.
    init?(header: String) {
        guard header.hasPrefix("bytes="), !header.contains(",") else { return nil }
        let spec = header.dropFirst("bytes=".count)
        guard let dash = spec.firstIndex(of: "-") else { return nil }
        let first = spec[..<dash]
        let last = spec[spec.index(after: dash)...]
        if first.isEmpty {
            guard let length = UInt64(last) else { return nil }
            self = .suffix(length)
            return
        }
        guard let start = UInt64(first) else { return nil }
        if last.isEmpty {
            self = .from(start, through: nil)
            return
        }
        guard let end = UInt64(last), end >= start else { return nil }
        self = .from(start, through: end)
    }

    /// The bytes selected from a representation of `size` bytes, or `nil` when the range is unsatisfiable
    /// (answered with `416`).
    ///
    /// A suffix of an empty representation is satisfiable but selects nothing; the caller answers that with
    /// the whole (empty) body.
    func resolve(size: UInt64) -> Range<UInt64>? {
        switch self {
        case .from(let start, let end):
            guard start < size else { return nil }
            return start..<(min(end ?? UInt64.max - 1, size - 1) + 1)
        case .suffix(let length):
            guard length > 0 else { return nil }
            return (size - min(length, size))..<size
        }
    }
}
