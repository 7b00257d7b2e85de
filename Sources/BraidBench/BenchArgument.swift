import Braid

/// Parsers for the values `braid bench` takes on its command line, kept here so they can be tested without it.
public enum BenchArgument {
    /// Parses a comma-separated list of connection counts, `1,2,4,8`; spaces around the commas are allowed.
    ///
    /// Only the syntax is checked here (an empty text gives an empty list); ``BenchSchedule`` judges the counts.
    public static func connectionCounts(_ text: String) throws(BraidError) -> [Int] {
        let trimmed = text.trimmingSpaces
        guard !trimmed.isEmpty else { return [] }
        var counts: [Int] = []
        for field in trimmed.split(separator: ",", omittingEmptySubsequences: false) {
            let item = String(field).trimmingSpaces
            guard let count = Int(item) else {
                throw BraidError(.usage, "'\(item)' in '\(text)' is not a connection count; write a list like 1,2,4,8")
            }
            counts.append(count)
        }
        return counts
    }

    /// Parses the bytes each run fetches: `all` for the whole resource (nil), or a byte count as
    /// ``byteCount(_:)`` reads it.
    public static func byteLimit(_ text: String) throws(BraidError) -> Int64? {
        if text.trimmingSpaces.lowercased() == "all" { return nil }
        return try byteCount(text)
    }

    /// Parses a byte count: a plain number, or one with a binary unit, `K`, `M`, `G` or `T` (optionally followed
    /// by `iB` or `B`, any case), so `512K`, `64M`, `1.5GiB` and `4g` all work. Zero is allowed here; the command
    /// refuses it.
    public static func byteCount(_ text: String) throws(BraidError) -> Int64 {
        var number = text.trimmingSpaces.lowercased()
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
        guard !number.isEmpty, number.allSatisfy({ $0.isNumber || $0 == "." }), let value = Double(number) else {
            throw BraidError(.usage, "'\(text)' is not a byte count; write it like 1048576, 512K, 64M, 2G or all")
        }
        let bytes = (value * multiplier).rounded(.down)
        guard bytes < 0x1p63 else { throw BraidError(.usage, "'\(text)' is too large a byte count") }
        return Int64(bytes)
    }
}

extension String {
    /// The string without leading and trailing spaces and tabs.
    fileprivate var trimmingSpaces: String {
        let isSpace: (Character) -> Bool = { $0 == " " || $0 == "\t" }
        return String(drop(while: isSpace).reversed().drop(while: isSpace).reversed())
    }
}
