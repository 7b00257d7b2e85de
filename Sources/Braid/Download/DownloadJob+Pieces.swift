/// Resuming a download whose pieces are checked against digests: what an earlier run wrote but did not verify is
/// checked against the piece hashes instead of being trusted or fetched again blindly.
extension DownloadJob {
    /// Sets `plan`'s verified marks and progress from `manifest`: with piece hashes, every whole piece the earlier
    /// run wrote (synced or not, on this boot or another) is kept if it matches its hash; with only `Content-Digest`
    /// checks, only what was verified is kept.
    func resumePieces(
        _ plan: inout TransferPlan, manifest: Manifest, file: PartFile, length: Int64
    ) throws(BraidError) {
        guard let pieceHashes = options.pieceHashes else {
            guard manifest.segments.contains(where: { $0.verified != nil }) else { return }
            let verified = manifest.segments.map { $0.verified ?? 0 }
            plan.progress = zip(plan.progress, verified).map { min($0, $1) }
            plan.verified = plan.progress
            return
        }
        plan.pieceHashes = pieceHashes
        let pieceLength = pieceHashes.pieceLength
        if !manifest.segments.allSatisfy({ $0.start % pieceLength == 0 }) {
            // Planned without pieces: plan on their boundaries now, and keep what the pieces' hashes vouch for.
            plan.ranges = Self.aligned(freshPlan(length: length), to: pieceLength)
        }
        let written = manifest.segments.map { $0.start..<($0.start + $0.done) }
        let verified = manifest.segments.map { $0.start..<($0.start + ($0.verified ?? 0)) }
        // Per range, the pieces from its start that were written and not yet verified, up to the first gap.
        var candidates: [[PieceCheck]] = []
        for range in plan.ranges {
            var checks: [PieceCheck] = []
            for check in pieceHashes.checks(within: range, totalLength: length) {
                guard Self.inside(check.range, written) else { break }
                if !Self.inside(check.range, verified) { checks.append(check) }
            }
            candidates.append(checks)
        }
        let checked = candidates.reduce(0) { $0 + $1.count }
        var bad: [Int: [Range<Int64>]] = [:]
        if checked > 0 {
            let verifier = PieceVerifier(reading: try file.openForReading())
            for (index, checks) in candidates.enumerated() where !checks.isEmpty {
                verifier.submit(segment: index, checks: checks)
            }
            for result in verifier.waitForResults(count: candidates.filter { !$0.isEmpty }.count) {
                bad[result.segment] = result.bad
            }
            verifier.stop()
        }
        let (ranges, progress) = Self.keeping(
            plan.ranges, written: written, bad: bad, pieces: pieceHashes, length: length)
        guard ranges.count <= Manifest.maximumSegments else {
            throw BraidError(.manifest, "resuming would need more than \(Manifest.maximumSegments) segments")
        }
        plan.ranges = ranges
        plan.progress = progress
        plan.verified = progress
        if checked > 0 {
            let failed = bad.values.reduce(0) { $0 + $1.count }
            emit(
                .notice(
                    "checked \(checked) pieces an earlier run wrote but had not verified: "
                        + (failed == 0 ? "all match" : "\(failed) did not match and will be fetched again")))
        }
    }

    /// Each range keeps the pieces that match from its start; after a bad piece, the range is cut so that the
    /// good pieces after it are kept too, and only the bad one is fetched again.
    static func keeping(
        _ planned: [Range<Int64>], written: [Range<Int64>], bad: [Int: [Range<Int64>]], pieces: PieceHashes,
        length: Int64
    ) -> (ranges: [Range<Int64>], progress: [Int64]) {
        var ranges: [Range<Int64>] = []
        var progress: [Int64] = []
        for (index, range) in planned.enumerated() {
            var start = range.lowerBound
            var kept = start
            for check in pieces.checks(within: range, totalLength: length) {
                guard Self.inside(check.range, written) else { break }
                guard bad[index, default: []].contains(check.range) else {
                    kept = check.range.upperBound
                    continue
                }
                ranges.append(start..<check.range.upperBound)
                progress.append(kept - start)
                start = check.range.upperBound
                kept = start
            }
            if start < range.upperBound {
                ranges.append(start..<range.upperBound)
                progress.append(kept - start)
            }
        }
        return (ranges, progress)
    }

    /// Whether `piece` lies wholly within one of `intervals`.
    static func inside(_ piece: Range<Int64>, _ intervals: [Range<Int64>]) -> Bool {
        intervals.contains { $0.lowerBound <= piece.lowerBound && piece.upperBound <= $0.upperBound }
    }

    /// `ranges` with each boundary moved to the nearest multiple of `pieceLength`, so that every range is made of
    /// whole pieces; ranges that become empty disappear.
    static func aligned(_ ranges: [Range<Int64>], to pieceLength: Int64) -> [Range<Int64>] {
        guard let last = ranges.last?.upperBound, pieceLength > 0 else { return ranges }
        var boundaries: [Int64] = [0]
        for range in ranges.dropFirst() {
            let rounded = (range.lowerBound + pieceLength / 2) / pieceLength * pieceLength
            if rounded > boundaries[boundaries.count - 1] && rounded < last { boundaries.append(rounded) }
        }
        boundaries.append(last)
        return zip(boundaries, boundaries.dropFirst()).map { $0..<$1 }
    }
}
