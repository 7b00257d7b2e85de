/// Parses `Retry-After`: delta-seconds or an HTTP-date (RFC 9110 §10.2.3).
enum RetryAfter {
    /// The seconds to wait, or nil if `value` is neither form; `wallClock` is the time it was received, in seconds
    /// since 1970, which a date is counted from.
    static func seconds(_ value: String, wallClock: Double) -> Double? {
        let text = value.trimmingWhitespace()
        // Delta-seconds of any size: a number past every integer type is a very long wait, not a missing one.
        if !text.isEmpty, text.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }) { return Double(text) }
        guard let date = HTTPDate.parse(text, wallClock: wallClock) else { return nil }
        return max(0, date - wallClock)
    }
}
