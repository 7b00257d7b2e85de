/// Cutting a plan at slice boundaries: with cache peers, each slice is one peer's, so no segment may span two.
extension SegmentPlanner {
    /// `ranges` (contiguous, in file order) cut at every multiple of `unit`, with each range's `progress` (bytes
    /// done from its start; empty for none) and `verified` marks split to match: a prefix stays a prefix, so a
    /// range done up to the middle of a cut gives a done first part and a half-done second one.
    static func cut(
        _ ranges: [Range<Int64>],
        progress: [Int64],
        verified: [Int64]?,
        every unit: Int64
    ) -> (ranges: [Range<Int64>], progress: [Int64], verified: [Int64]?) {
        precondition(unit > 0, "slices have bytes")
        var cutRanges: [Range<Int64>] = []
        var cutProgress: [Int64] = []
        var cutVerified: [Int64]? = verified == nil ? nil : []
        for (index, range) in ranges.enumerated() {
            let done = progress.isEmpty ? 0 : progress[index]
            let vouched = verified?[index] ?? 0
            var start = range.lowerBound
            while start < range.upperBound {
                let end = min(range.upperBound, (start / unit + 1) * unit)
                let offset = start - range.lowerBound
                cutRanges.append(start..<end)
                cutProgress.append(min(end - start, max(0, done - offset)))
                cutVerified?.append(min(end - start, max(0, vouched - offset)))
                start = end
            }
        }
        return (cutRanges, progress.isEmpty ? [] : cutProgress, cutVerified)
    }
}
