/// Decides which byte range each connection fetches next, when a failed range is retried, and when an idle
/// connection takes over half of another's remaining work.
///
/// A pure value: events come in as mutating calls, decisions go out as return values, and the transfer engine
/// performs them. It never touches the network or the disk, so it can be tested event by event.
///
/// Segments are handed out in file order, so the in-order prefix of the file (what a streaming digest can
/// consume) advances steadily. Bytes join that prefix only once they are *confirmed*: the response that carried
/// them ended without being thrown away (or they were recorded by an earlier run). An attempt that turns out
/// untrustworthy is discarded before any of its bytes were confirmed, so whatever rewrites them later is what
/// the digest reads. A segment's life:
/// - `waiting` → `active` (a connection starts it) or stays `waiting` until its retry time;
/// - `active` → `complete` (all bytes flushed), or `waiting` (failed, to be retried from its last flushed byte);
/// - `complete` is final.
struct SegmentScheduler: Sendable {
    enum State: Equatable, Sendable {
        case waiting(notBefore: Double)
        case active(connection: Int)
        case complete
    }

    struct Segment: Equatable, Sendable {
        var start: Int64
        /// Exclusive; an active segment's end moves down when an idle connection steals its second half.
        var end: Int64
        /// Bytes received from `start` by the current attempt, including bytes not yet flushed.
        var received: Int64
        /// Bytes written to the partial file from `start`.
        var flushed: Int64
        /// Bytes synced to disk from `start`.
        var durable: Int64
        /// Bytes from `start` that a finished attempt vouched for: never rewritten, and all the verifier may read.
        /// Equal to `flushed` whenever the segment is not active.
        var confirmed: Int64
        var state: State
        /// Failures in a row that moved nothing forward.
        var failures: Int = 0
        /// `flushed` when the current attempt started, to tell progress from a fruitless attempt.
        var flushedAtAttemptStart: Int64 = 0

        var length: Int64 { end - start }
        var remaining: Int64 { end - start - received }
    }

    /// What the engine should do after a transfer of a segment ended.
    enum EndAction: Equatable, Sendable {
        /// The segment is complete.
        case completed
        /// The segment will be tried again after `delay` seconds.
        case retry(delay: Double)
        /// Retrying cannot help or the attempts ran out: the download fails with this error.
        case fail(BraidError.Code, String)
    }

    private(set) var segments: [Segment]
    /// Segment indices in file order.
    private(set) var order: [Int]
    /// How many connections may be active; lowered when the server refuses extra connections.
    private(set) var connectionLimit: Int
    private(set) var activeCount = 0
    /// The smallest piece an idle connection takes from another: below it, a new request is not worth it.
    let minimumSteal: Int64
    /// The most segments there may be: a steal that would make more is refused, so that however many steals
    /// happen across resumes, the manifest a checkpoint writes stays one that Braid will read back.
    let segmentLimit: Int
    let retryPolicy: RetryPolicy
    /// Where in `order` the first incomplete segment is, so the prefix is found without a full scan.
    private var prefixCursor = 0

    /// - Parameters:
    ///   - ranges: the plan, contiguous and in file order.
    ///   - progress: bytes already on disk at the start of each range (from a manifest), or empty.
    init(
        ranges: [Range<Int64>],
        progress: [Int64] = [],
        connectionLimit: Int,
        minimumSteal: Int64 = 1 << 20,
        segmentLimit: Int = Manifest.maximumSegments,
        retryPolicy: RetryPolicy = RetryPolicy()
    ) {
        precondition(progress.isEmpty || progress.count == ranges.count, "progress must match the plan")
        segments = ranges.enumerated().map { index, range in
            let done = progress.isEmpty ? 0 : min(max(0, progress[index]), Int64(range.count))
            return Segment(
                start: range.lowerBound,
                end: range.upperBound,
                received: done,
                flushed: done,
                durable: done,
                confirmed: done,
                state: done == Int64(range.count) ? .complete : .waiting(notBefore: 0),
                flushedAtAttemptStart: done
            )
        }
        order = Array(segments.indices)
        self.connectionLimit = max(1, connectionLimit)
        self.minimumSteal = max(1, minimumSteal)
        self.segmentLimit = segmentLimit
        self.retryPolicy = retryPolicy
        advancePrefixCursor()
    }

    // MARK: Queries

    var isComplete: Bool { prefixCursor == order.count && activeCount == 0 }

    /// The number of confirmed bytes from byte 0 without a gap: what a streaming digest may read. It never moves
    /// back, and no byte below it is ever written again.
    var confirmedPrefix: Int64 {
        guard prefixCursor < order.count else { return totalLength }
        let segment = segments[order[prefixCursor]]
        return segment.start + segment.confirmed
    }

    var totalLength: Int64 { order.last.map { segments[$0].end } ?? 0 }

