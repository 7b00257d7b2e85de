import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// Writes a repair pass's bytes into `FILE.part` only where they differ from what is there, and remembers where.
///
/// A repair pass fetches the whole file again over the ordinary transfer; each chunk is compared with the kept
/// data at its offset, and only the differing bytes are rewritten, so a file with one bad range costs one write
/// of that range. Differences at most ``mergeGap`` apart make one range: within a chunk the equal bytes between
/// them are written back unchanged (cheaper than a write per run), and the report lists one range, not many.
final class RepairingSink: TransferSink {
    /// Differences at most this far apart make one range.
    static let mergeGap: Int64 = 4096

    private let file: PartFile
    private let rewritten: Mutex<[Range<Int64>]>

    /// A sink rewriting `file`, continuing a pass that has already rewritten `rewritten` (merged, in file order).
    init(file: PartFile, rewritten: [Range<Int64>] = []) {
        self.file = file
        self.rewritten = Mutex(rewritten)
    }

    /// The ranges rewritten so far, merged and in file order.
    var rewrittenRanges: [Range<Int64>] {
        rewritten.withLock { $0 }
    }

    func write(_ bytes: UnsafeRawBufferPointer, at offset: Int64) throws(BraidError) {
        guard !bytes.isEmpty else { return }
        let kept = UnsafeMutableRawBufferPointer.allocate(byteCount: bytes.count, alignment: 16)
        defer { kept.deallocate() }
        let read = try file.read(into: kept, at: offset)
        let differing = Self.differences(between: bytes, and: UnsafeRawBufferPointer(rebasing: kept[..<read]))
        for span in differing {
            try file.write(UnsafeRawBufferPointer(rebasing: bytes[span]), at: offset + Int64(span.lowerBound))
        }
        guard !differing.isEmpty else { return }
        rewritten.withLock { ranges in
            for span in differing {
                Self.insert(offset + Int64(span.lowerBound)..<offset + Int64(span.upperBound), into: &ranges)
            }
        }
    }

    /// The index ranges where `fetched` differs from `kept` (past `kept`'s end every byte differs), with
    /// differences at most ``mergeGap`` apart joined.
    static func differences(between fetched: UnsafeRawBufferPointer, and kept: UnsafeRawBufferPointer) -> [Range<Int>] {
        var spans: [Range<Int>] = []
        func add(_ span: Range<Int>) {
            if let last = spans.last, span.lowerBound - last.upperBound <= Int(mergeGap) {
                spans[spans.count - 1] = last.lowerBound..<span.upperBound
            } else {
                spans.append(span)
            }
        }
        let compared = min(fetched.count, kept.count)
        // Blocks that match, the usual case, are skipped with one memcmp each.
        let block = 4096
        var blockStart = 0
        while blockStart < compared {
            let blockEnd = min(blockStart + block, compared)
            if memcmp(fetched.baseAddress! + blockStart, kept.baseAddress! + blockStart, blockEnd - blockStart) != 0 {
                var index = blockStart
                while index < blockEnd {
                    guard fetched[index] != kept[index] else {
                        index += 1
                        continue
                    }
                    let start = index
                    while index < blockEnd && fetched[index] != kept[index] { index += 1 }
                    add(start..<index)
                }
            }
            blockStart = blockEnd
        }
        if compared < fetched.count { add(compared..<fetched.count) }
        return spans
    }

    /// Adds `range` to `ranges` (merged, in file order), joining every range it touches or comes within
    /// ``mergeGap`` of.
    static func insert(_ range: Range<Int64>, into ranges: inout [Range<Int64>]) {
        // The first range that ends at or after where `range` could join it.
        var low = 0
        var high = ranges.count
        while low < high {
            let middle = (low + high) / 2
            if ranges[middle].upperBound + mergeGap < range.lowerBound { low = middle + 1 } else { high = middle }
        }
        var merged = range
        var end = low
        while end < ranges.count, ranges[end].lowerBound <= merged.upperBound + mergeGap {
            merged = min(merged.lowerBound, ranges[end].lowerBound)..<max(merged.upperBound, ranges[end].upperBound)
            end += 1
        }
        ranges.replaceSubrange(low..<end, with: [merged])
    }
}
