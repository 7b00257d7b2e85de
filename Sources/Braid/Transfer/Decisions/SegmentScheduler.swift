/// Decides which byte range each connection fetches next (in file order), when a failed range is retried, and when
/// an idle connection takes over half of another's remaining work: a pure value (events in as mutating calls,
/// decisions out as return values) that never touches the network or the disk, tested event by event. A segment's
/// life is `State`.
///
/// Its promise to the verifier: a segment's `confirmed` bytes are never rewritten, and they are all the whole-file
/// digest may read; under digests, confirmed means verified.
///
/// Design: `docs/design/transfer.md#fetch-decisions-and-their-execution`, and for confirmed bytes
/// `docs/design/verification.md#the-streaming-digest-and-confirmed-bytes`.
struct SegmentScheduler: Sendable {
    /// A segment's life.
    enum State: Equatable, Sendable {
        /// Not running: → `active` when a connection starts it, not before `notBefore` (a retry's time).
        case waiting(notBefore: Double)
        /// A connection fetches it: → `complete` once every byte is flushed (or `verifying`, when digests check its
        /// bytes), or → `waiting` after a failure, to be retried from its last flushed byte.
        case active(connection: Int)
        /// Every byte is written; the digests are being checked: → `complete` when they match; a piece that does not
        /// becomes a `waiting` segment of its own, its good neighbours `complete`.
        case verifying
        /// Final.
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
        /// Whether the response being received must not be cut short: its digest covers all of it.
        var pinned = false

        var length: Int64 { end - start }
        var remaining: Int64 { end - start - received }
    }

    /// What the engine should do after a transfer of a segment ended.
    enum EndAction: Equatable, Sendable {
        /// The segment is complete.
        case completed
        /// Every byte of the segment is written; its digests are to be checked.
        case verifying
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
    /// Whether checkpoints record each segment's verified bytes: digests vouch for what is confirmed.
    var recordsVerified: Bool
    /// When set, a steal splits a segment only at a multiple of this (the length of a hashed piece), so that
    /// every segment is made of whole pieces.
    let pieceAlignment: Int64?
    /// When set, no join makes a segment cross a multiple of this (a cache peer's slice): each slice is one
    /// peer's, and one request asks one peer.
    let sliceSize: Int64?
    /// Where in `order` the first incomplete segment is, so the prefix is found without a full scan.
    private var prefixCursor = 0
    /// How far ahead of a reader of the file's bytes in order requests may reach (`-o -`, `--extract`); nil lets
    /// them reach the end of the file.
    private(set) var window: Window?

    /// The bytes a streamed download may fetch ahead of what its reader has taken: no request reaches `end`, and
    /// a waiting segment is started only once `grain` of it fits (or the rest of it), so that a reader that takes
    /// a few bytes at a time does not cut the file into requests of a few bytes.
    ///
    /// Design: `docs/design/streaming.md#the-window`.
    struct Window: Equatable, Sendable {
        /// The window's length: `end` is the reader's position plus this.
        var size: Int64
        /// The smallest request the window starts.
        var grain: Int64
        /// Exclusive; it only moves forward.
        var end: Int64

        /// A window of `size` bytes from `position`, over `connections` connections: each request is at least an
        /// eighth of a connection's share of it (at least 256 KiB), so that the window is spread over all of them.
        init(size: Int64, from position: Int64, connections: Int) {
            self.size = max(1, size)
            grain = min(self.size, max(256 << 10, self.size / Int64(max(1, connections) * 8)))
            end = position + self.size
        }
    }

