/// Byte counts and rates as people write them on a command line or in a list: `1048576`, `512K`, `64M`, `1.5G`,
/// with binary units (`K` = 1024) as curl, wget and aria2 read them.
public enum ByteCount {
    /// Parses a byte count: a plain number, or one with a binary unit, `K`, `M`, `G` or `T` (optionally followed by
    /// `iB` or `B`, any case), so `512K`, `64M`, `1.5GiB` and `4g` all work.
    ///
    /// - Parameter examples: how the error message suggests writing it, as in "1048576, 512K, 64M or 2G".
    public static func parse(_ text: String, examples: String) throws(BraidError) -> Int64 {
        guard let bytes = bytes(text) else {
            throw BraidError(.usage, "'\(text)' is not a byte count; write it like \(examples)")
        }
        guard bytes < 0x1p63 else { throw BraidError(.usage, "'\(text)' is too large a byte count") }
        return Int64(bytes)
    }

    /// Parses a rate in bytes a second, as `--limit-rate` takes it: a byte count (`512K`, `10M`, `1.5G`),
    /// optionally followed by `/s`. Zero means no limit (nil), as it does for curl and aria2.
    public static func rate(_ text: String) throws(BraidError) -> Int64? {
        var trimmed = text.trimmingWhitespace()
        if trimmed.lowercased().hasSuffix("/s") { trimmed.removeLast(2) }
        guard let bytes = bytes(trimmed), bytes < 0x1p63 else {
            throw BraidError(
                .usage, "'\(text)' is not a rate; write it in bytes a second like 512K, 10M or 1.5G",
                option: .rateLimit)
        }
        return bytes == 0 ? nil : Int64(bytes)
    }

    /// The number of bytes `text` writes, rounded down; nil when it is not a byte count.
    private static func bytes(_ text: String) -> Double? {
        var number = text.trimmingWhitespace().lowercased()
        if number.hasSuffix("ib") {
            number.removeLast(2)
        } else if number.hasSuffix("b") {
            number.removeLast()
        }
        var multiplier: Double = 1
        if let unit = number.last, let power = ["k": 10, "m": 20, "g": 30, "t": 40][unit] {
            number.removeLast()
            multiplier = Double(Int64(1) << power)
        }
        guard !number.isEmpty, number.allSatisfy({ $0.isASCII && ($0.isNumber || $0 == ".") }),
            let value = Double(number)
        else { return nil }
        return (value * multiplier).rounded(.down)
    }
}