    var flushedBytes: Int64 { segments.reduce(0) { $0 + $1.flushed } }

    /// The segments in file order as a checkpoint records them in the manifest.
    var manifestSegments: [Manifest.Segment] {
        order.map { index in
            let segment = segments[index]
            return Manifest.Segment(
                start: segment.start, end: segment.end, done: segment.flushed, durable: segment.durable)
        }
    }

    /// Whether a connection could start something now.
    func hasWork(now: Double) -> Bool {
        guard activeCount < connectionLimit else { return false }
        return nextWaiting(now: now) != nil || stealCandidate() != nil
    }

    /// When the earliest waiting retry becomes due, if one is waiting.
    var nextRetryTime: Double? {
        segments.compactMap { segment -> Double? in
            if case let .waiting(notBefore) = segment.state { return notBefore }
            return nil
        }.min()
    }

    // MARK: Events

    /// Lets `limit` connections be active from now on. Lowering it lets the connections above it finish what they
    /// fetch; they are given nothing more.
    mutating func setConnectionLimit(_ limit: Int) {
        connectionLimit = max(1, limit)
    }

    /// A connection is idle: returns the segment it should fetch, `segments[i].start + flushed ..< end`, or nil.
    ///
    /// Waiting segments go first, in file order; with none left, the connection steals the second half of the
    /// active segment with the most bytes still to come.
    ///
    /// - Parameter pieceBytes: when requests are costly (their first byte takes long), how much one request may
    ///   fetch: the waiting segments that follow the one assigned are joined to it up to that size, and nothing
    ///   smaller than a quarter of it is stolen, so that fewer requests are made.
    mutating func assign(connection: Int, now: Double, pieceBytes: Int64? = nil) -> Int? {
        guard activeCount < connectionLimit else { return nil }
        if let index = nextWaiting(now: now) {
            if let pieceBytes {
                // Leave every connection that may still start a share of what waits.
                let waiting = order[prefixCursor...].reduce(Int64(0)) { sum, index in
                    if case .waiting = segments[index].state { return sum + segments[index].remaining }
                    return sum
                }
                let share = waiting / Int64(max(1, connectionLimit - activeCount))
                join(followersOf: index, upTo: min(pieceBytes, max(share, segments[index].remaining)), now: now)
            }
            activate(index, connection: connection)
            return index
        }
        // A costly request is worth it only for a good share of a piece.
        guard let victim = stealCandidate(minimum: max(minimumSteal, (pieceBytes ?? 0) / 4)) else { return nil }
        let segment = segments[victim]
        let position = segment.start + segment.received
        var split = position + segment.remaining / 2
        let alignment: Int64 = 64 << 10
        let aligned = split / alignment * alignment + (split % alignment == 0 ? 0 : alignment)
        if aligned < segment.end && aligned - position >= minimumSteal { split = aligned }
        let stolen = Segment(
            start: split,
            end: segment.end,
            received: 0,
            flushed: 0,
            durable: 0,
            confirmed: 0,
            state: .waiting(notBefore: 0)
        )
        segments[victim].end = split
        segments.append(stolen)
        let newIndex = segments.count - 1
        order.insert(newIndex, at: order.firstIndex(of: victim)! + 1)
        activate(newIndex, connection: connection)
        return newIndex
    }

    /// Bytes of a segment arrived from the network (they may still sit in a buffer).
    mutating func received(segment index: Int, bytes: Int64) {
        segments[index].received += bytes
    }

    /// Bytes of a segment reached the partial file; they count towards the prefix once their attempt ends.
    mutating func flushed(segment index: Int, bytes: Int64) {
        segments[index].flushed += bytes
    }

    /// Everything flushed up to now has been synced to disk (the values captured before the sync started).
    mutating func synced(flushedAtSyncStart snapshot: [Int64]) {
        for (index, value) in snapshot.enumerated() where index < segments.count {
            segments[index].durable = max(segments[index].durable, min(value, segments[index].flushed))
        }
    }

