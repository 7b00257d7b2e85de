/// What a streamed download (`-o -`, `--extract`, `Download.chunks`) records besides its segments.
///
/// Design: `docs/design/streaming.md#resuming-a-stream`.
extension Manifest {
    struct Stream: Codable, Equatable, Sendable {
        /// The bytes from 0 that are gone from `FILE.part` (freed once the reader and the digest had them). The
        /// segments claim none of them, so a Braid that knows nothing of streams fetches them again too.
        var released: Int64
        /// How far an archive is unpacked, when one is.
        var extraction: Extraction? = nil
    }

    /// How far an archive is unpacked: its first `entries` entries are in place below `directory`.
    struct Extraction: Codable, Equatable, Sendable {
        /// The directory as the user gave it: progress below another directory is no progress.
        var directory: String
        var entries: Int
        /// Where the header of the last entry read starts, when the archive can be read again from there (an
        /// uncompressed tar); nil when it must be read from its first byte (a compressed stream, a zip).
        var resumeOffset: Int64?
        /// The index of the entry whose header is at `resumeOffset`.
        var resumeEntry: Int?
    }

    /// `segments` claiming nothing below `released`: a segment across it is split there, the part below it
    /// empty.
    static func segments(_ segments: [Segment], releasedBelow released: Int64) -> [Segment] {
        guard released > 0 else { return segments }
        var result: [Segment] = []
        result.reserveCapacity(segments.count + 1)
        for segment in segments {
            if segment.end <= released {
                result.append(
                    Segment(
                        start: segment.start, end: segment.end, done: 0, durable: 0,
                        verified: segment.verified.map { _ in 0 }))
            } else if segment.start < released {
                let cut = released - segment.start
                result.append(
                    Segment(
                        start: segment.start, end: released, done: 0, durable: 0,
                        verified: segment.verified.map { _ in 0 }))
                result.append(
                    Segment(
                        start: released, end: segment.end, done: max(0, segment.done - cut),
                        durable: max(0, segment.durable - cut), verified: segment.verified.map { max(0, $0 - cut) }))
            } else {
                result.append(segment)
            }
        }
        return result
    }
}
