import SystemPackage

#if canImport(Glibc)
    import Glibc
#endif

/// A range of the file and the digest its bytes must have: a piece of a Metalink's piece hashes, or the content
/// of one `206` response with a `Content-Digest`.
struct PieceCheck: Equatable, Sendable {
    var range: Range<Int64>
    var algorithm: DigestAlgorithm
    var digest: [UInt8]
}

/// Checks written pieces of the partial file against their digests, on a few threads of its own, so that pieces
/// are hashed in parallel and off the transfer's thread.
///
/// The transfer submits the checks of a segment once all its bytes are written; `takeResults()` hands back, per
/// segment, the ranges whose bytes did not match (or could not be read). The owner calls `stop()`, which drops
/// whatever is still queued and joins the threads.
final class PieceVerifier: @unchecked Sendable {
    // @unchecked: every mutable field is read and written only with `condition` locked, except `threads`, which
    // only the owner touches, in `submit` (first call) and `stop()`.
    private struct Job {
        var segment: Int
        var check: PieceCheck
    }

    private struct Tally {
        var outstanding: Int
        var bad: [Range<Int64>]
    }

    private let condition = ConditionLock()
    private var queue: [Job] = []
    private var queueHead = 0
    private var tallies: [Int: Tally] = [:]
    private var finished: [(segment: Int, bad: [Range<Int64>])] = []
    private var stopped = false

    private let file: FileDescriptor
    private let threadCount: Int
    private let blockSize: Int
    /// Called (on a verifier thread) when a segment's result is ready, to wake the transfer's poll.
    private let onResult: @Sendable () -> Void
    private var threads: [WorkerThread] = []

    /// - Parameters:
    ///   - file: a descriptor the verifier owns and closes, open for reading on the partial file.
    init(
        reading file: FileDescriptor, threads: Int = PieceVerifier.defaultThreads, blockSize: Int = 1 << 20,
        onResult: @escaping @Sendable () -> Void = {}
    ) {
        self.file = file
        threadCount = max(1, threads)
        self.blockSize = blockSize
        self.onResult = onResult
    }

    /// One thread per core, up to four: hashing a piece costs less than receiving it, so a few suffice.
    static var defaultThreads: Int {
        min(4, max(1, sysconf(Int32(_SC_NPROCESSORS_ONLN))))
    }

    /// Queues the checks of `segment`'s pieces; an empty list is reported as a match.
    func submit(segment: Int, checks: [PieceCheck]) {
        if threads.isEmpty {
            threads = (0..<threadCount).map { _ in WorkerThread { [self] in self.work() } }
            threads.forEach { $0.start() }
        }
        condition.lock()
        if checks.isEmpty {
            finished.append((segment, []))
            condition.broadcast()
        } else {
            // A segment submitted again before its result was taken adds its checks to the same result.
            tallies[segment, default: Tally(outstanding: 0, bad: [])].outstanding += checks.count
            queue += checks.map { Job(segment: segment, check: $0) }
            condition.broadcast()
        }
        condition.unlock()
        if checks.isEmpty { onResult() }
    }

    /// The segments whose checks all completed since the last call, with the ranges that did not match.
    func takeResults() -> [(segment: Int, bad: [Range<Int64>])] {
        condition.lock()
        defer { condition.unlock() }
        let results = finished
        finished = []
        return results
    }

    /// Blocks until `count` segments' results are ready (all submitted), and takes them.
    func waitForResults(count: Int) -> [(segment: Int, bad: [Range<Int64>])] {
        condition.lock()
        defer { condition.unlock() }
        while finished.count < count && !stopped { condition.wait() }
        let results = finished
        finished = []
        return results
    }

    /// Drops what is queued, waits for the checks being hashed, and joins the threads.
    func stop() {
        condition.lock()
        stopped = true
        condition.broadcast()
        condition.unlock()
        threads.forEach { $0.join() }
        threads = []
        try? file.close()
    }

    private func work() {
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: blockSize, alignment: 4096)
        defer { buffer.deallocate() }
        while true {
            condition.lock()
            while !stopped && queueHead == queue.count { condition.wait() }
            if stopped {
                condition.unlock()
                return
            }
            let job = queue[queueHead]
            queueHead += 1
            if queueHead == queue.count {
                queue = []
                queueHead = 0
            }
            condition.unlock()

            let matches = hashMatches(job.check, buffer: buffer)
            condition.lock()
            guard var tally = tallies[job.segment] else {
                condition.unlock()
                continue
            }
            tally.outstanding -= 1
            if !matches { tally.bad.append(job.check.range) }
            var done = false
            if tally.outstanding == 0 {
                tallies[job.segment] = nil
                finished.append((job.segment, tally.bad.sorted { $0.lowerBound < $1.lowerBound }))
                condition.broadcast()
                done = true
            } else {
                tallies[job.segment] = tally
            }
            condition.unlock()
            if done { onResult() }
        }
    }

    /// Whether the bytes of `check.range` in the file have its digest; a range that cannot be read does not.
    private func hashMatches(_ check: PieceCheck, buffer: UnsafeMutableRawBufferPointer) -> Bool {
        let hasher = Hasher(check.algorithm)
        var position = check.range.lowerBound
        while position < check.range.upperBound {
            let count = Int(min(Int64(buffer.count), check.range.upperBound - position))
            let chunk = UnsafeMutableRawBufferPointer(rebasing: buffer[0..<count])
            guard let read = try? file.read(fromAbsoluteOffset: position, into: chunk, retryOnInterrupt: true),
                read > 0
            else { return false }
            hasher.update(UnsafeRawBufferPointer(rebasing: chunk[0..<read]))
            position += Int64(read)
        }
        return hasher.finalize() == check.digest
    }
}

extension PieceHashes {
    /// The checks of the pieces that lie entirely inside `range` of a file of `totalLength` bytes.
    func checks(within range: Range<Int64>, totalLength: Int64) -> [PieceCheck] {
        pieces(within: range, totalLength: totalLength).map { index in
            PieceCheck(
                range: self.range(ofPiece: index, totalLength: totalLength), algorithm: algorithm,
                digest: digests[index])
        }
    }
}