    /// A transfer of a segment ended; `failure` is nil when it ended cleanly.
    mutating func ended(segment index: Int, failure: FailureKind?, now: Double, random: Double) -> EndAction {
        guard case .active = segments[index].state else {
            preconditionFailure("Invalid state: segment \(index) ended while \(segments[index].state)")
        }
        activeCount -= 1
        var segment = segments[index]
        segment.received = segment.flushed
        // Whatever the attempt left in place (its bytes were not discarded) is now vouched for.
        segment.confirmed = segment.flushed
        segments[index] = segment
        advancePrefixCursor()
        if segment.flushed >= segment.length {
            segment.state = .complete
            segments[index] = segment
            return .completed
        }
        let madeProgress = segment.flushed > segment.flushedAtAttemptStart
        segment.failures = madeProgress ? 1 : segment.failures + 1
        let kind =
            failure
            ?? .transient(.protocolViolation, "the response ended early", retryAfter: nil, refusedConnection: false)
        switch kind {
        case let .fatal(code, message):
            segment.state = .waiting(notBefore: .infinity)
            segments[index] = segment
            return .fail(code, message)
        case let .transient(code, message, retryAfter, refusedConnection):
            if refusedConnection && activeCount > 0 {
                // The server turns away extra connections: live with the ones it accepts.
                connectionLimit = max(1, activeCount)
            }
            if segment.failures >= retryPolicy.maximumAttempts {
                segment.state = .waiting(notBefore: .infinity)
                segments[index] = segment
                return .fail(code, "\(message); gave up after \(segment.failures) attempts")
            }
            if let retryAfter, retryAfter > retryPolicy.maximumRetryAfter {
                segment.state = .waiting(notBefore: .infinity)
                segments[index] = segment
                return .fail(code, RetryPolicy.refusal(message, retryAfter: retryAfter))
            }
            let delay = retryPolicy.delay(afterAttempt: segment.failures, retryAfter: retryAfter, random: random)
            segment.state = .waiting(notBefore: now + delay)
            segments[index] = segment
            return .retry(delay: delay)
        }
    }

    /// A transfer of a segment ended for a reason that is not the segment's (the URL it went to expired, and
    /// its source is being renewed): what it wrote stays, and the rest waits for the next connection without a
    /// failure counted or a backoff.
    mutating func requeue(segment index: Int, now: Double) {
        guard case .active = segments[index].state else {
            preconditionFailure("Invalid state: segment \(index) requeued while \(segments[index].state)")
        }
        activeCount -= 1
        segments[index].received = segments[index].flushed
        segments[index].confirmed = segments[index].flushed
        advancePrefixCursor()
        segments[index].state =
            segments[index].flushed >= segments[index].length ? .complete : .waiting(notBefore: now)
    }

    /// A stream of unknown length ended cleanly: the segment ends where its bytes did.
    mutating func endUnknownLength(segment index: Int) {
        segments[index].end = segments[index].start + segments[index].flushed
        segments[index].received = segments[index].flushed
    }

    /// Forgets an attempt's bytes after the response turned out untrustworthy: they will be fetched again. None
    /// of them was confirmed, so the verifier has not read them.
    mutating func discardAttempt(segment index: Int) {
        segments[index].flushed = segments[index].flushedAtAttemptStart
        segments[index].received = segments[index].flushed
        segments[index].durable = min(segments[index].durable, segments[index].flushed)
    }

    // MARK: Helpers

    /// Joins the untouched waiting segments that follow `index` in the file to it, while the bytes it still has to
    /// fetch stay within `pieceBytes`. A joined segment leaves the plan: it stays in `segments` (indices do not
    /// move) as an empty, complete one, outside `order`.
    private mutating func join(followersOf index: Int, upTo pieceBytes: Int64, now: Double) {
        // Removing followers leaves the segment's own place in `order` where it is.
        guard let position = order.firstIndex(of: index) else { return }
        while position + 1 < order.count {
            let next = order[position + 1]
            guard case let .waiting(notBefore) = segments[next].state, notBefore <= now, segments[next].flushed == 0,
                segments[next].start == segments[index].end,
                segments[index].remaining + segments[next].length <= pieceBytes
            else { break }
            segments[index].end = segments[next].end
            let end = segments[next].end
            segments[next] = Segment(
                start: end, end: end, received: 0, flushed: 0, durable: 0, confirmed: 0, state: .complete)
            order.remove(at: position + 1)
        }
    }

    private mutating func activate(_ index: Int, connection: Int) {
        segments[index].state = .active(connection: connection)
        segments[index].received = segments[index].flushed
        segments[index].flushedAtAttemptStart = segments[index].flushed
        activeCount += 1
    }

    private func nextWaiting(now: Double) -> Int? {
        for index in order[prefixCursor...] {
            if case let .waiting(notBefore) = segments[index].state, notBefore <= now { return index }
        }
        return nil
    }

    /// The active segment with the most bytes still to come, if half of them is at least `minimum`.
    private func stealCandidate(minimum: Int64? = nil) -> Int? {
        guard order.count < segmentLimit else { return nil }
        var best: Int?
        var bestRemaining = 2 * (minimum ?? minimumSteal) - 1
        for index in order[prefixCursor...] {
            guard case .active = segments[index].state else { continue }
            let remaining = segments[index].remaining
            if remaining > bestRemaining {
                best = index
                bestRemaining = remaining
            }
        }
        return best
    }

    private mutating func advancePrefixCursor() {
        while prefixCursor < order.count,
            segments[order[prefixCursor]].confirmed >= segments[order[prefixCursor]].length
        {
            prefixCursor += 1
        }
    }
}