    /// - Parameters:
    ///   - ranges: the plan, contiguous and in file order.
    ///   - progress: bytes already on disk at the start of each range (from a manifest), or empty.
    init(
        ranges: [Range<Int64>],
        progress: [Int64] = [],
        connectionLimit: Int,
        minimumSteal: Int64 = 1 << 20,
        segmentLimit: Int = Manifest.maximumSegments,
        retryPolicy: RetryPolicy = RetryPolicy(),
        verified: [Int64]? = nil,
        pieceAlignment: Int64? = nil,
        sliceSize: Int64? = nil,
        window: Window? = nil
    ) {
        precondition(progress.isEmpty || progress.count == ranges.count, "progress must match the plan")
        precondition(verified == nil || verified?.count == ranges.count, "verified marks must match the plan")
        segments = ranges.enumerated().map { index, range in
            let done = progress.isEmpty ? 0 : min(max(0, progress[index]), Int64(range.count))
            let confirmed = verified.map { min(max(0, $0[index]), done) } ?? done
            return Segment(
                start: range.lowerBound,
                end: range.upperBound,
                received: done,
                flushed: done,
                durable: done,
                confirmed: confirmed,
                state: confirmed == Int64(range.count)
                    ? .complete : done == Int64(range.count) ? .verifying : .waiting(notBefore: 0),
                flushedAtAttemptStart: done
            )
        }
        recordsVerified = verified != nil
        self.pieceAlignment = pieceAlignment
        self.sliceSize = sliceSize
        order = Array(segments.indices)
        self.connectionLimit = max(1, connectionLimit)
        self.minimumSteal = max(1, minimumSteal)
        self.segmentLimit = segmentLimit
        self.retryPolicy = retryPolicy
        self.window = window
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

    /// The first segment not yet confirmed whole, when a connection is writing it, and how far it is written: a
    /// streaming digest may read ahead up to there, bytes that a discarded attempt could still take back.
    var writtenPrefix: (segment: Int, end: Int64)? {
        guard prefixCursor < order.count else { return nil }
        let index = order[prefixCursor]
        guard case .active = segments[index].state else { return nil }
        return (index, segments[index].start + segments[index].flushed)
    }

    var totalLength: Int64 { order.last.map { segments[$0].end } ?? 0 }

    var flushedBytes: Int64 { segments.reduce(0) { $0 + $1.flushed } }

    /// The bytes still to come, waiting or being fetched.
    var bytesLeft: Int64 {
        order[prefixCursor...].reduce(Int64(0)) { sum, index in
            switch segments[index].state {
            case .waiting, .active: sum + max(0, segments[index].remaining)
            case .verifying, .complete: sum
            }
        }
    }

    /// The segments in file order as a checkpoint records them in the manifest (with their verified bytes, when
    /// digests vouch for them).
    var manifestSegments: [Manifest.Segment] {
        order.map { index in
            let segment = segments[index]
            return Manifest.Segment(
                start: segment.start, end: segment.end, done: segment.flushed, durable: segment.durable,
                verified: recordsVerified ? segment.confirmed : nil)
        }
    }

    /// Segments fully written whose digests are still to be checked (a resumed plan starts with them).
    var segmentsToVerify: [Int] {
        order.filter { segments[$0].state == .verifying }
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

    /// The reader of the file's bytes in order has taken them up to `position`: the window moves on, and segments
    /// that now fit may start. A window never moves back.
    mutating func moveWindow(to position: Int64) {
        guard let current = window else { return }
        window?.end = max(current.end, position + current.size)
    }

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
    ///   smaller than a tenth of it is stolen, so that fewer requests are made. A piece is about twenty first-byte
    ///   waits' worth of a connection's bytes, so a tenth is two: a steal then still ends the segment a wait sooner
    ///   (the thief's wait and two, against four), and at the end of a download no connection has more than four
    ///   waits' worth left while the others idle.
    /// - Parameter stealsAtLeast: the smallest steal, when not a tenth of `pieceBytes`: a piece cut down to a
    ///   connection's share of what is left still costs a whole first byte, and a steal must repay one.
    /// - Parameter sharingAmong: how many connections what is left is shared among (a count that may still grow
    ///   toward that many): each piece is then that share of all the bytes still to come (or of what waits, among
    ///   the connections still to start, when more), the plan's pieces joined and cut to it (when a share is worth
    ///   a steal), so that the connections of a later wave get as much as the first ones and all end together.
    mutating func assign(
        connection: Int, now: Double, pieceBytes: Int64? = nil, stealsAtLeast: Int64? = nil, sharingAmong: Int? = nil
    ) -> Int? {
        guard activeCount < connectionLimit else { return nil }
        let smallestSteal = max(minimumSteal, stealsAtLeast ?? (pieceBytes ?? 0) / 10)
        if let index = nextWaiting(now: now) {
            if let pieceBytes {
                // Leave every connection that may still start a share of what waits.
                let waiting = order[prefixCursor...].reduce(Int64(0)) { sum, index in
                    if case .waiting = segments[index].state { return sum + segments[index].remaining }
                    return sum
                }
                let share = waiting / Int64(max(1, connectionLimit - activeCount))
                // Among a count that may grow: each its share of all that is still to come, running or waiting, or
                // of what waits among the connections still to start, when that is more (none is left over for one
                // connection alone at the end).
                if let sharingAmong, sliceSize == nil,
                    case let fair = max(
                        bytesLeft / Int64(max(1, sharingAmong)),
                        waiting / Int64(max(1, sharingAmong - activeCount))),
                    fair >= smallestSteal
                {
                    size(index, to: min(pieceBytes, fair), now: now)
                } else {
                    join(followersOf: index, upTo: min(pieceBytes, max(share, segments[index].remaining)), now: now)
                }
            }
            cutAtWindow(index, now: now)
            activate(index, connection: connection)
            return index
        }
        // A costly request is worth it only for a share that takes longer to receive than the request costs.
        guard let victim = stealCandidate(minimum: smallestSteal) else { return nil }
        let segment = segments[victim]
        let position = segment.start + segment.received
        var split = position + segment.remaining / 2
        let alignment: Int64 = pieceAlignment ?? 64 << 10
        let aligned = split / alignment * alignment + (split % alignment == 0 ? 0 : alignment)
        if aligned < segment.end && aligned - position >= minimumSteal {
            split = aligned
        } else if pieceAlignment != nil {
            // Whole pieces only: a piece split between two responses could not be checked by either.
            return nil
        }
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

    /// Takes back what an active segment's connection has still to fetch beyond about `keep` more bytes (the cut
    /// aligned as a steal's): the rest becomes a waiting segment of its own, and the connection's transfer ends at the
    /// new end. For a connection no longer wanted (the count dropped): it stops within `keep` bytes rather than
    /// finishing its piece. Returns the new end, or nil when less than `minimum` (a steal's) is left to take back (or
    /// the segment is pinned, or the plan is full).
    mutating func takeBack(segment index: Int, keeping keep: Int64, minimum: Int64? = nil) -> Int64? {
        guard case .active = segments[index].state, !segments[index].pinned, order.count < segmentLimit else {
            return nil
        }
        let segment = segments[index]
        let alignment: Int64 = pieceAlignment ?? 64 << 10
        let wanted = segment.start + segment.received + max(1, keep)
        let split = wanted / alignment * alignment + (wanted % alignment == 0 ? 0 : alignment)
        guard split < segment.end, segment.end - split >= minimum ?? minimumSteal else { return nil }
        segments[index].end = split
        segments.append(
            Segment(
                start: split, end: segment.end, received: 0, flushed: 0, durable: 0, confirmed: 0,
                state: .waiting(notBefore: 0)))
        order.insert(segments.count - 1, at: order.firstIndex(of: index)! + 1)
        return split
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
    ///
    /// - Parameter confirms: whether the attempt's end vouches for what it wrote; false when digests are to vouch
    ///   for it, and a segment fully written is then `verifying`.
    mutating func ended(
        segment index: Int, failure: FailureKind?, now: Double, random: Double, confirms: Bool = true
    ) -> EndAction {
        guard case .active = segments[index].state else {
            preconditionFailure("Invalid state: segment \(index) ended while \(segments[index].state)")
        }
        activeCount -= 1
        var segment = segments[index]
        segment.received = segment.flushed
        segment.pinned = false
        // Whatever the attempt left in place (its bytes were not discarded) is now vouched for, unless digests are
        // to vouch for it.
        if confirms { segment.confirmed = segment.flushed }
        segments[index] = segment
        advancePrefixCursor()
        if segment.flushed >= segment.length {
            segment.state = segment.confirmed >= segment.length ? .complete : .verifying
            segments[index] = segment
            return segment.state == .complete ? .completed : .verifying
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
    mutating func requeue(segment index: Int, now: Double, confirms: Bool) {
        guard case .active = segments[index].state else {
            preconditionFailure("Invalid state: segment \(index) requeued while \(segments[index].state)")
        }
        activeCount -= 1
        segments[index].received = segments[index].flushed
        segments[index].pinned = false
        if confirms { segments[index].confirmed = segments[index].flushed }
        advancePrefixCursor()
        segments[index].state =
            segments[index].flushed < segments[index].length
            ? .waiting(notBefore: now) : segments[index].confirmed < segments[index].length ? .verifying : .complete
    }

    /// The response being received for an active segment carries a digest of all of it: it is not cut short by a
    /// steal, since what was received could then not be checked.
    mutating func pin(segment index: Int) {
        segments[index].pinned = true
    }

    /// The digests of a `verifying` segment were checked: it is complete when `bad` is empty; else each bad range
    /// (inside the segment, in file order, not overlapping) becomes a segment of its own waiting to be fetched
    /// again, and the bytes around them are confirmed.
    ///
    /// - Returns: what to do, and the indices of the segments waiting to be fetched again.
    mutating func verified(
        segment index: Int, bad: [Range<Int64>], now: Double, random: Double
    ) -> (action: EndAction, refetch: [Int]) {
        guard segments[index].state == .verifying else {
            preconditionFailure("Invalid state: segment \(index) verified while \(segments[index].state)")
        }
        let segment = segments[index]
        let bad = bad.map { max($0.lowerBound, segment.start)..<min($0.upperBound, segment.end) }.filter {
            !$0.isEmpty
        }
        guard !bad.isEmpty else {
            segments[index].confirmed = segment.length
            segments[index].state = .complete
            advancePrefixCursor()
            return (.completed, [])
        }
        let failures = segment.failures + 1
        if failures >= retryPolicy.maximumAttempts {
            let range = bad.map { "\($0.lowerBound)-\($0.upperBound - 1)" }.joined(separator: ", ")
            let bytes = bad.count == 1 ? "bytes \(range) did" : "bytes \(range) each did"
            // The segment stays unconfirmed: a later run checks it again.
            segments[index].state = .waiting(notBefore: .infinity)
            return (.fail(.integrity, "\(bytes) not match their digest after \(failures) attempts"), [])
        }
        let delay = retryPolicy.delay(afterAttempt: failures, retryAfter: nil, random: random)
        return (.retry(delay: delay), refetch(segment: index, bad: bad, failures: failures, notBefore: now + delay))
    }

    /// Makes each `bad` range of a verified segment a segment of its own, waiting until `notBefore`, and the bytes
    /// around them complete; with no room for more segments, the segment is fetched again from its first bad byte.
    ///
    /// - Returns: the indices of the segments waiting to be fetched again.
    private mutating func refetch(segment index: Int, bad: [Range<Int64>], failures: Int, notBefore: Double) -> [Int] {
        let segment = segments[index]
        let lastBad = bad[bad.count - 1]
        // The boundaries of the pieces: good, bad, good, … in file order; empty ones are skipped.
        var cuts: [(range: Range<Int64>, good: Bool)] = []
        var position = segment.start
        for range in bad {
            if range.lowerBound > position { cuts.append((position..<range.lowerBound, true)) }
            cuts.append((range, false))
            position = range.upperBound
        }
        if lastBad.upperBound < segment.end { cuts.append((lastBad.upperBound..<segment.end, true)) }
        guard order.count + cuts.count - 1 <= segmentLimit else {
            // No room for more segments: fetch the whole segment again from its first bad byte.
            let keep = bad[0].lowerBound - segment.start
            segments[index].flushed = keep
            segments[index].received = keep
            segments[index].durable = min(segment.durable, keep)
            segments[index].confirmed = keep
            segments[index].failures = failures
            segments[index].state = .waiting(notBefore: notBefore)
            advancePrefixCursor()
            return [index]
        }
        var place = order.firstIndex(of: index)!
        var refetch: [Int] = []
        for (number, cut) in cuts.enumerated() {
            let length = cut.range.upperBound - cut.range.lowerBound
            let piece = Segment(
                start: cut.range.lowerBound,
                end: cut.range.upperBound,
                received: cut.good ? length : 0,
                flushed: cut.good ? length : 0,
                durable: cut.good ? min(length, max(0, segment.start + segment.durable - cut.range.lowerBound)) : 0,
                confirmed: cut.good ? length : 0,
                state: cut.good ? .complete : .waiting(notBefore: notBefore),
                failures: cut.good ? 0 : failures
            )
            if number == 0 {
                segments[index] = piece
                if !cut.good { refetch.append(index) }
            } else {
                segments.append(piece)
                place += 1
                order.insert(segments.count - 1, at: place)
                if !cut.good { refetch.append(segments.count - 1) }
            }
        }
        advancePrefixCursor()
        return refetch
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
        while position + 1 < order.count, case let next = order[position + 1], joins(next, to: index, now: now),
            segments[index].remaining + segments[next].length <= pieceBytes,
            sliceSize.map({ segments[index].start / $0 == (segments[next].end - 1) / $0 }) ?? true
        {
            absorb(next, at: position + 1, into: index)
        }
    }

    /// Whether segment `next`, the one after `index` in the file, may be joined to it: untouched, waiting and due,
    /// and within the window.
    private func joins(_ next: Int, to index: Int, now: Double) -> Bool {
        guard case let .waiting(notBefore) = segments[next].state else { return false }
        return notBefore <= now && segments[next].flushed == 0 && segments[next].start == segments[index].end
            && segments[next].end <= window?.end ?? .max
    }

    /// Joins segment `next`, at `position` in `order`, to `index`: it leaves the plan, and stays in `segments` (indices
    /// do not move) as an empty, complete one.
    private mutating func absorb(_ next: Int, at position: Int, into index: Int) {
        let end = segments[next].end
        segments[index].end = end
        segments[next] = Segment(
            start: end, end: end, received: 0, flushed: 0, durable: 0, confirmed: 0, state: .complete)
        order.remove(at: position)
    }

    /// Makes the waiting segment `index` fetch about `bytes` more: the untouched waiting segments that follow it are
    /// joined to it until it holds that many, and it is cut where they end (at a boundary a steal would choose), the
    /// rest waiting as a segment of its own. With no room for another segment, it is left as the joins made it.
    private mutating func size(_ index: Int, to bytes: Int64, now: Double) {
        guard let position = order.firstIndex(of: index) else { return }
        let start = segments[index].start + segments[index].flushed
        let alignment: Int64 = pieceAlignment ?? 64 << 10
        let wanted = start + max(1, bytes)
        let cut = (wanted + alignment - 1) / alignment * alignment
        while segments[index].end < cut, position + 1 < order.count, case let next = order[position + 1],
            joins(next, to: index, now: now)
        {
            absorb(next, at: position + 1, into: index)
        }
        guard cut < segments[index].end, order.count < segmentLimit else { return }
        let rest = Segment(
            start: cut, end: segments[index].end, received: 0, flushed: 0, durable: 0, confirmed: 0,
            state: .waiting(notBefore: now))
        segments[index].end = cut
        segments.append(rest)
        order.insert(segments.count - 1, at: position + 1)
    }

    private mutating func activate(_ index: Int, connection: Int) {
        segments[index].state = .active(connection: connection)
        segments[index].pinned = false
        segments[index].received = segments[index].flushed
        segments[index].flushedAtAttemptStart = segments[index].flushed
        activeCount += 1
    }

    private func nextWaiting(now: Double) -> Int? {
        for index in order[prefixCursor...] {
            guard fitsWindow(index) else { return nil }
            if case let .waiting(notBefore) = segments[index].state, notBefore <= now { return index }
        }
        return nil
    }

    /// Whether the window lets segment `index` start: the rest of it fits, or at least a grain of it does. Segments
    /// are in file order, so none after one that does not fit would fit either.
    private func fitsWindow(_ index: Int) -> Bool {
        guard let window else { return true }
        let position = segments[index].start + segments[index].flushed
        return segments[index].end <= window.end || window.end - position >= window.grain
    }

    /// Cuts a waiting segment that reaches past the window at the window's end (at a 64 KiB boundary when that
    /// leaves a grain), the rest waiting as a segment of its own; with no room for another segment, it is left
    /// whole, so that the download goes on, further ahead than the window.
    private mutating func cutAtWindow(_ index: Int, now: Double) {
        guard let window, segments[index].end > window.end, order.count < segmentLimit else { return }
        let position = segments[index].start + segments[index].flushed
        let alignment: Int64 = 64 << 10
        let aligned = window.end / alignment * alignment
        let cut = aligned - position >= window.grain ? aligned : window.end
        guard cut > position, cut < segments[index].end else { return }
        let rest = Segment(
            start: cut, end: segments[index].end, received: 0, flushed: 0, durable: 0, confirmed: 0,
            state: .waiting(notBefore: now))
        segments[index].end = cut
        segments.append(rest)
        order.insert(segments.count - 1, at: order.firstIndex(of: index)! + 1)
    }

    /// The active segment with the most bytes still to come, if half of them is at least `minimum`.
    private func stealCandidate(minimum: Int64? = nil) -> Int? {
        guard order.count < segmentLimit else { return nil }
        var best: Int?
        var bestRemaining = 2 * (minimum ?? minimumSteal) - 1
        for index in order[prefixCursor...] {
            guard case .active = segments[index].state, !segments[index].pinned else { continue }
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
