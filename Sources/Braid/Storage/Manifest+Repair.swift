/// What the manifest keeps about data that failed its digest and about a repair pass rewriting it.
extension Manifest {
    /// The most rewritten ranges a manifest may list; past it a manifest is refused rather than believed.
    static let maximumRewrittenRanges = 1_000_000

    /// The digest the complete data failed: which one, and what the data had instead.
    struct FailedDigest: Codable, Equatable, Sendable {
        var algorithm: DigestAlgorithm
        var expectedHex: String
        var actualHex: String
    }

    /// A repair pass under way: the whole file is fetched again and compared with `FILE.part`. Bytes up to each
    /// segment's progress were compared (and rewritten where they differed); the others are the kept data.
    struct Repair: Codable, Equatable, Sendable {
        /// The ranges rewritten so far, merged and in file order, so that a resumed pass still reports them.
        var rewritten: [ByteRange]
    }

    /// A half-open byte range `start..<end` of the file.
    struct ByteRange: Codable, Equatable, Sendable {
        var start: Int64
        var end: Int64

        init(_ range: Range<Int64>) {
            start = range.lowerBound
            end = range.upperBound
        }

        var range: Range<Int64> { start..<end }
    }

    /// Whether every segment is written to its end (trusting only what is durable on another boot).
    func isComplete(onBoot bootID: String) -> Bool {
        zip(segments, trustedProgress(onBoot: bootID)).allSatisfy { segment, done in done == segment.end - segment.start
        }
    }

    /// Checks the failed digest and the repair pass: well-formed digests, data that failed only when complete, and
    /// rewritten ranges that are non-empty, inside the file, and in order without overlap.
    func validateRepairState() throws(BraidError) {
        if let failedDigest {
            for hex in [failedDigest.expectedHex, failedDigest.actualHex] {
                guard let bytes = ExpectedDigest.decodeHex(hex), bytes.count == failedDigest.algorithm.byteCount else {
                    throw .manifest("its failed digest is malformed")
                }
            }
            guard repair != nil || segments.allSatisfy({ $0.done == $0.end - $0.start }) else {
                throw .manifest("it records a failed digest for data that is not complete")
            }
        }
        guard let repair else { return }
        guard repair.rewritten.count <= Self.maximumRewrittenRanges else {
            throw .manifest("it records too many rewritten ranges")
        }
        var previousEnd: Int64 = 0
        for range in repair.rewritten {
            guard range.start >= previousEnd, range.end > range.start, range.end <= length else {
                throw .manifest(
                    "its rewritten range \(range.start)..<\(range.end) is out of order or outside 0..<\(length)")
            }
            previousEnd = range.end
        }
    }
}
