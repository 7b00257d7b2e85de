/// Splits a file into the byte ranges its connections will fetch, in file order: about `piecesPerConnection` per
/// connection, from `minimumSegment` to `maximumSegment` and aligned to 4 KiB, smaller at the start and the end, at
/// most `maximumSegments` in all. Any `Int64` length plans without overflow; a download never plans more than
/// `RemoteResource.maximumLength`.
///
/// Why this shape: `docs/design/transfer.md#plan`.
enum SegmentPlanner {
    static let minimumSegment: Int64 = 1 << 20
    static let maximumSegment: Int64 = 64 << 20
    static let maximumSegments = Manifest.maximumSegments / 10
    private static let alignment: Int64 = 4096

    static func plan(
        length: Int64,
        connections: Int,
        piecesPerConnection: Int = 4,
        minimumSegment: Int64 = minimumSegment,
        maximumSegment: Int64 = maximumSegment
    ) -> [Range<Int64>] {
        guard length > 0 else { return [] }
        let limit = Int64(maximumSegments)
        let connections = min(max(1, connections), maximumSegments)
        let pieces = min(max(1, piecesPerConnection), maximumSegments)
        let minimumSegment = max(alignment, minimumSegment)
        // The piece size that keeps the whole plan within the limit, rounded up to the alignment.
        let fitting = length / limit + alignment
        let maximumSegment = max(minimumSegment, maximumSegment, fitting / alignment * alignment)
        let even = evenPlan(
            of: 0..<length,
            pieces: min(limit, Int64(connections) * Int64(pieces)),
            minimumSegment: minimumSegment,
            maximumSegment: maximumSegment
        )
        guard pieces > 1, let typical = even.first.map({ Int64($0.count) }) else { return even }

        var ramp: [Int64] = []
        var size = minimumSegment
        while size <= typical / 2 {
            ramp += Array(repeating: size, count: connections)
            size *= 2
        }
        let rampLength = ramp.reduce(0, +)
        // Only worth it when the ramps leave most of the file to full-size pieces, and the plan within the limit.
        guard !ramp.isEmpty, rampLength <= length / 4, Int64(ramp.count) * 2 + Int64(even.count) <= limit else {
            return even
        }

        var ranges: [Range<Int64>] = []
        var start: Int64 = 0
        for piece in ramp {
            ranges.append(start..<start + piece)
            start += piece
        }
        // The taper's boundaries stay aligned; its last piece takes the few odd bytes at the end of the file.
        let middleEnd = (length - rampLength) / alignment * alignment
        ranges += evenPlan(
            of: start..<middleEnd,
            pieces: max(1, (middleEnd - start + typical - 1) / typical),
            minimumSegment: minimumSegment,
            maximumSegment: maximumSegment
        )
        start = middleEnd
        for piece in ramp.reversed().dropLast() {
            ranges.append(start..<start + piece)
            start += piece
        }
        ranges.append(start..<length)
        return ranges
    }

    /// `range` in about `pieces` nearly equal pieces, each within the bounds, boundaries aligned to 4 KiB.
    private static func evenPlan(
        of range: Range<Int64>,
        pieces wanted: Int64,
        minimumSegment: Int64,
        maximumSegment: Int64
    ) -> [Range<Int64>] {
        let length = Int64(range.count)
        guard length > 0 else { return [] }
        let bySize = max(1, length / max(1, minimumSegment))
        let byMaximum = length / maximumSegment + (length % maximumSegment == 0 ? 0 : 1)
        var count = max(1, max(min(wanted, bySize), byMaximum))
        while true {
            let ranges = split(range, into: count)
            // Rounding boundaries down to the alignment can push a piece just past the maximum: one more piece.
            if ranges.allSatisfy({ Int64($0.count) <= maximumSegment }) { return ranges }
            count += 1
        }
    }

    private static func split(_ range: Range<Int64>, into count: Int64) -> [Range<Int64>] {
        let length = Int64(range.count)
        var ranges: [Range<Int64>] = []
        ranges.reserveCapacity(Int(count))
        var start = range.lowerBound
        for index in 1...count {
            var end = range.lowerBound + length / count * index + (length % count) * index / count
            if index < count { end = end / alignment * alignment }
            guard end > start else { continue }
            ranges.append(start..<end)
            start = end
        }
        if start < range.upperBound {
            ranges.append(start..<range.upperBound)
        }
        return ranges
    }
}
