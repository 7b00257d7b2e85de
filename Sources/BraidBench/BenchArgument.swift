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
        try ByteCount.parse(text, examples: "1048576, 512K, 64M, 2G or all")
    }
}

extension String {
    /// The string without leading and trailing spaces and tabs.
    fileprivate var trimmingSpaces: String {
        let isSpace: (Character) -> Bool = { $0 == " " || $0 == "\t" }
        return String(drop(while: isSpace).reversed().drop(while: isSpace).reversed())
    }
}
