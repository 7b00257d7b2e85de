/// Splits a file into the byte ranges its connections will fetch.
///
/// More ranges than connections (`piecesPerConnection` each) are planned, handed out in file order: a slow
/// connection then holds up only a small piece, and the in-order prefix that a streaming digest needs advances
/// steadily instead of waiting for the first connection's whole share.
enum SegmentPlanner {
    static let minimumSegment: Int64 = 1 << 20
    static let maximumSegment: Int64 = 64 << 20

    static func plan(
        length: Int64,
        connections: Int,
        piecesPerConnection: Int = 4,
        minimumSegment: Int64 = minimumSegment,
        maximumSegment: Int64 = maximumSegment
    ) -> [Range<Int64>] {
        guard length > 0 else { return [] }
        let wanted = Int64(max(1, connections)) * Int64(max(1, piecesPerConnection))
        let bySize = max(1, length / max(1, minimumSegment))
        let alignment: Int64 = 4096
        // Boundaries are rounded down to `alignment`, so a segment may grow by up to that much: plan for it.
        let byMaximum = (length + maximumSegment - alignment - 1) / (maximumSegment - alignment)
        let count = max(1, max(min(wanted, bySize), byMaximum))
        var ranges: [Range<Int64>] = []
        ranges.reserveCapacity(Int(count))
        var start: Int64 = 0
        for index in 1...count {
            var end = index == count ? length : length / count * index + (length % count) * index / count
            if end < length { end = end / alignment * alignment }
            guard end > start else { continue }
            ranges.append(start..<end)
            start = end
        }
        if start < length {
            ranges.append(start..<length)
        }
        return ranges
    }
}
